"""Testlib checkers for stdio tests (CodeContests+): compile once, cache, run as trusted code.

    from recode_lib.sandbox.checker import check_output, compile_checker, CHECKER_STATS
    binary = compile_checker(cpp_source)   # Path, or None when it cannot be built (reason counted)
    ok = check_output(cpp_source, input_text, expected_text, output_text)   # True|False|None
    prepare_checkers([cpp_source, ...])    # compile before judging (execute_many does this)

Many contest problems accept several outputs; CodeContests+ ships a testlib C++ checker per
problem. A stdio record may carry it as `tests.checker` (C++ source that includes
"testlib.h"); the judge then asks the checker instead of comparing text. The checker is the
problem's code, trusted: it runs in the judge (never in the submission's sandbox), as
`checker <input> <output> <answer>` on three files, with its own limits (CHECKER_TIME_S wall
and CPU seconds, CHECKER_MEMORY_MB address space). Testlib exit codes: 0 = ok (passed),
1 = wrong answer, 2 = presentation error (both wrong_answer), 3 = fail (the checker itself
failed: counted in CHECKER_STATS["checker_fail"], and the test is wrong_answer so a broken
checker never passes anything), anything else / killed: counted as checker_fail too.

Compilation: the system C++ compiler (`c++`/`g++`, or $RECODE_CXX) with -O2 -std=c++17 and the
vendored data/testlib/testlib.h (MIT, Mike Mirzayanov; LICENSE beside it), once per source:
binaries are cached in recode_lib.paths.cache_dir()/checkers/<sha256 of source + flags>.
When no compiler exists or the source does not compile, `check_output` returns None and the
caller (verdict.py) falls back to exact (LiveCodeBench line) comparison; every such fallback
is counted in CHECKER_STATS and warned about once per checker. It does not run submissions.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import warnings
from collections import Counter
from pathlib import Path

from recode_lib.paths import PROJECT_ROOT, cache_dir

TESTLIB_DIR = PROJECT_ROOT / "data" / "testlib"
CXX_FLAGS = ("-O2", "-std=c++17")
CHECKER_TIME_S = 10.0
CHECKER_MEMORY_MB = 1024
COMPILE_TIMEOUT_S = 300.0
CHECKER_STATS: Counter = Counter()   # checked, passed, fallback_no_compiler, fallback_compile_error, checker_fail
_LOCK = threading.Lock()
_BUILT: dict[str, Path | None] = {}
_WHY: dict[str, str] = {}


def compiler() -> str | None:
    """The C++ compiler used for checkers: $RECODE_CXX, else c++ or g++ on PATH, else None."""
    env = os.environ.get("RECODE_CXX")
    if env is not None:
        return shutil.which(env) if env else None
    return shutil.which("c++") or shutil.which("g++")


def checker_key(source: str) -> str:
    return hashlib.sha256("\0".join((source,) + CXX_FLAGS).encode()).hexdigest()[:32]


def compile_checker(source: str) -> Path | None:
    """The cached binary of `source`, compiled on first use; None (reason in fallback_reason)
    when no compiler exists or compilation fails (the failure is cached too)."""
    key = checker_key(source)
    with _LOCK:
        if key in _BUILT:
            return _BUILT[key]
        d = cache_dir() / "checkers" / key
        binary, err = d / "checker", d / "compile_error.txt"
        if binary.is_file():
            _BUILT[key] = binary
            return binary
        if err.is_file():
            _WHY[key] = f"does not compile (cached): {err.read_text()[:300]}"
            _BUILT[key] = None
            return None
        cxx = compiler()
        if cxx is None:
            _WHY[key] = "no C++ compiler found (set RECODE_CXX or install g++)"
            _BUILT[key] = None
            return None
        d.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=d) as tmp:
            src = Path(tmp) / "checker.cpp"
            src.write_text(source)
            out = Path(tmp) / "checker"
            try:
                proc = subprocess.run([cxx, *CXX_FLAGS, "-I", str(TESTLIB_DIR), "-o", str(out),
                                       str(src)], capture_output=True, text=True,
                                      timeout=COMPILE_TIMEOUT_S)
                ok, log = proc.returncode == 0, proc.stderr
            except subprocess.TimeoutExpired:
                ok, log = False, f"compilation took over {COMPILE_TIMEOUT_S} s"
            if not ok:
                err.write_text(log)
                _WHY[key] = f"does not compile: {log[:300]}"
                _BUILT[key] = None
                return None
            os.replace(out, binary)   # atomic: a concurrent process sees all or nothing
        _BUILT[key] = binary
        return binary


def fallback_reason(source: str) -> str | None:
    """Why `source` has no binary (after compile_checker returned None), else None."""
    return _WHY.get(checker_key(source))


# limits set by the shell before exec (no preexec_fn: the judge is multi-threaded)
_LIMITED = 'ulimit -v {kb} && ulimit -t {cpu} && exec "$0" "$@"'


def run_checker(binary: Path, input_text: str, expected: str, output: str) -> tuple[int, str]:
    """(testlib exit code, checker message) of one test; -1 when killed or timed out."""
    with tempfile.TemporaryDirectory(prefix="recode-checker-") as tmp:
        paths = []
        for name, text in (("input.txt", input_text), ("output.txt", output),
                           ("answer.txt", expected)):
            p = Path(tmp) / name
            p.write_text(text)
            paths.append(str(p))
        try:
            cmd = _LIMITED.format(kb=CHECKER_MEMORY_MB * 1024, cpu=int(CHECKER_TIME_S) + 1)
            proc = subprocess.run(["/bin/sh", "-c", cmd, str(binary), *paths],
                                  capture_output=True, text=True, timeout=CHECKER_TIME_S,
                                  cwd=tmp, errors="replace")
        except subprocess.TimeoutExpired:
            return -1, f"checker exceeded {CHECKER_TIME_S} s"
        return proc.returncode, (proc.stderr or proc.stdout)[:500]


def check_output(source: str, input_text: str, expected: str, output: str) -> bool | None:
    """True/False from the checker, or None when there is no binary (the caller falls back to
    exact comparison; counted and warned once per checker)."""
    binary = compile_checker(source)
    if binary is None:
        why = fallback_reason(source) or "unavailable"
        kind = "fallback_no_compiler" if why.startswith("no C++") else "fallback_compile_error"
        with _LOCK:
            first = CHECKER_STATS[f"warned:{checker_key(source)}"] == 0
            CHECKER_STATS[f"warned:{checker_key(source)}"] += 1
            CHECKER_STATS[kind] += 1
        if first:
            warnings.warn(f"testlib checker {checker_key(source)[:12]}: {why}; falling back to "
                          "exact output comparison", RuntimeWarning, stacklevel=2)
        return None
    code, _ = run_checker(binary, input_text, expected, output)
    with _LOCK:
        CHECKER_STATS["checked"] += 1
        if code == 0:
            CHECKER_STATS["passed"] += 1
        elif code not in (1, 2):
            CHECKER_STATS["checker_fail"] += 1
    return code == 0


def prepare_checkers(sources) -> None:
    """Compile every distinct checker once, before any submission runs (so no judge thread
    compiles while a sandboxed child waits)."""
    for src in dict.fromkeys(s for s in sources if s):
        compile_checker(src)


def fallback_count() -> int:
    """How many checks fell back to exact comparison in this process."""
    return CHECKER_STATS["fallback_no_compiler"] + CHECKER_STATS["fallback_compile_error"]
