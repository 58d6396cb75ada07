"""Typed step parameters: the base class every pipeline step's parameters derive from.

    @dataclass(frozen=True)
    class CgGrpoParams(StepParams):
        N_TRAIN: int = param(8, "training problems: the first N_TRAIN of BENCHMARK")
    CgGrpoParams.defaults()["N_TRAIN"]          # 8
    CgGrpoParams(N_TRAIN="abc")                 # ParameterError naming step, field and value
    CgGrpoParams.check("N_TRAIN", 3)            # None, or the one-line reason it is refused

A field is an UPPER_CASE notebook parameter: a scalar (str, int, float, bool; an int is taken
where a float is declared, never a bool for a number) or a mapping (RECIPE_FIELDS) with a default
(the notebook's parameters cell) and a docstring (`param(default, doc)`, kept in the field's
metadata as "help", as TRL's configs do). It does not know the profiles (recode_lib.steps.profile)
nor the notebooks' cells (recode_lib.steps.cells).
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

from recode_lib.core.errors import RecodeError

SCALARS = (bool, int, float, str)


class ParameterError(RecodeError, ValueError):
    """A parameter no step declares, or a value of the wrong type: the message names the step,
    the field and the value (and the nearest known names of an unknown one)."""


def param(default, doc: str, check=None):
    """A step parameter: its default, its docstring and optionally `check(value)`, which
    returns None or why the value is refused (beyond its type: e.g. RECIPE_FIELDS' fields)."""
    meta = {"help": doc, "check": check}
    if isinstance(default, dict):  # a mapping (RECIPE_FIELDS): a fresh copy each time
        return field(default_factory=lambda: dict(default), metadata=meta)
    return field(default=default, metadata=meta)


def kinds_of(annotation) -> tuple[type, ...]:
    """The scalar types of a field's annotation: `int` -> (int,), `bool | str` -> (bool, str)."""
    if isinstance(annotation, str):  # a module with postponed annotations
        return tuple(
            {"bool": bool, "int": int, "float": float, "str": str}[part.strip()]
            for part in annotation.split("|")
        )
    return typing.get_args(annotation) or (annotation,)


def type_ok(kind: type, value) -> bool:
    """Whether `value` is a `kind` (int accepted for float; bool never for a number)."""
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


@dataclass(frozen=True)
class StepParams:
    """The parameters of one pipeline step (a subclass per notebook; STEP names it)."""

    STEP: ClassVar[str] = ""

    @classmethod
    def fields(cls) -> dict[str, dataclasses.Field]:
        return {f.name: f for f in dataclasses.fields(cls)}

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {
            name: f.default if f.default is not dataclasses.MISSING else f.default_factory()
            for name, f in cls.fields().items()
        }

    @classmethod
    def doc(cls, name: str) -> str:
        return cls.fields()[name].metadata.get("help", "")

    @classmethod
    def check(cls, name: str, value) -> str | None:
        """None when `value` fits field `name`, else why not (one line, naming the field)."""
        kinds = kinds_of(cls.fields()[name].type)
        if any(type_ok(kind, value) for kind in kinds):
            more = cls.fields()[name].metadata.get("check")
            return more(value) if more else None
        hint = (
            f' (quote it in YAML: "{value}")'
            if kinds == (str,) and isinstance(value, (int, float))
            else ""
        )
        return (
            f"{name} must be {' or '.join(k.__name__ for k in kinds)}, got {value!r} "
            f"({type(value).__name__}){hint}"
        )

    def __post_init__(self):
        for name in self.fields():
            why = self.check(name, getattr(self, name))
            if why:
                raise ParameterError(f"{self.STEP}: {why}")

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
