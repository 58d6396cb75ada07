"""BigCodeBench's execution environment: a separate interpreter with the benchmark's libraries.

    python -m recode_lib.core.bench_env build   # `make bcb-env`: the venv (bcb-requirements.txt)
    python -m recode_lib.core.bench_env status    # one line: where it is, built or not
    bcb_python()          -> "/root/.cache/recode/bcb-env/bin/python" | None (not built)
    interpreter_for(p)    -> the interpreter that judges problem p (None: the sandbox's default)
    require_env(problems, smoke=False)       # BenchEnvMissing naming `make bcb-env` when absent
    judge_env(problems)   -> {"bigcodebench": {"python", "packages", "freeze_sha256"}} (provenance)

BigCodeBench's tasks import ~70 third-party packages ("Requirements/requirements-eval.txt" of
github.com/bigcode-project/bigcodebench, pinned for Python 3.10). They are not the project's
dependencies and many of their pins conflict with it, so they live in a venv of their own:
$RECODE_BCB_ENV, else <recode cache>/bcb-env (recode_lib.core.paths.cache_dir; not in git). It is
built from bcb-requirements.txt (the project root): BigCodeBench's list with the nearest
versions that install on this project's Python (3.11) where its pins cannot; docs/sandbox.md
("BigCodeBench's environment") lists every difference. A build that finished writes
`.installed` (its `pip freeze`) in the venv; an env without it counts as not built.

Who uses it: sandbox.sandbox_record puts the interpreter into every BigCodeBench record
("python"), so the sandbox runs that record's workers with it (sandbox.pool: a pool per
interpreter) and decides `env_missing` from its module set (sandbox.environment). Without the
env the records carry no interpreter: the project's own judges them, and the problems whose
libraries it lacks are `env_missing` (not counted). A non-smoke evaluation of BigCodeBench
refuses to start without it (require_env; the smoke profile keeps `env_missing`). It does not
install system programs some tasks call (tesseract) nor data some libraries fetch at run
time (nltk's corpora): those tasks fail with their reason (benchmarks/bcb_canonical.py).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.core.paths import PROJECT_ROOT, cache_dir

ENV_VAR = "RECODE_BCB_ENV"
REQUIREMENTS = PROJECT_ROOT / "bcb-requirements.txt"
MAKE_TARGET = "make bcb-env"
MARKER = ".installed"
SOURCES = ("bigcodebench",)  # Problem.source values judged in this environment


class BenchEnvMissing(RecodeError, RuntimeError):
    """BigCodeBench is evaluated without its environment outside the smoke profile."""


def env_dir() -> Path:
    """Where the BigCodeBench venv lives: $RECODE_BCB_ENV, else <recode cache>/bcb-env."""
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else cache_dir(create=False) / "bcb-env"


def bcb_python(root: Path | None = None) -> str | None:
    """The venv's interpreter (absolute path, not resolved: a venv's python is a symlink whose
    prefix is the venv) when the env is built (its MARKER exists), else None."""
    root = Path(root) if root is not None else env_dir()
    py = root.absolute() / "bin" / "python"
    if (root / MARKER).is_file() and py.is_file() and os.access(py, os.X_OK):
        return str(py)
    return None


def interpreter_for(problem) -> str | None:
    """The interpreter that judges `problem` (anything with `.source`): BigCodeBench's env for
    its problems when built; None (the sandbox's default interpreter) otherwise."""
    if getattr(problem, "source", None) in SOURCES:
        return bcb_python()
    return None


def record_extras(problem) -> dict:
    """What a sandbox record of `problem` carries besides its code, tests and limits, for every
    path that judges it (recode_lib.sandbox.sandbox_record; the GRPO rewards and the SFT
    transcripts' check through recode_lib.rewards.base.run_problems): "requires" (the modules
    it needs: metadata["requires"], else metadata["libs"]; BigCodeBench), so a problem the
    interpreter cannot run is `env_missing`, and "python" (interpreter_for) when it has its
    own interpreter."""
    out: dict = {}
    meta = getattr(problem, "metadata", None) or {}
    libs = meta.get("requires", meta.get("libs"))
    if isinstance(libs, list) and libs:
        out["requires"] = list(libs)
    python = interpreter_for(problem)
    if python:
        out["python"] = python
    return out


def require_env(problems, smoke: bool = False) -> None:
    """BenchEnvMissing (one line, naming the make target) when `problems` hold a BigCodeBench
    problem and its env is not built, unless `smoke` (whose BCB verdicts stay env_missing)."""
    if smoke or bcb_python() is not None:
        return
    n = sum(getattr(p, "source", None) in SOURCES for p in problems)
    if n:
        raise BenchEnvMissing(
            f"{n} BigCodeBench problems need BigCodeBench's environment, not built at {env_dir()}: "
            f"run `{MAKE_TARGET}` (or set {ENV_VAR} to a built one; the smoke profile judges "
            "them as env_missing instead)"
        )


def judge_env(problems) -> dict:
    """For a run's provenance: {"bigcodebench": {"python", "packages", "freeze_sha256"}} (the
    env that judged; None when not built: its problems were env_missing where they needed a
    missing module) when `problems` hold a BigCodeBench problem, else {}."""
    if not any(getattr(p, "source", None) in SOURCES for p in problems):
        return {}
    py = bcb_python()
    if py is None:
        return {"bigcodebench": None}
    freeze = (env_dir() / MARKER).read_bytes()
    return {
        "bigcodebench": {
            "python": py,
            "packages": len(freeze.splitlines()),
            "freeze_sha256": hashlib.sha256(freeze).hexdigest(),
        }
    }


def judge_env_guard(problems) -> dict:
    """For an evaluation folder's run guard (evaluation.guard): {"judge_env": {"bigcodebench":
    the sha256 of the env's freeze, or None when not built}} when `problems` hold a
    BigCodeBench problem, else {} (other folders unchanged). Verdicts depend on it: a folder
    judged without the env (env_missing rows) is not resumed with it, nor after a rebuild that
    changed a package."""
    env = judge_env(problems)
    if not env:
        return {}
    return {"judge_env": {k: (v or {}).get("freeze_sha256") for k, v in env.items()}}


def bcb_notebooks(params: dict[str, dict]) -> list[str]:
    """The notebooks of a profile's parameters ({notebook: {KEY: value}}) that name a
    BigCodeBench benchmark in a benchmark-valued parameter (a KEY with BENCHMARK in it:
    BENCHMARKS, EVAL_BENCHMARK, HELD_OUT_BENCHMARKS, ... ; comma-separated lists)."""
    out = []
    for stem, p in params.items():
        for key, value in (p or {}).items():
            names = [x.strip().split(":")[0] for x in str(value or "").split(",")]
            if (
                "BENCHMARK" in key
                and "HELD_OUT" not in key
                and any(n.startswith(SOURCES) for n in names)
            ):
                out.append(stem)
                break
    return out


def status_line() -> str:
    """One line for `recode plan` / `recode stage --list`: where the env is and whether built."""
    py = bcb_python()
    where = env_dir()
    if py:
        return f"BigCodeBench environment: built at {where} (interpreter {py})"
    return (
        f"BigCodeBench environment: NOT built at {where}: `{MAKE_TARGET}` (~2.5 GB, PyPI; "
        "without it BigCodeBench problems needing its libraries are env_missing, and a "
        "non-smoke evaluation of BigCodeBench refuses)"
    )


def build(
    root: Path | None = None,
    requirements: Path = REQUIREMENTS,
    base_python: str | None = None,
    log=print,
) -> str:
    """Create the venv at `root` (default env_dir()) with `base_python` (default this Python's
    base interpreter) and pip-install `requirements` into it; write MARKER (the freeze) last.
    Returns the interpreter's path. Re-running installs what is missing (pip is idempotent)."""
    root = Path(root) if root is not None else env_dir()
    base = base_python or getattr(sys, "_base_executable", None) or sys.executable
    t0 = time.monotonic()
    py = root.absolute() / "bin" / "python"
    (root / MARKER).unlink(missing_ok=True)
    if not py.exists():
        log(f"bcb-env: creating {root} with {base}")
        subprocess.run([base, "-m", "venv", str(root)], check=True)
    log(f"bcb-env: installing {requirements} (PyPI; a few minutes)")
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--prefer-binary", "-r", str(requirements)],
        check=True,
    )
    freeze = subprocess.run(
        [str(py), "-m", "pip", "freeze"], check=True, capture_output=True, text=True
    ).stdout
    (root / MARKER).write_text(freeze)
    log(f"bcb-env: built in {time.monotonic() - t0:.0f} s; interpreter {py}")
    return str(py)


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["build"]:
        try:
            build()
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"bcb-env: build failed: {exc}", file=sys.stderr)
            return 1
        return 0
    if args == ["status"]:
        print(status_line())
        return 0 if bcb_python() else 1
    print("usage: python -m recode_lib.core.bench_env build|status", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
