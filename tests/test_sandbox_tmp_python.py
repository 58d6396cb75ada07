"""A Python installation under /tmp (a venv in a CI clone under /tmp) works inside the sandbox,
whose children each get a private /tmp: limits.py re-binds exactly the interpreter's paths,
read-only, and nothing else of the host /tmp (one property per test).

The fixture builds, under a fresh /tmp directory, a base installation (the running base's binary
and standard library, hard-linked where possible) and a venv made from it holding one module of
its own (tvprobe), next to a checkout-like runs/ directory and other files that must stay
hidden. Root/userns isolation only: plain mode has no private /tmp."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from recode_lib.sandbox import SandboxConfig, execute, isolation_mode

REPO = Path(__file__).resolve().parent.parent
SANDBOX_DIR = REPO / "recode_lib" / "sandbox"
VER = "python{}.{}".format(*sys.version_info[:2])

pytestmark = pytest.mark.skipif(
    isolation_mode(SandboxConfig()) == "plain",
    reason="plain isolation has no private /tmp to re-bind into",
)


def _link(src, dst):
    try:
        os.link(src, dst)
    except OSError:  # another file system: a copy
        shutil.copy2(src, dst)


def _base_copy(root: Path) -> Path | None:
    """The running base interpreter's binary, libpython and standard library under root/base
    (hard links), or None when that copy cannot start."""
    exe = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    stdlib = os.path.dirname(os.__file__)
    base = root / "base"
    (base / "bin").mkdir(parents=True)
    _link(exe, base / "bin" / os.path.basename(exe))
    shutil.copytree(
        stdlib,
        base / "lib" / VER,
        copy_function=_link,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            "site-packages",
            "dist-packages",
            "test",
            "__pycache__",
            "idlelib",
            "tkinter",
            "turtledemo",
        ),
    )
    (base / "lib" / VER / "site-packages").mkdir()
    for lib in Path(sys.base_prefix, "lib").glob("libpython*.so*"):
        _link(lib, base / "lib" / lib.name)
    py = base / "bin" / os.path.basename(exe)
    ok = (
        subprocess.run(
            [py, "-c", f"import sys; assert sys.base_prefix == {str(base)!r}"], capture_output=True
        ).returncode
        == 0
    )
    return py if ok else None


@pytest.fixture(scope="module")
def tmp_install():
    """{root, venv, python, site, base, base_under_tmp}: a venv under /tmp (and, where the
    copy starts, its base installation too), plus files that are no part of the interpreter."""
    root = Path(tempfile.mkdtemp(prefix="recode-tmpvenv-", dir="/tmp"))
    try:
        base_py = _base_copy(root)
        venv = root / "checkout" / ".venv"
        subprocess.run(
            [str(base_py or sys.executable), "-m", "venv", "--without-pip", str(venv)],
            check=True,
            capture_output=True,
        )
        python = venv / "bin" / "python"
        site = Path(
            subprocess.run(
                [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
        )
        (site / "tvprobe.py").write_text("X = 42\n")
        (venv / "not_the_interpreter.txt").write_text("hidden\n")
        (root / "checkout" / "runs").mkdir()
        (root / "checkout" / "runs" / "expected.json").write_text('{"secret": 987654}\n')
        (root / "secret.txt").write_text("hidden\n")
        yield {
            "root": root,
            "venv": venv,
            "python": python,
            "site": site,
            "base": root / "base" if base_py else None,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _call(inst, code, expected):
    cfg = SandboxConfig(python=str(inst["python"]), time_limit_s=20.0, workers=1)
    rec = {
        "id": "t",
        "code": code,
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": expected}]},
    }
    return execute(rec, config=cfg)["status"]


def test_a_script_test_starts_the_venvs_python_and_imports_its_site_packages(tmp_install):
    code = (
        "import subprocess, sys\n"
        "def f():\n"
        "    p = subprocess.run([sys.executable, '-c', 'import tvprobe; print(tvprobe.X)'],\n"
        "                       capture_output=True, text=True)\n"
        "    return int(p.stdout)\n"
    )
    test = "import tvprobe\nassert f() == tvprobe.X == 42\n"
    cfg = SandboxConfig(python=str(tmp_install["python"]), time_limit_s=20.0, workers=1)
    res = execute(
        {"id": "s", "code": code, "tests": {"kind": "script", "script": test}}, config=cfg
    )
    assert res["status"] == "passed"


def test_a_base_installation_under_tmp_serves_a_fresh_interpreter(tmp_install):
    if tmp_install["base"] is None:
        pytest.skip("the base installation could not be copied under /tmp here")
    code = (
        "import subprocess, sys\n"
        "def f():\n"
        "    return subprocess.run([sys.executable, '-c', 'import sys, json, decimal; '\n"
        "                           'print(sys.base_prefix)'], capture_output=True,\n"
        "                          text=True).stdout.strip()\n"
    )
    assert _call(tmp_install, code, str(tmp_install["base"])) == "passed"


_JUDGE = r"""
import json, sys
from recode_lib.sandbox.tools import ToolLimits, run_command
from recode_lib.sandbox.workspace import Workspace
lim = ToolLimits(time_limit_s=20, max_output_chars=2000)
tool = run_command(["python", "-c", "import sys, tvprobe; print(tvprobe.X, sys.prefix)"],
                   limits=lim)
ws = Workspace(lim, files={"main.py": "import tvprobe\nprint(tvprobe.X + 1)\n"})
run = ws.run("python main.py")
ws.close()
print(json.dumps({"tool": [tool.status, tool.stdout, tool.stderr],
                  "workspace": [run.status, run.stdout, run.stderr]}))
"""


def _judge(inst, umask=None):
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO),
        "LANG": "C.UTF-8",
    }
    p = subprocess.run(
        [inst["python"], "-c", _JUDGE],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def judged_from_venv(tmp_install):
    """A judge process running from the /tmp venv (as a CI clone's would): one tool call and
    one workspace command, each starting `python` inside the sandbox."""
    return _judge(tmp_install)


def test_a_tool_call_runs_python_from_a_venv_under_tmp(judged_from_venv, tmp_install):
    assert judged_from_venv["tool"] == ["ok", "42 {}\n".format(tmp_install["venv"]), ""]


def test_the_agentic_workspace_python_runs_from_a_venv_under_tmp(judged_from_venv):
    assert judged_from_venv["workspace"] == ["ok", "43\n", ""]


def test_a_judge_with_umask_077_still_gives_the_child_a_traversable_root(tmp_install):
    # the directories the worker makes for the root and the re-binds must not inherit 0700
    assert _judge(tmp_install, umask=0o077)["tool"][0] == "ok"


def test_the_rebound_interpreter_paths_are_read_only(tmp_install):
    # site-packages and bin/ are binds; the venv directory holding them is the skeleton's
    dirs = [str(tmp_install["site"]), str(tmp_install["venv"] / "bin"), str(tmp_install["venv"])]
    if tmp_install["base"] is not None:
        dirs.append(str(tmp_install["base"] / "lib" / VER))
    write = f"def f():\n    for d in {dirs!r}:\n        open(d + '/planted.py', 'w').write('x')\n"
    assert _call(tmp_install, write, None) == "runtime_error"
    errnos = (
        "import errno\n"
        "def f():\n"
        "    out = []\n"
        f"    for d in {dirs!r}:\n"
        "        try:\n"
        "            open(d + '/planted.py', 'w')\n"
        "            out.append('written')\n"
        "        except OSError as e:\n"
        "            out.append(errno.errorcode[e.errno])\n"
        "    return out\n"
    )
    assert _call(tmp_install, errnos, ["EROFS"] * len(dirs)) == "passed"
    assert not (tmp_install["site"] / "planted.py").exists()


def test_host_tmp_beside_the_interpreter_stays_invisible(tmp_install):
    root, venv = tmp_install["root"], tmp_install["venv"]
    probe = (
        "import os\n"
        "def f():\n"
        "    return [os.path.exists(p) for p in {!r}] + [sorted(os.listdir({!r})),\n"
        "            sorted(os.listdir({!r}))]\n".format(
            [
                str(root / "secret.txt"),
                str(root / "checkout" / "runs" / "expected.json"),
                str(root / "checkout" / "runs"),
                str(venv / "not_the_interpreter.txt"),
            ],
            str(root / "checkout"),
            str(venv),
        )
    )
    assert (
        _call(tmp_install, probe, [False] * 4 + [[".venv"], ["bin", "lib", "pyvenv.cfg"]])
        == "passed"
    )


def _tmp_paths(inst, cwd, extra_path=None):
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(SANDBOX_DIR)!r})\n"
        + (f"sys.path.append({extra_path!r})\n" if extra_path else "")
        + f"import limits\nprint(json.dumps(limits.tmp_paths(cwd={str(cwd)!r})))\n"
    )
    p = subprocess.run(
        [inst["python"], "-I", "-c", code], capture_output=True, text=True, check=True
    )
    return [p for p, _ in json.loads(p.stdout)]


def test_a_directory_holding_the_judges_working_directory_is_never_rebound(tmp_install):
    site = tmp_install["site"]
    assert str(site) in _tmp_paths(tmp_install, "/")
    assert str(site) not in _tmp_paths(tmp_install, site / "tvprobe_data")


def test_the_checkout_on_sys_path_is_not_rebound(tmp_install):
    checkout = tmp_install["root"] / "checkout"
    paths = _tmp_paths(tmp_install, "/", extra_path=str(checkout))  # an editable install's entry
    assert paths and not any(
        p == str(checkout)
        or str(checkout).startswith(p + "/")
        or p.startswith(str(checkout / "runs"))
        for p in paths
    )
