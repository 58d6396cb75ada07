"""The `recode` command line: a table of subcommands, each in its own module of this package
(recode_lib/cli/<command>.py: the arguments and the call into the library, nothing more).

Each subcommand module exposes two functions:

    add_arguments(parser: argparse.ArgumentParser) -> None
    run(args: argparse.Namespace) -> int      # the exit status

The module is imported only when its subcommand is chosen, so `recode --help` stays fast
and never imports torch. To add a subcommand, add one line to COMMANDS.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import signal
import sys
import threading

from recode_lib.core.errors import RecodeError, Terminated
from recode_lib.core.stamps import git_hash

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "reproduce": (
        "recode_lib.cli.reproduce",
        "execute the notebooks in order for a profile (papermill)",
    ),
    "model": ("recode_lib.cli.model", "prepare or inspect a model (the embedded default: smollm2)"),
    "sandbox": ("recode_lib.cli.sandbox", "execute submissions against tests in the sandbox"),
    "merge": ("recode_lib.cli.merge", "interpolate/extrapolate weights between two checkpoints"),
    "eval": ("recode_lib.cli.eval", "evaluate a model on a benchmark (generate, execute, score)"),
    "grpo": (
        "recode_lib.cli.grpo",
        "GRPO training from a recipe (CG-GRPO, strictness sweep, math)",
    ),
    "rm": (
        "recode_lib.cli.rm",
        "train the process reward model (in process or under accelerate launch)",
    ),
    "plan": (
        "recode_lib.cli.plan",
        "check a profile's GPU memory on a cluster and estimate its "
        "GPU-hours (before any GPU work)",
    ),
    "stage": (
        "recode_lib.cli.stage",
        "list a profile's models and datasets (size, license gate) "
        "and download them for an offline run",
    ),
    "session": (
        "recode_lib.cli.session",
        "notebooks for JupyterLab bound to a profile, recorded in its manifest like a batch run",
    ),
    "adjudicate": (
        "recode_lib.cli.adjudicate",
        "decide the LCB-RB pairs a batch run left for a person, one at a time in the terminal",
    ),
    "report": (
        "recode_lib.cli.report",
        "write a run's self-contained HTML report, or compare two runs side by side",
    ),
}


class CliError(RecodeError):
    """An error meant for the user: printed as one clear line, exit status 2 (so is any other
    RecodeError a subcommand lets through: each names the bad file, field or value)."""


def add_dataclass_arguments(parser: argparse.ArgumentParser, cls, *, defaults: bool = True) -> None:
    """One `--field-name` option per field of the dataclass `cls` (typed options, the
    dataclass is the single declaration): the type from the annotation (int, float, str,
    bool as a flag, `X | None`), the help from field metadata["help"], the default from the
    field (`defaults=False`: None, so dataclass_from_args can tell "not given" apart)."""
    import dataclasses
    import typing

    hints = typing.get_type_hints(cls)
    doc = (cls.__doc__ or "").strip().splitlines()
    group = parser.add_argument_group(cls.__name__ + (f" ({doc[0].rstrip('.')})" if doc else ""))
    for f in dataclasses.fields(cls):
        kind = hints[f.name]
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        kind = args[0] if args else kind
        flag = "--" + f.name.replace("_", "-")
        default = f.default if defaults and f.default is not dataclasses.MISSING else None
        help_ = f.metadata.get("help", "")
        if kind is bool:
            group.add_argument(flag, dest=f.name, action="store_true", default=default, help=help_)
            continue
        shown = f" (default {f.default})" if f.default not in (dataclasses.MISSING, None) else ""
        group.add_argument(
            flag,
            dest=f.name,
            type=kind,
            default=default,
            metavar=f.name.upper(),
            help=help_ + shown,
        )


def dataclass_from_args(cls, args: argparse.Namespace):
    """cls(**the options add_dataclass_arguments declared that were given); ValueError from
    the dataclass is a CliError."""
    import dataclasses

    given = {
        f.name: getattr(args, f.name)
        for f in dataclasses.fields(cls)
        if getattr(args, f.name, None) is not None
    }
    try:
        return cls(**given)
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from None


def version_line() -> str:
    """`recode --version`: the installed package's version and the checkout's commit."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("recode")
    except PackageNotFoundError:
        v = "(not installed)"
    commit = git_hash()
    return f"recode {v}" + (
        f" (git {commit[:12]}{'-dirty' if commit.endswith('-dirty') else ''})" if commit else ""
    )


def _usage() -> str:
    width = max(len(n) for n in COMMANDS)
    lines = [
        "usage: recode <command> [options]",
        "",
        "Reinforcement learning for code generation: ReCode and extrapolated weight averaging.",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += [
        "",
        "Run `recode <command> --help` for a command's options; `recode --version` "
        "for the version.",
    ]
    return "\n".join(lines)


INTERRUPT_EXIT = {KeyboardInterrupt: 130, Terminated: 143}  # 128 + SIGINT / SIGTERM
OS_HINTS = {
    errno.EROFS: "the folder is read-only: choose a writable one (--out, RECODE_RUNS_DIR)",
    errno.ENOSPC: "the disk is full: free space and run the same command again (finished "
    "records are kept)",
    errno.EDQUOT: "the disk quota is exceeded: free space and run the same command again",
    errno.EACCES: "permission denied: check the path's owner and mode",
    errno.EPERM: "operation not permitted: check the path's owner and mode",
    errno.ENOENT: "no such file or folder: check the path",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "the path is a folder where a file was expected",
}


def os_error_line(exc: OSError) -> str:
    """One sentence for an OSError on a path: the path, what happened, what to do."""
    path = exc.filename if exc.filename is not None else "(no path)"
    what = exc.strerror or type(exc).__name__
    hint = OS_HINTS.get(exc.errno)
    return f"{path}: {what}" + (f"; {hint}" if hint else "")


def debug_wanted() -> bool:
    """RECODE_DEBUG=1: keep the full traceback instead of the one-line error."""
    return os.environ.get("RECODE_DEBUG", "") not in ("", "0")


def raise_terminated(signum, frame):
    raise Terminated()


def run_guarded(prog: str, run, args) -> int:
    """Run a subcommand: RecodeError and OSError as one line (exit 2), Ctrl-C / SIGTERM as one
    line (exit 130 / 143); RECODE_DEBUG=1 re-raises for the traceback."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, raise_terminated)
    try:
        return int(run(args) or 0)
    except RecodeError as exc:
        if debug_wanted():
            raise
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if debug_wanted():
            raise
        print(
            f"{prog}: error: {os_error_line(exc)} (RECODE_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return 2
    except (KeyboardInterrupt, Terminated) as exc:
        if debug_wanted():
            raise
        what = (
            "interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else "terminated (SIGTERM)"
        )
        print(
            f"{prog}: {what}; finished work is kept, run the same command again to resume",
            file=sys.stderr,
        )
        return INTERRUPT_EXIT[type(exc)]


def module_main(module, prog: str, description: str, argv: list[str] | None = None) -> int:
    """`python -m recode_lib.cli.<name>` for a subcommand module (the entry points accelerate
    runs: cli.grpo, cli.rm): its add_arguments/run, a CliError as one line and exit 2."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    module.add_arguments(parser)
    return run_guarded(parser.prog, module.run, parser.parse_args(argv))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if argv else 2
    if argv[0] in ("-V", "--version"):
        print(version_line())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"recode: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, help_ = COMMANDS[name]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"recode {name}", description=help_)
    module.add_arguments(parser)
    args = parser.parse_args(rest)
    return run_guarded(f"recode {name}", module.run, args)
