"""One-pass interpolation/extrapolation of two checkpoints over a whole grid of alphas.

    theta_alpha = alpha * theta_high + (1 - alpha) * theta_low    (computed: low + alpha*(high-low))

It does NOT merge more than two checkpoints, LoRA adapters, or .bin/.gguf weights.
More: docs/modules/weights.md (recode_lib.weights.merge).
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.core.stamps import provenance
from recode_lib.weights.safetensors_io import (  # noqa: F401
    FLOAT_DTYPES,
    INDEX_NAME,
    SINGLE_NAME,
    TORCH_DTYPES,
    WEIGHT_SUFFIXES,
    BackgroundWriter,
    CheckpointIndex,
    SafetensorsError,
    TensorReader,
    encode_header,
    index_json,
    plan_layout,
    scan_checkpoint,
)

_PREALLOCATE = os.environ.get("RECODE_MERGE_PREALLOCATE", "1") != "0"
SKIP_FILES = {INDEX_NAME, "pytorch_model.bin.index.json", "trainer_state.json", "merge_info.json"}


class MergeError(RecodeError, ValueError):
    """Checkpoints that cannot be merged; raised before any output is written."""


@dataclass
class MergeConfig:
    low: str  # theta at alpha = 0 (the lenient endpoint): an HF folder
    high: str  # theta at alpha = 1 (the strict endpoint): an HF folder
    alphas: tuple = ()  # the grid; any real numbers, no duplicates
    out: str = "merged"  # parent folder of the alpha_<A> outputs
    force: bool = False  # rebuild complete outputs instead of skipping them
    max_shard_bytes: int = 5 * 1024**3  # unsharded sources above this are written sharded
    progress: bool = True  # tqdm bar over bytes
    chunk_elems: int = 1 << 18  # elements per chunk (cache-sized; memory ~ 2*n_alphas chunks)
    compute_threads: int = 1  # torch threads for the arithmetic (a writer thread runs beside)
    extra: dict = field(default_factory=dict)  # recorded in merge_info.json


def alpha_dirname(alpha: float) -> str:
    """The output folder name of one alpha: alpha_0.5, alpha_-0.25, alpha_1.0."""
    return f"alpha_{float(alpha)!r}"


def _config(root: Path) -> dict:
    path = root / "config.json"
    return json.loads(path.read_text()) if path.exists() else {}


def check_compatible(low: CheckpointIndex, high: CheckpointIndex) -> None:
    """Raise MergeError naming the first differences between two checkpoints."""
    cl, ch = _config(low.root), _config(high.root)
    for fld in ("model_type", "architectures"):
        if cl.get(fld) != ch.get(fld):
            raise MergeError(
                f"different {fld}: {low.root} has {cl.get(fld)!r}, {high.root} has {ch.get(fld)!r}"
            )
    kl, kh = set(low.tensors), set(high.tensors)
    if kl != kh:
        only_l, only_h = sorted(kl - kh), sorted(kh - kl)
        tied = [k for k in only_l + only_h if k.endswith("lm_head.weight")]
        hint = (
            (
                " (one checkpoint has tied embeddings, i.e. no lm_head.weight, the other does "
                "not; re-save both with the same tie_word_embeddings)"
            )
            if tied
            else ""
        )
        raise MergeError(
            f"different tensor names{hint}: only in {low.root}: {only_l[:5]}"
            f"{'...' if len(only_l) > 5 else ''}; only in {high.root}: "
            f"{only_h[:5]}{'...' if len(only_h) > 5 else ''}"
        )
    for key in sorted(kl):
        _, _, _, dl, sl = low.tensors[key]
        _, _, _, dh, sh = high.tensors[key]
        if sl != sh:
            raise MergeError(
                f"tensor {key}: shape {list(sl)} in {low.root} but {list(sh)} in {high.root}"
            )
        if dl != dh:
            raise MergeError(f"tensor {key}: dtype {dl} in {low.root} but {dh} in {high.root}")
        if dl not in TORCH_DTYPES:
            raise MergeError(f"tensor {key}: unsupported dtype {dl}")


# --------------------------------------------------------------------------- the merge
def merge_grid(cfg: MergeConfig) -> dict[float, Path]:
    """Merge every alpha of cfg.alphas in one pass; returns alpha -> output folder."""
    import torch
    from tqdm.auto import tqdm

    alphas = [float(a) for a in cfg.alphas]
    if not alphas:
        raise MergeError("no alphas given")
    if len(set(alphas)) != len(alphas):
        raise MergeError(f"duplicate alphas in {alphas}")
    if not all(math.isfinite(a) for a in alphas):
        raise MergeError(f"alphas must be finite numbers, got {alphas}")
    if cfg.chunk_elems < 1:
        raise MergeError(f"chunk_elems must be positive, got {cfg.chunk_elems}")
    try:
        low, high = scan_checkpoint(cfg.low), scan_checkpoint(cfg.high)
    except SafetensorsError as exc:
        raise MergeError(str(exc)) from None
    check_compatible(low, high)
    out = Path(cfg.out)
    final = {a: out / alpha_dirname(a) for a in alphas}
    todo = [a for a in alphas if cfg.force or not final[a].is_dir()]
    if not todo:
        return final
    layout = plan_layout(low, cfg.max_shard_bytes)
    existing = next(p for p in (out, *out.parents) if p.exists())
    need, free = low.total_bytes() * len(todo), shutil.disk_usage(existing).free
    if need > free:
        raise MergeError(
            f"{out}: {len(todo)} checkpoints need {need / 1e9:.2f} GB, "
            f"only {free / 1e9:.2f} GB free"
        )
    out.mkdir(parents=True, exist_ok=True)
    tmp = {a: out / f".{alpha_dirname(a)}.tmp" for a in todo}
    for a in todo:
        if tmp[a].exists():
            shutil.rmtree(tmp[a])  # left by a crashed earlier attempt
        tmp[a].mkdir()
        _copy_non_weight_files(low.root, tmp[a])
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.compute_threads)  # small chunks: few threads + the writer thread
    reader = TensorReader()
    esize = max(
        torch.empty((), dtype=getattr(torch, TORCH_DTYPES[t[3]])).element_size()
        for t in low.tensors.values()
    )
    writer = BackgroundWriter(n_buffers=2 * len(todo) + 2, nbytes=cfg.chunk_elems * esize)
    work = _Workspace(torch, cfg.chunk_elems)
    bar = tqdm(
        total=low.total_bytes(),
        desc=f"merge x{len(todo)}",
        unit="B",
        unit_scale=True,
        disable=not cfg.progress,
    )
    try:
        for shard, keys in layout.items():
            outs = [open(tmp[a] / shard, "wb") for a in todo]
            try:
                header = encode_header(low, keys)
                size = len(header) + sum(low.tensors[k][2] for k in keys)
                for fh in outs:
                    _preallocate(fh, size)
                    fh.write(header)
                for k in keys:
                    _merge_tensor(
                        torch, low.tensors[k], high.tensors[k], todo, outs, reader, writer, work
                    )
                    bar.update(low.tensors[k][2])
                writer.flush()
            finally:
                for fh in outs:
                    fh.close()
    finally:
        bar.close()
        reader.close()
        writer.close()
        torch.set_num_threads(threads)
    for a in todo:
        if len(layout) > 1 or low.sharded:
            (tmp[a] / INDEX_NAME).write_text(index_json(layout, low))
        _write_info(tmp[a], cfg, a)
        _publish(tmp[a], final[a])
    return final


class _Workspace:
    """Reusable float32/float64 chunk buffers and raw byte buffers (no per-tensor allocation)."""

    def __init__(self, torch, n: int):
        self.raw_lo = torch.empty(n * 8, dtype=torch.uint8)
        self.raw_hi = torch.empty(n * 8, dtype=torch.uint8)
        self.f = {
            dt: (torch.empty(n, dtype=dt), torch.empty(n, dtype=dt), torch.empty(n, dtype=dt))
            for dt in (torch.float32, torch.float64)
        }
        self.n = n


def _merge_tensor(torch, lo, hi, alphas, outs, reader, writer, ws) -> None:
    """Stream lo + alpha*(hi-lo) for every alpha into outs, chunk by chunk; non-float tensors
    are copies of lo. Arithmetic in float32 (float64 for float64 tensors)."""
    _, _, nbytes, dtype, _ = lo
    src = getattr(torch, TORCH_DTYPES[dtype])
    is_float = dtype in FLOAT_DTYPES
    esize = torch.empty((), dtype=src).element_size()
    work = torch.float64 if src == torch.float64 else torch.float32
    step = ws.n * esize
    for start in range(0, nbytes, step):
        nb = min(step, nbytes - start)
        n = nb // esize
        raw_lo = ws.raw_lo[:nb]
        reader.read_into(lo, memoryview(raw_lo.numpy()), start)
        if not is_float:
            for fh in outs:
                buf = writer.get_buffer()
                buf[:nb].copy_(raw_lo)
                writer.write(fh, buf, nb)
            continue
        raw_hi = ws.raw_hi[:nb]
        reader.read_into(hi, memoryview(raw_hi.numpy()), start)
        l32, d32, b32 = (t[:n] for t in ws.f[work])
        l32.copy_(raw_lo.view(src))
        d32.copy_(raw_hi.view(src))
        d32.sub_(l32)
        for a, fh in zip(alphas, outs, strict=True):
            buf = writer.get_buffer()
            target = buf[:nb].view(src)
            if src == work:
                torch.mul(d32, a, out=target)
                target.add_(l32)
            else:
                torch.mul(d32, a, out=b32)
                b32.add_(l32)
                target.copy_(b32)
            writer.write(fh, buf, nb)


def _preallocate(fh, size: int) -> None:
    """Reserve the file's final size up front (contiguous extents); a no-op where unsupported."""
    if _PREALLOCATE and hasattr(os, "posix_fallocate"):
        try:
            os.posix_fallocate(fh.fileno(), 0, size)
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise
            pass  # EOPNOTSUPP/EINVAL: the filesystem cannot; write anyway


def _copy_non_weight_files(src: Path, dst: Path) -> None:
    for p in sorted(src.iterdir()):
        if (
            p.is_file()
            and p.suffix not in WEIGHT_SUFFIXES
            and p.name not in SKIP_FILES
            and not p.name.startswith(".")
        ):
            shutil.copy2(p, dst / p.name)


def _write_info(folder: Path, cfg: MergeConfig, alpha: float) -> None:
    info = {
        "alpha": alpha,
        "low": str(Path(cfg.low).resolve()),
        "high": str(Path(cfg.high).resolve()),
        "formula": "theta = low + alpha * (high - low), float32 math, source dtype out",
        **cfg.extra,
        "provenance": provenance(),
    }
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


def parse_alphas(values) -> tuple[float, ...]:
    """Alphas from repeated and/or comma-separated values ("-0.5,0,1"); MergeError if one is not."""
    out = []
    for v in values:
        for part in str(v).split(","):
            if part.strip():
                try:
                    out.append(float(part))
                except ValueError:
                    raise MergeError(f"not a number: alpha {part!r}") from None
    return tuple(out)
