"""Which model plays which judge in LCB-RB, and what a run actually used.

    roles = JudgeRoles(open_model="Qwen/Qwen2.5-Coder-32B-Instruct", open_backend="vllm",
                       consistency_model="gpt-4o-2024-08-06", base_url="https://api.openai.com/v1",
                       api_judges=("gpt-4-turbo-2024-04-09",),
                       classifiers=("Skywork/Skywork-Reward-Llama-3.1-8B-v0.2",),
                       on_missing="error")
    c = roles.consistency()            # JudgeChoice: the model, backend and why it fell back
    gen = c.generator(open_generator)  # an OpenAIGenerator, or the open judge's generator
    for j in roles.baseline_api(): ...            # the GPT-4-Turbo-class baselines
    roles.classifier_paths(run_dir)               # the public reward-model classifiers
    roles.record()                                # {role: {"requested", "used", "fallback"}}

ReCode's LCB-RB has two stages, "automatic dual consistency check with GPT-4o, then human
adjudication", and compares the CRPL RM with "GPT-4-Turbo and specialised reward models". The
roles are kept apart here: the consistency filter's judge (`consistency_model`, a GPT-4o-class
model behind an OpenAI-compatible endpoint, recode_lib.generation.openai_backend; empty: the
open judge), the baselines scored on the finished benchmark (the open LLM judge `open_model`
pointwise and pairwise, every `api_judges` model at the same endpoint, and every public
reward-model classifier in `classifiers`, a Hugging Face sequence-classification checkpoint
with one score, e.g. Skywork-Reward). An endpoint judge needs `base_url` and, for a remote
host, the API key in $`api_key_env`; when either is missing, on_missing="error" raises
JudgeEndpointError naming the missing parameter or variable, and on_missing="fallback" uses the
open judge in its place (an API baseline is then the open judge under the baseline's name)
with the reason in `fallback` — the results say so (record(), and annotate_rows adds the model
used and the fallback to every accuracy row). Nothing here opens a connection: the check is of
configuration only. A classifier entry "run:<path>" is a folder under the run directory (the
dry run's stand-in: notebook 02's own RM).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from recode_lib.core.errors import RecodeError
from recode_lib.generation import get_generator

ON_MISSING = ("error", "fallback")
RUN_PREFIX = "run:"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "::1")


class JudgeEndpointError(RecodeError, ValueError):
    """An endpoint judge is asked for without the endpoint or the key it needs."""


@dataclass(frozen=True)
class JudgeChoice:
    """One judge role resolved: the model asked for and the one used (`backend` "openai" for
    the endpoint, else the open judge's), with `fallback` the reason when they differ."""

    role: str
    requested: str
    used: str
    backend: str
    base_url: str = ""
    api_key_env: str = ""
    fallback: str | None = None

    def generator(self, open_generator, **kw):
        """The generator that plays this role: `open_generator` when the open judge does,
        else an OpenAIGenerator at base_url with the key from $api_key_env."""
        if self.backend != "openai":
            return open_generator
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return get_generator("openai", self.used, base_url=self.base_url, api_key=key, **kw)

    def to_dict(self) -> dict:
        return {
            "requested": self.requested,
            "used": self.used,
            "backend": self.backend,
            "fallback": self.fallback,
        }


def _names(value) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    return tuple(v.strip() for v in value or () if str(v).strip())


@dataclass
class JudgeRoles:
    """The judges of one LCB-RB run (module docstring). open_model/open_backend: the open LLM
    judge (a local model); consistency_model: the filter's judge ("" = the open judge);
    base_url / api_key_env: the OpenAI-compatible endpoint of every endpoint judge;
    api_judges: endpoint baselines (e.g. GPT-4-Turbo); classifiers: public RM classifiers."""

    open_model: str
    open_backend: str = "hf"
    consistency_model: str = ""
    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    api_judges: tuple[str, ...] = ()
    classifiers: tuple[str, ...] = ()
    on_missing: str = "error"
    chosen: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.on_missing not in ON_MISSING:
            raise ValueError(
                f"ON_MISSING_JUDGE must be one of {ON_MISSING}, got {self.on_missing!r}"
            )
        self.api_judges, self.classifiers = _names(self.api_judges), _names(self.classifiers)

    def missing(self) -> str | None:
        """Why the endpoint cannot be used (no base_url; a remote host and no API key), or
        None."""
        if not self.base_url:
            return "no OpenAI-compatible endpoint (JUDGE_BASE_URL is empty)"
        host = urlparse(self.base_url).hostname or ""
        if host not in LOCAL_HOSTS and not os.environ.get(self.api_key_env or ""):
            return (
                f"no API key for {self.base_url} (${self.api_key_env} is not set; "
                "JUDGE_API_KEY_ENV names the variable)"
            )
        return None

    def _endpoint(self, role: str, model: str) -> JudgeChoice:
        why = self.missing()
        if why is None:
            choice = JudgeChoice(role, model, model, "openai", self.base_url, self.api_key_env)
        elif self.on_missing == "error":
            raise JudgeEndpointError(
                f"the {role} judge {model!r} runs behind an OpenAI-"
                f"compatible endpoint, but there is {why}; set it, or "
                'ON_MISSING_JUDGE = "fallback" to use the open judge '
                f"{self.open_model!r} in its place (recorded)"
            )
        else:
            choice = JudgeChoice(
                role,
                model,
                self.open_model,
                self.open_backend,
                fallback=f"{why}: the open judge {self.open_model!r} stands in",
            )
        self.chosen[role] = choice
        return choice

    def consistency(self) -> JudgeChoice:
        """The dual consistency filter's judge."""
        if not self.consistency_model:
            choice = JudgeChoice("consistency", self.open_model, self.open_model, self.open_backend)
            self.chosen["consistency"] = choice
            return choice
        return self._endpoint("consistency", self.consistency_model)

    def baseline_api(self) -> list[JudgeChoice]:
        """One choice per endpoint baseline judge (role "api:<model>")."""
        return [self._endpoint(f"api:{m}", m) for m in self.api_judges]

    def classifier_paths(self, run_dir) -> dict[str, str]:
        """{method name "rm:<name>": the checkpoint to load} for each public RM classifier; a
        "run:<path>" entry resolves under run_dir (recorded as the stand-in it is)."""
        out = {}
        for c in self.classifiers:
            path = str(Path(run_dir) / c[len(RUN_PREFIX) :]) if c.startswith(RUN_PREFIX) else c
            self.chosen[f"rm:{c}"] = JudgeChoice(
                f"rm:{c}",
                c,
                path,
                "classifier",
                fallback=(
                    f"a stand-in classifier from this run ({path})"
                    if c.startswith(RUN_PREFIX)
                    else None
                ),
            )
            out[f"rm:{c}"] = path
        return out

    def record(self) -> dict[str, dict]:
        """{role: {"requested", "used", "backend", "fallback"}} of every role resolved so far,
        plus "open" (the open LLM judge of the pointwise/pairwise baselines)."""
        return {
            "open": {
                "requested": self.open_model,
                "used": self.open_model,
                "backend": self.open_backend,
                "fallback": None,
            },
            **{r: c.to_dict() for r, c in self.chosen.items()},
        }

    def any_fallback(self) -> bool:
        return any(c.fallback for c in self.chosen.values())


def method_roles(roles: JudgeRoles, methods) -> dict[str, str]:
    """{method name: judge role} for the method names notebook 03 builds: judge_pointwise /
    judge_pairwise -> "open", "<kind>:<model>" (api judges) -> "api:<model>", "rm:<name>" ->
    itself."""
    out = {}
    for name in methods:
        if name in ("judge_pointwise", "judge_pairwise"):
            out[name] = "open"
        elif name.startswith(("pointwise:", "pairwise:")):
            out[name] = "api:" + name.split(":", 1)[1]
        elif name.startswith("rm:"):
            out[name] = name
    return out


def annotate_rows(rows, roles: JudgeRoles, methods) -> list[dict]:
    """Every accuracy row with "model_used" and "fallback" for the judge behind its method
    (None for methods that are no judge: the CRPL RMs, the length baseline)."""
    rec, by_method = roles.record(), method_roles(roles, methods)
    out = []
    for r in rows:
        c = rec.get(by_method.get(r["method"], ""), {})
        out.append({**r, "model_used": c.get("used"), "fallback": c.get("fallback")})
    return out
