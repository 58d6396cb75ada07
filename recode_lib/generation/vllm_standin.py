"""A CPU stand-in for `vllm.LLM`, for the paper profile's dry run: the vllm backend's whole
request path (chat template -> token ids, one SamplingParams per sample with its own seed,
the engine's keyword arguments, chunking, RequestOutput -> Completion) runs, and transformers
generates instead of vLLM.

    gen = get_generator("vllm_standin", "/tmp/tiny", tensor_parallel_size=2)   # as "vllm"
    engine = StandinLLM(model="/tmp/tiny", tensor_parallel_size=2)    # vllm.LLM's keywords
    outs = engine.generate([{"prompt_token_ids": [...]}], [{"n": 1, "max_tokens": 8, ...}])

What it checks like vLLM would: every LLM keyword is one of LLM_KEYWORDS (a typo fails
here, not on a cluster), every SamplingParams keyword is one of SAMPLING_KEYWORDS, prompts are
TokensPrompt dicts, n == 1 (the backend sends one request per sample), and tensor_parallel_size
is a positive int. What it is not: vLLM. It imports no vllm, generates one request at a time
on CPU with transformers (seeded per request, temperature/top_p sampling, stop strings
honoured), and ignores memory/parallelism settings. Use it only with tiny models.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from recode_lib.core.errors import RecodeError

# vllm.LLM keyword arguments the project may pass (vllm 0.31 names; EngineArgs fields)
LLM_KEYWORDS = frozenset(
    {
        "model",
        "tokenizer",
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "dtype",
        "seed",
        "gpu_memory_utilization",
        "max_model_len",
        "max_num_seqs",
        "max_num_batched_tokens",
        "enable_prefix_caching",
        "enforce_eager",
        "trust_remote_code",
        "swap_space",
        "distributed_executor_backend",
        "quantization",
        "download_dir",
        "enable_chunked_prefill",
        "generation_config",
        "disable_log_stats",
        "kv_cache_dtype",
    }
)
# vllm.SamplingParams keyword arguments (vllm 0.31)
SAMPLING_KEYWORDS = frozenset(
    {
        "n",
        "best_of",
        "presence_penalty",
        "frequency_penalty",
        "repetition_penalty",
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "seed",
        "stop",
        "stop_token_ids",
        "ignore_eos",
        "max_tokens",
        "min_tokens",
        "logprobs",
        "prompt_logprobs",
        "detokenize",
        "skip_special_tokens",
        "spaces_between_special_tokens",
        "include_stop_str_in_output",
    }
)


class StandinError(RecodeError, ValueError):
    """A request vLLM would reject (unknown keyword, bad prompt)."""


@dataclass
class StandinCompletion:
    text: str
    token_ids: list
    finish_reason: str  # "stop" | "length", like vllm's CompletionOutput


@dataclass
class StandinOutput:
    prompt_token_ids: list
    outputs: list = field(default_factory=list)


class StandinLLM:
    """vllm.LLM(**kwargs).generate(prompts, sampling_params, use_tqdm=...) on CPU."""

    def __init__(self, model: str, **kwargs):
        unknown = sorted(set(kwargs) - LLM_KEYWORDS)
        if unknown:
            raise StandinError(f"vllm.LLM has no keyword(s) {unknown}")
        tp = kwargs.get("tensor_parallel_size", 1)
        if not isinstance(tp, int) or tp < 1:
            raise StandinError(f"tensor_parallel_size must be a positive int, got {tp!r}")
        from recode_lib.core.models import load_model

        self.kwargs = {"model": model, **kwargs}
        self.model, self.tokenizer = load_model(model)

    def generate(self, prompts, sampling_params, use_tqdm: bool = False) -> list[StandinOutput]:
        if isinstance(sampling_params, dict):
            sampling_params = [sampling_params] * len(prompts)
        if len(sampling_params) != len(prompts):
            raise StandinError(f"{len(prompts)} prompts but {len(sampling_params)} SamplingParams")
        return [self.one(p, sp) for p, sp in zip(prompts, sampling_params, strict=True)]

    def one(self, prompt, params: dict) -> StandinOutput:
        import torch

        if not isinstance(prompt, dict) or not isinstance(prompt.get("prompt_token_ids"), list):
            raise StandinError(
                f"expected a TokensPrompt dict {{'prompt_token_ids': [...]}}, "
                f"got {type(prompt).__name__}"
            )
        unknown = sorted(set(params) - SAMPLING_KEYWORDS)
        if unknown:
            raise StandinError(f"vllm.SamplingParams has no keyword(s) {unknown}")
        if params.get("n", 1) != 1:
            raise StandinError("the vllm backend sends one request per sample (n=1)")
        ids = torch.tensor([prompt["prompt_token_ids"]], dtype=torch.long)
        temperature = float(params.get("temperature", 1.0))
        max_tokens = int(params.get("max_tokens") or 16)
        if params.get("seed") is not None:
            torch.manual_seed(int(params["seed"]))
        eos = [
            t for t in (self.tokenizer.eos_token_id, self.tokenizer.pad_token_id) if t is not None
        ]
        kw = dict(
            max_new_tokens=max_tokens,
            eos_token_id=eos or None,
            pad_token_id=self.tokenizer.pad_token_id,
            attention_mask=torch.ones_like(ids),
        )
        if temperature > 0:
            kw.update(
                do_sample=True,
                temperature=temperature,
                top_p=float(params.get("top_p", 1.0)),
                top_k=0,
            )
        else:
            kw.update(do_sample=False)
        with torch.no_grad():
            out = self.model.generate(ids, **kw)[0, ids.shape[1] :].tolist()
        finish = "stop" if out and out[-1] in eos else "length"
        if finish == "stop":
            out = out[:-1]
        text = self.tokenizer.decode(
            out, skip_special_tokens=bool(params.get("skip_special_tokens", True))
        )
        for s in params.get("stop") or []:
            if s in text:
                text, finish = text[: text.index(s)], "stop"
        if len(out) < max_tokens and finish == "length":
            finish = "stop"
        return StandinOutput(prompt["prompt_token_ids"], [StandinCompletion(text, out, finish)])
