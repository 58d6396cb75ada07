"""The dry-run profile: notebooks/params/paper.yaml with only the model, the counts, the steps
and the generation/launch backends shrunk, so every paper-only path runs on CPU (in CI).

    from recode_lib.runner.dryrun import dryrun_profile, write_dryrun_params
    spec = dryrun_profile("/tmp/tiny")                 # paper.yaml, derived (never a copy)
    path = write_dryrun_params("/tmp/dryrun.yaml", "/tmp/tiny")
    run_pipeline("dryrun", params_file=path)          # what tests/test_dryrun.py does
    write_dryrun_params("/tmp/dryrun.yaml", "/tmp/tiny", engine="vllm")   # the real engine

It does not run notebooks (recode_lib.runner.pipeline does); it derives the profile from paper.yaml,
never copies it (`changed_keys` lists what differs).
More: docs/modules/core_and_runner.md (recode_lib.runner.dryrun).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recode_lib.core.paths import data_dir
from recode_lib.data.livecodebench import FILES
from recode_lib.runner.pipeline import load_profile
from recode_lib.runner.variants import VARIANTS_KEY
from recode_lib.training.recipe_check import merge_fields

MODEL_KEYS = ("MODEL", "GENERATOR_MODEL", "SECOND_GENERATOR", "JUDGE_MODEL", "TRANSFER_MODEL")
BACKEND_KEYS = ("BACKEND", "GENERATOR_BACKEND", "JUDGE_BACKEND")
BACKEND_MAP = {"vllm": "vllm_standin"}
LAUNCHER_MAP = {"accelerate": "dryrun"}
ENGINES = ("standin", "vllm")
# the real-engine mode (engine="vllm"): a GRPO notebook's accelerate launch keeps vLLM on
VLLM_LAUNCHER_MAP = {"accelerate": "dryrun_vllm"}
# vLLM tensor-parallel sizes -> 1 in the real-engine mode (NOT_ON_CPU["tensor parallelism"])
TP_KEYS = ("TENSOR_PARALLEL_SIZE", "GENERATOR_TP", "SECOND_GENERATOR_TP", "JUDGE_TP")
VLLM_RECIPE_COUNTS = {"vllm_tensor_parallel_size": 1}
# the paper's vLLM paths the real-engine dry run does not run, and why (engine_report)
NOT_ON_CPU = {
    "tensor parallelism": "GENERATOR_TP 2, SECOND_GENERATOR_TP 4, JUDGE_TP 2 and scale_32b's "
    "TENSOR_PARALLEL_SIZE 2 / vllm_tensor_parallel_size 4 run at 1: the tiny model has 2 "
    "attention heads and 1 KV head (TP 4 cannot split them) and each engine here gets the "
    "machine's few cores; `recode plan` checks the paper's TP sizes against GPU memory",
    "GRPO vllm_mode server": "no paper recipe uses it (all colocate, which runs); its weight "
    "sync is NCCL (TRL VLLMClient.init_communicator raises NotImplementedError off CUDA): "
    "tests/test_vllm_real_server.py pins the failure and runs server-mode generation",
    "data-parallel engines": "DATA_PARALLEL_SIZE 0 (automatic) is one engine without GPUs "
    "(generation.data_parallel.resolve_data_parallel_size); two CPU engines and Ray actors are "
    "tested in tests/test_vllm_real_generation.py and test_vllm_real_live.py",
    "bfloat16": "the CPU engines compute in float32 (vllm_backend.CPU_ENGINE_DEFAULTS; bf16 is "
    "emulated on a CPU without AMX/avx512_bf16)",
    "API judges and the API row": "no network in a dry run (ENDPOINT_KEYS), in both modes",
}
# endpoint judges: no network in a dry run — no endpoint, the open stand-in judge used and the
# fallback recorded; public RM classifiers -> this run's own RM (notebook 02's), as a stand-in
ENDPOINT_KEYS = {"JUDGE_BASE_URL": "", "ON_MISSING_JUDGE": "fallback"}
CLASSIFIER_KEYS = {"BASELINE_CLASSIFIERS": "run:02_reward_model/rm"}
# parameter -> dry-run value (applied wherever paper.yaml sets the key)
COUNTS: dict[str, Any] = {
    "N_PROBLEMS": 2,
    "N_TRAIN": 4,
    "N_EVAL": 2,
    "N_SAMPLES": 2,
    "SAMPLES_PER_PROBLEM": 2,
    "TRACES_PER_PROBLEM": 1,
    "N_CANDIDATES": 1,
    "EVAL_N_SAMPLES": 1,
    "REPAIR_PER_PROBLEM": 1,
    "ALPHA_N_SAMPLES": 2,
    "MAX_STEPS": 1,
    "ROUNDS": 2,
    "EPOCHS": 1.0,
    "GRAD_ACCUM": 1,
    "BATCH_SIZE": 2,
    "SCORE_BATCH_SIZE": 2,
    "WORKERS": 1,
    "N_BOOT": 20,
    "MAX_NEW_TOKENS": 8,
    "POLICY_MAX_NEW_TOKENS": 8,
    "REWRITE_MAX_NEW_TOKENS": 8,
    "JUDGE_MAX_NEW_TOKENS": 4,
    "EVAL_MAX_NEW_TOKENS": 8,
    "PAPER_B_MAX_NEW_TOKENS": 8,
}
# recipe field -> dry-run value, set through the RECIPE_FIELDS of every section with a RECIPE
RECIPE_COUNTS: dict[str, Any] = {
    "max_steps": 1,
    "num_generations": 2,
    "per_device_train_batch_size": 2,
    "max_completion_length": 8,
}
# per notebook, where a count means something else there
SECTION_COUNTS: dict[str, dict[str, Any]] = {"03_lcb_rb": {"N_PROBLEMS": 1}}
# keys set whatever paper.yaml says: the RM trains 2 steps (paper: by EPOCHS) on CPU; 00 does
# not load every benchmark to count it (minutes on CPU; the later notebooks load theirs)
ADDED = {
    "00_data_and_models": {"COUNT_PROBLEMS": False},
    "02_reward_model": {"MAX_STEPS": 2, "USE_CPU": True, "BF16": False},
    "99_paper_figures": {"FIGURES_DIR": "run"},
}  # never into the checkout's figures/


def shrink_list(value, keep: str) -> str:
    """A comma-separated list cut to its first item ("first"), or to its smallest, 0, 1 and
    largest members ("extremes", alphas)."""
    items = [x.strip() for x in str(value).split(",") if x.strip()]
    if keep == "first":
        return items[0]
    nums = sorted({float(x) for x in items})
    chosen = sorted({nums[0], nums[-1]} | {a for a in (0.0, 1.0) if a in nums})
    return ",".join(repr(a) for a in chosen)


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise ValueError(f"dry-run engine must be one of {ENGINES}, got {engine!r}")
    return engine


def shrink_section(stem: str, params: dict, tiny_model: str, engine: str = "standin") -> dict:
    real = check_engine(engine) == "vllm"
    out = dict(params)
    for key in MODEL_KEYS:
        if key in out and out[key] not in ("", "rules", None):
            out[key] = tiny_model
    for key in BACKEND_KEYS:
        if key in out and not real:
            out[key] = BACKEND_MAP.get(out[key], out[key])
    if "LAUNCHER" in out:
        grpo = real and "RECIPE" in out  # 02's reward model trains without vLLM
        out["LAUNCHER"] = (VLLM_LAUNCHER_MAP if grpo else LAUNCHER_MAP).get(
            out["LAUNCHER"], out["LAUNCHER"]
        )
    for key in TP_KEYS:
        if key in out and real:
            out[key] = 1
    for key, value in ENDPOINT_KEYS.items():
        if key in out:
            out[key] = value
    for key, value in CLASSIFIER_KEYS.items():
        if out.get(key):
            out[key] = value
    counts = {**COUNTS, **SECTION_COUNTS.get(stem, {})}
    for key, value in counts.items():
        if key in out:
            out[key] = value
    out.update(ADDED.get(stem, {}))
    if "RECIPE" in out:  # a GRPO notebook: its recipe's steps and sizes
        counts = RECIPE_COUNTS | (VLLM_RECIPE_COUNTS if real else {})
        out["RECIPE_FIELDS"] = merge_fields(out.get("RECIPE_FIELDS"), counts)
    if "KS" in out:
        out["KS"] = shrink_list(out["KS"], "first")
    if "SEEDS" in out:  # one training run per variant: the seed path is the same code
        out["SEEDS"] = shrink_list(out["SEEDS"], "first")
    if "ALPHAS" in out:
        grid = shrink_list(out["ALPHAS"], "extremes")
        saved = [x for x in str(out.get("SAVE_ALPHAS") or "").split(",") if x.strip()]
        if saved:  # the saved alphas must stay grid points: keep the first, in the grid
            grid = ",".join(
                repr(a) for a in sorted({float(x) for x in grid.split(",")} | {float(saved[0])})
            )
            out["SAVE_ALPHAS"] = repr(float(saved[0]))
        out["ALPHAS"] = grid
    if "PASS_K" in out:
        drawn = (
            ("ALPHA_N_SAMPLES",) if "ALPHA_N_SAMPLES" in out else ("N_SAMPLES", "EVAL_N_SAMPLES")
        )
        n = (
            min(out.get(key, COUNTS[key]) for key in drawn if key in out)
            if set(drawn) & set(out)
            else COUNTS["N_SAMPLES"]
        )  # each k at most the samples the notebook draws
        # (11: its alpha grid's, which the ensembles split)
        ks = [int(k) for k in str(out["PASS_K"]).split(",") if k.strip()]
        out["PASS_K"] = ",".join(str(k) for k in sorted({min(k, n) for k in ks}))
    return out


def dryrun_profile(
    tiny_model: str | Path, paper: dict | None = None, *, engine: str = "standin"
) -> dict:
    """The dry-run parameter spec (sections as in a params file) derived from paper.yaml
    (or the given paper spec), for `engine` (ENGINES: "standin" or "vllm", the real one)."""
    paper = paper if paper is not None else load_profile("paper")
    check_engine(engine)
    out = {}
    for stem, params in paper.items():
        if stem.startswith("_"):
            continue
        out[stem] = shrink_section(stem, params, str(tiny_model), engine)
    variants = paper.get(VARIANTS_KEY) or {}
    if variants:  # each variant's sections shrunk by the same rules (its 32B -> the tiny model)
        out[VARIANTS_KEY] = {
            name: {
                stem: shrink_section(stem, params or {}, str(tiny_model), engine)
                for stem, params in sections.items()
            }
            for name, sections in variants.items()
        }
    return out


def changed_keys(dryrun: dict, paper: dict | None = None) -> dict[str, list[str]]:
    """{section: keys whose value differs from paper.yaml or that paper.yaml lacks} (notebook
    sections; a variant's shrunk sections: "<stem>@<variant>")."""
    paper = paper if paper is not None else load_profile("paper")
    sections = [
        (stem, params, paper.get(stem, {}))
        for stem, params in dryrun.items()
        if not stem.startswith("_")
    ]
    sections += [
        (
            f"{stem}@{name}",
            params,
            ((paper.get(VARIANTS_KEY) or {}).get(name) or {}).get(stem) or {},
        )
        for name, overlay in (dryrun.get(VARIANTS_KEY) or {}).items()
        for stem, params in overlay.items()
    ]
    out = {}
    for stem, params, base in sections:
        diff = sorted(k for k, v in params.items() if k not in base or base[k] != v)
        if diff:
            out[stem] = diff
    return out


def engine_report(engine: str = "standin") -> dict:
    """What the dry run of `engine` runs on a real vLLM engine and what not, with why:
    {"engine", "real_engine": [paths], "not_real_engine": {path: reason}}."""
    paths = (
        "vllm generation backend (single setting)",
        "tool and agentic settings on the vllm backend",
        "live alpha sweep (theta_alpha loaded into the running engine)",
        "GRPO use_vllm colocate (TRL's in-process engine, weight sync every step)",
    )
    if check_engine(engine) == "vllm":
        return {"engine": engine, "real_engine": list(paths), "not_real_engine": dict(NOT_ON_CPU)}
    standin = (
        "vllm_standin: the vllm backend's requests on a transformers engine (the live sweep "
        "loads theta_alpha into it), and GRPO with use_vllm off; the real engine: "
        "engine='vllm' (make test-dryrun-vllm)"
    )
    return {"engine": engine, "real_engine": [], "not_real_engine": dict.fromkeys(paths, standin)}


def write_dryrun_params(path: str | Path, tiny_model: str | Path, engine: str = "standin") -> Path:
    """Write the dry-run spec as a papermill params file (`recode reproduce --params PATH`),
    its header naming the engine and what does not run on the real one (engine_report)."""
    import yaml

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    report = engine_report(engine)
    not_real = "".join(f"#   {k}: {v}\n" for k, v in report["not_real_engine"].items())
    path.write_text(
        "# derived from notebooks/params/paper.yaml by recode_lib.runner.dryrun; do not edit\n"
        f"# engine: {engine}; not on the real vLLM engine:\n{not_real}"
        + yaml.safe_dump(dryrun_profile(tiny_model, engine=engine), sort_keys=False)
    )
    return path


def dryrun_data_dir(dest: str | Path, fixtures: str | Path, base: str | Path | None = None) -> Path:
    """dest/ with links to every file of `base` (default: recode_lib.core.paths.data_dir()) and to
    the LiveCodeBench (code_generation_lite) and CodeContests+ fixtures under `fixtures`; the
    LiveCodeBench files release_v6 lists but the fixture lacks are empty."""
    dest, fixtures = Path(dest), Path(fixtures)
    base = Path(base) if base is not None else data_dir()
    dest.mkdir(parents=True, exist_ok=True)
    for f in base.iterdir() if base is not None else ():
        if not (dest / f.name).exists():
            (dest / f.name).symlink_to(f)
    for config in ("1x", "3x"):  # the fixture's problems twice (ids suffixed "-b"):
        src = fixtures / "Code-Contests-Plus" / f"ccplus_{config}"  # one GRPO step of a
        cc = dest / "Code-Contests-Plus" / f"ccplus_{config}"  # paper recipe takes 4
        cc.mkdir(parents=True, exist_ok=True)
        for part in sorted(src.glob("*.jsonl")):
            rows = [json.loads(line) for line in part.read_text().splitlines() if line.strip()]
            (cc / part.name).write_text(part.read_text())
            (cc / f"b-{part.name}").write_text(
                "".join(json.dumps({**r, "id": f"{r['id']}-b"}) + "\n" for r in rows)
            )

    math_id = load_profile("paper").get("10_math_domain", {}).get("MATH_DATASET")
    if math_id and not (dest / math_id).exists():  # the paper's hub id, mirrored offline
        (dest / math_id).parent.mkdir(parents=True, exist_ok=True)
        (dest / math_id).symlink_to((fixtures / "MATH-lighteval").resolve())
    lcb = dest / "code_generation_lite"
    lcb.mkdir(exist_ok=True)
    late = load_profile("paper").get("05_codegen_eval", {}).get("LCB_START_DATE")
    for name in FILES:
        if not (lcb / name).exists():
            src = fixtures / "code_generation_lite" / name
            if src.is_file():
                (lcb / name).symlink_to(src)
            elif name == FILES[-1] and late:  # the first fixture file's problems, dated at
                rows = [
                    json.loads(line)
                    for line in (  # the paper's LiveCodeBench window start
                        fixtures / "code_generation_lite" / FILES[0]
                    )
                    .read_text()
                    .splitlines()
                    if line.strip()
                ]
                (lcb / name).write_text(
                    "".join(
                        json.dumps(
                            {
                                **r,
                                "question_id": f"{r['question_id']}-late",
                                "contest_date": f"{late}T00:00:00",
                            }
                        )
                        + "\n"
                        for r in rows
                    )
                )
            else:
                (lcb / name).write_text("")
    return dest
