"""Shared pytest fixtures: a tiny random model built offline, runs/cache dirs in tmp; the
`long` marker from tests/long_tests.txt; the pytest-xdist work units (userns tests together)."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

from recode_lib.core.paths import data_dir

# A shell starts a background job (`make test &`, `nohup ... &`, a CI step run without job
# control) with SIGINT ignored, every child inherits that, and Python then installs no
# KeyboardInterrupt handler: the tests that send SIGINT to a `recode` process (test_interrupts,
# test_pipeline) saw it run on to exit 0. Restore the default here so that the processes the
# tests start get it (a Python handler is reset to the default at exec; "ignored" is not).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A tiny random Qwen2 causal LM with a real BPE tokenizer and ChatML template."""
    from tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny_model"))


@pytest.fixture(scope="session")
def perturbed_checkpoint(tiny_model_dir):
    """write(dst, seed, dtype=None, complete=True): the tiny model at dst with seeded noise
    (0.05) on every weight, saved in `dtype` (default float32) and marked .complete like a
    finished run's final/ (a stand-in for a trained endpoint)."""
    import shutil

    def write(dst, seed: int, dtype=None, complete: bool = True):
        import torch
        from transformers import AutoModelForCausalLM

        shutil.copytree(tiny_model_dir, dst)
        net = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for p in net.parameters():
                p.add_(0.05 * torch.randn(p.shape, generator=g))
        if dtype is not None:
            net = net.to(dtype)
        for f in dst.glob("*.safetensors"):
            f.unlink()
        net.save_pretrained(dst)
        if complete:
            (dst / ".complete").write_text("")
        return dst

    return write


@pytest.fixture(scope="session")
def toy_problems():
    """make(n): n call-style problems toy/i whose answer is f() returning i (2 s limit)."""
    from recode_lib.data.schema import Problem

    def make(n: int = 4):
        return [
            Problem(
                id=f"toy/{i}",
                source="toy",
                prompt=f"Write f() returning {i}.",
                tests={"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": i}]},
                time_limit_s=2.0,
            )
            for i in range(n)
        ]

    return make


@pytest.fixture(scope="session")
def shared_data_dir():
    """The real benchmark files; skips when absent (a fresh clone has no ../shared)."""
    d = data_dir()
    if d is None or not d.is_dir():
        pytest.skip("benchmark data not found: set RECODE_DATA_DIR or place it at ../shared/data")
    return d


@pytest.fixture(scope="session", autouse=True)
def _no_sandbox_process_outlives_its_worker():
    """Fails the session (an error at its last test's teardown) when a process of this
    checkout's sandbox outlived its worker: a pid-namespace init or child whose worker is gone,
    or a worker whose judge is gone (tests/sandbox_leftovers.py). The pools are closed first,
    as at interpreter exit; those already there at the start (another run of this checkout)
    are not counted. The leftovers found are killed."""
    import signal
    import sys

    if not os.path.isdir("/proc"):
        yield
        return
    from sandbox_leftovers import describe, leftovers, wait_no_new

    before = leftovers()
    yield
    pool = sys.modules.get("recode_lib.sandbox.pool")
    if pool is not None:
        pool.close_all()
    left = wait_no_new(before)
    if left:
        found = describe(left)
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        pytest.fail(f"sandbox processes outlived their worker: {found}", pytrace=False)


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path, monkeypatch):
    """Tests never write into the user's runs/ (the model cache stays shared on purpose)."""
    monkeypatch.setenv("RECODE_RUNS_DIR", str(tmp_path / "runs"))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


NORMAL_USER = "recode-ci"  # made by `.ci/run --userns-user` (also part of `.ci/run`)


def _can_run_here(prefix):
    """None when `prefix` can run this interpreter with this checkout's recode_lib, else why."""
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run(
        prefix
        + [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {root!r}); import recode_lib.sandbox",
        ],
        capture_output=True,
        text=True,
        cwd="/",
    )
    return (
        None if proc.returncode == 0 else (proc.stderr.strip()[-200:] or f"exit {proc.returncode}")
    )


@pytest.fixture(scope="session")
def normal_user():
    """Who runs the judge in the userns tests: {"prefix": argv prefix, "name", "uid", "gid"}.

    As a normal user: this user, directly. As root (CI, a root dev machine): the user
    `recode-ci` through `runuser` (`nobody` when that one does not exist but can run this
    interpreter, e.g. a system Python), skipped with what is missing and how to add it. Skipped
    too when the kernel refuses that user a user namespace (there is no userns mode to test)."""
    import pwd
    import shutil
    import subprocess
    import sys

    if os.getuid() != 0:
        prefix = []
        user = pwd.getpwuid(os.getuid())
    else:
        if not shutil.which("runuser"):
            pytest.skip(
                "running as root, the userns tests drop to a normal user with runuser "
                "(util-linux), which is not installed"
            )
        problems, prefix = [], None
        for name in (NORMAL_USER, "nobody"):
            try:
                user = pwd.getpwnam(name)
            except KeyError:
                problems.append(f"no user {name!r}")
                continue
            why = _can_run_here(["runuser", "-u", name, "--"])
            if why is None:
                prefix = ["runuser", "-u", name, "--"]
                break
            problems.append(f"user {name!r} cannot run {sys.executable} with this checkout: {why}")
        if prefix is None:
            pytest.skip(
                "running as root, the userns tests need a normal user who can run this "
                "interpreter and checkout ({}); as root, run `.ci/run --userns-user` "
                "(creates user {!r} and lets it traverse the directories on the way to "
                "the interpreter and the checkout)".format("; ".join(problems), NORMAL_USER)
            )
    probe = (
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.unshare(0x10000000) or 0, ctypes.get_errno())\n"
    )  # CLONE_NEWUSER
    out = subprocess.run(
        prefix + [sys.executable, "-I", "-c", probe], capture_output=True, text=True, cwd="/"
    ).stdout.split()
    if out[:1] != ["0"]:
        why = os.strerror(int(out[1])) if len(out) > 1 else out
        pytest.skip(
            f"the kernel refuses user {user.pw_name!r} a user namespace "
            f"(unshare(CLONE_NEWUSER): {why}; "
            "see sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, "
            "kernel.apparmor_restrict_unprivileged_userns): no userns mode to test"
        )
    return {"prefix": prefix, "name": user.pw_name, "uid": user.pw_uid, "gid": user.pw_gid}


VLLM_IMPORT: list = []  # [None] when `import vllm` worked, [reason] when it did not


def vllm_unavailable() -> str | None:
    """Why the real vLLM engine cannot run here (None: it can), tried once per session."""
    if not VLLM_IMPORT:
        try:
            import vllm  # noqa: F401

            VLLM_IMPORT.append(None)
        except Exception as exc:  # ImportError, or a broken build's RuntimeError
            from recode_lib.generation.vllm_cpu import why_not

            why = why_not()
            VLLM_IMPORT.append(
                f"`import vllm` failed ({type(exc).__name__}: {exc})" + (f"; {why}" if why else "")
            )
    return VLLM_IMPORT[0]


def pytest_runtest_setup(item):
    """Tests marked `vllm` run the real engine (vLLM's CPU build from `make env`, or CUDA vLLM).
    Without it they skip with the reason; RECODE_REQUIRE_VLLM=1 (`make test-vllm`, CI) turns
    that skip into a failure, so CI counts them instead of skipping them quietly."""
    if item.get_closest_marker("vllm") is None:
        return
    reason = vllm_unavailable()
    if reason is None:
        return
    if os.environ.get("RECODE_REQUIRE_VLLM") == "1":
        pytest.fail(
            f"RECODE_REQUIRE_VLLM=1 but the real vLLM engine is unavailable: {reason}",
            pytrace=False,
        )
    pytest.skip(f"needs the real vLLM engine: {reason}")


LONG_TESTS = Path(__file__).with_name("long_tests.txt")


def long_test_ids(path: Path = LONG_TESTS) -> list[str]:
    """The node ids listed in tests/long_tests.txt (comments and blank lines dropped)."""
    return [
        ln.strip()
        for ln in path.read_text().splitlines()
        if ln.strip() and not ln.lstrip().startswith("#")
    ]


def is_listed(nodeid: str, ids) -> bool:
    """Whether a listed id names this test: itself, its function (all parameters), its file."""
    return any(
        nodeid == i or nodeid.startswith(i + "[") or nodeid.startswith(i + "::") for i in ids
    )


def pytest_collection_modifyitems(config, items):
    """Mark the tests listed in tests/long_tests.txt `long` (`make test` leaves them out,
    `make test-long` and CI run them)."""
    ids = long_test_ids()
    for item in items:
        if is_listed(item.nodeid, ids):
            item.add_marker(pytest.mark.long)


# test files that judge as the normal user (fixture `normal_user`, the sandbox's userns mode)
USERNS_FILES = frozenset(
    p.name for p in Path(__file__).parent.glob("test_*.py") if "normal_user" in p.read_text()
)


def xdist_unit(nodeid: str, as_root: bool) -> str:
    """The work unit of a test under `pytest -n N --dist loadfile` (tests/conftest.py's
    scheduler): its file, except that every file judging as the normal user is one unit, and
    as a normal user all of them are. In userns mode the sandbox's RLIMIT_NPROC counts all of
    the user's processes (the limit is their count at start + max_processes), so two workers
    judging as one user could starve each other's forks; as root the sandbox gives every
    worker's children private uids, and only the normal user's tests share one."""
    path = nodeid.split("::", 1)[0]
    if not as_root or Path(path).name in USERNS_FILES:
        return "userns"
    return path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` with xdist_unit's units. (Not `--dist loadgroup` with xdist_group
    marks: pytest-xdist 3.8 writes the group into item._nodeid, which pytest 9.2 no longer
    reads, so the groups are silently dropped: pytest-xdist issue #1386.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling  # pytest-xdist: an optional plugin

    as_root = os.getuid() == 0

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_unit(nodeid, as_root)

    return UnitScheduling(config, log)
