"""The plan: every GPU stage of a profile placed on a cluster, refused before any GPU work when
it cannot fit, and the compute budget per notebook.

    plan = make_plan(params, ClusterSpec(gpus=8, gpu_memory=80))   # params: {stem: {...}}
    plan.ok, plan.problems          # refusals: "01_crpl_synthesis / rewrites [second] ..."
    print(format_plan(plan)); print(format_budget(plan))
    plan.require()                  # PlanError with every refusal when a stage cannot fit

`params` maps each notebook the profile runs to its effective parameters
(recode_lib.runner.pipeline.profile_parameters builds it; `recode plan` and the pipeline call it). A
vLLM engine runs at the tensor-parallel size its notebook parameter says (GENERATOR_TP,
SECOND_GENERATOR_TP, JUDGE_TP, TENSOR_PARALLEL_SIZE; a recipe's vllm_tensor_parallel_size;
1 where the notebook has none); the plan also chooses the smallest size that fits and refuses a
stage whose configured size is smaller, naming the parameter to set. The memory rules are
recode_lib.plan.memory's, the budget's recode_lib.plan.budget's, the stages
recode_lib.plan.stages'. It starts nothing and imports no GPU package.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field

from recode_lib.core.errors import RecodeError
from recode_lib.plan.budget import StageHours, Throughputs, spread_engines, spread_runs, stage_hours
from recode_lib.plan.memory import GB, choose_tp, engine_need, extra_gpus, trainer_need
from recode_lib.plan.stages import Stage, StageError, notebook_stages

VARIANT_MARK = "@"  # a variant's stage is notebook "<stem>@<variant>" (recode_lib.runner.variants)


class PlanError(RecodeError, RuntimeError):
    """A profile that does not fit the cluster (the message names notebook, stage, numbers),
    or one the plan cannot read."""


@dataclass
class ClusterSpec:
    """The machines a profile runs on."""

    gpus: int = field(default=8, metadata={"help": "GPUs per node"})
    gpu_memory: float = field(default=80.0, metadata={"help": "memory per GPU in GB (1e9 bytes)"})
    nodes: int = field(
        default=1,
        metadata={
            "help": "nodes: data-parallel vLLM engines spread "
            "over all of them (a Ray cluster), "
            "independent training runs one per node"
        },
    )

    def __post_init__(self):
        if self.gpus < 1 or self.nodes < 1 or self.gpu_memory <= 0:
            raise ValueError(f"a cluster needs gpus >= 1, nodes >= 1, gpu_memory > 0; got {self}")

    @property
    def gpu_bytes(self) -> float:
        return float(self.gpu_memory) * GB

    def describe(self) -> str:
        nodes = f"{self.nodes} node(s) x " if self.nodes > 1 else ""
        return f"{nodes}{self.gpus} x {self.gpu_memory:g} GB"


@dataclass
class BudgetOptions:
    """Assumptions of the compute budget (recode_lib.plan.budget)."""

    length_fraction: float = field(
        default=1.0,
        metadata={
            "help": "mean response length as a fraction of the maximum (1.0: every response runs "
            "to its limit, an upper bound)"
        },
    )
    gpu_tflops: float = field(
        default=989.0, metadata={"help": "dense BF16 TFLOPS per GPU (H100 SXM 989, A100 312)"}
    )
    mfu: float = field(default=0.25, metadata={"help": "model FLOPs utilisation of training"})
    throughputs: str | None = field(
        default=None,
        metadata={
            "help": "measured throughputs (JSON; default runs/gpu_check/throughput.json when it "
            "exists; format in recode_lib/plan/budget.py)"
        },
    )


@dataclass
class Placement:
    notebook: str
    stage: str
    model: str
    where: str
    weights_gb: float  # per GPU
    kv_min_gb: float | None  # per GPU, the minimum the engine needs
    kv_batch_gb: float | None  # the stage's batch at full length (all GPUs of the engine)
    concurrent: int | None  # sequences of the stage's length the KV cache holds at once
    train_gb: float  # per GPU, training side
    need_gb: float  # per GPU, the largest part that must fit
    limit_gb: float
    tp: int | None
    tp_min: int | None
    gpus: int
    problem: str | None
    hours: StageHours
    notes: list = field(default_factory=list)
    formula: str = ""

    @property
    def fits(self) -> bool:
        return self.problem is None


@dataclass
class Plan:
    profile: str
    cluster: ClusterSpec
    placements: list[Placement]
    notes: list[str]
    throughput_source: str
    length_fraction: float

    @property
    def problems(self) -> list[str]:
        """The refusals of the profile's own stages (what `ok` and the exit status follow)."""
        return [p.problem for p in self.placements if p.problem and VARIANT_MARK not in p.notebook]

    @property
    def variant_problems(self) -> list[str]:
        """The refusals of its variants' stages ("<stem>@<variant>"): shown, but a variant is a
        run of its own (`recode reproduce --variant`, whose plan refuses it there)."""
        return [p.problem for p in self.placements if p.problem and VARIANT_MARK in p.notebook]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def tp_sizes(self) -> dict[str, int]:
        """'<notebook> / <stage>' -> the tensor-parallel size each vLLM engine runs at."""
        return {f"{p.notebook} / {p.stage}": p.tp for p in self.placements if p.tp}

    def notebook_hours(self) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for p in self.placements:
            d = out.setdefault(
                p.notebook,
                {
                    "wall_h": 0.0,
                    "gpu_h": 0.0,
                    "generation_h": 0.0,
                    "train_h": 0.0,
                    "sandbox_h": 0.0,
                    "stages": {},
                },
            )
            d["wall_h"] += p.hours.wall_h
            d["gpu_h"] += p.hours.gpu_h
            for k in ("generation_h", "train_h", "sandbox_h"):
                d[k] += getattr(p.hours, k)
            d["stages"][p.stage] = p.hours.wall_h
        return out

    @property
    def total_wall_h(self) -> float:
        """Every stage's wall hours, the variants' included."""
        return sum(p.hours.wall_h for p in self.placements)

    @property
    def variant_wall_h(self) -> dict[str, float]:
        """Wall hours of each variant's stages ("<stem>@<variant>"), by variant name: each is
        a run of its own (`recode reproduce --variant NAME`), so the profile alone takes
        total_wall_h less these."""
        out: dict[str, float] = {}
        for p in self.placements:
            if VARIANT_MARK in p.notebook:
                name = p.notebook.split(VARIANT_MARK, 1)[1]
                out[name] = out.get(name, 0.0) + p.hours.wall_h
        return out

    def require(self) -> None:
        if not self.ok:
            raise PlanError(refusal(self))

    def to_dict(self) -> dict:
        return {
            "profile": self.profile,
            "cluster": asdict(self.cluster),
            "ok": self.ok,
            "problems": self.problems,
            "variant_problems": self.variant_problems,
            "tp_sizes": self.tp_sizes,
            "notes": self.notes,
            "throughputs": self.throughput_source,
            "length_fraction": self.length_fraction,
            "total_wall_h": self.total_wall_h,
            "notebooks": self.notebook_hours(),
            "stages": [
                {
                    **{k: v for k, v in asdict(p).items() if k != "hours"},
                    "hours": asdict(p.hours),
                    "gpu_h": p.hours.gpu_h,
                }
                for p in self.placements
            ],
        }


def refusal(plan: Plan) -> str:
    head = (
        f"the {plan.profile} profile does not fit {plan.cluster.describe()}: "
        f"{len(plan.problems)} stage(s) refused before any GPU work"
    )
    return "\n".join([head] + [f"  - {p}" for p in plan.problems])


def _gb(x: float) -> float:
    return round(x / GB, 1)


def _tp_problem(e, tp, cluster, label) -> str | None:
    if tp < 1 or tp & (tp - 1):
        return f"{label}: tensor-parallel size {tp} is not a power of two"
    if e.arch.num_heads % tp:
        return (
            f"{label}: tensor-parallel size {tp} does not divide the model's "
            f"{e.arch.num_heads} attention heads (vLLM refuses it)"
        )
    if tp > cluster.gpus:
        n = engine_need(e, tp, cluster.gpu_bytes)
        return (
            f"{label}: runs at tensor-parallel size {tp} ({e.tp_param or 'fixed'}) but a "
            f"node has {cluster.gpus} GPU(s); at TP {tp} each GPU needs weights "
            f"{_gb(n.weights)} + KV >= {_gb(n.kv_min)} + 2.0 = {_gb(n.need)} GB of "
            f"{_gb(n.budget)} GB"
        )
    return None


def _place_engine(st: Stage, cluster: ClusterSpec, rates, length_fraction) -> Placement:
    e = st.engine
    label = f"{st.notebook} / {st.name} ({e.model}, vLLM)"
    gpu = cluster.gpu_bytes
    tp_min = choose_tp(e, cluster.gpus, gpu)
    problem = _tp_problem(e, e.tp, cluster, label)
    if problem and e.tp > cluster.gpus:
        wider = choose_tp(e, 64, gpu)
        problem += f" (fits from TP {wider}, on {wider} GPUs)" if wider else ""
    need = engine_need(e, e.tp if problem is None else (tp_min or 1), gpu)
    if problem is None:
        if not need.fits:
            parts = (
                f"weights {_gb(need.weights)} GB/GPU + KV >= {_gb(need.kv_min)} GB "
                f"(max_model_len {need.max_model_len}) + vLLM reserve 2.0 GB = "
                f"{_gb(need.need)} GB > {e.utilization:.2f} x {cluster.gpu_memory:g} GB = "
                f"{_gb(need.budget)} GB"
            )
            if tp_min is None:
                largest = max(e.arch.tp_sizes(cluster.gpus))
                big = engine_need(e, largest, gpu)
                problem = (
                    f"{label}: does not fit at any tensor-parallel size up to {largest} "
                    f"on {cluster.gpu_memory:g} GB GPUs: at TP {e.tp} {parts}"
                )
                if largest != e.tp:
                    problem += (
                        f"; at TP {largest} weights {_gb(big.weights)} + KV "
                        f"{_gb(big.kv_min)} + 2.0 = {_gb(big.need)} GB > "
                        f"{_gb(big.budget)} GB"
                    )
            else:
                fix = (
                    f"set {e.tp_param}: {tp_min} in the profile (or --set {e.tp_param}={tp_min})"
                    if e.tp_param and " " not in e.tp_param
                    else f"raise {e.tp_param} to {tp_min}"
                    if e.tp_param
                    else "the notebook runs this engine at TP 1 (no parameter)"
                )
                problem = (
                    f"{label}: needs tensor-parallel size {tp_min}, runs at {e.tp}: {parts}; {fix}"
                )
    hours = stage_hours(
        st,
        tp=e.tp,
        concurrent=need.concurrent if problem is None else None,
        rates=rates,
        length_fraction=length_fraction,
    )
    per_node = cluster.gpus // e.tp if e.tp <= cluster.gpus else 0
    if per_node:
        hours = spread_engines(
            hours,
            tp=e.tp,
            engines=per_node * cluster.nodes,
            requests=st.work.requests or 1,
            cluster_gpus=cluster.gpus * cluster.nodes,
            overlap_sandbox=st.work.overlap_sandbox,
            flush=st.work.judge_batch,
            nodes=cluster.nodes,
            efficiency=rates.data_parallel_efficiency,
        )
    where = f"vLLM u{e.utilization:.2f}" + (f" x{hours.engines}" if hours.engines > 1 else "")
    return Placement(
        st.notebook,
        st.name,
        e.model,
        where,
        _gb(need.weights),
        _gb(need.kv_min),
        _gb(need.kv_batch),
        need.concurrent,
        0.0,
        _gb(need.need),
        _gb(need.budget),
        e.tp,
        tp_min,
        e.tp,
        problem,
        hours,
        list(st.notes),
        st.work.formula,
    )


def _place_trainer(st: Stage, cluster: ClusterSpec, rates, length_fraction) -> Placement:
    t = st.trainer
    gpu = cluster.gpu_bytes
    label = f"{st.notebook} / {st.name} ({t.model}, training)"
    problem = None
    available = cluster.gpus * (1 if t.one_machine else cluster.nodes)
    wanted = t.processes + extra_gpus(t)
    if wanted > available:
        where = (
            "one node (the accelerate config has num_machines 1)"
            if (t.one_machine and cluster.nodes > 1)
            else f"{cluster.describe()}"
        )
        problem = (
            f"{label}: needs {wanted} GPU(s) ({t.processes} training process(es)"
            f"{' + ' + str(extra_gpus(t)) + ' for vLLM/RM servers' if extra_gpus(t) else ''}"
            f"), {where} has {available}; each needs "
            f"{_gb(trainer_need(t, gpu).total)} GB of {cluster.gpu_memory:g} GB"
        )
    e = t.engine
    tp_min = None
    kv_min = concurrent = None
    if e is not None:
        tp_min = choose_tp(e, min(cluster.gpus, t.processes) if e.colocated else cluster.gpus, gpu)
        bad_tp = _tp_problem(e, e.tp, cluster, label)
        if bad_tp:
            problem = problem or bad_tp
        elif e.colocated and t.processes % e.tp:
            problem = problem or (
                f"{label}: vllm_tensor_parallel_size {e.tp} does not divide "
                f"the {t.processes} training processes"
            )
        else:
            need = engine_need(e, e.tp, gpu)
            kv_min, concurrent = _gb(need.kv_min), need.concurrent
            if not need.fits and problem is None:
                problem = (
                    f"{label}: vLLM {'colocated ' if e.colocated else ''}at "
                    f"gpu_memory_utilization {e.utilization:.2f} ({_gb(need.budget)} GB of "
                    f"{cluster.gpu_memory:g} GB): weights {_gb(need.weights)} GB + KV >= "
                    f"{_gb(need.kv_min)} GB (max_model_len {need.max_model_len}) + 2.0 GB "
                    f"reserve = {_gb(need.need)} GB; set vllm_max_model_length, "
                    f"vllm_gpu_memory_utilization or {e.tp_param}"
                    + (f" (fits at TP {tp_min})" if tp_min else "")
                )
    tn = trainer_need(t, gpu)
    if not tn.fits and problem is None:
        problem = (
            f"{label}: {_gb(tn.total)} GB per GPU > {cluster.gpu_memory:g} GB "
            f"({tn.describe()} GB; {t.precision}, "
            f"{'ZeRO-3 over ' + str(t.processes) + ' GPU(s)' if t.zero3 else 'one process'})"
            + (f"; {t.fix}" if t.fix else "")
        )
    where = f"ZeRO-3 x{t.processes}" if t.zero3 else f"{t.processes} GPU, unsharded"
    where += f" {'bf16' if t.bytes_per_param == 8 else 'mixed'} {t.bytes_per_param} B/param"
    if e is not None:
        where += f" +vLLM {'coloc' if e.colocated else 'server'} u{e.utilization:.2f}"
    if t.reward_model is not None:
        where += f" +RM {t.reward_model.placement}"
    hours = stage_hours(
        st,
        tp=e.tp if e else 1,
        concurrent=None if problem else concurrent,
        rates=rates,
        length_fraction=length_fraction,
    )
    fits_node = t.one_machine and wanted <= cluster.gpus
    hours = (
        spread_runs(
            hours,
            runs=st.runs,
            per_node=cluster.gpus // wanted if fits_node else 0,
            nodes=cluster.nodes if fits_node else 1,
            cluster_gpus=cluster.gpus * cluster.nodes,
        )
        if fits_node
        else dataclasses.replace(hours, cluster_gpus=cluster.gpus * cluster.nodes)
    )
    if hours.concurrent_runs > 1:
        where += f" ({hours.concurrent_runs} runs at once)"
    states = next(iter(tn.parts.values()))
    vllm = tn.parts.get("vLLM (colocated)", 0.0)
    return Placement(
        st.notebook,
        st.name,
        t.model,
        where,
        _gb(states),
        kv_min,
        None,
        concurrent,
        _gb(tn.total - vllm),
        _gb(tn.total),
        cluster.gpu_memory,
        e.tp if e is not None else None,
        tp_min,
        wanted,
        problem,
        hours,
        list(st.notes) + [f"per GPU: {tn.describe()} GB"],
        st.work.formula,
    )


def make_plan(
    params: dict[str, dict],
    cluster: ClusterSpec,
    *,
    profile: str = "?",
    budget: BudgetOptions | None = None,
    rates: Throughputs | None = None,
    only=None,
    variants: dict | None = None,
) -> Plan:
    """Place every GPU stage of the notebooks in `params` ({stem: effective parameters}, in
    pipeline order; `only`: just these stems, the others still lend their parameters, e.g.
    02's backbone to 04's reward model) on `cluster`. PlanError when the profile cannot be
    read (an unknown model, a missing recipe); a stage that does not fit is a refusal in
    plan.problems. `variants`: {name: (its {stem: parameters}, the stems it runs)} (a profile's
    variants, recode_lib.runner.pipeline.variant_parameters), placed after the base stages as
    notebook "<stem>@<name>" and counted by the budget like any other."""
    budget = budget or BudgetOptions()
    if rates is None:
        try:
            rates = Throughputs.load(
                budget.throughputs, gpu_tflops=budget.gpu_tflops, mfu=budget.mfu
            )
        except ValueError as exc:
            raise PlanError(str(exc)) from None
    placements: list[Placement] = []
    runs = [("", params, only)] + [
        (f"{VARIANT_MARK}{name}", vp, stems) for name, (vp, stems) in (variants or {}).items()
    ]
    for suffix, run_params, run_only in runs:
        for stem, p in run_params.items():
            if run_only is not None and stem not in run_only:
                continue
            try:
                stages = notebook_stages(stem, p, run_params)
            except (StageError, KeyError) as exc:
                raise PlanError(f"{stem}{suffix}: cannot plan: {exc}") from None
            for st in stages:
                st.notebook = f"{stem}{suffix}"
                place = _place_engine if st.trainer is None else _place_trainer
                placements.append(place(st, cluster, rates, budget.length_fraction))
    notes = [
        "stages of one notebook run one after another; within a generation stage every "
        "GPU holds an engine (GPUs / TP data-parallel engines per node: "
        "recode_lib.generation.data_parallel)"
    ]
    if cluster.nodes > 1:
        notes.append(
            "more nodes: a stage's data-parallel engines are Ray actors over every "
            "node (RAY_ADDRESS), their sandbox on its CPUs (--ray auto), independent "
            "training runs go one per node (counted for a one-node launch config; the "
            "Slurm route submits them at once, each on its own 2+-node allocation), "
            "a run whose accelerate config spans machines takes them all"
        )
    return Plan(profile, cluster, placements, notes, rates.source, budget.length_fraction)


# --- tables ------------------------------------------------------------------------------------


def _table(header: list[str], rows: list[list[str]], right: set[int] = frozenset()) -> str:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]

    def line(r):
        return "  ".join(
            str(c).rjust(w) if i in right else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()

    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


def format_plan(plan: Plan) -> str:
    rows = []
    for p in plan.placements:
        kv = (
            "-"
            if p.kv_min_gb is None
            else (
                f"{p.kv_min_gb:.1f}"
                + (f"/{p.kv_batch_gb:.0f}" if p.kv_batch_gb is not None else "")
            )
        )
        rows.append(
            [
                p.notebook,
                p.stage,
                p.model.split("/")[-1],
                p.where,
                "-" if p.tp is None else f"{p.tp} ({p.tp_min or '-'})",
                f"{p.weights_gb:.1f}",
                kv,
                "-" if p.concurrent is None else str(p.concurrent),
                f"{p.train_gb:.1f}" if p.train_gb else "-",
                f"{p.need_gb:.1f}/{p.limit_gb:.0f}",
                "ok" if p.fits else "REFUSED",
            ]
        )
    head = (
        f"resource plan: profile {plan.profile} on {plan.cluster.describe()} (per GPU, "
        "GB = 1e9 bytes; TP: vLLM tensor-parallel size used (smallest that fits); weights: "
        "vLLM's share, or weights+grads+Adam under ZeRO-3; KV: minimum/at the stage's batch; "
        "seqs: sequences at once; train: the training side; u: gpu_memory_utilization)"
    )
    table = _table(
        [
            "notebook",
            "stage",
            "model",
            "where",
            "TP",
            "weights",
            "KV",
            "seqs",
            "train",
            "need/limit",
            "fits",
        ],
        rows,
        right={5, 6, 7, 8, 9},
    )
    out = [head, table]
    engines = [p for p in plan.placements if p.tp]
    if engines:
        big = [p for p in engines if p.tp > 1 or (p.tp_min or 1) > 1]
        out.append(
            "vLLM tensor-parallel sizes (used; smallest that fits): "
            + "; ".join(
                f"{p.notebook} {p.stage} ({p.model.split('/')[-1]}): {p.tp} ({p.tp_min or '-'})"
                for p in big
            )
            + ("; " if big else "")
            + "every other engine: 1"
        )
    if plan.problems:
        out.append(refusal(plan))
    if plan.variant_problems:
        out.append(
            f"variant stages that do not fit {plan.cluster.describe()} (each variant is "
            "a run of its own, `recode reproduce --variant NAME`; the profile's own "
            "stages decide this plan):\n" + "\n".join(f"  - {p}" for p in plan.variant_problems)
        )
    return "\n".join(out)


def summary(plan: Plan) -> str:
    """One line: fits, or the refusal's count and first stage."""
    if plan.ok:
        return f"the {plan.profile} profile fits {plan.cluster.describe()}"
    return (
        f"the {plan.profile} profile does not fit {plan.cluster.describe()}: "
        f"{len(plan.problems)} stage(s) refused, first {plan.problems[0]}"
    )


def stage_kind(p: Placement) -> str:
    """training | generation | sandbox-bound (a generation stage whose sandbox hours exceed
    its generation hours: its GPUs wait for the CPUs) | one request (fewer than one request
    per engine: nothing to split)."""
    if p.hours.train_h or not p.tp:
        return "training"
    if p.hours.engines * p.tp < p.hours.cluster_gpus and p.hours.engines == 1:
        return "one request"
    return "sandbox-bound" if p.hours.sandbox_h > p.hours.generation_h else "generation"


def utilisation(placements) -> float:
    """GPU-hours busy over GPU-hours held, over these placements."""
    held = sum((p.hours.cluster_gpus or p.hours.gpus) * p.hours.wall_h for p in placements)
    return sum(p.hours.gpu_h for p in placements) / held if held > 0 else 0.0


def format_budget(plan: Plan, top: int = 6) -> str:
    hours = plan.notebook_hours()
    total = plan.total_wall_h or 1e-9
    by_nb: dict[str, list] = {}
    for p in plan.placements:
        by_nb.setdefault(p.notebook, []).append(p)
    rows = []
    for stem, d in sorted(hours.items(), key=lambda kv: -kv[1]["wall_h"]):
        rows.append(
            [
                stem,
                f"{d['wall_h']:.1f}",
                f"{d['gpu_h']:.0f}",
                f"{d['generation_h']:.1f}",
                f"{d['train_h']:.1f}",
                f"{d['sandbox_h']:.1f}",
                f"{100 * utilisation(by_nb[stem]):.0f}%",
                f"{100 * d['wall_h'] / total:.0f}%",
            ]
        )
    head = (
        f"compute budget on {plan.cluster.describe()} (throughputs: {plan.throughput_source}; "
        f"responses at {plan.length_fraction:g} x their maximum length"
        + ("; refused stages are counted as if they ran" if plan.problems else "")
        + ")"
    )
    days = plan.total_wall_h / 24
    tail = (
        f"total: {plan.total_wall_h:.0f} h on the cluster ({days:.1f} days), "
        f"{sum(d['gpu_h'] for d in hours.values()):.0f} GPU-hours busy, GPU utilisation "
        f"{100 * utilisation(plan.placements):.0f}%; "
        + ("within" if plan.total_wall_h <= 48 else "over")
        + " a 48 h budget"
    )
    variants = plan.variant_wall_h
    if variants:
        refused = {
            p.notebook.split(VARIANT_MARK, 1)[1]
            for p in plan.placements
            if p.problem and VARIANT_MARK in p.notebook
        }
        own = plan.total_wall_h - sum(variants.values())
        tail += f"\nof which the profile's own notebooks {own:.0f} h" + "".join(
            f"; variant {name} {h:.0f} h (a run of its own: recode reproduce --variant {name}"
            + ("; refused on this cluster)" if name in refused else ")")
            for name, h in variants.items()
        )
    util_rows = [
        [
            f"{p.notebook} / {p.stage}",
            stage_kind(p),
            (
                f"{p.hours.engines} x TP {p.tp}"
                if p.hours.train_h == 0 and p.tp
                else f"{p.hours.concurrent_runs} run(s) x {p.gpus} GPU"
            ),
            f"{p.hours.wall_h:.1f}",
            f"{100 * p.hours.utilisation:.0f}%",
        ]
        for p in plan.placements
        if p.hours.wall_h > 0
    ]
    util = _table(["stage", "kind", "at once", "wall h", "GPU util"], util_rows, right={3, 4})
    biggest = sorted(plan.placements, key=lambda p: -p.hours.wall_h)[:top]
    stages = _table(
        ["largest stages", "wall h", "tokens / steps"],
        [[f"{p.notebook} / {p.stage}", f"{p.hours.wall_h:.1f}", p.formula] for p in biggest],
        right={1},
    )
    return "\n".join(
        [
            head,
            _table(
                [
                    "notebook",
                    "wall h",
                    "GPU-h",
                    "generate h",
                    "train h",
                    "sandbox h",
                    "GPU util",
                    "share",
                ],
                rows,
                right={1, 2, 3, 4, 5, 6, 7},
            ),
            tail,
            f"dominated by: {', '.join(r[0] for r in rows[:3])}",
            "",
            "GPU utilisation per stage (GPU-hours busy / GPU-hours held; engines: "
            "data-parallel vLLM engines, runs: independent training runs at once)",
            util,
            "",
            stages,
        ]
    )
