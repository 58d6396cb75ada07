"""A resumable generation cache: one jsonl record per (model, prompt, sampling, sample index).

    gen = CachedGenerator(HFGenerator("smollm2"), "runs/smoke/05/generations.jsonl")
    outs = gen.generate(prompts, sampling)      # generates only what the file does not hold

Each finished sample is appended (fsynced) the moment its batch returns, through
recode_lib.core.jsonl.JsonlStore, so an interrupted run loses at most the batch in flight and a
re-run regenerates only missing samples. The key is sha256 of (model, prompt fingerprint,
sampling without n, index): raising n reuses samples 0..n-1 and adds the rest. `model` is the
name the caller gave (e.g. "smollm2" or a checkpoint folder); the backend is recorded but not
part of the key, so samples from hf and vllm for the same model are interchangeable; a precision
other than "native" (hf: bfloat16 or int8 weights) is part of it: the key's model is then
`<model>@<precision>`. It does not notice when the weights behind a name change: use a new file
(or another model_key) then.
One writer per file (no cross-process locking).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence

from recode_lib.core.jsonl import JsonlError, JsonlStore
from recode_lib.generation.base import (
    Callback,
    Completion,
    Generator,
    SampleRequest,
    SamplingConfig,
    prompt_fingerprint,
)


def cache_key(model: str, messages, sampling: SamplingConfig, index: int) -> str:
    blob = json.dumps(
        [str(model), prompt_fingerprint(messages), sampling.sample_key(), index], sort_keys=True
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CachedGenerator(Generator):
    """Wraps a Generator; `model_key` defaults to the wrapped generator's model name."""

    def __init__(self, inner: Generator, path: str | os.PathLike, model_key: str | None = None):
        self.inner = inner
        self.backend = inner.backend
        self.precision = getattr(inner, "precision", "native")
        self.model = model_key or inner.model
        # other numerics, other samples: never mixed with native ones in a file
        self.key_model = (
            self.model if self.precision == "native" else f"{self.model}@{self.precision}"
        )
        self.store = JsonlStore(path)

    def _lookup(self, key: str) -> Completion | None:
        rec = self._by_id.get(key)
        if rec is None:
            return None
        try:
            comp = Completion(
                text=rec["text"], n_tokens=int(rec["n_tokens"]), finish_reason=rec["finish_reason"]
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise JsonlError(
                f"{self.store.path}: cached record {key!r} is malformed (field {exc})"
            ) from None
        if not isinstance(comp.text, str):
            raise JsonlError(
                f"{self.store.path}: cached record {key!r}: field 'text' is not a string"
            )
        return comp

    def missing(self, requests: Sequence[SampleRequest], sampling: SamplingConfig) -> list[int]:
        """Indices of the requests the file does not hold yet (what generate_samples would
        generate)."""
        have = self.store.ids()
        return [
            i
            for i, r in enumerate(requests)
            if cache_key(self.key_model, r.messages, sampling, r.index) not in have
        ]

    def generate_samples(
        self,
        requests: Sequence[SampleRequest],
        sampling: SamplingConfig,
        callback: Callback | None = None,
        progress: bool = False,
    ) -> list[Completion]:
        self._by_id = {r["id"]: r for r in self.store.records()}
        keys = [cache_key(self.key_model, r.messages, sampling, r.index) for r in requests]
        results: list[Completion | None] = [self._lookup(k) for k in keys]
        for i, comp in enumerate(results):
            if comp is not None and callback is not None:
                callback(i, comp)
        todo = [i for i, c in enumerate(results) if c is None]
        # the same (prompt, index) twice in one call is generated once
        waiting: dict[str, list[int]] = {}
        for i in todo:
            waiting.setdefault(keys[i], []).append(i)
        unique = [group[0] for group in waiting.values()]

        def on_done(j: int, comp: Completion) -> None:
            i = unique[j]
            req = requests[i]
            self.store.append(
                {
                    "id": keys[i],
                    "model": self.key_model,
                    "backend": self.inner.backend,
                    "prompt": prompt_fingerprint(req.messages),
                    "index": req.index,
                    "sampling": sampling.sample_key(),
                    **comp.to_dict(),
                }
            )
            for t in waiting[keys[i]]:
                results[t] = comp
                if callback is not None:
                    callback(t, comp)

        if unique:
            self.inner.generate_samples(
                [requests[i] for i in unique], sampling, callback=on_done, progress=progress
            )
        missing = [i for i, c in enumerate(results) if c is None]
        if missing:
            raise RuntimeError(
                f"{self.inner!r} returned without finishing {len(missing)} "
                "samples (its callback was not called for them)"
            )
        return results  # type: ignore[return-value]

    def close(self) -> None:
        self.inner.close()
