"""LiveCodeBench code_generation_lite: releases v1..v6, date windows, difficulty, all tests.

    load_livecodebench(data_dir=None, limit=None, release="release_v6", start_date=None,
                       end_date=None, difficulty=None, platform=None, tests="all")

Local layout (the upstream hub repo's files): <data dir>/code_generation_lite/test.jsonl,
test2.jsonl ... test6.jsonl (also accepted under <data dir>/livecodebench/); otherwise
datasets.load_dataset("livecodebench/code_generation_lite", <release>). Releases:
release_v1..release_v6 (cumulative: test.jsonl .. testN.jsonl), release_latest, v1..v6 (one
file each) and vA_vB (files A..B). Records keep the upstream fields; public_test_cases and
metadata are JSON strings, private_test_cases is JSON or base64 -> zlib -> pickle -> JSON (decoded
with an unpickler that only admits plain strings/bytes/lists/dicts, never arbitrary classes).
stdin problems -> `stdio` tests; functional (LeetCode) problems -> `call` tests on
class Solution's method metadata["func_name"], arguments one JSON value per input line;
input_len = characters of the raw input. Dates are inclusive ISO dates on contest_date.
"""

from __future__ import annotations

import base64
import datetime as _dt
import io
import json
import pickle
import zlib
from pathlib import Path

from recode_lib.data._io import DataError, hf_rows, read_records, require, resolve_data_dir
from recode_lib.data.leetcode import PRELUDE, parse_date
from recode_lib.data.schema import Problem

HUB_ID = "livecodebench/code_generation_lite"
FILES = ["test.jsonl"] + [f"test{i}.jsonl" for i in range(2, 7)]
RELEASES = {f"release_v{i}": FILES[:i] for i in range(1, 7)}
RELEASES["release_latest"] = FILES
RELEASES.update({f"v{i}": [FILES[i - 1]] for i in range(1, 7)})
RELEASES.update({f"v{a}_v{b}": FILES[a - 1 : b] for a in range(1, 7) for b in range(a + 1, 7)})
DIFFICULTIES = ("easy", "medium", "hard")
TIME_LIMIT_S = 6.0  # lcb_runner's default per-test timeout


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module, name):  # no classes, no callables: data only
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


def decode_private(raw: str, where: str) -> list:
    """private_test_cases: a JSON list, or base64(zlib(pickle(JSON string)))."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        pass
    try:
        obj = _PlainUnpickler(io.BytesIO(zlib.decompress(base64.b64decode(raw.encode())))).load()
        if isinstance(obj, bytes):
            obj = obj.decode("utf-8")
        return json.loads(obj) if isinstance(obj, str) else obj
    except Exception as exc:
        raise DataError(
            f"{where}: field 'private_test_cases' is neither JSON nor "
            f"base64/zlib/pickle JSON ({type(exc).__name__}: {exc})"
        ) from None


def _local_dir(data_dir) -> Path | None:
    root = resolve_data_dir(data_dir)
    for cand in (
        (
            root / "code_generation_lite",
            root / "livecodebench" / "code_generation_lite",
            root / "livecodebench",
        )
        if root
        else ()
    ):
        if (cand / "test.jsonl").is_file():
            return cand
    return None


def _rows(data_dir, release: str, download: bool) -> list[tuple[str, dict]]:
    local = _local_dir(data_dir)
    if local is not None:
        rows = []
        for name in RELEASES[release]:
            path = local / name
            if not path.is_file():
                raise DataError(f"{release} needs {path}, which is missing")
            rows += [(f"{path} record {i}", r) for i, r in enumerate(read_records(path))]
        return rows
    if not download:
        raise DataError(
            f"LiveCodeBench files not found under {resolve_data_dir(data_dir)} "
            f"(expected code_generation_lite/test.jsonl ...)"
        )
    return [(f"{HUB_ID}:{release} row {i}", r) for i, r in enumerate(hf_rows(HUB_ID, release))]


def _tests(cases: list, kind: str, fn_name: str | None, where: str) -> list[dict]:
    out = []
    for j, t in enumerate(cases):
        w = f"{where} test {j}"
        inp, outp = require(t, "input", w, str), require(t, "output", w, str)
        ttype = require(t, "testtype", w, str)
        if ttype != kind:
            raise DataError(f"{w}: field 'testtype' is {ttype!r}, the problem's tests are {kind!r}")
        if kind == "stdin":
            out.append({"input": inp, "output": outp, "input_len": len(inp)})
            continue
        try:
            args = [json.loads(line) for line in inp.split("\n") if line.strip()]
            expected = json.loads(outp)
        except json.JSONDecodeError as exc:
            raise DataError(f"{w}: functional input/output is not JSON ({exc.msg})") from None
        out.append({"args": args, "expected": expected, "input_len": len(inp)})
    return out


def load_livecodebench(
    data_dir=None,
    limit: int | None = None,
    release: str = "release_v6",
    start_date: str | None = None,
    end_date: str | None = None,
    difficulty: str | None = None,
    platform: str | None = None,
    tests: str = "all",
    download: bool = True,
) -> list[Problem]:
    if release not in RELEASES:
        raise ValueError(
            f"livecodebench: unknown release {release!r}; choose from {sorted(RELEASES)}"
        )
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise ValueError(f"livecodebench: difficulty must be one of {DIFFICULTIES}")
    if tests not in ("all", "public"):
        raise ValueError(f"livecodebench: tests must be 'all' or 'public', got {tests!r}")
    lo, hi = parse_date(start_date, "start_date"), parse_date(end_date, "end_date")
    out = []
    for where, rec in _rows(data_dir, release, download):
        qid = require(rec, "question_id", where, str)
        where = f"{where} (question_id {qid})"
        date_s = require(rec, "contest_date", where, (str, _dt.datetime))
        date = parse_date(
            date_s.isoformat() if isinstance(date_s, _dt.datetime) else date_s,
            f"{where}: field 'contest_date'",
        )
        diff = require(rec, "difficulty", where, str)
        if diff not in DIFFICULTIES:
            raise DataError(f"{where}: field 'difficulty' is {diff!r}")
        plat = require(rec, "platform", where, str)
        if (
            (lo and date < lo)
            or (hi and date > hi)
            or (difficulty and diff != difficulty)
            or (platform and plat != platform)
        ):
            continue
        try:
            public = json.loads(require(rec, "public_test_cases", where, str))
            meta = json.loads(require(rec, "metadata", where, str) or "{}")
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{where}: public_test_cases/metadata is not JSON ({exc.msg})"
            ) from None
        private = (
            []
            if tests == "public"
            else decode_private(require(rec, "private_test_cases", where, str), where)
        )
        cases = public + private
        if not cases:
            raise DataError(f"{where}: no test cases")
        kind = require(cases[0], "testtype", f"{where} test 0", str)
        fn = meta.get("func_name")
        if kind == "functional" and not fn:
            raise DataError(f"{where}: functional problem without metadata.func_name")
        if kind not in ("stdin", "functional"):
            raise DataError(f"{where}: unknown testtype {kind!r}")
        converted = _tests(cases, kind, fn, where)
        spec = (
            {"kind": "stdio", "cases": converted}
            if kind == "stdin"
            else {"kind": "call", "fn_name": fn, "cases": converted}
        )
        out.append(
            Problem.from_dict(
                dict(
                    id=f"livecodebench/{qid}",
                    source="livecodebench",
                    prompt=require(rec, "question_content", where, str),
                    starter_code=require(rec, "starter_code", where, str),
                    entry_point=fn,
                    tests=spec,
                    time_limit_s=TIME_LIMIT_S,
                    difficulty=diff,
                    release_date=date.isoformat(),
                    metadata={
                        "title": rec.get("question_title"),
                        "platform": plat,
                        "contest_id": rec.get("contest_id"),
                        "n_public": len(public),
                        "release": release,
                        **({"prelude": PRELUDE} if fn else {}),
                    },
                ),
                where,
            )
        )
        if limit is not None and len(out) >= limit:
            break
    return out
