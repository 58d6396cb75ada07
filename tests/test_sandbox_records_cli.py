"""`recode sandbox` input lines: a bad line is its own invalid_record output line, the rest are
judged, output is strict JSON, re-runs resume; --strict stops at the first bad line.
One bad-line kind per test; the good records are trivial call tests (two workers)."""

from __future__ import annotations

import json

import pytest

from recode_lib.cli import main
from recode_lib.cli.sandbox import strict_json
from recode_lib.sandbox import RecordError, SandboxConfig
from recode_lib.sandbox.records import parse_record


def good(rid, value=1):
    return json.dumps(
        {
            "id": rid,
            "code": f"def f():\n    return {value}\n",
            "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": 1}]},
        }
    )


def run_cli(tmp_path, lines, *extra):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["sandbox", str(src), "--out", str(out), "--workers", "2", "--no-progress", *extra])
    return code, out


def strict_rows(out):
    """Every output line parsed as strict UTF-8 JSON (NaN/Infinity refused)."""

    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return [
        json.loads(raw.decode("utf-8"), parse_constant=refuse)
        for raw in out.read_bytes().splitlines()
    ]


def by_line(rows):
    return {r["line"]: r for r in rows if r["status"] == "invalid_record"}


def test_a_line_that_is_not_json_is_one_invalid_record_and_the_rest_are_judged(tmp_path):
    code, out = run_cli(tmp_path, [good("a"), "not json {", good("b", 2)])
    assert code == 0
    rows = strict_rows(out)
    assert {r["id"]: r["status"] for r in rows if r["id"]} == {"a": "passed", "b": "wrong_answer"}
    (bad,) = by_line(rows).values()
    assert bad["line"] == 2 and bad["id"] is None and bad["outcome"] == "format_error"
    assert "in.jsonl:2: not valid JSON" in bad["reason"] and "\n" not in bad["reason"]


def test_a_field_of_the_wrong_type_keeps_its_id(tmp_path):
    rec = json.loads(good("w"))
    rec["tests"]["cases"][0]["args"] = "nope"
    _, out = run_cli(tmp_path, [json.dumps(rec), good("a")])
    rows = {r["id"]: r for r in strict_rows(out)}
    assert rows["w"]["status"] == "invalid_record" and rows["a"]["status"] == "passed"
    assert "in.jsonl:1" in rows["w"]["reason"] and "tests.cases[0].args" in rows["w"]["reason"]


@pytest.mark.parametrize("literal", ["NaN", "1e999", "-Infinity"])
def test_a_non_finite_id_is_refused_and_the_output_stays_strict_json(tmp_path, literal):
    _, out = run_cli(tmp_path, [good("a"), good("x").replace('"x"', literal)])
    rows = strict_rows(out)  # today: {"id": NaN, ...} / {"id": Infinity, ...}
    (bad,) = by_line(rows).values()
    assert bad["id"] is None and bad["line"] == 2 and "strict JSON" in bad["reason"]
    assert [r["status"] for r in rows if r["id"] == "a"] == ["passed"]


def test_an_id_with_a_lone_surrogate_is_refused_and_a_rerun_does_not_hit_it_again(tmp_path):
    lines = [good("a\ud800"), good("a")]  # written as the JSON escape \ud800: a lone surrogate
    code, out = run_cli(tmp_path, lines)  # today: UnicodeEncodeError, every re-run
    assert code == 0
    rows = strict_rows(out)
    assert by_line(rows)[1]["id"] is None and "lone surrogate" in by_line(rows)[1]["reason"]
    assert run_cli(tmp_path, lines)[0] == 0
    assert strict_rows(out) == rows  # nothing written twice


def test_a_line_nested_200000_deep_is_one_invalid_record(tmp_path):
    _, out = run_cli(tmp_path, ["[" * 200_000 + "]" * 200_000, good("a")])  # today: a traceback
    rows = strict_rows(out)
    assert "nested too deeply" in by_line(rows)[1]["reason"]
    assert [r["status"] for r in rows if r["id"] == "a"] == ["passed"]


def test_a_misspelled_field_is_named_not_ignored(tmp_path):
    rec = dict(json.loads(good("m")), time_limt_s=5)
    _, out = run_cli(tmp_path, [json.dumps(rec)])
    (row,) = strict_rows(out)
    assert row["status"] == "invalid_record" and row["id"] == "m"
    assert "'time_limt_s'" in row["reason"] and "did you mean 'time_limit_s'" in row["reason"]


def test_a_misspelled_case_field_is_named(tmp_path):
    rec = json.loads(good("m"))
    rec["tests"]["cases"][0]["time_limits"] = 5
    _, out = run_cli(tmp_path, [json.dumps(rec)])
    (row,) = strict_rows(out)
    assert row["status"] == "invalid_record" and "tests.cases[0].time_limits" in row["reason"]


def test_a_duplicate_id_is_one_invalid_line_and_neither_runs(tmp_path):
    _, out = run_cli(tmp_path, [good("d"), good("a"), good("d", 2)])
    rows = strict_rows(out)
    assert [r["status"] for r in rows if r["id"] == "d"] == ["invalid_record"]
    assert "also on line(s) 3" in [r for r in rows if r["id"] == "d"][0]["reason"]


def test_a_rerun_skips_written_ids_and_writes_each_invalid_line_once(tmp_path):
    lines = [good("a"), "{", good("b"), "[1, 2]", good("c").replace('"c"', "NaN")]
    _, out = run_cli(tmp_path, lines)
    first = strict_rows(out)
    assert len(first) == 5
    assert run_cli(tmp_path, lines)[0] == 0
    assert strict_rows(out) == first


def test_strict_stops_at_the_first_bad_line_before_anything_runs(tmp_path, capsys):
    code, out = run_cli(tmp_path, [good("a"), "{", good("b").replace('"b"', "NaN")], "--strict")
    assert code == 2 and not out.exists()
    assert "in.jsonl:2: not valid JSON" in capsys.readouterr().err


def test_an_infinite_memory_limit_is_a_record_error_not_an_overflow():
    rec = dict(json.loads(good("i")), memory_mb=float("inf"))
    with pytest.raises(RecordError, match="memory_mb"):  # today: OverflowError
        parse_record(rec, SandboxConfig())


def test_strict_json_escapes_what_strict_json_cannot_hold():
    assert strict_json({"id": "a", "reason": "ok"}) == {"id": "a", "reason": "ok"}
    fixed = strict_json({"id": "a", "reason": "x\ud800", "time_s": float("nan")})
    assert fixed == {"id": "a", "reason": "x\\ud800", "time_s": None}
    json.dumps(fixed, allow_nan=False).encode("utf-8")


def test_ids_1_1_0_and_true_are_three_ids_each_judged(tmp_path):
    """Ids compare as the JSON values they are: 1, 1.0 and true are not one id (Python's
    1 == 1.0 == True made them a duplicate, and none ran)."""
    _, out = run_cli(tmp_path, [good(1), good(1.0, 2), good(True)])
    rows = strict_rows(out)
    got = sorted((json.dumps(r["id"]), r["status"]) for r in rows)
    assert got == [("1", "passed"), ("1.0", "wrong_answer"), ("true", "passed")]


def test_a_rerun_runs_an_id_equal_in_python_to_one_already_written(tmp_path):
    """Resume skips the ids already in OUT as JSON values: after 1 is written, a re-run of a
    file holding 1.0 runs 1.0 (it was skipped as already done)."""
    run_cli(tmp_path, [good(1)])
    _, out = run_cli(tmp_path, [good(1.0, 2)])
    rows = strict_rows(out)
    assert sorted((json.dumps(r["id"]), r["status"]) for r in rows) == [
        ("1", "passed"),
        ("1.0", "wrong_answer"),
    ]


def test_ids_equal_as_json_values_are_still_one_duplicate(tmp_path):
    """[1, {"a": 2}] and [1, {"a": 2}] written differently (spacing) are one id, twice."""
    a = good([1, {"a": 2}])
    b = good([1, {"a": 2}]).replace('[1, {"a": 2}]', '[1,{"a":2}]')
    _, out = run_cli(tmp_path, [a, b])
    (row,) = strict_rows(out)
    assert row["status"] == "invalid_record" and "duplicate id" in row["reason"]
