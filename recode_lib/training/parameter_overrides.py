"""Where a GRPO notebook's own parameters (or its RECIPE_FIELDS) give a recipe field another
value than the recipe file: the rows a notebook prints and records in its provenance, so a
parameter never changes a recipe silently (notebook 11: MAX_TOOL_CALLS / MAX_TURNS /
TOOL_TIME_LIMIT_S against the tool and agentic recipes' own values).

    rows = overridden_recipe_fields(["agentic_paper"], fields, {"max_tool_calls": "MAX_TOOL_CALLS"})
    for line in override_lines(rows): print(line)

It reads recipes (recode_lib.training.grpo.load_recipe); it changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recode_lib.training.grpo import load_recipe

TOOL_FIELDS = (
    "max_tool_calls",
    "max_tool_calling_iterations",
    "tool_time_limit_s",
    "tool_memory_mb",
    "tool_max_output_chars",
)
FIELDS_PARAMETER = "RECIPE_FIELDS"


def overridden_recipe_fields(
    recipes, fields: Mapping[str, Any], parameters: Mapping[str, str]
) -> list[dict]:
    """One row {"recipe", "field", "parameter", "recipe_value", "value"} per recipe in `recipes`
    (names or paths) and field of `parameters` ({recipe field: the notebook parameter that sets
    it}, e.g. {"max_tool_calls": "MAX_TOOL_CALLS"}; RECIPE_FIELDS for its own items) whose value
    in `fields` (what the notebook passes) differs from the recipe's (its file's, else the
    field's default). A field the recipe leaves unset (None) is set, not overridden; a tool
    field (TOOL_FIELDS) of a single-setting recipe is unused, not overridden."""
    rows = []
    for name in dict.fromkeys(recipes):
        recipe = load_recipe(name)
        for field, parameter in parameters.items():
            if field not in fields or not hasattr(recipe, field):
                continue
            was, now = getattr(recipe, field), fields[field]
            if getattr(recipe, "setting", "single") == "single" and field in TOOL_FIELDS:
                continue  # the single setting calls no tool: nothing it uses changes
            if was is not None and was != now:
                rows.append(
                    {
                        "recipe": str(name),
                        "field": field,
                        "parameter": parameter,
                        "recipe_value": was,
                        "value": now,
                    }
                )
    return rows


def override_lines(rows) -> list[str]:
    """One line per overridden_recipe_fields row: "notebook parameter MAX_TOOL_CALLS=4 overrides
    recipe agentic_paper's max_tool_calls=8" (a RECIPE_FIELDS item: "RECIPE_FIELDS'
    max_completion_length=8192 overrides ...")."""
    return [
        (
            f"{FIELDS_PARAMETER}' {r['field']}={r['value']!r}"
            if r["parameter"] == FIELDS_PARAMETER
            else f"notebook parameter {r['parameter']}={r['value']!r}"
        )
        + f" overrides recipe {r['recipe']}'s {r['field']}={r['recipe_value']!r}"
        for r in rows
    ]


__all__ = ["FIELDS_PARAMETER", "TOOL_FIELDS", "override_lines", "overridden_recipe_fields"]
