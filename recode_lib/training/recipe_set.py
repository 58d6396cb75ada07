"""RECIPE_SET: the recipe fields a profile (or a command line) sets, by the recipe's own names.

    from recode_lib.training.recipe_set import recipe_set, recipe_set_text
    recipe_set("max_steps=2 num_generations=4 learning_rate=2e-5")
    # {"max_steps": 2, "num_generations": 4, "learning_rate": 2e-05}
    fields = recipe_set(RECIPE_SET, model=MODEL, seed=SEED)   # + the notebook's own fields
    load_recipe(RECIPE, **fields)
    recipe_set_text({"max_steps": 1, "cpu_threads": None})    # "max_steps=1 cpu_threads=null"

A GRPO notebook (04, 06, 09, 10, 11) declares one parameter, RECIPE_SET, a string of
`field=value` items separated by whitespace or commas; each field is a field of the recipe
(recode_lib.training.recipe_fields: trl.GRPOConfig's and the project's), each value a YAML
scalar of the field's type (2, 2e-5, true, null, a word). The empty string sets nothing: the recipe file decides.
So a value is stated in one place — the recipe file, or the profile's RECIPE_SET — and no
table translates notebook parameters into recipe fields. The fields a notebook also uses for
something else (its MODEL, BENCHMARK, WORKERS, SEED, REASONING) it passes by name, and
RECIPE_SET may not set them too (the notebook's parameter is the one place).
It does not load the recipe (recode_lib.training.grpo.load_recipe does) and takes no lists or
mappings (rewards, lora: the recipe file holds those).
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Mapping

from recode_lib.errors import RecodeError
from recode_lib.training.recipe_fields import KINDS, check_field

SEPARATORS = re.compile(r"[\s,]+")
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
    known = KINDS
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
        why = check_field(name, out[name])
        if why:
            raise RecipeSetError(f"RECIPE_SET {text!r}: {why}")
    return {**out, **fields}


def check_recipe_set(text) -> str | None:
    """None when `text` is a RECIPE_SET recipe_set reads, else why not (one line)."""
    try:
        recipe_set(text)
    except RecipeSetError as exc:
        return str(exc)
    return None


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
