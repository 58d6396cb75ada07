"""Your own benchmarks and rewards in every process of a run: the `RECODE_PLUGINS` modules.

    export RECODE_PLUGINS=my_ext,my_lab.rewards    # importable module names, comma-separated
    recode reproduce --only 04 -p VARIANTS=gated,my_reward
    recode eval --model smollm2 --benchmark my_bench --limit 4

A registration (recode_lib.data.register_benchmark, recode_lib.rewards.register /
register_function) lives in the Python process that ran it. A pipeline run executes every
notebook in a fresh kernel and `accelerate launch` starts one process per GPU, so a
registration made in your shell, script or another notebook does not reach them. Put the
registrations in a module on the Python path and name it in `$RECODE_PLUGINS`: every process
of a run inherits the variable, and `load_plugins()` imports each module once per process when
a benchmark or reward name is first looked up (recode_lib.data and recode_lib.rewards.registry
call it). A module that fails to import raises PluginError naming it and the variable.
It does not discover plugins by itself (no entry points) and never imports anything not named.
"""

from __future__ import annotations

import importlib
import os

from recode_lib.core.errors import RecodeError

ENV = "RECODE_PLUGINS"
_loaded: set[str] = set()


class PluginError(RecodeError, ImportError):
    """A module named in $RECODE_PLUGINS that cannot be imported."""


def plugin_modules() -> list[str]:
    """The module names in $RECODE_PLUGINS (comma- or space-separated), in order."""
    raw = os.environ.get(ENV, "")
    return [m for m in raw.replace(",", " ").split() if m]


def load_plugins() -> list[str]:
    """Import every module named in $RECODE_PLUGINS not imported yet; returns the names."""
    names = plugin_modules()
    for name in names:
        if name in _loaded:
            continue
        _loaded.add(name)  # first: a plugin that looks a name up does not recurse
        try:
            importlib.import_module(name)
        except Exception as exc:
            _loaded.discard(name)
            raise PluginError(
                f"${ENV} names {name!r}, which cannot be imported "
                f"({type(exc).__name__}: {exc}); is it on the Python path?"
            ) from exc
    return names
