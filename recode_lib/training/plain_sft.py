"""A few steps of plain supervised fine-tuning: the training loop behind notebook 07's stand-in
endpoints.

    from recode_lib.training.plain_sft import finetune_one
    out = finetune_one("smollm2", texts, RUN / "07_weight_averaging/finetune/endpoints/low",
                       steps=4, lr=1e-5, seed=0, max_length=384, batch_size=2)

`finetune_one` trains a causal LM on whole chat-formatted texts (loss on every non-padding
token) with AdamW for `steps` steps, cycling through the texts `batch_size` at a time, prompts
truncated from the left so the answer survives, and saves the model and tokenizer to `out`
atomically (a temp folder, then a rename); a finished `out` (its config.json) is reused, not
retrained. Weights and compute are float32 (recode_lib.core.models.training_dtype): no profile runs
it in bf16. It is not GRPO (recode_lib.training.grpo), nor the shared SFT start checkpoint
(recode_lib.training.sft_start: LoRA through TRL's SFTTrainer), nor a recipe: no schedule, no
gradient accumulation, no evaluation, CPU or one device.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from recode_lib.core import models  # looked up per call: tests replace its loader
from recode_lib.core.models import training_dtype


def finetune_one(
    model: str,
    texts: list[str],
    out: Path,
    *,
    steps: int,
    lr: float,
    seed: int,
    max_length: int,
    batch_size: int,
) -> Path:
    """`model` fine-tuned on `texts` for `steps` AdamW steps, saved to `out` (module docstring);
    `out` when it already holds a model. ValueError when there is nothing to train on."""
    import torch
    from tqdm.auto import tqdm

    out = Path(out)
    if (out / "config.json").is_file():
        return out
    if not texts:
        raise ValueError(f"{out}: no texts to fine-tune on")
    torch.manual_seed(seed)
    net, tok = models.load_model(model, dtype=training_dtype(False))  # fp32 weights, fp32 compute
    net.train()
    tok.truncation_side = "left"  # keep the answer when a long prompt is cut
    opt = torch.optim.AdamW(net.parameters(), lr=lr)
    for step in tqdm(range(steps), desc=f"fine-tune {out.name}"):
        batch = [texts[(step * batch_size + i) % len(texts)] for i in range(batch_size)]
        enc = tok(batch, return_tensors="pt", padding=True, truncation=True, max_length=max_length)
        labels = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)
        loss = net(**enc, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    net.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    tmp.rename(out)
    return out
