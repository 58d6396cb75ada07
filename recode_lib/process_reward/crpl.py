"""CRPL synthesis, stages 1-2: base traces from a policy, then checked t+/t- rewrites.

    cfg = CRPLConfig(policy="smollm2", generators=[GeneratorSpec("smollm2", "smollm2")])
    traces = generate_base_traces(problems, cfg, "runs/smoke/01_crpl_synthesis/traces.jsonl")
    rewrites = synthesize_rewrites(traces, cfg, "runs/smoke/01_crpl_synthesis/rewrites.jsonl")
    # then recode_lib.process_reward.pairs.build_pairs(traces, rewrites, ...)

It does not build pairs (crpl_pairs) or train anything (reward_model).
More: docs/modules/process_reward.md (recode_lib.process_reward.crpl).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field

from tqdm.auto import tqdm

from recode_lib.core.assemble import assemble
from recode_lib.core.jsonl import JsonlStore
from recode_lib.core.linux import require_linux
from recode_lib.core.prompts import (
    build_messages,
    canonical_trace,
    format_response,
    parse_response,
    user_prompt,
)
from recode_lib.data import benchmark_family
from recode_lib.generation.chat import generate, make_generator
from recode_lib.process_reward.rewrite_prompts import (
    DIMENSIONS,
    DIRECTIONS,
    TRANSFORMS,
    rewrite_messages,
    rule_rewrite,
)
from recode_lib.sandbox import execute_many, sandbox_record

REJECT_REASONS = ("empty", "format", "unchanged", "changes_problem", "no_rule")


def check_training_source(source: str, held_out) -> dict:
    """{"source", "family", "held_out"}: CRPL's trace source checked against the benchmarks the
    pipeline evaluates on (a comma-separated string or a list). ValueError naming both when the
    source's family (benchmark_family) is one of theirs — pairs synthesized from an evaluation
    set teach the RM the very problems the policy is scored on."""
    if isinstance(held_out, str):
        held_out = [b.strip() for b in held_out.split(",") if b.strip()]
    fam = benchmark_family(source)
    clash = sorted(b for b in held_out if benchmark_family(b) == fam)
    if clash:
        raise ValueError(
            f"CRPL source {source!r} shares its problems with the evaluation "
            f"benchmark(s) {clash} (family {fam!r}): take the traces from a training "
            "source (e.g. mbpp_train, codecontests_plus)"
        )
    return {"source": source, "family": fam, "held_out": list(held_out)}


@dataclass
class GeneratorSpec:
    """One rewrite generator. name: label stored with every rewrite (the ablation groups by it);
    model: resolve_model name/path, or "rules" for the rule rewriter alone; backend: hf | vllm |
    openai; n_candidates: rewrites sampled per request before falling back."""

    name: str
    model: str
    backend: str = "hf"
    temperature: float = 0.8
    top_p: float = 0.95
    max_new_tokens: int = 384
    n_candidates: int = 2
    seed: int = 0


@dataclass
class CRPLConfig:
    """policy*: the model writing base traces; generators: rewrite generators (the first is the
    single-generator default); dimensions: subset of crpl_prompts.DIMENSIONS; rule_fallback: try
    the rule rewriter when every LLM candidate fails (switch off for the paper profile);
    batch_size: prompts per generate call (also the resume granularity); trailing_reasoning:
    when a response has code but no reasoning before it, use the prose after the code as the
    reasoning (small chat models explain after the code); such traces are stored in the
    canonical reasoning-then-code order with reasoning_from="explanation" (off in the paper
    profile); keep_base_code: an accepted LLM rewrite keeps the base trace's code, so t, t+ and
    t- differ in reasoning only (a changed generator code is stored as "generator_code");
    False uses the generator's code."""

    policy: str = "smollm2"
    policy_backend: str = "hf"
    traces_per_problem: int = 1
    policy_temperature: float = 0.7
    policy_max_new_tokens: int = 256
    generators: list = field(default_factory=lambda: [GeneratorSpec("smollm2", "smollm2")])
    dimensions: tuple = DIMENSIONS
    rule_fallback: bool = True
    batch_size: int = 8
    seed: int = 0
    trailing_reasoning: bool = False
    keep_base_code: bool = True


def _default_execute(records):
    require_linux("judging CRPL traces")
    return execute_many(records)


def judge_and_store(recs, problems, store, execute=None, programs=None) -> None:
    """Run programs[i] (default: recs[i]["code"]) in the sandbox on problems[i], set recs[i]'s
    "verdict" (status, outcome, passed, total; no program counts as a format error, not run),
    and append the records to `store`. The sandbox record is the one evaluation builds
    (recode_lib.sandbox.sandbox_record: the problem's tests, limits and bench_env.record_extras)
    and a policy response's program is the one it assembles (core.assemble: the problem's
    prelude, test code dropped), so a trace is judged as its answer would be in evaluation.
    Shared by the policy traces here and recode_lib.process_reward.lcbrb.seeded_traces (whose
    code is a whole program). `execute` (records -> results) defaults to execute_many."""
    execute = execute or _default_execute
    programs = programs if programs is not None else [r["code"] for r in recs]
    jobs = list(zip(recs, problems, programs, strict=True))
    runnable = [sandbox_record(r["id"], code, p) for r, p, code in jobs if code]
    results = execute(runnable) if runnable else []
    by_id = {res["id"]: res for res in results}
    for r in recs:
        res = by_id.get(r["id"])
        r["verdict"] = (
            {k: res.get(k) for k in ("status", "outcome", "passed", "total")}
            if res
            else {"status": "no_code", "outcome": "format_error", "passed": 0, "total": None}
        )
    store.extend(recs)


def generate_base_traces(
    problems, cfg: CRPLConfig, store_path, *, generator=None, execute=None
) -> list[dict]:
    """Stage 1: policy responses + sandbox verdicts, one record per (problem, sample)."""
    store = JsonlStore(store_path)
    jobs = [
        (p, k)
        for p in problems
        for k in range(cfg.traces_per_problem)
        if f"{p.id}#s{k}" not in store
    ]
    if jobs and generator is None:
        generator = make_generator(cfg.policy_backend, cfg.policy)
    bar = tqdm(total=len(jobs), desc="base traces", unit="trace")
    for start in range(0, len(jobs), cfg.batch_size):
        chunk = jobs[start : start + cfg.batch_size]
        outs = generate(
            generator,
            [build_messages(p) for p, _ in chunk],
            temperature=cfg.policy_temperature,
            top_p=0.95,
            max_new_tokens=cfg.policy_max_new_tokens,
            n=1,
            seed=cfg.seed + start,
        )
        recs, programs = [], []
        for (p, k), comps in zip(chunk, outs, strict=True):
            text = comps[0].text
            parsed = parse_response(text)
            programs.append(assemble(p, text).code if parsed.code else None)
            reasoning, source = parsed.reasoning, "before"
            if not reasoning.strip() and cfg.trailing_reasoning and parsed.explanation:
                reasoning, source = parsed.explanation, "explanation"
            trace, why = canonical_trace(reasoning, parsed.code)
            usable = trace is not None
            if parsed.has_code and not reasoning.strip():
                why = parsed.reason or "no reasoning before the code"
            recs.append(
                {
                    "id": f"{p.id}#s{k}",
                    "problem_id": p.id,
                    "policy": cfg.policy,
                    "prompt": user_prompt(p),
                    "entry_point": p.entry_point,
                    "response": text,
                    "reasoning": reasoning,
                    "reasoning_from": source,
                    "code": parsed.code,
                    "trace": trace,
                    "usable": usable,
                    "format_ok": parsed.format_ok,
                    "reason": "" if usable else (why if parsed.has_code else parsed.reason),
                    "n_tokens": comps[0].n_tokens,
                    "time_limit_s": p.time_limit_s,
                    "memory_mb": p.memory_mb,
                }
            )
        judge_and_store(recs, [p for p, _ in chunk], store, execute, programs)
        bar.update(len(chunk))
    bar.close()
    wanted = {f"{p.id}#s{k}" for p in problems for k in range(cfg.traces_per_problem)}
    return [r for r in store.records() if r["id"] in wanted]


# --- checks ------------------------------------------------------------------------------


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", (text or "").strip().lower())


def _signatures(code: str) -> dict[str, int]:
    """Top-level function -> arity, class -> -1 (and its methods as Class.method)."""
    try:
        tree = ast.parse(code or "")
    except (SyntaxError, ValueError):
        return {}
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = len(node.args.args)
        elif isinstance(node, ast.ClassDef):
            out[node.name] = -1
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{sub.name}"] = len(sub.args.args)
    return out


def check_rewrite(base: dict, text: str) -> tuple[str, object]:
    """("", parsed) when `text` is an acceptable rewrite of base trace `base`, else (reason, parsed)
    with reason in REJECT_REASONS. `base` needs "reasoning" and "code"."""
    if not (text or "").strip():
        return "empty", None
    parsed = parse_response(text)
    if not parsed.format_ok:
        return "format", parsed
    if _norm(parsed.reasoning) == _norm(base["reasoning"]):
        return "unchanged", parsed
    old, new = _signatures(base["code"]), _signatures(parsed.code)
    if any(name not in new or (arity != new[name] and arity >= 0) for name, arity in old.items()):
        return "changes_problem", parsed
    return "", parsed


# --- stage 2: rewrites -------------------------------------------------------------------


def rewrite_id(trace_id: str, dimension: str, direction: str, generator: str) -> str:
    return f"{trace_id}|{dimension}|{direction}|{generator}"


def _record(
    trace,
    dim,
    direc,
    spec,
    reasons,
    accepted_parsed=None,
    source=None,
    op=None,
    keep_base_code=True,
):
    rec = {
        "id": rewrite_id(trace["id"], dim, direc, spec.name),
        "trace_id": trace["id"],
        "problem_id": trace["problem_id"],
        "dimension": dim,
        "direction": direc,
        "generator": spec.name,
        "generator_model": spec.model,
        "candidate_reasons": reasons,
        "accepted": accepted_parsed is not None,
        "source": source,
        "transformation": {"instruction": TRANSFORMS[(dim, direc)], "op": op},
        "reason": "" if accepted_parsed is not None else (reasons[-1] if reasons else "empty"),
    }
    if accepted_parsed is not None:
        # the pair contrasts reasoning only: the base trace's code is kept, and a code the
        # generator changed is recorded beside it
        code = trace["code"] if keep_base_code else accepted_parsed.code
        rec["reasoning"] = accepted_parsed.reasoning
        rec["code"] = code
        rec["trace"] = format_response(accepted_parsed.reasoning, code)
        if _norm(accepted_parsed.code) != _norm(trace["code"]):
            rec["generator_code"] = accepted_parsed.code
    return rec


def _rule_candidate(trace, dim, direc, seed):
    got = rule_rewrite(trace["reasoning"], dim, direc, seed=seed)
    if got is None:
        return "no_rule", None, None
    reasoning, op = got
    reason, parsed = check_rewrite(trace, format_response(reasoning, trace["code"]))
    return reason, parsed, f"rule:{op}"


def synthesize_rewrites(traces, cfg: CRPLConfig, store_path, *, generators=None) -> list[dict]:
    """Stage 2 for every usable trace x dimension x direction x generator spec; returns all
    stored records (accepted and rejected). `generators` maps spec name -> generator object
    (created from the spec when missing)."""
    store = JsonlStore(store_path)
    generators = dict(generators or {})
    usable = [t for t in traces if t.get("usable")]
    for spec in cfg.generators:
        jobs = [
            (t, d, r)
            for t in usable
            for d in cfg.dimensions
            for r in DIRECTIONS
            if rewrite_id(t["id"], d, r, spec.name) not in store
        ]
        if not jobs:
            continue
        if spec.model != "rules" and spec.name not in generators:
            generators[spec.name] = make_generator(spec.backend, spec.model)
        bar = tqdm(total=len(jobs), desc=f"rewrites [{spec.name}]", unit="rewrite")
        for start in range(0, len(jobs), cfg.batch_size):
            chunk = jobs[start : start + cfg.batch_size]
            if spec.model == "rules":
                outs = [[] for _ in chunk]
            else:
                outs = generate(
                    generators[spec.name],
                    [rewrite_messages(t["prompt"], t["trace"], d, r) for t, d, r in chunk],
                    temperature=spec.temperature,
                    top_p=spec.top_p,
                    max_new_tokens=spec.max_new_tokens,
                    n=spec.n_candidates,
                    seed=spec.seed + start,
                )
            done = []
            for (t, d, r), comps in zip(chunk, outs, strict=True):
                reasons, rejected, rec = [], [], None
                for c in comps:
                    reason, parsed = check_rewrite(t, c.text)
                    if not reason:
                        rec = _record(
                            t,
                            d,
                            r,
                            spec,
                            reasons,
                            parsed,
                            "model",
                            "llm",
                            keep_base_code=cfg.keep_base_code,
                        )
                        break
                    reasons.append(reason)
                    rejected.append({"reason": reason, "text": c.text})
                if rec is None and (cfg.rule_fallback or spec.model == "rules"):
                    reason, parsed, op = _rule_candidate(t, d, r, spec.seed)
                    if not reason:
                        rec = _record(t, d, r, spec, reasons, parsed, "rule", op)
                    else:
                        reasons.append(reason)
                rec = rec or _record(t, d, r, spec, reasons)
                rec["rejected_candidates"] = rejected
                done.append(rec)
            store.extend(done)
            bar.update(len(chunk))
        bar.close()
    wanted = {
        rewrite_id(t["id"], d, r, s.name)
        for t in usable
        for d in cfg.dimensions
        for r in DIRECTIONS
        for s in cfg.generators
    }
    return [r for r in store.records() if r["id"] in wanted]


def synthesis_report(traces, rewrites) -> dict:
    """Counts: traces (usable / by reason / by outcome), rewrites accepted by source and op,
    rejected by final reason, and every candidate rejection by reason."""
    tr_reasons = Counter(t["reason"] for t in traces if not t.get("usable"))
    acc = [r for r in rewrites if r["accepted"]]
    return {
        "traces": {
            "total": len(traces),
            "usable": sum(bool(t.get("usable")) for t in traces),
            "unusable_by_reason": dict(tr_reasons),
            "by_outcome": dict(Counter(t["verdict"]["outcome"] for t in traces)),
        },
        "rewrites": {
            "total": len(rewrites),
            "accepted": len(acc),
            "accepted_by_source": dict(Counter(r["source"] for r in acc)),
            "accepted_by_op": dict(Counter(r["transformation"]["op"] for r in acc)),
            "rejected_by_reason": dict(Counter(r["reason"] for r in rewrites if not r["accepted"])),
            "candidate_rejections_by_reason": dict(
                Counter(x for r in rewrites for x in r["candidate_reasons"])
            ),
            "accepted_by_dim_dir": dict(Counter(f"{r['dimension']}/{r['direction']}" for r in acc)),
        },
    }
