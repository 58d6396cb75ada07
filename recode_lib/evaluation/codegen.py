"""Single-turn code-generation evaluation by keyword arguments: a thin name over the one loop.

    from recode_lib.evaluation.codegen import evaluate
    summary = evaluate("smollm2", problems, backend="hf", out_dir=RUN / "05_codegen_eval" / "hep",
                       sampling=SamplingConfig(temperature=0.8, n=10, max_new_tokens=512),
                       k=(1, 10))

    recode eval --model smollm2 --benchmark humanevalplus --limit 20 --n 1 --k 1 --out DIR

`evaluate` builds the EvalSpec of its arguments (setting "single") and runs
recode_lib.evaluation.loop.run_evaluation, the loop every setting and EvalSpec.evaluate use: the
prompt, generation (cached in DIR/generations.jsonl), the program (recode_lib.core.assemble; no
parsable code block, or a response cut at the token limit, is a format error: status "no_code",
never run), the sandbox, the rows (fields: recode_lib.evaluation.rows), summary.json (with
`setting` "single") and run.json (the run guard) are the loop's. It re-exports the row
module's names older callers import from here (as_problems, TRUNCATED, STRICTNESS_KS, REQUIRED).
"""

from __future__ import annotations

from collections.abc import Sequence

from recode_lib.evaluation import spec as eval_spec
from recode_lib.evaluation.loop import run_evaluation

# rows first: math.py imports TRUNCATED from here, and this module's spec import below reaches
# math.py (spec -> math -> codegen) before this module has finished importing
from recode_lib.evaluation.rows import REQUIRED, STRICTNESS_KS, TRUNCATED, as_problems
from recode_lib.generation import Generator, SamplingConfig
from recode_lib.sandbox.config import SandboxConfig

__all__ = ["evaluate", "as_problems", "TRUNCATED", "STRICTNESS_KS", "REQUIRED"]


def evaluate(
    model,
    problems: Sequence,
    *,
    backend: str = "hf",
    sampling: SamplingConfig | None = None,
    out_dir,
    k: Sequence[int] = (1,),
    reasoning: bool = True,
    benchmark: str | None = None,
    generator: Generator | None = None,
    generator_kwargs: dict | None = None,
    workers: int | None = None,
    sandbox_config: SandboxConfig | None = None,
    early_stop: bool = False,
    progress: bool = True,
    on_config_change: str = "raise",
    ray: str | None = None,
    chunk_size: int | None = None,
) -> dict:
    """Evaluate `model` on `problems` in the single setting; returns (and writes) the summary.
    The arguments are EvalSpec's (sampling: its temperature, top_p, max_new_tokens, n, seed;
    workers and sandbox_config: its sandbox). `generator` reuses an existing backend;
    otherwise get_generator(backend, model, **generator_kwargs) is built when something must
    be generated."""
    spec = eval_spec.EvalSpec.from_sampling(
        sampling,
        backend=backend,
        k=tuple(k),
        reasoning=reasoning,
        sandbox=sandbox_config or SandboxConfig(),
        workers=workers,
        early_stop=early_stop,
        progress=progress,
        on_config_change=on_config_change,
        ray=ray,
        chunk_size=chunk_size,
    )
    return run_evaluation(
        spec,
        model,
        problems,
        out_dir,
        benchmark=benchmark,
        generator=generator,
        generator_kwargs=dict(generator_kwargs or {}),
    )
