"""RecodeError: the one base class of every error recode raises on purpose.

Each error class of the library derives from RecodeError and from the builtin class its callers
already expect (ValueError for a bad value, RuntimeError for a failed step, ImportError for a
plugin), so `except RecodeError` catches everything recode reports about a bad file, field or
value, and `except ValueError` still works where it did. The message names the bad thing.

Not covered: errors of third-party packages (torch, transformers, trl) pass through unchanged,
and the sandbox harness's own control-flow exceptions (it runs in the untrusted child with the
standard library only) are not RecodeErrors.
"""

from __future__ import annotations


class RecodeError(Exception):
    """Base class of recode's own errors (subclasses also derive from a builtin class)."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread as KeyboardInterrupt is for SIGINT (the CLI installs
    the handler), so the same `finally` blocks and locks unwind; a BaseException, so no
    `except Exception` swallows it."""


def error_classes() -> list[type]:
    """Every RecodeError subclass defined so far (imported modules only), for tests and docs."""
    out, todo = [], [RecodeError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in out:
                out.append(sub)
                todo.append(sub)
    return out
