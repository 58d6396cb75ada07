"""Shared file plumbing for the benchmark loaders: read records, check fields, find or fetch files.

    rows = read_records(path)                  # .jsonl, .jsonl.gz, .json (a list) or .parquet
    val = require(row, "prompt", where, str)  # DataError naming file/record/field otherwise
    path = find_file(data_dir, ["HumanEval.jsonl.gz"], fetch_url=URL)   # local, cache, download
    rows = hf_rows("livecodebench/code_generation_lite", "release_v6", "test")  # datasets, lazy

Search order for a named file: the data directory (`data_dir=` argument, else
recode_lib.core.paths.data_dir()), then the download cache (cache_dir()/downloads), then, when
`download` is allowed, the canonical URL (saved into the download cache). Missing data raises
DataError naming every place looked at. Nothing here parses a benchmark's semantics.
"""

from __future__ import annotations

import gzip
import json
import os
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from recode_lib.core.paths import cache_dir
from recode_lib.core.paths import data_dir as default_data_dir
from recode_lib.data.schema import ProblemError


class DataError(ProblemError):
    """Benchmark data that is missing or malformed; the message names file, record and field."""


def resolve_data_dir(data_dir: str | os.PathLike | None) -> Path | None:
    return Path(data_dir) if data_dir is not None else default_data_dir()


def read_records(path: str | os.PathLike) -> list[dict]:
    """Every record of a jsonl(.gz) / json list / parquet file; a bad line raises naming it."""
    path = Path(path)
    name = path.name
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq  # lazy: only parquet sources need it

        return pq.read_table(path).to_pylist()
    if name.endswith(".json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise DataError(f"{path}: expected a JSON list of records")
        return data
    opener = gzip.open if name.endswith(".gz") else open
    out = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(rec, dict):
                raise DataError(f"{path}:{lineno}: expected a JSON object")
            out.append(rec)
    return out


def require(
    rec: dict, field: str, where: str, types: type | tuple = object, allow_none: bool = False
) -> Any:
    """rec[field], checked for presence and type; DataError naming `where` and the field."""
    if not isinstance(rec, dict):
        raise DataError(f"{where}: expected an object, got {type(rec).__name__}")
    if field not in rec:
        raise DataError(f"{where}: missing field {field!r}")
    val = rec[field]
    if val is None and allow_none:
        return None
    if not isinstance(val, types) or isinstance(val, bool) and types in (int, (int, float)):
        raise DataError(
            f"{where}: field {field!r} has type {type(val).__name__}, expected "
            f"{getattr(types, '__name__', types)}"
        )
    return val


def downloads_dir() -> Path:
    return cache_dir() / "downloads"


def find_file(
    data_dir: str | os.PathLike | None,
    names: Iterable[str],
    *,
    fetch_url: str | None = None,
    download: bool = True,
) -> Path:
    """The first existing file among `names` under the data dir or the download cache;
    otherwise download `fetch_url` into the cache (when allowed) or raise DataError."""
    names = list(names)
    roots = [r for r in (resolve_data_dir(data_dir), downloads_dir()) if r is not None]
    for root in roots:
        for name in names:
            if (root / name).is_file():
                return root / name
    looked = ", ".join(str(r / n) for r in roots for n in names)
    if fetch_url and download:
        dest = downloads_dir() / names[0]
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(dest.suffix + ".part")
        try:
            urllib.request.urlretrieve(fetch_url, tmp)
        except OSError as exc:
            raise DataError(
                f"{names[0]} not found (looked at {looked}) and downloading "
                f"{fetch_url} failed: {exc}"
            ) from None
        os.replace(tmp, dest)
        return dest
    raise DataError(
        f"{names[0]} not found; looked at {looked}"
        + (f"; download it from {fetch_url}" if fetch_url else "")
    )


def hf_rows(
    hub_id: str, config: str | None = None, split: str = "test", *, limit: int | None = None
) -> list[dict]:
    """Rows of a Hugging Face dataset via `datasets.load_dataset` (imported lazily); streamed
    when a limit is given. Failure raises DataError naming the hub id and config."""
    try:
        import datasets  # lazy: offline users and tests never import it here

        if limit is not None:
            ds = datasets.load_dataset(hub_id, config, split=split, streaming=True)
            return [dict(r) for _, r in zip(range(limit), ds, strict=False)]
        ds = datasets.load_dataset(hub_id, config, split=split)
        return [dict(r) for r in ds]
    except Exception as exc:  # network, auth, unknown config: one clear message
        raise DataError(
            f"could not load Hugging Face dataset {hub_id!r} (config {config!r}, "
            f"split {split!r}): {type(exc).__name__}: {exc}"
        ) from None


def json_len(value: Any) -> int:
    """Input length of a call test: characters of the JSON of its arguments."""
    return len(json.dumps(value, ensure_ascii=False))


def take(items: list, limit: int | None) -> list:
    if limit is None:
        return items
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    return items[:limit]
