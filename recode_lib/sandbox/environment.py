"""Which of a record's required modules the sandbox's interpreter lacks (the `env_missing` verdict).

    missing_modules(python, ["numpy", "scipy"]) -> ("scipy",)     # cached per interpreter

A record may name the top-level modules its problem needs (field "requires": BigCodeBench's
metadata["libs"], carried by sandbox.sandbox_record). When one of them cannot be found
by the interpreter the workers run (SandboxConfig.python, else sys.executable), the problem
cannot be judged on this machine: the judge gives every submission of it the status
`env_missing` (outcome `not_counted`, result.py) without running it, and summaries leave it
out of pass@k with a count (evaluation.summary). The decision comes from the record and the
interpreter alone, never from what a submission printed or raised: a wrong answer cannot
make itself "not counted" by raising ModuleNotFoundError, and every policy is scored on the
same problems.

"Found" is importlib.util.find_spec(name) in `python -I` (the workers' own flags): the module
is installed where the sandbox looks. It does not import the module, so a module that is
installed but fails to import (a broken binary, a missing system library) is not caught here:
the submission then fails with the ImportError as its reason. The answer is cached per
(interpreter, module) for the life of the process; a module installed meanwhile is seen after
`forget()`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading

from recode_lib.core.errors import RecodeError

MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_PROBE = (
    "import importlib.util, json, sys\n"
    "def found(n):\n"
    "    try:\n"
    "        return importlib.util.find_spec(n) is not None\n"
    "    except Exception:\n"
    "        return False\n"
    "print(json.dumps({n: found(n) for n in sys.argv[1:]}))\n"
)
_CACHE: dict[tuple[str, str], bool] = {}
_LOCK = threading.Lock()


class EnvironmentProbeError(RecodeError, RuntimeError):
    """The interpreter could not be asked which modules it has."""


def top_level(name: str) -> str:
    return name.split(".", 1)[0]


def missing_modules(python: str | None, names) -> tuple[str, ...]:
    """The top-level modules among `names` that `python` (None: sys.executable) cannot find,
    sorted; () when every one is there. Raises EnvironmentProbeError when the probe fails."""
    python = python or sys.executable
    wanted = sorted({top_level(n) for n in names})
    with _LOCK:
        unknown = [n for n in wanted if (python, n) not in _CACHE]
        if unknown:
            try:
                out = subprocess.run(
                    [python, "-I", "-c", _PROBE, *unknown],
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=True,
                ).stdout
                found = json.loads(out.strip().splitlines()[-1])
            except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
                raise EnvironmentProbeError(
                    f"cannot ask {python} which modules it has: {type(exc).__name__}: "
                    f"{str(exc)[:200]}"
                ) from None
            for n in unknown:
                _CACHE[(python, n)] = bool(found.get(n))
        return tuple(n for n in wanted if not _CACHE[(python, n)])


def forget() -> None:
    """Drop the cache (a module was installed or removed since)."""
    with _LOCK:
        _CACHE.clear()
