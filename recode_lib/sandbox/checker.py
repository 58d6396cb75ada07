"""Testlib checkers for stdio tests (CodeContests+): compile once, cache, run as trusted code.

    from recode_lib.sandbox.checker import check_output, compile_checker, CHECKER_STATS
    binary = compile_checker(cpp_source)   # Path, or None when it cannot be built (reason counted)
    ok = check_output(cpp_source, input_text, expected_text, output_text)   # True|False|None
    prepare_checkers([cpp_source, ...])    # compile before judging (execute_many does this)

It does not run submissions.
More: docs/modules/sandbox.md (recode_lib.sandbox.checker).
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

from recode_lib.core.errors import RecodeError
from recode_lib.core.paths import PROJECT_ROOT, cache_dir

TESTLIB_DIR = PROJECT_ROOT / "data" / "testlib"
CXX_FLAGS = ("-O2", "-std=c++17")
CHECKER_TIME_S = 10.0
CHECKER_MEMORY_MB = 1024
COMPILE_TIMEOUT_S = 300.0
CHECKER_STATS: Counter = (
    Counter()
)  # checked, passed, fallback_no_compiler, fallback_compile_error, checker_fail
_LOCK = threading.Lock()
_BUILT: dict[str, Path | None] = {}
_WHY: dict[str, str] = {}


def compiler() -> str | None:
    """The C++ compiler used for checkers: $RECODE_CXX, else c++ or g++ on PATH, else None."""
    env = os.environ.get("RECODE_CXX")
    if env is not None:
        return shutil.which(env) if env else None
    return shutil.which("c++") or shutil.which("g++")


class CheckerUnavailable(RecodeError, RuntimeError):
    """Testlib checkers that cannot be built, and no exact-match fallback was asked for."""


COMPILER_PACKAGE = "g++"  # the Debian/Ubuntu package that provides c++/g++
FALLBACK_HOW = (
    "SandboxConfig(checker_fallback=True); `recode eval --checker-fallback`; a GRPO "
    "recipe's checker_fallback (RECIPE_FIELDS: {checker_fallback: true})"
)
_WORKING: dict[str, str | None] = {}
_PROBE = (
    "#include <vector>\n#include <string>\nint main() { std::vector<std::string> v; return 0; }\n"
)


def compiler_problem() -> str | None:
    """None when a working C++ compiler is there for testlib checkers (compiler() compiles and
    links a small C++17 program; the answer is cached per compiler for the process), else why
    not, naming the package to install."""
    cxx = compiler()
    if cxx is None:
        env = os.environ.get("RECODE_CXX")
        where = (
            f"RECODE_CXX={env!r} is not an executable"
            if env is not None
            else "no c++ or g++ on PATH"
        )
        return (
            f"no C++ compiler ({where}): install the Debian package {COMPILER_PACKAGE} "
            f"(apt-get install {COMPILER_PACKAGE}) or point RECODE_CXX at a C++ compiler"
        )
    with _LOCK:
        if cxx not in _WORKING:
            with tempfile.TemporaryDirectory(prefix="recode-cxx-") as tmp:
                try:
                    proc = subprocess.run(
                        [cxx, *CXX_FLAGS, "-x", "c++", "-", "-o", str(Path(tmp) / "probe")],
                        input=_PROBE,
                        capture_output=True,
                        text=True,
                        timeout=120,
                    )
                    bad = (
                        None
                        if proc.returncode == 0
                        else (proc.stderr.strip()[:200] or f"exit {proc.returncode}")
                    )
                except (OSError, subprocess.TimeoutExpired) as exc:
                    bad = f"{type(exc).__name__}: {exc}"[:200]
            _WORKING[cxx] = (
                None
                if bad is None
                else (
                    f"the C++ compiler {cxx} does not build a C++17 program ({bad}): install the "
                    f"Debian package {COMPILER_PACKAGE} (apt-get install {COMPILER_PACKAGE})"
                )
            )
        return _WORKING[cxx]


def has_testlib_checker(tests) -> bool:
    """True for stdio tests that carry a testlib checker (CodeContests+ problems)."""
    return (
        isinstance(tests, dict)
        and tests.get("kind") == "stdio"
        and isinstance(tests.get("checker"), str)
        and bool(tests["checker"].strip())
    )


def require_compiler(allow_fallback: bool = False, what: str = "testlib checkers") -> str | None:
    """The compiler preflight of anything that judges problems with testlib checkers: None
    when a working C++ compiler is there; otherwise CheckerUnavailable naming the package to
    install, unless `allow_fallback` (the user asked for exact-match comparison instead: then
    the reason is returned, warned, and every result it touches says "exact_fallback")."""
    why = compiler_problem()
    if why is None:
        return None
    if not allow_fallback:
        raise CheckerUnavailable(
            f"{what}: testlib checkers need a working C++ compiler: {why}; "
            f"or ask for the exact-match fallback ({FALLBACK_HOW}), which "
            "judges problems with several right answers wrongly"
        )
    warnings.warn(
        f"{what}: {why}; exact-match fallback as asked (results say exact_fallback)",
        RuntimeWarning,
        stacklevel=2,
    )
    return why


def require_checkers(
    tests_list, allow_fallback: bool = False, what: str = "testlib checkers"
) -> str | None:
    """require_compiler when any of `tests_list` (record/problem tests) has a testlib checker;
    None (nothing to check) otherwise."""
    if any(has_testlib_checker(t) for t in tests_list):
        return require_compiler(allow_fallback, what)
    return None


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
                proc = subprocess.run(
                    [cxx, *CXX_FLAGS, "-I", str(TESTLIB_DIR), "-o", str(out), str(src)],
                    capture_output=True,
                    text=True,
                    timeout=COMPILE_TIMEOUT_S,
                )
                ok, log = proc.returncode == 0, proc.stderr
            except subprocess.TimeoutExpired:
                ok, log = False, f"compilation took over {COMPILE_TIMEOUT_S} s"
            if not ok:
                err.write_text(log)
                _WHY[key] = f"does not compile: {log[:300]}"
                _BUILT[key] = None
                return None
            os.replace(out, binary)  # atomic: a concurrent process sees all or nothing
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
        for name, text in (
            ("input.txt", input_text),
            ("output.txt", output),
            ("answer.txt", expected),
        ):
            p = Path(tmp) / name
            p.write_text(text)
            paths.append(str(p))
        try:
            cmd = _LIMITED.format(kb=CHECKER_MEMORY_MB * 1024, cpu=int(CHECKER_TIME_S) + 1)
            proc = subprocess.run(
                ["/bin/sh", "-c", cmd, str(binary), *paths],
                capture_output=True,
                text=True,
                timeout=CHECKER_TIME_S,
                cwd=tmp,
                errors="replace",
            )
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
            warnings.warn(
                f"testlib checker {checker_key(source)[:12]}: {why}; falling back to "
                "exact output comparison",
                RuntimeWarning,
                stacklevel=2,
            )
        return None
    code, _ = run_checker(binary, input_text, expected, output)
    with _LOCK:
        CHECKER_STATS["checked"] += 1
        if code == 0:
            CHECKER_STATS["passed"] += 1
        elif code not in (1, 2):
            CHECKER_STATS["checker_fail"] += 1
    return code == 0


def prepare_checkers(sources, allow_fallback: bool = False) -> None:
    """Compile every distinct checker once, before any submission runs (so no judge thread
    compiles while a sandboxed child waits). Without a working compiler, or with a checker that
    does not compile, CheckerUnavailable unless `allow_fallback` (then those problems are
    judged by exact comparison, and their results say "exact_fallback" with the reason)."""
    sources = list(dict.fromkeys(s for s in sources if s))
    if not sources:
        return
    require_compiler(allow_fallback, "the sandbox's judge")
    for src in sources:
        if compile_checker(src) is None and not allow_fallback:
            raise CheckerUnavailable(
                f"testlib checker {checker_key(src)[:12]} {fallback_reason(src)}; fix the "
                f"problem's checker, or ask for the exact-match fallback ({FALLBACK_HOW})"
            )


def fallback_count() -> int:
    """How many checks fell back to exact comparison in this process."""
    return CHECKER_STATS["fallback_no_compiler"] + CHECKER_STATS["fallback_compile_error"]
