"""Reward functions for GRPO, registered by name, with the TRL signature.

    from recode_lib.rewards import get_reward, REGISTRY
    fn = get_reward("gated", rm_path="runs/smoke/02_reward_model/rm")
    rewards = fn(prompts, completions, tests=[...], **columns)   # list[float], one per completion
    details = fn.details(prompts, completions, tests=[...])       # per-sample components + reasons

Names (options in brackets; all accept `runner=SandboxRunner(...)`):
  format          R_fmt in {0,1}: reasoning then exactly one parsable code block (prompts.parse_response)
  outcome         R_out in {0,1}: every test passes in the sandbox
  process         R_proc in (0,1): sigmoid((rm_score - proc_center) / proc_temperature)
                  [rm_path | scorer (any object with .score(prompts, traces)), proc_center,
                   proc_temperature, proc_trace: "response" (default, what the RM is trained on) | "reasoning", proc_weight]
  gated           R_fmt + R_out + 1[R_out=1] * R_proc        (ReCode's CG-GRPO)      [rm_path]
  additive        R_fmt + R_out + R_proc                     (ablation: no gate)     [rm_path]
  outcome_only    R_fmt + R_out                              (ablation: no process reward)
  strict          R_k in {0,1}: passes every test with input_len < 10**k            [k: int | "inf"]
  strict_<k>, strict_inf   the same with k in the name (e.g. strict_2)
  partial_discrete   mean of R_k over k in `ks` and inf (static partial credit)     [ks]
  partial_continuous share of tests, in order of input size, passed before the first failure
  math_answer     R_ans in {0,1}: math-verify equivalence with the `answer` column
  math_format     math R_fmt: reasoning then one \\boxed{} answer
  math_gated / math_additive / math_outcome_only   the compositions with R_ans as the outcome

(The strictness family is defined in recode_lib.rewards_strict and the math family in
recode_lib.rewards_math; both register here on import.)
Inputs: `completions` are strings or chat-message lists (conversational datasets; the assistant
contents are joined); code rewards need a `tests` column (dict or JSON text; a row without tests
raises ValueError naming the row), optionally `starter_code`, `entry_point`, `time_limit_s`,
`memory_mb`, `problem_id`. The program executed is recode_lib.assemble's, exactly as in
evaluation, so a training reward of 1 means the evaluation harness would count it correct.
Each call logs every component's batch mean through TRL's `log_metric` ("<name>/fmt",
"<name>/out", "<name>/proc", "<name>/error_rate", ...) and the per-sample values and failure
reasons through `log_extra`, so reward hacking (e.g. proc rising while out does not) is visible.
A failure of the sandbox or the reward model is a recorded 0 with its reason, never NaN and
never an exception in the training loop. Execution is shared and cached per step by
recode_lib.reward_exec.SandboxRunner, so composed rewards never run a completion twice.
It does not train anything (recode_lib.grpo does) and does not load the RM until a process
reward is requested (then it loads at construction and raises naming the path if it cannot).
"""

from __future__ import annotations

import math
from typing import Callable

from types import SimpleNamespace

from recode_lib.assemble import assemble
from recode_lib.prompts import parse_response
from recode_lib.reward_exec import REWARD_ERROR, SandboxRunner, default_runner, tests_spec

REGISTRY: dict[str, Callable[..., "RewardFunction"]] = {}
COMPOSITIONS = {"gated": (1, 1, "gated"), "additive": (1, 1, "always"), "outcome_only": (1, 1, None)}


class RewardConfigError(ValueError):
    """A reward that cannot be built (unknown name, bad option, RM path that does not load)."""


def register(name: str):
    def deco(factory):
        REGISTRY[name] = factory
        return factory
    return deco


def _reject(name: str, extra: dict) -> None:
    if extra:
        raise RewardConfigError(f"reward {name!r}: unknown option(s) {sorted(extra)}")


def get_reward(name: str, **options) -> "RewardFunction":
    """Build the reward function registered as `name` (strict_<k> names carry k)."""
    if name.startswith("strict_") and name not in REGISTRY:
        k = name[len("strict_"):]
        options["k"] = k
        return REGISTRY["strict"](name=name, **options)
    if name not in REGISTRY:
        raise RewardConfigError(f"unknown reward {name!r}; known: {sorted(REGISTRY)} "
                                "and strict_<k>")
    return REGISTRY[name](**options)


def completion_text(completion) -> str:
    """A completion as text: strings pass through; chat messages -> assistant contents joined."""
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content") or "")
    parts = [m.get("content") or "" for m in completion
             if isinstance(m, dict) and m.get("role", "assistant") == "assistant"]
    return "".join(p if isinstance(p, str) else str(p) for p in parts)


def prompt_text(prompt) -> str:
    """The user's problem statement: the last user turn of a chat prompt, or the string."""
    if isinstance(prompt, str):
        return prompt
    users = [m.get("content") or "" for m in prompt or [] if m.get("role") == "user"]
    return users[-1] if users else ""


def _sigmoid(x: float) -> float:
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
            from recode_lib.reward_model import ProcessRewardScorer
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
                out.append((_sigmoid((float(s) - self.center) / self.temperature), float(s), ""))
        return out


class RewardFunction:
    """A TRL reward function: __call__ returns floats; details() returns per-sample dicts."""

    def __init__(self, name: str, compute: Callable[..., list[dict]], components: tuple[str, ...]):
        self.__name__ = name
        self._compute = compute
        self.components = components

    def details(self, prompts, completions, **kwargs) -> list[dict]:
        return self._compute(list(prompts), list(completions), kwargs)

    def __call__(self, prompts, completions, **kwargs) -> list[float]:
        log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
        rows = self.details(prompts, completions, **kwargs)
        rewards = []
        for r in rows:
            v = float(r["reward"])
            if not math.isfinite(v):
                r["reason"] = (r.get("reason", "") + f"; non-finite reward {v}").strip("; ")
                v = 0.0
            rewards.append(v)
        if rows and log_metric is not None:
            for c in ("reward",) + self.components:
                vals = [r[c] for r in rows if r.get(c) is not None]
                if vals:
                    log_metric(f"{self.__name__}/{c}", sum(vals) / len(vals))
            log_metric(f"{self.__name__}/error_rate",
                       sum(r.get("error", False) for r in rows) / len(rows))
        if rows and log_extra is not None:
            for c in self.components:
                log_extra(f"{self.__name__}/{c}", [r.get(c) for r in rows])
            log_extra(f"{self.__name__}/reason", [r.get("reason", "") for r in rows])
        return rewards


# --- shared pieces ----------------------------------------------------------------------

def _column(kwargs: dict, name: str, n: int):
    v = kwargs.get(name)
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


def _execute(completions, kwargs, runner: SandboxRunner, texts=None) -> tuple[list, list]:
    """(parsed responses, sandbox results) for a batch; raises ValueError for rows without tests."""
    n = len(completions)
    texts = texts or [completion_text(c) for c in completions]
    if "tests" not in kwargs:
        raise ValueError("the dataset has no 'tests' column: code rewards need the tests of "
                         "each problem (see recode_lib.grpo.build_dataset)")
    pids = _column(kwargs, "problem_id", n)
    tests = []
    for i, t in enumerate(kwargs["tests"]):
        where = f"row {i}" + (f" (problem_id {pids[i]!r})" if pids[i] is not None else "")
        tests.append(tests_spec(t, where))
    starters, entries = _column(kwargs, "starter_code", n), _column(kwargs, "entry_point", n)
    progs = [assemble(SimpleNamespace(tests=tests[i], starter_code=starters[i] or "",
                                      entry_point=entries[i] or None), texts[i]) for i in range(n)]
    parsed = [p.parsed for p in progs]
    state = kwargs.get("trainer_state")
    step = getattr(state, "global_step", None)
    ids = [f"{pids[i] if pids[i] is not None else 'row'}#{i}" for i in range(n)]
    results = runner.run([p.code for p in progs], tests, ids=ids, step=step,
                         time_limit_s=_column(kwargs, "time_limit_s", n),
                         memory_mb=_column(kwargs, "memory_mb", n))
    return parsed, results


def _base_row(parsed, result) -> dict:
    err = result.get("status") == REWARD_ERROR
    reason = result.get("reason", "") if err else ("" if parsed.format_ok else parsed.reason)
    if not err and result.get("status") not in ("passed", None) and parsed.code is not None:
        reason = (reason + "; " if reason else "") + str(result.get("status"))
    return {"fmt": float(parsed.format_ok), "out": float(result.get("outcome") == "correct"),
            "status": result.get("status"), "outcome": result.get("outcome"),
            "error": err, "reason": reason}


# --- code rewards -----------------------------------------------------------------------

@register("format")
def _format(**extra) -> RewardFunction:
    _reject("format", extra)
    def compute(prompts, completions, kwargs):
        out = []
        for c in completions:
            p = parse_response(completion_text(c))
            out.append({"reward": float(p.format_ok), "fmt": float(p.format_ok), "reason": p.reason})
        return out
    return RewardFunction("format", compute, ("fmt",))


@register("outcome")
def _outcome(runner: SandboxRunner | None = None, **extra) -> RewardFunction:
    _reject("outcome", extra)
    def compute(prompts, completions, kwargs):
        parsed, results = _execute(completions, kwargs, runner or default_runner())
        rows = [_base_row(p, r) for p, r in zip(parsed, results)]
        for r in rows:
            r["reward"] = r["out"]
        return rows
    return RewardFunction("outcome", compute, ("out",))


def _proc_options(options: dict) -> dict:
    return {"center": options.pop("proc_center", 0.0),
            "temperature": options.pop("proc_temperature", 1.0),
            "trace": options.pop("proc_trace", "response"),
            "scorer": options.pop("scorer", None)}


@register("process")
def _process(rm_path=None, **options) -> RewardFunction:
    popts = _proc_options(options)
    _reject("process", options)
    proc = ProcessReward(rm_path, **popts)

    def compute(prompts, completions, kwargs):
        scores = proc([prompt_text(p) for p in prompts], [completion_text(c) for c in completions])
        return [{"reward": s, "proc": s, "proc_raw": raw, "error": bool(why), "reason": why}
                for s, raw, why in scores]
    return RewardFunction("process", compute, ("proc", "proc_raw"))


def _composed(name: str, outcome_rows: Callable, rm_path=None, **options) -> RewardFunction:
    w_fmt, w_out, mode = COMPOSITIONS[name.replace("math_", "")]
    w_proc = float(options.pop("proc_weight", 1.0))
    popts = _proc_options(options)
    _reject(name, options)
    proc = ProcessReward(rm_path, **popts) if mode else None

    def compute(prompts, completions, kwargs):
        texts = [completion_text(c) for c in completions]
        rows = outcome_rows(completions, texts, kwargs)
        want = [i for i, r in enumerate(rows) if mode == "always" or (mode and r["out"] == 1.0)]
        scores = proc([prompt_text(prompts[i]) for i in want], [texts[i] for i in want]) if want else []
        for r in rows:
            r["proc"], r["proc_raw"] = (0.0 if mode else None), None
        for i, (s, raw, why) in zip(want, scores):
            rows[i]["proc"], rows[i]["proc_raw"] = s, raw
            if why:
                rows[i]["error"] = True
                rows[i]["reason"] = (rows[i]["reason"] + "; " if rows[i]["reason"] else "") + why
        for r in rows:
            r["reward"] = w_fmt * r["fmt"] + w_out * r["out"] + w_proc * (r["proc"] or 0.0)
        return rows
    comps = ("fmt", "out", "proc", "proc_raw") if mode else ("fmt", "out")
    return RewardFunction(name, compute, comps)


def _code_outcome_rows(runner):
    def rows(completions, texts, kwargs):
        parsed, results = _execute(completions, kwargs, runner or default_runner(), texts)
        return [_base_row(p, r) for p, r in zip(parsed, results)]
    return rows


for _name in COMPOSITIONS:
    register(_name)(lambda runner=None, _n=_name, **o: _composed(_n, _code_outcome_rows(runner), **o))


# the strictness and math families register themselves (they import the pieces above)
from recode_lib import rewards_math, rewards_strict  # noqa: E402,F401
