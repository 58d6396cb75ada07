"""The one code-evaluation loop, over an EvalSpec: generate -> extract code -> sandbox -> rows
-> summary.

    summary = run_evaluation(spec, "smollm2", problems, RUN / "05_codegen_eval" / "hep",
                             benchmark="humanevalplus")
    # usually spec.evaluate(...) (recode_lib.evaluation.spec), or `recode eval`

It does not train, and it does not decide which tests a benchmark has (the loaders in
recode_lib.data do).
More: docs/modules/evaluation.md (recode_lib.evaluation.loop).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from recode_lib.core.bench_env import judge_env, judge_env_guard, require_env
from recode_lib.core.jsonl import JsonlStore, write_json_atomic
from recode_lib.core.linux import require_linux
from recode_lib.core.locks import OutputLock
from recode_lib.core.models import model_stamp
from recode_lib.core.stamps import provenance
from recode_lib.evaluation.episodes import episode_strategy
from recode_lib.evaluation.guard import guard_run, precision_field
from recode_lib.evaluation.rows import (
    as_problems,
    check_rows,
    episode_row,
    result_fields,
    sample_id,
)
from recode_lib.evaluation.summary import summarize
from recode_lib.generation.data_parallel import device_kind
from recode_lib.sandbox import execute_many
from recode_lib.sandbox.checker import require_checkers


def overlap_judging(spec, generator=None) -> bool:
    """Judge while generating (the default) when generation runs on GPUs: the vllm backend
    on a CUDA machine, single setting. On a CPU the sandbox would take cores from the
    generator, so there it judges after generating."""
    if spec.setting != "single" or spec.backend != "vllm":
        return False
    return device_kind(getattr(generator, "engine_name", "vllm")) == "cuda"


def run_evaluation(
    spec,
    model,
    problems,
    out_dir,
    *,
    benchmark: str | None = None,
    generator=None,
    generator_kwargs: dict | None = None,
    factory=None,
    overlap: bool | None = None,
) -> dict:
    """Evaluate `model` on `problems` as `spec` (an EvalSpec) says; returns (and writes) the
    summary. `generator` reuses a loaded backend (tool/agentic: one that renders the tools,
    episodes.generator_for); otherwise one is built from spec.backend and `generator_kwargs`
    (None: spec.generator_kwargs()) when something must be generated. `factory` replaces the
    tool/agentic setting's environment factory. `overlap` (single setting): judge finished
    samples in batches while the rest generate (None: overlap_judging decides)."""
    problems = as_problems(problems)
    require_env(problems, smoke=spec.env_missing_ok)  # BigCodeBench's libraries, before generating
    require_checkers(
        [p.tests for p in problems],
        spec.sandbox.checker_fallback,
        f"evaluating {benchmark or 'these problems'}",
    )  # before anything is generated
    sampling = spec.sampling()
    ks = list(spec.k)
    if not ks or ks[0] < 1 or ks[-1] > sampling.n:
        raise ValueError(f"pass@k needs 1 <= k <= n; got k={ks} with n={sampling.n}")
    strategy = episode_strategy(spec, model, generator, generator_kwargs, factory)
    with OutputLock(out_dir, folder=True):  # one writer per evaluation folder
        return evaluate_locked(
            spec,
            model,
            problems,
            out_dir,
            sampling,
            ks,
            strategy,
            benchmark=benchmark,
            generator=generator,
            generator_kwargs=generator_kwargs,
            overlap=overlap,
        )


def evaluate_locked(
    spec,
    model,
    problems,
    out_dir,
    sampling,
    ks,
    strategy,
    *,
    benchmark,
    generator,
    generator_kwargs,
    overlap: bool | None = None,
) -> dict:
    """run_evaluation's body, run while this process holds the folder's writer lock."""
    out = guard_run(
        out_dir,
        {
            "model": str(model),
            "model_stamp": model_stamp(model),
            "sampling": sampling.sample_key(),
            "reasoning": bool(spec.reasoning),
            "early_stop": bool(spec.early_stop),
            **precision_field(spec.precision),
            **strategy.guard_fields(),
            **judge_env_guard(problems),
        },
        spec.on_config_change,
        problems=[p.id for p in problems],
    )
    store = JsonlStore(out / "samples.jsonl")
    done = check_rows(store)
    wanted = [(p, i) for p in problems for i in range(sampling.n)]
    missing = [(p, i) for p, i in wanted if sample_id(p.id, i) not in done]
    if missing and (strategy.runs_tools or spec.ray in (None, "local")):
        require_linux(
            "evaluation"
            if spec.setting == "single"
            else f"evaluation in the {spec.setting} setting"
        )
    lock = threading.Lock()
    pending: dict = {}

    def on_result(res: dict) -> None:
        row = {**pending[res["id"]], **result_fields(res)}
        with lock:
            store.append(row)

    def judge(episodes: list) -> None:
        records = []
        for e in episodes:
            row, record = episode_row(e.problem, e)
            if row["id"] in pending:
                continue
            pending[row["id"]] = row
            records.append(record)
        if records:
            execute_many(
                records,
                workers=spec.sandbox.workers,
                config=spec.sandbox,
                progress=spec.progress and not early,
                early_stop=spec.early_stop,
                on_result=on_result,
                ray=spec.ray,
                chunk_size=spec.chunk_size,
            )

    if overlap is None:
        overlap = overlap_judging(spec, generator)
    early = bool(overlap and missing and spec.setting == "single")
    judging: list = []
    t_exec_overlap = 0.0
    t0 = time.perf_counter()
    if early:
        # judge finished samples while the rest generate (the sandbox on CPUs, the engines on
        # GPUs): one judging thread, batches in order
        with ThreadPoolExecutor(max_workers=1) as judge_thread:
            episodes = strategy.run(
                missing,
                out,
                progress=spec.progress,
                on_episodes=lambda eps: judging.append(judge_thread.submit(judge, eps)),
            )
            t_gen = time.perf_counter() - t0
            for fut in judging:
                fut.result()
        t_exec_overlap = time.perf_counter() - t0 - t_gen
    else:
        episodes = strategy.run(missing, out, progress=spec.progress) if missing else []
        t_gen = time.perf_counter() - t0

    t1 = time.perf_counter()
    judge(episodes)
    t_exec = time.perf_counter() - t1 + t_exec_overlap

    by_id = check_rows(store)
    rows = [by_id[sample_id(p.id, i)] for p, i in wanted]
    summary = summarize(rows, ks, seed=sampling.seed)
    total = t_gen + t_exec
    new_problems = len({p.id for p, _ in missing})
    backend = spec.backend if generator is None else getattr(generator, "backend", "custom")
    kwargs = (
        {}
        if generator is not None
        else (spec.generator_kwargs() if generator_kwargs is None else dict(generator_kwargs))
    )
    summary.update(
        setting=spec.setting,
        **strategy.summary_fields(rows),
        model=str(model),
        benchmark=benchmark,
        backend=backend,
        sampling=sampling.to_dict(),
        k=ks,
        reasoning=spec.reasoning,
        out_dir=str(out),
        timing={
            "generation_s": t_gen,
            "execution_s": t_exec,
            "new_samples": len(missing),
            "new_problems": new_problems,
            "seconds_per_episode": t_gen / len(missing) if missing else None,
            "problems_per_minute": new_problems / total * 60 if missing and total > 0 else None,
        },
        provenance=provenance(
            seed=sampling.seed,
            config={
                "model": str(model),
                "benchmark": benchmark,
                "backend": spec.backend,
                "setting": spec.setting,
                "sampling": sampling.to_dict(),
                "k": ks,
                "reasoning": spec.reasoning,
                "early_stop": spec.early_stop,
                **strategy.config_fields(),
                "sandbox": spec.to_dict()["sandbox"],
                **judge_env(problems),  # BigCodeBench's interpreter and its packages' hash
                "generator_kwargs": kwargs,
            },
        ),
    )
    write_json_atomic(out / "summary.json", summary)
    return summary
