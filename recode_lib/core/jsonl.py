"""Append-only JSON-lines result stores keyed by id: the resumability mechanism of every stage.

    store = JsonlStore("runs/smoke/samples.jsonl")
    todo = [r for r in records if r["id"] not in store]     # skip finished work
    for rec in compute(todo):
        store.append(rec)                                  # flushed + fsynced per record
    store.extend(batch)                                    # or a batch: new ids, one fsync
    rows = store.records()

Guarantees: a record is appended whole or not at all (a torn last line from a crash is
ignored on read and overwritten on the next append); an id already present is never written
twice (`append` raises, `append_new` skips); reading never drops a valid record silently —
a corrupt line in the middle of the file raises naming the file and line.
It does not lock across processes: one writer per file. `key_of` (optional) computes a
record's key instead of its key field (`recode sandbox` keys its id-less invalid_record lines
by input line).

write_json_atomic / write_jsonl_atomic / write_csv_atomic write whole files through a temporary file
and os.replace, so readers never see half a file. nested_deeper(value, limit) says whether
JSON-like data nests deeper than a bound, whatever the caller's stack (json's own limit is the
interpreter's recursion limit, so data written near it from one stack cannot be read from a
deeper one).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from recode_lib.core.errors import RecodeError


class JsonlError(RecodeError, ValueError):
    """A jsonl file or record that cannot be read; the message names file and line."""


def read_jsonl(path: str | os.PathLike, *, allow_torn_tail: bool = False) -> list[dict]:
    """Read every record. A malformed line raises JsonlError naming the file and line number,
    except (with allow_torn_tail) an unterminated last line, which is what a crash leaves."""
    path = Path(path)
    out: list[dict] = []
    with open(path, "rb") as fh:
        data = fh.read()
    lines = data.split(b"\n")
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        is_tail = lineno == len(lines) and not data.endswith(b"\n")
        try:
            rec = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            if allow_torn_tail and is_tail:
                break
            raise JsonlError(
                f"{path}:{lineno}: not UTF-8 (byte {raw[exc.start]:#04x} at column "
                f"{exc.start + 1}); JSON lines must be UTF-8 text"
            ) from None
        except json.JSONDecodeError as exc:
            if allow_torn_tail and is_tail:
                break
            what = exc.msg if not exc.msg.endswith(" at") else f"{exc.msg} column"
            raise JsonlError(
                f"{path}:{lineno}: not valid JSON ({what} {exc.colno}; a raw control "
                f"character such as NUL must be escaped)"
                if "control" in exc.msg
                else f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})"
            ) from None
        except RecursionError:
            raise JsonlError(f"{path}:{lineno}: nested too deeply to read as JSON") from None
        if not isinstance(rec, dict):
            raise JsonlError(f"{path}:{lineno}: expected a JSON object, got {type(rec).__name__}")
        out.append(rec)
    return out


class JsonlStore:
    """An append-only jsonl file of records with a unique key field (default "id")."""

    def __init__(self, path: str | os.PathLike, key: str = "id", key_of=None):
        self.path = Path(path)
        self.key = key
        self.key_of = key_of  # record -> hashable key; default: the key field's value
        self._records: list[dict] = []
        self._ids: set = set()
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        recs = read_jsonl(self.path, allow_torn_tail=True)
        for i, rec in enumerate(recs):
            if self.key not in rec:
                raise JsonlError(f"{self.path}: record {i + 1} has no {self.key!r} field")
            k = self._record_key(rec)
            if k in self._ids:
                raise JsonlError(
                    f"{self.path}: duplicate {self.key} {rec[self.key]!r} (two "
                    f"writers at once, before outputs were locked); repair it with "
                    f"`python -m recode_lib.core.jsonl dedupe {self.path}`, which keeps "
                    f"the first record per {self.key}"
                )
            self._ids.add(k)
            self._records.append(rec)
        # drop a torn tail so the next append starts on a clean line
        with open(self.path, "rb") as fh:
            data = fh.read()
        if data and not data.endswith(b"\n"):
            keep = data[: data.rfind(b"\n") + 1]
            with open(self.path, "wb") as fh:
                fh.write(keep)
                fh.flush()
                os.fsync(fh.fileno())

    def _record_key(self, record: dict) -> Any:
        return self.key_of(record) if self.key_of else self._hashable(record[self.key])

    @staticmethod
    def _hashable(value: Any) -> Any:
        return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value

    def __contains__(self, key: Any) -> bool:
        return self._hashable(key) in self._ids

    def __len__(self) -> int:
        return len(self._records)

    def ids(self) -> set:
        return set(self._ids)

    def records(self) -> list[dict]:
        return list(self._records)

    def append(self, record: dict) -> None:
        if self.key not in record:
            raise JsonlError(f"{self.path}: record without {self.key!r}: {str(record)[:200]}")
        k = self._record_key(record)
        if k in self._ids:
            raise JsonlError(f"{self.path}: {self.key} {record[self.key]!r} is already stored")
        line = json.dumps(record, ensure_ascii=False, default=_json_default) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        self._ids.add(k)
        self._records.append(record)

    def append_new(self, record: dict) -> bool:
        """Append unless the id is present; returns whether it was written."""
        if record.get(self.key) is not None and record[self.key] in self:
            return False
        self.append(record)
        return True

    def extend(self, records: Iterable[dict]) -> int:
        """Append every record whose id is not stored yet (nor earlier in `records`) with one
        write and one fsync; returns how many were written. A record without the key raises
        before anything is written."""
        new, seen = [], set()
        for r in records:
            if self.key not in r:
                raise JsonlError(f"{self.path}: record without {self.key!r}: {str(r)[:200]}")
            k = self._record_key(r)
            if k not in self._ids and k not in seen:
                seen.add(k)
                new.append((k, r))
        if not new:
            return 0
        text = "".join(
            json.dumps(r, ensure_ascii=False, default=_json_default) + "\n" for _, r in new
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        for k, r in new:
            self._ids.add(k)
            self._records.append(r)
        return len(new)


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether lists/tuples/dicts in `value` nest more than `limit` levels deep (iterative:
    the answer does not depend on how deep the caller's stack is)."""
    stack = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, tuple, dict)):
            if d >= limit:
                return True
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return False


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def current_umask() -> int:
    """The process umask, read without changing it (Linux: /proc/self/status; elsewhere the
    set-and-restore dance, which is not thread-safe but only runs off Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        # mkstemp creates the file 0600; give it the mode a plain open() would (0666 & ~umask),
        # so colleagues in the group read results written atomically as they read the jsonl
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_json_atomic(path: str | os.PathLike, obj: Any) -> Path:
    return _atomic_write_text(
        path, json.dumps(obj, indent=2, ensure_ascii=False, default=_json_default) + "\n"
    )


def write_jsonl_atomic(path: str | os.PathLike, records: Iterable[dict]) -> Path:
    text = "".join(json.dumps(r, ensure_ascii=False, default=_json_default) + "\n" for r in records)
    return _atomic_write_text(path, text)


def write_csv_atomic(path: str | os.PathLike, rows: list[dict]) -> Path:
    """A CSV with the first row's keys as the header (rows must be non-empty)."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return _atomic_write_text(path, buf.getvalue())


def read_json(path: str | os.PathLike) -> Any:
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise JsonlError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def dedupe(path: str | os.PathLike, key: str = "id") -> tuple[int, int]:
    """Rewrite a jsonl file keeping the first record per `key` (a file two writers appended to
    at once, before outputs were locked); atomic. Returns (kept, dropped)."""
    seen, kept = set(), []
    for rec in read_jsonl(path, allow_torn_tail=True):
        value = rec.get(key)  # an id-less line (recode sandbox's invalid_record): its line
        k = json.dumps(value if value is not None else ["line", rec.get("line")], sort_keys=True)
        if k not in seen:
            seen.add(k)
            kept.append(rec)
    total = len(read_jsonl(path, allow_torn_tail=True))
    write_jsonl_atomic(path, kept)
    return len(kept), total - len(kept)


def main(argv: list[str] | None = None) -> int:
    """`python -m recode_lib.core.jsonl dedupe FILE [--key id]`."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) not in (2, 4) or args[0] != "dedupe" or (len(args) == 4 and args[2] != "--key"):
        print("usage: python -m recode_lib.core.jsonl dedupe FILE [--key FIELD]", file=sys.stderr)
        return 2
    kept, dropped = dedupe(args[1], args[3] if len(args) == 4 else "id")
    print(f"{args[1]}: kept {kept} records, dropped {dropped} duplicates")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
