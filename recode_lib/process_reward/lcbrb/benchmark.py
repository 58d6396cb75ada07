"""LCB-RB construction: better/worse reasoning-trace pairs from LiveCodeBench-format problems.

    traces = crpl.generate_base_traces(problems, cfg, ".../traces.jsonl")  # n samples/problem
    cands, rep = candidate_pairs(traces, max_pairs_per_problem=2, seed=0)
    checked = dual_consistency(cands, ConsistencyJudge(gen), ".../consistency.jsonl")
    # human adjudication: recode_lib.process_reward.lcbrb.adjudication (widget, or
    # "pending"/auto in batch runs)
    path, meta = write_benchmark(rows, out_dir, version="1")
    valid, excluded = load_benchmark_file(path)       # schema-checked; exclusions with reasons

It does not generate traces (crpl does) or train/score reward models.
More: docs/modules/process_reward.md (recode_lib.process_reward.lcbrb.benchmark).
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from pathlib import Path

from tqdm.auto import tqdm

from recode_lib.core.jsonl import JsonlStore, read_jsonl, write_json_atomic, write_jsonl_atomic

SCHEMA = {
    "id": str,
    "problem_id": str,
    "source": str,
    "prompt": str,
    "better": str,
    "worse": str,
    "better_verdict": dict,
    "worse_verdict": dict,
    "consistency": dict,
    "adjudication": dict,
}
FAILING = ("correctness_failure", "optimization_failure")
VERIFICATION = ("human", "consistency", "none")


def verification_level(decision: dict, consistency: dict) -> str:
    """ "human" for a person's accept/swap; else "consistency" when the dual consistency check
    read both sides as consistent; else "none"."""
    if decision.get("by") == "human" and decision.get("decision") in ("accept", "swap"):
        return "human"
    return "consistency" if (consistency or {}).get("verified") else "none"


def benchmark_filename(version: str, verified: bool) -> str:
    return f"lcb_rb-v{version}.jsonl" if verified else f"lcb_rb-v{version}-unverified.jsonl"


def candidate_pairs(traces, *, max_pairs_per_problem: int = 2, seed: int = 0):
    """(pairs, report): passing x failing traces of the same problem, sampled per problem."""
    by_problem: dict[str, list] = {}
    for t in traces:
        by_problem.setdefault(t["problem_id"], []).append(t)
    rng = random.Random(seed)
    pairs, report = [], Counter()
    for pid in sorted(by_problem):
        ts = [t for t in by_problem[pid] if t.get("usable")]
        report["unusable_traces"] += len(by_problem[pid]) - len(ts)
        good = [t for t in ts if t["verdict"]["outcome"] == "correct"]
        bad = [t for t in ts if t["verdict"]["outcome"] in FAILING]
        if not good or not bad:
            report["problems_without_pass_and_fail"] += 1
            continue
        combos = [(g, b) for g in good for b in bad if g["trace"] != b["trace"]]
        report["identical_sides"] += len(good) * len(bad) - len(combos)
        rng.shuffle(combos)
        report["over_per_problem_cap"] += max(0, len(combos) - max_pairs_per_problem)
        for g, b in combos[:max_pairs_per_problem]:
            pairs.append(
                {
                    "id": f"{pid}|{g['id']}|{b['id']}",
                    "problem_id": pid,
                    "source": pid.split("/")[0],
                    "prompt": g["prompt"],
                    "better": g["trace"],
                    "worse": b["trace"],
                    "better_code": g["code"],
                    "worse_code": b["code"],
                    "better_verdict": g["verdict"],
                    "worse_verdict": b["verdict"],
                    "better_origin": g.get("origin", "policy"),
                    "worse_origin": b.get("origin", "policy"),
                }
            )
    report["pairs"] = len(pairs)
    report["problems"] = len(by_problem)
    return pairs, dict(report)


def dual_consistency(
    pairs, judge, store_path, *, on_unparsable: str = "reject", batch_size: int = 8
) -> list[dict]:
    """Judge both sides of each candidate; store one record per pair with "status"
    (kept | rejected), "reason" and "consistency" = {better, worse, verified}."""
    if on_unparsable not in ("reject", "keep"):
        raise ValueError(f"on_unparsable must be 'reject' or 'keep', got {on_unparsable!r}")
    store = JsonlStore(store_path)
    todo = [p for p in pairs if p["id"] not in store]
    for s in tqdm(range(0, len(todo), batch_size), desc="dual consistency", unit="batch"):
        chunk = todo[s : s + batch_size]
        verdicts = judge.check(
            [p["prompt"] for p in chunk] * 2,
            [p["better"] for p in chunk] + [p["worse"] for p in chunk],
        )
        for i, p in enumerate(chunk):
            vb, vw = verdicts[i], verdicts[len(chunk) + i]
            reason = ""
            if p["better_verdict"]["outcome"] != "correct":
                reason = "better_not_passing"
            elif p["worse_verdict"]["outcome"] not in FAILING:
                reason = "worse_not_failing"
            elif vb is False:
                reason = "better_inconsistent"
            elif vw is False:
                reason = "worse_inconsistent"
            elif (vb is None or vw is None) and on_unparsable == "reject":
                reason = "judge_unparsable"
            store.append(
                {
                    **p,
                    "status": "rejected" if reason else "kept",
                    "reason": reason,
                    "consistency": {
                        "better": vb,
                        "worse": vw,
                        "verified": vb is True and vw is True,
                    },
                }
            )
    ids = {p["id"] for p in pairs}
    return [r for r in store.records() if r["id"] in ids]


def benchmark_rows(checked, decisions: dict) -> tuple[list[dict], dict]:
    """Benchmark records from kept candidates and adjudication decisions
    ({pair id: {"decision": accept|reject|swap|pending, "by": human|auto, ...}}).
    accept/pending keep the pair, swap exchanges sides, reject drops it (counted)."""
    rows, counts = [], Counter()
    for r in checked:
        if r["status"] != "kept":
            counts[f"consistency:{r['reason']}"] += 1
            continue
        d = decisions.get(r["id"], {"decision": "pending", "by": "none"})
        counts[f"adjudication:{d['decision']}:{d.get('by')}"] += 1
        if d["decision"] == "reject":
            continue
        better, worse = r["better"], r["worse"]
        bv, wv = r["better_verdict"], r["worse_verdict"]
        if d["decision"] == "swap":
            better, worse, bv, wv = worse, better, wv, bv
        bo, wo = r.get("better_origin", "policy"), r.get("worse_origin", "policy")
        if d["decision"] == "swap":
            bo, wo = wo, bo
        rows.append(
            {k: r[k] for k in ("id", "problem_id", "source", "prompt", "consistency")}
            | {
                "better": better,
                "worse": worse,
                "better_verdict": bv,
                "worse_verdict": wv,
                "better_origin": bo,
                "worse_origin": wo,
                "seeded": bo != "policy" or wo != "policy",
                "adjudication": d,
                "verification": verification_level(d, r.get("consistency")),
                "human_verified": verification_level(d, r.get("consistency")) == "human",
            }
        )
    return rows, dict(counts)


def write_benchmark(rows, out_dir, *, version: str = "1", provenance: dict | None = None):
    """Validate, then write the benchmark and its .meta.json; returns (path, meta). The name says
    whether every pair is human-verified (module docstring); the other name of the same version
    (and its meta) is removed."""
    valid, excluded = validate_records(rows, where="benchmark rows")
    if excluded:
        raise ValueError(f"{len(excluded)} benchmark rows fail the schema, first: {excluded[0]}")
    out = Path(out_dir)
    levels = Counter(
        r.get("verification") or ("human" if r.get("human_verified") else "none") for r in valid
    )
    n_human = levels.get("human", 0)
    verified = bool(valid) and n_human == len(valid)
    name = benchmark_filename(version, verified)
    for stale in (benchmark_filename(version, not verified),):
        for f in (out / stale, out / stale.replace(".jsonl", ".meta.json")):
            f.unlink(missing_ok=True)
    path = write_jsonl_atomic(out / name, valid)
    meta = {
        "name": "LCB-RB" if verified else "LCB-RB (unverified)",
        "version": version,
        "file": name,
        "verified": verified,
        "verification": (
            "human-verified"
            if verified
            else f"unverified: consistency-checked only ({n_human} of {len(valid)} "
            "pairs human-verified)"
        ),
        "n_pairs": len(valid),
        "schema": {k: v.__name__ for k, v in SCHEMA.items()},
        "sources": dict(Counter(r["source"] for r in valid)),
        "human_verified": n_human,
        "consistency_only": levels.get("consistency", 0),
        "unchecked": levels.get("none", 0),
        "seeded": sum(bool(r.get("seeded")) for r in valid),
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "provenance": provenance or {},
    }
    write_json_atomic(out / name.replace(".jsonl", ".meta.json"), meta)
    return path, meta


def validate_records(records, where: str = "") -> tuple[list[dict], list[dict]]:
    """(valid, excluded) where excluded = [{"index", "id", "reason"}] naming the field."""
    valid, excluded = [], []
    for i, r in enumerate(records):
        problems = [f"missing field {k!r}" for k in SCHEMA if k not in r]
        problems += [
            f"field {k!r} is {type(r[k]).__name__}, expected {t.__name__}"
            for k, t in SCHEMA.items()
            if k in r and not isinstance(r[k], t)
        ]
        if not problems and (not r["better"].strip() or not r["worse"].strip()):
            problems.append("empty trace")
        if not problems and r["better"].strip() == r["worse"].strip():
            problems.append("identical sides")
        if problems:
            excluded.append(
                {"index": i, "id": r.get("id"), "where": where, "reason": "; ".join(problems)}
            )
        else:
            valid.append(r)
    return valid, excluded


def load_benchmark_file(path) -> tuple[list[dict], list[dict]]:
    """Read a benchmark jsonl; bad records are excluded (not raised) with their reasons."""
    return validate_records(read_jsonl(path), where=str(path))


def as_pairs(rows, verification: str | None = None) -> list[dict]:
    """LCB-RB records -> rm_eval pairs (chosen = better, rejected = worse), optionally only
    those of one verification level ("human", "consistency", "none"; "not_human" = the last two)."""
    if verification is not None and verification not in VERIFICATION + ("not_human",):
        raise ValueError(
            f"verification must be one of {VERIFICATION + ('not_human',)}, got {verification!r}"
        )
    out = []
    for r in rows:
        level = r.get("verification") or ("human" if r.get("human_verified") else "none")
        if (
            verification == "not_human"
            and level == "human"
            or verification not in (None, "not_human")
            and level != verification
        ):
            continue
        out.append(
            {
                "id": r["id"],
                "prompt": r["prompt"],
                "chosen": r["better"],
                "rejected": r["worse"],
                "pair_type": "lcb_rb",
                "verification": level,
            }
        )
    return out
