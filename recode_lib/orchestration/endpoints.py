"""The two ends of the weight-averaging axis: the strictness sweep's runs, or stand-ins.

    low, high = sweep_endpoints(step_dir(RUN, STRICTNESS_SWEEP))   # lowest-k, R_inf run (final/)
    ends = choose_endpoints("sweep", step_dir(RUN, STRICTNESS_SWEEP), model="smollm2",
                            evaluated=problems, out_dir=OUT / "finetune" / "endpoints",
                            finetune_source="microbench")          # or LOUD stand-ins
    runs = sweep_runs(sweep_dir, grid=alphas)                      # best-single candidates
    earlier = sweep_evaluations(sweep_dir, runs)                   # where the sweep evaluated them

It reads the sweep's folder and writes only the stand-ins; the weight math is
recode_lib.weights.
More: docs/modules/orchestration.md (recode_lib.orchestration.endpoints).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from recode_lib import data  # looked up per call: tests replace its loaders
from recode_lib.core.errors import RecodeError
from recode_lib.core.jsonl import read_json
from recode_lib.core.models import load_tokenizer
from recode_lib.core.prompts import build_messages, format_response
from recode_lib.training.plain_sft import finetune_one

K_IN_NAME = re.compile(
    r"(?:^|[_\-])(?:r_?)?k_?(\d+)(?:$|[_\-])|"
    r"(?:^|[_\-])(?:r_?)?k?_?(inf)(?:$|[_\-])",
    re.IGNORECASE,
)
META = "metrics.json"  # the sweep's run list (orchestration.sweep.StrictnessSweep.metrics)
FRONTIER = "frontier.json"  # the sweep's frontier (analysis.frontier.write_sweep_frontier)


class EndpointError(RecodeError, ValueError):
    """No usable endpoints; the message says what was looked for."""


def run_strictness(name: str) -> float | None:
    """k of a sweep run from its folder name (inf -> float('inf')), or None."""
    m = K_IN_NAME.search(name)
    if not m:
        return None
    return float("inf") if m.group(2) else float(m.group(1))


def sweep_meta(sweep_dir: str | Path) -> dict:
    """The sweep's metrics.json ({} when it wrote none)."""
    path = Path(sweep_dir) / META
    return read_json(path) if path.is_file() else {}


def strictness_runs(sweep_dir: str | Path) -> dict[str, float]:
    """{run: k} of the sweep's finished R_k runs: those its metrics.json lists (with their k),
    else (no metrics.json runs) every folder whose name carries a k. A run folder of an earlier
    configuration (other SEEDS or KS) that the sweep's metrics.json does not list is not one."""
    sweep_dir = Path(sweep_dir)
    listed = sweep_meta(sweep_dir).get("runs", {})
    declared = {n: float(r["k"]) for n, r in listed.items() if isinstance(r, dict) and "k" in r}
    runs = {}
    if sweep_dir.is_dir():
        for d in sorted(sweep_dir.iterdir()):
            k = declared.get(d.name) if declared else run_strictness(d.name)
            if k is not None and (d / "final" / ".complete").is_file():
                runs[d.name] = k
    return runs


def sweep_seeds(sweep_dir: str | Path) -> list[int]:
    """The seeds the sweep trained (metrics.json "seeds"), in its order; [] without them."""
    return [int(x) for x in (sweep_meta(sweep_dir).get("seeds") or [])]


def endpoint_runs(sweep_dir: str | Path, seed: int | None = None) -> dict[str, float]:
    """strictness_runs, kept to one seed's runs when metrics.json records several seeds: the
    first seed's, or `seed`'s (ValueError naming the seeds when the sweep did not train it)."""
    meta = sweep_meta(sweep_dir)
    runs = strictness_runs(sweep_dir)
    seeds = sweep_seeds(sweep_dir)
    if seed is not None and int(seed) not in seeds:
        raise ValueError(f"{sweep_dir}: the sweep trained seeds {seeds}, not {seed}")
    if len(seeds) > 1:
        want = seeds[0] if seed is None else int(seed)
        listed = meta.get("runs", {})
        runs = {n: k for n, k in runs.items() if (listed.get(n) or {}).get("seed") == want}
    return runs


def sweep_endpoints(sweep_dir: str | Path, seed: int | None = None) -> tuple[Path, Path]:
    """(lenient final/, strict final/) of the sweep (module docstring); `seed`: that seed's
    runs instead of the first seed's."""
    sweep_dir = Path(sweep_dir)
    runs = endpoint_runs(sweep_dir, seed)
    if len(runs) < 2:
        seeds = sweep_seeds(sweep_dir)
        of = f" of seed {seeds[0] if seed is None else seed}" if len(seeds) > 1 else ""
        raise EndpointError(
            f"{sweep_dir}: need two finished runs{of} (<run>/final/.complete with "
            f"k or inf in the run name), found {sorted(runs) or 'none'}"
        )
    low = min(runs, key=runs.get)
    high = max(runs, key=runs.get)
    if runs[low] == runs[high]:
        raise EndpointError(f"{sweep_dir}: every finished run has the same strictness {runs}")
    return sweep_dir / low / "final", sweep_dir / high / "final"


def sweep_runs(sweep_dir: str | Path, grid=()) -> dict[str, Path]:
    """{run name: final/} of EVERY finished run of the sweep: its R_k runs (every seed) and the
    runs its metrics.json lists as `partial_runs`, the candidates for the best single checkpoint
    beside the alpha grid (paper B compares ensembles with "the best single checkpoint"; 06's
    runs are trained independently). The endpoint the grid already holds is left out: the
    lenient one when 0.0 is in `grid`, the strict one when 1.0 is (theta_0 and theta_1 are those
    weights, sampled with the same spec and seeds)."""
    sweep_dir = Path(sweep_dir)
    runs = strictness_runs(sweep_dir)
    out = {name: sweep_dir / name / "final" for name in sorted(runs)}
    for name in sweep_meta(sweep_dir).get("partial_runs", {}):
        if (sweep_dir / name / "final" / ".complete").is_file():
            out[name] = sweep_dir / name / "final"
    if len(endpoint_runs(sweep_dir)) >= 2:
        low, high = sweep_endpoints(sweep_dir)
        grid = {float(a) for a in grid}
        for alpha, end in ((0.0, low), (1.0, high)):
            if alpha in grid:
                out.pop(end.parent.name, None)
    return dict(sorted(out.items()))


def sweep_evaluations(sweep_dir: str | Path, runs) -> dict[str, Path]:
    """{run name: the folder where the sweep evaluated it} (<sweep_dir>/eval/<run>, written by
    orchestration.sweep.strictness_sweep) for those of `runs` it has evaluated: a grid that
    evaluates the same runs with the sweep's spec on its problems reuses those samples
    (evaluation.spec.evaluate_models's `earlier`)."""
    sweep_dir = Path(sweep_dir)
    found = {name: sweep_dir / "eval" / name for name in runs}
    return {name: d for name, d in found.items() if (d / "run.json").is_file()}


def sft_texts(tok, problems) -> list[str]:
    """Chat-formatted (prompt, reference solution) texts of the problems that have one."""
    texts = []
    for p in problems:
        if p.reference_solution:
            msgs = build_messages(p) + [
                {
                    "role": "assistant",
                    "content": format_response("Write a direct solution.", p.reference_solution),
                }
            ]
            texts.append(tok.apply_chat_template(msgs, tokenize=False))
    return texts


def finetune_endpoints(
    model: str,
    problems,
    out_dir: str | Path,
    *,
    steps: int = 4,
    lr: float = 1e-5,
    seed: int = 0,
    max_length: int = 384,
    batch_size: int = 2,
) -> tuple[Path, Path]:
    """Two short fine-tunes of `model` on disjoint halves of the problems (stand-in endpoints):
    out_dir/low and out_dir/high, reused when present."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    texts = sft_texts(load_tokenizer(model), problems)
    if len(texts) < 2:
        raise EndpointError(f"need >= 2 problems with reference solutions, got {len(texts)}")
    half = len(texts) // 2
    kw = dict(steps=steps, lr=lr, max_length=max_length, batch_size=batch_size)
    low = finetune_one(model, texts[:half], out_dir / "low", seed=seed, **kw)
    high = finetune_one(model, texts[half:], out_dir / "high", seed=seed + 1, **kw)
    return low, high


@dataclass
class Endpoints:
    """The two ends of the weight-averaging axis: source "sweep" or "finetune" (stand-ins);
    `note` says why stand-ins were used when the sweep was asked for."""

    source: str
    low: Path
    high: Path
    note: str = ""

    def record(self) -> dict:
        """What a frontier records of them: {"source", "low", "high"}."""
        return {"source": self.source, "low": str(self.low), "high": str(self.high)}


def choose_endpoints(
    source: str,
    sweep_dir: str | Path,
    *,
    model: str,
    evaluated,
    out_dir,
    finetune_source: str,
    finetune_problems: int = 8,
    steps: int = 4,
    lr: float = 1e-5,
    seed: int = 0,
    log=print,
) -> Endpoints:
    """source "sweep": sweep_endpoints(sweep_dir), falling back to stand-ins (with a banner) when
    the sweep has no two finished runs; "finetune": stand-ins, two short fine-tunes of `model` on
    the first `finetune_problems` problems of `finetune_source` that are not in `evaluated`
    (all of them when fewer than two are left), written under out_dir."""
    if source not in ("sweep", "finetune"):
        raise ValueError(f"endpoint source must be 'sweep' or 'finetune', got {source!r}")
    note = ""
    if source == "sweep":
        try:
            low, high = sweep_endpoints(sweep_dir)
            return Endpoints("sweep", low, high)
        except EndpointError as exc:
            note = str(exc)
            log(
                "!" * 100 + f"\nWARNING: NO STRICTNESS-SWEEP ENDPOINTS ({exc}).\nUSING STAND-IN "
                f"ENDPOINTS: two short fine-tunes of {model} - NOT strictness endpoints.\nRe-run "
                "after the strictness sweep to get the real frontier.\n" + "!" * 100
            )

    ids = {p.id for p in evaluated}
    candidates = data.load_benchmark(finetune_source, limit=(len(ids) + finetune_problems) or None)
    pool = [p for p in candidates if p.id not in ids and p.reference_solution]
    if len(pool) < 2:
        log(f"WARNING: fewer than 2 unevaluated {finetune_source} problems; fine-tuning on all")
        pool = [p for p in candidates if p.reference_solution]
    low, high = finetune_endpoints(
        model, pool[: finetune_problems or None], out_dir, steps=steps, lr=lr, seed=seed
    )
    return Endpoints("finetune", low, high, note)


def sweep_eval_problems(
    sweep_dir: str | Path, limit: int | None = None, default_benchmark=None, difficulty: str = ""
):
    """(benchmark, problems) the sweep evaluated on (its frontier.json "eval_problems" and
    "eval_benchmark"), only those of `difficulty` when given, then the first `limit`; None when
    the sweep recorded none. Raises KeyError naming ids the benchmark no longer has, and
    ValueError when no recorded problem has that difficulty."""
    front = Path(sweep_dir) / FRONTIER
    if not front.is_file():
        return None
    meta = read_json(front)
    if not meta.get("eval_problems"):
        return None
    bench = meta.get("eval_benchmark") or default_benchmark
    by_id = {p.id: p for p in data.load_benchmark(bench)}
    missing = [i for i in meta["eval_problems"] if i not in by_id]
    if missing:
        raise KeyError(f"{front}: eval_problems not in {bench}: {missing[:5]}")
    problems = [by_id[i] for i in meta["eval_problems"]]
    if difficulty:
        kept = [p for p in problems if p.difficulty == difficulty]
        if not kept:
            have = sorted({str(p.difficulty) for p in problems})
            raise ValueError(
                f"{front}: none of the sweep's {len(problems)} {bench} problems has "
                f"difficulty {difficulty!r} (they have {have}); evaluate the sweep "
                f"on {difficulty} problems (notebook 06 EVAL_DIFFICULTY) or clear "
                "DIFFICULTY"
            )
        problems = kept
    return bench, problems[: limit or None]


def sweep_eval_spec(sweep_dir: str | Path) -> dict | None:
    """The EvalSpec fields (EvalSpec.to_dict) the sweep's runs were evaluated with, from its
    frontier.json "eval_spec"; None when it recorded none."""
    front = Path(sweep_dir) / FRONTIER
    if not front.is_file():
        return None
    return read_json(front).get("eval_spec")


def sweep_protocol_spec(spec, sweep_dir: str | Path):
    """`spec` (an EvalSpec) sampling exactly as the sweep's evaluation did: its protocol fields
    (temperature, top_p, max_new_tokens, reasoning, early_stop) from the sweep's recorded spec,
    everything else (n, k, seed, backend, execution) kept. Raises EndpointError when the sweep
    recorded no spec (re-run notebook 06's evaluation)."""
    recorded = sweep_eval_spec(sweep_dir)
    if recorded is None:
        raise EndpointError(
            f"{Path(sweep_dir) / FRONTIER}: no recorded eval_spec (written "
            "before specs were recorded); re-run notebook 06's evaluation, or set "
            "SPEC_FROM_SWEEP = False to sample with notebook 07's own parameters"
        )
    return spec.with_protocol(recorded)
