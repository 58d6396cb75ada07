"""Calibrate candidate problems to a model: keep those it solves sometimes (0 < pass rate < 1).

    from recode_lib.evaluation.calibration import calibrate, read_rates
    cal = calibrate("smollm2", candidates, out_dir=step_dir(RUN, DATA) / "calibration",
                    spec=EvalSpec(temperature=0.9, n=8, max_new_tokens=128, reasoning=False))
    cal.kept          # list[Problem]: 0 < pass rate < 1 (lo < rate < hi), candidates' order
    cal.rates         # {problem_id: pass rate}; also out_dir/rates.jsonl, one line per candidate

Code-RL practice filters training problems by the start model's pass rate (DeepCoder,
Skywork-OR1); paper B finds its frontier only "as long as problem difficulty is tuned to model
capability". A problem every sample solves or none does gives GRPO a zero advantage, so it
teaches nothing. The sampling is `spec.evaluate` (the evaluation loop, with k=1, early stop
and an earlier folder of another spec set aside; its samples.jsonl in out_dir/samples is the
cache, so a re-run, or a larger candidate list, only samples what is missing; progress bars
come from there), and rates.jsonl records {id, source, n, passed, rate,
kept}, plus `rates_k` ({k: share of samples passing every test with input_len < 10^k}) when
`keep_ks` names strictness levels beside "inf". It does not split kept problems into train and
held-out sets (the caller does, e.g. recode_lib.data.split) and does not generate candidates
(recode_lib.data.easy_tasks does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from recode_lib.core.jsonl import read_jsonl, write_jsonl_atomic
from recode_lib.data import available_benchmarks, load_benchmark
from recode_lib.data.easy_tasks import EFFICIENCY, generate_easy_tasks
from recode_lib.evaluation.rows import as_problems
from recode_lib.evaluation.spec import EvalSpec


@dataclass
class Calibration:
    kept: list
    rates: dict[str, float]
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # id -> (passed, n)
    path: Path | None = None
    rates_k: dict[str, dict[str, float]] = field(default_factory=dict)  # id -> {k: rate under R_k}


def pass_counts(samples: list[dict], k: str = "inf") -> dict[str, tuple[int, int]]:
    """{problem_id: (samples passed, samples)} of evaluate's samples.jsonl records; k = "inf":
    passed every test (status "passed"), else passed every test with input_len < 10^k (the
    record's `strictness[k]`, paper B's R_k; a record without it is a failure, never a pass)."""
    out: dict[str, list[int]] = {}
    for r in samples:
        c = out.setdefault(r["problem_id"], [0, 0])
        if str(k) == "inf":
            c[0] += r["status"] == "passed"
        else:
            c[0] += (r.get("strictness") or {}).get(str(k)) == 1
        c[1] += 1
    return {k: (a, b) for k, (a, b) in out.items()}


def keep(rate: float, lo: float = 0.0, hi: float = 1.0) -> bool:
    """lo < rate < hi: sometimes solved (the default keeps 0 < rate < 1)."""
    return lo < rate < hi


def calibrate(
    model,
    candidates,
    *,
    out_dir,
    spec: EvalSpec,
    lo: float = 0.0,
    hi: float = 1.0,
    generator=None,
    keep_ks=("inf",),
) -> Calibration:
    """Sample `model` spec.n times per candidate as `spec` says (resumable; `generator` reuses a
    loaded backend), write out_dir/rates.jsonl and
    return the candidates with lo < pass rate < hi under at least one reward of `keep_ks`
    ("inf" = every test; "2" = paper B's lenient R_2, tests with input_len < 100): with ("2",
    "inf") a problem the model solves only on small inputs (a quadratic answer) is kept, since a
    lenient run learns from it. `rates` stays the strict rate. ValueError for n < 2 (a rate of
    one sample is 0 or 1: nothing could be kept)."""
    if spec.n < 2:
        raise ValueError(f"calibrate: spec.n must be >= 2 to measure a pass rate, got {spec.n}")
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"calibrate: need 0 <= lo < hi <= 1, got lo={lo}, hi={hi}")
    problems = as_problems(candidates)
    out = Path(out_dir)
    spec = spec.replace(k=(1,), early_stop=True, on_config_change="set_aside")
    spec.evaluate(model, problems, out / "samples", generator=generator)
    keep_ks = [str(k) for k in keep_ks]
    if not keep_ks:
        raise ValueError("calibrate: keep_ks must name at least one strictness level")
    wanted = {p.id for p in problems}
    samples = read_jsonl(out / "samples" / "samples.jsonl")
    counts = {k: v for k, v in pass_counts(samples).items() if k in wanted}
    rates = {pid: counts[pid][0] / counts[pid][1] for pid in counts}
    rates_k = {pid: {} for pid in rates}
    for k in keep_ks:
        for pid, (a, b) in pass_counts(samples, k).items():
            if pid in wanted:
                rates_k[pid][k] = a / b
    kept_ids = {pid for pid, rk in rates_k.items() if any(keep(r, lo, hi) for r in rk.values())}
    kept = [p for p in problems if p.id in kept_ids]
    lenient = keep_ks != ["inf"]
    path = write_jsonl_atomic(
        out / "rates.jsonl",
        [
            {
                "id": p.id,
                "source": p.source,
                "n": counts[p.id][1],
                "passed": counts[p.id][0],
                "rate": rates[p.id],
                **({"rates_k": rates_k[p.id]} if lenient else {}),
                "kept": p.id in kept_ids,
            }
            for p in problems
        ],
    )
    return Calibration(kept, rates, counts, path, rates_k)


def easiest(problems, n: int) -> list:
    """The n problems with the shortest reference solution (else prompt): a proxy for "easy"
    on benchmarks without a difficulty label (MBPP+, HumanEval+); ties keep the input order."""

    def size(p):
        return len((p.reference_solution or "").strip() or p.prompt)

    return sorted(problems, key=size)[: max(0, int(n))]


def candidate_problems(
    n_easy: int,
    seed: int = 0,
    easiest_from=("mbppplus", "humanevalplus"),
    n_easiest: int = 0,
    n_efficiency: int = 0,
    log=print,
) -> list:
    """Calibration candidates: n_easy seeded easy tasks (recode_lib.data.easy_tasks), n_efficiency
    of its efficiency tasks (a quadratic answer times out on the largest input), and the
    n_easiest easiest problems of each benchmark in easiest_from whose files are present (a
    missing one is skipped with a printed line: the shared data is optional)."""
    out = list(generate_easy_tasks(n_easy, seed)) if n_easy else []
    if n_efficiency:
        out.extend(generate_easy_tasks(n_efficiency, seed, templates=EFFICIENCY))
    if n_easiest:
        present = set(available_benchmarks())
        for name in easiest_from:
            if name not in present:
                log(f"calibration candidates: {name} is not available locally; skipped")
                continue
            out.extend(easiest(load_benchmark(name), n_easiest))
    return out


def write_calibrated(cal: Calibration, path, seed: int = 0, max_keep: int | None = None) -> Path:
    """Write the kept problems (seeded shuffle, so any train/held-out cut mixes sources and
    templates; at most max_keep) as problem jsonl: what `calibrated:<profile>` loads."""
    import random

    kept = list(cal.kept)
    random.Random(f"calibrated:{seed}").shuffle(kept)
    kept = kept[:max_keep] if max_keep else kept
    rows = []
    for p in kept:
        d = p.to_dict()
        d["metadata"] = {
            **d.get("metadata", {}),
            "start_pass_rate": cal.rates[p.id],
            **({"start_pass_rate_k": cal.rates_k[p.id]} if cal.rates_k.get(p.id) else {}),
        }
        rows.append(d)
    return write_jsonl_atomic(path, rows)
