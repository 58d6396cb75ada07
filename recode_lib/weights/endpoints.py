"""Endpoints for the weight-averaging axis: the strictness sweep's runs, or stand-ins.

    low, high = sweep_endpoints(RUN / "06_strictness_sweep")    # lowest-k run, R_inf run (final/)
    low, high = finetune_endpoints("smollm2", problems, RUN / "07_weight_averaging" / "endpoints",
                                   steps=4)                        # STAND-INS, see below

sweep_endpoints: the sweep's runs with a complete `final/` checkpoint (a `.complete` marker,
recode_lib.training.grpo); their k from the sweep's metrics.json ("runs": {name: {"k": "1"|"inf"}},
notebook 06) or else from the folder name (`k1`, `kinf`, `r_k2`, `r_inf`); the lenient endpoint
is the lowest finite k, the strict one `inf` (or the highest k when no inf run exists).
Raises naming what is missing.

finetune_endpoints: when the sweep has not run yet, two SHORT supervised fine-tunes of the same
base model on the reference solutions of two disjoint halves of the problems (a few AdamW steps
on CPU). They are NOT strictness endpoints; they only give two nearby checkpoints with a shared
origin so the merge/evaluate/frontier pipeline can run end to end. Each is written atomically
(temp folder + rename) and reused when present.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

_K = re.compile(r"(?:^|[_\-])(?:r_?)?k_?(\d+)(?:$|[_\-])|(?:^|[_\-])(?:r_?)?k?_?(inf)(?:$|[_\-])",
                re.IGNORECASE)


class EndpointError(ValueError):
    """No usable endpoints; the message says what was looked for."""


def run_strictness(name: str) -> float | None:
    """k of a sweep run from its folder name (inf -> float('inf')), or None."""
    m = _K.search(name)
    if not m:
        return None
    return float("inf") if m.group(2) else float(m.group(1))


def sweep_endpoints(sweep_dir: str | Path) -> tuple[Path, Path]:
    sweep_dir = Path(sweep_dir)
    runs, declared = {}, {}
    meta = sweep_dir / "metrics.json"
    if meta.is_file():
        listed = json.loads(meta.read_text()).get("runs", {})
        declared = {n: float(r["k"]) for n, r in listed.items() if isinstance(r, dict) and "k" in r}
    if sweep_dir.is_dir():
        for d in sorted(sweep_dir.iterdir()):
            k = declared.get(d.name, run_strictness(d.name))
            if k is not None and (d / "final" / ".complete").is_file():
                runs[d.name] = k
    if len(runs) < 2:
        raise EndpointError(f"{sweep_dir}: need two finished runs (<run>/final/.complete with k "
                            f"or inf in the run name), found {sorted(runs) or 'none'}")
    low = min(runs, key=runs.get)
    high = max(runs, key=runs.get)
    if runs[low] == runs[high]:
        raise EndpointError(f"{sweep_dir}: every finished run has the same strictness {runs}")
    return sweep_dir / low / "final", sweep_dir / high / "final"


def _sft_texts(tok, problems) -> list[str]:
    from recode_lib.prompts import build_messages, format_response
    texts = []
    for p in problems:
        if p.reference_solution:
            msgs = build_messages(p) + [{"role": "assistant", "content": format_response(
                "Write a direct solution.", p.reference_solution)}]
            texts.append(tok.apply_chat_template(msgs, tokenize=False))
    return texts


def finetune_one(model: str, texts: list[str], out: Path, *, steps: int, lr: float, seed: int,
                 max_length: int, batch_size: int) -> Path:
    import torch
    from tqdm.auto import tqdm

    from recode_lib.models import load_model
    if (out / "config.json").is_file():
        return out
    if not texts:
        raise EndpointError("no problems with a reference_solution to fine-tune on")
    torch.manual_seed(seed)
    net, tok = load_model(model, dtype=torch.float32)
    net.train()
    tok.truncation_side = "left"       # keep the answer when a long prompt is cut
    opt = torch.optim.AdamW(net.parameters(), lr=lr)
    for step in tqdm(range(steps), desc=f"fine-tune {out.name}"):
        batch = [texts[(step * batch_size + i) % len(texts)] for i in range(batch_size)]
        enc = tok(batch, return_tensors="pt", padding=True, truncation=True,
                  max_length=max_length)
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


def finetune_endpoints(model: str, problems, out_dir: str | Path, *, steps: int = 4,
                       lr: float = 1e-5, seed: int = 0, max_length: int = 384,
                       batch_size: int = 2) -> tuple[Path, Path]:
    """Two short fine-tunes of `model` on disjoint halves of the problems (stand-in endpoints)."""
    from recode_lib.models import load_tokenizer
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    texts = _sft_texts(load_tokenizer(model), problems)
    if len(texts) < 2:
        raise EndpointError(f"need >= 2 problems with reference solutions, got {len(texts)}")
    half = len(texts) // 2
    kw = dict(steps=steps, lr=lr, max_length=max_length, batch_size=batch_size)
    low = finetune_one(model, texts[:half], out_dir / "low", seed=seed, **kw)
    high = finetune_one(model, texts[half:], out_dir / "high", seed=seed + 1, **kw)
    return low, high
