"""The compute budget: hours per stage from its token counts and throughputs.

    rates = Throughputs.load()                    # defaults, or measured ones when present
    h = stage_hours(stage, placement_tp=2, rates=rates, cluster=cluster)   # StageHours

It measures nothing: defaults (cited in the docs) give way to measured rates in
runs/gpu_check/throughput.json or `recode plan --throughputs FILE`.
More: docs/modules/plan.md (recode_lib.plan.budget).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from recode_lib.core.paths import runs_dir
from recode_lib.plan.architectures import Architecture
from recode_lib.plan.stages import Stage

# decode tokens/s per GPU by model size (params up to N billion), bf16, long outputs:
SIZE_CLASSES: list[tuple[str, float, float, str]] = [
    # TensorRT-LLM's published H100 table (docs/source/performance.md, release 0.5.0): LLaMA-7B,
    # TP 1, 2,048 in / 2,048 out, batch 32: 2,230 output tok/s (FP8); third-party vLLM V1 runs of
    # Llama-3.1-8B on one H100 reach ~12,500 tok/s on short ShareGPT outputs. For 2k-8k-token
    # code responses at batch 64-256 we take 3,000.
    (
        "up_to_10b",
        10.0,
        3000.0,
        "TensorRT-LLM 0.5.0 H100 table (LLaMA-7B 2,230 tok/s at batch "
        "32, 2k/2k) and vLLM Llama-3.1-8B 1xH100 (~12.5k tok/s, short)",
    ),
    # decode is bound by reading the weights: scaled from the 70B row by parameter count
    # (third-party vLLM: DeepSeek-R1-Distill-Qwen-32B, one A100, ~580 tok/s)
    (
        "up_to_40b",
        40.0,
        800.0,
        "70B row scaled by size; vLLM R1-Distill-Qwen-32B 1xA100 ~580 tok/s",
    ),
    # TensorRT-LLM 0.5.0 H100 table: LLaMA-70B, TP 4, 2,048 in / 2,048 out: 1,583 tok/s = ~400
    # per GPU
    (
        "up_to_100b",
        100.0,
        400.0,
        "TensorRT-LLM 0.5.0 H100 table (LLaMA-70B TP4 2k/2k: 1,583 tok/s = ~400/GPU)",
    ),
]
PREFILL_WEIGHT = 0.1  # a prompt token costs ~1/10 of a generated one (compute-bound)
FULL_BATCH = 32  # the defaults assume at least this many sequences in flight
GPU_TFLOPS = 989.0  # H100 SXM dense BF16 (NVIDIA H100 datasheet); A100: 312
MFU = 0.25  # Llama 3 trained at 38-43% MFU on 16k H100s ("The Llama 3 Herd of
# Models", table 4); ZeRO-3 with small micro-batches and
# checkpointing runs well below that
SANDBOX_S_PER_RECORD = (
    1.0  # measured (docs/measured.md): EvalPlus runs 164 HumanEval+ records (124k inputs) in
)
# 15.4 s on 2 workers (~0.2 s per record and worker); CodeContests+
# and LiveCodeBench tests are larger
MEASURED_NAME = "throughput.json"  # under runs_dir("gpu_check"): runs/gpu_check/throughput.json


def size_class(arch: Architecture) -> tuple[str, float, str]:
    b = arch.params / 1e9
    for name, limit, rate, source in SIZE_CLASSES:
        if b <= limit:
            return name, rate, source
    name, _, rate, source = SIZE_CLASSES[-1]
    return name, rate * SIZE_CLASSES[-1][1] / b, source


@dataclass
class Throughputs:
    generation: dict = field(default_factory=dict)  # model id / size class -> tok/s per GPU
    train: dict = field(default_factory=dict)
    sandbox_s_per_record: float = SANDBOX_S_PER_RECORD
    data_parallel_efficiency: float = 1.0  # speed-up / engines (measured: make gpu-check)
    gpu_tflops: float = GPU_TFLOPS
    mfu: float = MFU
    source: str = "defaults"

    @classmethod
    def load(
        cls, path: str | Path | None = None, *, gpu_tflops: float = GPU_TFLOPS, mfu: float = MFU
    ) -> Throughputs:
        """Defaults, updated from the measured file (`path`, else runs/gpu_check/
        throughput.json) when it exists; ValueError for a file that is not such a mapping."""
        explicit = path is not None
        p = Path(path) if explicit else runs_dir("gpu_check", create=False) / MEASURED_NAME
        out = cls(gpu_tflops=gpu_tflops, mfu=mfu)
        if not p.is_file():
            if explicit:
                raise ValueError(f"throughput file {p} does not exist")
            return out
        try:
            data = json.loads(p.read_text())
        except ValueError as exc:
            raise ValueError(f"{p}: not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{p}: expected a mapping")
        for key, attr in (
            ("generation_tokens_per_s", "generation"),
            ("train_tokens_per_s", "train"),
        ):
            got = data.get(key) or {}
            if not isinstance(got, dict) or not all(
                isinstance(v, (int, float)) and v > 0 for v in got.values()
            ):
                raise ValueError(f"{p}: {key} must map names to positive tokens/s")
            setattr(out, attr, {str(k): float(v) for k, v in got.items()})
        if data.get("sandbox_s_per_record") is not None:
            out.sandbox_s_per_record = float(data["sandbox_s_per_record"])
        eff = data.get("data_parallel_efficiency")
        if eff is not None:
            if isinstance(eff, bool) or not isinstance(eff, (int, float)) or not 0 < eff <= 1.5:
                raise ValueError(
                    f"{p}: data_parallel_efficiency must be a number in (0, 1.5], got {eff!r}"
                )
            out.data_parallel_efficiency = float(eff)
        out.source = f"measured ({p})"
        return out

    def generation_rate(self, model: str, arch: Architecture) -> tuple[float, str]:
        """Decode tokens/s per GPU and where the number comes from."""
        cls_name, rate, source = size_class(arch)
        for key in (model, arch.name, cls_name):
            if key in self.generation:
                return self.generation[key], f"measured ({key})"
        return rate, source

    def train_rate(self, model: str, arch: Architecture) -> float | None:
        cls_name = size_class(arch)[0]
        for key in (model, arch.name, cls_name):
            if key in self.train:
                return self.train[key]
        return None


@dataclass
class StageHours:
    wall_h: float  # hours the stage occupies the cluster
    gpus: int  # GPUs busy meanwhile (every engine's, every concurrent run's)
    generation_h: float = 0.0  # wall hours spent generating
    train_h: float = 0.0
    sandbox_h: float = 0.0
    engines: int = 1  # vLLM engines side by side (data parallel)
    concurrent_runs: int = 1  # training runs side by side (one per node)
    cluster_gpus: int = 0  # GPUs the stage holds (0: just `gpus`)
    busy_gpu_h: float | None = None  # GPU-hours busy when not (generation + train) x gpus

    @property
    def gpu_h(self) -> float:
        if self.busy_gpu_h is not None:
            return self.busy_gpu_h
        return (self.generation_h + self.train_h) * self.gpus

    @property
    def utilisation(self) -> float:
        """GPU-hours busy over the GPU-hours the stage holds the cluster for."""
        held = (self.cluster_gpus or self.gpus) * self.wall_h
        return self.gpu_h / held if held > 0 else 0.0


def spread_engines(
    h: StageHours,
    *,
    tp: int,
    engines: int,
    requests: float,
    cluster_gpus: int,
    overlap_sandbox: bool = False,
    flush: float = 256,
    efficiency: float = 1.0,
    nodes: int = 1,
) -> StageHours:
    """A generation stage's hours with `engines` data-parallel engines (one engine's hours in
    `h`): the requests split evenly (recode_lib.generation.data_parallel; an alpha grid's last
    wave splits its alphas too), so generation divides by the engines used (at most one per
    request). The sandbox keeps its hours (the machine's workers), divided by `nodes` when
    there are several (it then runs on the Ray cluster: EvalSpec.ray); with `overlap_sandbox` (the
    single setting's evaluation on GPUs judges finished batches while the rest generate) the
    stage lasts the longer of the two plus the last batch's judging, else their sum.
    `efficiency`: the measured data-parallel speed-up per engine (make gpu-check; 1 = linear)."""
    k = max(1, min(int(engines), int(max(1, requests))))
    gen = h.generation_h / (k * (efficiency if k > 1 else 1.0))
    box = h.sandbox_h / max(1, int(nodes))
    if overlap_sandbox and box:
        tail = box * min(1.0, flush / max(1.0, float(requests)))
        wall = max(gen, box) + tail
    else:
        wall = gen + box
    return StageHours(
        wall, tp * k, generation_h=gen, sandbox_h=box, engines=k, cluster_gpus=cluster_gpus
    )


def spread_runs(
    h: StageHours, *, runs: int, per_node: int, nodes: int, cluster_gpus: int
) -> StageHours:
    """A training stage of `runs` independent runs (h: all of them one after another) with
    `per_node` runs fitting a node at once on `nodes` nodes: ceil(runs / slots) waves."""
    runs = max(1, int(runs))
    slots = max(1, int(per_node) * int(nodes))
    side = min(runs, slots)
    waves = math.ceil(runs / slots)
    f = waves / runs
    return StageHours(
        h.wall_h * f,
        h.gpus * side,
        generation_h=h.generation_h * f,
        train_h=h.train_h * f,
        sandbox_h=h.sandbox_h * f,
        concurrent_runs=side,
        cluster_gpus=cluster_gpus,
        busy_gpu_h=h.gpu_h,
    )


def gen_seconds(
    tokens_out: float,
    tokens_in: float,
    rate: float,
    gpus: int,
    concurrent: int | None,
    length_fraction: float,
) -> float:
    slow = 1.0 if concurrent is None else min(1.0, max(concurrent, 1) / FULL_BATCH)
    return (tokens_out * length_fraction + PREFILL_WEIGHT * tokens_in) / (rate * gpus * slow)


def stage_hours(
    stage: Stage,
    *,
    tp: int,
    concurrent: int | None,
    rates: Throughputs,
    length_fraction: float = 1.0,
) -> StageHours:
    w = stage.work
    sandbox = w.sandbox_records * rates.sandbox_s_per_record / max(1, w.sandbox_workers)
    if stage.engine is not None and stage.trainer is None:
        rate, _ = rates.generation_rate(stage.model, stage.engine.arch)
        gen = gen_seconds(w.gen_out_tokens, w.gen_in_tokens, rate, tp, concurrent, length_fraction)
        return StageHours(
            (gen + sandbox) / 3600, tp, generation_h=gen / 3600, sandbox_h=sandbox / 3600
        )
    t = stage.trainer
    gpus = t.processes
    peak = rates.gpu_tflops * 1e12 * rates.mfu
    n = t.arch.params
    if w.train_tokens:  # the reward model: pairs x epochs x tokens
        flops = (6 + (2 if t.gradient_checkpointing else 0)) * n * w.train_tokens
        train = flops / (gpus * peak) * stage.runs
        return StageHours(train / 3600, gpus, train_h=train / 3600)
    per_step = w.completions_per_step
    completion = w.completion_tokens * length_fraction
    tokens = per_step * (w.prompt_tokens + completion)
    gen = 0.0
    if t.engine is not None:
        rate, _ = rates.generation_rate(stage.model, t.arch)
        engine_gpus = gpus if t.engine.colocated else int(t.engine.tp)
        gen = gen_seconds(
            per_step * w.completion_tokens,
            per_step * w.prompt_tokens,
            rate,
            engine_gpus,
            concurrent,
            length_fraction,
        )
    measured = rates.train_rate(stage.model, t.arch)
    if measured:
        train = tokens / (measured * gpus)
    else:
        per_token = 6 + (2 if t.gradient_checkpointing else 0) + 2 + (2 if t.reference_model else 0)
        flops = per_token * n * tokens
        if w.rm_scored and t.reward_model is not None:
            flops += 2 * t.reward_model.arch.params * tokens
        train = flops / (gpus * peak)
    steps = w.steps * stage.runs
    box = (
        per_step * rates.sandbox_s_per_record / max(1, w.sandbox_workers)
        if w.sandbox_records
        else 0.0
    )
    return StageHours(
        steps * (gen + train + box) / 3600,
        gpus + (0 if t.engine is None or t.engine.colocated else int(t.engine.tp)),
        generation_h=steps * gen / 3600,
        train_h=steps * train / 3600,
        sandbox_h=steps * box / 3600,
    )
