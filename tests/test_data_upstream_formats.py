"""LiveCodeBench code_generation_lite and CodeContests+ loaders on fixtures in upstream formats."""

import base64
import json
import pickle
import zlib
from pathlib import Path

import pytest

from recode_lib.data import DataError, load_benchmark
from recode_lib.data.livecodebench import RELEASES, decode_private

FIX = Path(__file__).parent / "fixtures"


def test_lcb_releases_and_windows():
    assert RELEASES["release_v3"] == ["test.jsonl", "test2.jsonl", "test3.jsonl"]
    assert RELEASES["v2_v4"] == ["test2.jsonl", "test3.jsonl", "test4.jsonl"]
    v1 = load_benchmark("livecodebench", data_dir=FIX, release="release_v1")
    assert [p.id for p in v1] == ["livecodebench/abc301_a", "livecodebench/2800"]
    assert len(load_benchmark("livecodebench", data_dir=FIX, release="release_v2")) == 3
    only2 = load_benchmark("livecodebench", data_dir=FIX, release="v2")
    assert [p.id for p in only2] == ["livecodebench/1900F"] and only2[0].difficulty == "hard"
    win = load_benchmark(
        "livecodebench",
        data_dir=FIX,
        release="release_v2",
        start_date="2023-07-01",
        end_date="2024-04-20",
    )
    assert [p.release_date for p in win] == ["2023-07-02", "2024-04-20"]
    assert [
        p.id
        for p in load_benchmark(
            "livecodebench", data_dir=FIX, release="release_v2", difficulty="easy"
        )
    ] == ["livecodebench/abc301_a"]
    with pytest.raises(DataError, match="test3.jsonl"):
        load_benchmark("livecodebench", data_dir=FIX, release="release_v3")
    with pytest.raises(ValueError, match="unknown release 'release_v9'"):
        load_benchmark("livecodebench", data_dir=FIX, release="release_v9")


def test_lcb_tests_stdin_and_functional():
    stdin_p, func_p = load_benchmark("livecodebench", data_dir=FIX, release="release_v1")
    assert stdin_p.tests["kind"] == "stdio"
    # public + base64/zlib/pickle private tests, in order, with input lengths
    assert [c["input"] for c in stdin_p.tests["cases"]] == ["1 2\n", "5 7\n", "0 0\n"]
    assert [c["output"] for c in stdin_p.tests["cases"]] == ["3\n", "12\n", "0\n"]
    assert all(c["input_len"] == len(c["input"]) for c in stdin_p.tests["cases"])
    assert func_p.tests == {
        "kind": "call",
        "fn_name": "twoSum",
        "cases": [
            {"args": [[2, 7, 11, 15], 9], "expected": [0, 1], "input_len": 16},
            {"args": [[3, 2, 4], 6], "expected": [1, 2], "input_len": 11},
        ],
    }
    assert func_p.starter_code.startswith("class Solution") and func_p.entry_point == "twoSum"
    assert "from typing import *" in func_p.metadata["prelude"]
    pub = load_benchmark("livecodebench", data_dir=FIX, release="v1", tests="public")
    assert len(pub[0].tests["cases"]) == 1


def test_lcb_private_decoding_and_errors(tmp_path):
    cases = [{"input": "1\n", "output": "2\n", "testtype": "stdin"}]
    enc = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases)))).decode()
    assert decode_private(enc, "w") == cases == decode_private(json.dumps(cases), "w")
    # a pickle that would build an object is refused, not executed
    evil = base64.b64encode(zlib.compress(pickle.dumps(Path("/etc")))).decode()
    with pytest.raises(DataError, match="private_test_cases"):
        decode_private(evil, "rec 3")
    d = tmp_path / "code_generation_lite"
    d.mkdir()
    row = json.loads((FIX / "code_generation_lite" / "test.jsonl").read_text().splitlines()[0])
    bad = dict(row, private_test_cases="not base64 !!")
    del row["difficulty"]
    (d / "test.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(
        DataError,
        match=r"test\.jsonl record 0 \(question_id abc301_a\): field "
        r"'private_test_cases'",
    ):
        load_benchmark("livecodebench", data_dir=tmp_path, release="v1")
    (d / "test.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(DataError, match="missing field 'difficulty'"):
        load_benchmark("livecodebench", data_dir=tmp_path, release="v1")


def test_codecontests_plus_configs_and_lengths():
    one = load_benchmark("codecontests_plus", data_dir=FIX, config="1x")
    three = load_benchmark("codecontests_plus", data_dir=FIX, config="3x")
    assert [p.id for p in one] == ["codecontests_plus/1000A", "codecontests_plus/1000B"]
    assert len(one[0].tests["cases"]) == 3 and len(three[0].tests["cases"]) == 9
    lens = [c["input_len"] for c in three[0].tests["cases"]]
    assert lens == [len(c["input"]) for c in three[0].tests["cases"]] and max(lens) > 1000
    p = one[0]
    assert p.time_limit_s == 6.0 and p.memory_mb == 256 and p.tests["kind"] == "stdio"  # x3
    assert "checker" not in p.tests  # the fixture's field is a placeholder comment
    assert p.reference_solution.startswith("import sys")  # the py3 submission
    assert p.metadata["checker"] and p.metadata["config"] == "1x"
    slow = load_benchmark("codecontests_plus", data_dir=FIX, config="1x", time_scale=2.5)
    assert slow[0].time_limit_s == 5.0
    with pytest.raises(ValueError, match="unknown config '7x'"):
        load_benchmark("codecontests_plus", data_dir=FIX, config="7x")
    with pytest.raises(DataError, match="ccplus_2x"):
        load_benchmark("codecontests_plus", data_dir=FIX, config="2x", download=False)


def test_codecontests_plus_parquet_and_bad_record(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        json.loads(line)
        for line in (FIX / "Code-Contests-Plus/ccplus_1x/part-00000-of-00001.jsonl")
        .read_text()
        .splitlines()
    ]
    d = tmp_path / "Code-Contests-Plus" / "ccplus_1x"
    d.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), d / "part-00000-of-00001.parquet")
    got = load_benchmark("codecontests_plus", data_dir=tmp_path)
    assert [p.tests for p in got] == [
        p.tests for p in load_benchmark("codecontests_plus", data_dir=FIX)
    ]
    (d / "part-00000-of-00001.parquet").unlink()
    rows[1]["test_cases"][2] = {"input": "1\n"}
    (d / "part.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(
        DataError,
        match=r"record 1 \(id 1000B\) test_cases\[2\]: missing field "
        r"'output'",
    ):
        load_benchmark("codecontests_plus", data_dir=tmp_path)
