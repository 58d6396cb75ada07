"""R_proc: the reasoning-process reward model's score squashed to (0, 1), and the `process` reward.

    proc = ProcessReward(scorer, center=0.0, temperature=1.0, trace="response")
    proc(prompts, texts)  # [(reward, raw score | None, reason)]; failures are (0, None, why)
    fn = process_reward(scorer=scorer)            # the registered `process` reward (needs the RM)
    fn = process_reward(rm_path="runs/smoke/02_reward_model/rm")   # loads it (CPU, float32)

ReCode: "the reasoning-process reward from the RM", trained with the Bradley-Terry objective (no
absolute scale), so the raw score is centred and scaled before the logistic:
R_proc = sigmoid((score - center) / temperature). `trace` picks what the RM reads: the whole
response (what it is trained on) or the reasoning before the code. The reward model itself and
its placement (device, dtype, batching, endpoint) live in recode_lib.process_reward; a scorer
given here is used as is. It does not execute code. A scorer that raises or returns a
non-finite score gives a recorded 0 with its reason, never an exception in training.
"""

from __future__ import annotations

import math

from recode_lib.core.prompts import completion_text, parse_response, prompt_text
from recode_lib.metrics import sigmoid
from recode_lib.process_reward.placement import RMLoadError, load_checked_scorer
from recode_lib.rewards.base import RewardFunction
from recode_lib.rewards.registry import Need, RewardConfigError, register


def whole_response(text: str) -> str:
    """The trace the RM reads by default: the whole response, as in its training pairs."""
    return text


def reasoning_only(text: str) -> str:
    """The reasoning before the code block (the whole text when there is none)."""
    p = parse_response(text)
    return p.reasoning or text


TRACES = {"response": whole_response, "reasoning": reasoning_only}


def load_scorer(rm_path, placement=None, *, trainer_device=None):
    """The scorer of the RM at rm_path, placed as `placement` says (a
    recode_lib.process_reward.placement.RMPlacement; None: CPU float32; trainer_device: the
    training process's device, for where="trainer"); RewardConfigError naming the path when it
    does not load."""
    try:
        return load_checked_scorer(rm_path, placement, trainer_device=trainer_device)
    except RMLoadError as exc:
        raise RewardConfigError(str(exc)) from exc


class ProcessReward:
    """R_proc = sigmoid((rm_score - center) / temperature) of the trace `trace` selects."""

    def __init__(
        self, scorer, *, center: float = 0.0, temperature: float = 1.0, trace: str = "response"
    ):
        if trace not in TRACES:
            raise RewardConfigError(f"proc_trace must be one of {sorted(TRACES)}, got {trace!r}")
        if temperature <= 0:
            raise RewardConfigError(f"proc_temperature must be > 0, got {temperature}")
        if not hasattr(scorer, "score"):
            raise RewardConfigError(
                f"a process reward needs a scorer with .score(prompts, "
                f"traces), got {type(scorer).__name__}"
            )
        self.scorer, self.center, self.temperature = scorer, float(center), float(temperature)
        self.select = TRACES[trace]

    @property
    def collective(self) -> bool:
        """True when every rank must score the same number of traces (a ZeRO-3-sharded RM)."""
        return bool(getattr(self.scorer, "collective", False))

    def __call__(
        self, prompts: list[str], texts: list[str]
    ) -> list[tuple[float, float | None, str]]:
        """(reward in (0,1), raw score, reason) per sample; failures are (0, None, reason)."""
        if not texts:
            return []
        try:
            raw = list(self.scorer.score(prompts, [self.select(t) for t in texts]))
        except Exception as exc:
            return [(0.0, None, f"rm error: {type(exc).__name__}: {exc}"[:300])] * len(texts)
        if len(raw) != len(texts):
            return [(0.0, None, f"rm returned {len(raw)} scores for {len(texts)} traces")] * len(
                texts
            )
        out = []
        for s in raw:
            if s is None or not math.isfinite(float(s)):
                out.append((0.0, None, f"rm returned {s!r}"))
            else:
                out.append((sigmoid((float(s) - self.center) / self.temperature), float(s), ""))
        return out


def process_term(
    scorer=None,
    rm_path=None,
    *,
    proc_center: float = 0.0,
    proc_temperature: float = 1.0,
    proc_trace: str = "response",
) -> ProcessReward:
    """The ProcessReward of a factory's options: a given scorer, or the RM loaded from rm_path."""
    if scorer is not None and rm_path is not None:
        raise RewardConfigError("give a process reward either scorer or rm_path, not both")
    scorer = scorer if scorer is not None else load_scorer(rm_path)
    return ProcessReward(scorer, center=proc_center, temperature=proc_temperature, trace=proc_trace)


@register("process", needs=(Need.REWARD_MODEL,))
def process_reward(
    scorer=None,
    rm_path=None,
    proc_center: float = 0.0,
    proc_temperature: float = 1.0,
    proc_trace: str = "response",
) -> RewardFunction:
    """R_proc alone, in (0, 1), for every completion (no gate)."""
    proc = process_term(
        scorer,
        rm_path,
        proc_center=proc_center,
        proc_temperature=proc_temperature,
        proc_trace=proc_trace,
    )

    def compute(prompts, completions, kwargs):
        scores = proc([prompt_text(p) for p in prompts], [completion_text(c) for c in completions])
        return [
            {"reward": s, "proc": s, "proc_raw": raw, "error": bool(why), "reason": why}
            for s, raw, why in scores
        ]

    return RewardFunction("process", compute, ("proc", "proc_raw"))
