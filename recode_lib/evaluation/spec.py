"""One evaluation spec (backend, sampling, limits) shared by every notebook, the CLI and math.

    spec = EvalSpec(backend="hf", temperature=0.0, max_new_tokens=256, n=1, seed=0,
                    batch_size=8, workers=2, on_config_change="set_aside")
    summary = spec.evaluate(model, problems, out_dir, benchmark="mbppplus")      # code
    summaries = evaluate_models({"start": MODEL, "gated": final}, problems, spec, OUT / "eval")
    summary, rows = spec.evaluate_with_samples(model, problems, out_dir)         # + this call's rows
    summary = spec.evaluate_math(model, problems, out_dir)                       # math domain

    spec.fingerprint(), spec.protocol()      # what makes two evaluations comparable
    EvalSpec.from_dict(recorded, backend="vllm", n=250)   # a recorded spec, execution changed

`sampling()` is the SamplingConfig; `generator_kwargs()` maps the backend to its options (hf:
batch_size; vllm: tensor_parallel_size; openai: base_url, concurrency). Every call goes through
recode_lib.evaluation.codegen.evaluate or .math.evaluate_math, so every result folder has the
run/model-stamp guard. It adds no evaluation logic of its own.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from recode_lib.data import load_benchmark
from recode_lib.evaluation.codegen import evaluate
from recode_lib.evaluation.math import evaluate_math
from recode_lib.evaluation.multiturn import evaluate_setting
from recode_lib.generation import SamplingConfig, get_generator
from recode_lib.jsonl import read_jsonl
from recode_lib.sandbox.tools import ToolLimits

BACKENDS = ("hf", "vllm", "openai", "vllm_standin")
# The fields that decide how a point is sampled and scored. Two evaluations with equal values are
# comparable points (they may differ in n, seed, backend and execution settings: those change
# how many draws or how fast, not the distribution drawn from or how it is judged).
PROTOCOL_FIELDS = ("temperature", "top_p", "max_new_tokens", "reasoning", "early_stop")
SETTINGS = ("single", "tool", "agentic")   # = recode_lib.environments.SETTINGS


@dataclass(frozen=True)
class EvalSpec:
    """How to evaluate (every field has the CLI's default unless noted).

    backend:         hf | vllm | openai | vllm_standin (vllm's path on CPU, dry runs)
    temperature, top_p, max_new_tokens, n, seed: the SamplingConfig
    k:               the pass@k to report (each <= n)
    reasoning:       ask for reasoning before the code (the prompt style)
    batch_size:      hf backend batch size
    tensor_parallel_size: vllm backend
    base_url, concurrency: openai backend (a served model)
    workers:         sandbox workers (None: CPU count)
    early_stop:      stop a sample's tests at the first failure
    on_config_change: "raise" (CLI) or "set_aside" (notebooks: a re-run moves stale results aside)
    progress:        show progress bars
    setting:         single | tool | agentic (paper B's settings; recode_lib.evaluation.multiturn)
    max_turns:       assistant turns per episode (tool/agentic)
    max_tool_calls:  tool calls per episode (tool/agentic; over it: a tool error)
    tool_time_limit_s, tool_memory_mb, tool_max_output_chars: limits of one tool call
    ray:             None (this machine's pool) or a Ray address (local | auto | ray://host:port):
                     the samples' sandbox runs as Ray tasks (recode_lib.sandbox.fanout; `workers`
                     is then per task), single setting only
    chunk_size:      with ray: records per Ray task (None: the fan-out's default)
    """

    backend: str = "hf"
    temperature: float = 0.0
    top_p: float = 1.0
    max_new_tokens: int = 512
    n: int = 1
    seed: int = 0
    k: tuple[int, ...] = (1,)
    reasoning: bool = True
    batch_size: int = 8
    tensor_parallel_size: int = 1
    base_url: str = "http://localhost:8000/v1"
    concurrency: int = 8
    workers: int | None = None
    early_stop: bool = False
    on_config_change: str = "raise"
    progress: bool = True
    setting: str = "single"
    max_turns: int = 5
    max_tool_calls: int = 4
    tool_time_limit_s: float = 10.0
    tool_memory_mb: int = 1024
    tool_max_output_chars: int = 4096
    ray: str | None = None
    chunk_size: int | None = None

    def __post_init__(self):
        if self.backend not in BACKENDS:
            raise ValueError(f"EvalSpec.backend must be one of {BACKENDS}, got {self.backend!r}")
        if self.setting not in SETTINGS:
            raise ValueError(f"EvalSpec.setting must be one of {SETTINGS}, got {self.setting!r}")
        if self.setting != "single" and self.backend == "openai":
            raise ValueError(f"EvalSpec: the {self.setting} setting runs on the hf or vllm backend")
        if self.ray is not None and self.setting != "single":
            raise ValueError(f"EvalSpec: ray fans out the single setting's sandbox; the "
                             f"{self.setting} setting runs its tool calls on this machine")
        if self.chunk_size is not None and (self.ray is None or self.chunk_size < 1):
            raise ValueError(f"EvalSpec.chunk_size ({self.chunk_size}) needs ray set and >= 1")
        if self.max_turns < 1 or self.max_tool_calls < 0:
            raise ValueError("EvalSpec.max_turns must be >= 1 and max_tool_calls >= 0")
        object.__setattr__(self, "k", tuple(sorted({int(x) for x in self.k})))
        self.sampling()                                   # validates the sampling fields

    def replace(self, **changes) -> "EvalSpec":
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def protocol(self) -> dict:
        """The sampling/scoring protocol (PROTOCOL_FIELDS): what a frontier point depends on."""
        return normalized_protocol({f: getattr(self, f) for f in PROTOCOL_FIELDS})

    def with_protocol(self, recorded: Mapping) -> "EvalSpec":
        """This spec with the protocol fields (PROTOCOL_FIELDS) taken from `recorded` (an
        EvalSpec.to_dict() or protocol() dict): sample exactly as a recorded evaluation did,
        keeping this spec's n, seed, k, backend and execution settings. Raises naming the
        protocol fields `recorded` lacks."""
        missing = [f for f in PROTOCOL_FIELDS if f not in recorded]
        if missing:
            raise ValueError(f"the recorded evaluation spec lacks {missing}; got {sorted(recorded)}")
        return self.replace(**{f: recorded[f] for f in PROTOCOL_FIELDS})

    def fingerprint(self) -> str:
        """A short stable hash of protocol(): equal fingerprints = points sampled the same way."""
        return protocol_fingerprint(self.protocol())

    def to_dict(self) -> dict:
        """Every field (JSON-ready), for recording the spec next to its results."""
        d = dataclasses.asdict(self)
        d["k"] = list(self.k)
        return d

    @classmethod
    def from_dict(cls, recorded: Mapping, **overrides) -> "EvalSpec":
        """A spec from to_dict() output (e.g. one notebook 06 recorded), with `overrides`
        applied; unknown field names raise naming them."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted((set(recorded) | set(overrides)) - names)
        if unknown:
            raise ValueError(f"EvalSpec has no field(s) {unknown}; known: {sorted(names)}")
        return cls(**{**dict(recorded), **overrides})

    def sampling(self) -> SamplingConfig:
        return SamplingConfig(temperature=self.temperature, top_p=self.top_p,
                              max_new_tokens=self.max_new_tokens, n=self.n, seed=self.seed)

    def tool_limits(self):
        """The sandbox limits of one tool call (recode_lib.sandbox.tools.ToolLimits)."""
        return ToolLimits(time_limit_s=self.tool_time_limit_s, memory_mb=self.tool_memory_mb,
                          max_output_chars=self.tool_max_output_chars)

    def generator_kwargs(self) -> dict:
        """The backend's own options."""
        if self.backend == "hf":
            return {"batch_size": self.batch_size}
        if self.backend in ("vllm", "vllm_standin"):
            return {"tensor_parallel_size": self.tensor_parallel_size}
        return {"base_url": self.base_url, "concurrency": self.concurrency}

    def evaluate(self, model, problems, out_dir, *, benchmark: str | None = None,
                 generator=None) -> dict:
        """recode_lib.evaluation.codegen.evaluate with this spec; returns the summary.
        `generator` reuses a loaded backend (e.g. one model over several benchmarks); in the
        tool/agentic settings it must render the tools (environments.rollout.tool_generator)."""
        if self.setting != "single":
            return evaluate_setting(
                str(model), problems, setting=self.setting, out_dir=out_dir, backend=self.backend,
                sampling=self.sampling(), k=self.k, reasoning=self.reasoning, benchmark=benchmark,
                generator=generator, generator_kwargs=None if generator is not None
                else self.generator_kwargs(), max_turns=self.max_turns,
                max_tool_calls=self.max_tool_calls, limits=self.tool_limits(),
                workers=self.workers, early_stop=self.early_stop, progress=self.progress,
                on_config_change=self.on_config_change)
        return evaluate(str(model), problems, backend=self.backend, sampling=self.sampling(),
                        out_dir=out_dir, k=self.k, reasoning=self.reasoning, benchmark=benchmark,
                        generator=generator,
                        generator_kwargs=None if generator is not None else self.generator_kwargs(),
                        workers=self.workers, early_stop=self.early_stop, progress=self.progress,
                        on_config_change=self.on_config_change, ray=self.ray,
                        chunk_size=self.chunk_size)

    def evaluate_with_samples(self, model, problems, out_dir, *, benchmark: str | None = None
                              ) -> tuple[dict, list[dict]]:
        """(summary, the sample rows of exactly these problems and n), in problem order; the
        folder may hold more (e.g. an earlier call with more problems)."""
        summary = self.evaluate(model, problems, out_dir, benchmark=benchmark)
        return summary, call_samples(out_dir, problems, self.n)

    def evaluate_math(self, model, problems, out_dir) -> dict:
        """recode_lib.evaluation.math.evaluate_math with this spec; returns the summary."""
        return evaluate_math(str(model), problems, backend=self.backend, sampling=self.sampling(),
                             out_dir=out_dir, k=self.k, generator_kwargs=self.generator_kwargs(),
                             on_config_change=self.on_config_change)


def normalized_protocol(protocol: Mapping) -> dict:
    """PROTOCOL_FIELDS with canonical types (1 and 1.0 are the same temperature)."""
    types = {"temperature": float, "top_p": float, "max_new_tokens": int, "reasoning": bool,
             "early_stop": bool}
    return {f: None if protocol.get(f) is None else types[f](protocol[f]) for f in PROTOCOL_FIELDS}


def protocol_fingerprint(protocol: Mapping) -> str:
    """The 12-hex fingerprint of a protocol dict (EvalSpec.protocol())."""
    canon = json.dumps(normalized_protocol(protocol), sort_keys=True)
    return hashlib.sha256(canon.encode()).hexdigest()[:12]


def call_samples(out_dir: str | Path, problems: Sequence, n: int) -> list[dict]:
    """The rows of out_dir/samples.jsonl for these problems and sample indices 0..n-1, in order;
    raises KeyError naming a missing one."""
    by_id = {r["id"]: r for r in read_jsonl(Path(out_dir) / "samples.jsonl")}
    wanted = [f"{p.id}#{i}" for p in problems for i in range(n)]
    missing = [w for w in wanted if w not in by_id]
    if missing:
        raise KeyError(f"{out_dir}/samples.jsonl lacks {missing[:5]}")
    return [by_id[w] for w in wanted]


def evaluate_models(models: Mapping[str, object], problems, spec: EvalSpec, out_root,
                    *, benchmark: str | None = None, domain: str = "code") -> dict[str, dict]:
    """{name: summary} for each model, evaluated into out_root/<name> (domain "code" or "math")."""
    if domain not in ("code", "math"):
        raise ValueError(f"domain must be 'code' or 'math', got {domain!r}")
    out = {}
    for name, model in models.items():
        folder = Path(out_root) / name
        out[name] = (spec.evaluate(model, problems, folder, benchmark=benchmark) if domain == "code"
                     else spec.evaluate_math(model, problems, folder))
    return out


def evaluate_benchmarks(model, benchmarks: Sequence[str], spec: EvalSpec, out_root, *,
                        limit: int | None = None, log=print) -> dict[str, dict]:
    """{benchmark: summary} for one model over several benchmarks (its first `limit` problems
    each), loading the generator once; results in out_root/<benchmark>."""
    generator = get_generator(spec.backend, str(model), **spec.generator_kwargs())
    out = {}
    try:
        for name in benchmarks:
            problems = load_benchmark(name, limit=limit or None)
            s = out[name] = spec.evaluate(model, problems, Path(out_root) / name, benchmark=name,
                                          generator=generator)
            if log:
                log(f"{name}: {s['n_problems']} problems, pass@1 {s.get('pass@1', float('nan')):.3f}, "
                    f"throughput {s['timing']['problems_per_minute'] or 0:.2f} problems/min "
                    "(new work only)")
    finally:
        close = getattr(generator, "close", None)
        if close:
            close()
    return out
