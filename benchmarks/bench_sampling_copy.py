"""Benchmark: GRPO's CPU sampling with the live LoRA policy (TRL's transformers path) vs a
sampling copy (recode_lib.training.sampling_copy, recipe field generation_precision), and how far
the copy's distribution is from the policy's.

    python benchmarks/bench_sampling_copy.py [--model smollm2] [--batch 16] [--tokens 96]

One generation batch as a laptop GRPO step draws it (recipes cg_grpo_laptop / strictness_laptop:
16 completions, at most 96 tokens, T=1.0, LoRA r=16 on every linear layer, the adapter trained a
little: random B so the merge matters). Prints the seconds per batch for
- policy: the peft model's generate() (what TRL runs without vLLM),
- copy rebuild: deep copy + merge + quantize (once per optimizer step),
- copy sampling, float32 merged / bfloat16 / int8,
and the ratio of policy to (rebuild + sampling) for each. Then the gap, on completions the int8
and bf16 copies sampled: the mean per-token log-probability under the copy minus under the
policy (an estimate of KL(copy || policy) per token) and the mean absolute difference. Every
generate() runs min_new_tokens = max_new_tokens, so each configuration decodes the same number of
steps. It measures only.
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=96)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM, GenerationConfig

    from recode_lib.core.models import load_tokenizer, resolve_model
    from recode_lib.core.prompts import build_messages
    from recode_lib.training.lora import lora_config, merged_model
    from recode_lib.training.sampling_copy import sample_completions, sampling_copy

    torch.manual_seed(a.seed)
    path = resolve_model(a.model)
    tok = load_tokenizer(path)
    policy = get_peft_model(
        AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32),
        lora_config({"r": 16, "alpha": 32}),
    )
    with torch.no_grad():
        for n, p in policy.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 1e-3)
    prompts = []
    for i in range(a.batch // 8 or 1):
        msgs = build_messages(
            f"Write a Python function f(n) that returns the sum of the first "
            f"n odd numbers plus {i}.",
            reasoning=False,
        )
        ids = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True)
        ids = ids["input_ids"] if hasattr(ids, "keys") else ids
        prompts += [list(ids)] * (a.batch // max(a.batch // 8, 1))
    prompts = prompts[: a.batch] + [prompts[0]] * (a.batch - len(prompts))
    eos = [tok.eos_token_id]
    gc = GenerationConfig(
        max_new_tokens=a.tokens,
        min_new_tokens=a.tokens,
        do_sample=True,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        pad_token_id=tok.pad_token_id,
        eos_token_id=eos,
        disable_compile=True,
    )

    def sample(model):
        t0 = time.perf_counter()
        out = sample_completions(
            model, prompts, pad_token_id=tok.pad_token_id, eos_token_ids=eos, generation_config=gc
        )
        return time.perf_counter() - t0, out

    policy.eval()
    sample(policy)  # warm-up (first-call allocations)
    t_policy, _ = sample(policy)
    print(f"{a.batch} completions x {a.tokens} tokens, {torch.get_num_threads()} threads")
    print(f"{'configuration':34s} {'rebuild s':>9s} {'sample s':>9s} {'policy / copy':>13s}")
    print(f"{'policy (peft, float32)':34s} {'-':>9s} {t_policy:9.1f} {1.0:13.2f}")
    samples = {}
    for precision in ("float32 merged", "bfloat16", "int8"):
        t0 = time.perf_counter()
        if precision == "float32 merged":
            copy = merged_model(policy).eval()  # what "native" would cost merged
        else:
            copy = sampling_copy(policy, precision)
        t_build = time.perf_counter() - t0
        t_sample, out = sample(copy)
        samples[precision] = (copy, out)
        print(
            f"{'copy, ' + precision:34s} {t_build:9.2f} {t_sample:9.1f} "
            f"{t_policy / (t_build + t_sample):13.2f}"
        )

    def logps(model, ids, n_prompt):
        x = torch.tensor([ids])
        with torch.no_grad():
            lp = torch.log_softmax(model(x).logits.float()[0, :-1], -1)
        tgt = x[0, 1:]
        return lp.gather(-1, tgt[:, None])[:, 0][n_prompt - 1 :]

    print(
        f"\n{'gap on the copy’s samples':34s} {'E[lq - lp]':>10s} {'E|lq - lp|':>10s} "
        f"{'tokens':>7s}"
    )
    for precision in ("bfloat16", "int8"):
        copy, outs = samples[precision]
        diffs = []
        for p, c in zip(prompts, outs, strict=True):
            lq = logps(copy, p + c, len(p))
            lp = logps(policy, p + c, len(p))
            diffs.append(lq - lp)
        d = torch.cat(diffs)
        print(
            f"{precision:34s} {d.mean().item():10.4f} {d.abs().mean().item():10.4f} {d.numel():7d}"
        )


if __name__ == "__main__":
    main()
