"""The generation interface every backend implements: SamplingConfig, Completion, Generator.

    sampling = SamplingConfig(temperature=0.8, top_p=0.95, max_new_tokens=512, n=4, seed=0)
    outs = generator.generate([messages_a, messages_b], sampling)   # [[Completion]*4, [..]*4]
    outs[0][2].text, outs[0][2].n_tokens, outs[0][2].finish_reason  # "stop" | "length"

A prompt is a list of chat messages ({"role", "content"}); backends apply the model's chat
template themselves. The unit of work is a *sample*: (prompt, sample index). Every sample has
its own seed, `sample_seed(sampling.seed, prompt, index)`, so a sample does not depend on which
other samples it is generated with; that is what lets the cache (cache.py) regenerate only the
missing (prompt, index) pairs. What each backend guarantees beyond that is in its docstring.
This module holds no model code.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from recode_lib.core.errors import RecodeError

Messages = list  # list[dict] with "role" and "content"


class Backend(StrEnum):
    """A generation backend: hf (transformers, CPU or one GPU), vllm (GPUs or vLLM's CPU
    build), openai (an OpenAI-compatible endpoint), vllm_standin (vLLM's request path on CPU
    with a transformers engine: the dry run)."""

    HF = "hf"
    VLLM = "vllm"
    OPENAI = "openai"
    VLLM_STANDIN = "vllm_standin"


class FinishReason(StrEnum):
    """Why a completion ended: STOP (end of turn or a stop string) or LENGTH (the budget)."""

    STOP = "stop"
    LENGTH = "length"


class GenerationError(RecodeError, RuntimeError):
    """A generation request that cannot be served; the message names the backend and request."""


@dataclass(frozen=True)
class SamplingConfig:
    """How to sample. temperature 0 means greedy (then every sample index gives the same text).

    temperature:    softmax temperature; 0 = greedy decoding.
    top_p:          nucleus sampling mass in (0, 1]; 1 = off.
    max_new_tokens: generation budget per sample; hitting it gives finish_reason "length".
    n:              samples per prompt (indices 0..n-1).
    seed:           base seed; sample i of prompt p uses sample_seed(seed, p, i).
    stop:           extra stop strings (the end-of-turn token always stops); the text is cut
                    before the stop string and finish_reason is "stop".
    """

    temperature: float = 0.0
    top_p: float = 1.0
    max_new_tokens: int = 512
    n: int = 1
    seed: int = 0
    stop: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self):
        object.__setattr__(self, "stop", tuple(self.stop or ()))
        if not (isinstance(self.temperature, (int, float)) and self.temperature >= 0):
            raise ValueError(f"SamplingConfig.temperature must be >= 0, got {self.temperature!r}")
        if not (isinstance(self.top_p, (int, float)) and 0 < self.top_p <= 1):
            raise ValueError(f"SamplingConfig.top_p must be in (0, 1], got {self.top_p!r}")
        for name in ("max_new_tokens", "n"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"SamplingConfig.{name} must be a positive integer, got {v!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"SamplingConfig.seed must be an integer, got {self.seed!r}")
        if not all(isinstance(s, str) and s for s in self.stop):
            raise ValueError(f"SamplingConfig.stop must hold non-empty strings, got {self.stop!r}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["stop"] = list(self.stop)
        return d

    def sample_key(self) -> dict:
        """What determines one sample's distribution and seed (n is not part of it: sample 3
        of an n=4 run is sample 3 of an n=8 run)."""
        d = self.to_dict()
        d.pop("n")
        return d


@dataclass
class Completion:
    text: str
    n_tokens: int  # generated tokens, the end-of-turn / stop tokens included
    finish_reason: str  # a FinishReason: "stop" (end of turn, stop string) | "length"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def prompt_fingerprint(messages: Messages) -> str:
    """A stable hash of a chat prompt (role and content of every message, in order)."""
    if not isinstance(messages, (list, tuple)) or not messages:
        raise ValueError(
            f"a prompt must be a non-empty list of chat messages, got {messages!r:.200}"
        )
    for i, m in enumerate(messages):
        if (
            not isinstance(m, dict)
            or not isinstance(m.get("role"), str)
            or not isinstance(m.get("content"), str)
        ):
            raise ValueError(
                f"prompt message {i} must be a dict with string 'role' and "
                f"'content', got {m!r:.200}"
            )
    canon = json.dumps([[m["role"], m["content"]] for m in messages], ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def sample_seed(seed: int, messages: Messages, index: int) -> int:
    """The seed of sample `index` of a prompt: a 31-bit hash of (base seed, prompt, index)."""
    h = hashlib.sha256(f"{seed}|{prompt_fingerprint(messages)}|{index}".encode()).digest()
    return int.from_bytes(h[:4], "little") & 0x7FFFFFFF


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """(text before the earliest stop string, whether one occurred)."""
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


@dataclass(frozen=True)
class SampleRequest:
    messages: Messages
    index: int
    seed: int


Callback = Callable[[int, Completion], None]


class Generator(ABC):
    """A backend. Subclasses implement `generate_samples`; `generate` is built on it."""

    backend: str = "?"
    model: str = "?"
    precision: str = "native"  # how the weights are held (hf: recode_lib.core.models.PRECISIONS)

    @abstractmethod
    def generate_samples(
        self,
        requests: Sequence[SampleRequest],
        sampling: SamplingConfig,
        callback: Callback | None = None,
        progress: bool = False,
    ) -> list[Completion]:
        """One Completion per request (same order). `callback(i, completion)` is called as soon
        as request i is done, so callers can persist results incrementally."""

    def requests_for(
        self,
        prompts: Sequence[Messages],
        sampling: SamplingConfig,
        indices: Sequence[int] | None = None,
    ) -> list[SampleRequest]:
        idx = range(sampling.n) if indices is None else indices
        return [SampleRequest(p, i, sample_seed(sampling.seed, p, i)) for p in prompts for i in idx]

    def generate(
        self, prompts: Sequence[Messages], sampling: SamplingConfig, progress: bool = False
    ) -> list[list[Completion]]:
        """sampling.n completions for each prompt: [[Completion] * n for each prompt]."""
        reqs = self.requests_for(prompts, sampling)
        flat = self.generate_samples(reqs, sampling, progress=progress)
        n = sampling.n
        return [flat[i * n : (i + 1) * n] for i in range(len(prompts))]

    def close(self) -> None:
        """Release resources (engines, pools). Optional: nothing to release by default."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"
