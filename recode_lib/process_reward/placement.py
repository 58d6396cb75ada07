"""Where the process reward model runs during GRPO, in which dtype, and how it is batched.

    p = RMPlacement(where="trainer", dtype="auto", batch_size=16)   # a recipe's rm_* fields
    p.validate()                                   # ValueError naming a bad value
    resolve_device("trainer", trainer_device="cuda:3")   # -> "cuda:3"
    resolve_dtype("auto", "cuda:3")                # -> "bfloat16" ("float32" on CPU; the scorer's
                                                   # rule, recode_lib.process_reward.model)
    scorer = load_scorer(rm_path, p, trainer_device=args.device)   # .score(prompts, traces)
    scorer = load_checked_scorer(rm_path, p)       # the same; RMLoadError naming a bad path
    scorer.shard(trainer.accelerator)              # where=trainer, zero3=True: ZeRO-3 shards

It does not train the RM (recode_lib.process_reward.model) and does not decide which rewards
need it (the registry does).
More: docs/modules/process_reward.md (recode_lib.process_reward.placement).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.process_reward.model import DTYPES, ProcessRewardScorer, resolve_dtype
from recode_lib.process_reward.serving import EndpointScorer

WHERE = ("cpu", "trainer", "device:N", "endpoint")


@dataclass(frozen=True)
class RMPlacement:
    """A reward model's placement: where (cpu | trainer | device:N | endpoint), dtype, batching."""

    where: str = "cpu"
    dtype: str = "auto"
    batch_size: int = 8
    endpoint: str | None = None  # base URL of the scorer server (where="endpoint")
    zero3: bool = False  # shard with DeepSpeed ZeRO-3 (where="trainer" only)
    timeout_s: float = 300.0  # per endpoint request
    resident: bool = True  # False: loaded for each scoring call and released after (local only)

    @property
    def is_endpoint(self) -> bool:
        return self.where == "endpoint"

    def validate(self) -> RMPlacement:
        """ValueError naming the field and value that cannot work."""
        device_index(self.where)  # raises on an unknown placement
        if self.dtype not in DTYPES:
            raise ValueError(f"rm_dtype must be one of {list(DTYPES)}, got {self.dtype!r}")
        if int(self.batch_size) < 1:
            raise ValueError(f"rm_batch_size must be >= 1, got {self.batch_size}")
        if self.is_endpoint and not self.endpoint:
            raise ValueError("rm_placement: endpoint needs rm_endpoint (the scorer server's URL)")
        if self.endpoint and not self.is_endpoint:
            raise ValueError(
                f"rm_endpoint is set but rm_placement is {self.where!r}: "
                "set rm_placement: endpoint to use it"
            )
        if self.endpoint and not self.endpoint.startswith(("http://", "https://")):
            raise ValueError(f"rm_endpoint must be an http(s) URL, got {self.endpoint!r}")
        if not self.resident and (self.is_endpoint or self.zero3):
            raise ValueError(
                "rm_resident: false reloads a local RM for each scoring call: not with "
                f"rm_placement {self.where!r}" + (" and rm_zero3" if self.zero3 else "")
            )
        if self.zero3 and self.where != "trainer":
            raise ValueError(
                f"rm_zero3 shards the RM across the training ranks: it needs "
                f"rm_placement: trainer, got {self.where!r}"
            )
        return self


def device_index(where: str) -> int | None:
    """N of "device:N" (or "cuda:N"), None for the other placements; ValueError when unknown."""
    if where in ("cpu", "trainer", "endpoint"):
        return None
    for prefix in ("device:", "cuda:"):
        if where.startswith(prefix) and where[len(prefix) :].isdigit():
            return int(where[len(prefix) :])
    raise ValueError(f"rm_placement must be one of {list(WHERE)}, got {where!r}")


def resolve_device(where: str, trainer_device=None) -> str:
    """The torch device the RM's weights go to for a local placement.
    trainer: the training process's device (trainer_device, e.g. GRPOConfig.device), "cpu" when
    none is given; device:N: "cuda:N" (ValueError when this machine has fewer accelerators)."""
    if where == "endpoint":
        raise ValueError("rm_placement: endpoint has no local device")
    n = device_index(where)
    if where == "cpu":
        return "cpu"
    if where == "trainer":
        return str(trainer_device) if trainer_device is not None else "cpu"
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n >= count:
        raise ValueError(f"rm_placement {where!r}: this machine has {count} CUDA device(s)")
    return f"cuda:{n}"


def load_scorer(rm_path, placement: RMPlacement | None = None, *, trainer_device=None):
    """The scorer of `placement` (default: CPU, float32): a ProcessRewardScorer on the resolved
    device and dtype, or an EndpointScorer for where="endpoint" (checked with one /health
    request, so a wrong URL fails here, not at the first step)."""
    p = (placement or RMPlacement()).validate()
    if p.is_endpoint:
        scorer = EndpointScorer(p.endpoint, batch_size=p.batch_size, timeout_s=p.timeout_s)
        scorer.health()
        return scorer
    device = resolve_device(p.where, trainer_device)
    # ZeRO-3 sharding starts from CPU weights (prepare_deepspeed moves and partitions them)
    return ProcessRewardScorer(
        rm_path,
        batch_size=p.batch_size,
        device="cpu" if p.zero3 else device,
        dtype=resolve_dtype(p.dtype, device),
        resident=p.resident,
    )


class RMLoadError(RecodeError, ValueError):
    """A reward model that does not load; the message names the path (or endpoint) and why."""


def load_checked_scorer(rm_path, placement: RMPlacement | None = None, *, trainer_device=None):
    """load_scorer, with what cannot work named before and while loading: RMLoadError when
    rm_path is empty (and no endpoint serves the RM), is not a Hugging Face checkpoint folder
    (no config.json), or fails to load ("reward model path P does not load: <why>")."""
    remote = placement is not None and placement.is_endpoint
    if not rm_path and not remote:
        raise RMLoadError(
            "a process reward needs rm_path (the reward-model checkpoint): pass "
            "`--set rm_path=DIR` to `recode grpo` (DIR: a reward model trained by "
            "`recode rm` or notebook 02: runs/<profile>/02_reward_model/rm), or "
            "choose a recipe without a process reward (`--recipe strictness_smoke`)"
        )
    path = Path(rm_path or placement.endpoint)
    if not remote and (not path.is_dir() or not (path / "config.json").is_file()):
        raise RMLoadError(
            f"reward model path {path} does not load: not a Hugging Face "
            "checkpoint folder (no config.json)"
        )
    try:
        return load_scorer(path, placement, trainer_device=trainer_device)
    except Exception as exc:
        raise RMLoadError(
            f"reward model path {path} does not load: {type(exc).__name__}: {exc}"
        ) from exc
