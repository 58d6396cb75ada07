"""theta_alpha computed in memory and pushed into ONE live model: no checkpoint per alpha.

    pair = EndpointPair.load(low_dir, high_dir)          # both endpoints read once (CPU memory)
    for name, t in pair.theta(0.5): ...                  # theta_0.5, tensor by tensor
    HFModelSink(model).load(pair, 0.5)                   # transformers: copy into the live model
    VLLMEngineSink(llm).load(pair, 0.5)                  # offline vllm.LLM, updated in place
    VLLMServerSink(client).load(pair, 0.5)               # `trl vllm-serve` through TRL's VLLMClient

It does not write checkpoints (merge.py does), choose alphas or evaluate (sweep.py does).
More: docs/modules/weights.md (recode_lib.weights.live).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.core.models import model_stamp
from recode_lib.generation.vllm_weights import load_into_runner
from recode_lib.weights.merge import MergeError, check_compatible
from recode_lib.weights.safetensors_io import FLOAT_DTYPES, scan_checkpoint

VLLM_DTYPE_NAMES = {
    "F32": "float32",
    "F16": "float16",
    "BF16": "bfloat16",
    "F64": "float64",
    "I64": "int64",
    "I32": "int32",
    "I16": "int16",
    "I8": "int8",
    "U8": "uint8",
    "BOOL": "bool",
}


class LiveWeightsError(RecodeError, ValueError):
    """theta_alpha cannot be loaded into this model; the message names the tensors."""


def interpolate(low, high, alpha: float):
    """theta_alpha for one tensor pair: float math in float32 (float64 stays), source dtype out;
    non-float tensors are `low`. Bit-equal to what merge_grid writes."""
    if not low.is_floating_point():
        return low
    out = low.new_empty(low.shape)
    interpolate_into(low, high, alpha, out)
    return out


CHUNK = 1 << 18  # elements per chunk: cache-sized float32 scratch, reused (no big allocations)
# torch threads for the arithmetic on CPU. One, as merge.py: on cache-sized chunks a second thread
# gains little, and when the cores are shared it costs a lot (measured on 2 busy cores: 1.2 s per
# alpha for SmolLM2-135M with 1 thread, 15-19 s with 2).
COMPUTE_THREADS = 1


@contextmanager
def compute_threads(device=None):
    """torch's intra-op threads set to COMPUTE_THREADS for CPU arithmetic, restored after."""
    import torch

    if device is not None and torch.device(device).type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(COMPUTE_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def interpolate_into(low, high, alpha: float, dest, scratch: dict | None = None) -> None:
    """Write theta_alpha of one float tensor pair into `dest` (any float dtype, same shape):
    computed chunk by chunk in float32 scratch buffers (float64 for float64 sources), rounded
    to the source dtype first, so `dest` holds exactly what merge_grid writes (then cast to
    dest's dtype, e.g. float32 params of a model loaded in float32)."""
    import torch

    work = torch.float64 if low.dtype == torch.float64 else torch.float32
    if not (low.is_contiguous() and high.is_contiguous() and dest.is_contiguous()):
        lo = low.to(work)
        full = torch.mul(high.to(work) - lo, float(alpha)).add_(lo)
        dest.copy_(full.to(low.dtype))
        return
    lo_f, hi_f, de_f = low.view(-1), high.view(-1), dest.view(-1)
    scratch = {} if scratch is None else scratch
    key = (work, low.dtype, low.device)
    if key not in scratch:
        scratch[key] = (
            torch.empty(CHUNK, dtype=work, device=low.device),
            torch.empty(CHUNK, dtype=work, device=low.device),
            torch.empty(CHUNK, dtype=low.dtype, device=low.device),
        )
    l32, d32, rounded = scratch[key]
    for start in range(0, lo_f.numel(), CHUNK):
        n = min(CHUNK, lo_f.numel() - start)
        a, d = l32[:n], d32[:n]
        a.copy_(lo_f[start : start + n])
        d.copy_(hi_f[start : start + n])
        d.sub_(a)
        d.mul_(float(alpha))
        d.add_(a)
        if de_f.dtype == low.dtype or low.dtype == work:
            de_f[start : start + n].copy_(d)
        else:  # round to the source dtype, then widen
            rounded[:n].copy_(d)
            de_f[start : start + n].copy_(rounded[:n])


def endpoint_stamp(low, high) -> str:
    """A short stamp of both endpoint folders (file names, sizes, mtimes): a retrained or
    re-merged endpoint gives another stamp, so cached generations are not reused."""
    text = f"{model_stamp(low)}|{model_stamp(high)}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def alpha_model_id(low, high, alpha: float) -> str:
    """The model name an in-memory theta_alpha is evaluated under (run guard, generation
    cache): endpoints, their stamp and alpha."""
    stamp = endpoint_stamp(low, high)
    return f"theta_alpha[low={low}|high={high}|stamp={stamp}|alpha={float(alpha)!r}]"


@dataclass
class EndpointPair:
    """The two endpoints' tensors in memory (CPU unless `device`), in checkpoint order."""

    low: Path
    high: Path
    names: list
    low_t: dict
    high_t: dict
    dtypes: dict  # name -> safetensors dtype ("BF16", ...)
    shapes: dict  # name -> shape tuple

    @classmethod
    def load(cls, low, high, device: str = "cpu") -> EndpointPair:
        """Read both checkpoints once; raises MergeError (as merge_grid would) when they differ
        in architecture, tensor names (tied vs untied named), shapes or dtypes."""
        from safetensors.torch import load_file

        li, hi = scan_checkpoint(low), scan_checkpoint(high)
        check_compatible(li, hi)
        names = [k for shard in li.shards.values() for k in shard]
        low_t, high_t = {}, {}
        for idx, store in ((li, low_t), (hi, high_t)):
            for shard in idx.shards:
                store.update(load_file(str(idx.root / shard), device=device))
        return cls(
            Path(low),
            Path(high),
            names,
            low_t,
            high_t,
            {k: li.tensors[k][3] for k in names},
            {k: li.tensors[k][4] for k in names},
        )

    def theta(self, alpha: float, device=None) -> Iterator[tuple[str, object]]:
        """(name, theta_alpha tensor) in checkpoint order, computed one tensor at a time (on
        `device` when given: endpoints stay where they are, each pair is moved, computed, and
        the result kept there)."""
        scratch: dict = {}
        for k in self.names:
            lo, hi = self.low_t[k], self.high_t[k]
            if device is not None:
                lo, hi = lo.to(device, non_blocking=True), hi.to(device, non_blocking=True)
            if not lo.is_floating_point():
                yield k, lo
                continue
            out = lo.new_empty(lo.shape)
            with compute_threads(lo.device):
                interpolate_into(lo, hi, alpha, out, scratch)
            yield k, out

    def assign(self, alpha: float, dest: dict) -> None:
        """Write theta_alpha into the tensors of `dest` (name -> tensor, e.g. a model's
        state_dict) in place, chunk by chunk: no tensor-sized temporaries."""
        scratch: dict = {}
        for k in self.names:
            lo, hi = self.low_t[k], self.high_t[k]
            if lo.is_floating_point():
                if dest[k].device != lo.device:
                    lo, hi = lo.to(dest[k].device), hi.to(dest[k].device)
                with compute_threads(lo.device):
                    interpolate_into(lo, hi, alpha, dest[k], scratch)
            else:
                dest[k].copy_(lo)

    def metadata(self) -> list[tuple[str, str, list[int]]]:
        """(name, vLLM dtype name, shape) per tensor, in the order theta() yields them: what
        VLLMClient.update_named_params announces before streaming."""
        return [
            (k, VLLM_DTYPE_NAMES.get(self.dtypes[k], self.dtypes[k].lower()), list(self.shapes[k]))
            for k in self.names
        ]

    @property
    def float_names(self) -> list[str]:
        return [k for k in self.names if self.dtypes[k] in FLOAT_DTYPES]


class HFModelSink:
    """Loads theta_alpha into a live transformers model (CPU or one GPU) in place."""

    def __init__(self, model):
        self.model = model
        self._checked = False

    def check(self, pair: EndpointPair) -> None:
        """Every checkpoint tensor is a model tensor of the same shape; every model tensor is
        pushed or shares storage with a pushed one (tied embeddings). Raises naming them."""
        state = self.model.state_dict()
        unknown = [k for k in pair.names if k not in state]
        if unknown:
            raise LiveWeightsError(
                f"{pair.low}: tensors the live model does not have: {unknown[:5]}"
            )
        bad = [
            (k, tuple(state[k].shape), pair.shapes[k])
            for k in pair.names
            if tuple(state[k].shape) != tuple(pair.shapes[k])
        ]
        if bad:
            raise LiveWeightsError(f"shape mismatch (name, model, checkpoint): {bad[:5]}")
        pushed = {state[k].data_ptr() for k in pair.names}
        names = set(pair.names)  # state_dict holds no non-persistent buffers (rotary)
        uncovered = [k for k, t in state.items() if k not in names and t.data_ptr() not in pushed]
        if uncovered:
            tied = [k for k in uncovered if k.endswith("lm_head.weight")]
            hint = (
                (
                    " (the checkpoint has tied embeddings, the live model does not: load it with "
                    "the checkpoint's tie_word_embeddings)"
                )
                if tied
                else ""
            )
            raise LiveWeightsError(
                f"model tensors theta_alpha would not set{hint}: {uncovered[:5]}"
            )
        self._checked = True

    def load(self, pair: EndpointPair, alpha: float) -> None:
        import torch

        if not self._checked:
            self.check(pair)
        with torch.no_grad():
            pair.assign(alpha, self.model.state_dict())


# -- vLLM offline engine ---------------------------------------------------------------------


def allow_worker_functions() -> None:
    """Let `collective_rpc` ship a Python function to vLLM's worker processes (vLLM refuses to
    pickle callables otherwise). Call before the engine is created."""
    os.environ.setdefault("VLLM_ALLOW_INSECURE_SERIALIZATION", "1")


def load_alpha_on_worker(worker, low: str, high: str, alpha: float, device=None) -> int:
    """Runs inside one vLLM worker (collective_rpc passes the worker first): theta_alpha from
    the endpoints (read once per worker, cached on it) into the worker's model. Returns the
    number of tensors loaded."""
    key = (str(low), str(high))
    cached = getattr(worker, "_recode_endpoints", None)
    if cached is None or cached[0] != key:
        cached = (key, EndpointPair.load(low, high))
        worker._recode_endpoints = cached
    pair = cached[1]
    if device is None:
        device = getattr(worker, "device", None)
    load_into_runner(worker.model_runner, pair.theta(alpha, device=device))
    return len(pair.names)


class VLLMEngineSink:
    """Loads theta_alpha into a running offline `vllm.LLM` in place (see the module docstring)."""

    def __init__(self, llm, device=None):
        self.llm = llm
        self.device = device

    def load(self, pair: EndpointPair, alpha: float) -> None:
        rpc = getattr(self.llm, "collective_rpc", None)
        if rpc is not None:
            counts = rpc(
                load_alpha_on_worker,
                args=(str(pair.low), str(pair.high), float(alpha), self.device),
            )
            if any(c != len(pair.names) for c in counts):
                raise LiveWeightsError(
                    f"vLLM workers loaded {counts} tensors, expected {len(pair.names)} each"
                )
        else:  # TRL's colocate path (in-process engine)
            runner = self.llm.llm_engine.model_executor.driver_worker.model_runner
            load_into_runner(runner, pair.theta(alpha, device=self.device))
        self.llm.reset_prefix_cache()


class VLLMServerSink:
    """Pushes theta_alpha into a `trl vllm-serve` server with TRL's VLLMClient (NCCL)."""

    def __init__(self, client, device="cuda"):
        self.client = client
        self.device = device
        if getattr(client, "communicator", None) is None:
            client.init_communicator(device=device)

    def load(self, pair: EndpointPair, alpha: float) -> None:
        self.client.update_named_params(pair.metadata(), pair.theta(alpha, device=self.device))
        self.client.reset_prefix_cache()


def server_client(base_url: str):
    """TRL's VLLMClient for a `trl vllm-serve` server (base_url without /v1)."""
    from trl.generation.vllm_client import VLLMClient

    return VLLMClient(base_url=base_url.removesuffix("/").removesuffix("/v1"))


__all__ = [
    "EndpointPair",
    "HFModelSink",
    "LiveWeightsError",
    "MergeError",
    "VLLMEngineSink",
    "VLLMServerSink",
    "alpha_model_id",
    "allow_worker_functions",
    "endpoint_stamp",
    "interpolate",
    "interpolate_into",
    "load_alpha_on_worker",
    "server_client",
]
