"""Every command the README prints runs as printed, as far as a test can run it cheaply: each
`recode ...` command parses (the subcommand exists, argparse accepts its options), `recode plan`
runs, `recode stage` lists (its --list), `recode reproduce` passes the checks it makes before
any notebook, `recode grpo` gives what its recipe needs (rm_path for a process reward), and
`recode --help` lists the subcommands used; each `make ...` command dry-runs (`make -n`: the
target and variables exist) and the recode calls it makes parse; the rest (conda, tensorboard,
pip extras, the Slurm exports) name what the project has. A renamed option, target or variable
fails here, not in a reader's shell."""

import argparse
import importlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib

import pytest

from recode_lib.cli import COMMANDS
from recode_lib.core.paths import PROJECT_ROOT

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


# --- the README's other commands: make targets (dry run), recode's own dry runs, the rest ----

MAKE_ENV_DROP = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "ARGS")  # from an outer `make test ARGS=...`


def readme_shell_commands() -> list[str]:
    """Every command line the README prints in a bash block (continuations joined, comments
    dropped) and every inline span that starts with a command word."""
    text = README.read_text()
    cmds = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        cmds += [ln.split(" # ")[0].strip() for ln in joined.splitlines()]
    cmds += re.findall(r"`((?:make|python|pip|conda|source|tensorboard) [^`]+)`", text)
    return [c for c in dict.fromkeys(cmds) if c and not c.startswith("#")]


def readme_make_commands() -> list[str]:
    """The README's `make ...` commands (with any VAR=value before `make`)."""
    return [c for c in readme_shell_commands() if re.match(r"^(?:[A-Z_]+=\S+ )*make\b", c)]


def make_dry_run(cmd: str) -> subprocess.CompletedProcess:
    """`make -n` of a README command as printed: its VAR=value prefix as environment, its
    arguments as given (a target that does not exist, or a bad variable, fails here)."""
    words = shlex.split(cmd)
    env = {k: v for k, v in os.environ.items() if k not in MAKE_ENV_DROP}
    while "=" in words[0]:
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    assert words[0] == "make"
    return subprocess.run(
        ["make", "-n", "--no-print-directory", *words[1:]],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_readme_prints_make_commands():
    cmds = readme_make_commands()
    assert {"make test", "make reproduce", "make env TORCH_INDEX=cpu", "make lab"} <= set(cmds)
    assert any(c.startswith("HF_HUB_OFFLINE=1 make reproduce PROFILE=paper") for c in cmds)


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
@pytest.mark.parametrize("cmd", readme_make_commands())
def test_every_readme_make_command_dry_runs_and_its_recode_calls_parse(cmd):
    out = make_dry_run(cmd)
    assert out.returncode == 0, f"README: `{cmd}`: make -n fails: {out.stderr.strip()[-300:]}"
    # what the target runs through recode's CLI (ARGS="--gpus 8 ..." included) parses too
    for call in re.findall(r"-m recode_lib ([^;\n]+)", out.stdout):
        parse("recode " + call)


def run_in_process(cmd: str, capsys) -> tuple[int, str]:
    """A README `recode ...` command run in this process, as `recode` runs it (exit status,
    stdout); for the commands cheap enough to run for real."""
    argv = shlex.split(cmd)[1:]
    args = parse(cmd)
    module = importlib.import_module(COMMANDS[argv[0]][0])
    rc = module.run(args)
    return rc, capsys.readouterr().out


def test_the_readme_plan_command_runs_as_printed(capsys):
    cmds = [c for c in readme_commands() if c.startswith("recode plan ")]
    assert cmds
    for cmd in cmds:
        rc, out = run_in_process(cmd, capsys)
        assert rc == 0 and "GPU-hours" in out, f"README: `{cmd}` exits {rc}"


def test_every_readme_stage_command_lists_what_it_would_fetch(capsys, monkeypatch):
    """`recode stage` as printed, with its own dry run (--list: never downloads), offline."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cmds = [c for c in readme_commands() if c.startswith("recode stage ")]
    assert cmds
    for cmd in cmds:
        rc, out = run_in_process(cmd + " --list", capsys)
        assert rc == 0 and "Qwen/Qwen2.5-Coder-7B-Instruct" in out, f"README: `{cmd} --list`"


def test_every_readme_reproduce_command_passes_the_checks_before_any_notebook():
    """The checks `recode reproduce` makes before it runs a notebook (profile, -p values,
    --only/--from): run_pipeline's own functions, without running anything."""
    from recode_lib.cli.reproduce import parse_overrides
    from recode_lib.runner.pipeline import list_notebooks, profile_parameters, select

    cmds = [c for c in readme_commands() if c.startswith("recode reproduce ")]
    assert len(cmds) >= 5
    for cmd in cmds:
        args = parse(cmd)
        params = profile_parameters(
            args.profile, args.params, parse_overrides(args.set), variant=args.variant
        )
        chosen = select(list_notebooks(), args.only, args.from_)
        assert params and chosen, f"README: `{cmd}` selects no notebook"


def test_every_readme_grpo_command_gives_what_its_recipe_needs():
    """`recode grpo` as printed: the recipe loads with the command's --set fields, and a
    recipe with a process reward is given rm_path (else it exits 2 asking for it)."""
    import yaml

    from recode_lib.rewards import Need, reward_needs
    from recode_lib.training.grpo import load_recipe

    cmds = [c for c in readme_commands() if c.startswith("recode grpo ")]
    assert cmds
    for cmd in cmds:
        args = parse(cmd)
        overrides = {k: yaml.safe_load(v) for k, v in (i.split("=", 1) for i in args.set)}
        recipe = load_recipe(args.recipe, **overrides)
        names = [r["name"] if isinstance(r, dict) else r for r in recipe.rewards]
        if any(Need.REWARD_MODEL in reward_needs(n) for n in names):
            assert recipe.rm_path, f"README: `{cmd}`: recipe {args.recipe} needs --set rm_path="


def test_recode_help_lists_every_subcommand_the_readme_uses():
    out = subprocess.run(
        [sys.executable, "-m", "recode_lib", "--help"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    used = {shlex.split(c)[1] for c in readme_commands()} - {"--help", "-h", "help"}
    assert used and all(re.search(rf"^\s+{name}\b", out.stdout, re.M) for name in used), used


def test_the_readme_s_other_commands_name_what_exists():
    """The README's commands that are neither `make` nor `recode`: each names a file, an
    extra, an executable or an environment variable the project has."""
    cmds = readme_shell_commands()
    assert "conda env create -f environment.yml && conda activate recode" in cmds
    env_yml = (PROJECT_ROOT / "environment.yml").read_text()
    assert re.search(r"^name: recode$", env_yml, re.M)
    assert "source .venv/bin/activate" in cmds
    assert re.search(r"^VENV\s*\?= \.venv$", (PROJECT_ROOT / "Makefile").read_text(), re.M)
    pyproject = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    for extra in re.findall(r"pip install -e '\.\[(\w+)\]'", README.read_text()):
        assert extra in pyproject["project"]["optional-dependencies"], extra
    tensorboard = [c for c in cmds if c.startswith("tensorboard ")]
    assert tensorboard == ["tensorboard --logdir runs/smoke"]
    assert any(d.startswith("tensorboard") for d in pyproject["project"]["dependencies"])
    assert os.access(PROJECT_ROOT / ".ci" / "run", os.X_OK)


def test_the_readme_s_slurm_exports_are_what_the_launcher_reads():
    from recode_lib.training.slurm import SlurmShape

    exports = [c for c in readme_shell_commands() if c.startswith("export ")]
    env = dict(w.split("=", 1) for c in exports for w in shlex.split(c)[1:])
    shape = SlurmShape.from_env(env)
    assert shape.nodes == int(env.pop("RECODE_SLURM_NODES"))
    assert shape.gpus_per_node == int(env.pop("RECODE_SLURM_GPUS_PER_NODE"))
    assert shape.partition == env.pop("RECODE_SLURM_PARTITION")
    launch = (PROJECT_ROOT / "recode_lib" / "training" / "launch.py").read_text()
    assert env.pop("RECODE_SLURM_SETUP") and 'os.environ.get("RECODE_SLURM_SETUP"' in launch
    assert env == {"HF_HUB_OFFLINE": "1"}, f"README exports {sorted(env)}: who reads them?"
