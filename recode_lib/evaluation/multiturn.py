"""Evaluation in paper B's tool and agentic settings: the training environments at inference.

    from recode_lib.evaluation.multiturn import evaluate_setting
    summary = evaluate_setting("smollm2", problems, setting="tool", out_dir=DIR, backend="hf",
                               sampling=SamplingConfig(max_new_tokens=256), max_turns=5,
                               max_tool_calls=4, limits=ToolLimits(time_limit_s=5))
    # or EvalSpec(setting="tool", ...).evaluate(...), or `recode eval --setting tool`

Per sample, an episode (recode_lib.environments.rollout.run_episodes: the environment TRL trains
with, the same tool template and tool-call syntax) whose final answer (settings.final_answer:
the last answer turn, or the submitted file) is assembled and executed exactly as in
single-turn evaluation (recode_lib.evaluation.codegen's row fields, statuses, outcomes,
strictness, first failure and trust). No answer (turns ran out, nothing submitted) is status
"no_code", outcome "format_error", with the reason in `format_reason`. Each row adds: setting,
turns, tool_calls, tool_errors, tool_statuses, transcript (the generated messages and tool
results); n_tokens counts the model's tokens over all turns (tool results excluded).
summary.json = evaluation.summary.summarize plus `setting`, `episodes` (means of turns, tool
calls, tool errors; no-answer rate) and timing/provenance. Resumable per sample (finished rows
are kept; unfinished episodes are re-run from the start). run.json guards model, sampling,
prompt style, setting, limits, early_stop and the problem set (on_config_change as in codegen).
"""

from __future__ import annotations

import statistics
import time
from typing import Sequence

from recode_lib.assemble import assemble
from recode_lib.environments.rollout import run_episodes, tool_generator
from recode_lib.environments.settings import check_setting, environment_factory
from recode_lib.evaluation.guard import guard_run
from recode_lib.evaluation.codegen import STRICTNESS_KS, as_problems, no_code_result, sandbox_record
from recode_lib.evaluation.summary import summarize
from recode_lib.generation import SamplingConfig
from recode_lib.jsonl import JsonlStore, write_json_atomic
from recode_lib.linux import require_linux
from recode_lib.models import model_stamp
from recode_lib.prompts import build_messages
from recode_lib.provenance import provenance
from recode_lib.sandbox import execute_many, first_failure, strictness
from recode_lib.sandbox.records import time_rule_of
from recode_lib.sandbox.tools import ToolLimits



def problem_row(p, reasoning: bool = True) -> dict:
    """The row an environment is reset with: the training row's columns (recode_lib.training.grpo
    .code_row) plus `public_examples` from the problem's metadata when it has them."""
    row = {"prompt": build_messages(p, reasoning=reasoning), "problem_id": p.id,
           "starter_code": p.starter_code or "", "entry_point": p.entry_point or ""}
    examples = (p.metadata or {}).get("public_examples")
    if isinstance(examples, list):
        row["public_examples"] = examples
    return row


def episode_summary(rows: list[dict]) -> dict:
    def mean(key):
        return statistics.fmean(float(r.get(key) or 0) for r in rows) if rows else 0.0
    return {"mean_turns": mean("turns"), "mean_tool_calls": mean("tool_calls"),
            "mean_tool_errors": mean("tool_errors"),
            "tool_error_rate": (sum(r.get("tool_errors") or 0 for r in rows)
                                / max(1, sum(r.get("tool_calls") or 0 for r in rows))),
            "no_answer_rate": sum(bool(r.get("no_answer")) for r in rows) / max(1, len(rows))}


def evaluate_setting(model, problems: Sequence, *, setting: str, out_dir, backend: str = "hf",
                     sampling: SamplingConfig | None = None, k: Sequence[int] = (1,),
                     reasoning: bool = True, benchmark: str | None = None, generator=None,
                     generator_kwargs: dict | None = None, max_turns: int = 5,
                     max_tool_calls: int = 4, limits=None, workers: int | None = None,
                     early_stop: bool = False, progress: bool = True,
                     on_config_change: str = "raise", factory=None) -> dict:
    """Evaluate `model` in the tool or agentic setting; returns (and writes) the summary.
    `generator` (e.g. a scripted policy, or a loaded backend from rollout.tool_generator)
    replaces building one; `factory` replaces the setting's environment factory."""
    check_setting(setting)
    if setting == "single":
        raise ValueError("evaluate_setting is for the tool and agentic settings; single-turn "
                         "evaluation is recode_lib.evaluation.codegen.evaluate")
    problems = as_problems(problems)
    sampling = sampling or SamplingConfig()
    limits = limits or ToolLimits()
    ks = sorted({int(x) for x in k})
    if not ks or ks[0] < 1 or ks[-1] > sampling.n:
        raise ValueError(f"pass@k needs 1 <= k <= n; got k={ks} with n={sampling.n}")
    out = guard_run(out_dir, {"model": str(model), "model_stamp": model_stamp(model),
                              "sampling": sampling.sample_key(), "reasoning": bool(reasoning),
                              "setting": setting, "max_turns": int(max_turns),
                              "max_tool_calls": int(max_tool_calls),
                              "limits": {f: getattr(limits, f) for f in (
                                  "time_limit_s", "memory_mb", "max_output_chars")},
                              "early_stop": bool(early_stop)},
                    on_config_change, problems=[p.id for p in problems])
    store = JsonlStore(out / "samples.jsonl")
    done = {r["id"]: r for r in store.records()}
    wanted = [(p, i) for p in problems for i in range(sampling.n)]
    missing_problems = [p for p in problems if any(f"{p.id}#{i}" not in done
                                                   for i in range(sampling.n))]
    t0 = time.perf_counter()
    episodes = []
    if missing_problems:     # episodes run tools in the sandbox, answers are judged there: Linux
        require_linux(f"evaluation in the {setting} setting")
        gen = generator or tool_generator(backend, model, setting, **dict(generator_kwargs or {}))
        factory = factory or environment_factory(setting, max_calls=max_tool_calls, limits=limits)
        rows = [problem_row(p, reasoning) for p in missing_problems]
        episodes = run_episodes(gen, rows, setting, sampling, n=sampling.n, max_turns=max_turns,
                                factory=factory, progress=progress)
    t_gen = time.perf_counter() - t0
    by_pid = {p.id: p for p in problems}
    pending, records = {}, []
    for e in episodes:
        p = by_pid[e.row["problem_id"]]
        sid = f"{p.id}#{e.sample}"
        if sid in done:
            continue
        prog = assemble(p, e.answer)
        row = {"id": sid, "problem_id": p.id, "sample": e.sample, "setting": setting,
               "response": e.answer, "code": prog.code, "n_tokens": e.n_tokens,
               "finish_reason": e.finish_reason, "format_ok": prog.parsed.format_ok,
               "format_reason": e.no_answer or prog.parsed.reason, "assembly": prog.how,
               "dropped": prog.dropped, "turns": e.turns, "tool_calls": e.tool_calls,
               "tool_errors": e.tool_errors, "tool_statuses": e.statuses,
               "no_answer": e.no_answer, "transcript": e.transcript,
               "time_rule": time_rule_of(p.tests)}
        if prog.code is None:
            store.append({**row, **no_code_result(p)})
            continue
        pending[sid] = row
        records.append(sandbox_record(sid, prog.code, p))
    t1 = time.perf_counter()
    if records:
        for res in execute_many(records, workers=workers, progress=progress,
                                early_stop=early_stop):
            row = {**pending[res["id"]], **{f: res[f] for f in (
                "status", "outcome", "passed", "total", "time_s", "memory_mb")},
                   "trust": res.get("trust")}
            row["strictness"] = strictness(res, STRICTNESS_KS)
            row["first_failure"] = first_failure(res)
            store.append(row)
    t_exec = time.perf_counter() - t1
    by_id = {r["id"]: r for r in store.records()}
    rows = [by_id[f"{p.id}#{i}"] for p, i in wanted]
    summary = summarize(rows, ks, seed=sampling.seed)
    n_new = len(missing_problems)
    total = t_gen + t_exec
    summary.update(
        setting=setting, episodes=episode_summary(rows), model=str(model), benchmark=benchmark,
        backend=backend if generator is None else getattr(generator, "backend", "custom"),
        sampling=sampling.to_dict(), k=ks, reasoning=reasoning, out_dir=str(out),
        timing={"generation_s": t_gen, "execution_s": t_exec, "new_samples": len(episodes),
                "new_problems": n_new, "seconds_per_episode": t_gen / len(episodes)
                if episodes else None,
                "problems_per_minute": n_new / total * 60 if n_new and total > 0 else None},
        provenance=provenance(seed=sampling.seed, config={
            "model": str(model), "benchmark": benchmark, "backend": backend, "setting": setting,
            "sampling": sampling.to_dict(), "k": ks, "reasoning": reasoning,
            "max_turns": max_turns, "max_tool_calls": max_tool_calls,
            "early_stop": early_stop, "generator_kwargs": generator_kwargs or {}}))
    write_json_atomic(out / "summary.json", summary)
    return summary
