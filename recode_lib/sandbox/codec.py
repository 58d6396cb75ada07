"""Tagged JSON for values that cross the sandbox boundary (arguments in, return values out).

    encode(value) -> JSON-able object      decode(obj) -> Python value
    digest(value) -> sha256 hex of its canonical encoding (equal digests: identical encodings)
    hash_safe(items) -> the items to build a set or dict from (ValueError: a hash flood)

It does not compare values (see verdict.py) and does not preserve object identity or cycles (a
cycle or nesting deeper than 100 levels becomes opaque).
More: docs/modules/sandbox.md (recode_lib.sandbox.codec).
"""

import builtins
import marshal
import math
from collections import Counter
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from itertools import repeat

TAG = "__t"
MAX_DEPTH = 100
MAX_BITS = 13000  # ints above this go as hex; a fraction's terms must stay below it
MAX_DECIMAL_CHARS = 5000  # the text of a Decimal (decimal.Decimal(text) on decode)


class Opaque:
    """A value the codec could not represent; equal to nothing."""

    __slots__ = ("type", "repr")

    def __init__(self, type_name, text):
        self.type, self.repr = type_name, text

    def __eq__(self, other):
        return False

    def __ne__(self, other):
        return True

    __hash__ = object.__hash__

    def __repr__(self):
        return "Opaque(%s: %s)" % (self.type, self.repr)


class Handle(Opaque):
    """An object living in the submission's process (separate script tests), by number."""

    __slots__ = ("n",)

    def __init__(self, n):
        Opaque.__init__(self, "handle", str(n))
        self.n = n


_TYPES = {
    name: t
    for name, t in vars(builtins).items()
    if isinstance(t, type) and not issubclass(t, BaseException)
}


def _opaque(x, why=""):
    try:
        text = object.__repr__(x) if why else repr(x)
    except BaseException:  # a hostile __repr__
        text = "?"
    return {TAG: "opaque", "type": why or type(x).__name__, "repr": str(text)[:200]}


def encode(x, _depth=0):
    if _depth > MAX_DEPTH:
        return _opaque(x, "too deep")
    t = type(x)
    if x is None or t is bool or t is str:
        return x
    if t is int:  # decimal str() of huge ints is capped (sys.int_max_str_digits): use hex
        return x if x.bit_length() < MAX_BITS else {TAG: "int", "v": hex(x)}
    if t is float:
        return x if math.isfinite(x) else {TAG: "float", "v": repr(x)}
    d = _depth + 1
    if t is list:
        return [encode(v, d) for v in x]
    if t is tuple:
        return {TAG: "tuple", "v": [encode(v, d) for v in x]}
    if t is dict:
        if all(type(k) is str for k in x) and not _looks_tagged(x):
            return {k: encode(v, d) for k, v in x.items()}
        return {TAG: "dict", "v": [[encode(k, d), encode(v, d)] for k, v in x.items()]}
    if t is set or t is frozenset:
        return {TAG: t.__name__, "v": [encode(v, d) for v in x]}
    if t is complex:
        return {TAG: "complex", "v": [encode(x.real, d), encode(x.imag, d)]}
    if t is bytes or t is bytearray:
        return {TAG: "bytes", "v": bytes(x).decode("latin-1")}
    if t is Fraction or t is Decimal:
        return _encode_number(x)
    if t is Handle:
        return {TAG: "handle", "v": x.n}
    if t is type and _TYPES.get(x.__name__) is x:
        return {TAG: "type", "v": x.__name__}
    return _encode_other(x, _depth)


def _looks_tagged(x):
    """Whether decode would read the plain str-keyed dict x as something else: it holds the
    tag key, or it is a one-key dict spelled like an alias ({"__tuple__": [...]}). Such a
    dict is escaped into the {"__t": "dict"} form, so that no value a submission can build
    decodes as another type (decode(encode(v)) == v, same types, for every plain value)."""
    if TAG in x:
        return True
    if len(x) == 1:
        for k in x:
            return k in _ALIASES
    return False


def _encode_number(x):
    """A Fraction or Decimal (or a subclass) by value, read through the base class's own
    methods (a subclass's overrides are not called); opaque beyond the size bounds."""
    if isinstance(x, Fraction):
        num, den = Fraction.numerator.fget(x), Fraction.denominator.fget(x)
        if (
            type(num) is int
            and type(den) is int
            and den > 0
            and num.bit_length() < MAX_BITS
            and den.bit_length() < MAX_BITS
        ):
            return {TAG: "fraction", "v": [num, den]}
        return _opaque(x, "Fraction")
    text = Decimal.__str__(x)
    if type(text) is str and len(text) <= MAX_DECIMAL_CHARS:
        return {TAG: "decimal", "v": text}
    return _opaque(x, "Decimal")


def _decode_number(tag, v):
    """The Fraction / Decimal of a tag from untrusted data: ValueError unless well-formed and
    within the size bounds (so decoding never costs more than the encoder would send)."""
    if tag == "fraction":
        if (
            type(v) is not list
            or len(v) != 2
            or any(type(n) is not int or n.bit_length() >= MAX_BITS for n in v)
            or v[1] <= 0
        ):
            raise ValueError("bad fraction")
        return Fraction(v[0], v[1])
    if type(v) is not str or len(v) > MAX_DECIMAL_CHARS:
        raise ValueError("bad decimal")
    try:
        return Decimal(v)
    except (InvalidOperation, ValueError):
        raise ValueError("bad decimal") from None


def _encode_other(x, depth):
    """Subclasses of builtins and numpy scalars, converted through the base type."""
    try:
        if isinstance(x, (Fraction, Decimal)):
            return _encode_number(x)
        if isinstance(x, bool):
            return bool(x)
        if isinstance(x, int):
            return encode(int.__index__(x), depth)
        if isinstance(x, float):
            return encode(float.__float__(x), depth)
        if isinstance(x, str):
            return str.__str__(x)
        if isinstance(x, tuple):
            return encode(tuple(tuple.__iter__(x)), depth)
        if isinstance(x, list):
            return encode(list(list.__iter__(x)), depth)
        if isinstance(x, dict):
            return encode(dict(dict.items(x)), depth)
        if isinstance(x, (set, frozenset)):
            return encode(set(x), depth)
        mod = getattr(type(x), "__module__", "") or ""
        if mod.startswith("numpy") and getattr(x, "shape", None) == () and hasattr(x, "item"):
            item = x.item()
            if type(item) in (bool, int, float, complex, str, bytes):
                return encode(item, depth)
    except RecursionError:
        return _opaque(x, "too deep")
    except Exception:
        pass
    return _opaque(x)


# bytes json.dumps(ensure_ascii=False) escapes in a string (controls, quote, backslash) -> 0
_ESCAPED = bytes(0 if c < 0x20 or c in b'"\\' else 1 for c in range(256))


def digest(x):
    """The sha256 of a value's canonical encoding (compact JSON of encode(x)). An ASCII string
    that needs no escape is hashed as '"' + x + '"' without building its JSON text (the same
    bytes; ~4x less work on HumanEval+/15's multi-megabyte outputs)."""
    import hashlib
    import json

    if type(x) is str and x.isascii():
        raw = x.encode("ascii")
        if b"\x00" not in raw.translate(_ESCAPED):
            h = hashlib.sha256(b'"')
            h.update(raw)
            h.update(b'"')
            return h.hexdigest()
    text = json.dumps(encode(x), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def contains_opaque(obj):
    """Whether an encoded value holds an opaque part anywhere."""
    t = type(obj)
    if t is list:
        return any(contains_opaque(v) for v in obj)
    if t is dict:
        if obj.get(TAG) in ("opaque", "handle"):
            return True
        return any(contains_opaque(v) for v in obj.values())
    return False


# recode_lib.data.pyvalues writes {"__tuple__": [...]} etc.; accept that spelling too
_ALIASES = {
    "__tuple__": "tuple",
    "__set__": "set",
    "__complex__": "complex",
    "__float__": "float",
    "__dict__": "dict",
}


MAX_SHARED_HASH = 16  # items sharing hash values below which no check is needed
FLOOD_BUDGET = 1 << 17  # sum of (items per hash value)^2 allowed beyond 2 per item


def _exact_keys(items) -> list:
    """A key per item, equal for items of one type and value, hashed by CPython's randomised
    bytes/str hash (so no chosen value collides): marshal's bytes (version 2: no references,
    the same bytes for the same value), else (Fraction, Decimal, Opaque, tuples of them) the
    type and repr."""
    try:
        return list(map(marshal.dumps, items, repeat(2)))
    except ValueError:
        return [_exact_key(x) for x in items]


def _exact_key(x):
    try:
        return marshal.dumps(x, 2)
    except ValueError:
        return (type(x).__name__, repr(x))


def hash_safe(items) -> list:
    """The items to build a set or dict from without a hash flood: the same set, each exact
    repeat (same type, same value) kept once; ValueError ("hash flood") when even those would
    cost the judge super-linear time.

    CPython's numeric hashes are not randomised (every k * (2**61 - 1) hashes to 0; tuples
    and frozensets of chosen values collide by design too), so building a set or dict of n
    such values costs O(n^2) comparisons: 20,000 of them cost the judge ~2.5 s of CPU, a
    million hours, in the trainer's process; repeats of a cheap value beside a few colliding
    values whose == runs in Python (Fraction vs float) cost ~2 us per repeat. Decoding an
    untrusted value and a checker's set() of an output go through here. Decided at C speed
    when at most MAX_SHARED_HASH items share a hash with another (any honest set: its items
    are distinct, and distinct plain values rarely share a hash). Otherwise exact repeats are
    dropped (keys hashed by a randomised hash, _exact_keys), and the rest are refused when
    the sum over hash values of (items sharing it)^2, the comparisons building them costs, is
    over 2 per item + FLOOD_BUDGET: honest collisions pass (32 tuples of -1 and -2, whose
    hashes are equal; the 2,098 powers of two as floats, 34 per hash value), a flood does not."""
    items = list(items)
    hashes = list(map(hash, items))
    if len(hashes) - len(set(hashes)) <= MAX_SHARED_HASH:  # hash values hash to themselves
        return items
    items = list(dict(zip(_exact_keys(items), items, strict=True)).values())
    per_hash = Counter(map(hash, items)).values()
    if sum(c * c for c in per_hash if c > 1) > 2 * len(items) + FLOOD_BUDGET:
        raise ValueError("hash flood: too many distinct items share hash values")
    return items


def decode(obj):
    t = type(obj)
    if t is list:
        return [decode(v) for v in obj]
    if t is not dict:
        return obj
    tag = obj.get(TAG)
    if tag is None:
        if len(obj) == 1:
            ((key, val),) = obj.items()
            if key in _ALIASES:
                return decode({TAG: _ALIASES[key], "v": val})
        return {k: decode(v) for k, v in obj.items()}
    v = obj.get("v")
    if tag == "tuple":
        return tuple(decode(e) for e in v)
    if tag == "set":
        return set(hash_safe(decode(e) for e in v))
    if tag == "frozenset":
        return frozenset(hash_safe(decode(e) for e in v))
    if tag == "dict":
        pairs = [(decode(k), decode(e)) for k, e in v]
        keys = [k for k, _ in pairs]
        if len(hash_safe(keys)) < len(keys):  # exact repeats of a key: its last pair, once
            pairs = list(dict(zip(_exact_keys(keys), pairs, strict=True)).values())
        return dict(pairs)
    if tag == "float":
        return float(v)
    if tag == "int":
        return int(v, 16)
    if tag == "complex":
        return complex(v[0], v[1])
    if tag == "bytes":
        return v.encode("latin-1")
    if tag == "type" and type(v) is str and v in _TYPES:
        return _TYPES[v]
    if tag == "fraction" or tag == "decimal":
        return _decode_number(tag, v)
    if tag == "handle" and type(v) is int and not isinstance(v, bool):
        return Handle(v)
    if tag == "opaque":
        return Opaque(obj.get("type", "?"), obj.get("repr", ""))
    raise ValueError("unknown codec tag %r" % (tag,))
