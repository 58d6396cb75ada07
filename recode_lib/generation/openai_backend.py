"""OpenAI-compatible HTTP backend: POST {base_url}/chat/completions (a `vllm serve` server, or
any API speaking that protocol), one request per sample, with a thread pool, retries, timeouts.

    gen = OpenAIGenerator("Qwen/Qwen2.5-Coder-7B-Instruct", base_url="http://localhost:8000/v1",
                          concurrency=32)
    outs = gen.generate(prompts, SamplingConfig(temperature=0.8, n=8, max_new_tokens=1024))

Each sample is a request with n=1 and `seed` = sample_seed(seed, prompt, index); whether that
makes samples reproducible is up to the server (vLLM honours per-request seeds; hosted APIs
treat it as best effort). Retried: connection errors, timeouts, HTTP 408/409/429/5xx and
unreadable bodies, with exponential backoff (base `backoff_s`, doubling, capped at
`max_backoff_s`, a server's Retry-After wins). Not retried: other 4xx (a bad request or key)
— raised at once with the server's message. A sample that still fails after `max_retries`
raises GenerationError; samples finished before are already passed to the callback (and so are
kept by the cache). A server with a reasoning parser (vLLM --reasoning-parser) returns the
think block apart ("reasoning_content" / "reasoning"): the text is rebuilt with it in front
(recode_lib.core.prompts.message_text), as the model generated it. The API key is read from
`api_key=` or $OPENAI_API_KEY (optional; a local vLLM server needs none). Stdlib only (urllib); no
streaming, no tool calls.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed

from recode_lib.core.prompts import message_text
from recode_lib.generation.base import (
    Callback,
    Completion,
    GenerationError,
    Generator,
    SampleRequest,
    SamplingConfig,
)

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class _Retryable(Exception):
    def __init__(self, msg: str, retry_after: float | None = None):
        super().__init__(msg)
        self.retry_after = retry_after


def chat_payload(model: str, request: SampleRequest, sampling: SamplingConfig) -> dict:
    body = {
        "model": model,
        "messages": request.messages,
        "n": 1,
        "temperature": float(sampling.temperature),
        "top_p": float(sampling.top_p),
        "max_tokens": int(sampling.max_new_tokens),
        "seed": int(request.seed),
    }
    if sampling.stop:
        body["stop"] = list(sampling.stop)
    return body


def parse_chat_response(data: dict, where: str) -> Completion:
    try:
        choice = data["choices"][0]
        text = message_text(choice["message"])  # a reasoning parser's split undone
        finish = choice.get("finish_reason")
        n_tokens = int(data["usage"]["completion_tokens"])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise GenerationError(
            f"{where}: response lacks choices[0].message.content / "
            f"finish_reason / usage.completion_tokens ({exc!r}): "
            f"{json.dumps(data)[:300]}"
        ) from None
    return Completion(
        text=text, n_tokens=n_tokens, finish_reason="length" if finish == "length" else "stop"
    )


class OpenAIGenerator(Generator):
    backend = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "http://localhost:8000/v1",
        api_key: str | None = None,
        concurrency: int = 8,
        timeout_s: float = 300.0,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
    ):
        self.model = str(model)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.concurrency, self.timeout_s = max(1, int(concurrency)), float(timeout_s)
        self.max_retries, self.backoff_s = int(max_retries), float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)

    def _post_once(self, body: bytes, where: str) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:500].decode("utf-8", "replace")
            if exc.code in RETRY_STATUS:
                ra = exc.headers.get("Retry-After") if exc.headers else None
                raise _Retryable(
                    f"HTTP {exc.code}: {detail}",
                    float(ra) if ra and ra.replace(".", "", 1).isdigit() else None,
                ) from exc
            raise GenerationError(f"{where}: HTTP {exc.code} from {self.url}: {detail}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            raise _Retryable(f"{type(exc).__name__}: {exc}") from None
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise _Retryable(f"unreadable body: {raw[:200]!r}") from None
        if not isinstance(data, dict):
            raise _Retryable(f"body is not a JSON object: {raw[:200]!r}")
        return data

    def complete(
        self, request: SampleRequest, sampling: SamplingConfig, where: str = ""
    ) -> Completion:
        where = where or f"sample {request.index}"
        body = json.dumps(chat_payload(self.model, request, sampling)).encode("utf-8")
        last = ""
        for attempt in range(self.max_retries + 1):
            try:
                return parse_chat_response(self._post_once(body, where), where)
            except _Retryable as exc:
                last = str(exc)
                if attempt == self.max_retries:
                    break
                delay = (
                    exc.retry_after
                    if exc.retry_after is not None
                    else min(self.max_backoff_s, self.backoff_s * 2**attempt)
                )
                time.sleep(delay)
        raise GenerationError(
            f"{where}: {self.url} failed after {self.max_retries + 1} attempts; last error: {last}"
        )

    def generate_samples(
        self,
        requests: Sequence[SampleRequest],
        sampling: SamplingConfig,
        callback: Callback | None = None,
        progress: bool = False,
    ) -> list[Completion]:
        from tqdm.auto import tqdm

        results: list[Completion | None] = [None] * len(requests)
        with (
            ThreadPoolExecutor(max_workers=self.concurrency) as pool,
            tqdm(
                total=len(requests), desc="generate (openai)", unit="sample", disable=not progress
            ) as bar,
        ):
            futures = {
                pool.submit(self.complete, r, sampling, f"request {i} (sample {r.index})"): i
                for i, r in enumerate(requests)
            }
            try:
                for fut in as_completed(futures):
                    i = futures[fut]
                    results[i] = fut.result()
                    if callback is not None:
                        callback(i, results[i])
                    bar.update(1)
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
        return results  # type: ignore[return-value]
