"""Model shapes for the resource plan: parameter counts, bytes per token of KV cache.

    arch = model_arch("Qwen/Qwen2.5-Coder-32B-Instruct")   # local config.json, else KNOWN
    arch.params                      # 32.76e9 (from the shape; the table cites the model card)
    arch.kv_bytes_per_token()        # 2 x layers x kv_heads x head_dim x 2 bytes = 262,144
    arch.reward_model().params       # the backbone without its LM head, plus a 1-output score head

A shape comes from the model's own config.json when one is on this machine (a local folder,
or the Hugging Face cache, never downloaded), else from KNOWN: the configs of the models the
profiles name, copied from their config.json on the hub, each with the parameter count its
model card states (tests check that the count computed from the shape agrees). A name that is
neither raises ArchitectureError. Counted: embeddings, attention (with the q/k/v biases of
Qwen2), the gated MLP, norms, an untied LM head. Not covered: mixture-of-experts, vision
towers, quantized checkpoints (the dtype is taken as the weights' bytes per parameter).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from recode_lib.core.errors import RecodeError

DTYPE_BYTES = {
    "float32": 4,
    "float": 4,
    "fp32": 4,
    "bfloat16": 2,
    "bf16": 2,
    "float16": 2,
    "fp16": 2,
    "half": 2,
    "float8": 1,
    "fp8": 1,
    "int8": 1,
}


class ArchitectureError(RecodeError, ValueError):
    """A model whose shape the plan cannot know (no local config.json and not in KNOWN)."""


def dtype_bytes(dtype) -> int:
    """Bytes per parameter of a dtype name ("bfloat16", "torch.float32", "auto" -> 2)."""
    name = str(dtype or "bfloat16").replace("torch.", "").lower()
    if name == "auto":
        return 2
    if name not in DTYPE_BYTES:
        raise ArchitectureError(f"unknown dtype {dtype!r}; known: {sorted(DTYPE_BYTES)}")
    return DTYPE_BYTES[name]


@dataclass(frozen=True)
class Architecture:
    """A decoder-only transformer's shape (the config.json fields the memory math needs)."""

    name: str
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    intermediate_size: int
    tied_embeddings: bool = False
    qkv_bias: bool = False
    qk_norm: bool = False  # Qwen3: RMSNorm on q and k per head
    max_position_embeddings: int = 32768
    dtype: str = "bfloat16"
    stated_params: float | None = None  # the model card's count (KNOWN only)
    source: str = ""  # where the shape came from
    score_head: bool = False  # a reward model: LM head replaced by hidden -> 1

    @property
    def params(self) -> int:
        """Parameters computed from the shape."""
        h, d = self.hidden_size, self.head_dim
        q, kv = self.num_heads * d, self.num_kv_heads * d
        attn = h * q + 2 * h * kv + q * h + ((q + 2 * kv) if self.qkv_bias else 0)
        attn += 2 * d if self.qk_norm else 0
        mlp = 3 * h * self.intermediate_size
        layer = attn + mlp + 2 * h
        embed = self.vocab_size * h
        if self.score_head:
            head = h
        else:
            head = 0 if self.tied_embeddings else self.vocab_size * h
        return self.num_layers * layer + embed + h + head

    @property
    def weight_bytes_per_param(self) -> int:
        return dtype_bytes(self.dtype)

    def weight_bytes(self, dtype=None) -> int:
        return self.params * (dtype_bytes(dtype) if dtype else self.weight_bytes_per_param)

    def kv_bytes_per_token(self, dtype=None, tp: int = 1) -> int:
        """KV cache bytes one token takes on one GPU of a tensor-parallel group of `tp`:
        2 (K and V) x layers x kv_heads x head_dim x bytes; KV heads are split across the
        group (replicated when tp exceeds them, as vLLM does)."""
        heads = max(1, self.num_kv_heads // tp) if tp > 1 else self.num_kv_heads
        return 2 * self.num_layers * heads * self.head_dim * dtype_bytes(dtype or self.dtype)

    def reward_model(self) -> Architecture:
        """The Bradley-Terry reward model on this backbone (AutoModelForSequenceClassification,
        num_labels=1): the same body, a hidden -> 1 score head instead of the LM head."""
        return replace(
            self, name=f"{self.name} (reward model)", score_head=True, stated_params=None
        )

    def tp_sizes(self, limit: int) -> list[int]:
        """Powers of two up to `limit` that vLLM accepts for this model (they must divide the
        attention heads)."""
        out, tp = [], 1
        while tp <= limit:
            if self.num_heads % tp == 0:
                out.append(tp)
            tp *= 2
        return out


def _arch(
    name,
    h,
    layers,
    heads,
    kv,
    vocab,
    inter,
    *,
    head_dim=None,
    tied=False,
    bias=False,
    qk_norm=False,
    max_pos=32768,
    params=None,
    source="",
) -> Architecture:
    return Architecture(
        name,
        h,
        layers,
        heads,
        kv,
        head_dim or h // heads,
        vocab,
        inter,
        tied,
        bias,
        qk_norm,
        max_pos,
        "bfloat16",
        params,
        source,
    )


_QWEN25_7B = dict(h=3584, layers=28, heads=28, kv=4, vocab=152064, inter=18944, bias=True)

# The models the profiles name: fields from each model's config.json on the Hugging Face hub,
# `params` from its model card ("Number of Parameters"), checked against the shape in
# tests/test_plan.py.
KNOWN: dict[str, Architecture] = {
    a.name: a
    for a in [
        _arch(
            "Qwen/Qwen2.5-Coder-7B-Instruct",
            **_QWEN25_7B,
            params=7.61e9,
            source="hf.co/Qwen/Qwen2.5-Coder-7B-Instruct config.json; card: 7.61B parameters",
        ),
        _arch(
            "Qwen/Qwen2.5-7B-Instruct",
            **_QWEN25_7B,
            params=7.61e9,
            source="hf.co/Qwen/Qwen2.5-7B-Instruct config.json; card: 7.61B parameters",
        ),
        _arch(
            "Qwen/Qwen2.5-Math-7B",
            **_QWEN25_7B,
            max_pos=4096,
            params=7.61e9,
            source="hf.co/Qwen/Qwen2.5-Math-7B config.json (4,096-token context); "
            "the Qwen2.5-7B body, 7.61B parameters",
        ),
        _arch(
            "Qwen/Qwen2.5-Coder-32B-Instruct",
            5120,
            64,
            40,
            8,
            152064,
            27648,
            bias=True,
            params=32.5e9,
            source="hf.co/Qwen/Qwen2.5-Coder-32B-Instruct config.json; card: 32.5B parameters",
        ),
        _arch(
            "Qwen/Qwen2.5-32B-Instruct",
            5120,
            64,
            40,
            8,
            152064,
            27648,
            bias=True,
            params=32.5e9,
            source="hf.co/Qwen/Qwen2.5-32B-Instruct config.json; card: 32.5B parameters",
        ),
        _arch(
            "meta-llama/Llama-3.1-70B-Instruct",
            8192,
            80,
            64,
            8,
            128256,
            28672,
            max_pos=131072,
            params=70.6e9,
            source="hf.co/meta-llama/Llama-3.1-70B-Instruct config.json; card: 70B "
            "(70,553,706,496) parameters",
        ),
        _arch(
            "Qwen/Qwen3-4B-Instruct-2507",
            2560,
            36,
            32,
            8,
            151936,
            9728,
            head_dim=128,
            tied=True,
            qk_norm=True,
            max_pos=262144,
            params=4.0e9,
            source="hf.co/Qwen/Qwen3-4B-Instruct-2507 config.json (262,144-token context); "
            "card: 4.0B parameters",
        ),
        _arch(
            "HuggingFaceTB/SmolLM2-135M-Instruct",
            576,
            30,
            9,
            3,
            49152,
            1536,
            tied=True,
            max_pos=8192,
            params=135e6,
            source="hf.co/HuggingFaceTB/SmolLM2-135M-Instruct config.json; card: 135M parameters",
        ),
    ]
}
ALIASES = {"smollm2": "HuggingFaceTB/SmolLM2-135M-Instruct"}


def from_config(cfg: dict, name: str, source: str = "") -> Architecture:
    """An Architecture from a Hugging Face config.json mapping (text models; a nested
    text_config is used when present)."""
    cfg = cfg.get("text_config", cfg) if isinstance(cfg.get("text_config"), dict) else cfg
    try:
        h, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
        arch = Architecture(
            name=name,
            hidden_size=h,
            num_layers=int(cfg["num_hidden_layers"]),
            num_heads=heads,
            num_kv_heads=int(cfg.get("num_key_value_heads") or heads),
            head_dim=int(cfg.get("head_dim") or h // heads),
            vocab_size=int(cfg["vocab_size"]),
            intermediate_size=int(cfg.get("intermediate_size") or 4 * h),
            tied_embeddings=bool(cfg.get("tie_word_embeddings", False)),
            qkv_bias=bool(cfg.get("attention_bias", cfg.get("model_type") == "qwen2")),
            qk_norm=cfg.get("model_type") == "qwen3",
            max_position_embeddings=int(cfg.get("max_position_embeddings") or 32768),
            dtype=str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16"),
            source=source or "config.json",
            score_head="ForSequenceClassification" in " ".join(cfg.get("architectures") or []),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ArchitectureError(
            f"{name}: config.json lacks a field the plan needs: {type(exc).__name__}: {exc}"
        ) from None
    dtype_bytes(arch.dtype)  # a dtype the plan knows
    return arch


def local_config(name: str) -> Path | None:
    """config.json of a local model folder, or of a hub id already in the Hugging Face cache
    (no network)."""
    p = Path(name).expanduser()
    if (p / "config.json").is_file():
        return p / "config.json"
    if p.exists() or name.count("/") != 1:
        return None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    try:
        hit = try_to_load_from_cache(name, "config.json")
    except Exception:  # a malformed id, an unreadable cache: the table decides
        return None
    return Path(hit) if isinstance(hit, str) and Path(hit).is_file() else None


def model_arch(name: str) -> Architecture:
    """The shape of `name` (a hub id, a local folder, or an alias such as smollm2): its local
    config.json when present, else KNOWN; ArchitectureError otherwise."""
    name = str(name)
    key = ALIASES.get(name, name)
    cfg_path = local_config(name)
    if cfg_path is not None:
        try:
            cfg = json.loads(cfg_path.read_text())
        except (OSError, ValueError) as exc:
            raise ArchitectureError(f"{cfg_path}: unreadable config.json: {exc}") from None
        return from_config(cfg, name, source=str(cfg_path))
    if key in KNOWN:
        arch = KNOWN[key]
        return arch if key == name else replace(arch, name=name)
    raise ArchitectureError(
        f"model {name!r}: no local config.json and not in the plan's table of known models "
        f"({', '.join(sorted(KNOWN))}); give a local folder with its config.json "
        "(or download the config into the Hugging Face cache)"
    )
