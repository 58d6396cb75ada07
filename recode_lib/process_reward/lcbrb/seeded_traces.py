"""Seeded traces: programs known to pass or fail, with the reasoning written by a model.

    traces, report = generate_seeded_traces(problems, cfg, ".../seeded_traces.jsonl",
                                            n_mutants=2)
    # same record shape as crpl.generate_base_traces: lcbrb.candidate_pairs takes both

Why: LCB-RB pairs a passing and a failing trace of the same problem. A policy that rarely
solves anything (the 135M smoke model) never yields both, so the smoke LCB-RB set would be
empty. Seeding fixes the *code* and lets the model write the *reasoning*: for each problem the
candidate programs are its reference solution ("reference"), the benchmark's own faulty
variants where it has them (microbench: "wrong", "naive"), and single-fault mutants of the
reference (recode_lib.process_reward.lcbrb.mutants, "mutant:<op>"). The policy is shown the problem
and one program, without being told which kind it is, and asked for the step-by-step reasoning that
leads to it (the same prompt for every kind). The trace is that reasoning followed by the
program, in the shared response format. The sandbox then judges the program for real: a
mutant that still passes is recorded with outcome "correct" (an equivalent mutant, counted),
never assumed to fail.

Every record says where its code came from ("origin", "origin_detail") and carries
`seeded=True`, so seeded pairs can be counted, reported and filtered apart from pairs whose
code the policy wrote itself (the paper's construction). A reply with no usable reasoning is
kept with usable=False and its reason. Resumable (JsonlStore keyed by id), with a tqdm bar.
It does not build pairs (lcbrb) and does not judge consistency (judges).
"""

from __future__ import annotations

import re
from collections import Counter

from tqdm.auto import tqdm

from recode_lib.core.jsonl import JsonlStore
from recode_lib.core.prompts import canonical_trace, user_prompt
from recode_lib.generation.chat import generate, make_generator
from recode_lib.process_reward.crpl import CRPLConfig, judge_and_store
from recode_lib.process_reward.lcbrb.mutants import make_mutants, normalize

EXPLAIN_SYSTEM = (
    "You are an expert Python programmer. Given a programming problem and a solution, write "
    "the step-by-step reasoning you would think through before writing that solution: what "
    "the problem asks, the plan, and how each part of the code implements it. Reply with the "
    "reasoning only, in plain prose, without code blocks."
)
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_TAGS = re.compile(r"</?think>")


def explain_messages(prompt_text: str, code: str) -> list[dict]:
    """Chat messages asking for the reasoning behind `code` (the same for every kind)."""
    user = (
        f"Problem:\n{prompt_text.strip()}\n\nSolution:\n```python\n{code.strip()}\n```\n\n"
        "Write the reasoning that leads to this solution."
    )
    return [{"role": "system", "content": EXPLAIN_SYSTEM}, {"role": "user", "content": user}]


def clean_reasoning(text: str) -> str:
    """The reply without code blocks and <think> tags, whitespace-trimmed ('' if nothing)."""
    return _TAGS.sub("", _FENCED.sub("", text or "")).strip()


def seed_programs(problem, n_mutants: int = 2, seed: int = 0) -> list[tuple[str, str, str]]:
    """[(origin, detail, code)] for one problem: reference, the benchmark's own faulty
    variants (metadata "wrong"/"naive"), then up to n_mutants mutants of the reference.
    [] when the problem has no reference solution."""
    ref = problem.reference_solution
    if not ref or not ref.strip():
        return []
    meta = problem.metadata or {}
    own = [(k, k, meta[k]) for k in ("wrong", "naive") if isinstance(meta.get(k), str)]
    try:
        mutants = make_mutants(ref, n=n_mutants, seed=seed) if n_mutants > 0 else []
        shown_ref = normalize(ref) if mutants else ref
    except SyntaxError:
        mutants, shown_ref = [], ref
    return (
        [("reference", "reference", shown_ref)]
        + own
        + [(f"mutant:{m.op}", m.site, m.code) for m in mutants]
    )


def generate_seeded_traces(
    problems, cfg: CRPLConfig, store_path, *, n_mutants: int = 2, generator=None, execute=None
) -> tuple[list[dict], dict]:
    """(records, report). One record per (problem, seeded program), id "<pid>#<origin>#<k>".
    cfg supplies the policy (model, backend, temperature, max_new_tokens), batch_size, seed."""
    store = JsonlStore(store_path)
    report = Counter()
    jobs = []
    for p in problems:
        progs = seed_programs(p, n_mutants=n_mutants, seed=cfg.seed)
        if not progs:
            report["problems_without_reference"] += 1
        for k, (origin, detail, code) in enumerate(progs):
            jobs.append((p, f"{p.id}#{origin.split(':')[0]}#{k}", origin, detail, code))
    wanted = [j[1] for j in jobs]
    todo = [j for j in jobs if j[1] not in store]
    if todo and generator is None:
        generator = make_generator(cfg.policy_backend, cfg.policy)
    bar = tqdm(total=len(todo), desc="seeded traces", unit="trace")
    for start in range(0, len(todo), cfg.batch_size):
        chunk = todo[start : start + cfg.batch_size]
        outs = generate(
            generator,
            [explain_messages(user_prompt(p), code) for p, _, _, _, code in chunk],
            temperature=cfg.policy_temperature,
            top_p=0.95,
            max_new_tokens=cfg.policy_max_new_tokens,
            n=1,
            seed=cfg.seed + start,
        )
        recs = []
        for (p, tid, origin, detail, code), comps in zip(chunk, outs, strict=True):
            reasoning = clean_reasoning(comps[0].text)
            trace, why = canonical_trace(reasoning, code)
            usable = trace is not None
            recs.append(
                {
                    "id": tid,
                    "problem_id": p.id,
                    "policy": cfg.policy,
                    "seeded": True,
                    "origin": origin,
                    "origin_detail": detail,
                    "prompt": user_prompt(p),
                    "entry_point": p.entry_point,
                    "response": comps[0].text,
                    "reasoning": reasoning,
                    "reasoning_from": "explain_given_code",
                    "code": code,
                    "trace": trace,
                    "usable": usable,
                    "format_ok": usable,
                    "reason": ""
                    if usable
                    else ("no reasoning in the reply" if not reasoning else why),
                    "n_tokens": comps[0].n_tokens,
                    "time_limit_s": p.time_limit_s,
                    "memory_mb": p.memory_mb,
                }
            )
        judge_and_store(recs, [p for p, *_ in chunk], store, execute)
        bar.update(len(chunk))
    bar.close()
    keep = set(wanted)
    records = [r for r in store.records() if r["id"] in keep]
    for r in records:
        kind = r["origin"].split(":")[0]
        report[f"{kind}:{r['verdict']['outcome']}"] += 1
        if not r["usable"]:
            report["unusable"] += 1
    report["equivalent_mutants"] = report.get("mutant:correct", 0)
    report["failing_references"] = sum(
        v for k, v in report.items() if k.startswith("reference:") and k != "reference:correct"
    )
    report["traces"] = len(records)
    return records, dict(report)
