"""An API model's row in ReCode's headline table. The paper says its policy is "comparable to
GPT-4-Turbo" on the code benchmarks; notebook 05 puts such a model (API_MODEL, paper profile:
gpt-4-turbo) beside the start model and the trained policies, evaluated with the same EvalSpec
(benchmarks, problems, prompt, temperature, top_p, token budget, n, seed, greedy twin, sandbox)
through the openai generation backend (recode_lib.generation.openai_backend).

    row = api_row("gpt-4-turbo")          # key and URL read from the environment
    if row.refusal:                       # "not run: OPENAI_API_KEY unset (...)"
        print(row.refusal)
    else:
        summaries = evaluate_api_row(row, benchmarks, spec, OUT / "api", limit=N, greedy=True)
    record = row.record()                 # what headline.json keeps (never the key)

The key and the server come only from the environment, the names the openai backend and the
OpenAI client use: $OPENAI_API_KEY and $OPENAI_BASE_URL (https://api.openai.com/v1 for OpenAI's
API, or any OpenAI-compatible server). When either is unset the row is refused with one line
naming the unset variables (`ApiRowRefused`); notebook 05 then records the row as "not run:
..." and the rest of the table is unchanged, so profiles without a key (smoke, the dry run)
still complete. The key is never written anywhere: the record holds the model, the URL (without
any user:password@, query or fragment), the status and the date.

Limits: a hosted API treats the per-sample `seed` as best effort and may change the model behind
a name, so the row is not bit-reproducible (the record keeps the date it was evaluated); only
the single-turn setting (the openai backend renders no tools); the spec's precision is an hf
option, so the row is generated at "native" precision. It computes no metric of its own: the
summaries are evaluate_policies', the table headline_table's (where the row is a comparison,
`comparisons=`, with no relative gain of its own).
"""

from __future__ import annotations

import datetime
import os
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.evaluation.headline import evaluate_policies

__all__ = ["API_ENV", "ApiRow", "ApiRowRefused", "api_row", "api_spec", "evaluate_api_row"]

KEY_ENV, URL_ENV = "OPENAI_API_KEY", "OPENAI_BASE_URL"
API_ENV = (KEY_ENV, URL_ENV)


class ApiRowRefused(RecodeError, RuntimeError):
    """The API row cannot run: a variable it reads from the environment is unset."""


@dataclass(frozen=True)
class ApiRow:
    """One API model to evaluate: `policy` is its row's name in the table (the model name),
    `base_url` the server, `missing` the environment variables that are unset (empty: ready)."""

    model: str
    base_url: str | None
    missing: tuple[str, ...]

    @property
    def policy(self) -> str:
        return self.model

    @property
    def refusal(self) -> str | None:
        """One line naming the unset variables, or None when the row can run."""
        if not self.missing:
            return None
        return (
            f"not run: {', '.join(self.missing)} unset (the {self.model!r} row reads the "
            f"API key from ${KEY_ENV} and the server from ${URL_ENV}, e.g. "
            "https://api.openai.com/v1)"
        )

    def require(self) -> ApiRow:
        """Itself when it can run; ApiRowRefused (its refusal line) when not."""
        if self.refusal:
            raise ApiRowRefused(self.refusal)
        return self

    def record(self, status: str | None = None) -> dict:
        """{"policy", "model", "base_url", "status", "env", "date"}: what the results keep (no
        key). status: the refusal line, else the given one (default "run")."""
        return {
            "policy": self.policy,
            "model": self.model,
            "base_url": public_url(self.base_url),
            "status": self.refusal or status or "run",
            "env": list(API_ENV),
            "date": datetime.date.today().isoformat(),
        }


def public_url(url: str | None) -> str | None:
    """The URL without user:password@, query or fragment (what may be written down)."""
    if not url:
        return url
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def api_row(model: str, env: Mapping[str, str] | None = None) -> ApiRow:
    """The API row of `model`, reading $OPENAI_API_KEY and $OPENAI_BASE_URL from `env`
    (default os.environ); an empty value counts as unset. ValueError for an empty model."""
    if not str(model or "").strip():
        raise ValueError("api_row: the API model name is empty (API_MODEL '' means no API row)")
    env = os.environ if env is None else env
    missing = tuple(name for name in API_ENV if not str(env.get(name) or "").strip())
    url = str(env.get(URL_ENV) or "").strip() or None
    return ApiRow(model=str(model).strip(), base_url=url, missing=missing)


def api_spec(spec, row: ApiRow):
    """`spec` on the openai backend at the row's server: every sampling and scoring field kept
    (precision "native": the hf option does not apply to a served model)."""
    row.require()
    return spec.replace(backend="openai", base_url=row.base_url, precision="native")


def folder_name(model: str) -> str:
    """A folder name for a model name (an API may use "org/model")."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._") or "api_model"


def evaluate_api_row(
    row: ApiRow,
    benchmarks: Sequence[str],
    spec,
    out_root,
    *,
    limit: int | None = None,
    options: Mapping[str, Mapping] | None = None,
    greedy: bool = False,
    log=print,
) -> dict[str, dict]:
    """{benchmark: summary + "per_problem"} of the API model, evaluated by
    headline.evaluate_policies with api_spec(spec, row) into out_root/<model folder>/<benchmark>
    (resumable like every policy). ApiRowRefused when the environment lacks the key or URL; a
    server error is the backend's GenerationError."""
    spec = api_spec(spec, row)
    folder = Path(out_root) / folder_name(row.model)
    return evaluate_policies(
        {row.policy: row.model},
        benchmarks,
        spec,
        {row.policy: folder},
        limit=limit,
        options=options,
        greedy=greedy,
        log=log,
    )[row.policy]
