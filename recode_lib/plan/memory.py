"""GPU memory of a stage: the vLLM tensor-parallel size, and per-GPU bytes of training.

    need = engine_need(engine, tp=2, gpu_bytes=80e9)      # EngineNeed: weights, KV, fits
    tp = choose_tp(engine, gpus_per_node=8, gpu_bytes=80e9)  # smallest power of two that fits
    t = trainer_need(trainer, gpu_bytes=80e9)             # TrainerNeed: per-GPU parts, fits

Units are bytes; GB in messages are 1e9 bytes (a "80 GB" GPU is taken as 80e9, a little below
the 80 GiB an H100/A100 has). The rules:
- vLLM engine (gpu_memory_utilization u of each GPU): weights/TP + VLLM_RESERVE + a minimum KV
  cache must fit in u x GPU. The minimum KV is what vLLM needs to start (one sequence at its
  max_model_len, the model's context unless set) or MIN_CONCURRENT sequences of the stage's
  length, whichever is larger. KV per token on one GPU = 2 x layers x kv_heads/TP x head_dim x
  bytes. TP must be a power of two that divides the attention heads (vLLM's rule) and fits in
  one node. The KV left over sets how many of the stage's sequences run at once.
- Training under ZeRO-3 over P processes: weights + gradients + optimizer states =
  bytes_per_param x params / P (16 for bf16 with fp32 master weights and Adam), plus the
  parameters ZeRO-3 gathers at once (stage3_max_live_parameters, bf16), activations, the LM
  head's workspace, the CUDA context, a reference model (beta > 0, bf16 / P), the reward model
  beside the policy (bf16, replicated per rank unless rm_zero3) and, colocated, vLLM's share
  (u x GPU). Activations per sequence of s tokens follow Korthikanti et al. 2022 ("Reducing
  Activation Recomputation in Large Transformer Models", sec. 4.1): 34 x s x hidden bytes per
  layer with flash attention (no s^2 term); with gradient checkpointing only each layer's
  input (2 x s x hidden bytes) is kept, plus one layer recomputed. TRL 1.16 computes the loss
  with a fused LM head (`fused_lm_head=True`), so the logits are never materialised whole.
Not covered: fragmentation, NCCL buffers beyond the reserve, pipeline parallelism, CPU offload.
"""

from __future__ import annotations

from dataclasses import dataclass

from recode_lib.plan.architectures import dtype_bytes
from recode_lib.plan.stages import Engine, Trainer

GB = 1e9
VLLM_RESERVE = 2.0 * GB  # vLLM's profiling-run activations and sampler buffers, per GPU
CUDA_CONTEXT = 1.0 * GB  # per training process: CUDA context, cuBLAS/NCCL workspaces
LM_HEAD_WORKSPACE = 1.0 * GB  # TRL's fused LM head works through the vocabulary in chunks
MIN_CONCURRENT = 8  # below this many sequences at once, generation is latency-bound
VLLM_MAX_NUM_SEQS = 256  # vLLM's default scheduler limit (max_num_seqs)
ACT_BYTES = 34  # activation bytes per token x hidden per layer (Korthikanti)


@dataclass
class EngineNeed:
    tp: int
    budget: float  # utilization x GPU
    weights: float  # per GPU
    kv_min: float  # per GPU
    kv_batch: float  # the stage's batch at full length, all GPUs together
    kv_free: float  # per GPU, what is left for KV after weights and reserve
    concurrent: int  # sequences of the stage's length that fit at once
    max_model_len: int

    @property
    def need(self) -> float:
        return self.weights + VLLM_RESERVE + self.kv_min

    @property
    def fits(self) -> bool:
        return self.need <= self.budget


def engine_need(e: Engine, tp: int, gpu_bytes: float) -> EngineNeed:
    arch = e.arch
    max_len = int(e.max_model_len or arch.max_position_embeddings)
    seq = min(int(e.seq_len), max_len)
    per_tok = arch.kv_bytes_per_token(tp=tp)
    weights = arch.weight_bytes() / tp
    kv_min = max(max_len, MIN_CONCURRENT * seq) * per_tok
    budget = float(e.utilization) * gpu_bytes
    free = budget - weights - VLLM_RESERVE
    batch = min(int(e.batch), VLLM_MAX_NUM_SEQS)
    return EngineNeed(
        tp=tp,
        budget=budget,
        weights=weights,
        kv_min=kv_min,
        kv_batch=batch * seq * arch.kv_bytes_per_token(),
        kv_free=free,
        concurrent=max(0, int(free // (seq * per_tok))),
        max_model_len=max_len,
    )


def choose_tp(e: Engine, gpus_per_node: int, gpu_bytes: float) -> int | None:
    """The smallest tensor-parallel size (a power of two dividing the attention heads, at
    most one node's GPUs) at which the engine fits; None when none does."""
    for tp in e.arch.tp_sizes(gpus_per_node):
        if engine_need(e, tp, gpu_bytes).fits:
            return tp
    return None


@dataclass
class TrainerNeed:
    parts: dict  # name -> bytes per GPU
    gpu_bytes: float

    @property
    def total(self) -> float:
        return sum(self.parts.values())

    @property
    def fits(self) -> bool:
        return self.total <= self.gpu_bytes

    def describe(self) -> str:
        return " + ".join(f"{k} {v / GB:.1f}" for k, v in self.parts.items() if v >= 0.05 * GB)


def activation_bytes(hidden: int, layers: int, tokens: float, checkpointing: bool) -> float:
    """Activations kept for the backward pass of `tokens` tokens (batch x sequence)."""
    if checkpointing:
        return layers * 2 * tokens * hidden + ACT_BYTES * tokens * hidden
    return layers * ACT_BYTES * tokens * hidden


def trainer_need(t: Trainer, gpu_bytes: float, engine_tp: int | None = None) -> TrainerNeed:
    arch = t.arch
    shard = t.processes if t.zero3 else 1
    parts: dict[str, float] = {}
    if t.lora:  # frozen bf16 base (sharded) + adapter states (small)
        parts["weights (LoRA base)"] = 2 * arch.params / shard
    else:
        parts["weights+grads+Adam"] = t.bytes_per_param * arch.params / shard
    if t.zero3 and shard > 1:
        parts["ZeRO-3 gathered"] = 2 * min(arch.params, t.live_params)
    tokens = t.micro_batch * t.seq_len
    parts["activations"] = activation_bytes(
        arch.hidden_size, arch.num_layers, tokens, t.gradient_checkpointing
    )
    if t.lm_head:
        parts["LM head"] = LM_HEAD_WORKSPACE
    parts["CUDA context"] = CUDA_CONTEXT
    if t.reference_model:
        parts["reference model"] = 2 * arch.params / shard
    rm = t.reward_model
    if rm is not None and rm.placement == "trainer":
        parts["reward model"] = dtype_bytes(rm.dtype) * rm.arch.params / (shard if rm.zero3 else 1)
        parts["RM forward"] = (
            rm.batch * t.seq_len * (4 * rm.arch.hidden_size + 2 * rm.arch.intermediate_size) * 2
        )
    e = t.engine
    if e is not None and e.colocated:
        parts["vLLM (colocated)"] = e.utilization * gpu_bytes
    return TrainerNeed(parts, gpu_bytes)


def extra_gpus(t: Trainer) -> int:
    """GPUs a training stage needs beyond its processes: a vLLM server (vllm_mode server) and
    a served reward model (rm_placement endpoint)."""
    n = 0
    if t.engine is not None and not t.engine.colocated:
        n += int(t.engine.tp)
    if t.reward_model is not None and t.reward_model.placement == "endpoint":
        n += 1
    return n
