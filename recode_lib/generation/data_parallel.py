"""Data-parallel generation: several vLLM engines at once, each in its own process on its devices.

    gen = get_generator("vllm", MODEL, tensor_parallel_size=2, data_parallel_size=4)  # 8 GPUs
    gen = DataParallelGenerator(MODEL, data_parallel_size=2, dtype="float32")  # CPU: a core each
    outs = gen.generate(prompts, SamplingConfig(n=16, temperature=0.8))   # = one engine's samples
    pool = gen.pool(); pool.call_each("call", [(fn, a) for a in alphas])   # fn(engine, a) each

It does not start servers (openai_backend talks to `vllm serve`), choose the number of GPUs (the
caller or plan does) or load weights (recode_lib.weights.sweep.engine_load_alpha runs inside the
engines through `call`).
More: docs/modules/generation.md (recode_lib.generation.data_parallel).
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import multiprocessing
import os
from collections.abc import Sequence

from recode_lib.core.ray_cluster import connect
from recode_lib.generation.base import (
    Callback,
    Completion,
    GenerationError,
    Generator,
    SampleRequest,
    SamplingConfig,
    prompt_fingerprint,
)
from recode_lib.generation.vllm_backend import VLLMGenerator

DEFAULT_CHUNK = 512  # samples per engine call: the unit reported to the cache


# -- devices ----------------------------------------------------------------------------------


def device_kind(engine: str = "vllm") -> str:
    """ "cuda" when torch sees a GPU (and the engine is vLLM), else "cpu"."""
    if engine == "standin":
        return "cpu"
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() and torch.cuda.device_count() > 0 else "cpu"


def visible_devices(kind: str) -> list[int]:
    """GPU indices (cuda) or CPU core ids (cpu) this process may use."""
    if kind == "cuda":
        import torch

        return list(range(torch.cuda.device_count()))
    return (
        sorted(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else list(range(os.cpu_count() or 1))
    )


def engines_for(devices: int, tensor_parallel_size: int) -> int:
    """How many engines `devices` GPUs hold at `tensor_parallel_size` each (at least 1)."""
    return max(1, int(devices) // max(1, int(tensor_parallel_size)))


def engine_devices(
    data_parallel_size: int,
    tensor_parallel_size: int,
    kind: str,
    devices: Sequence[int] | None = None,
) -> list[tuple[int, ...]]:
    """The devices of each engine: on cuda `tensor_parallel_size` GPUs each, in order; on cpu
    an even share of the cores each (the remainder unused). ValueError when too few."""
    dp, tp = int(data_parallel_size), int(tensor_parallel_size)
    if dp < 1 or tp < 1:
        raise ValueError(
            f"data_parallel_size and tensor_parallel_size must be >= 1, got {dp}, {tp}"
        )
    devices = list(visible_devices(kind) if devices is None else devices)
    per = tp if kind == "cuda" else len(devices) // dp
    if per < (tp if kind == "cuda" else max(1, tp)) or per * dp > len(devices):
        what = "GPU(s)" if kind == "cuda" else "CPU core(s)"
        raise ValueError(
            f"{dp} engine(s) x tensor-parallel {tp} need more than the "
            f"{len(devices)} {what} visible"
        )
    return [tuple(devices[j * per : (j + 1) * per]) for j in range(dp)]


def engine_env(devices: Sequence[int], kind: str, tensor_parallel_size: int = 1) -> dict:
    """Environment of one engine process: CUDA_VISIBLE_DEVICES on cuda; on cpu vLLM's
    VLLM_CPU_OMP_THREADS_BIND (one core list per tensor-parallel rank, "|"-separated)."""
    devices = [int(d) for d in devices]
    if kind == "cuda":
        return {"CUDA_VISIBLE_DEVICES": ",".join(map(str, devices))}
    tp = max(1, int(tensor_parallel_size))
    per = max(1, len(devices) // tp)
    ranks = [devices[r * per : (r + 1) * per] for r in range(tp)]
    return {
        "VLLM_CPU_OMP_THREADS_BIND": "|".join(",".join(map(str, r)) for r in ranks),
        "OMP_NUM_THREADS": str(per),
    }


# -- the engine side (runs in the engine's process or Ray actor) -------------------------------


class EngineProcess:
    """One engine: a VLLMGenerator built in this process, generating built requests; `call`
    runs a caller's function on it (e.g. recode_lib.weights.sweep.engine_load_alpha: theta_alpha
    loaded in place). Local pools keep one per process (engine_call); Ray wraps the class as an
    actor."""

    def __init__(self):
        self.gen: VLLMGenerator | None = None
        self.state: dict = {}  # what `call`ed functions keep between calls

    def start(self, model: str, options: dict, env: dict, cores=None) -> dict:
        os.environ.update({str(k): str(v) for k, v in env.items()})
        if cores and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, set(int(c) for c in cores))
        self.gen = VLLMGenerator(model, **options)
        self.gen.engine()
        return {"pid": os.getpid(), "host": os.uname().nodename, "env": dict(env)}

    def generate(self, built: list, progress: bool = False) -> list[Completion]:
        return self.gen.run_built(built, progress=progress)

    def call(self, fn, *args):
        """fn(self, *args) in the engine's process (fn must be importable: sent by name)."""
        return fn(self, *args)

    def stop(self) -> None:
        if self.gen is not None:
            self.gen.close()
        self.gen, self.state = None, {}


WORKER: EngineProcess | None = None  # the engine of this process (local pools)


def engine_call(method: str, *args):
    """What a local pool's process runs: `method` of this process's EngineProcess."""
    global WORKER
    if WORKER is None:
        WORKER = EngineProcess()
    return getattr(WORKER, method)(*args)


# -- the caller's side ------------------------------------------------------------------------


class LocalEngine:
    """An engine in a local process (a one-worker spawn process pool)."""

    def __init__(self):
        self.executor = cf.ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("spawn")
        )

    def submit(self, method: str, *args) -> cf.Future:
        return self.executor.submit(engine_call, method, *args)

    def close(self) -> None:
        try:
            self.submit("stop").result(timeout=120)
        except Exception:  # noqa: BLE001 - the process goes away below anyway
            pass
        self.executor.shutdown(wait=True, cancel_futures=True)


class RayEngine:
    """An engine as a Ray actor (its GPUs reserved from the cluster, or CPUs on CPU nodes)."""

    def __init__(self, ray, *, gpus: int, cpus: int):
        actor_cls = ray.remote(EngineProcess)
        opts = {"num_gpus": gpus} if gpus else {"num_cpus": cpus}
        self.ray = ray
        self.actor = actor_cls.options(**opts).remote()

    def submit(self, method: str, *args) -> cf.Future:
        return getattr(self.actor, method).remote(*args).future()

    def close(self) -> None:
        try:
            self.submit("stop").result(timeout=120)
        except Exception:  # noqa: BLE001
            pass
        self.ray.kill(self.actor)


def cluster_address(explicit: str | None = None) -> str | None:
    """The Ray cluster to place engines on: `explicit`, else RAY_ADDRESS, else None (local)."""
    return explicit or os.environ.get("RAY_ADDRESS") or None


class EnginePool:
    """`size` engines of one model, started together (local processes or Ray actors)."""

    def __init__(
        self,
        model: str,
        size: int,
        options: dict,
        *,
        kind: str,
        tensor_parallel_size: int = 1,
        ray_address: str | None = None,
        devices: Sequence[int] | None = None,
        cores_per_engine: int = 1,
        env: dict | None = None,
    ):
        self.model, self.size, self.kind = str(model), int(size), kind
        self.options = {**options, "tensor_parallel_size": int(tensor_parallel_size)}
        self.ray_address = ray_address
        self.engines: list = []
        self.info: list[dict] = []
        tp = int(tensor_parallel_size)
        if ray_address:
            ray = connect(ray_address)
            if kind == "cuda" or self.options.get("engine", "vllm") == "vllm":
                # the cluster's GPUs decide, not the caller's (a CPU head node drives GPU nodes)
                self.kind = kind = "cuda" if ray.cluster_resources().get("GPU", 0) >= tp else "cpu"
            self.engines = [
                RayEngine(ray, gpus=tp if kind == "cuda" else 0, cpus=int(cores_per_engine) * tp)
                for _ in range(self.size)
            ]
            envs = [
                {}
                if kind == "cuda"
                else {
                    "VLLM_CPU_OMP_THREADS_BIND": "nobind",
                    "OMP_NUM_THREADS": str(int(cores_per_engine)),
                }
            ] * self.size
            cores = [None] * self.size
        else:
            slots = engine_devices(self.size, tp, kind, devices)
            envs = [engine_env(s, kind, tp) for s in slots]
            cores = [s if kind == "cpu" else None for s in slots]
            self.engines = [LocalEngine() for _ in range(self.size)]
        futures = [
            e.submit("start", self.model, self.options, {**(env or {}), **own}, c)
            for e, own, c in zip(self.engines, envs, cores, strict=True)
        ]
        try:
            self.info = [self.result(j, f) for j, f in enumerate(futures)]
        except BaseException:
            self.close()
            raise

    def result(self, j: int, future: cf.Future):
        try:
            return future.result()
        except Exception as exc:
            raise GenerationError(
                f"engine {j} of {self.size} ({self.model}): {type(exc).__name__}: {exc}"
            ) from exc

    def submit(self, j: int, method: str, *args) -> cf.Future:
        return self.engines[j].submit(method, *args)

    def call_each(self, method: str, args: Sequence[tuple]) -> list:
        """`method(*args[j])` on engine j for every j given, at once; the results in order."""
        futures = [self.submit(j, method, *a) for j, a in enumerate(args)]
        return [self.result(j, f) for j, f in enumerate(futures)]

    def close(self) -> None:
        for e in self.engines:
            e.close()
        self.engines = []


# -- splitting the work -----------------------------------------------------------------------


def episode_key(request: SampleRequest) -> tuple[str, int]:
    """(fingerprint of the conversation up to its first assistant message, sample index): the
    same for every turn of one episode."""
    msgs = request.messages
    cut = next((i for i, m in enumerate(msgs) if m.get("role") == "assistant"), len(msgs))
    return prompt_fingerprint(msgs[:cut] or msgs), int(request.index)


def is_continuation(request: SampleRequest) -> bool:
    return any(m.get("role") == "assistant" for m in request.messages)


def assign(keys: Sequence[tuple[str, int]], engines: int, placed: dict | None = None) -> list[int]:
    """The engine of each request: `placed` ones keep theirs; the others are grouped by prompt
    (all samples of a prompt together), groups larger than an even share are cut into pieces
    of that share, and pieces go largest first to the least loaded engine. Records the new
    placements in `placed`."""
    placed = {} if placed is None else placed
    load = [0] * engines
    out: list[int | None] = [None] * len(keys)
    groups: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        if k in placed:
            out[i] = placed[k]
            load[placed[k]] += 1
        else:
            groups.setdefault(k[0], []).append(i)
    new = sum(len(g) for g in groups.values())
    if new:
        cap = max(1, math.ceil(new / engines))
        pieces = [g[s : s + cap] for g in groups.values() for s in range(0, len(g), cap)]
        pieces.sort(key=len, reverse=True)  # stable: ties keep request order
        for piece in pieces:
            j = min(range(engines), key=lambda e: (load[e], e))
            for i in piece:
                out[i] = j
                placed[keys[i]] = j
            load[j] += len(piece)
    return out  # type: ignore[return-value]


class DataParallelGenerator(Generator):
    """`data_parallel_size` engines of `model` (see the module docstring); the other keywords
    are VLLMGenerator's (tensor_parallel_size, engine, tools, prepare_tokenizer, engine_kwargs).
    `devices`: the GPU indices / CPU cores to spread over (default: all visible);
    `cores_per_engine`: CPUs each Ray actor reserves on CPU nodes; `engine_env`: more
    environment for every engine process (set before the engine starts)."""

    backend = "vllm"

    def __init__(
        self,
        model: str,
        *,
        data_parallel_size: int,
        tensor_parallel_size: int = 1,
        chunk_size: int = DEFAULT_CHUNK,
        tokenizer=None,
        engine: str = "vllm",
        tools=None,
        prepare_tokenizer=None,
        ray_address: str | None = None,
        devices: Sequence[int] | None = None,
        cores_per_engine: int = 1,
        engine_env: dict | None = None,
        **engine_kwargs,
    ):
        if isinstance(data_parallel_size, bool) or int(data_parallel_size) < 1:
            raise ValueError(f"data_parallel_size must be >= 1, got {data_parallel_size!r}")
        self.front = VLLMGenerator(
            model,
            tensor_parallel_size=tensor_parallel_size,
            tokenizer=tokenizer,
            engine=engine,
            tools=tools,
            prepare_tokenizer=prepare_tokenizer,
            **engine_kwargs,
        )
        self.model = self.front.model
        self.data_parallel_size = int(data_parallel_size)
        self.tensor_parallel_size = int(tensor_parallel_size)
        self.chunk_size = int(chunk_size)
        self.engine_name = engine
        self.kind = device_kind(engine)
        self.ray_address = cluster_address(ray_address) if engine == "vllm" else ray_address
        self.devices = None if devices is None else list(devices)
        self.cores_per_engine = int(cores_per_engine)
        self.engine_env = dict(engine_env or {})
        self.placed: dict = {}
        self._pool: EnginePool | None = None

    def pool(self) -> EnginePool:
        """The engines, started on first use (all at once)."""
        if self._pool is None:
            options = {
                "engine": self.engine_name,
                "chunk_size": self.chunk_size,
                **self.front.engine_kwargs,
            }
            self._pool = EnginePool(
                self.front.path,
                self.data_parallel_size,
                options,
                kind=self.kind,
                tensor_parallel_size=self.tensor_parallel_size,
                ray_address=self.ray_address,
                devices=self.devices,
                cores_per_engine=self.cores_per_engine,
                env=self.engine_env,
            )
        return self._pool

    def assign(self, requests: Sequence[SampleRequest]) -> list[int]:
        """The engine of each request (placements kept for the next call's continuations)."""
        if not any(is_continuation(r) for r in requests):
            self.placed = {}  # a new batch: forget the previous call's episodes
        return assign([episode_key(r) for r in requests], self.data_parallel_size, self.placed)

    def generate_samples(
        self,
        requests: Sequence[SampleRequest],
        sampling: SamplingConfig,
        callback: Callback | None = None,
        progress: bool = False,
    ) -> list[Completion]:
        return self.generate_via(requests, sampling, callback)

    def generate_via(
        self,
        requests: Sequence[SampleRequest],
        sampling: SamplingConfig,
        callback: Callback | None = None,
        call: tuple | None = None,
    ) -> list[Completion]:
        """generate_samples, each engine call made as run_on's `call` says."""
        built = self.front.build(requests, sampling)
        if not built:
            return []
        return self.run_on(self.assign(requests), built, callback, call)

    def run_on(
        self,
        engine_of: Sequence[int],
        built: Sequence,
        callback: Callback | None = None,
        call: tuple | None = None,
    ) -> list[Completion]:
        """Generate built[i] on engine engine_of[i], chunk by chunk, all engines at once. With
        `call` = (fn, *args) each chunk is generated by fn(engine, *args, chunk) in the engine
        (EngineProcess.call) instead of EngineProcess.generate: one engine call, so what fn
        sets up (e.g. the weights) holds for the chunk whatever else the engine is asked."""
        pool = self.pool()
        futures: dict = {}
        for j in range(pool.size):
            mine = [i for i, e in enumerate(engine_of) if e == j]
            for s in range(0, len(mine), self.chunk_size):
                idx = mine[s : s + self.chunk_size]
                chunk = [built[i] for i in idx]
                fut = (
                    pool.submit(j, "call", *call, chunk)
                    if call
                    else pool.submit(j, "generate", chunk)
                )
                futures[fut] = (j, idx)
        results: list[Completion | None] = [None] * len(built)
        try:
            for fut in cf.as_completed(futures):
                j, idx = futures[fut]
                comps = pool.result(j, fut)
                if len(comps) != len(idx):
                    raise GenerationError(
                        f"engine {j} returned {len(comps)} completions for {len(idx)} requests"
                    )
                for i, c in zip(idx, comps, strict=True):
                    results[i] = c
                    if callback is not None:
                        callback(i, c)
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
        return results  # type: ignore[return-value]

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def __repr__(self) -> str:
        return (
            f"DataParallelGenerator(model={self.model!r}, engines={self.data_parallel_size}, "
            f"tp={self.tensor_parallel_size}, ray={self.ray_address!r})"
        )


def resolve_data_parallel_size(
    requested, tensor_parallel_size: int = 1, engine: str = "vllm", ray_address: str | None = None
) -> int:
    """The engines to run: `requested` when >= 1; 0 (or None) = as many as the GPUs hold at
    `tensor_parallel_size` each — the Ray cluster's (ray_address or RAY_ADDRESS) when one is
    given, else this machine's visible ones — and 1 without GPUs (one engine on the CPU; ask
    for more explicitly: each takes an even share of the cores)."""
    if requested is None:
        requested = 0
    if isinstance(requested, bool) or not isinstance(requested, int) or requested < 0:
        raise ValueError(f"data_parallel_size must be a non-negative integer, got {requested!r}")
    if requested >= 1:
        return requested
    if engine != "vllm":
        return 1
    address = cluster_address(ray_address)
    if address:
        gpus = int(connect(address).cluster_resources().get("GPU", 0))
        return engines_for(gpus, tensor_parallel_size) if gpus else 1
    if device_kind(engine) != "cuda":
        return 1
    return engines_for(len(visible_devices("cuda")), tensor_parallel_size)
