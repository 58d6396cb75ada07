"""Streaming safetensors I/O for checkpoint surgery without loading a model into memory.

    idx = scan_checkpoint("runs/smoke/.../final")   # name -> (file, offset, nbytes, dtype, shape)
    layout = plan_layout(idx, max_shard_bytes)         # output shard -> tensor names in order
    header = encode_header(idx, layout[shard])         # bytes to write before the tensor data
    reader = TensorReader(); reader.read_into(idx.tensors[name], memoryview_of_bytes, start)
    with BackgroundWriter() as w: w.write(fh, buffer, nbytes)   # overlapped with compute

The format: 8-byte little-endian header length, a JSON header ({name: {dtype, shape,
data_offsets}} + optional "__metadata__"), padded with spaces to 8 bytes, then the tensor bytes
in order of data_offsets. Headers are parsed here directly (no mmap), tensor bytes are read with
readinto into caller-owned buffers, so memory stays at the size of the buffers the caller keeps.
It does NOT read .bin/.gguf weights and does not validate that tensor bytes are finite.
"""

from __future__ import annotations

import json
import queue
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

from recode_lib.core.errors import RecodeError

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".ckpt", ".msgpack", ".h5")
TORCH_DTYPES = {
    "F64": "float64",
    "F32": "float32",
    "F16": "float16",
    "BF16": "bfloat16",
    "I64": "int64",
    "I32": "int32",
    "I16": "int16",
    "I8": "int8",
    "U8": "uint8",
    "BOOL": "bool",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
}
FLOAT_DTYPES = ("F64", "F32", "F16", "BF16")


class SafetensorsError(RecodeError, ValueError):
    """A checkpoint folder or safetensors file that cannot be read; names the file."""


def read_header(path: Path) -> tuple[dict, int]:
    """(header dict, byte offset of the data section) of one safetensors file."""
    with open(path, "rb") as fh:
        raw = fh.read(8)
        if len(raw) != 8:
            raise SafetensorsError(f"{path}: not a safetensors file (shorter than 8 bytes)")
        (n,) = struct.unpack("<Q", raw)
        if n > 100 * 1024**2:
            raise SafetensorsError(f"{path}: not a safetensors file (header length {n})")
        try:
            header = json.loads(fh.read(n))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SafetensorsError(f"{path}: unreadable safetensors header ({exc})") from None
    return header, 8 + n


@dataclass
class CheckpointIndex:
    """Where every tensor of one HF checkpoint folder lives."""

    root: Path
    tensors: dict  # name -> (path, absolute offset, nbytes, dtype, shape)
    shards: dict  # shard file name -> tensor names in offset order
    metadata: dict  # the "__metadata__" of the (last) shard, e.g. {"format": "pt"}
    sharded: bool  # the folder has model.safetensors.index.json

    def total_bytes(self) -> int:
        return sum(t[2] for t in self.tensors.values())


def scan_checkpoint(root: str | Path) -> CheckpointIndex:
    root = Path(root)
    if not root.is_dir():
        raise SafetensorsError(f"{root}: not a directory")
    if (root / INDEX_NAME).exists():
        try:
            weight_map = json.loads((root / INDEX_NAME).read_text())["weight_map"]
        except (json.JSONDecodeError, KeyError) as exc:
            raise SafetensorsError(f"{root / INDEX_NAME}: no readable weight_map ({exc})") from None
        files, sharded = sorted(set(weight_map.values())), True
        if not files:
            raise SafetensorsError(f"{root / INDEX_NAME}: empty weight_map")
    elif (root / SINGLE_NAME).exists():
        files, sharded = [SINGLE_NAME], False
    else:
        others = sorted(p.name for p in root.iterdir() if p.suffix in WEIGHT_SUFFIXES)
        raise SafetensorsError(
            f"{root}: no {SINGLE_NAME} or {INDEX_NAME}"
            + (
                f" (found {others}; re-save with save_pretrained to get safetensors)"
                if others
                else ""
            )
        )
    tensors, shards, metadata = {}, {}, {}
    for name in files:
        path = root / name
        if not path.exists():
            raise SafetensorsError(f"{root}: shard {name} listed in the index is missing")
        header, data_start = read_header(path)
        metadata = header.pop("__metadata__", None) or metadata
        order = sorted(header, key=lambda k: header[k]["data_offsets"][0])
        shards[name] = order
        for key in order:
            info = header[key]
            begin, end = info["data_offsets"]
            if key in tensors:
                raise SafetensorsError(f"{root}: tensor {key} appears in two shards")
            tensors[key] = (
                path,
                data_start + begin,
                end - begin,
                info["dtype"],
                tuple(info["shape"]),
            )
    return CheckpointIndex(root, tensors, shards, metadata, sharded)


def plan_layout(idx: CheckpointIndex, max_shard_bytes: int) -> dict[str, list[str]]:
    """Output shard file -> tensor names in write order: a sharded source keeps its shards;
    an unsharded one above max_shard_bytes is split greedily into model-0000i-of-0000n."""
    if idx.sharded:
        return {name: list(keys) for name, keys in idx.shards.items()}
    keys = idx.shards[SINGLE_NAME]
    if idx.total_bytes() <= max_shard_bytes:
        return {SINGLE_NAME: list(keys)}
    groups, size = [[]], 0
    for k in keys:
        nb = idx.tensors[k][2]
        if groups[-1] and size + nb > max_shard_bytes:
            groups.append([])
            size = 0
        groups[-1].append(k)
        size += nb
    n = len(groups)
    return {f"model-{i + 1:05d}-of-{n:05d}.safetensors": g for i, g in enumerate(groups)}


def encode_header(idx: CheckpointIndex, keys: list[str]) -> bytes:
    """The 8-byte length + JSON header of one output shard holding `keys` (same dtypes and
    shapes as in idx, contiguous offsets in that order), padded to 8 bytes."""
    header, offset = {}, 0
    if idx.metadata:
        header["__metadata__"] = idx.metadata
    for k in keys:
        _, _, nb, dtype, shape = idx.tensors[k]
        header[k] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + nb]}
        offset += nb
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


def index_json(layout: dict[str, list[str]], idx: CheckpointIndex) -> str:
    weight_map = {k: shard for shard, keys in layout.items() for k in keys}
    size = sum(idx.tensors[k][2] for k in weight_map)
    return json.dumps({"metadata": {"total_size": size}, "weight_map": weight_map}, indent=2) + "\n"


class TensorReader:
    """Reads tensor bytes into caller buffers; keeps one unbuffered handle per source file."""

    def __init__(self):
        self._handles: dict = {}

    def read_into(self, entry, buf, start: int = 0) -> None:
        """Fill `buf` (a writable byte memoryview) with the tensor's bytes [start, start+len)."""
        path, offset, nbytes, _, _ = entry
        want = len(buf)
        if start < 0 or start + want > nbytes:
            raise SafetensorsError(
                f"{path}: read [{start}, {start + want}) outside a tensor of {nbytes} bytes"
            )
        fh = self._handles.get(path)
        if fh is None:
            fh = self._handles[path] = open(path, "rb", buffering=0)
        fh.seek(offset + start)
        got = 0
        while got < want:
            n = fh.readinto(buf[got:])
            if not n:
                raise SafetensorsError(f"{path}: truncated tensor data at offset {offset}")
            got += n

    def close(self) -> None:
        for fh in self._handles.values():
            fh.close()
        self._handles.clear()


class BackgroundWriter:
    """One thread that writes (file, buffer, nbytes) jobs in submission order, so disk writes
    (kernel copies) overlap with the caller's arithmetic. Buffers come from a fixed pool:
    `get_buffer()` blocks until the writer has released one, which bounds memory."""

    def __init__(self, n_buffers: int, nbytes: int):
        import torch

        self._free: queue.Queue = queue.Queue()
        for _ in range(n_buffers):
            self._free.put(torch.empty(nbytes, dtype=torch.uint8))
        self._jobs: queue.Queue = queue.Queue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fh, buf, n = job
            try:
                if self._error is None:
                    fh.write(memoryview(buf.numpy())[:n])
            except BaseException as exc:  # re-raised in the caller's thread
                self._error = exc
            self._free.put(buf)

    def get_buffer(self):
        self._raise()
        return self._free.get()

    def write(self, fh, buf, nbytes: int) -> None:
        self._raise()
        self._jobs.put((fh, buf, nbytes))

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def flush(self) -> None:
        """Wait until every submitted job is written."""
        self._jobs.put(None)
        self._thread.join()
        self._raise()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join()
        self._raise()
