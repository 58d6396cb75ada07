"""Transformers backend: batched generation on CPU (or one GPU) with per-sample seeds.

    gen = HFGenerator("smollm2", batch_size=16)            # or a folder / hub id
    outs = gen.generate([messages], SamplingConfig(temperature=0.8, n=4, max_new_tokens=256))

How it batches: samples are sorted by prompt length (longest first, stable), cut into batches of
`batch_size`, left-padded, and generated with `model.generate` (KV cache). A batch stops when
its last row ends, so similar lengths waste less; rows that finish early are padded.
End of a sample: the tokenizer's eos (the end-of-turn token), the pad token if the model emits
it (e.g. <|endoftext|>), a stop string (the text is cut before it), or `max_new_tokens`
("length").

What is guaranteed about seeds: each sample draws its tokens from its own torch.Generator seeded
with sample_seed(seed, prompt, index), one draw per decoding step, in a logits processor (the
temperature / top-p sampling is done there; `generate` then runs greedily on the one-hot
result). So the random stream of a sample never depends on which samples share its batch.
Identical inputs in an identical batch give bitwise-identical outputs. Across different batch
compositions (another batch size, another resume point) the logits can differ in the last
floating-point bits because padding changes kernel shapes; a token choice flips only when such
a difference crosses a sampling boundary or an argmax tie, which is rare but not impossible.
Repeated requests: a generator that loaded its own weights (no `model_obj`) remembers what it
generated, keyed by (templated prompt, sampling without n, seed; greedy: no seed), and answers
the same request again without a forward pass (`memo=False` turns it off; a generator over a
caller's model has it off unless `memo=True`). The memo is dropped whenever a weight changes
in place (an optimizer step, load_state_dict, a live theta_alpha push: the parameters' version
counters move), and holds at most `memo_size` completions (oldest dropped first). So scoring the
same pairs again (a benchmark and its subsets) and greedy n > 1 cost one generation each.
`generated_tokens` and `forward_batches` count the work actually done (memo hits excluded).
Precision: `precision="bfloat16"|"float32"|"int8"` holds the weights it loads that way
(recode_lib.models.inference_precision: int8 = dynamic quantization of every Linear, CPU only),
a faster decode on a CPU with other numerics; a generator over a caller's model (`model_obj`,
e.g. a policy being trained) refuses anything but "native"; "auto" becomes bfloat16 where the
machine computes bf16 natively, else native (recode_lib.bf16.resolve_precision). The precision is part of a generation
cache's key (CachedGenerator) and of an evaluation's protocol (EvalSpec.precision).
It does not do beam search, speculative decoding or multi-GPU sharding (use the vllm backend).
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Sequence

from recode_lib.bf16 import resolve_precision
from recode_lib.generation.base import (
    Callback,
    Completion,
    Generator,
    SampleRequest,
    SamplingConfig,
    cut_at_stop,
    prompt_fingerprint,
)
from recode_lib.memory import release_memory
from recode_lib.models import PRECISIONS, inference_precision


class _PerSampleSampler:
    """A logits processor that samples each row with its own generator and returns a one-hot
    mask (0 at the drawn token, -inf elsewhere) for greedy decoding to pick."""

    def __init__(self, seeds: Sequence[int], temperature: float, top_p: float, device):
        import torch

        self.temperature, self.top_p = float(temperature), float(top_p)
        self.gens = []
        for s in seeds:
            g = torch.Generator(device=device)
            g.manual_seed(int(s))
            self.gens.append(g)

    def __call__(self, input_ids, scores):
        import torch

        logits = scores.float() / self.temperature
        if self.top_p < 1.0:
            sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
            probs = torch.softmax(sorted_logits, dim=-1)
            mass_before = torch.cumsum(probs, dim=-1) - probs
            drop_sorted = mass_before >= self.top_p  # the top token is always kept
            drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
            logits = logits.masked_fill(drop, float("-inf"))
        probs = torch.softmax(logits, dim=-1)
        out = torch.full_like(scores, float("-inf"))
        for row, gen in enumerate(self.gens):
            tok = torch.multinomial(probs[row], 1, generator=gen)
            out[row, tok] = 0.0
        return out


class HFGenerator(Generator):
    """Batched transformers generation. `model_obj`/`tokenizer` reuse an already loaded pair
    (e.g. a policy being trained); otherwise recode_lib.models.load_model(model) loads it.
    `tools` (callables) are rendered by the chat template, the prompt then rendered per
    conversation (the memo keys on role and content, and two conversations may differ in their
    tool calls alone); `prepare_tokenizer(tok) -> tok` runs once on the tokenizer (e.g. a tool
    template: recode_lib.environments.chat.prepare_tool_tokenizer)."""

    backend = "hf"

    def __init__(
        self,
        model: str,
        *,
        batch_size: int = 16,
        device: str = "cpu",
        dtype=None,
        precision: str = "native",
        model_obj=None,
        tokenizer=None,
        tools=None,
        prepare_tokenizer=None,
        memo: bool | None = None,
        memo_size: int = 4096,
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        precision = resolve_precision(precision, use_cpu=device == "cpu")  # auto: by the machine
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS} or 'auto', got {precision!r}")
        if model_obj is not None and precision != "native":
            raise ValueError(
                f"precision {precision!r} converts weights this generator loads; "
                "over a caller's model (model_obj) it must be 'native'"
            )
        self.precision = precision
        if memo is None:
            memo = model_obj is None
        self.memo_size = int(memo_size) if memo else 0
        self.model = str(model)
        self.batch_size = int(batch_size)
        self.device = device
        if model_obj is None or tokenizer is None:
            from recode_lib.models import load_model

            model_obj, tokenizer = load_model(model, dtype=dtype, device=device)
            model_obj = inference_precision(model_obj, precision, device=device)
        tokenizer.padding_side = "left"
        self.lm, self.tok = model_obj, tokenizer
        if prepare_tokenizer is not None:
            self.tok = prepare_tokenizer(self.tok)
        self.tools = None if tools is None else list(tools)
        self._rendered: dict[str, tuple[str, int]] = {}
        self._memo: OrderedDict[tuple, Completion] = OrderedDict()
        self._memo_version: int | None = None
        self.generated_tokens = 0  # tokens generated by forward passes (memo hits excluded)
        self.forward_batches = 0  # model.generate calls

    # -- prompts ---------------------------------------------------------------------------
    def render(self, messages) -> tuple[str, int]:
        """(chat-templated prompt text, its length in tokens), memoised per prompt (not with
        tools)."""
        if self.tools is not None:
            text = self.tok.apply_chat_template(
                messages, tools=self.tools, tokenize=False, add_generation_prompt=True
            )
            return text, len(self.tok(text, add_special_tokens=False)["input_ids"])
        key = prompt_fingerprint(messages)
        if key not in self._rendered:
            text = self.tok.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            n = len(self.tok(text, add_special_tokens=False)["input_ids"])
            self._rendered[key] = (text, n)
        return self._rendered[key]

    def _end_ids(self) -> list[int]:
        ids = [self.tok.eos_token_id]
        gc_eos = getattr(self.lm.generation_config, "eos_token_id", None)
        ids += gc_eos if isinstance(gc_eos, list) else [gc_eos]
        ids.append(self.tok.pad_token_id)
        return sorted({i for i in ids if i is not None})

    # -- generation ------------------------------------------------------------------------
    def generate_samples(
        self,
        requests: Sequence[SampleRequest],
        sampling: SamplingConfig,
        callback: Callback | None = None,
        progress: bool = False,
    ) -> list[Completion]:
        from tqdm.auto import tqdm

        rendered = [self.render(r.messages) for r in requests]
        results: list[Completion | None] = [None] * len(requests)
        memo = self._current_memo()
        sample_key = json.dumps(sampling.sample_key(), sort_keys=True)
        keys = [
            (rendered[i][0], sample_key, None if sampling.greedy else int(r.seed))
            for i, r in enumerate(requests)
        ]
        waiting: dict[tuple, list[int]] = {}  # the same request twice: generated once
        for i, key in enumerate(keys):
            if memo is not None and key in memo:
                results[i] = dataclasses.replace(memo[key])
                if callback is not None:
                    callback(i, results[i])
            else:
                waiting.setdefault(key, []).append(i)
        todo = [group[0] for group in waiting.values()]
        order = sorted(todo, key=lambda i: -rendered[i][1])
        bar = tqdm(
            total=len(requests),
            initial=len(requests) - sum(map(len, waiting.values())),
            desc=f"generate ({self.backend})",
            unit="sample",
            disable=not progress,
        )
        try:
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                outs = self._generate_batch(
                    [rendered[i][0] for i in idx], [requests[i].seed for i in idx], sampling
                )
                for i, comp in zip(idx, outs, strict=True):
                    self.generated_tokens += comp.n_tokens
                    if memo is not None:
                        memo[keys[i]] = dataclasses.replace(comp)
                        while len(memo) > self.memo_size:
                            memo.popitem(last=False)
                    for j in waiting[keys[i]]:
                        results[j] = comp if j == i else dataclasses.replace(comp)
                        if callback is not None:
                            callback(j, results[j])
                    bar.update(len(waiting[keys[i]]))
        finally:
            bar.close()
        return results  # type: ignore[return-value]

    def weights_version(self) -> int | None:
        """A number that changes whenever a weight is written in place (the sum of the
        parameters' autograd version counters); None when they are not tracked (inference-mode
        tensors), and the memo is then off."""
        try:
            return sum(p._version for p in self.lm.parameters())
        except RuntimeError:
            return None

    def _current_memo(self) -> OrderedDict | None:
        """The memo, emptied when the weights changed since it was filled; None when off."""
        if not self.memo_size:
            return None
        version = self.weights_version()
        if version is None:
            self._memo.clear()
            return None
        if version != self._memo_version:
            self._memo.clear()
            self._memo_version = version
        return self._memo

    def _generate_batch(
        self, texts: list[str], seeds: list[int], sampling: SamplingConfig
    ) -> list[Completion]:
        import torch
        from transformers import GenerationConfig, LogitsProcessorList

        enc = self.tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        enc = {k: v.to(self.lm.device) for k, v in enc.items()}
        end_ids = self._end_ids()
        gcfg = GenerationConfig(
            max_new_tokens=sampling.max_new_tokens,
            do_sample=False,
            num_beams=1,
            repetition_penalty=1.0,
            pad_token_id=self.tok.pad_token_id,
            eos_token_id=end_ids,
            stop_strings=list(sampling.stop) or None,
        )
        procs = LogitsProcessorList()
        if not sampling.greedy:
            procs.append(
                _PerSampleSampler(seeds, sampling.temperature, sampling.top_p, self.lm.device)
            )
        kwargs = {"tokenizer": self.tok} if sampling.stop else {}
        with torch.no_grad():
            out = self.lm.generate(**enc, generation_config=gcfg, logits_processor=procs, **kwargs)
        self.forward_batches += 1
        gen = out[:, enc["input_ids"].shape[1] :].tolist()
        return [self._finish(row, sampling) for row in gen]

    def _finish(self, ids: list[int], sampling: SamplingConfig) -> Completion:
        end_ids = set(self._end_ids())
        pad = self.tok.pad_token_id
        pos = next((j for j, t in enumerate(ids) if t in end_ids), None)
        if pos is None:
            body = ids
            n_tokens = len(ids)
            ended = False
        else:
            body = ids[:pos]
            # a pad after a stop string is filler written by generate, not a generated token
            filler = (
                ids[pos] == pad
                and bool(sampling.stop)
                and cut_at_stop(self._decode(body), sampling.stop)[1]
            )
            n_tokens = pos if filler else pos + 1
            ended = True
        text, stopped = cut_at_stop(self._decode(body), sampling.stop)
        reason = "stop" if (ended or stopped) else "length"
        return Completion(text=text, n_tokens=n_tokens, finish_reason=reason)

    def _decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)

    def close(self) -> None:
        self.lm = None
        self._rendered.clear()
        self._memo.clear()
        release_memory()  # the weights' heap pages back to the OS (recode_lib.memory)
