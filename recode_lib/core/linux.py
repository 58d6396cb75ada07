"""recode runs untrusted code only on Linux: the one check, with the reason, made before it starts.

    from recode_lib.core.linux import require_linux
    require_linux("evaluation")       # LinuxRequired on macOS/Windows, before any work is done

The execution sandbox (recode_lib.sandbox: the GRPO rewards' verdicts, every evaluation, the
tool and agentic settings) confines each submission with Linux-only kernel features: network,
pid, mount, IPC and user namespaces (unshare), memfd_create for the test inputs, prctl
(PR_SET_CHILD_SUBREAPER, no_new_privs) and /proc. Elsewhere it cannot isolate anything, so the
code paths that execute submissions call require_linux first and stop with an explanation
instead of failing half-way. `import recode_lib` and everything that only reads result files
(recode_lib.analysis: figures, tables, reports; recode_lib.metrics; the data loaders) work on
any OS. It checks sys.platform only; a Linux kernel that refuses user namespaces is the
sandbox's own business (its "plain" fallback, recode_lib.sandbox.isolation_mode()).
"""

from __future__ import annotations

import sys

from recode_lib.core.errors import RecodeError


class LinuxRequired(RecodeError, RuntimeError):
    """Code was about to execute submissions on an OS other than Linux."""


def is_linux(platform: str | None = None) -> bool:
    return (platform or sys.platform).startswith("linux")


def require_linux(what: str = "the execution sandbox") -> None:
    """Raise LinuxRequired (naming `what` and why) unless this is Linux."""
    if is_linux():
        return
    raise LinuxRequired(
        f"{what} runs untrusted programs in recode's execution sandbox, which needs Linux "
        f"(this is {sys.platform!r}): it confines each program with Linux namespaces "
        "(network, pid, mount, user), memfd_create and prctl, which macOS and Windows do not "
        "have. Run it on a Linux machine, a Linux VM or container (e.g. Docker, Lima/colima, "
        "WSL2). Reading results (figures, tables, reports: recode_lib.analysis) works here."
    )
