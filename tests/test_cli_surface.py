"""The `recode` command line's small promises: --version answers, every option says what it
does (a --no-X flag's help starts with what the flag does), and an interval is printed only
where a bootstrap over problems can say something."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import re

import pytest

from recode_lib.cli import COMMANDS, main
from recode_lib.cli.eval import ci_text
from recode_lib.evaluation.spec import EvalSpec


def test_version_prints_the_version_not_the_help(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out.strip()
    assert re.fullmatch(r"recode \d+\.\d+\.\d+.*", out) and "usage" not in out


def parsers():
    for name, (module_name, help_) in COMMANDS.items():
        parser = argparse.ArgumentParser(prog=f"recode {name}", description=help_)
        importlib.import_module(module_name).add_arguments(parser)
        yield name, parser


@pytest.mark.parametrize("name,parser", list(parsers()), ids=list(COMMANDS))
def test_every_option_has_help(name, parser):
    silent = [
        a.option_strings[0]
        for a in parser._actions
        if a.option_strings and a.help in (None, "") and a.dest != "help"
    ]
    assert not silent, f"recode {name}: options without help: {silent}"


def test_a_no_flag_says_what_it_turns_off():
    """`recode eval --no-progress` used to read "show progress bars": the field's own help."""
    on_help = {f.name: f.metadata["help"] for f in dataclasses.fields(EvalSpec)}
    parser = dict(parsers())["eval"]
    flags = [
        a
        for a in parser._actions
        if a.option_strings and a.option_strings[0].startswith("--no-") and a.dest in on_help
    ]
    assert {a.dest for a in flags} >= {"progress", "reasoning"}
    for a in flags:
        assert not a.help.startswith(on_help[a.dest]), f"{a.option_strings[0]}: {a.help!r}"
        assert f"(default: {on_help[a.dest]})" in a.help


def test_no_interval_from_two_problems():
    assert ci_text(0.0, 0.0, 2) == "no 95% CI: 2 problem(s), a bootstrap needs >= 5"
    assert ci_text(0.0, 0.0, 40) == "no 95% CI: all 40 problems scored the same"
    assert ci_text(0.1, 0.4, 40) == "95% CI 0.1000-0.4000"
