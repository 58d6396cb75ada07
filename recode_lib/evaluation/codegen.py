"""The code-generation evaluation harness (`recode eval`, arguments in recode_lib.cli.eval): prompt, generate, extract, execute, classify, score.

    from recode_lib.evaluation.codegen import evaluate
    summary = evaluate("smollm2", problems, backend="hf", out_dir=RUN / "05_codegen_eval" / "hep",
                       sampling=SamplingConfig(temperature=0.8, n=10, max_new_tokens=512),
                       k=(1, 10))

    recode eval --model smollm2 --benchmark humanevalplus --limit 20 --n 1 --k 1 --out DIR

Per sample: chat prompt from recode_lib.prompts.build_messages; generation through
recode_lib.generation (cached per (model, prompt, sampling, index) in DIR/generations.jsonl);
the program from recode_lib.assemble (a response without a parsable code block is a format
error, recorded as status "no_code", and never sent to the sandbox). A response that hit the
token limit (finish_reason "length") is a format error too, even when a partial code block
parses (paper B: format errors at |alpha| > 2 are "token exhaustion"): status "no_code",
format_ok false, format_reason "truncated ...", not executed, code null. Execution with
recode_lib.sandbox.execute_many (on a Ray cluster with `ray`); the sandbox's status and outcome. Outputs in DIR:
  samples.jsonl  one record per (problem, sample), id "<problem_id>#<sample>": problem_id,
                 sample, response, code, status, outcome, passed, total, n_tokens,
                 finish_reason, format_ok, format_reason, assembly, dropped, time_s,
                 memory_mb, strictness ({"1".."5","inf"}: R_k of the extrapolation paper),
                 trust (the sandbox result's trust level: "isolated", or "in_process" for
                 inline unittest-style script tests, whose pass the submission can forge;
                 counted in the summary's `trust`),
                 first_failure (sandbox.first_failure: the first failing test's status,
                 input length and time; None when correct or when there was no code),
                 checker (only for problems with a testlib checker: "testlib", or
                 "exact_fallback" when it could not be built; counted in the summary)
  summary.json   recode_lib.evaluation.summary.summarize (pass@k with bootstrap CI, outcome and
                 status rates, tokens per response, format), `setting` ("single"; the tool
                 and agentic settings are recode_lib.evaluation.multiturn's), timing and throughput of this
                 call, and provenance (seed, config, git hash, versions)
  run.json       what the results depend on (model, model_stamp: the local folder's weight
                 files, sampling except n, prompt style, early_stop: with them every field of
                 the evaluation spec's protocol; and the problem set, a hash of the sorted
                 problem ids, with the ids); a later call with a different one (e.g. the
                 same folder asked for the hard problems only) raises naming the folder and
                 both problem sets, or with on_config_change="set_aside" moves the old
                 folder aside and re-evaluates, instead of mixing results.
Resumable at both stages: finished samples are skipped, generated-but-unexecuted ones are only
executed, and raising n adds samples. It does not train, and it does not decide which tests a
benchmark has (the loaders in recode_lib.data do).
"""

from __future__ import annotations

import threading
import time
from typing import Sequence

from recode_lib.assemble import assemble
from recode_lib.data.schema import Problem
from recode_lib.evaluation.guard import guard_run
from recode_lib.evaluation.summary import summarize
from recode_lib.generation import (CachedGenerator, Generator, SampleRequest, SamplingConfig,
                                   get_generator, sample_seed)
from recode_lib.jsonl import JsonlError, JsonlStore, write_json_atomic
from recode_lib.linux import require_linux
from recode_lib.models import model_stamp
from recode_lib.prompts import build_messages
from recode_lib.provenance import provenance
from recode_lib.sandbox import execute_many, first_failure, strictness
from recode_lib.sandbox.records import runs_in_process, time_rule_of
from recode_lib.sandbox.result import IN_PROCESS, ISOLATED

STRICTNESS_KS = (1, 2, 3, 4, 5, "inf")
TRUNCATED = "length"   # the finish_reason of a response that hit max_new_tokens
REQUIRED = ("problem_id", "sample", "response", "code", "status", "outcome", "passed", "total",
            "n_tokens", "finish_reason")


class _LazyGenerator(Generator):
    """Builds the real backend only when a sample is actually missing from the cache."""

    def __init__(self, backend: str, model: str, kwargs: dict):
        self.backend, self.model, self.kwargs, self.inner = backend, str(model), kwargs, None

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        if self.inner is None:
            self.inner = get_generator(self.backend, self.model, **self.kwargs)
        return self.inner.generate_samples(requests, sampling, callback, progress)


def as_problems(problems) -> list[Problem]:
    out, seen = [], set()
    for i, p in enumerate(problems):
        if isinstance(p, dict):
            p = Problem.from_dict(p, where=f"problem {i} ({p.get('id', '?')!r})")
        if not isinstance(p, Problem):
            raise TypeError(f"problem {i}: expected a Problem, got {type(p).__name__}")
        if p.id in seen:
            raise ValueError(f"problem {i}: duplicate id {p.id!r}")
        seen.add(p.id)
        out.append(p)
    if not out:
        raise ValueError("evaluate: no problems")
    return out


def _check_rows(store: JsonlStore) -> dict[str, dict]:
    by_id = {}
    for j, r in enumerate(store.records()):
        for f in REQUIRED:
            if f not in r:
                raise JsonlError(f"{store.path}: record {j + 1} (id {r['id']!r}) lacks field {f!r}")
        by_id[r["id"]] = r
    return by_id


def n_tests(problem: Problem) -> int:
    return 1 if problem.tests["kind"] == "script" else len(problem.tests.get("cases", []))



def no_code_result(p) -> dict:
    """The result fields of a sample that has no code to run (a format error at every k)."""
    return {"status": "no_code", "outcome": "format_error", "passed": 0, "total": n_tests(p),
            "time_s": 0.0, "memory_mb": None,
            "strictness": {str(s): 0 for s in STRICTNESS_KS}, "first_failure": None,
            "trust": IN_PROCESS if runs_in_process(p.tests) else ISOLATED}


def sandbox_record(sid: str, code: str, p) -> dict:
    """The `recode sandbox` record that judges `code` on problem p's tests."""
    return {"id": sid, "code": code, "tests": p.tests, "time_limit_s": p.time_limit_s,
            "memory_mb": p.memory_mb}

def evaluate(model, problems: Sequence, *, backend: str = "hf",
             sampling: SamplingConfig | None = None, out_dir, k: Sequence[int] = (1,),
             reasoning: bool = True, benchmark: str | None = None,
             generator: Generator | None = None, generator_kwargs: dict | None = None,
             workers: int | None = None, sandbox_config=None, early_stop: bool = False,
             progress: bool = True, on_config_change: str = "raise", ray: str | None = None,
             chunk_size: int | None = None) -> dict:
    """Evaluate `model` on `problems`; returns (and writes) the summary. `generator` reuses an
    existing backend (e.g. one loaded model for several benchmarks); otherwise
    get_generator(backend, model, **generator_kwargs) is built when something must be
    generated. `early_stop` stops a sample's tests at its first failure (faster; the outcome
    class is then decided by that test alone). `on_config_change`: when out_dir holds results
    of another model/sampling/prompt style, "raise" (default) or "set_aside" (rename the old
    folder to <out_dir>.stale-<k>, printed, and start clean: what re-run notebooks use).
    `ray` (a Ray address) and `chunk_size` run the sandbox as Ray tasks (execute_many's)."""
    problems = as_problems(problems)
    sampling = sampling or SamplingConfig()
    ks = sorted({int(x) for x in k})
    if not ks or ks[0] < 1 or ks[-1] > sampling.n:
        raise ValueError(f"pass@k needs 1 <= k <= n; got k={ks} with n={sampling.n}")
    out = guard_run(out_dir, {"model": str(model), "model_stamp": model_stamp(model),
                              "sampling": sampling.sample_key(), "reasoning": bool(reasoning),
                              "early_stop": bool(early_stop)},
                    on_config_change, problems=[p.id for p in problems])
    store = JsonlStore(out / "samples.jsonl")
    by_id = _check_rows(store)
    wanted = [(p, i) for p in problems for i in range(sampling.n)]
    missing = [(p, i) for p, i in wanted if f"{p.id}#{i}" not in by_id]
    if missing and ray in (None, "local"):   # run in the sandbox here (else on the Ray nodes)
        require_linux("evaluation")
    t0 = time.perf_counter()
    comps = []
    if missing:
        msgs = {p.id: build_messages(p, reasoning=reasoning) for p, _ in missing}
        inner = generator or _LazyGenerator(backend, model, dict(generator_kwargs or {}))
        cached = CachedGenerator(inner, out / "generations.jsonl", model_key=str(model))
        reqs = [SampleRequest(msgs[p.id], i, sample_seed(sampling.seed, msgs[p.id], i))
                for p, i in missing]
        comps = cached.generate_samples(reqs, sampling, progress=progress)
    t_gen = time.perf_counter() - t0

    pending: dict[str, dict] = {}
    records = []
    lock = threading.Lock()
    for (p, i), comp in zip(missing, comps):
        prog = assemble(p, comp.text)
        sid = f"{p.id}#{i}"
        truncated = comp.finish_reason == TRUNCATED
        row = {"id": sid, "problem_id": p.id, "sample": i, "response": comp.text,
               "code": None if truncated else prog.code, "n_tokens": comp.n_tokens,
               "finish_reason": comp.finish_reason,
               "format_ok": prog.parsed.format_ok and not truncated,
               "format_reason": f"truncated at the token limit ({comp.n_tokens} tokens)"
               if truncated else prog.parsed.reason,
               "assembly": prog.how, "dropped": prog.dropped,
               "time_rule": time_rule_of(p.tests)}
        if row["code"] is None:
            store.append({**row, **no_code_result(p)})
            continue
        pending[sid] = row
        records.append(sandbox_record(sid, prog.code, p))

    def on_result(res: dict) -> None:
        row = {**pending[res["id"]], **{f: res[f] for f in ("status", "outcome", "passed",
                                                          "total", "time_s", "memory_mb")},
               "trust": res.get("trust")}
        row["strictness"] = strictness(res, STRICTNESS_KS)
        row["first_failure"] = first_failure(res)
        if "checker" in res:   # testlib | exact_fallback (CodeContests+)
            row["checker"] = res["checker"]
        with lock:
            store.append(row)

    t1 = time.perf_counter()
    if records:
        execute_many(records, workers=workers, config=sandbox_config, progress=progress,
                     early_stop=early_stop, on_result=on_result, ray=ray, chunk_size=chunk_size)
    t_exec = time.perf_counter() - t1

    by_id = _check_rows(store)
    rows = [by_id[f"{p.id}#{i}"] for p, i in wanted]
    summary = summarize(rows, ks, seed=sampling.seed)
    total = t_gen + t_exec
    new_problems = len({p.id for p, _ in missing})
    summary.update(
        setting="single", model=str(model), benchmark=benchmark,
        backend=backend if generator is None
        else generator.backend, sampling=sampling.to_dict(), k=ks, reasoning=reasoning,
        out_dir=str(out),
        timing={"generation_s": t_gen, "execution_s": t_exec, "new_samples": len(missing),
                "new_problems": new_problems,
                "problems_per_minute": new_problems / total * 60 if missing and total > 0
                else None},
        provenance=provenance(seed=sampling.seed, config={
            "model": str(model), "benchmark": benchmark, "backend": backend,
            "sampling": sampling.to_dict(), "k": ks, "reasoning": reasoning,
            "early_stop": early_stop, "generator_kwargs": generator_kwargs or {}}))
    write_json_atomic(out / "summary.json", summary)
    return summary
