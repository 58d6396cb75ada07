"""A profile (notebooks/params/<name>.yaml) and `-p NAME=VALUE` overrides, checked against the
steps' typed parameters before any notebook runs.

    schemas = step_schemas(notebooks)           # {stem: its StepParams class}
    check_profile(spec, schemas, overrides)     # None, or ParameterError (one line)

Refused, each naming the file (or `-p`), the section, the field and the value: a section that
is no step (nearest stems), a name no step declares (under `common:`, in a section or with
`-p`: the nearest known names), and a value whose type its field does not take (for `common:`
and `-p`, every step declaring the name is checked). The real steps' classes come from
recode_lib.steps.catalog; a notebook the catalog does not know (a test's) gets a class built
from its parameters cell (its defaults' types); a field's own check runs too (RECIPE_FIELDS:
each recipe field's name and kind). `read_override(name, text)` reads a `-p` value for its
field's type (`-p SEEDS=1` is the text "1"). A retired name (RECIPE_SET) is refused saying
what replaced it. It does not merge values (the pipeline runner does) nor check values beyond
their types (the notebooks and the library do).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from recode_lib.steps.base import ParameterError, StepParams, kinds_of, param
from recode_lib.steps.catalog import STEPS
from recode_lib.steps.cells import declared

COMMON = "common"
# parameters that are gone -> what replaces them (said instead of the nearest names)
RETIRED = {
    "RECIPE_SET": "RECIPE_SET is retired: recipe fields are a mapping, "
    "`RECIPE_FIELDS: {max_steps: 1}` in a profile section, "
    "`-p RECIPE_FIELDS.max_steps=1` on the command line"
}
SECTION_KEYS = ("skip",)  # lower-case section keys that are no parameter (the runner's)


def cell_schema(notebook: Path) -> type[StepParams]:
    """A StepParams class read from a notebook's parameters cell (its defaults' types)."""
    fields = [
        (name, type(value) if value is not None else object, param(value, ""))
        for name, value in declared(notebook).items()
    ]
    cls = dataclasses.make_dataclass(notebook.stem, fields, bases=(StepParams,), frozen=True)
    cls.STEP = notebook.stem
    return cls


def step_schemas(notebooks: Iterable[Path]) -> dict[str, type[StepParams]]:
    """{stem: its parameters class}: the catalog's, or cell_schema for a notebook it lacks."""
    return {nb.stem: STEPS.get(nb.stem) or cell_schema(nb) for nb in notebooks}


def nearest(name: str, known: Iterable[str]) -> str:
    if name in RETIRED:
        return f"; {RETIRED[name]}"
    near = difflib.get_close_matches(name, sorted(set(known)), n=3, cutoff=0.6)
    return f"; nearest: {', '.join(near)}" if near else ""


def check_value(where: str, name: str, value, schemas: dict[str, type[StepParams]]) -> None:
    """`value` for `name` in every step declaring it; ParameterError naming the first misfit."""
    for cls in schemas.values():
        if name in cls.fields() and cls.fields()[name].type is not object:
            why = cls.check(name, value)
            if why:
                raise ParameterError(f"{where}: {cls.STEP}: {why}")


def read_override(name: str, text: str, schemas: dict[str, type[StepParams]] | None = None):
    """The value of `-p NAME=TEXT` for the type of NAME in `schemas` (default: the catalog):
    the text itself where every step declares NAME a str (`-p SEEDS=1` is "1", as a profile's
    quoted `SEEDS: "1"`; a quoted text is read as YAML), a float where one is declared (also
    YAML 1.1's `2e-5`, which it reads as a string), else the text read as YAML."""
    kinds = {
        k
        for cls in (schemas or STEPS).values()
        if name in cls.fields()
        for k in kinds_of(cls.fields()[name].type)
    }
    quoted = len(text) >= 2 and text[0] == text[-1] and text[0] in "'\""
    if kinds == {str} and not quoted:
        return text
    value = yaml.safe_load(text)
    if isinstance(value, str) and float in kinds and str not in kinds:
        try:
            return float(value)
        except ValueError:
            pass
    return value


def check_profile(
    spec: dict[str, Any],
    schemas: dict[str, type[StepParams]],
    overrides: dict[str, Any] | None = None,
) -> None:
    """ParameterError (one line) for the first unknown section, unknown name or misfit value of
    the profile `spec` (as recode_lib.runner.pipeline.load_profile reads it) and `overrides`."""
    path = spec.get("_path", "profile")
    every = {n for cls in schemas.values() for n in cls.fields()}
    for section, values in spec.items():
        if section.startswith("_"):
            continue
        if section == COMMON:
            for name, value in values.items():
                if name not in every:
                    raise ParameterError(
                        f"{path}: common: {name} is a parameter of no step" + nearest(name, every)
                    )
                check_value(f"{path}: common", name, value, schemas)
            continue
        if section not in schemas:
            raise ParameterError(
                f"{path}: section {section!r} is no step"
                + nearest(section, list(schemas) + [COMMON])
            )
        cls = schemas[section]
        for name, value in values.items():
            if name in SECTION_KEYS:
                continue
            if name not in cls.fields():
                raise ParameterError(
                    f"{path}: {section}: {name} is not a parameter of this step"
                    + nearest(name, cls.fields())
                )
            check_value(path, name, value, {section: cls})
    for name, value in (overrides or {}).items():
        if name not in every:
            raise ParameterError(
                f"-p {name}={value!r}: no step has a parameter {name}" + nearest(name, every)
            )
        check_value(f"-p {name}={value!r}", name, value, schemas)
