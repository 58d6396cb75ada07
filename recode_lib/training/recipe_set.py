"""RECIPE_SET: the recipe fields a profile (or a command line) sets, by the recipe's own names.

    from recode_lib.training.recipe_set import recipe_set, recipe_set_text
    recipe_set("max_steps=2 num_generations=4 learning_rate=2e-5")
    # {"max_steps": 2, "num_generations": 4, "learning_rate": 2e-05}
    fields = recipe_set(RECIPE_SET, model=MODEL, seed=SEED)   # + the notebook's own fields
    load_recipe(RECIPE, **fields)
    recipe_set_text({"max_steps": 1, "cpu_threads": None})    # "max_steps=1 cpu_threads=null"

A GRPO notebook (04, 06, 09, 10, 11) declares one parameter, RECIPE_SET, a string of
`field=value` items separated by whitespace or commas; each field is a field of the recipe
(recode_lib.training.grpo.config_fields: trl.GRPOConfig's and the project's), each value a YAML
scalar (2, 2e-5, true, null, a word). The empty string sets nothing: the recipe file decides.
So a value is stated in one place — the recipe file, or the profile's RECIPE_SET — and no
table translates notebook parameters into recipe fields. The fields a notebook also uses for
something else (its MODEL, BENCHMARK, WORKERS, SEED, REASONING) it passes by name, and
RECIPE_SET may not set them too (the notebook's parameter is the one place).
It takes no lists or mappings (rewards, lora: the recipe file holds those).
`overridden_recipe_fields(recipes, fields, {field: PARAMETER})` lists where a notebook's own parameters
(or its RECIPE_SET) give a recipe field another value than the recipe file (loaded with
recode_lib.training.grpo.load_recipe), and `override_lines` says so in one line each: notebook
11 prints them and records them in its headline and provenance.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Mapping

from recode_lib.errors import RecodeError
from recode_lib.training.grpo import config_fields, load_recipe

SEPARATORS = re.compile(r"[\s,]+")
TOOL_FIELDS = ("max_tool_calls", "max_tool_calling_iterations", "tool_time_limit_s",
               "tool_memory_mb", "tool_max_output_chars")
# YAML 1.1 (PyYAML) reads 2e-5 (no dot) as a string: such numbers are read as floats here
NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


class RecipeSetError(RecodeError, ValueError):
    """A RECIPE_SET the recipe cannot take: an item without `=`, a field no recipe has, a
    field given twice or also set by the notebook, a value that is not a scalar."""


def parse_value(raw: str, item: str, text: str):
    import yaml

    try:
        value = yaml.safe_load(raw) if raw else None
    except yaml.YAMLError as exc:
        raise RecipeSetError(f"RECIPE_SET {text!r}: {item!r} is not a YAML scalar ({exc})") from None
    if not raw or isinstance(value, (list, dict)):
        raise RecipeSetError(f"RECIPE_SET {text!r}: {item!r} needs a scalar value (a number, "
                             "true/false, null or a word); lists and mappings go in the recipe file")
    if isinstance(value, str) and NUMBER.fullmatch(value):
        value = float(value)
    return value


def recipe_set(text: str | None, **fields) -> dict[str, Any]:
    """The recipe fields of `text` (a RECIPE_SET: "field=value ..." separated by whitespace or
    commas, values YAML scalars) with `fields` (those the notebook sets from its own
    parameters, e.g. model=MODEL, seed=SEED) added. RecipeSetError naming the item and the
    text when an item has no `=`, names a field no recipe has (with the nearest field names),
    gives a field twice, sets one of `fields`, or has no scalar value. "" or None: only
    `fields`."""
    text = "" if text is None else str(text)
    items = [x for x in SEPARATORS.split(text.strip()) if x]
    out: dict[str, Any] = {}
    known = config_fields() if items else {}
    for item in items:
        name, eq, raw = item.partition("=")
        if not eq or not name:
            raise RecipeSetError(f"RECIPE_SET {text!r}: {item!r} is not field=value (items are "
                                 "separated by spaces or commas, e.g. 'max_steps=2 "
                                 "learning_rate=2e-5')")
        if name not in known:
            near = difflib.get_close_matches(name, known, n=3)
            raise RecipeSetError(f"RECIPE_SET {text!r}: unknown recipe field {name!r}"
                                 + (f"; nearest: {', '.join(near)}" if near else "")
                                 + " (fields of trl.GRPOConfig and "
                                   "recode_lib.training.config.RecodeGRPOConfig)")
        if name in out:
            raise RecipeSetError(f"RECIPE_SET {text!r}: field {name!r} is given twice")
        if name in fields:
            raise RecipeSetError(f"RECIPE_SET {text!r}: field {name!r} is set by the notebook's "
                                 f"own parameter ({name}={fields[name]!r}); set that parameter")
        out[name] = parse_value(raw, item, text)
    return {**out, **fields}


def format_value(name: str, value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    s = str(value)
    if not s or SEPARATORS.search(s) or "=" in s:
        raise RecipeSetError(f"recipe field {name}={value!r}: a RECIPE_SET value holds no "
                             "spaces, commas or '='")
    return s


def recipe_set_text(fields: Mapping[str, Any]) -> str:
    """The RECIPE_SET that recipe_set reads back to `fields` (scalars only)."""
    return " ".join(f"{k}={format_value(k, v)}" for k, v in fields.items())


def merge_recipe_set(*texts: str | None) -> str:
    """One RECIPE_SET of several, a later text's fields winning (e.g. the paper profile's with
    the dry run's shrunk steps)."""
    merged: dict[str, Any] = {}
    for t in texts:
        merged.update(recipe_set(t))
    return recipe_set_text(merged)


def overridden_recipe_fields(recipes, fields: Mapping[str, Any], parameters: Mapping[str, str]
                     ) -> list[dict]:
    """Where a notebook's own parameters set a recipe field to another value than the recipe
    says: one row {"recipe", "field", "parameter", "recipe_value", "value"} per recipe in
    `recipes` (names or paths) and field of `parameters` ({recipe field: the notebook
    parameter that sets it}, e.g. {"max_tool_calls": "MAX_TOOL_CALLS"}) whose value in `fields`
    (what the notebook passes, recipe_set's result) differs from the recipe's (its file's, else
    the field's default; a field the recipe leaves unset, None, is set, not overridden; a
    tool field, TOOL_FIELDS, of a single-setting recipe is unused, not overridden). A
    notebook prints them (override_lines) and records them in its provenance, so a parameter
    never changes a recipe silently."""
    rows = []
    for name in dict.fromkeys(recipes):
        recipe = load_recipe(name)
        for field, parameter in parameters.items():
            if field not in fields or not hasattr(recipe, field):
                continue
            was, now = getattr(recipe, field), fields[field]
            if getattr(recipe, "setting", "single") == "single" and field in TOOL_FIELDS:
                continue            # the single setting calls no tool: nothing it uses changes
            if was is not None and was != now:
                rows.append({"recipe": str(name), "field": field, "parameter": parameter,
                             "recipe_value": was, "value": now})
    return rows


def override_lines(rows) -> list[str]:
    """One line per overridden_recipe_fields row: "notebook parameter MAX_TOOL_CALLS=4 overrides recipe
    agentic_paper's max_tool_calls=8" (a RECIPE_SET item: "RECIPE_SET's field=V ...")."""
    return [(f"RECIPE_SET's {r['field']}={r['value']!r}" if r["parameter"] == "RECIPE_SET"
             else f"notebook parameter {r['parameter']}={r['value']!r}")
            + f" overrides recipe {r['recipe']}'s {r['field']}={r['recipe_value']!r}"
            for r in rows]
