"""Python values that JSON cannot hold exactly (tuples, sets, complex, inf/nan) and back.

    encode(value) -> JSON-able with tags: {"__tuple__": [...]}, {"__set__": [...]},
                     {"__complex__": [re, im]}, {"__float__": "inf"|"-inf"|"nan"},
                     {"__dict__": [[k, v]...]}
    decode(obj)   -> the Python value again
    json_exact(v) -> True when json.loads(json.dumps(v)) == v with the same types
    literal(v)    -> Python source that evaluates to v (with `inf`/`nan` names defined)

Used to cache reference outputs and to write EvalPlus-style script tests. It does not handle
arbitrary objects: encode raises TypeError naming the type.
"""

from __future__ import annotations

import math
from typing import Any


def encode(v: Any) -> Any:
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"__float__": repr(v)}
    if isinstance(v, complex):
        return {"__complex__": [encode(v.real), encode(v.imag)]}
    if isinstance(v, list):
        return [encode(x) for x in v]
    if isinstance(v, tuple):
        return {"__tuple__": [encode(x) for x in v]}
    if isinstance(v, (set, frozenset)):
        return {"__set__": [encode(x) for x in v]}
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v) and not any(k.startswith("__") for k in v):
            return {k: encode(x) for k, x in v.items()}
        return {"__dict__": [[encode(k), encode(x)] for k, x in v.items()]}
    raise TypeError(f"cannot encode a value of type {type(v).__name__}")


def decode(o: Any) -> Any:
    if isinstance(o, list):
        return [decode(x) for x in o]
    if isinstance(o, dict):
        if len(o) == 1:
            ((tag, val),) = o.items()
            if tag == "__tuple__":
                return tuple(decode(x) for x in val)
            if tag == "__set__":
                return set(decode(x) for x in val)
            if tag == "__complex__":
                return complex(decode(val[0]), decode(val[1]))
            if tag == "__float__":
                return float(val)
            if tag == "__dict__":
                return {decode(k): decode(x) for k, x in val}
        return {k: decode(x) for k, x in o.items()}
    return o


def json_exact(v: Any) -> bool:
    """Does v survive a JSON round trip with identical types (no tuples, sets, inf, ...)?"""
    if v is None or isinstance(v, (bool, str, int)):
        return True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, list):
        return all(json_exact(x) for x in v)
    if isinstance(v, dict):
        return all(isinstance(k, str) and json_exact(x) for k, x in v.items())
    return False


def literal(v: Any) -> str:
    """Python source for v; non-finite floats print as inf / nan (define them first)."""
    return repr(v)
