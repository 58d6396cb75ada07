"""Loaders on the real benchmark files (skipped without ../shared/data) and on bad input."""

import gzip
import json

import pytest

from recode_lib.data import DataError, available_benchmarks, list_benchmarks, load_benchmark
from recode_lib.data.aime import check_answer, extract_boxed, normalize_answer


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    # one cache per session: reference outputs computed once for the whole run
    monkeypatch.setenv("RECODE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def test_registry_names_and_errors(tmp_path):
    names = list_benchmarks()
    for n in (
        "humaneval",
        "humanevalplus",
        "mbpp",
        "mbppplus",
        "bigcodebench",
        "livecodebench",
        "codecontests_plus",
        "leetcode",
        "aime24",
        "microbench",
        "easy",
    ):
        assert n in names
    with pytest.raises(ValueError, match="unknown benchmark 'nope'"):
        load_benchmark("nope")
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['relase'\]"):
        load_benchmark("livecodebench", relase="v1")
    assert available_benchmarks(tmp_path) == ["microbench", "math_synth", "easy"]  # no files needed


def test_real_counts(shared_data_dir):
    assert len(load_benchmark("humaneval")) == 164
    assert len(load_benchmark("mbpp")) == 500  # test split, task ids 11-510
    assert len(load_benchmark("mbpp", split="all")) == 974
    assert len(load_benchmark("leetcode")) == 180
    assert len(load_benchmark("aime24")) == 30
    bcb = load_benchmark("bigcodebench", limit=5, split="instruct")
    assert len(bcb) == 5 and bcb[0].starter_code.startswith("import")
    assert "task_func" in bcb[0].starter_code and "TestCases" in bcb[0].tests["script"]
    avail = available_benchmarks()
    assert {
        "humaneval",
        "humanevalplus",
        "mbpp",
        "mbppplus",
        "bigcodebench",
        "leetcode",
        "aime24",
        "microbench",
    } <= set(avail)


def test_humaneval_mbpp_shapes(shared_data_dir):
    he = load_benchmark("humaneval", limit=2)
    assert he[0].id == "humaneval/0" and he[0].entry_point == "has_close_elements"
    assert he[0].tests["script"].rstrip().endswith("check(has_close_elements)")
    assert he[0].reference_solution.startswith(he[0].prompt)
    mb = load_benchmark("mbpp", limit=3)
    assert mb[0].id == "mbpp/11" and mb[0].entry_point == "remove_Occ"
    assert "assert remove_Occ" in mb[0].prompt and "\r" not in mb[0].reference_solution


def test_evalplus_call_tests(shared_data_dir):
    hp = load_benchmark("humanevalplus", limit=3)
    raw = [
        json.loads(line) for line in gzip.open(shared_data_dir / "HumanEvalPlus.jsonl.gz", "rt")
    ][:3]
    for p, r in zip(hp, raw, strict=True):
        t = p.tests
        assert t["kind"] == "call" and t["fn_name"] == r["entry_point"]
        assert len(t["cases"]) == len(r["base_input"]) + len(r["plus_input"])
        assert all(c["input_len"] == len(json.dumps(c["args"])) for c in t["cases"])
        assert p.time_limit_s >= 1.0
    assert hp[0].tests["cases"][0]["expected"] is True  # has_close_elements([...], 0.3)
    base = load_benchmark("humanevalplus", limit=1, tests="base")
    assert len(base[0].tests["cases"]) == len(raw[0]["base_input"])
    mp = load_benchmark("mbppplus", limit=1)  # Mbpp/2: tuple inputs, set oracle
    case = mp[0].tests["cases"][0]
    assert case["args"] == [{"__tuple__": [3, 4, 5, 6]}, {"__tuple__": [5, 7, 4, 10]}]
    assert "set(_hash_safe(output)) == set(expected)" in mp[0].tests["checker"]


def test_leetcode_dates_and_aime(shared_data_dir):
    lc = load_benchmark("leetcode", start_date="2024-01-01")
    assert lc and all(p.release_date >= "2024-01-01" for p in lc)
    assert len(lc) < 180
    p = lc[0]
    assert p.starter_code.startswith("class Solution") and p.entry_point in p.starter_code
    assert "my_solution = Solution()" in p.tests["script"] and p.difficulty in (
        "easy",
        "medium",
        "hard",
    )
    hard = load_benchmark("leetcode", difficulty="hard")
    assert hard and all(q.difficulty == "hard" for q in hard)
    aime = load_benchmark("aime24")
    answers = {p.answer for p in aime}
    assert "25" in answers and "025" not in answers and all(a == a.lstrip("0") for a in answers)
    assert aime[0].tests["kind"] == "script" and "SystemExit" in aime[0].tests["script"]


def test_aime_answer_helpers():
    assert normalize_answer("025") == "25" and normalize_answer(" 7. ") == "7"
    assert normalize_answer("0") == "0"
    assert extract_boxed(r"so \boxed{\frac{1}{2}} and \boxed{025}") == "025"
    assert check_answer(r"... the answer is \boxed{025}", "25")
    assert check_answer("we get 17 then 204", "204")
    assert not check_answer("no number", "25")


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_bad_input_names_file_record_field(tmp_path):
    _write_jsonl(
        tmp_path / "HumanEval.jsonl",
        [
            {
                "task_id": "HumanEval/0",
                "prompt": "def f():\n",
                "entry_point": "f",
                "canonical_solution": "    return 1\n",
                "test": "def check(c): pass",
            },
            {"task_id": "HumanEval/1", "entry_point": "g", "canonical_solution": "", "test": ""},
        ],
    )
    with pytest.raises(
        DataError,
        match=r"HumanEval\.jsonl record 1 \(HumanEval/1\): missing "
        r"field 'prompt'",
    ):
        load_benchmark("humaneval", data_dir=tmp_path, download=False)
    (tmp_path / "aime24.jsonl").write_text('{"id": 1, "problem": "p", "answer": "7"}\n{oops\n')
    with pytest.raises(DataError, match=r"aime24\.jsonl:2: not valid JSON"):
        load_benchmark("aime24", data_dir=tmp_path, download=False)
    _write_jsonl(tmp_path / "aime24.jsonl", [{"id": 1, "problem": "p", "answer": "x7"}])
    with pytest.raises(DataError, match="field 'answer'"):
        load_benchmark("aime24", data_dir=tmp_path, download=False)
    with pytest.raises(DataError, match="mbpp.jsonl not found"):
        load_benchmark("mbpp", data_dir=tmp_path, download=False)
    with pytest.raises(ValueError, match="unknown split"):
        load_benchmark("mbpp", data_dir=tmp_path, split="dev")
