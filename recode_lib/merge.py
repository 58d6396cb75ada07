"""One-pass interpolation/extrapolation of two checkpoints over a whole grid of alphas.

    theta_alpha = alpha * theta_high + (1 - alpha) * theta_low     (computed as low + alpha*(high-low))

    from recode_lib.merge import merge_grid, MergeConfig
    merge_grid(MergeConfig(low="runs/.../lenient/final", high="runs/.../strict/final",
                           alphas=(-0.5, 0.0, 0.5, 1.0, 1.5), out="runs/.../merged"))
    # CLI: recode merge --low DIR --high DIR --alpha -0.5 --alpha 0.5 --out DIR [--force]

Writes one Hugging Face folder per alpha, `OUT/alpha_<repr(alpha)>` (see `alpha_dirname`).
Every tensor pair is read once and written to every output: the safetensors headers of all
outputs are computed up front from the source headers (same names, dtypes, shapes), written
first, then tensor bytes are streamed in order. Memory is a few copies of the largest tensor
(raw bytes are read with readinto, no mmap, so touched pages do not pile up), not the model.
Float tensors: float32 arithmetic (float64 stays float64), rounded back to the source dtype;
the result equals `(low.float() + alpha * (high.float() - low.float())).to(dtype)` bit for bit
and matches mergekit's task_arithmetic (base=low, weight=alpha on high, normalize off).
Non-float tensors are copied from `low`. Every non-weight file of `low` (config, tokenizer,
generation config, chat template...) is copied; trainer state files are not.
Sharding: a sharded `low` keeps its shard layout and index; an unsharded one is split into
shards with `model.safetensors.index.json` when it exceeds `max_shard_bytes`.
Errors before anything is written: missing/only-.bin weights, different architectures,
different key sets (tied vs untied embeddings named as such), shapes or dtypes.
Resumable and atomic: each output is built in `OUT/.alpha_<A>.tmp` and renamed when complete;
a complete `alpha_<A>` folder is skipped unless `force`.
It does NOT merge more than two checkpoints, LoRA adapters, or .bin/.gguf weights.
"""

from __future__ import annotations

import json
import shutil
import struct
from dataclasses import dataclass, field
from pathlib import Path

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".ckpt", ".msgpack", ".h5")
SKIP_FILES = {INDEX_NAME, "pytorch_model.bin.index.json", "trainer_state.json", "merge_info.json"}
FLOAT_DTYPES = {"F64", "F32", "F16", "BF16"}
_TORCH_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
                 "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8",
                 "BOOL": "bool", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2"}


class MergeError(ValueError):
    """Checkpoints that cannot be merged; raised before any output is written."""


@dataclass
class MergeConfig:
    low: str                      # theta at alpha = 0 (the lenient endpoint): an HF folder
    high: str                     # theta at alpha = 1 (the strict endpoint): an HF folder
    alphas: tuple = ()            # the grid; any real numbers, no duplicates
    out: str = "merged"           # parent folder of the alpha_<A> outputs
    force: bool = False           # rebuild complete outputs instead of skipping them
    max_shard_bytes: int = 5 * 1024**3   # unsharded sources above this are written sharded
    progress: bool = True         # tqdm bar over tensors
    extra: dict = field(default_factory=dict)   # recorded in merge_info.json


def alpha_dirname(alpha: float) -> str:
    """The output folder name of one alpha: alpha_0.5, alpha_-0.25, alpha_1.0."""
    return f"alpha_{float(alpha)!r}"


# --------------------------------------------------------------------------- reading headers
def read_header(path: Path) -> tuple[dict, int]:
    """(header dict, byte offset of the data section) of one safetensors file."""
    with open(path, "rb") as fh:
        raw = fh.read(8)
        if len(raw) != 8:
            raise MergeError(f"{path}: not a safetensors file (shorter than 8 bytes)")
        (n,) = struct.unpack("<Q", raw)
        if n > 100 * 1024**2:
            raise MergeError(f"{path}: not a safetensors file (header length {n})")
        try:
            header = json.loads(fh.read(n))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise MergeError(f"{path}: unreadable safetensors header ({exc})") from None
    return header, 8 + n


@dataclass
class _Source:
    """Tensor name -> (file, absolute offset, nbytes, dtype, shape) for one checkpoint."""
    root: Path
    tensors: dict
    shards: dict          # shard file name -> list of tensor names in offset order
    metadata: dict
    sharded: bool


def scan_checkpoint(root: str | Path) -> _Source:
    root = Path(root)
    if not root.is_dir():
        raise MergeError(f"{root}: not a directory")
    if (root / INDEX_NAME).exists():
        index = json.loads((root / INDEX_NAME).read_text())
        files = sorted(set(index.get("weight_map", {}).values()))
        if not files:
            raise MergeError(f"{root / INDEX_NAME}: empty weight_map")
        sharded = True
    elif (root / SINGLE_NAME).exists():
        files, sharded = [SINGLE_NAME], False
    else:
        others = sorted(p.name for p in root.iterdir() if p.suffix in WEIGHT_SUFFIXES)
        raise MergeError(f"{root}: no {SINGLE_NAME} or {INDEX_NAME}"
                         + (f" (found {others}; re-save with save_pretrained to get safetensors)"
                            if others else ""))
    tensors, shards, metadata = {}, {}, {}
    for name in files:
        path = root / name
        if not path.exists():
            raise MergeError(f"{root}: shard {name} listed in the index is missing")
        header, data_start = read_header(path)
        metadata = header.pop("__metadata__", None) or metadata
        order = sorted(header, key=lambda k: header[k]["data_offsets"][0])
        shards[name] = order
        for key in order:
            info = header[key]
            begin, end = info["data_offsets"]
            if key in tensors:
                raise MergeError(f"{root}: tensor {key} appears in two shards")
            tensors[key] = (path, data_start + begin, end - begin, info["dtype"],
                            tuple(info["shape"]))
    return _Source(root, tensors, shards, metadata, sharded)


def _config(root: Path) -> dict:
    path = root / "config.json"
    return json.loads(path.read_text()) if path.exists() else {}


def check_compatible(low: _Source, high: _Source) -> None:
    """Raise MergeError naming the first differences between two checkpoints."""
    cl, ch = _config(low.root), _config(high.root)
    for fld in ("model_type", "architectures"):
        if cl.get(fld) != ch.get(fld):
            raise MergeError(f"different {fld}: {low.root} has {cl.get(fld)!r}, "
                             f"{high.root} has {ch.get(fld)!r}")
    kl, kh = set(low.tensors), set(high.tensors)
    if kl != kh:
        only_l, only_h = sorted(kl - kh), sorted(kh - kl)
        tied = [k for k in only_l + only_h if k.endswith("lm_head.weight")]
        hint = (" (one checkpoint has tied embeddings, i.e. no lm_head.weight, the other does "
                "not; re-save both with the same tie_word_embeddings)") if tied else ""
        raise MergeError(f"different tensor names{hint}: only in {low.root}: {only_l[:5]}"
                         f"{'...' if len(only_l) > 5 else ''}; only in {high.root}: "
                         f"{only_h[:5]}{'...' if len(only_h) > 5 else ''}")
    for key in sorted(kl):
        _, _, _, dl, sl = low.tensors[key]
        _, _, _, dh, sh = high.tensors[key]
        if sl != sh:
            raise MergeError(f"tensor {key}: shape {list(sl)} in {low.root} but {list(sh)} "
                             f"in {high.root}")
        if dl != dh:
            raise MergeError(f"tensor {key}: dtype {dl} in {low.root} but {dh} in {high.root}")
        if dl not in _TORCH_DTYPES:
            raise MergeError(f"tensor {key}: unsupported dtype {dl}")


# --------------------------------------------------------------------------- output layout
def plan_layout(src: _Source, max_shard_bytes: int) -> dict[str, list[str]]:
    """Output shard file -> tensor names in write order."""
    if src.sharded:
        return {name: list(keys) for name, keys in src.shards.items()}
    keys = src.shards[SINGLE_NAME]
    total = sum(src.tensors[k][2] for k in keys)
    if total <= max_shard_bytes:
        return {SINGLE_NAME: list(keys)}
    groups, size = [[]], 0
    for k in keys:
        nb = src.tensors[k][2]
        if groups[-1] and size + nb > max_shard_bytes:
            groups.append([])
            size = 0
        groups[-1].append(k)
        size += nb
    n = len(groups)
    return {f"model-{i + 1:05d}-of-{n:05d}.safetensors": g for i, g in enumerate(groups)}


def encode_header(src: _Source, keys: list[str]) -> bytes:
    """The 8-byte length + JSON header of one output shard, padded to 8 bytes."""
    header, offset = {}, 0
    if src.metadata:
        header["__metadata__"] = src.metadata
    for k in keys:
        _, _, nb, dtype, shape = src.tensors[k]
        header[k] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + nb]}
        offset += nb
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


# --------------------------------------------------------------------------- the merge
def _read(handles: dict, entry, torch):
    path, offset, nbytes, dtype, shape = entry
    fh = handles.get(path)
    if fh is None:
        fh = handles[path] = open(path, "rb", buffering=0)
    buf = torch.empty(nbytes, dtype=torch.uint8)
    fh.seek(offset)
    view = memoryview(buf.numpy())
    got = 0
    while got < nbytes:
        n = fh.readinto(view[got:])
        if not n:
            raise MergeError(f"{path}: truncated tensor data at offset {offset}")
        got += n
    return buf.view(getattr(torch, _TORCH_DTYPES[dtype])).reshape(shape)


def _bytes(torch, t):
    return memoryview(t.reshape(-1).view(torch.uint8).numpy())


def merge_grid(cfg: MergeConfig) -> dict[float, Path]:
    """Merge every alpha of cfg.alphas in one pass; returns alpha -> output folder."""
    import torch
    from tqdm.auto import tqdm

    alphas = [float(a) for a in cfg.alphas]
    if not alphas:
        raise MergeError("no alphas given")
    if len(set(alphas)) != len(alphas):
        raise MergeError(f"duplicate alphas in {alphas}")
    low, high = scan_checkpoint(cfg.low), scan_checkpoint(cfg.high)
    check_compatible(low, high)
    out = Path(cfg.out)
    final = {a: out / alpha_dirname(a) for a in alphas}
    todo = [a for a in alphas if cfg.force or not final[a].is_dir()]
    if not todo:
        return final
    layout = plan_layout(low, cfg.max_shard_bytes)
    out.mkdir(parents=True, exist_ok=True)
    tmp = {a: out / f".{alpha_dirname(a)}.tmp" for a in todo}
    for a in todo:
        if tmp[a].exists():
            shutil.rmtree(tmp[a])      # a crashed earlier attempt
        tmp[a].mkdir()
        _copy_non_weight_files(low.root, tmp[a])
    handles: dict = {}
    total = sum(len(v) for v in layout.values())
    bar = tqdm(total=total, desc=f"merge x{len(todo)}", unit="tensor", disable=not cfg.progress)
    try:
        for shard, keys in layout.items():
            outs = {a: open(tmp[a] / shard, "wb") for a in todo}
            try:
                header = encode_header(low, keys)
                for fh in outs.values():
                    fh.write(header)
                for k in keys:
                    _merge_tensor(torch, _read(handles, low.tensors[k], torch),
                                  _read(handles, high.tensors[k], torch), todo, outs)
                    bar.update(1)
            finally:
                for fh in outs.values():
                    fh.close()
    finally:
        bar.close()
        for fh in handles.values():
            fh.close()
    for a in todo:
        if len(layout) > 1 or low.sharded:
            weight_map = {k: shard for shard, keys in layout.items() for k in keys}
            size = sum(low.tensors[k][2] for k in weight_map)
            (tmp[a] / INDEX_NAME).write_text(json.dumps(
                {"metadata": {"total_size": size}, "weight_map": weight_map}, indent=2) + "\n")
        _write_info(tmp[a], cfg, a)
        _publish(tmp[a], final[a])
    return final


def _merge_tensor(torch, lo, hi, alphas, outs) -> None:
    """Write lo + alpha*(hi-lo) for every alpha; non-float tensors copy lo."""
    if not lo.is_floating_point() or lo.dtype not in (torch.float32, torch.float64,
                                                       torch.float16, torch.bfloat16):
        data = _bytes(torch, lo)
        for a in alphas:
            outs[a].write(data)
        return
    work = torch.float64 if lo.dtype == torch.float64 else torch.float32
    lo32, hi32 = lo.to(work), hi.to(work)
    delta = hi32.sub_(lo32)          # hi32 is ours to modify (a fresh read or a fresh cast)
    buf = torch.empty_like(lo32)
    cast = torch.empty_like(lo) if lo.dtype != work else None
    for a in alphas:
        torch.mul(delta, a, out=buf)
        buf.add_(lo32)
        if cast is not None:
            cast.copy_(buf)
            outs[a].write(_bytes(torch, cast))
        else:
            outs[a].write(_bytes(torch, buf))


def _copy_non_weight_files(src: Path, dst: Path) -> None:
    for p in sorted(src.iterdir()):
        if p.is_file() and p.suffix not in WEIGHT_SUFFIXES and p.name not in SKIP_FILES \
                and not p.name.startswith("."):
            shutil.copy2(p, dst / p.name)


def _write_info(folder: Path, cfg: MergeConfig, alpha: float) -> None:
    from recode_lib.provenance import provenance
    info = {"alpha": alpha, "low": str(Path(cfg.low).resolve()),
            "high": str(Path(cfg.high).resolve()),
            "formula": "theta = low + alpha * (high - low), float32 math, source dtype out",
            **cfg.extra, "provenance": provenance()}
    (folder / "merge_info.json").write_text(json.dumps(info, indent=2) + "\n")


def _publish(tmp: Path, final: Path) -> None:
    """Atomically move a finished temp folder into place (replacing an old one under force)."""
    if final.exists():
        trash = final.with_name(f".{final.name}.old")
        if trash.exists():
            shutil.rmtree(trash)
        final.rename(trash)
        tmp.rename(final)
        shutil.rmtree(trash)
    else:
        tmp.rename(final)


# --------------------------------------------------------------------------- CLI
def add_arguments(parser) -> None:
    parser.add_argument("--low", required=True, help="checkpoint at alpha=0 (HF folder)")
    parser.add_argument("--high", required=True, help="checkpoint at alpha=1 (HF folder)")
    parser.add_argument("--alpha", action="append", required=True, type=str,
                        help="an alpha (repeatable; a comma-separated list also works)")
    parser.add_argument("--out", required=True, help="parent folder of the alpha_<A> outputs")
    parser.add_argument("--force", action="store_true", help="rebuild existing outputs")
    parser.add_argument("--max-shard-gb", type=float, default=5.0,
                        help="shard an unsharded source above this size (default 5)")
    parser.add_argument("--no-progress", action="store_true")


def parse_alphas(values) -> tuple[float, ...]:
    out = []
    for v in values:
        for part in str(v).split(","):
            if part.strip():
                try:
                    out.append(float(part))
                except ValueError:
                    raise MergeError(f"not a number: alpha {part!r}") from None
    return tuple(out)


def run(args) -> int:
    from recode_lib.cli import CliError
    try:
        cfg = MergeConfig(low=args.low, high=args.high, alphas=parse_alphas(args.alpha),
                          out=args.out, force=args.force,
                          max_shard_bytes=int(args.max_shard_gb * 1024**3),
                          progress=not args.no_progress)
        done = merge_grid(cfg)
    except MergeError as exc:
        raise CliError(str(exc)) from None
    for a, path in done.items():
        print(f"alpha={a!r}\t{path}")
    return 0
