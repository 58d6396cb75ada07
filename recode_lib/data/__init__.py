"""Benchmark loaders behind one registry; every loader returns list[Problem] (schema.py).

    from recode_lib.data import load_benchmark, list_benchmarks, available_benchmarks
    probs = load_benchmark("humanevalplus", limit=10)
    probs = load_benchmark("livecodebench", release="release_v5", start_date="2024-08-01",
                           difficulty="hard")
    probs = load_benchmark("codecontests_plus", config="3x")
    available_benchmarks()   # names whose files are present locally (nothing is downloaded)

Names: humaneval, humanevalplus, mbpp, mbppplus, bigcodebench (subset=full|hard,
split=complete|instruct), bigcodebench_hard, livecodebench, codecontests_plus, leetcode,
aime24, microbench, easy (the laptop profile's seeded easy tasks, data/easy_tasks.py),
`calibrated:<profile>` (the problems that profile's calibration kept, 0 < start-model pass rate
< 1: runs/<profile>/00_data_and_models/calibrated.jsonl; `calibrated:<profile>:disagree` puts
first those on which the start model's lenient and strict pass rates differ), and the math training sets math_train (a public set through `datasets`
or local files, data/math_train.py) and math_synth (offline, generated; data/math_synth.py).
Each loader reads the data directory (`data_dir=`, else
recode_lib.paths.data_dir()) and, when files are missing and `download=True` (the default),
fetches the canonical source (upstream release file or Hugging Face `datasets`). An unknown
name or option raises ValueError listing the valid ones. Loaders are imported lazily.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from recode_lib.data._io import DataError, resolve_data_dir
from recode_lib.data.schema import Problem, ProblemError

# name -> (module, function, fixed options, files that make it available locally)
_REGISTRY: dict[str, tuple[str, str, dict, tuple[str, ...]]] = {
    "humaneval": ("humaneval", "load_humaneval", {}, ("HumanEval.jsonl.gz", "HumanEval.jsonl")),
    "humanevalplus": ("humaneval", "load_humanevalplus", {},
                      ("HumanEvalPlus.jsonl.gz", "HumanEvalPlus.jsonl")),
    "mbpp": ("mbpp", "load_mbpp", {}, ("mbpp.jsonl",)),
    "mbppplus": ("mbpp", "load_mbppplus", {}, ("MbppPlus.jsonl.gz", "MbppPlus.jsonl")),
    "bigcodebench": ("bigcodebench", "load_bigcodebench", {},
                     ("BigCodeBench-v0.1.0.jsonl.gz", "BigCodeBench-v0.1.0.jsonl")),
    "bigcodebench_hard": ("bigcodebench", "load_bigcodebench", {"subset": "hard"},
                          ("BigCodeBench-Hard-v0.1.0.jsonl.gz",
                           "BigCodeBench-Hard-v0.1.0.jsonl")),
    "livecodebench": ("livecodebench", "load_livecodebench", {},
                      ("code_generation_lite/test.jsonl",
                       "livecodebench/code_generation_lite/test.jsonl",
                       "livecodebench/test.jsonl")),
    "codecontests_plus": ("codecontests", "load_codecontests_plus", {},
                          ("Code-Contests-Plus/ccplus_1x", "code_contests_plus/ccplus_1x",
                           "ccplus_1x")),
    "leetcode": ("leetcode", "load_leetcode", {}, ("leetcode-2023-07-to-2024-01.jsonl",)),
    "aime24": ("aime", "load_aime24", {}, ("aime24.jsonl",)),
    "microbench": ("microbench", "load_microbench", {}, ()),
    "math_synth": ("math_synth", "load_math_synth", {}, ()),
    "math_train": ("math_train", "load_math_train", {}, ("DigitalLearningGmbH/MATH-lighteval",)),
    "easy": ("easy_tasks", "load_easy_tasks", {}, ()),
}
CALIBRATED = "calibrated:"     # "calibrated:<profile>": the problems the profile's calibration kept


def list_benchmarks() -> list[str]:
    return list(_REGISTRY)


def _loader(name: str):
    if name.startswith(CALIBRATED):
        from recode_lib.data.easy_tasks import load_calibrated

        profile, _, order = name[len(CALIBRATED):].partition(":")
        return load_calibrated, {"profile": profile, **({"order": order} if order else {})}
    if name not in _REGISTRY:
        raise ValueError(f"unknown benchmark {name!r}; choose from {list_benchmarks()}")
    mod, fn, fixed, _ = _REGISTRY[name]
    return getattr(importlib.import_module(f"recode_lib.data.{mod}"), fn), fixed


def load_benchmark(name: str, *, limit: int | None = None, data_dir=None,
                   **options) -> list[Problem]:
    """Problems of benchmark `name`; options go to its loader (see the loader's docstring)."""
    fn, fixed = _loader(name)
    params = inspect.signature(fn).parameters
    bad = sorted(set(options) - set(params) | set(options) & set(fixed))
    if bad:
        valid = sorted(set(params) - {"data_dir", "limit"} - set(fixed))
        raise ValueError(f"benchmark {name!r}: unknown option(s) {bad}; valid: {valid}")
    return fn(data_dir=data_dir, limit=limit, **fixed, **options)


def available_benchmarks(data_dir=None) -> list[str]:
    """Benchmarks whose files exist locally (microbench and math_synth are always available)."""
    root: Path | None = resolve_data_dir(data_dir)
    out = []
    for name, (_, _, _, files) in _REGISTRY.items():
        if not files or (root is not None and any((root / f).exists() for f in files)):
            out.append(name)
    return out


__all__ = ["Problem", "ProblemError", "DataError", "load_benchmark", "list_benchmarks",
           "available_benchmarks"]
