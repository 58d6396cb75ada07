"""Timing and the local metrics file of a GRPO run; a callback that trims the heap each step.

    Trainer = timed_trainer_class()            # GRPOTrainer + per-phase wall-clock accounting
    cb = MetricsJsonlCallback(out_dir / "metrics.jsonl", runner=sandbox_runner)
    trainer = Trainer(..., callbacks=[cb]); cb.trainer = trainer

`timed_trainer_class()` returns a GRPOTrainer subclass that only wraps `_generate` and
`_calculate_rewards` with timers (seconds accumulated in `trainer.phase_seconds`); nothing else
changes. The callback writes one JSON line per logging step to `metrics.jsonl` (keyed by
`step`, append-only, so a resumed run never duplicates a step): every value the trainer logs
(loss, `reward`, `rewards/<func>/mean`, the reward components each reward function reports
through `log_metric`, e.g. `gated/out`, `gated/proc`, `completions/mean_length`, ...) plus
`time/step_s`, `time/generation_s`, `time/reward_s`, `time/optimizer_s` (the remainder of the
step: forward/backward and the optimizer update) averaged over the steps since the last log
(and `time/sampling_copy_s`, the part of generation spent rebuilding the policy's sampling
copy, in runs with a generation_precision: recode_lib.training.sampling_copy),
and the sandbox's throughput (`sandbox/executed`, `sandbox/seconds`, `sandbox/per_s`,
`sandbox/cache_hits`, `sandbox/timeouts`).
`TrimHeapCallback()` hands the heap pages each optimizer step freed back to the OS at the step's
end (recode_lib.core.memory.trim_heap): the SFT start's steps differ in length, and without it
their freed activations stay resident and pile up (docs/measured.md, the laptop profile). It
changes no number the trainer computes.
It does not decide when to log (GRPOConfig.logging_steps does) and does not replace
`report_to` backends (tensorboard, trackio, wandb keep receiving the same logs).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from pathlib import Path

from transformers import TrainerCallback

from recode_lib.core.jsonl import JsonlStore
from recode_lib.core.memory import trim_heap

_CLASS = None


def timed_trainer_class():
    """GRPOTrainer with phase timers (built lazily: importing trl is slow)."""
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    from trl import GRPOTrainer

    class TimedGRPOTrainer(GRPOTrainer):
        def __init__(self, *args, **kwargs):
            self.phase_seconds = defaultdict(float)
            super().__init__(*args, **kwargs)

        def _generate(self, prompts):
            t0 = time.perf_counter()
            try:
                return super()._generate(prompts)
            finally:
                self.phase_seconds["generation"] += time.perf_counter() - t0

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
            t0 = time.perf_counter()
            try:
                return super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            finally:
                self.phase_seconds["reward"] += time.perf_counter() - t0

    _CLASS = TimedGRPOTrainer
    return _CLASS


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if hasattr(v, "item"):
        v = v.item()
    return v


class TrimHeapCallback(TrainerCallback):
    """trim_heap() at the end of every optimizer step (module docstring); `trims` counts them."""

    def __init__(self):
        self.trims = 0

    def on_step_end(self, args, state, control, **kw):
        trim_heap()
        self.trims += 1


class NoEndCheckpointCallback(TrainerCallback):
    """At the last step (global_step >= max_steps) no checkpoint is saved (module docstring);
    `cancelled` counts the saves it cancelled."""

    def __init__(self):
        self.cancelled = 0

    def on_step_end(self, args, state, control, **kw):
        if state.max_steps > 0 and state.global_step >= state.max_steps and control.should_save:
            control.should_save = False
            self.cancelled += 1


class MetricsJsonlCallback(TrainerCallback):
    """Appends one record per log event to a JsonlStore keyed by `step`."""

    def __init__(self, path, runner=None, run_name: str | None = None):
        self.path = Path(path)
        self.store = JsonlStore(self.path, key="step")
        self.runner = runner
        self.run_name = run_name
        self.trainer = None
        self._t0 = None
        self._phase0 = {}
        self._acc = defaultdict(float)
        self._n = 0
        self._sandbox0 = self._sandbox_snapshot()

    def _sandbox_snapshot(self):
        s = getattr(self.runner, "stats", None)
        return None if s is None else (s.executed, s.exec_seconds, s.cache_hits, s.timeouts)

    def _phases(self):
        return dict(getattr(self.trainer, "phase_seconds", {}) or {})

    def on_step_begin(self, args, state, control, **kw):
        self._t0 = time.perf_counter()
        self._phase0 = self._phases()

    def on_step_end(self, args, state, control, **kw):
        if self._t0 is None:
            return
        step_s = time.perf_counter() - self._t0
        ph = self._phases()
        gen = ph.get("generation", 0.0) - self._phase0.get("generation", 0.0)
        rew = ph.get("reward", 0.0) - self._phase0.get("reward", 0.0)
        self._acc["step_s"] += step_s
        self._acc["generation_s"] += gen
        self._acc["reward_s"] += rew
        self._acc["optimizer_s"] += max(step_s - gen - rew, 0.0)
        if "sampling_copy" in ph:  # part of generation: rebuilding the sampling copy
            self._acc["sampling_copy_s"] += ph["sampling_copy"] - self._phase0.get(
                "sampling_copy", 0.0
            )
        self._n += 1
        self._t0 = None

    def on_log(self, args, state, control, logs=None, **kw):
        if not state.is_world_process_zero or not logs or "train_runtime" in logs:
            return
        rec = {"step": int(state.global_step)}
        if self.run_name:
            rec["run"] = self.run_name
        rec.update({k: _clean(v) for k, v in logs.items()})
        if self._n:
            rec.update({f"time/{k}": v / self._n for k, v in self._acc.items()})
            rec["time/steps_averaged"] = self._n
        snap = self._sandbox_snapshot()
        if snap is not None and self._sandbox0 is not None:
            ex, sec, hits, tos = (a - b for a, b in zip(snap, self._sandbox0, strict=True))
            rec.update(
                {
                    "sandbox/executed": ex,
                    "sandbox/seconds": sec,
                    "sandbox/per_s": ex / sec if sec > 0 else None,
                    "sandbox/cache_hits": hits,
                    "sandbox/timeouts": tos,
                }
            )
            self._sandbox0 = snap
        self._acc.clear()
        self._n = 0
        self.store.append_new(rec)
