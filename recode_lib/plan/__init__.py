"""The resource plan and compute budget of a profile, checked before any GPU is touched.

    recode plan --profile paper --gpus 8 --gpu-memory 80      # the table; exit 2 if refused
    from recode_lib.plan import ClusterSpec, make_plan
    plan = make_plan(profile_parameters("paper"), ClusterSpec(8, 80), profile="paper")
    plan.ok, plan.problems, plan.tp_sizes, plan.total_wall_h

Per notebook and stage it lists the models loaded and where: weights x dtype, the vLLM KV cache
(minimum, at the stage's batch, sequences at once), the policy's weights + gradients + optimizer
under ZeRO-3, the reward model beside it, and the tensor-parallel size of every vLLM engine
(the one the notebook will use and the smallest that fits). A stage that cannot fit is refused
with a message naming the notebook, the stage and the numbers; recode_lib.runner.pipeline runs the
plan before the first notebook of a GPU profile. The budget estimates hours per notebook from
the profile's token counts and default (cited) or measured throughputs.

Modules: architectures (model shapes: known table or local config.json), stages (a notebook's
GPU stages from its parameters and recipes), memory (the placement rules), budget (throughputs
and hours), core (make_plan, the tables). Limits: estimates, not measurements — the memory
rules leave out fragmentation and the budget's counts are upper bounds (every response at its
maximum length); it checks one pipeline run's stages, not concurrent jobs.
"""

from recode_lib.plan.architectures import Architecture, ArchitectureError, model_arch
from recode_lib.plan.budget import Throughputs
from recode_lib.plan.core import (
    BudgetOptions,
    ClusterSpec,
    Plan,
    PlanError,
    format_budget,
    format_plan,
    make_plan,
)
from recode_lib.plan.stages import notebook_stages

__all__ = [
    "Architecture",
    "ArchitectureError",
    "BudgetOptions",
    "ClusterSpec",
    "Plan",
    "PlanError",
    "Throughputs",
    "detect_cluster",
    "format_budget",
    "format_plan",
    "is_gpu_profile",
    "make_plan",
    "model_arch",
    "notebook_stages",
]


GPU_BACKEND_KEYS = ("BACKEND", "GENERATOR_BACKEND", "JUDGE_BACKEND")


def is_gpu_profile(params: dict[str, dict]) -> bool:
    """True when some notebook of the profile puts work on a GPU: a "vllm" backend, LAUNCHER
    "accelerate", or notebook 02 with USE_CPU false. The dry run (vllm_standin, the dryrun
    launcher, USE_CPU true) and the CPU profiles are not."""
    for stem, p in params.items():
        if any(p.get(k) == "vllm" for k in GPU_BACKEND_KEYS) or p.get("LAUNCHER") == "accelerate":
            return True
        if stem.startswith("02_") and p.get("USE_CPU") is False:
            return True
    return False


def detect_cluster() -> ClusterSpec | None:
    """This machine's GPUs (torch.cuda: count, the smallest one's memory), None without CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        return None
    n = torch.cuda.device_count()
    mem = min(torch.cuda.get_device_properties(i).total_memory for i in range(n))
    return ClusterSpec(gpus=n, gpu_memory=round(mem / 1e9, 1))
