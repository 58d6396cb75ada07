"""The train/held-out split every training notebook uses.

    train, held_out = train_eval_split("mbppplus", n_train=8, n_eval=8)
    train, held_out = train_eval_split("microbench", 8, 8, eval_benchmark="livecodebench")

Without `eval_benchmark`: the first n_train problems of `benchmark` train and the next n_eval
are held out (disjoint by construction). With it: the first n_train of `benchmark` train and
the first n_eval of `eval_benchmark` are held out. n = 0 means "all" for a separate benchmark.
`eval_difficulty` keeps only held-out problems of that difficulty (e.g. "hard": the paper's
frontier is measured on LiveCodeBench-hard), chosen before the n_eval cut.
Raises ValueError naming the parameters when the held-out side (or, with require_train, the
training side) is empty. It does not shuffle: the benchmark's order is the split.
"""

from __future__ import annotations

from recode_lib.data import load_benchmark
from recode_lib.data.schema import Problem


def train_eval_split(
    benchmark: str,
    n_train: int,
    n_eval: int,
    *,
    eval_benchmark: str = "",
    require_train: bool = False,
    data_dir=None,
    eval_difficulty: str = "",
) -> tuple[list[Problem], list[Problem]]:
    """(training problems, held-out problems); see the module docstring."""
    if n_train < 0 or n_eval < 0:
        raise ValueError(f"n_train and n_eval must be >= 0, got {n_train}, {n_eval}")
    if eval_difficulty:
        train = load_benchmark(benchmark, limit=n_train or None, data_dir=data_dir)
        pool = (
            load_benchmark(eval_benchmark, data_dir=data_dir)
            if eval_benchmark
            else load_benchmark(benchmark, data_dir=data_dir)[n_train:]
        )
        held_out = [p for p in pool if p.difficulty == eval_difficulty][: n_eval or None]
        if not eval_benchmark and not n_eval:
            held_out = []
    elif eval_benchmark:
        train = load_benchmark(benchmark, limit=n_train or None, data_dir=data_dir)
        held_out = load_benchmark(eval_benchmark, limit=n_eval or None, data_dir=data_dir)
    else:
        problems = load_benchmark(benchmark, limit=n_train + n_eval, data_dir=data_dir)
        train, held_out = problems[:n_train], problems[n_train : n_train + n_eval]
    if not held_out or (require_train and not train):
        what = "training and held-out problems" if require_train else "held-out problems"
        raise ValueError(
            f"no {what}: benchmark={benchmark!r} eval_benchmark={eval_benchmark!r} "
            f"n_train={n_train} n_eval={n_eval} eval_difficulty={eval_difficulty!r}"
        )
    return train, held_out
