"""R_proc: the reasoning-process reward model's score squashed to (0, 1), and the `process` reward.

    proc = ProcessReward(rm_path, center=0.0, temperature=1.0, trace="response")
    proc(prompts, texts)   # [(reward, raw score | None, reason)], failures are (0, None, reason)

The reward model itself lives in recode_lib.process_reward.model (loaded at construction, so a
bad path raises here, not in the training loop). It does not execute code.
"""

from __future__ import annotations

import math

from recode_lib.prompts import parse_response
from recode_lib.rewards.base import RewardFunction, completion_text, prompt_text
from recode_lib.rewards.registry import RewardConfigError, register, reject

def sigmoid(x: float) -> float:
    """The logistic function, stable for large |x|."""
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


class ProcessReward:
    """R_proc: the reasoning-process RM's score squashed to (0, 1). Loads the RM eagerly."""

    def __init__(self, rm_path=None, *, center: float = 0.0, temperature: float = 1.0,
                 trace: str = "response", scorer=None):
        if trace not in ("reasoning", "response"):
            raise RewardConfigError(f"proc_trace must be 'reasoning' or 'response', got {trace!r}")
        if temperature <= 0:
            raise RewardConfigError(f"proc_temperature must be > 0, got {temperature}")
        self.center, self.temperature, self.trace = center, temperature, trace
        self.path = str(rm_path) if rm_path else None
        if scorer is not None:        # any object with .score(prompts, traces) (e.g. an LLM judge)
            self.scorer = scorer
            return
        if not rm_path:
            raise RewardConfigError("a process reward needs rm_path (the reward-model checkpoint)")
        from pathlib import Path

        path = Path(rm_path)
        if not path.is_dir() or not (path / "config.json").is_file():
            raise RewardConfigError(f"reward model path {path} does not load: not a Hugging Face "
                                    "checkpoint folder (no config.json)")
        try:
            from recode_lib.process_reward.model import ProcessRewardScorer
            self.scorer = ProcessRewardScorer(str(path))
        except Exception as exc:
            raise RewardConfigError(f"reward model path {path} does not load: "
                                    f"{type(exc).__name__}: {exc}") from exc

    def __call__(self, prompts: list[str], texts: list[str]) -> list[tuple[float, float | None, str]]:
        """(reward in (0,1), raw score, reason) per sample; failures are (0, None, reason)."""
        if not texts:
            return []
        traces = []
        for t in texts:
            p = parse_response(t)
            traces.append(p.reasoning if self.trace == "reasoning" and p.reasoning else t)
        try:
            raw = list(self.scorer.score(prompts, traces))
        except Exception as exc:
            return [(0.0, None, f"rm error: {type(exc).__name__}: {exc}"[:300])] * len(texts)
        out = []
        for s in raw:
            if s is None or not math.isfinite(float(s)):
                out.append((0.0, None, f"rm returned {s!r}"))
            else:
                out.append((sigmoid((float(s) - self.center) / self.temperature), float(s), ""))
        return out


def proc_options(options: dict) -> dict:
    """Pop the process-reward options (proc_center, proc_temperature, proc_trace, scorer)."""
    return {"center": options.pop("proc_center", 0.0),
            "temperature": options.pop("proc_temperature", 1.0),
            "trace": options.pop("proc_trace", "response"),
            "scorer": options.pop("scorer", None)}


@register("process")
def _process(rm_path=None, **options) -> RewardFunction:
    popts = proc_options(options)
    reject("process", options)
    proc = ProcessReward(rm_path, **popts)

    def compute(prompts, completions, kwargs):
        scores = proc([prompt_text(p) for p in prompts], [completion_text(c) for c in completions])
        return [{"reward": s, "proc": s, "proc_raw": raw, "error": bool(why), "reason": why}
                for s, raw, why in scores]
    return RewardFunction("process", compute, ("proc", "proc_raw"))
