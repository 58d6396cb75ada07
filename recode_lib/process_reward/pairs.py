"""CRPL synthesis, stage 3: preference pairs from base traces and accepted rewrites.

    pairs, report = build_pairs(traces, rewrites, mode="single", generator="smollm2",
                                val_fraction=0.2, seed=0)
    write_jsonl_atomic(".../pairs.jsonl", pairs)

It does no generation and no I/O.
More: docs/modules/process_reward.md (recode_lib.process_reward.pairs).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter

PAIR_TYPES = ("plus_minus", "plus_base", "base_minus")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", (text or "").strip().lower())


def split_problems(problem_ids, val_fraction: float, seed: int = 0) -> dict[str, str]:
    """{problem_id: "train" | "val"}; deterministic given the set of ids and the seed."""
    if not 0 <= val_fraction < 1:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    ids = sorted(set(problem_ids), key=lambda p: hashlib.sha256(f"{seed}:{p}".encode()).hexdigest())
    n_val = round(val_fraction * len(ids))
    if val_fraction > 0 and len(ids) >= 2:
        n_val = min(max(n_val, 1), len(ids) - 1)
    return {p: ("val" if i < n_val else "train") for i, p in enumerate(ids)}


def _side(kind, rec):
    if kind == "base":
        return {"kind": "base", "generator": None, "source": "policy", "op": None}
    return {
        "kind": kind,
        "generator": rec["generator"],
        "source": rec["source"],
        "op": rec["transformation"]["op"],
    }


def build_pairs(
    traces,
    rewrites,
    *,
    mode: str = "single",
    generator: str | None = None,
    val_fraction: float = 0.2,
    seed: int = 0,
    dimensions=None,
):
    """(pairs, report); see the module docstring. `dimensions` defaults to those present."""
    if mode not in ("single", "cross"):
        raise ValueError(f"mode must be 'single' or 'cross', got {mode!r}")
    accepted = [r for r in rewrites if r.get("accepted")]
    gens = sorted({r["generator"] for r in rewrites})
    if mode == "single":
        generator = generator or (gens[0] if gens else None)
        if gens and generator not in gens:
            raise ValueError(f"generator {generator!r} has no rewrites; have {gens}")
        accepted = [r for r in accepted if r["generator"] == generator]
    options: dict[tuple, list] = {}
    for r in accepted:
        options.setdefault((r["trace_id"], r["dimension"], r["direction"]), []).append(r)
    rng = random.Random(seed)
    chosen_rw = {
        k: (v[0] if len(v) == 1 else rng.choice(sorted(v, key=lambda x: x["id"])))
        for k, v in sorted(options.items())
    }
    dims = dimensions or sorted({r["dimension"] for r in rewrites})
    usable = [t for t in traces if t.get("usable")]
    split = split_problems([t["problem_id"] for t in usable], val_fraction, seed)
    pairs, rejected, seen = [], Counter(), set()
    for t in usable:
        for dim in dims:
            plus = chosen_rw.get((t["id"], dim, "optimize"))
            minus = chosen_rw.get((t["id"], dim, "degrade"))
            sides = {"plus": plus, "minus": minus, "base": t}
            for ptype, (a, b) in zip(
                PAIR_TYPES, (("plus", "minus"), ("plus", "base"), ("base", "minus")), strict=True
            ):
                if sides[a] is None or sides[b] is None:
                    rejected["missing_side"] += 1
                    continue
                chosen, rej = sides[a]["trace"], sides[b]["trace"]
                if _norm(chosen) == _norm(rej):
                    rejected["identical_sides"] += 1
                    continue
                key = (t["prompt"], _norm(chosen), _norm(rej))
                if key in seen:
                    rejected["duplicate"] += 1
                    continue
                seen.add(key)
                pairs.append(
                    {
                        "id": f"{t['id']}|{dim}|{ptype}",
                        "problem_id": t["problem_id"],
                        "trace_id": t["id"],
                        "dimension": dim,
                        "pair_type": ptype,
                        "mode": mode,
                        "prompt": t["prompt"],
                        "chosen": chosen,
                        "rejected": rej,
                        "chosen_meta": _side(a, sides[a]),
                        "rejected_meta": _side(b, sides[b]),
                        "split": split[t["problem_id"]],
                    }
                )
    report = {
        "mode": mode,
        "generator": generator if mode == "single" else gens,
        "pairs": len(pairs),
        "by_type": {
            s: dict(Counter(p["pair_type"] for p in pairs if p["split"] == s))
            for s in ("train", "val")
        },
        "by_dimension": dict(Counter(p["dimension"] for p in pairs)),
        "rejected_by_reason": dict(rejected),
        "problems": {s: sum(v == s for v in split.values()) for s in ("train", "val")},
        "rule_sides": sum(
            (p["chosen_meta"]["source"] == "rule") + (p["rejected_meta"]["source"] == "rule")
            for p in pairs
        ),
    }
    return pairs, report


def heldout_pairs(pair_sets: dict) -> tuple[list[dict], dict]:
    """(pairs no set trained on, report); see the module docstring."""
    if not pair_sets:
        raise ValueError("heldout_pairs: no pair sets")
    train_problems = {
        name: {p["problem_id"] for p in ps if p["split"] == "train"}
        for name, ps in pair_sets.items()
    }
    seen_train = set().union(*train_problems.values())
    out, index = [], {}
    for name, ps in pair_sets.items():
        for p in ps:
            if p["split"] != "val":
                continue
            if p["problem_id"] in seen_train:
                other = sorted(n for n, t in train_problems.items() if p["problem_id"] in t)
                raise ValueError(
                    f"problem {p['problem_id']!r} is held out in {name!r} but trains "
                    f"{other}: build the pair sets with the same traces, "
                    "val_fraction and seed"
                )
            key = (p["prompt"], _norm(p["chosen"]), _norm(p["rejected"]))
            if key in index:
                index[key]["heldout_from"].append(name)
                continue
            index[key] = rec = {**p, "id": f"{name}:{p['id']}", "heldout_from": [name]}
            out.append(rec)
    report = {
        "pairs": len(out),
        "problems": len({p["problem_id"] for p in out}),
        "by_source": dict(Counter("+".join(p["heldout_from"]) for p in out)),
        "by_type": dict(Counter(p["pair_type"] for p in out)),
        "train_problems": {n: len(t) for n, t in train_problems.items()},
    }
    return out, report


def equal_training_pairs(
    single: list[dict], cross: list[dict], seed: int = 0
) -> tuple[list[dict], list[dict], dict]:
    """(single, cross, report) with both sets' "train" pairs cut to the smaller count: the
    larger set keeps a seeded sample of its training pairs, stratified by pair type (largest
    remainder), in their original order; "val" pairs are kept whole. The report gives the
    counts before and after and which set was cut (None when they were equal)."""

    def train(ps):
        return [p for p in ps if p["split"] == "train"]

    n_single, n_cross = len(train(single)), len(train(cross))
    n = min(n_single, n_cross)
    report = {
        "train_before": {"single": n_single, "cross": n_cross},
        "train_pairs": n,
        "cut": None if n_single == n_cross else ("single" if n_single > n else "cross"),
    }

    def cut(ps):
        tr = train(ps)
        if len(tr) == n:
            return list(ps)
        by_type: dict[str, list[dict]] = {}
        for p in tr:
            by_type.setdefault(p["pair_type"], []).append(p)
        quota = {t: n * len(v) / len(tr) for t, v in by_type.items()}
        take = {t: int(q) for t, q in quota.items()}
        for t in sorted(quota, key=lambda t: (-(quota[t] - take[t]), t))[: n - sum(take.values())]:
            take[t] += 1
        rng = random.Random(seed)
        keep = set()
        for t, v in sorted(by_type.items()):
            keep |= {p["id"] for p in rng.sample(sorted(v, key=lambda p: p["id"]), take[t])}
        return [p for p in ps if p["split"] != "train" or p["id"] in keep]

    return cut(single), cut(cross), report
