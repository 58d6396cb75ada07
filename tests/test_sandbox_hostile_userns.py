"""The sandbox's hostile test modules again, with the judge run by a normal user (userns mode).

The main suite runs tests/test_sandbox_hostile.py and tests/test_sandbox_judge3.py (the
adversarial cases; each run here when present) as root CI, i.e. in root mode. Here one pytest
subprocess runs them as conftest.py's `normal_user` (as root: `recode-ci` through runuser; see
`.ci/run`), the mode most users get. It runs a copy of tests/ (and pyproject.toml, for the same
pytest settings) in a 0700 directory outside /tmp owned by that user: the modules write secrets
and check for markers beside themselves, so a submission the sandbox failed to isolate could
reach them as the same user. A plugin records isolation_mode() and, after every test, the mode
of every live worker. Every test must pass (none skipped) and every worker
must have been in userns mode.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = [
    m
    for m in ("test_sandbox_hostile.py", "test_sandbox_judge3.py")
    if os.path.exists(os.path.join(ROOT, "tests", m))
]

PLUGIN = textwrap.dedent('''
    """Loaded with -p: the isolation mode reached and each test's outcome, into a JSON file."""
    import json, os

    import pytest

    REPORT = {"isolation_mode": None, "worker_modes": [], "tests": {}}


    def pytest_sessionstart(session):
        from recode_lib.sandbox import isolation_mode
        REPORT["isolation_mode"] = isolation_mode()


    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(item, nextitem):
        from recode_lib.sandbox import pool
        pools = list(getattr(pool, "_POOLS", {}).values())
        if getattr(item.module, "CFG", None) is not None:  # the module's own pool
            pools.append(pool.get_pool(item.module.CFG))
        for p in pools:
            REPORT["worker_modes"] += [w.mode for w in p.workers()]


    def pytest_runtest_logreport(report):
        t = REPORT["tests"].setdefault(report.nodeid, {"outcome": "passed"})
        if report.failed:
            t.update(outcome="failed", when=report.when, why=str(report.longrepr)[-3000:])
        elif report.skipped and t["outcome"] == "passed":
            t.update(outcome="skipped", why=str(report.longrepr)[-500:])


    def pytest_sessionfinish(session, exitstatus):
        REPORT["exitstatus"] = int(exitstatus)
        with open(os.environ["RECODE_USERNS_REPORT"], "w") as fh:
            json.dump(REPORT, fh)
''')


def _chown_tree(top, uid, gid):
    os.chown(top, uid, gid)
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            os.chown(os.path.join(d, n), uid, gid, follow_symlinks=False)


def test_hostile_modules_pass_as_a_normal_user_in_userns_mode(normal_user):
    assert MODULES and MODULES[0] == "test_sandbox_hostile.py"
    work = tempfile.mkdtemp(
        prefix="recode-hostile-userns-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None
    )
    try:
        shutil.copytree(
            os.path.join(ROOT, "tests"),
            os.path.join(work, "tests"),
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "secret-*", "pwn-*"),
        )
        shutil.copy(os.path.join(ROOT, "pyproject.toml"), work)
        with open(os.path.join(work, "_userns_probe.py"), "w") as fh:
            fh.write(PLUGIN)
        report = os.path.join(work, "report.json")
        if normal_user["prefix"]:
            _chown_tree(work, normal_user["uid"], normal_user["gid"])
        os.chmod(work, 0o700)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": work,
            "LANG": "C.UTF-8",
            "PYTHONPATH": work + os.pathsep + ROOT,
            "PYTHONDONTWRITEBYTECODE": "1",
            "RECODE_USERNS_REPORT": report,
            "RECODE_RUNS_DIR": os.path.join(work, "runs"),
            # runuser sets HOME to the user's (a system user's may not exist): caches here
            "RECODE_CACHE_DIR": os.path.join(work, "cache"),
            **{k: v for k, v in os.environ.items() if k == "RECODE_DATA_DIR"},
        }
        cmd = normal_user["prefix"] + [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "_userns_probe",
            "--basetemp",
            os.path.join(work, "basetemp"),
            *("tests/" + m for m in MODULES),
        ]
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=540)
        log = proc.stdout[-4000:] + proc.stderr[-2000:]
        assert os.path.exists(report), log
        with open(report) as fh:
            rep = json.load(fh)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert rep["isolation_mode"] == "userns", (rep["isolation_mode"], log)
    assert rep["worker_modes"] and set(rep["worker_modes"]) == {"userns"}, (
        sorted(set(rep["worker_modes"])),
        log,
    )
    bad = {k: v for k, v in rep["tests"].items() if v["outcome"] != "passed"}
    assert not bad, (bad, log)
    for m in MODULES:
        assert any(k.startswith(f"tests/{m}::") for k in rep["tests"]), (m, "ran no test", log)
    assert proc.returncode == 0 and rep["exitstatus"] == 0, log
