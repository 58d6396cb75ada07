"""One evaluation spec (backend, sampling, sandbox, limits) shared by every notebook, the CLI and
math.

    spec = EvalSpec(backend="hf", temperature=0.0, max_new_tokens=256, n=1, seed=0,
                    batch_size=8, sandbox=SandboxConfig(workers=2), on_config_change="set_aside")
    summary = spec.evaluate(model, problems, out_dir, benchmark="mbppplus")      # code
    summaries = evaluate_models({"start": MODEL, "gated": final}, problems, spec, OUT / "eval")
    summary, rows = spec.evaluate_with_samples(model, problems, out_dir)  # + this call's rows
    summary = spec.evaluate_math(model, problems, out_dir)                       # math domain

    spec.fingerprint(), spec.protocol()      # what makes two evaluations comparable
    EvalSpec.from_dict(recorded, backend="vllm", n=250)   # a recorded spec, execution changed

Every field is documented in its metadata["help"]: `recode eval`'s options are generated from
these fields (recode_lib.cli.eval), so the CLI and the library have one set of defaults.
`sandbox` is the execution sandbox's SandboxConfig (recode_lib.sandbox.config: workers,
isolation, sealed inputs, ...); `workers=` is kept as a shorthand for its `workers` (what the
notebooks pass), and `spec.workers` reads it. `sampling()` is the SamplingConfig;
`generator_kwargs()` maps the backend to its options (hf: batch_size, precision; vllm:
tensor_parallel_size, data_parallel_size (recode_lib.generation.data_parallel); openai:
base_url, concurrency). Code evaluation in every setting goes
through the one loop (recode_lib.evaluation.loop.run_evaluation), math through
recode_lib.evaluation.math.evaluate_math, so every result folder has the run/model-stamp guard.
A recorded spec (to_dict) from before `sandbox` existed (with `workers`, or neither) still loads.
It adds no evaluation logic of its own.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path

from recode_lib.core.bf16 import AUTO, resolve_precision
from recode_lib.core.jsonl import read_jsonl
from recode_lib.core.models import PRECISIONS
from recode_lib.data import load_benchmark
from recode_lib.environments.settings import SETTINGS

# the math module is bound as a module (not its function) so that spec, loop and math may
# be imported in any order
from recode_lib.evaluation import math as eval_math
from recode_lib.evaluation.episodes import generator_for
from recode_lib.evaluation.guard import ON_CHANGE, adopt_evaluation
from recode_lib.evaluation.loop import run_evaluation
from recode_lib.generation import BACKENDS, SamplingConfig, backend_options
from recode_lib.sandbox.config import ISOLATION_MODES, SandboxConfig
from recode_lib.sandbox.tools import ToolLimits

# The fields that decide how a point is sampled and scored. Two evaluations with equal values are
# comparable points (they may differ in n, seed, backend and execution settings: those change
# how many draws or how fast, not the distribution drawn from or how it is judged).
PROTOCOL_FIELDS = ("temperature", "top_p", "max_new_tokens", "reasoning", "early_stop", "precision")
# Protocol fields added after records were written: a recorded protocol without one had its
# default, and a field at that default stays out of the fingerprint (old fingerprints hold).
LATER_PROTOCOL_DEFAULTS = {"precision": "native"}
SAMPLED_TEMPERATURE = 0.8  # the temperature when n > 1 and none is given


def option(default, help: str, **meta):
    """A field with its documentation (metadata["help"]) and CLI hints (choices, metavar)."""
    if isinstance(default, SandboxConfig):
        return field(default_factory=lambda: default, metadata={"help": help, **meta})
    return field(default=default, metadata={"help": help, **meta})


def sandbox_config(value, where: str = "EvalSpec.sandbox") -> SandboxConfig:
    """A SandboxConfig from itself or its dict (a recorded spec); unknown names raise."""
    if isinstance(value, SandboxConfig):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a SandboxConfig or its dict, got {type(value).__name__}")
    names = {f.name for f in dataclasses.fields(SandboxConfig)}
    unknown = sorted(set(value) - names)
    if unknown:
        raise ValueError(f"{where} has no field(s) {unknown}; known: {sorted(names)}")
    return SandboxConfig(**value)


@dataclass(frozen=True)
class EvalSpec:
    """How to evaluate: every field's meaning is its metadata["help"] (`recode eval --help`)."""

    backend: str = option(
        "hf",
        "generation backend: hf, vllm, openai (a served model) or "
        "vllm_standin (vllm's path on CPU, dry runs)",
        choices=BACKENDS,
    )
    temperature: float | None = option(
        None,
        f"softmax temperature, 0 = greedy (default: 0 when n is 1, else {SAMPLED_TEMPERATURE})",
    )
    top_p: float = option(1.0, "nucleus sampling mass in (0, 1]; 1 = off")
    max_new_tokens: int = option(
        512, "generation budget per turn (hitting it in the single setting is a format error)"
    )
    n: int = option(1, "samples per problem")
    seed: int = option(0, "base seed; sample i of a prompt uses sample_seed(seed, prompt, i)")
    k: tuple[int, ...] = option((1,), "pass@k to report (each <= n; repeatable)")
    reasoning: bool = option(
        True,
        "ask for reasoning (a <think> section) before the code: the prompt style",
        off_help="ask for the code directly, no <think> section",
    )
    batch_size: int = option(8, "hf backend batch size")
    precision: str = option(
        "native",
        "hf backend: how the weights are held while generating: "
        "native (as loaded: float32 on a CPU), bfloat16, or int8 (dynamic "
        "quantization of every Linear, CPU only; ~2x faster decoding on 2 "
        "cores), float32, or auto (bfloat16 where the machine computes bf16 "
        "natively, else native; resolved when the spec is made). Other "
        "numerics, so part of the protocol",
        choices=PRECISIONS + (AUTO,),
    )
    tensor_parallel_size: int = option(1, "vllm backend: GPUs per model")
    data_parallel_size: int = option(
        0,
        "vllm backend: engines side by side, each on "
        "tensor_parallel_size GPUs of its own (samples split "
        "across them, identical to one engine's); 0 = as many as "
        "the visible GPUs hold (the Ray cluster's with RAY_ADDRESS), "
        "1 on a CPU",
    )
    base_url: str = option("http://localhost:8000/v1", "openai backend: the server's URL")
    concurrency: int = option(8, "openai backend: requests in flight")
    sandbox: SandboxConfig = option(
        SandboxConfig(),
        "the execution sandbox (SandboxConfig); a record's own time and memory limits win",
        options={
            "workers": "sandbox workers (default: CPU count; with ray: per task, default 1)",
            "isolation": "sandbox isolation (recode_lib.sandbox.limits)",
            "sealed_inputs": "call tests: hand each test's input to the program only after the "
            "previous test reported (no precomputing later tests; ~1.3-1.45x "
            "slower)",
            "checker_fallback": "judge CodeContests+ problems by exact comparison when their "
            "testlib checkers cannot be built (no C++ compiler); default: refuse, naming "
            "the package to install (recode_lib.sandbox.checker)",
        },
        choices={"isolation": ISOLATION_MODES},
    )
    early_stop: bool = option(
        False,
        "stop a sample's tests at the first failure (faster; the "
        "outcome class is then decided by that test alone)",
    )
    on_config_change: str = option(
        "raise",
        "when the output folder holds results of another "
        "configuration: raise, or set_aside (move them to "
        "<out>.stale-<k> and start clean: what notebooks use)",
        choices=ON_CHANGE,
    )
    progress: bool = option(True, "show progress bars", off_help="no progress bars")
    env_missing_ok: bool = option(
        False,
        "BigCodeBench without its environment (`make bcb-env`, "
        "recode_lib.core.bench_env): refuse to evaluate it (default), or "
        "judge the problems whose libraries the sandbox lacks as "
        "env_missing, left out of pass@k (the smoke profile)",
    )
    setting: str = option(
        "single",
        "paper B's setting: single-turn, Python tool calls, or a "
        "sandboxed terminal (tool/agentic: hf or vllm backends)",
        choices=SETTINGS,
    )
    max_turns: int = option(5, "tool/agentic: assistant turns per episode")
    max_tool_calls: int = option(4, "tool/agentic: tool calls per episode (over it: a tool error)")
    tool_time_limit_s: float = option(10.0, "tool/agentic: seconds per tool call")
    tool_memory_mb: int = option(1024, "tool/agentic: memory (MB) of one tool call")
    tool_max_output_chars: int = option(
        4096, "tool/agentic: stdout/stderr characters returned per tool call"
    )
    ray: str | None = option(
        None,
        "run the sandbox as Ray tasks: local (a cluster on this "
        "machine), auto (the `ray start` cluster) or ray://host:port; the "
        "sandbox's workers are then per task (default 1); single setting "
        "only. Needs pip install 'recode[scale]'",
        metavar="ADDRESS",
    )
    chunk_size: int | None = option(
        None, "with ray: records per Ray task (default: ~4 chunks per task slot, at most 64)"
    )
    workers: InitVar[int | None] = None  # shorthand for sandbox.workers (spec.workers reads it)

    def __post_init__(self, workers):
        sandbox = sandbox_config(self.sandbox)
        if workers is not None:
            sandbox = sandbox.replace(workers=workers)
        object.__setattr__(self, "sandbox", sandbox)
        if self.temperature is None:
            object.__setattr__(self, "temperature", 0.0 if self.n == 1 else SAMPLED_TEMPERATURE)
        if self.backend not in BACKENDS:
            raise ValueError(f"EvalSpec.backend must be one of {BACKENDS}, got {self.backend!r}")
        if self.setting not in SETTINGS:
            raise ValueError(f"EvalSpec.setting must be one of {SETTINGS}, got {self.setting!r}")
        if self.on_config_change not in ON_CHANGE:
            raise ValueError(
                f"EvalSpec.on_config_change must be one of {ON_CHANGE}, got "
                f"{self.on_config_change!r}"
            )
        if self.precision == AUTO:  # the protocol records what it became on this machine
            object.__setattr__(
                self, "precision", "native" if self.backend != "hf" else resolve_precision(AUTO)
            )
        if self.precision not in PRECISIONS:
            raise ValueError(
                f"EvalSpec.precision must be one of {PRECISIONS} or 'auto', got {self.precision!r}"
            )
        if self.precision != "native" and self.backend != "hf":
            raise ValueError(
                f"EvalSpec.precision {self.precision!r} is an option of the hf "
                f"backend, not {self.backend!r}"
            )
        if self.setting != "single" and self.backend == "openai":
            raise ValueError(f"EvalSpec: the {self.setting} setting runs on the hf or vllm backend")
        if self.ray is not None and self.setting != "single":
            raise ValueError(
                f"EvalSpec: ray fans out the single setting's sandbox; the "
                f"{self.setting} setting runs its tool calls on this machine"
            )
        if self.chunk_size is not None and (self.ray is None or self.chunk_size < 1):
            raise ValueError(f"EvalSpec.chunk_size ({self.chunk_size}) needs ray set and >= 1")
        if self.max_turns < 1 or self.max_tool_calls < 0:
            raise ValueError("EvalSpec.max_turns must be >= 1 and max_tool_calls >= 0")
        object.__setattr__(self, "k", tuple(sorted({int(x) for x in self.k})))
        self.sampling()  # validates the sampling fields

    @classmethod
    def from_sampling(cls, sampling: SamplingConfig | None, **fields) -> EvalSpec:
        """A spec sampling as `sampling` does (its temperature, top_p, max_new_tokens, n, seed),
        with the other `fields`; ValueError for stop strings (no field of a spec)."""
        sampling = sampling or SamplingConfig()
        if sampling.stop:
            raise ValueError(
                f"EvalSpec: stop strings are not part of an evaluation spec, got "
                f"{list(sampling.stop)}"
            )
        return cls(
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_new_tokens=sampling.max_new_tokens,
            n=sampling.n,
            seed=sampling.seed,
            **fields,
        )

    def replace(self, **changes) -> EvalSpec:
        """A copy with some fields changed (`workers` included: the sandbox's)."""
        if "sandbox" in changes and "workers" not in changes:
            changes["workers"] = sandbox_config(changes["sandbox"]).workers
        return dataclasses.replace(self, **changes)

    def protocol(self) -> dict:
        """The sampling/scoring protocol (PROTOCOL_FIELDS): what a frontier point depends on."""
        return normalized_protocol({f: getattr(self, f) for f in PROTOCOL_FIELDS})

    def with_protocol(self, recorded: Mapping) -> EvalSpec:
        """This spec with the protocol fields (PROTOCOL_FIELDS) taken from `recorded` (an
        EvalSpec.to_dict() or protocol() dict): sample exactly as a recorded evaluation did,
        keeping this spec's n, seed, k, backend and execution settings. Raises naming the
        protocol fields `recorded` lacks."""
        recorded = {**LATER_PROTOCOL_DEFAULTS, **recorded}
        missing = [f for f in PROTOCOL_FIELDS if f not in recorded]
        if missing:
            raise ValueError(
                f"the recorded evaluation spec lacks {missing}; got {sorted(recorded)}"
            )
        return self.replace(**{f: recorded[f] for f in PROTOCOL_FIELDS})

    def fingerprint(self) -> str:
        """A short stable hash of protocol(): equal fingerprints = points sampled the same way."""
        return protocol_fingerprint(self.protocol())

    def to_dict(self) -> dict:
        """Every field (JSON-ready; `sandbox` as its dict), for recording the spec next to its
        results."""
        d = dataclasses.asdict(self)
        d["k"] = list(self.k)
        return d

    @classmethod
    def from_dict(cls, recorded: Mapping, **overrides) -> EvalSpec:
        """A spec from to_dict() output (e.g. one notebook 06 recorded), with `overrides`
        applied; unknown field names raise naming them. A recorded spec without `sandbox`
        (written before it existed) gets the default SandboxConfig with its `workers`."""
        names = {f.name for f in dataclasses.fields(cls)} | {"workers"}
        unknown = sorted((set(recorded) | set(overrides)) - names)
        if unknown:
            raise ValueError(f"EvalSpec has no field(s) {unknown}; known: {sorted(names)}")
        return cls(**{**dict(recorded), **overrides})

    def sampling(self) -> SamplingConfig:
        return SamplingConfig(
            temperature=self.temperature,
            top_p=self.top_p,
            max_new_tokens=self.max_new_tokens,
            n=self.n,
            seed=self.seed,
        )

    def tool_limits(self):
        """The sandbox limits of one tool call (recode_lib.sandbox.tools.ToolLimits)."""
        return ToolLimits(
            time_limit_s=self.tool_time_limit_s,
            memory_mb=self.tool_memory_mb,
            max_output_chars=self.tool_max_output_chars,
        )

    def generator_kwargs(self) -> dict:
        """The backend's own options (recode_lib.generation.backend_options)."""
        return backend_options(
            self.backend,
            batch_size=self.batch_size,
            tensor_parallel_size=self.tensor_parallel_size,
            base_url=self.base_url,
            concurrency=self.concurrency,
            precision=self.precision,
            data_parallel_size=self.data_parallel_size,
        )

    def evaluate(
        self, model, problems, out_dir, *, benchmark: str | None = None, generator=None
    ) -> dict:
        """The evaluation loop (recode_lib.evaluation.loop.run_evaluation) with this spec, in
        its setting; returns the summary. `generator` reuses a loaded backend (e.g. one model
        over several benchmarks); in the tool/agentic settings it must render the tools
        (episodes.generator_for / environments.rollout.tool_generator)."""
        return run_evaluation(
            self, model, problems, out_dir, benchmark=benchmark, generator=generator
        )

    def evaluate_with_samples(
        self, model, problems, out_dir, *, benchmark: str | None = None
    ) -> tuple[dict, list[dict]]:
        """(summary, the sample rows of exactly these problems and n), in problem order; the
        folder may hold more (e.g. an earlier call with more problems)."""
        summary = self.evaluate(model, problems, out_dir, benchmark=benchmark)
        return summary, call_samples(out_dir, problems, self.n)

    def evaluate_math(self, model, problems, out_dir) -> dict:
        """recode_lib.evaluation.math.evaluate_math with this spec; returns the summary."""
        return eval_math.evaluate_math(
            str(model),
            problems,
            backend=self.backend,
            sampling=self.sampling(),
            out_dir=out_dir,
            k=self.k,
            generator_kwargs=self.generator_kwargs(),
            on_config_change=self.on_config_change,
        )


# The constructor's `workers` (an InitVar) is a shorthand; reading it gives the sandbox's. Set
# after the class is made: a property in the class body would become the InitVar's default.
EvalSpec.workers = property(
    lambda self: self.sandbox.workers, doc="The sandbox's workers (sandbox.workers)."
)


def normalized_protocol(protocol: Mapping) -> dict:
    """PROTOCOL_FIELDS with canonical types (1 and 1.0 are the same temperature)."""
    types = {
        "temperature": float,
        "top_p": float,
        "max_new_tokens": int,
        "reasoning": bool,
        "early_stop": bool,
        "precision": str,
    }
    protocol = {**LATER_PROTOCOL_DEFAULTS, **protocol}
    return {f: None if protocol.get(f) is None else types[f](protocol[f]) for f in PROTOCOL_FIELDS}


def protocol_fingerprint(protocol: Mapping) -> str:
    """The 12-hex fingerprint of a protocol dict (EvalSpec.protocol())."""
    canon = normalized_protocol(protocol)
    for name, default in LATER_PROTOCOL_DEFAULTS.items():
        if canon[name] == default:
            del canon[name]
    canon = json.dumps(canon, sort_keys=True)
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


def evaluate_models(
    models: Mapping[str, object],
    problems,
    spec: EvalSpec,
    out_root,
    *,
    benchmark: str | None = None,
    domain: str = "code",
    earlier: Mapping[str, object] | None = None,
) -> dict[str, dict]:
    """{name: summary} for each model, evaluated into out_root/<name> (domain "code" or "math").
    `earlier`: {name: a folder where that same model was evaluated before} (e.g. notebook 06's
    evaluation of a run 07 evaluates again): with spec.on_config_change "set_aside", a folder
    not started yet begins from it (evaluation.guard.adopt_evaluation), so samples drawn with
    the same configuration on the same problems are not generated twice; any difference and
    the guard sets them aside and they are generated. With "raise" nothing is adopted (a
    folder this call did not write must not make it raise)."""
    if domain not in ("code", "math"):
        raise ValueError(f"domain must be 'code' or 'math', got {domain!r}")
    out = {}
    for name, model in models.items():
        folder = Path(out_root) / name
        if earlier and name in earlier and spec.on_config_change == "set_aside":
            adopt_evaluation(earlier[name], folder)
        out[name] = (
            spec.evaluate(model, problems, folder, benchmark=benchmark)
            if domain == "code"
            else spec.evaluate_math(model, problems, folder)
        )
    return out


def evaluate_benchmarks(
    model,
    benchmarks: Sequence[str],
    spec: EvalSpec,
    out_root,
    *,
    limit: int | None = None,
    log=print,
) -> dict[str, dict]:
    """{benchmark: summary} for one model over several benchmarks (its first `limit` problems
    each), loading the generator once (the setting's: episodes.generator_for); results in
    out_root/<benchmark>."""
    generator = generator_for(spec, model)
    out = {}
    try:
        for name in benchmarks:
            problems = load_benchmark(name, limit=limit or None)
            s = out[name] = spec.evaluate(
                model, problems, Path(out_root) / name, benchmark=name, generator=generator
            )
            if log:
                log(
                    f"{name}: {s['n_problems']} problems, "
                    f"pass@1 {s.get('pass@1', float('nan')):.3f}, "
                    f"throughput {s['timing']['problems_per_minute'] or 0:.2f} problems/min "
                    "(new work only)"
                )
    finally:
        close = getattr(generator, "close", None)
        if close:
            close()
    return out
