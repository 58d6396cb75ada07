"""The shared SFT start: LoRA supervised fine-tuning on the program-written transcripts of
recode_lib.training.sft_data with TRL's SFTTrainer, merged into one full checkpoint.

    from recode_lib.training.sft_start import SFTStartConfig, train_sft
    result = train_sft(SFTStartConfig(model="smollm2", max_steps=40), transcripts,
                       "runs/laptop/00_data_and_models/sft")
    result.final_dir      # <out>/final: a full Hugging Face checkpoint (LoRA merged in) + tokenizer
    result.metrics_path   # <out>/metrics.jsonl: one line per logged step (loss, time/step_s)

Paper B starts every RL run "from one shared SFT checkpoint"; the laptop profile's instruct model
never calls a tool, so its tool and agentic runs have nothing to reinforce without one. Each
transcript is tokenized with the tool template the settings render (prepare_tool_tokenizer), the
setting's tools in the system turn as at inference, the loss on the assistant turns only; every
rendered assistant turn is first parsed back with the environments' parser
(sft_data.check_parses_back). A transcript longer than `max_length` tokens is left out (counted),
not cut; the dataset goes to SFTTrainer already tokenized (skip_prepare_dataset). Weights are
float32; on CPU `use_cpu=True, bf16=False`. Resumable as GRPO runs are (training.grpo); final/
holds the model merged with the adapter and the base model's tokenizer. The heap is trimmed after
every step (callbacks.TrimHeapCallback), and it returns with trainer, model and optimizer freed
(core.memory.release_memory): notebook 00 calibrates next in the same kernel. Detail:
docs/modules/training.md.
It does not write transcripts (sft_data) nor decide whether a profile starts from SFT
(recode_lib.orchestration.start).
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from recode_lib.core.bf16 import resolve_bf16
from recode_lib.core.jsonl import write_json_atomic
from recode_lib.core.memory import release_memory
from recode_lib.core.models import load_for_training, load_tokenizer, resolve_model
from recode_lib.core.stamps import fingerprint, provenance
from recode_lib.environments.chat import prepare_tool_tokenizer
from recode_lib.training.grpo import (
    final_complete,
    last_complete_checkpoint,
    retire_stale_run,
    save_final,
)
from recode_lib.training.lora import lora_config
from recode_lib.training.sft_data import check_parses_back, setting_tools


@dataclass
class SFTStartConfig:
    """One SFT run.

    model:          the base model (an embedded alias, a folder or a hub id).
    max_steps:      optimizer steps; 0 = `epochs` passes over the transcripts.
    epochs:         passes over the transcripts when max_steps is 0.
    batch_size:     transcripts per device and step (per_device_train_batch_size).
    gradient_accumulation_steps: micro-batches per optimizer step.
    learning_rate:  AdamW's, for the LoRA weights; linear decay, `warmup_ratio` warm-up.
    lora_r, lora_alpha: the adapter's rank and scale (training.lora.lora_config).
    max_length:     tokens of one transcript; longer ones are left out.
    seed:           the trainer's seed (data order, adapter init).
    use_cpu:        TRL's; CPU: True.
    bf16:           bf16 autocast over fp32 weights (recode_lib.core.models.training_dtype): True,
                    False, or "auto" (recode_lib.core.bf16.resolve_bf16: by the machine, a bool
                    once the config is built).
    cpu_threads:    torch threads on CPU (0: torch's default).
    save_steps:     a resumable checkpoint every this many steps (the last one is kept).
    gradient_checkpointing: recompute each layer's activations in the backward pass instead of
                    keeping them (non-reentrant). Same losses and gradients (measured: identical
                    to the last digit over 2 steps); on the laptop profile's longest transcripts
                    the peak resident memory fell from 5.9 to 4.2 GiB for 12% more wall time.
                    Not part of the run's fingerprint (it changes no result).
    """

    model: str = "smollm2"
    max_steps: int = 0
    epochs: float = 1.0
    batch_size: int = 4
    gradient_accumulation_steps: int = 1
    learning_rate: float = 2e-4
    warmup_ratio: float = 0.0  # share of the steps warming up (transformers' warmup_steps < 1)
    lora_r: int = 16
    lora_alpha: int = 32
    max_length: int = 2048
    seed: int = 0
    use_cpu: bool = True
    bf16: bool | str = False
    cpu_threads: int = 0
    save_steps: int = 25
    gradient_checkpointing: bool = True

    def __post_init__(self):
        try:
            self.bf16 = resolve_bf16(self.bf16, use_cpu=bool(self.use_cpu))
        except ValueError as exc:
            raise ValueError(f"SFTStartConfig: {exc}") from None
        for name in (
            "batch_size",
            "gradient_accumulation_steps",
            "lora_r",
            "max_length",
            "save_steps",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"SFTStartConfig.{name} must be a positive integer, got {v!r}")
        if self.max_steps < 0 or (self.max_steps == 0 and not self.epochs > 0):
            raise ValueError(
                f"SFTStartConfig: need max_steps > 0 or epochs > 0, got "
                f"max_steps={self.max_steps}, epochs={self.epochs}"
            )
        if not self.learning_rate > 0:
            raise ValueError(f"SFTStartConfig.learning_rate must be > 0, got {self.learning_rate}")


@dataclass
class SFTResult:
    output_dir: Path
    final_dir: Path
    metrics_path: Path
    n_examples: int  # transcripts trained on (0 when skipped)
    n_too_long: int  # left out: longer than max_length
    resumed_from: str | None
    skipped: bool  # True when final/ was already complete


RESULT_NEUTRAL = ("gradient_checkpointing",)  # config fields that change no result


def run_fingerprint(cfg: SFTStartConfig, transcripts: list[dict]) -> str:
    fields = {k: v for k, v in asdict(cfg).items() if k not in RESULT_NEUTRAL}
    return fingerprint(fields, [[t["id"], t["messages"]] for t in transcripts])


def training_template(tok):
    """The chat template to tokenize with: tok's own when it marks the assistant's generation,
    else TRL's training variant of it (ValueError naming the template's start when TRL has none)."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    if has_generation_markers(tok.chat_template):
        return tok.chat_template
    patched = get_training_chat_template(tok)
    if patched is None or not has_generation_markers(patched):
        raise ValueError(
            f"the chat template (starting {str(tok.chat_template)[:80]!r}) marks no "
            "assistant turns ({% generation %}) and TRL has no training variant of "
            "it: the SFT loss could not be restricted to the assistant's tokens"
        )
    return patched


def tokenize_transcripts(tok, transcripts: list[dict], max_length: int) -> tuple[list[dict], int]:
    """([{"input_ids", "labels"}] with labels -100 outside the assistant turns, number left out
    for exceeding max_length); each transcript is parsed back first (check_parses_back)."""
    template = training_template(tok)
    rows, too_long = [], 0
    for t in transcripts:
        check_parses_back(tok, t, template)
        enc = tok.apply_chat_template(
            t["messages"],
            tools=setting_tools(t["setting"]) or None,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
            chat_template=template,
        )
        ids, mask = list(enc["input_ids"]), list(enc["assistant_masks"])
        if len(ids) > max_length:
            too_long += 1
            continue
        if not any(mask):
            raise ValueError(f"transcript {t['id']!r}: no assistant token is marked for the loss")
        rows.append(
            {"input_ids": ids, "labels": [i if m else -100 for i, m in zip(ids, mask, strict=True)]}
        )
    return rows, too_long


def sft_args(cfg: SFTStartConfig, out: Path):
    from trl import SFTConfig

    return SFTConfig(
        output_dir=str(out),
        max_steps=cfg.max_steps or -1,
        num_train_epochs=cfg.epochs,
        per_device_train_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps,
        learning_rate=cfg.learning_rate,
        lr_scheduler_type="linear",
        warmup_steps=float(cfg.warmup_ratio),
        logging_steps=1,
        save_steps=cfg.save_steps,
        save_total_limit=1,
        seed=cfg.seed,
        use_cpu=cfg.use_cpu,
        bf16=cfg.bf16,
        gradient_checkpointing=cfg.gradient_checkpointing,
        gradient_checkpointing_kwargs={"use_reentrant": False}
        if cfg.gradient_checkpointing
        else None,
        report_to=[],
        dataset_kwargs={"skip_prepare_dataset": True},
        max_length=None,
        remove_unused_columns=False,
    )


def train_sft(cfg: SFTStartConfig, transcripts: list[dict], output_dir) -> SFTResult:
    """Train (or resume, or skip when done) the SFT start on `transcripts` (module docstring);
    ValueError when none fits max_length."""
    from datasets import Dataset
    from trl import SFTTrainer

    from recode_lib.training.callbacks import MetricsJsonlCallback, TrimHeapCallback

    out = Path(output_dir)
    final, metrics = out / "final", out / "metrics.jsonl"
    retire_stale_run(out, run_fingerprint(cfg, transcripts))
    if final_complete(out):
        return SFTResult(out, final, metrics, 0, 0, None, True)
    if cfg.use_cpu and cfg.cpu_threads:
        import torch

        torch.set_num_threads(int(cfg.cpu_threads))
    model_path = resolve_model(cfg.model)
    tok = load_tokenizer(model_path, padding_side="right")
    train_tok = prepare_tool_tokenizer(load_tokenizer(model_path, padding_side="right"))
    rows, too_long = tokenize_transcripts(train_tok, transcripts, cfg.max_length)
    if not rows:
        raise ValueError(
            f"{out}: no transcript fits max_length={cfg.max_length} "
            f"({len(transcripts)} given, {too_long} too long)"
        )
    if too_long:
        print(
            f"SFT: {too_long} of {len(transcripts)} transcripts are longer than "
            f"{cfg.max_length} tokens and left out",
            file=sys.stderr,
        )
    last = last_complete_checkpoint(out)
    write_json_atomic(
        out / "run.json",
        provenance(cfg.seed, asdict(cfg))
        | {
            "model_path": model_path,
            "resumed_from": last,
            "n_transcripts": len(transcripts),
            "n_examples": len(rows),
            "n_too_long": too_long,
        },
    )
    model = load_for_training(model_path, bf16=cfg.bf16)
    cb = MetricsJsonlCallback(metrics, run_name="sft")
    trainer = SFTTrainer(
        model=model,
        args=sft_args(cfg, out),
        train_dataset=Dataset.from_list(rows),
        processing_class=train_tok,
        callbacks=[cb, TrimHeapCallback()],
        peft_config=lora_config({"r": cfg.lora_r, "alpha": cfg.lora_alpha}),
    )
    cb.trainer = trainer
    trainer.train(resume_from_checkpoint=last)
    save_final(trainer, tok, final)
    # the trainer and its callback form a cycle that holds the model, its adapter, the optimizer
    # state and the dataset: free them now, not at the caller's next collection (notebook 00
    # calibrates the start next, in the same kernel)
    del trainer, cb, model
    release_memory()
    return SFTResult(out, final, metrics, len(rows), too_long, last, False)
