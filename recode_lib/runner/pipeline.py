"""The pipeline runner: execute notebooks/NN_*.ipynb in order for a profile, with papermill.

    recode reproduce --profile smoke                 # everything, skipping finished notebooks
    recode reproduce --profile smoke --only 00,05    # just these
    recode reproduce --profile paper --from 04 --force   # arguments: recode_lib.cli.reproduce
    parse_list("gated,additive") -> ["gated", "additive"]   # a comma-separated parameter

It does not install anything or decide where GPUs come from: that is the profile's.
More: docs/modules/core_and_runner.md (recode_lib.runner.pipeline).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recode_lib.core.errors import RecodeError, Terminated
from recode_lib.core.jsonl import read_json, write_json_atomic
from recode_lib.core.locks import OutputLock
from recode_lib.core.paths import PROJECT_ROOT, runs_dir
from recode_lib.core.stamps import git_hash, package_versions
from recode_lib.generation import vllm_cpu
from recode_lib.plan import (
    GPU_BACKEND_KEYS,
    PlanError,
    detect_cluster,
    format_plan,
    is_gpu_profile,
    make_plan,
)
from recode_lib.plan.preflight import checker_preflight
from recode_lib.process_reward.lcbrb.adjudication import AdjudicationPending
from recode_lib.runner.variants import (
    VariantError,
    variant_names,
    variant_notebooks,
    variant_profile,
    variant_spec,
)
from recode_lib.steps import ParameterError, check_profile, step_schemas
from recode_lib.steps.cells import declared

NOTEBOOK_RE = re.compile(r"^(\d\d)_[A-Za-z0-9_]+\.ipynb$")


class PipelineError(RecodeError, RuntimeError):
    """A pipeline that cannot run or a notebook that failed; the message names what and where."""


class RunInterrupted(PipelineError):
    """Ctrl-C (SIGINT) or SIGTERM during a notebook: the step is recorded `interrupted`, its
    temporary notebook removed; the message says how to resume; `exit_status` 130 or 143."""

    def __init__(self, message: str, exit_status: int = 130):
        super().__init__(message)
        self.exit_status = exit_status


class HumanStepPending(PipelineError):
    """The run stopped at a notebook that waits for a person (LCB-RB adjudication): the message
    says what to do and `resume` is the command that carries on afterwards."""

    def __init__(self, message: str, notebook: str, resume: str):
        super().__init__(message)
        self.notebook, self.resume = notebook, resume


# (parameter, value) that makes a notebook wait for a person -> (what the person does there,
# the parameters that run it without the person instead)
HUMAN_STEPS = {
    ("ADJUDICATION", "widget"): ("human adjudication of the LCB-RB pairs", {"ADJUDICATION": "auto"})
}
# the exceptions a notebook raises to say "a person has to act here" (their class names)
HUMAN_STEP_ERRORS = (AdjudicationPending.__name__,)


@dataclass
class NotebookResult:
    stem: str
    status: str  # completed | skipped (finished before) | excluded (by the profile) |
    wall_s: float  # failed | awaiting_human (stopped at a human step)
    output: Path | None


def parse_list(value, cast=str) -> list:
    """A comma-separated notebook parameter as a list: parse_list("gated, additive") ->
    ["gated", "additive"], parse_list("1,2", int) -> [1, 2]; empty items are dropped, a list or
    tuple is taken as is (each item cast), a scalar (e.g. KS = 1) is one item."""
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    out = []
    for item in items:
        text = str(item).strip()
        if text:
            try:
                out.append(cast(text))
            except ValueError:
                raise ValueError(
                    f"{value!r}: item {text!r} is not a valid {getattr(cast, '__name__', cast)}"
                ) from None
    return out


def notebooks_dir() -> Path:
    return PROJECT_ROOT / "notebooks"


def list_notebooks(directory: Path | None = None) -> list[Path]:
    directory = directory or notebooks_dir()
    return sorted(p for p in directory.glob("*.ipynb") if NOTEBOOK_RE.match(p.name))


def available_profiles(directory: Path | None = None) -> list[str]:
    return sorted(p.stem for p in ((directory or notebooks_dir()) / "params").glob("*.yaml"))


def load_profile(profile: str, params_file: str | os.PathLike | None = None) -> dict[str, Any]:
    import yaml

    path = Path(params_file) if params_file else notebooks_dir() / "params" / f"{profile}.yaml"
    if not path.is_file():
        known = ", ".join(available_profiles()) or "none"
        what = f"parameter file {path}" if params_file else f"profile {profile!r} ({path})"
        raise PipelineError(f"unknown {what}: not found; known profiles: {known}")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise PipelineError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise PipelineError(f"{path}: expected sections mapping names to parameter mappings")
    data["_path"] = str(path)
    return data


def declared_parameters(notebook: Path) -> dict[str, Any]:
    """UPPER_CASE names assigned in the cell tagged `parameters` (with their literal defaults),
    which tests/test_steps.py keeps equal to the step's typed parameters (recode_lib.steps)."""
    try:
        return declared(notebook)
    except ParameterError as exc:
        raise PipelineError(str(exc)) from None


def check_parameters(
    spec: dict[str, Any], notebooks: list[Path], overrides: dict[str, Any] | None = None
) -> None:
    """The profile and the overrides against the steps' typed parameters (recode_lib.steps):
    PipelineError (one line) for an unknown section or name (with the nearest known ones) or
    a value of the wrong type, before anything runs."""
    try:
        check_profile(spec, step_schemas(notebooks), overrides)
    except ParameterError as exc:
        raise PipelineError(str(exc)) from None


SKIP_KEY = "skip"


def excluded_reason(notebook: Path, spec: dict[str, Any]) -> str | None:
    """Why the profile leaves this notebook out (its section's `skip`), or None when it runs.
    PipelineError when `skip` is not a non-empty reason."""
    if SKIP_KEY not in spec.get(notebook.stem, {}):
        return None
    why = spec[notebook.stem][SKIP_KEY]
    if not isinstance(why, str) or not why.strip():
        raise PipelineError(
            f"{spec.get('_path')}: section {notebook.stem!r}: `{SKIP_KEY}` must be "
            f"the reason the profile leaves the notebook out, got {why!r}"
        )
    return why.strip()


def merge_value(old, new):
    """A later value over an earlier one: a mapping (RECIPE_FIELDS) field by field, anything
    else replaced."""
    if isinstance(old, dict) and isinstance(new, dict):
        return {**old, **new}
    return new


def resolve_parameters(
    notebook: Path, profile: str, spec: dict[str, Any], overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    declared = declared_parameters(notebook)
    stem = notebook.stem
    own = {k: v for k, v in spec.get(stem, {}).items() if k != SKIP_KEY}
    unknown = sorted(set(own) - set(declared))
    if unknown:
        raise PipelineError(
            f"{spec.get('_path')}: section {stem!r} sets {unknown}, which "
            f"{notebook.name}'s parameters cell does not declare"
        )
    params = {k: v for k, v in spec.get("common", {}).items() if k in declared}
    for source in (own, {k: v for k, v in (overrides or {}).items() if k in declared}):
        for k, v in source.items():
            params[k] = merge_value(params.get(k), v)
    if "PROFILE" in declared:
        params["PROFILE"] = profile
    return params


def effective_parameters(
    notebook: Path, profile: str, spec: dict[str, Any], overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Every parameter the notebook will run with: its parameters cell's defaults under what
    resolve_parameters passes (what the resource plan reads)."""
    return {
        **declared_parameters(notebook),
        **resolve_parameters(notebook, profile, spec, overrides),
    }


def profile_parameters(
    profile: str,
    params_file: str | os.PathLike | None = None,
    overrides: dict[str, Any] | None = None,
    notebooks: list[Path] | None = None,
    variant: str | None = None,
) -> dict[str, dict[str, Any]]:
    """{notebook stem: effective parameters} of every notebook the profile runs (left-out
    ones omitted), in pipeline order. With `variant` (recode_lib.runner.variants): the profile with
    that variant's sections merged, PROFILE "<profile>@<variant>" (every notebook: the
    variant's read the others', e.g. 07 reads 06's)."""
    spec = load_profile(profile, params_file)
    every = notebooks if notebooks is not None else list_notebooks()
    if variant:
        spec, profile = variant_profile_spec(spec, profile, variant)
    check_parameters(spec, every, overrides)
    out = {}
    for nb in every:
        if excluded_reason(nb, spec) is None:
            out[nb.stem] = effective_parameters(nb, profile, spec, overrides)
    return out


def variant_profile_spec(
    spec: dict[str, Any], profile: str, variant: str
) -> tuple[dict[str, Any], str]:
    """(the spec with the variant merged, the profile name it runs under); PipelineError
    naming the known variants for an unknown one."""
    try:
        return variant_spec(spec, variant), variant_profile(profile, variant)
    except VariantError as exc:
        raise PipelineError(str(exc)) from None


def variant_parameters(
    profile: str,
    params_file: str | os.PathLike | None = None,
    overrides: dict[str, Any] | None = None,
) -> dict[str, tuple[dict[str, dict[str, Any]], list[str]]]:
    """{variant: (profile_parameters with it, the notebook stems it runs)} for every variant
    of the profile (recode_lib.runner.variants; {} for a profile without `_variants`)."""
    spec = load_profile(profile, params_file)
    try:
        names = variant_names(spec)
    except VariantError as exc:
        raise PipelineError(str(exc)) from None
    return {
        name: (
            profile_parameters(profile, params_file, overrides, variant=name),
            variant_notebooks(spec, name),
        )
        for name in names
    }


def cpu_vllm_only(params: dict[str, dict[str, Any]]) -> bool:
    """True when vLLM's CPU build is installed and the profile's only GPU work is generation on
    the vllm backend (no accelerate launcher, notebook 02 on the CPU): it then runs on CPU."""
    if not vllm_cpu.installed():
        return False
    stripped = {
        stem: {k: v for k, v in p.items() if k not in GPU_BACKEND_KEYS}
        for stem, p in params.items()
    }
    return not is_gpu_profile(stripped)


def check_resources(
    profile: str, params: dict[str, dict[str, Any]], *, cluster=None, only=None, log=print
):
    """The resource plan before the first notebook of a GPU profile (recode_lib.plan): None
    for a CPU profile (the smoke, laptop and dry-run profiles), else the plan; PipelineError
    with the plan's refusal when a stage cannot fit, or when no cluster is given and this
    machine has no CUDA device. First, for every profile, the machine's preflight
    (recode_lib.plan.preflight: a C++ compiler where a notebook judges testlib checkers):
    PipelineError naming the package to install."""
    refused = checker_preflight(
        params if only is None else {k: v for k, v in params.items() if k in only}
    )
    if refused:
        raise PipelineError("preflight: " + "; ".join(refused))
    if not is_gpu_profile(params):
        return None
    cluster = cluster or detect_cluster()
    if cluster is None and cpu_vllm_only(params):
        log(
            f"resource plan: none for the {profile} profile here: its GPU work is the vllm "
            f"backend, which runs on vLLM's CPU build on this machine (no CUDA device)"
        )
        return None
    if cluster is None:
        raise PipelineError(
            f"the {profile} profile runs on GPUs and this machine has no CUDA "
            "device: give the cluster shape (recode reproduce --gpus N "
            "--gpu-memory GB), or --no-plan to skip the resource plan"
        )
    try:
        plan = make_plan(params, cluster, profile=profile, only=only)
    except PlanError as exc:
        raise PipelineError(f"resource plan: {exc}") from None
    if not plan.ok:
        raise PipelineError(format_plan(plan))
    wide = {k: v for k, v in plan.tp_sizes.items() if v > 1}
    log(
        f"resource plan: the {profile} profile fits {cluster.describe()}; vLLM tensor-parallel "
        "sizes: " + "".join(f"{k}: {v}; " for k, v in wide.items()) + "every other engine: 1 "
        f"(budget: {plan.total_wall_h:.0f} h at most; `recode plan` prints the tables)"
    )
    return plan


def human_steps(plan_params: dict[str, dict[str, Any]]) -> dict[str, str]:
    """{notebook stem: what a person must do there} for the notebooks whose parameters make
    them wait for one (HUMAN_STEPS)."""
    return {
        stem: what
        for stem, params in plan_params.items()
        for (key, value), (what, _) in HUMAN_STEPS.items()
        if params.get(key) == value
    }


def resume_command(
    profile: str,
    *,
    params_file=None,
    only=None,
    from_=None,
    overrides: dict[str, Any] | None = None,
    variant: str | None = None,
) -> str:
    """The `recode reproduce` command line that runs this pipeline call again."""
    parts = ["recode", "reproduce", "--profile", profile]
    if variant:
        parts += ["--variant", variant]
    if params_file:
        parts += ["--params", str(params_file)]
    if only:
        parts += ["--only", str(only)]
    if from_:
        parts += ["--from", str(from_)]
    for k, v in (overrides or {}).items():
        parts += ["--set", f"{k}={json.dumps(v) if not isinstance(v, str) else v}"]
    return " ".join(shlex.quote(x) for x in parts)


def default_kernel() -> str:
    """The project's kernel ('recode', installed into the environment by `make env`) when it
    exists, else the running interpreter's own 'python3'."""
    from jupyter_client.kernelspec import KernelSpecManager

    return "recode" if "recode" in KernelSpecManager().find_kernel_specs() else "python3"


def upstream_run_ids(manifest: dict, every: list[Path], notebook: Path) -> list:
    """The run ids of every notebook before `notebook` (None where it never completed)."""
    return [manifest.get(p.stem, {}).get("run_id") for p in every if p.name < notebook.name]


def notebook_hash(notebook: Path, params: dict, upstream: list) -> str:
    """Source + parameters + the run ids of every earlier notebook: a notebook whose inputs
    may have changed (an earlier one re-ran) is never skipped."""
    h = hashlib.sha256(notebook.read_bytes())
    h.update(json.dumps([params, upstream], sort_keys=True).encode())
    return h.hexdigest()[:16]


def rerun_reason(prev: dict, params: dict) -> str:
    """Why a completed notebook's fingerprint changed: the parameters that differ from its
    recorded run, else its source or an earlier notebook."""
    before = prev.get("parameters") or {}
    changed = sorted(k for k in set(before) | set(params) if before.get(k) != params.get(k))
    if changed:
        return "parameters changed: " + ", ".join(changed)
    return "its notebook's source or an earlier notebook's run changed"


def _cell_label(executed: Path, index: int, source: str) -> str:
    """'cell N (`first line`)', N counted 1-based in the source notebook (papermill's injected
    parameters cell does not count)."""
    injected = 0
    try:
        cells = [
            c
            for c in json.loads(executed.read_text())["cells"]  # minus papermill's banner
            if "papermill-error-cell-tag" not in c.get("metadata", {}).get("tags", [])
        ]
        injected = sum(
            "injected-parameters" in c.get("metadata", {}).get("tags", []) for c in cells[:index]
        )
    except (OSError, ValueError, KeyError):
        pass
    first = next((ln for ln in (source or "").splitlines() if ln.strip()), "").strip()
    return f"cell {index - injected + 1} (`{first[:60]}`)"


def select(notebooks: list[Path], only: str | None = None, from_: str | None = None) -> list[Path]:
    prefixes = {p.name[:2]: p for p in notebooks}
    if only:
        wanted = [s.strip().zfill(2) for s in only.split(",") if s.strip()]
        missing = [w for w in wanted if w not in prefixes]
        if missing:
            raise PipelineError(
                f"--only {only}: no notebook numbered {missing}; have {sorted(prefixes)}"
            )
        notebooks = [p for p in notebooks if p.name[:2] in wanted]
    if from_:
        start = from_.strip().zfill(2)
        if start not in prefixes:
            raise PipelineError(
                f"--from {from_}: no notebook numbered {start}; have {sorted(prefixes)}"
            )
        notebooks = [p for p in notebooks if p.name[:2] >= start]
    return notebooks


def run_pipeline(
    profile: str,
    *,
    only: str | None = None,
    from_: str | None = None,
    force: bool = False,
    params_file: str | None = None,
    overrides: dict[str, Any] | None = None,
    notebooks: list[Path] | None = None,
    kernel_name: str | None = None,
    log=print,
    cluster=None,
    check_plan: bool = True,
    variant: str | None = None,
) -> list[NotebookResult]:
    """Run the chosen notebooks. For a GPU profile the resource plan (check_resources) runs
    first on `cluster` (a recode_lib.plan.ClusterSpec; default: this machine's GPUs) and a
    stage that cannot fit stops the run before any notebook; check_plan=False skips it.
    With `variant` (recode_lib.runner.variants): only that variant's notebooks (within only/from_),
    with its parameters, under PROFILE "<profile>@<variant>" (its own run folder)."""
    spec = load_profile(profile, params_file)
    base_profile = profile
    every = notebooks if notebooks is not None else list_notebooks()
    check_parameters(spec, every, overrides)
    chosen = select(every, only, from_)
    if variant:
        spec, profile = variant_profile_spec(spec, profile, variant)  # raises for an unknown one
        check_parameters(spec, every, overrides)  # its values too
        stems = variant_notebooks(load_profile(base_profile, params_file), variant)
        chosen = [nb for nb in chosen if nb.stem in stems]
        if not chosen:
            raise PipelineError(f"variant {variant!r} runs {stems}: none of them selected")
    if not chosen:
        raise PipelineError(f"no notebooks to run in {notebooks_dir()}")
    plan = [
        (nb, resolve_parameters(nb, profile, spec, overrides), excluded_reason(nb, spec))
        for nb in chosen
    ]  # fail early
    if check_plan:
        every_params = {
            nb.stem: effective_parameters(nb, profile, spec, overrides)
            for nb in every
            if excluded_reason(nb, spec) is None
        }
        check_resources(
            profile,
            every_params,
            cluster=cluster,
            log=log,
            only={nb.stem for nb, _, why in plan if why is None},
        )
    waits = human_steps(
        {nb.stem: {**declared_parameters(nb), **params} for nb, params, why in plan if why is None}
    )
    resume = resume_command(
        base_profile,
        params_file=params_file,
        only=only,
        from_=from_,
        overrides=overrides,
        variant=variant,
    )
    for stem, what in waits.items():
        log(
            f"{stem} needs a person ({what}): while any is undecided the run stops there, "
            f"saying how to decide them; `{resume}` then resumes it"
        )
    kernel_name = kernel_name or default_kernel()
    with OutputLock(runs_dir(profile), folder=True, say=log):  # one `reproduce` per run folder
        return run_locked(
            profile,
            plan,
            every,
            force=force,
            resume=resume,
            kernel_name=kernel_name,
            log=log,
            params_file=params_file,
            only=only,
            from_=from_,
            overrides=overrides,
        )


def run_locked(
    profile, plan, every, *, force, resume, kernel_name, log, params_file, only, from_, overrides
) -> list[NotebookResult]:
    """run_pipeline's loop, run while this process holds the run folder's writer lock: a step
    the manifest says is `running` was therefore interrupted (its process is gone)."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    out_dir = runs_dir(profile) / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = runs_dir(profile) / "manifest.json"
    manifest = read_json(manifest_path) if manifest_path.exists() else {}
    for stem, entry in manifest.items():
        if isinstance(entry, dict) and entry.get("status") == "running":
            log(
                f"{stem}: its last run stopped without finishing (killed or interrupted); "
                f"recorded as interrupted, it runs again"
            )
            entry["status"] = "interrupted"
            (out_dir / f".{stem}.running.ipynb").unlink(missing_ok=True)
    if any(isinstance(e, dict) and e.get("status") == "interrupted" for e in manifest.values()):
        write_json_atomic(manifest_path, manifest)
    stamp = {"git": git_hash(), "versions": package_versions()}
    results: list[NotebookResult] = []
    for i, (nb, params, excluded) in enumerate(plan, start=1):
        head = f"[{i}/{len(plan)}] {nb.stem}"
        if excluded:
            log(f"{head}: left out by the {profile} profile: {excluded}")
            manifest[nb.stem] = {"status": "excluded", "reason": excluded, **stamp}
            write_json_atomic(manifest_path, manifest)
            results.append(NotebookResult(nb.stem, "excluded", 0.0, None))
            continue
        key = notebook_hash(nb, params, upstream_run_ids(manifest, every, nb))
        prev = manifest.get(nb.stem, {})
        if not force and prev.get("status") == "completed" and prev.get("hash") == key:
            log(f"{head}: already completed with the same parameters, skipped (--force reruns)")
            results.append(NotebookResult(nb.stem, "skipped", 0.0, Path(prev["output"])))
            continue
        if not force and prev.get("status") == "completed":
            log(
                f"{head}: completed before with other inputs ({rerun_reason(prev, params)}); it "
                f"runs again"
            )
        log(f"{head}: running with {json.dumps(params, sort_keys=True)}")
        manifest[nb.stem] = {
            "status": "running",
            "hash": key,
            "parameters": params,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            **stamp,
        }
        write_json_atomic(manifest_path, manifest)
        final = out_dir / nb.name
        tmp = out_dir / f".{nb.stem}.running.ipynb"
        t0 = time.perf_counter()
        try:
            pm.execute_notebook(
                str(nb),
                str(tmp),
                parameters=params,
                kernel_name=kernel_name,
                language="python",
                progress_bar=sys.stderr.isatty(),
                cwd=str(nb.parent),
            )
        except PapermillExecutionError as exc:
            wall = time.perf_counter() - t0
            if exc.ename in HUMAN_STEP_ERRORS:
                kept = out_dir / f"{nb.stem}.pending.ipynb"
                if tmp.exists():
                    os.replace(tmp, kept)
                manifest[nb.stem].update(
                    status="awaiting_human",
                    wall_s=round(wall, 2),
                    pending=exc.evalue,
                    resume=resume,
                    output=str(kept),
                )
                manifest[nb.stem].pop("error", None)
                write_json_atomic(manifest_path, manifest)
                log(f"{head}: stopped, waiting for a person")
                without = [
                    resume_command(
                        profile,
                        params_file=params_file,
                        only=only,
                        from_=from_,
                        overrides={**(overrides or {}), **instead},
                    )
                    for (key, value), (_, instead) in HUMAN_STEPS.items()
                    if params.get(key, declared_parameters(nb).get(key)) == value
                ]
                raise HumanStepPending(
                    f"the run stopped at {nb.name}: a person has to act before it can go on.\n"
                    f"{exc.evalue}\nThen resume the batch run (finished notebooks are skipped, "
                    f"{nb.stem} runs again and picks the saved decisions up):\n  {resume}"
                    + "".join(
                        f"\nor go on without the person (nothing human-verified):\n  {w}"
                        for w in without
                    ),
                    nb.stem,
                    resume,
                ) from None
            failed = out_dir / f"{nb.stem}.failed.ipynb"
            if tmp.exists():
                os.replace(tmp, failed)
            msg = (
                f"notebook {nb.name} failed in {_cell_label(failed, exc.cell_index, exc.source)}"
                f": {exc.ename}: {exc.evalue}"
            )
            manifest[nb.stem].update(
                status="failed", wall_s=round(wall, 2), error=msg, output=str(failed)
            )
            write_json_atomic(manifest_path, manifest)
            raise PipelineError(f"{msg}\n  executed notebook kept at {failed}") from None
        except (KeyboardInterrupt, Terminated) as exc:
            wall = time.perf_counter() - t0
            manifest[nb.stem].update(status="interrupted", wall_s=round(wall, 2))
            manifest[nb.stem].pop("error", None)
            write_json_atomic(manifest_path, manifest)
            tmp.unlink(missing_ok=True)
            what = "interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else "terminated"
            raise RunInterrupted(
                f"{what} in {nb.stem}: {i - 1} of {len(plan)} notebooks done "
                f"before it; resume with `{resume}`",
                130 if isinstance(exc, KeyboardInterrupt) else 143,
            ) from None
        except BaseException as exc:
            wall = time.perf_counter() - t0
            manifest[nb.stem].update(
                status="failed", wall_s=round(wall, 2), error=f"{type(exc).__name__}: {exc}"
            )
            if tmp.exists():  # never a hidden .running notebook left behind
                os.replace(tmp, out_dir / f"{nb.stem}.failed.ipynb")
                manifest[nb.stem]["output"] = str(out_dir / f"{nb.stem}.failed.ipynb")
            write_json_atomic(manifest_path, manifest)
            if isinstance(exc, Exception):
                raise PipelineError(
                    f"notebook {nb.name} could not run: {type(exc).__name__}: {exc}"
                ) from exc
            raise
        wall = time.perf_counter() - t0
        os.replace(tmp, final)
        (out_dir / f"{nb.stem}.pending.ipynb").unlink(missing_ok=True)  # its human step is done
        manifest[nb.stem].update(
            status="completed",
            wall_s=round(wall, 2),
            output=str(final),
            run_id=uuid.uuid4().hex[:12],
            finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        )
        manifest[nb.stem].pop("error", None)
        write_json_atomic(manifest_path, manifest)
        log(f"{head}: completed in {wall:.1f} s -> {final}")
        results.append(NotebookResult(nb.stem, "completed", wall, final))
    return results
