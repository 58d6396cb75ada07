"""Benchmark: CPU generation speed of the hf backend, and what the same model's weights could do.

    python benchmarks/bench_generation.py [--model smollm2] [--tokens 96] [--batch 1,8]
    python benchmarks/bench_generation.py --gguf smollm2-f16.gguf     # + llama.cpp, when installed
    python benchmarks/bench_generation.py --only hf,vllm --batch 32      # the backends only

Prints one row per configuration: tokens/s and milliseconds per decoding step, and each row's
ratio to the hf backend as the project runs it (recode_lib.generation.HFGenerator: float32
weights on CPU, every core, the OpenMP wait policy recode_lib.core.openmp chose), batched and
unbatched:
- hf backend: HFGenerator.generate, sampled (T=0.8), per-sample seeds, max_new_tokens each;
  again with `precision="bfloat16"` and `"int8"` (recode_lib.core.models.inference_precision: what
  `EvalSpec.precision` / `recode eval --precision` run);
- raw decode loop, float32 / bfloat16 / int8 (torch dynamic quantization of every Linear): the
  model's forward with a KV cache and argmax, no generate() machinery: what the weights cost;
- OMP_WAIT_POLICY=ACTIVE: the hf backend again in a child process (torch reads the policy once);
- vllm backend: VLLMGenerator on vLLM's CPU build (what `make env` installs on a CPU machine),
  recode's CPU engine defaults (float32, eager, 1 GiB KV cache), and again in bfloat16; the
  engine's start-up is printed apart, not counted in tokens/s;
- llama.cpp (llama-cpp-python) on `--gguf`, when the package is importable: the reference the
  project's CPU generation is compared with. Skipped with the reason otherwise (PyPI ships it as
  a source package: `pip install llama-cpp-python` builds it; the GGUF comes from llama.cpp's
  convert_hf_to_gguf.py).
Decoding steps are counted as the longest sample's tokens (a batch advances one token per row
per step). It measures only; it changes nothing in the project.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

RESULT = "RESULT "  # the child's result line on stdout starts with this

PROMPTS = [
    f"Write a Python function `f{i}(n)` that returns the sum of the first n odd numbers "
    f"plus {i}, then explain it."
    for i in range(64)
]


def hf_backend(model: str, batch: int, tokens: int, precision: str = "native") -> dict:
    from recode_lib.core.prompts import build_messages
    from recode_lib.generation import SamplingConfig, get_generator

    gen = get_generator("hf", model, batch_size=batch, precision=precision)
    msgs = [build_messages(p) for p in PROMPTS[:batch]]
    gen.generate(msgs[:1], SamplingConfig(temperature=0.0, max_new_tokens=4, n=1, seed=0))  # warm
    t0 = time.perf_counter()
    outs = gen.generate(msgs, SamplingConfig(temperature=0.8, max_new_tokens=tokens, n=1, seed=1))
    wall = time.perf_counter() - t0
    n = [c[0].n_tokens for c in outs]
    gen.close()
    return {"tokens": sum(n), "steps": max(n), "wall_s": wall}


def raw_decode(model: str, batch: int, tokens: int, weights: str) -> dict:
    import torch
    from transformers import DynamicCache

    from recode_lib.core.models import inference_precision, load_model

    lm, tok = load_model(model)
    lm.eval()
    lm = inference_precision(lm, "native" if weights == "float32" else weights)
    ids = tok([PROMPTS[0]] * batch, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        cache = DynamicCache()
        nxt = lm(ids, past_key_values=cache, use_cache=True).logits[:, -1:].argmax(-1)
        t0 = time.perf_counter()
        for _ in range(tokens):
            nxt = lm(nxt, past_key_values=cache, use_cache=True).logits[:, -1:].argmax(-1)
        wall = time.perf_counter() - t0
    return {"tokens": tokens * batch, "steps": tokens, "wall_s": wall}


def vllm_backend(model: str, batch: int, tokens: int, dtype: str = "") -> dict:
    """The `vllm` backend as the project runs it (VLLMGenerator; on a CPU, vLLM's CPU build with
    recode's CPU engine defaults), `batch` prompts sampled as the hf rows are; the engine start
    is timed apart (load_s) and not in tokens/s."""
    from recode_lib.core.prompts import build_messages
    from recode_lib.generation import SamplingConfig, get_generator

    t0 = time.perf_counter()
    gen = get_generator("vllm", model, **({"dtype": dtype} if dtype else {}))
    msgs = [build_messages(p) for p in PROMPTS[:batch]]
    gen.generate(msgs[:1], SamplingConfig(temperature=0.0, max_new_tokens=4, n=1, seed=0))  # warm
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    outs = gen.generate(msgs, SamplingConfig(temperature=0.8, max_new_tokens=tokens, n=1, seed=1))
    wall = time.perf_counter() - t0
    n = [c[0].n_tokens for c in outs]
    gen.close()
    return {"tokens": sum(n), "steps": max(n), "wall_s": wall, "load_s": load}


def llama_cpp_decode(gguf: str, batch: int, tokens: int) -> dict:
    from llama_cpp import Llama  # optional: a source build from PyPI

    llm = Llama(model_path=gguf, n_ctx=2048, n_threads=os.cpu_count(), n_batch=512, verbose=False)
    t0 = time.perf_counter()
    n = 0
    for p in PROMPTS[:batch]:  # llama-cpp-python's high-level API decodes one sequence at a time
        out = llm.create_chat_completion(
            [{"role": "user", "content": p}], max_tokens=tokens, temperature=0.8, seed=1
        )
        n += out["usage"]["completion_tokens"]
    wall = time.perf_counter() - t0
    return {"tokens": n, "steps": n, "wall_s": wall}


def child(
    kind: str, model: str, batch: int, tokens: int, env: dict | None = None, gguf: str | None = None
) -> dict:
    """Run one measurement in a fresh interpreter (its own OpenMP pool, its own memory)."""
    cmd = [
        sys.executable,
        __file__,
        "--child",
        kind,
        "--model",
        model,
        "--batch",
        str(batch),
        "--tokens",
        str(tokens),
    ] + (["--gguf", gguf] if gguf else [])
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    # the result line is marked: an engine (vLLM) may print its own lines after it
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith(RESULT)]
    if not lines:
        return {"error": "no result line (stdout: " + out.stdout.strip()[-200:] + ")"}
    return json.loads(lines[-1][len(RESULT) :])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--tokens", type=int, default=96)
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--gguf", default=None, help="a GGUF of the same model, for llama.cpp")
    ap.add_argument(
        "--only",
        default="",
        help="comma-separated kinds to run (hf, raw, vllm, "
        "llama_cpp; a prefix picks every variant)",
    )
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        import recode_lib  # noqa: F401  (sets the OMP wait policy default before torch loads)

        kind, batch = a.child, int(a.batch)
        if kind.startswith("hf"):
            res = hf_backend(a.model, batch, a.tokens, kind.partition(":")[2] or "native")
        elif kind == "llama_cpp":
            res = llama_cpp_decode(a.gguf, batch, a.tokens)
        elif kind.startswith("vllm"):
            res = vllm_backend(a.model, batch, a.tokens, kind.partition(":")[2])
        else:
            res = raw_decode(a.model, batch, a.tokens, kind.split(":")[1])
        print(RESULT + json.dumps(res), flush=True)
        return
    rows = []
    for batch in [int(b) for b in a.batch.split(",")]:
        configs = [
            ("hf backend (float32, OMP passive)", "hf", None),
            ("hf backend, OMP_WAIT_POLICY=ACTIVE", "hf", {"OMP_WAIT_POLICY": "ACTIVE"}),
            ("hf backend, precision=bfloat16", "hf:bfloat16", None),
            ("hf backend, precision=int8", "hf:int8", None),
            ("raw decode, float32", "raw:float32", None),
            ("raw decode, bfloat16", "raw:bfloat16", None),
            ("raw decode, int8 dynamic", "raw:int8", None),
        ]
        configs += [
            ("vllm backend (vLLM CPU build, float32)", "vllm", None),
            ("vllm backend, dtype=bfloat16", "vllm:bfloat16", None),
        ]
        if a.gguf:
            configs.append(("llama.cpp (llama-cpp-python)", "llama_cpp", None))
        base = None
        for label, kind, env in configs:
            if a.only and not any(kind.startswith(k) for k in a.only.split(",")):
                continue
            if kind == "llama_cpp":
                import importlib.util

                if importlib.util.find_spec("llama_cpp") is None:
                    rows.append(
                        (batch, label, None, None, "skipped: llama-cpp-python not installed")
                    )
                    continue
            if kind.startswith("vllm"):
                import importlib.util

                if importlib.util.find_spec("vllm") is None:
                    rows.append(
                        (
                            batch,
                            label,
                            None,
                            None,
                            "skipped: vllm not installed "
                            "(`make env` installs vLLM's CPU build where it runs)",
                        )
                    )
                    continue
            res = child(kind, a.model, batch, a.tokens, env, gguf=a.gguf)
            if "error" in res:
                rows.append((batch, label, None, None, res["error"]))
                continue
            tps = res["tokens"] / res["wall_s"]
            ms = 1000 * res["wall_s"] / max(1, res["steps"])
            base = base or tps
            rows.append((batch, label, tps, ms, f"{tps / base:.2f}x the hf backend"))
            load = f"  (engine start {res['load_s']:.1f} s)" if "load_s" in res else ""
            print(
                f"batch {batch:>2}  {label:<38} {tps:7.1f} tokens/s  {ms:7.1f} ms/step  "
                f"{tps / base:.2f}x{load}",
                flush=True,
            )
    for batch, label, _, _, why in [r for r in rows if r[2] is None]:
        print(f"batch {batch:>2}  {label:<38} {why}")


if __name__ == "__main__":
    main()
