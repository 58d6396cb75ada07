"""Every `recode ...` command the README prints parses as printed: the subcommand exists and
argparse accepts its options (nothing runs). A renamed option or subcommand fails here, not in
a reader's shell."""

import argparse
import importlib
import re
import shlex

import pytest

from recode_lib.cli import COMMANDS
from recode_lib.paths import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"


def readme_commands() -> list[str]:
    text = README.read_text()
    cmds = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.split(" # ")[0].strip()
            if line.startswith("recode "):
                cmds.append(line)
    # inline spans: only full commands (`recode sandbox` alone names the subcommand in prose)
    cmds += [c for c in re.findall(r"`(recode [^`]+)`", text) if len(c.split()) > 2]
    # placeholders ([--list], <profile>, NAME, ...) are syntax, not a command to run as printed
    return sorted({c for c in cmds if not re.search(r"[\[<]|\.\.\.|\bNAME\b|\bN\b|\bDIR\b", c)})


def parse(cmd: str) -> argparse.Namespace:
    argv = shlex.split(cmd)[1:]
    name, rest = argv[0], argv[1:]
    if name in ("--help", "-h", "help"):
        return argparse.Namespace()
    assert name in COMMANDS, f"README: `{cmd}`: no subcommand {name!r}"
    module = importlib.import_module(COMMANDS[name][0])
    parser = argparse.ArgumentParser(prog=f"recode {name}", exit_on_error=False)
    module.add_arguments(parser)
    try:
        return parser.parse_args(rest)
    except (argparse.ArgumentError, SystemExit) as exc:
        raise AssertionError(f"README: `{cmd}` does not parse: {exc}") from None


def test_the_readme_prints_recode_commands():
    cmds = readme_commands()
    assert len(cmds) >= 15
    assert any(c.startswith("recode sandbox") for c in cmds)


@pytest.mark.parametrize("cmd", readme_commands())
def test_every_readme_command_parses_as_printed(cmd):
    parse(cmd)
