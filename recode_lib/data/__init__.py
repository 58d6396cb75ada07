"""Benchmark loaders behind one registry; every loader returns list[Problem] (schema.py).

    from recode_lib.data import load_benchmark, list_benchmarks, available_benchmarks
    probs = load_benchmark("humanevalplus", limit=10)
    probs = load_benchmark("livecodebench", release="release_v5", start_date="2024-08-01",
                           difficulty="hard")
    probs = load_benchmark("codecontests_plus", config="3x")
    available_benchmarks()   # names whose files are present locally (nothing is downloaded)

Loaders are imported lazily and download only files that are missing (download=True). Your own
benchmark: register_benchmark(name, loader).
More: docs/modules/data.md (recode_lib.data).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from pathlib import Path

from recode_lib.core.lazy import lazy_exports
from recode_lib.core.plugins import load_plugins
from recode_lib.data._io import DataError, resolve_data_dir
from recode_lib.data.calibrated import load_calibrated
from recode_lib.data.schema import Problem, ProblemError, validate_tests

# name -> (module, function, fixed options, files that make it available locally)
_REGISTRY: dict[str, tuple[str, str, dict, tuple[str, ...]]] = {
    "humaneval": ("humaneval", "load_humaneval", {}, ("HumanEval.jsonl.gz", "HumanEval.jsonl")),
    "humanevalplus": (
        "humaneval",
        "load_humanevalplus",
        {},
        ("HumanEvalPlus.jsonl.gz", "HumanEvalPlus.jsonl"),
    ),
    "mbpp": ("mbpp", "load_mbpp", {}, ("mbpp.jsonl",)),
    "mbppplus": ("mbpp", "load_mbppplus", {}, ("MbppPlus.jsonl.gz", "MbppPlus.jsonl")),
    "mbppplus_base": (
        "mbpp",
        "load_mbppplus",
        {"tests": "base"},
        ("MbppPlus.jsonl.gz", "MbppPlus.jsonl"),
    ),
    "mbpp_train": ("mbpp", "load_mbpp_train", {}, ("mbpp.jsonl",)),
    "bigcodebench": (
        "bigcodebench",
        "load_bigcodebench",
        {},
        ("BigCodeBench-v0.1.0.jsonl.gz", "BigCodeBench-v0.1.0.jsonl"),
    ),
    "bigcodebench_hard": (
        "bigcodebench",
        "load_bigcodebench",
        {"subset": "hard"},
        ("BigCodeBench-Hard-v0.1.0.jsonl.gz", "BigCodeBench-Hard-v0.1.0.jsonl"),
    ),
    "livecodebench": (
        "livecodebench",
        "load_livecodebench",
        {},
        (
            "code_generation_lite/test.jsonl",
            "livecodebench/code_generation_lite/test.jsonl",
            "livecodebench/test.jsonl",
        ),
    ),
    "codecontests_plus": (
        "codecontests",
        "load_codecontests_plus",
        {},
        ("Code-Contests-Plus/ccplus_1x", "code_contests_plus/ccplus_1x", "ccplus_1x"),
    ),
    "leetcode": ("leetcode", "load_leetcode", {}, ("leetcode-2023-07-to-2024-01.jsonl",)),
    "aime24": ("aime", "load_aime24", {}, ("aime24.jsonl",)),
    "microbench": ("microbench", "load_microbench", {}, ()),
    "math_synth": ("math_synth", "load_math_synth", {}, ()),
    "math_train": ("math_train", "load_math_train", {}, ("DigitalLearningGmbH/MATH-lighteval",)),
    "easy": ("easy_tasks", "load_easy_tasks", {}, ()),
}
# benchmarks that share problems (one task set, other tests or a subset): a name -> its family;
# a name not listed is its own family. Training data must not come from an evaluation's family.
FAMILIES = {
    "humanevalplus": "humaneval",
    "mbppplus": "mbpp",
    "mbppplus_base": "mbpp",
    "bigcodebench_hard": "bigcodebench",
}
CALIBRATED = "calibrated:"  # "calibrated:<profile>": the problems the profile's calibration kept
_CUSTOM: dict[str, Callable[..., list]] = {}  # register_benchmark: name -> your loader


def register_benchmark(name: str, loader: Callable[..., list] | None = None):
    """Register `loader` (`loader(**options) -> list[Problem]`, see the module docstring) as
    benchmark `name`; returns the loader. Without `loader`, a decorator."""
    if loader is None:
        return lambda fn: register_benchmark(name, fn)
    if not isinstance(name, str) or not name.strip() or ":" in name or name != name.strip():
        raise ValueError(
            f"register_benchmark: {name!r} is not a benchmark name (a non-empty "
            "string without ':' or surrounding spaces)"
        )
    if name in _REGISTRY:
        raise ValueError(
            f"register_benchmark: {name!r} is a built-in benchmark; choose another name"
        )
    if not callable(loader):
        raise TypeError(
            f"register_benchmark({name!r}): the loader must be callable, got "
            f"{type(loader).__name__}"
        )
    _CUSTOM[name] = loader
    return loader


def unregister_benchmark(name: str) -> None:
    """Remove benchmark `name` registered with register_benchmark (KeyError if there is none)."""
    del _CUSTOM[name]


def list_benchmarks() -> list[str]:
    load_plugins()
    return list(_REGISTRY) + [n for n in _CUSTOM if n not in _REGISTRY]


def _custom_problems(name: str, fn, limit, data_dir, options) -> list[Problem]:
    params = inspect.signature(fn).parameters
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    takes = {k for k in ("limit", "data_dir") if var_kw or k in params}
    bad = sorted(set(options) - set(params)) if not var_kw else []
    if bad:
        valid = sorted(set(params) - {"data_dir", "limit"})
        raise ValueError(f"benchmark {name!r}: unknown option(s) {bad}; valid: {valid}")
    extra = {k: v for k, v in (("limit", limit), ("data_dir", data_dir)) if k in takes}
    got = fn(**extra, **options)
    if isinstance(got, (str, bytes, dict)) or not hasattr(got, "__iter__"):
        raise ProblemError(
            f"benchmark {name!r}: the loader must return a list of Problem, got "
            f"{type(got).__name__}"
        )
    out, seen = [], set()
    for i, p in enumerate(got):
        where = f"benchmark {name!r}, problem {i}"
        if isinstance(p, dict):
            p = Problem.from_dict(p, where=where)
        if not isinstance(p, Problem):
            raise ProblemError(f"{where}: expected a Problem, got {type(p).__name__}")
        validate_tests(p.tests, f"{where} ({p.id!r})")
        if p.id in seen:
            raise ProblemError(f"{where}: duplicate id {p.id!r}")
        seen.add(p.id)
        out.append(p)
    return out if limit is None else out[:limit]


def _loader(name: str):
    if name.startswith(CALIBRATED):
        profile, _, order = name[len(CALIBRATED) :].partition(":")
        return load_calibrated, {"profile": profile, **({"order": order} if order else {})}
    if name not in _REGISTRY:
        raise ValueError(f"unknown benchmark {name!r}; choose from {list_benchmarks()}")
    mod, fn, fixed, _ = _REGISTRY[name]
    return getattr(importlib.import_module(f"recode_lib.data.{mod}"), fn), fixed


def load_benchmark(
    name: str, *, limit: int | None = None, data_dir=None, **options
) -> list[Problem]:
    """Problems of benchmark `name`; options go to its loader (see the loader's docstring)."""
    load_plugins()
    if name in _CUSTOM and name not in _REGISTRY:
        return _custom_problems(name, _CUSTOM[name], limit, data_dir, options)
    fn, fixed = _loader(name)
    params = inspect.signature(fn).parameters
    bad = sorted(set(options) - set(params) | set(options) & set(fixed))
    if bad:
        valid = sorted(set(params) - {"data_dir", "limit"} - set(fixed))
        raise ValueError(f"benchmark {name!r}: unknown option(s) {bad}; valid: {valid}")
    return fn(data_dir=data_dir, limit=limit, **fixed, **options)


def benchmark_family(name: str) -> str:
    """The task set a benchmark's problems come from (FAMILIES): "humaneval" for humaneval and
    humanevalplus, "mbpp" for mbpp, mbppplus and mbppplus_base, ...; the name's part before
    ":" otherwise (livecodebench:hard -> livecodebench). mbpp_train is its own family: it
    holds no task of MBPP's test split or of MBPP+."""
    base = str(name).split(":")[0]
    return FAMILIES.get(base, base)


def available_benchmarks(data_dir=None) -> list[str]:
    """Benchmarks whose files exist locally (microbench and math_synth are always available,
    and so is every registered one: its loader decides)."""
    load_plugins()
    root: Path | None = resolve_data_dir(data_dir)
    out = []
    for name, (_, _, _, files) in _REGISTRY.items():
        if not files or (root is not None and any((root / f).exists() for f in files)):
            out.append(name)
    return out + [n for n in _CUSTOM if n not in _REGISTRY]


__all__ = [
    "Problem",
    "ProblemError",
    "DataError",
    "load_benchmark",
    "list_benchmarks",
    "available_benchmarks",
    "register_benchmark",
    "unregister_benchmark",
    "benchmark_family",
    "FAMILIES",
]

# what notebooks use besides the names above, imported on first access (recode_lib.core.lazy)
LAZY_EXPORTS = {
    "train_eval_split": "split",
    "math_train_eval": "math_train",
}
__all__ += sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
