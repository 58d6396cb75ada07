"""The Bradley-Terry reasoning-process reward model: training (TRL RewardTrainer) and scoring.

    cfg = RMConfig(backbone="smollm2", output_dir="runs/smoke/02_reward_model/rm", max_steps=20)
    info = train_reward_model(train_pairs, cfg)        # {"n_train", "dropped_too_long", ...}
    scorer = ProcessRewardScorer("runs/smoke/02_reward_model/rm")   # CPU float32
    scorer = ProcessRewardScorer(path, device="cuda:0", batch_size=32)   # bf16 on the GPU
    scorer.score(prompts, traces)                      # -> list[float], batched
    pairwise_accuracy(scorer, val_pairs)               # {"overall": .., "by_type": {...}}
    info = train_or_reuse(train_pairs, cfg)            # reuse a saved RM of the same fingerprint

It does not build pairs (recode_lib.process_reward.pairs) and does not do GRPO.
More: docs/modules/process_reward.md (recode_lib.process_reward.model).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from tqdm.auto import tqdm

from recode_lib.core.errors import RecodeError
from recode_lib.core.jsonl import read_json, write_json_atomic
from recode_lib.core.memory import release_memory
from recode_lib.core.models import (
    load_for_training,
    load_tokenizer,
    model_stamp,
    resolve_model,
    saved_dtype,
)
from recode_lib.core.stamps import fingerprint
from recode_lib.metrics import is_tie, preference_outcome


@dataclass
class RMConfig:
    """backbone: resolve_model name/path of the causal LM; output_dir: final HF folder;
    max_length: tokens per side (longer pairs are dropped and counted); max_steps: > 0 overrides
    epochs; gradient_checkpointing: TRL's default is True, ours False (small CPU runs);
    use_cpu/bf16: CPU-safe defaults (set use_cpu=False, bf16=True on GPUs). bf16=True computes
    in bf16 (autocast) over float32 master weights (recode_lib.core.models.training_dtype: pure bf16
    weights round lr-1e-5 steps away) and saves the model in bf16."""

    backbone: str = "smollm2"
    output_dir: str = "runs/smoke/02_reward_model/rm"
    max_length: int = 1024
    learning_rate: float = 2e-5
    num_train_epochs: float = 1.0
    max_steps: int = -1
    per_device_train_batch_size: int = 4
    gradient_accumulation_steps: int = 1
    warmup_steps: int = 0
    weight_decay: float = 0.0
    center_rewards_coefficient: float | None = None
    gradient_checkpointing: bool = False
    use_cpu: bool = True
    bf16: bool = False
    logging_steps: int = 5
    seed: int = 0


# the training curves' tracker (not part of the RM's fingerprint): TensorBoard event files,
# written under the trainer folder (trainer_dir(cfg)/runs/<time>_<host>/) and kept, when the
# finished run removes that folder, in tracker_dir(cfg)
REPORT_TO = ("tensorboard",)

# what bf16=True means since RMs keep fp32 master weights (part of a bf16 RM's fingerprint)
BF16_NUMERICS = "bf16 autocast over fp32 master weights"


def load_rm_tokenizer(path):
    return load_tokenizer(path, padding_side="right")


def render(tokenizer, prompt: str, trace: str) -> str:
    """The text of (prompt, trace) as the RM reads it: the chat template's, else plain."""
    if tokenizer.chat_template:
        return tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}, {"role": "assistant", "content": trace}],
            tokenize=False,
        )
    return f"{prompt}\n\n{trace}{tokenizer.eos_token or ''}"


def special_texts(tokenizer) -> set[str]:
    """The texts of the tokenizer's special tokens (end of turn, turn start, EOS, pad, ...)."""
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    return {t.content for t in added.values() if t.special} | set(tokenizer.all_special_tokens)


TRACE_MARK = "\ue000RECODE-TRACE\ue000"  # a private-use placeholder no template rewrites


def encode(tokenizer, prompt: str, trace: str) -> list[int]:
    """Token ids of (prompt, trace) exactly as the RM sees them in training and scoring.

    The trace is untrusted (a policy's text under GRPO): where it spells a special token
    ('<|im_end|>', '<|im_start|>', the EOS or pad text) those characters stay ordinary tokens,
    so a trace can neither end its turn and forge another one for the RM to score nor place a
    pad or EOS where the score is read. A trace that spells none is tokenized as before."""
    text = render(tokenizer, prompt, trace)
    if not any(s and s in trace for s in special_texts(tokenizer)):
        return tokenizer(text, add_special_tokens=False)["input_ids"]
    frame = render(tokenizer, prompt, TRACE_MARK)
    head, mark, tail = frame.partition(TRACE_MARK)
    if not mark or TRACE_MARK in tail:  # a template that does not hold the trace once, as is
        return tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
    return (
        tokenizer(head, add_special_tokens=False)["input_ids"]
        + tokenizer(trace, add_special_tokens=False, split_special_tokens=True)["input_ids"]
        + tokenizer(tail, add_special_tokens=False)["input_ids"]
    )


def _tokenize_pairs(pairs, tokenizer, max_length):
    rows, dropped = [], []
    for i, p in enumerate(pairs):
        for k in ("prompt", "chosen", "rejected"):
            if not isinstance(p.get(k), str) or not p[k]:
                raise ValueError(f"pair {p.get('id', i)!r}: field {k!r} is missing or empty")
        c, r = (
            encode(tokenizer, p["prompt"], p["chosen"]),
            encode(tokenizer, p["prompt"], p["rejected"]),
        )
        if len(c) > max_length or len(r) > max_length:
            dropped.append({"id": p.get("id", i), "chosen_len": len(c), "rejected_len": len(r)})
            continue
        rows.append({"chosen_ids": c, "rejected_ids": r})
    return rows, dropped


def training_fingerprint(train_pairs, cfg: RMConfig) -> str:
    """A hash of the config and the training pairs: a saved RM is reused only for the same
    fingerprint (new pairs from a re-run synthesis must retrain it). A bf16 config's also
    names its numerics, so an RM trained before bf16 meant fp32 master weights (pure bf16
    weights: most updates rounded away, see recode_lib.core.models.training_dtype) is retrained."""
    parts = [cfg, [[p.get("prompt"), p.get("chosen"), p.get("rejected")] for p in train_pairs]]
    if cfg.bf16:
        parts.append(BF16_NUMERICS)
    return fingerprint(*parts)


def is_main_process() -> bool:
    """True outside a distributed launch and on its rank 0 (RANK, which accelerate and torchrun
    set): the process that writes the checkpoint's side files and the training record."""
    return os.environ.get("RANK", "0") == "0"


def trainer_dir(cfg: RMConfig) -> Path:
    """The RewardTrainer's own folder next to the RM (<output_dir>/../.<name>_trainer): run logs
    and, with save_steps > 0, the checkpoints a failed run leaves to resume from."""
    out = Path(cfg.output_dir)
    return out.parent / f".{out.name}_trainer"


def tracker_dir(cfg: RMConfig) -> Path:
    """Where a finished RM run's training curves (TensorBoard event files) stay:
    <output_dir>/../tb/<name>/ (runs/<profile>/02_reward_model/tb/rm/<time>_<host>/)."""
    out = Path(cfg.output_dir)
    return out.parent / "tb" / out.name


def reward_config(cfg: RMConfig, *, save_steps: int = 0):
    """The trl.RewardConfig of a run of `cfg` (its trainer folder: trainer_dir). save_steps > 0:
    a checkpoint every save_steps steps, the last one kept; 0: none (save_strategy "no")."""
    from trl import RewardConfig

    if save_steps < 0:
        raise ValueError(f"save_steps must be >= 0, got {save_steps}")
    return RewardConfig(
        output_dir=str(trainer_dir(cfg)),
        max_length=cfg.max_length,
        learning_rate=cfg.learning_rate,
        num_train_epochs=cfg.num_train_epochs,
        max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.per_device_train_batch_size,
        per_device_eval_batch_size=cfg.per_device_train_batch_size,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps,
        warmup_steps=cfg.warmup_steps,
        weight_decay=cfg.weight_decay,
        center_rewards_coefficient=cfg.center_rewards_coefficient,
        gradient_checkpointing=cfg.gradient_checkpointing,
        use_cpu=cfg.use_cpu,
        bf16=cfg.bf16,
        logging_steps=cfg.logging_steps,
        report_to=list(REPORT_TO),
        seed=cfg.seed,
        save_strategy="steps" if save_steps else "no",
        save_steps=save_steps or 500,
        save_total_limit=1,
        eval_strategy="no",
        disable_tqdm=False,
        dataloader_num_workers=0,
    )


def _resume_point(folder: Path, fp: str) -> str | None:
    """The last checkpoint in the trainer folder when it belongs to this fingerprint; otherwise
    the main process clears the folder (logs or checkpoints of other pairs/config) and records
    the fingerprint there. Every rank reaches the same answer."""
    from transformers.trainer_utils import get_last_checkpoint

    stamp = folder / "fingerprint.json"
    same = stamp.is_file() and read_json(stamp).get("fingerprint") == fp
    last = get_last_checkpoint(str(folder)) if same and folder.is_dir() else None
    if not same and is_main_process():
        shutil.rmtree(folder, ignore_errors=True)
        write_json_atomic(stamp, {"fingerprint": fp})
    return last


def train_reward_model(train_pairs, cfg: RMConfig, eval_pairs=None, *, save_steps: int = 0) -> dict:
    """Train with TRL RewardTrainer and save model + tokenizer + rm_config.json to cfg.output_dir.
    Returns counts (train pairs used, dropped as too long with their ids), losses and timing.
    Runs alike in one process and on every rank of an `accelerate launch` (module docstring);
    save_steps > 0 checkpoints (and resumes: trainer_dir)."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForSequenceClassification
    from trl import RewardTrainer

    path = resolve_model(cfg.backbone)
    tok = load_rm_tokenizer(path)
    rows, dropped = _tokenize_pairs(train_pairs, tok, cfg.max_length)
    if not rows:
        raise ValueError(
            f"no training pairs left: {len(train_pairs)} given, {len(dropped)} longer "
            f"than max_length={cfg.max_length}"
        )
    eval_rows, eval_dropped = _tokenize_pairs(eval_pairs or [], tok, cfg.max_length)
    # the arguments first: under an accelerate DeepSpeed ZeRO-3 launch they make
    # from_pretrained partition the weights as it loads them (zero3_init_flag)
    args = reward_config(cfg, save_steps=save_steps)
    last = _resume_point(Path(args.output_dir), training_fingerprint(train_pairs, cfg))
    torch.manual_seed(cfg.seed)  # the score head is initialised here, before the trainer seeds
    # float32 master weights; bf16=True is the trainer's autocast (training_dtype says why)
    model = load_for_training(
        path, bf16=cfg.bf16, model_class=AutoModelForSequenceClassification, num_labels=1
    )
    model.config.pad_token_id = tok.pad_token_id
    out = Path(cfg.output_dir)
    trainer = RewardTrainer(
        model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tok
    )
    t0 = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=last)
    seconds = time.perf_counter() - t0
    main = trainer.is_world_process_zero()
    if main:
        out.mkdir(parents=True, exist_ok=True)
    if trainer.is_deepspeed_enabled:  # ZeRO-3: gathered in 16 bit by every rank, rank 0 writes
        trainer.model.config.dtype = saved_dtype(cfg.bf16)
        trainer.save_model(str(out))
        if main and not any(
            (out / n).is_file() for n in ("model.safetensors", "model.safetensors.index.json")
        ):
            raise RuntimeError(
                f"DeepSpeed saved no 16-bit weights in {out}: set "
                "stage3_gather_16bit_weights_on_model_save in its config"
            )
    elif main:
        trainer.model.to(saved_dtype(cfg.bf16)).save_pretrained(out)  # bf16 runs save bf16
    world = trainer.args.world_size
    trained = result.global_step - (int(last.rsplit("-", 1)[1]) if last else 0)  # this call's
    info = {
        "n_train_given": len(train_pairs),
        "n_train_used": len(rows),
        "dropped_too_long": len(dropped),
        "dropped_ids": [d["id"] for d in dropped],
        "n_eval_given": len(eval_pairs or []),
        "eval_dropped_too_long": len(eval_dropped),
        "train_loss": result.training_loss,
        "steps": result.global_step,
        "train_seconds": seconds,
        "num_processes": world,
        "resumed_from": last,
        "zero_stage": (
            trainer.accelerator.state.deepspeed_plugin.zero_stage
            if trainer.is_deepspeed_enabled
            else None
        ),
        "pairs_per_second": trained
        * cfg.per_device_train_batch_size
        * cfg.gradient_accumulation_steps
        * world
        / seconds,
        "log_history": trainer.state.log_history,
        "backbone": path,
        "config": asdict(cfg),
    }
    if main:
        tok.save_pretrained(out)
        (out / "training_args.bin").unlink(missing_ok=True)  # Trainer.save_model's, not the RM's
        (out / "rm_config.json").write_text(
            json.dumps({"config": asdict(cfg), "backbone": path}, indent=2)
        )
        if (Path(args.output_dir) / "runs").is_dir():  # the curves outlive the folder
            shutil.copytree(Path(args.output_dir) / "runs", tracker_dir(cfg), dirs_exist_ok=True)
        shutil.rmtree(args.output_dir, ignore_errors=True)  # finished: logs, checkpoints
    return info


DTYPES = ("auto", "float32", "bfloat16", "float16")


def resolve_dtype(dtype, device) -> str:
    """The dtype name the RM is loaded in: "auto"/None -> float32 on CPU, bfloat16 elsewhere
    (the Bradley-Terry head's score survives bf16; CPU bf16 matmuls are slow); a torch dtype or
    a name in DTYPES as given."""
    if dtype is None or dtype == "auto":
        return "float32" if str(device).split(":")[0] == "cpu" else "bfloat16"
    name = str(dtype).replace("torch.", "")
    if name not in DTYPES:
        raise ValueError(f"rm_dtype must be one of {list(DTYPES)}, got {dtype!r}")
    return name


class ProcessRewardScorer:
    """Scores (prompt, trace) pairs with a saved reward model: higher = better reasoning.

    device: "cpu", "cuda", "cuda:N", ... (where the weights live; recode_lib.process_reward.
    placement resolves a recipe's rm_placement to one); dtype: a torch dtype or its name, None
    = float32 on CPU and bfloat16 on an accelerator; batch_size: sequences per forward pass
    (sorted by length, so padding stays small). `collective` is True once `shard` has handed the
    model to DeepSpeed ZeRO-3: every rank must then call `score` with the same number of
    traces (the gated reward scores all of them and applies the gate afterwards)."""

    def __init__(
        self,
        path,
        *,
        batch_size: int = 8,
        max_length: int | None = None,
        device: str = "cpu",
        dtype=None,
        resident: bool = True,
    ):
        import torch

        self.path = str(path)
        self.tok = load_rm_tokenizer(self.path)
        cfg_file = Path(self.path) / "rm_config.json"
        saved = json.loads(cfg_file.read_text())["config"] if cfg_file.is_file() else {}
        self.max_length = max_length or saved.get("max_length", 2048)
        self.dtype = getattr(torch, resolve_dtype(dtype, device))
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size, self.device = batch_size, str(device)
        self.resident = bool(resident)
        self.stamp = model_stamp(self.path)  # a non-resident RM reloads these very files
        self.model = self.load()  # checked now, also when it is not kept
        if not self.resident:
            self.model = None
            release_memory()
        self.collective = False
        self.truncated = 0
        self.forward_passes = 0
        self.loads = 1

    def load(self):
        """The reward model from self.path, in self.dtype on self.device, in eval mode; a
        non-resident scorer's reload raises RecodeError when the folder changed since the first
        load (model_stamp: it would score with other weights than the run recorded)."""
        from transformers import AutoModelForSequenceClassification

        if hasattr(self, "model") and model_stamp(self.path) != self.stamp:
            raise RecodeError(
                f"reward model {self.path} changed on disk since this scorer first loaded it: "
                "a non-resident scorer (rm_resident: false) would now score with other weights"
            )
        model = (
            AutoModelForSequenceClassification.from_pretrained(self.path, dtype=self.dtype)
            .to(self.device)
            .eval()
        )
        if model.config.num_labels != 1:
            raise ValueError(
                f"{self.path}: a reward model needs num_labels=1, has {model.config.num_labels}"
            )
        model.config.pad_token_id = self.tok.pad_token_id
        return model

    def shard(self, accelerator) -> bool:
        """Hand the model to DeepSpeed ZeRO-3 across the training ranks (TRL's public
        trl.models.prepare_deepspeed, as GRPOTrainer does for model reward functions) when
        `accelerator` runs ZeRO-3; returns whether it did. Afterwards `collective` is True."""
        plugin = getattr(accelerator.state, "deepspeed_plugin", None)
        if plugin is None or getattr(plugin, "zero_stage", None) != 3:
            return False
        if not self.resident:
            raise ValueError("a non-resident reward model (rm_resident: false) cannot be sharded")
        from trl.models import prepare_deepspeed

        self.model = prepare_deepspeed(self.model, accelerator)
        self.device = str(accelerator.device)
        self.collective = True
        return True

    def encode_all(self, prompts: list[str], traces: list[str]) -> list[list[int]]:
        """Token ids per (prompt, trace), left-truncated to max_length (counted in .truncated)."""
        if len(prompts) != len(traces):
            raise ValueError(f"{len(prompts)} prompts but {len(traces)} traces")
        ids = []
        for p, t in zip(prompts, traces, strict=True):
            x = encode(self.tok, p, t or "")
            if len(x) > self.max_length:
                self.truncated += 1
                x = x[-self.max_length :]
            ids.append(x)
        return ids

    def score(self, prompts: list[str], traces: list[str], progress: bool = False) -> list[float]:

        ids = self.encode_all(prompts, traces)
        if not ids:
            return []
        model = self.model
        if model is None:  # not resident: loaded for this call, released after it
            model = self.load()
            self.loads += 1
        try:
            return self.score_ids(model, ids, progress)
        finally:
            if not self.resident:
                del model
                release_memory()

    def score_ids(self, model, ids: list[list[int]], progress: bool = False) -> list[float]:
        """Scores of token-id sequences with `model`, batched by length."""
        import torch

        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        scores = [0.0] * len(ids)
        starts = range(0, len(order), self.batch_size)
        for s in tqdm(starts, desc="RM scoring", disable=not progress):
            batch = [ids[i] for i in order[s : s + self.batch_size]]
            width = max(len(x) for x in batch)
            pad = self.tok.pad_token_id
            inp = torch.tensor([x + [pad] * (width - len(x)) for x in batch], device=self.device)
            att = torch.tensor(
                [[1] * len(x) + [0] * (width - len(x)) for x in batch], device=self.device
            )
            with torch.no_grad():
                logits = model(input_ids=inp, attention_mask=att).logits[:, 0].float()
            self.forward_passes += 1
            for j, i in enumerate(order[s : s + self.batch_size]):
                scores[i] = float(logits[j])
        return scores


def pairwise_accuracy(scorer, pairs) -> dict:
    """Fraction of pairs whose chosen side scores strictly higher (recode_lib.metrics.
    preference_outcome: a tie counts 0, the rule every LCB-RB method uses), overall and by
    pair_type, the number of ties, plus per-pair outcomes (1/0) for confidence intervals."""
    if not pairs:
        raise ValueError("pairwise_accuracy: no pairs")
    prompts = [p["prompt"] for p in pairs]
    sc = scorer.score(
        prompts + prompts, [p["chosen"] for p in pairs] + [p["rejected"] for p in pairs]
    )
    n = len(pairs)
    correct = [preference_outcome(sc[i], sc[n + i]) for i in range(n)]
    by_type = defaultdict(list)
    for p, c in zip(pairs, correct, strict=True):
        by_type[p.get("pair_type", "all")].append(c)
    return {
        "overall": sum(correct) / n,
        "n": n,
        "ties": sum(is_tie(sc[i], sc[n + i]) for i in range(n)),
        "by_type": {k: {"accuracy": sum(v) / len(v), "n": len(v)} for k, v in by_type.items()},
        "correct": correct,
        "margins": [sc[i] - sc[n + i] for i in range(n)],
    }


def save_untrained_reward_model(cfg: RMConfig, reason: str) -> str:
    """Save the backbone with a fresh (untrained) scalar head at cfg.output_dir, flagged
    `"untrained": reason` in rm_config.json, so that a pipeline with no training pairs (e.g. a
    random test model whose traces never parse) still hands a loadable checkpoint downstream.
    Never use its scores as results: read the flag."""
    import torch
    from transformers import AutoModelForSequenceClassification

    path = resolve_model(cfg.backbone)
    tok = load_rm_tokenizer(path)
    torch.manual_seed(cfg.seed)
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    model.config.pad_token_id = tok.pad_token_id
    out = Path(cfg.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    (out / "rm_config.json").write_text(
        json.dumps({"config": asdict(cfg), "backbone": path, "untrained": reason}, indent=2)
    )
    return str(out)


def record_path(cfg: RMConfig) -> Path:
    """The training record of the RM at cfg.output_dir: <output_dir>_train.json, next to it
    (the training info with its "fingerprint"; written last, so it marks a finished RM)."""
    out = Path(cfg.output_dir)
    return out.parent / f"{out.name}_train.json"


def finished_record(train_pairs, cfg: RMConfig) -> dict | None:
    """The record of a finished RM at cfg.output_dir trained on these pairs with this config
    (same training_fingerprint, checkpoint present), or None."""
    info_file = record_path(cfg)
    if not ((Path(cfg.output_dir) / "rm_config.json").is_file() and info_file.is_file()):
        return None
    info = read_json(info_file)
    return info if info.get("fingerprint") == training_fingerprint(train_pairs, cfg) else None


def train_or_reuse(
    train_pairs, cfg: RMConfig, *, retrain: bool = False, save_steps: int = 0, log=print
) -> dict:
    """The RM at cfg.output_dir for these pairs and this config: reused when its record
    (record_path, next to the folder) carries the same training_fingerprint and `retrain` is
    False; otherwise trained (train_reward_model, with save_steps), or, with no pairs at all,
    saved UNTRAINED (save_untrained_reward_model; the info says so under "untrained"). Returns
    the training info with its "fingerprint" and "reused" (bool). On the ranks of a distributed
    launch every rank trains and only the main process writes (is_main_process)."""
    out = Path(cfg.output_dir)
    fp = training_fingerprint(train_pairs, cfg)
    if not retrain:
        done = finished_record(train_pairs, cfg)
        if done is not None:
            log(f"{out.name}: reusing the checkpoint trained on these pairs")
            return {**done, "reused": True}
        if record_path(cfg).is_file():
            log(
                f"{out.name}: training pairs or config changed since the saved checkpoint: "
                "retraining"
            )
    if is_main_process():
        record_path(cfg).unlink(missing_ok=True)  # no stale record while the RM is rewritten
    if not train_pairs:
        reason = "no training pairs"
        log(f"WARNING: {reason}: saving the UNTRAINED backbone so later stages can load it")
        if is_main_process():
            save_untrained_reward_model(cfg, reason)
        info = {
            "n_train_given": 0,
            "n_train_used": 0,
            "dropped_too_long": 0,
            "dropped_ids": [],
            "steps": 0,
            "train_loss": None,
            "train_seconds": 0.0,
            "pairs_per_second": None,
            "untrained": reason,
        }
    else:
        info = train_reward_model(train_pairs, cfg, save_steps=save_steps)
    info["fingerprint"] = fp
    if is_main_process():
        write_json_atomic(record_path(cfg), info)
    return {**info, "reused": False}
