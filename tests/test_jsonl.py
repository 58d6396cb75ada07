"""The append-only result store every resumable stage relies on."""

import json

import pytest

from recode_lib.core.jsonl import (
    JsonlError,
    JsonlStore,
    read_jsonl,
    write_json_atomic,
    write_jsonl_atomic,
)


def test_append_persists_and_reopen_resumes(tmp_path):
    path = tmp_path / "r.jsonl"
    store = JsonlStore(path)
    store.append({"id": "a", "v": 1})
    store.append({"id": "b", "v": 2})
    again = JsonlStore(path)
    assert "a" in again and "c" not in again and len(again) == 2
    assert [r["v"] for r in again.records()] == [1, 2]


def test_duplicate_id_is_refused_and_append_new_skips(tmp_path):
    store = JsonlStore(tmp_path / "r.jsonl")
    store.append({"id": "a"})
    with pytest.raises(JsonlError, match="already stored"):
        store.append({"id": "a"})
    assert store.append_new({"id": "a"}) is False and len(store) == 1


def test_torn_last_line_from_a_crash_is_dropped_and_overwritten(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b", "v":')  # crash mid-write
    store = JsonlStore(path)
    assert store.ids() == {"a"}
    store.append({"id": "b", "v": 2})
    assert [r["id"] for r in read_jsonl(path)] == ["a", "b"]


def test_corrupt_line_in_the_middle_raises_naming_file_and_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a"}\nnot json\n{"id": "c"}\n')
    with pytest.raises(JsonlError, match=r"r.jsonl:2: not valid JSON"):
        JsonlStore(path)


def test_record_without_key_is_named(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"x": 1}\n')
    with pytest.raises(JsonlError, match="record 1 has no 'id'"):
        JsonlStore(path)


def test_atomic_writers_leave_no_temp_files(tmp_path):
    write_json_atomic(tmp_path / "m.json", {"a": {1, 2}})
    write_jsonl_atomic(tmp_path / "x.jsonl", [{"id": 1}, {"id": 2}])
    assert json.loads((tmp_path / "m.json").read_text()) == {"a": [1, 2]}
    assert len(read_jsonl(tmp_path / "x.jsonl")) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "x.jsonl"]


def test_extend_writes_only_new_ids_once_and_survives_reopen(tmp_path):
    path = tmp_path / "r.jsonl"
    store = JsonlStore(path)
    store.append({"id": "a", "v": 0})
    assert (
        store.extend(
            [{"id": "a", "v": 9}, {"id": "b", "v": 1}, {"id": "b", "v": 2}, {"id": "c", "v": 3}]
        )
        == 2
    )
    assert [(r["id"], r["v"]) for r in JsonlStore(path).records()] == [("a", 0), ("b", 1), ("c", 3)]
    with pytest.raises(JsonlError, match="without 'id'"):
        store.extend([{"id": "d"}, {"v": 1}])
    assert "d" not in JsonlStore(path)  # nothing of a bad batch is written


def test_atomic_writes_honour_the_umask(tmp_path):
    # mkstemp makes 0600 files: with umask 022 a colleague in the group could not read a
    # summary.json written atomically, while the jsonl beside it (plain open) was 0644
    import os
    import stat

    from recode_lib.core.jsonl import current_umask, write_json_atomic, write_jsonl_atomic

    before = os.umask(0o022)
    try:
        assert current_umask() == 0o022
        a = write_json_atomic(tmp_path / "summary.json", {"x": 1})
        b = write_jsonl_atomic(tmp_path / "r.jsonl", [{"id": 1}])
        plain = tmp_path / "plain.txt"
        plain.write_text("x")
        assert stat.S_IMODE(a.stat().st_mode) == 0o644 == stat.S_IMODE(plain.stat().st_mode)
        assert stat.S_IMODE(b.stat().st_mode) == 0o644
        os.umask(0o077)
        c = write_json_atomic(tmp_path / "private.json", {"x": 1})
        assert stat.S_IMODE(c.stat().st_mode) == 0o600
    finally:
        os.umask(before)


@pytest.mark.parametrize(
    "raw, words",
    [
        (b'{"id": "\xff"}\n', "2: not UTF-8 (byte 0xff at column 9)"),
        (
            b'{"id": "a\x00b"}\n',
            "2: not valid JSON (Invalid control character at column 10; "
            "a raw control character such as NUL must be escaped)",
        ),
        (
            b'{"id": 1,}\n',
            "2: not valid JSON (Expecting property name enclosed in double quotes at column 10)",
        ),
        (b"[" * 100000 + b"\n", "2: nested too deeply"),
    ],
)
def test_an_unreadable_line_is_one_sentence_naming_file_line_and_column(tmp_path, raw, words):
    from recode_lib.core.jsonl import JsonlError, read_jsonl

    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"id": 0}\n' + raw)
    with pytest.raises(JsonlError) as err:
        read_jsonl(path)
    assert str(err.value).startswith(f"{path}:{words}")
    assert "\n" not in str(err.value)
