"""The worker -> judge message protocol, parsed as untrusted data: bounded, then validated.

    msg = parse_line(line, job=7, n_tests=12, max_bytes=limit)   # -> Message, or ProtocolError
    msg.tag, msg.body                                           # "S"|"X"|"T"|"D", dict|None

Lines (written by zygote.py; the body of S/X/T comes from the sandboxed child and so from the
submission): `S <job>`, `X <job> {"st", "e"}`, `T <job> {"i", "st", "out"?, "t"?, "m"?, "e"?}`,
`D <job> {"peak_mb", "nonce"}`. The job id is added by the worker, not by the child, so a line
from an earlier job can never be taken for the current one.

Everything is checked before use, in this order: the line ends with a newline and fits
`max_bytes`; tag and job id; the JSON body's nesting depth (MAX_DEPTH) and container count
(MAX_CONTAINERS) and element count (MAX_ELEMENTS), measured on its bracket skeleton before
`json.loads` for bodies over SMALL bytes (smaller ones cannot hold enough containers or elements
to matter; their depth is measured whenever they hold more than MAX_DEPTH openers, as json's own
guard is the C recursion limit, which moves between versions: Python 3.13 parses 5,000 levels,
3.11 and 3.12 refuse them), so a forged line cannot blow up the judge's memory or stack; strict
JSON (no NaN/Infinity, ints within Python's digit limit); then the schema of the tag: types, ranges
(finite non-negative times and memory, a test index that exists, a known status; an X line's status
is a load failure, LOAD_FAILURES, never "ok": X fails every remaining test, and a submission can
write one while its module loads). Any violation raises ProtocolError (a ValueError) with a short
reason; nothing here raises anything else on any input. The usual line, a call test passing in
the harness's own layout, is read by a shortcut (parse_ok_line: fixed head and tail, the output
decoded on its own) that returns exactly what the full path would, or declines. `out` is
returned as JSON data; decoding and comparing it is verdict.py's job. This module knows nothing
about processes.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from itertools import accumulate

from recode_lib.core.errors import RecodeError

# the raw statuses the harness reports, and what each means in result.STATUSES
RAW = {
    "ok": "passed",
    "error": "runtime_error",
    "crash": "runtime_error",
    "output": "runtime_error",
    "memory": "memory_limit",
    "timeout": "time_limit",
    "syntax": "syntax_error",
    "wrong": "wrong_answer",
}
# an X line says the submission did not load: only these (harness.run's syntax/error/memory, the
# worker's crash/timeout/output). Never "ok": the child writes X before it reports S, while
# the submission's own module code runs and can reach the pipe, and X sets every test
LOAD_FAILURES = ("syntax", "error", "memory", "crash", "timeout", "output")
MAX_DEPTH = 256
MAX_CONTAINERS = 1_000_000
MAX_ELEMENTS = 1_000_000  # commas; a larger output is a runtime_error (judge memory bound)
MAX_TEXT = 4096  # error texts are cut to this
# a JSON text within the bounds holds at most this many strings: one per `,` `:` `]` `}`
# following one, plus one, where colons <= commas + containers and closers <= containers
MAX_STRINGS = 2 * (MAX_ELEMENTS + MAX_CONTAINERS) + 1
_KEEP = b"[]{},"
_DROP = bytes(b for b in range(256) if b not in _KEEP)


_FIRST_I = re.compile(rb'\{"i": (\d{1,9})[,}]')


class ProtocolError(RecodeError, ValueError):
    """A worker line that is not a well-formed, in-range message of the current job."""


@dataclass
class Message:
    tag: str
    body: dict | None


def _reject(constant):
    raise ValueError(f"non-standard JSON constant {constant}")


_SIGNS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 / -1 as signed bytes


def _depth(brackets: bytes) -> int:
    """The deepest nesting of a text of brackets only ([]{}): the running sum of +1 per opener
    and -1 per closer, summed in C (a signed-byte view), not a Python loop per bracket."""
    return max(accumulate(memoryview(brackets.translate(_SIGNS)).cast("b")), default=0)


def too_deep(text: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON text of at most SMALL bytes nests deeper than `limit` (its strings'
    brackets not counted). Only a text with more than `limit` openers can (counting its
    strings' openers too over-counts): the usual line is decided by two counts. Else its
    strings are cut out (one pass in C) and the depth of the rest summed in C. (Summing every
    bracket, strings' included, is no bound: a string's `]` counts -1 and hides real depth.)"""
    if text.count(b"[") + text.count(b"{") <= limit:
        return False
    return _depth(_outside_strings(text).translate(None, b",")) > limit


_RUN_END = re.compile(rb"[^\\]")  # the first byte that is not a backslash
CHUNK = 1 << 20  # _outside_strings works on slices of this size (its memory per slice)


def _outside_strings(body: bytes) -> bytes:
    """The structural characters ([]{},) of a JSON text outside its strings, in C over 1 MB
    slices: in each, the escapes that hide a quote (`\\\\` pairs, then `\\"`) are cut, so every
    quote left opens or closes a string and the pieces between quotes alternate outside and
    inside (the parity carried from slice to slice; a slice never ends inside a backslash
    run). A JSON text holds at most one string per `,` `:` `]` `}` that follows one, plus one
    (counted with the strings' own characters: an over-count), and one within the bounds at
    most MAX_STRINGS: a text with more quotes than twice that is refused (ProtocolError) as soon
    as a slice shows it. Memory: the result and one slice's pieces; time: a few C passes
    (a forged 8 MB of `"",` was one Python loop turn per string, ~1.4 s; now ~0.1 s)."""
    if b'"' not in body:
        return body.translate(None, _DROP)
    most = body.count(b",") + body.count(b":") + body.count(b"]") + body.count(b"}") + 1
    quotes_left = 2 * min(most, MAX_STRINGS)
    out, inside, at, n = bytearray(), 0, 0, len(body)
    while at < n:
        end = min(at + CHUNK, n)
        if body[end - 1] == 0x5C:  # end the slice past this backslash run and what it escapes
            m = _RUN_END.search(body, end)
            end = m.end() if m else n
        part = body[at:end]
        if b"\\" in part:
            part = part.replace(b"\\\\", b"").replace(b'\\"', b"")
        quotes_left -= part.count(b'"')
        if quotes_left < 0:
            if most > MAX_STRINGS:
                raise ProtocolError("too many strings")
            raise ProtocolError("bad JSON: more strings than separators")
        pieces = part.split(b'"')
        out += b"".join(pieces[inside::2]).translate(None, _DROP)
        inside ^= (len(pieces) - 1) & 1
        at = end
    return bytes(out)


def check_shape(body: bytes) -> None:
    """Bound nesting depth, container and element counts of a JSON text before parsing it.
    Counting every comma, every bracket and every opener (strings' included) over-counts, so a
    text within the bounds that way is accepted at once; otherwise its strings are cut out
    and it is recounted. (The depth's early bound is the openers' count: a depth summed over
    every bracket is none, a string's `]` counts -1.)"""
    naive = body.translate(None, _DROP)
    if (
        naive.count(b",") > MAX_ELEMENTS
        or len(naive) - naive.count(b",") > 2 * MAX_CONTAINERS
        or naive.count(b"[") + naive.count(b"{") > MAX_DEPTH
    ):
        skeleton = _outside_strings(body)
        if skeleton.count(b",") > MAX_ELEMENTS:
            raise ProtocolError("too many elements")
        brackets = skeleton.translate(None, b",")
        if len(brackets) > 2 * MAX_CONTAINERS:
            raise ProtocolError("too many containers")
        if _depth(brackets) > MAX_DEPTH:
            raise ProtocolError(f"nested deeper than {MAX_DEPTH}")


SMALL = 64 << 10  # below this, the size bound and too_deep suffice (no container or element count)


# one decoder for every line: json.loads(body, parse_constant=...) builds a new one per call
_DECODER = json.JSONDecoder(parse_constant=_reject)
_RAW_DECODE = _DECODER.raw_decode


def load_json(body: bytes):
    """Strict, bounded JSON: ProtocolError on anything else."""
    if len(body) > SMALL:
        check_shape(body)
    elif too_deep(body):
        raise ProtocolError(f"nested deeper than {MAX_DEPTH}")
    try:
        return _DECODER.decode(body.decode("utf-8"))
    except (ValueError, RecursionError, MemoryError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"bad JSON: {str(exc)[:200]}") from None


def _number(body: dict, key: str, what: str):
    v = body.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ProtocolError(f"{what}.{key} is not a number")
    try:
        v = float(v)
    except OverflowError:
        raise ProtocolError(f"{what}.{key} out of range") from None
    if not math.isfinite(v) or not 0 <= v < 1e9:
        raise ProtocolError(f"{what}.{key} out of range")
    return v


def _text(body: dict, key: str):
    v = body.get(key)
    if v is None:
        return None
    if not isinstance(v, str):
        raise ProtocolError(f"{key} is not a string")
    return v[:MAX_TEXT]


def _status(body: dict, what: str, allowed) -> str:
    st = body.get("st")
    if not isinstance(st, str) or st not in allowed:
        raise ProtocolError(f"{what}: unknown status")
    return st


def validate(tag: str, body, n_tests: int) -> dict | None:
    """The schema of each tag; returns a clean dict with only the known keys."""
    if tag == "S":
        if body is not None:
            raise ProtocolError("S carries no body")
        return None
    if not isinstance(body, dict):
        raise ProtocolError(f"{tag}: body is not an object")
    if tag == "X":
        return {"st": _status(body, "X", LOAD_FAILURES), "e": _text(body, "e")}
    if tag == "D":
        nonce = body.get("nonce")
        if nonce is not None and not isinstance(nonce, str):
            raise ProtocolError("D.nonce is not a string")
        return {"peak_mb": _number(body, "peak_mb", "D") or 0.0, "nonce": nonce}
    i = body.get("i")
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n_tests:
        raise ProtocolError("T.i is not a test index")
    # the usual line (a float time and memory, no error text) checked inline: the same
    # checks as _number/_text, ~1 us less per test
    t, m, e = body.get("t"), body.get("m"), body.get("e")
    clean = {
        "i": i,
        "st": _status(body, "T", RAW),
        "t": t if type(t) is float and 0.0 <= t < 1e9 else _number(body, "t", "T"),
        "m": m if type(m) is float and 0.0 <= m < 1e9 else _number(body, "m", "T"),
        "e": None if e is None else _text(body, "e"),
    }
    if "out" in body:
        clean["out"] = body["out"]
    return clean


# A passing call test's line exactly as the harness writes it (harness._run_calls):
#   T <job> {"i": I, "st": "ok", "out": X, "t": F, "m": F}
# JSON numbers only (no leading zero; F non-negative, below 1e9 by its digit count)
_OK_HEAD = re.compile(rb'T (\d{1,18}) \{"i": (0|[1-9]\d{0,8}), "st": "ok", "out": ')
_F = rb"((?:0|[1-9]\d{0,8})(?:\.\d{1,30})?(?:[eE]-\d{1,3})?)"
_OK_TAIL = re.compile(rb', "t": ' + _F + rb', "m": ' + _F + rb"\}\n")
_OK_T = b', "t": '


def parse_ok_line(line, job: int, n_tests: int, max_bytes: int) -> Message | None:
    """The Message parse_line returns for a line in the harness's own layout of a passing
    call test, without building the whole object; None for any other line (parse_line then
    takes the full path). The output X between the fixed head and tail must decode on its own
    as one strict JSON value: then the line is the object {"i", "st", "out": X, "t", "m"} and
    nothing else (a JSON value ends where its own text ends), so both paths agree; lines over
    SMALL bytes always take the full path (its shape bounds)."""
    if type(line) is not bytes or len(line) > SMALL or len(line) > max_bytes:
        return None
    head = _OK_HEAD.match(line)
    if head is None or head.group(1) != b"%d" % job:
        return None
    i = int(head.group(2))
    if i >= n_tests:
        return None
    at = line.rfind(_OK_T)
    tail = _OK_TAIL.fullmatch(line, at) if at > head.end() else None
    if tail is None:
        return None
    try:
        if line.count(b"[") + line.count(b"{") > MAX_DEPTH and too_deep(
            line[head.end() : at], MAX_DEPTH - 1
        ):
            return None  # with the body's own object over MAX_DEPTH: the full path refuses it
        text = line[head.end() : at].decode("utf-8")
        out, end = _RAW_DECODE(text)  # no whitespace around X in this layout
    except (ValueError, RecursionError, MemoryError, UnicodeDecodeError):
        return None
    if end != len(text):
        return None
    t, m = float(tail.group(1)), float(tail.group(2))
    if t >= 1e9 or m >= 1e9:  # under 1e9 by digit count, rounded up to it: _number refuses it
        return None
    return Message("T", {"i": i, "st": "ok", "t": t, "m": m, "e": None, "out": out})


def parse_line(line: bytes, job: int, n_tests: int, max_bytes: int) -> Message:
    """One worker line -> Message for job `job`; ProtocolError for anything else."""
    msg = parse_ok_line(line, job, n_tests, max_bytes)
    if msg is not None:
        return msg
    return parse_line_full(line, job, n_tests, max_bytes)


def parse_line_full(line: bytes, job: int, n_tests: int, max_bytes: int) -> Message:
    """parse_line without its shortcut for the usual passing line (parse_ok_line)."""
    if not isinstance(line, (bytes, bytearray)) or not line.endswith(b"\n"):
        raise ProtocolError("incomplete line (the worker ended or the line is too long)")
    if len(line) > max_bytes:
        raise ProtocolError("line too long")
    parts = bytes(line[:-1]).split(b" ", 2)
    tag = parts[0]
    if tag not in (b"S", b"X", b"T", b"D") or len(parts) < 2:
        raise ProtocolError("unknown message")
    if not parts[1].isdigit() or len(parts[1]) > 18 or int(parts[1]) != job:
        raise ProtocolError("message of another job")
    body = load_json(parts[2]) if len(parts) == 3 else None
    msg = Message(tag.decode(), validate(tag.decode(), body, n_tests))
    if tag == b"T":
        # the worker routes a T line by its first "i" key (zygote._T); JSON keeps the last one:
        # a line whose two disagree (a duplicated key) is not a message of one test
        m = _FIRST_I.match(parts[2])
        if m is None or int(m.group(1)) != msg.body["i"]:
            raise ProtocolError("T: the test index is not the line's first key")
    return msg
