"""Generation backends behind one interface, and a resumable cache.

    from recode_lib.generation import SamplingConfig, get_generator
    gen = get_generator("hf", "smollm2", batch_size=16)        # or "vllm", "openai"
    outs = gen.generate(list_of_chat_messages, SamplingConfig(temperature=0.8, n=4))
    gen = get_generator("hf", "smollm2", cache="runs/x/generations.jsonl")   # cached, resumable

Backends (a Backend name): "hf" (transformers, CPU or one GPU, batched; hf.py), "vllm" (offline
engine, GPUs or vLLM's CPU build, vllm imported lazily; vllm_backend.py), "openai"
(OpenAI-compatible HTTP chat completions, e.g. `vllm serve`; openai_backend.py), "vllm_standin" (the
vllm backend's request path with a transformers stand-in engine, CPU, tiny models: the paper
profile's dry run; vllm_standin.py). Each module's docstring states what it guarantees about seeds.

get_generator is the one place a backend is built: every stage, the tool and agentic
settings' generators (recode_lib.environments.rollout.tool_generator), the live interpolated
model (recode_lib.weights.sweep) and the evaluation (recode_lib.evaluation.episodes) call it.
Its options: `tools` (callables whose signatures the chat template renders, hf and vllm; the
prompt is then rendered per conversation, not memoised) with `prepare_tokenizer` (a hook
`tok -> tok` run once on the tokenizer, e.g. recode_lib.environments.chat.prepare_tool_tokenizer,
which gives it a tool template); `model_obj`/`tokenizer` (an already loaded pair: hf; a
tokenizer only: vllm); `data_parallel_size` (vllm, vllm_standin: that many engines side by side,
each on its own devices: data_parallel.DataParallelGenerator; 0 = as many as the GPUs hold,
resolve_data_parallel_size; 1 = one VLLMGenerator) with `ray_address` (engines as Ray actors);
`cache` (a jsonl path: wrap in CachedGenerator, keyed by
`cache_model_key` or the model name); every other keyword goes to the backend's constructor.
backend_options(backend, ...) is what an evaluation spec sets for each backend. It holds no
model code.
"""

from __future__ import annotations

from recode_lib.core.lazy import lazy_exports
from recode_lib.generation.base import (
    Backend,
    Completion,
    FinishReason,
    GenerationError,
    Generator,
    SampleRequest,
    SamplingConfig,
    sample_seed,
)
from recode_lib.generation.cache import CachedGenerator
from recode_lib.generation.data_parallel import DataParallelGenerator, resolve_data_parallel_size
from recode_lib.generation.hf import HFGenerator
from recode_lib.generation.openai_backend import OpenAIGenerator
from recode_lib.generation.vllm_backend import VLLMGenerator

BACKENDS = tuple(b.value for b in Backend)  # plain strings: error messages show them

__all__ = [
    "BACKENDS",
    "Backend",
    "CachedGenerator",
    "Completion",
    "DataParallelGenerator",
    "FinishReason",
    "GenerationError",
    "Generator",
    "SampleRequest",
    "SamplingConfig",
    "backend_options",
    "check_backend",
    "get_generator",
    "sample_seed",
]


def check_backend(backend) -> Backend:
    """`backend` as a Backend; ValueError naming the choices for anything else."""
    try:
        return Backend(backend)
    except ValueError:
        raise ValueError(
            f"unknown generation backend {backend!r}; choose one of {BACKENDS}"
        ) from None


def get_generator(
    backend: str,
    model: str,
    *,
    tools=None,
    prepare_tokenizer=None,
    model_obj=None,
    tokenizer=None,
    cache=None,
    cache_model_key: str | None = None,
    **backend_options,
) -> Generator:
    """The generator of `backend` for `model` (see the module docstring for the options)."""
    backend = check_backend(backend)
    if backend == Backend.OPENAI:
        if tools is not None:
            raise ValueError(
                "the openai backend does not render tools: a generator with tools "
                "runs on the hf or vllm backend"
            )
        given = [
            n
            for n, v in (
                ("prepare_tokenizer", prepare_tokenizer),
                ("model_obj", model_obj),
                ("tokenizer", tokenizer),
            )
            if v is not None
        ]
        if given:
            raise ValueError(f"the openai backend takes no {given} (the server holds the model)")
        gen = OpenAIGenerator(model, **backend_options)
    elif backend == Backend.HF:
        gen = HFGenerator(
            model,
            model_obj=model_obj,
            tokenizer=tokenizer,
            tools=tools,
            prepare_tokenizer=prepare_tokenizer,
            **backend_options,
        )
    else:
        if model_obj is not None:
            raise ValueError(f"the {backend} backend loads its own engine: model_obj is for hf")
        if backend == Backend.VLLM_STANDIN:
            backend_options["engine"] = "standin"
        dp = resolve_data_parallel_size(
            backend_options.pop("data_parallel_size", 1),
            backend_options.get("tensor_parallel_size", 1),
            backend_options.get("engine", "vllm"),
            backend_options.get("ray_address"),
        )
        if dp > 1:
            gen = DataParallelGenerator(
                model,
                data_parallel_size=dp,
                tokenizer=tokenizer,
                tools=tools,
                prepare_tokenizer=prepare_tokenizer,
                **backend_options,
            )
        else:  # one engine in this process: no cluster, no engine processes
            backend_options.pop("ray_address", None)
            backend_options.pop("engine_env", None)
            gen = VLLMGenerator(
                model,
                tokenizer=tokenizer,
                tools=tools,
                prepare_tokenizer=prepare_tokenizer,
                **backend_options,
            )
    return CachedGenerator(gen, cache, model_key=cache_model_key) if cache is not None else gen


def backend_options(
    backend: str,
    *,
    batch_size: int,
    tensor_parallel_size: int,
    base_url: str,
    concurrency: int,
    precision: str = "native",
    data_parallel_size: int = 1,
) -> dict:
    """The constructor options an evaluation spec sets for `backend` (hf: batch_size, precision;
    vllm and vllm_standin: tensor_parallel_size, data_parallel_size (0: automatic, see
    resolve_data_parallel_size); openai: base_url, concurrency). A precision other than
    "native" is an hf option: ValueError on another backend."""
    backend = check_backend(backend)
    if backend == Backend.HF:
        return {"batch_size": batch_size, "precision": precision}
    if precision != "native":
        raise ValueError(f"precision {precision!r} is an option of the hf backend, not {backend}")
    if backend in (Backend.VLLM, Backend.VLLM_STANDIN):
        out = {"tensor_parallel_size": tensor_parallel_size}
        if data_parallel_size != 1:
            out["data_parallel_size"] = data_parallel_size
        return out
    return {"base_url": base_url, "concurrency": concurrency}


# what notebooks use besides the names above, imported on first access (recode_lib.core.lazy)
LAZY_EXPORTS = {
    "make_generator": "chat",
}
__all__ += sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
