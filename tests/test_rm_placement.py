"""Reward-model placement: device and dtype resolution, batching, the HTTP scorer and its client,
ZeRO-3 sharding hand-off. CPU only; the GPU test skips without CUDA."""

from __future__ import annotations

import math

import pytest

from recode_lib.data.schema import Problem
from recode_lib.process_reward.placement import (
    RMPlacement,
    device_index,
    load_scorer,
    resolve_device,
    resolve_dtype,
)
from recode_lib.process_reward.serving import EndpointScorer, start_server


@pytest.fixture(scope="module")
def rm_dir(tiny_model_dir, tmp_path_factory):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    out = tmp_path_factory.mktemp("rm")
    model = AutoModelForSequenceClassification.from_pretrained(tiny_model_dir, num_labels=1)
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    model.config.pad_token_id = tok.pad_token_id
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


PROMPTS = [f"Write f #{i}." for i in range(5)]
TRACES = ["short", "a longer trace " * 3, "x", "medium trace here", "the longest trace " * 6]


@pytest.fixture()
def server(rm_dir):
    s = start_server(load_scorer(rm_dir))
    yield s
    s.shutdown()
    s.server_close()


def test_device_resolution():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("trainer", trainer_device="cuda:3") == "cuda:3"  # the rank's device
    assert resolve_device("trainer") == "cpu"
    assert device_index("device:7") == 7 and device_index("cuda:2") == 2
    assert device_index("trainer") is None
    with pytest.raises(ValueError, match="rm_placement must be one of .*'gpu'"):
        device_index("gpu")
    with pytest.raises(ValueError, match="no local device"):
        resolve_device("endpoint")


def test_dedicated_device_beyond_the_machine_is_named():
    import torch

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(ValueError, match=f"'device:{n}': this machine has {n} CUDA device"):
        resolve_device(f"device:{n}")


def test_dtype_choice():
    assert resolve_dtype("auto", "cpu") == "float32"  # smoke: CPU float32
    assert resolve_dtype(None, "cuda:0") == "bfloat16"  # on an accelerator: bf16
    assert resolve_dtype("auto", "cuda") == "bfloat16"
    assert resolve_dtype("float16", "cuda:1") == "float16"  # explicit wins
    import torch

    assert resolve_dtype(torch.bfloat16, "cpu") == "bfloat16"
    with pytest.raises(ValueError, match="rm_dtype must be one of"):
        resolve_dtype("fp8", "cuda")


def test_placement_validation_names_the_field():
    RMPlacement().validate()
    RMPlacement(where="endpoint", endpoint="http://h:1").validate()
    with pytest.raises(ValueError, match="endpoint needs rm_endpoint"):
        RMPlacement(where="endpoint").validate()
    with pytest.raises(ValueError, match="rm_endpoint is set but rm_placement is 'cpu'"):
        RMPlacement(endpoint="http://h:1").validate()
    with pytest.raises(ValueError, match="rm_batch_size must be >= 1"):
        RMPlacement(batch_size=0).validate()
    with pytest.raises(ValueError, match="rm_zero3 .* needs rm_placement: trainer"):
        RMPlacement(where="cpu", zero3=True).validate()
    with pytest.raises(ValueError, match="http"):
        RMPlacement(where="endpoint", endpoint="h:1").validate()


def test_local_scorer_dtype_follows_placement(rm_dir):
    import torch

    s = load_scorer(rm_dir)
    assert s.device == "cpu" and next(s.model.parameters()).dtype == torch.float32
    b = load_scorer(rm_dir, RMPlacement(where="trainer", dtype="bfloat16"), trainer_device="cpu")
    assert next(b.model.parameters()).dtype == torch.bfloat16
    s32, s16 = s.score(PROMPTS, TRACES), b.score(PROMPTS, TRACES)
    assert all(isinstance(x, float) and math.isfinite(x) for x in s16)
    assert s16 == pytest.approx(s32, abs=0.1)  # bf16 is close to float32


def test_scoring_is_batched_and_order_preserving(rm_dir):
    one = load_scorer(rm_dir, RMPlacement(batch_size=1))
    two = load_scorer(rm_dir, RMPlacement(batch_size=2))
    a, b = one.score(PROMPTS, TRACES), two.score(PROMPTS, TRACES)
    assert one.forward_passes == 5 and two.forward_passes == 3  # ceil(5 / 2)
    assert a == pytest.approx(b, abs=1e-4)  # padding changes nothing
    # order: each score belongs to its own trace (sorting by length is undone)
    assert two.score(PROMPTS[::-1], TRACES[::-1]) == pytest.approx(b[::-1], abs=1e-4)


def test_endpoint_client_equals_local_scoring(rm_dir, server):
    local = load_scorer(rm_dir).score(PROMPTS, TRACES)
    client = load_scorer(rm_dir, RMPlacement(where="endpoint", endpoint=server.url, batch_size=2))
    assert isinstance(client, EndpointScorer)
    assert client.health()["dtype"] == "float32"
    assert client.score(PROMPTS, TRACES) == pytest.approx(local, abs=1e-5)
    assert client.requests == 3  # 5 traces, 2 per request


def test_endpoint_errors_are_raised_naming_the_url(server):
    client = EndpointScorer(server.url)
    with pytest.raises(RuntimeError, match="HTTP 400 bad request"):
        client.call("/score", {"prompts": ["a"], "traces": []})
    with pytest.raises(RuntimeError, match="HTTP 404"):
        client.call("/nothing")
    dead = EndpointScorer("http://127.0.0.1:9", timeout_s=2)  # the discard port: refused
    with pytest.raises(RuntimeError, match="http://127.0.0.1:9/health unreachable"):
        dead.health()


def test_endpoint_that_does_not_answer_fails_at_load(tmp_path):
    from recode_lib.rewards import RewardConfigError
    from recode_lib.rewards.process import load_scorer as reward_load_scorer

    p = RMPlacement(where="endpoint", endpoint="http://127.0.0.1:9", timeout_s=2)
    with pytest.raises(RewardConfigError, match="does not load: RuntimeError: .*unreachable"):
        reward_load_scorer(tmp_path / "anywhere", p)


def test_gated_reward_through_an_endpoint_records_server_failures(server):
    """The gated reward scores through the client; a server-side failure is a recorded 0."""
    from recode_lib.core.prompts import format_response
    from recode_lib.rewards import gated_reward
    from recode_lib.rewards.execution import SandboxRunner

    good = format_response("Add.", "def add(a, b):\n    return a + b")
    tests = {"kind": "call", "fn_name": "add", "cases": [{"args": [1, 2], "expected": 3}]}
    problem = Problem(id="t/add", source="t", prompt="Add.", tests=tests)
    fn = gated_reward(runner=SandboxRunner(workers=1), scorer=EndpointScorer(server.url))
    rows = fn.details(["p"], [good], problem=[problem])
    assert rows[0]["out"] == 1.0 and 0.0 < rows[0]["proc"] < 1.0

    class Broken:
        def score(self, prompts, traces):
            raise MemoryError("CUDA out of memory")

    server.scorer = Broken()
    rows = fn.details(["p"], [good], problem=[problem])
    assert (
        rows[0]["proc"] == 0.0 and "HTTP 500 MemoryError: CUDA out of memory" in rows[0]["reason"]
    )


def test_shard_hands_the_model_to_deepspeed_only_under_zero3(rm_dir, monkeypatch):
    from types import SimpleNamespace

    import trl.models

    scorer = load_scorer(rm_dir)
    plain = SimpleNamespace(state=SimpleNamespace(deepspeed_plugin=None), device="cpu")
    assert scorer.shard(plain) is False and scorer.collective is False
    calls = []
    monkeypatch.setattr(
        trl.models, "prepare_deepspeed", lambda model, acc: calls.append(acc) or model
    )
    zero2 = SimpleNamespace(
        state=SimpleNamespace(deepspeed_plugin=SimpleNamespace(zero_stage=2)), device="cpu"
    )
    assert scorer.shard(zero2) is False and not calls
    zero3 = SimpleNamespace(
        state=SimpleNamespace(deepspeed_plugin=SimpleNamespace(zero_stage=3)), device="cpu"
    )
    assert scorer.shard(zero3) is True and calls == [zero3] and scorer.collective


def test_rm_in_bf16_on_the_gpu(rm_dir):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA (the RM on the trainer's accelerator)")
    s = load_scorer(rm_dir, RMPlacement(where="trainer"), trainer_device="cuda:0")
    assert s.device == "cuda:0" and next(s.model.parameters()).dtype == torch.bfloat16
    ref = load_scorer(rm_dir).score(PROMPTS, TRACES)
    assert s.score(PROMPTS, TRACES) == pytest.approx(ref, abs=0.1)


def test_an_endpoint_needs_no_local_checkpoint(server):
    from recode_lib.rewards.process import load_scorer as reward_load_scorer

    client = reward_load_scorer(None, RMPlacement(where="endpoint", endpoint=server.url))
    assert len(client.score(["p"], ["t"])) == 1


def test_scoring_outside_training_follows_the_recipe_placement_but_never_shards(rm_dir):
    import torch

    from recode_lib.process_reward.scale import load_eval_scorer

    plain = load_eval_scorer(rm_dir)  # no placement: CPU float32
    assert plain.device == "cpu" and next(plain.model.parameters()).dtype == torch.float32
    sharded = load_eval_scorer(rm_dir, RMPlacement(where="trainer", dtype="bfloat16", zero3=True))
    assert sharded.device == ("cuda:0" if torch.cuda.is_available() else "cpu")
    assert next(sharded.model.parameters()).dtype == torch.bfloat16  # the recipe's dtype
    assert sharded.score(PROMPTS, TRACES) == pytest.approx(plain.score(PROMPTS, TRACES), abs=0.1)


def test_scoring_outside_training_uses_the_recipe_endpoint(rm_dir, server):
    from recode_lib.process_reward.scale import load_eval_scorer

    remote = load_eval_scorer("", RMPlacement(where="endpoint", endpoint=server.url))
    assert isinstance(remote, EndpointScorer)
    assert remote.score(PROMPTS, TRACES) == pytest.approx(
        load_scorer(rm_dir).score(PROMPTS, TRACES), abs=1e-4
    )


def test_a_non_resident_scorer_scores_exactly_as_a_resident_one_and_holds_no_model(rm_dir):
    kept = load_scorer(rm_dir)
    loaded = load_scorer(rm_dir, RMPlacement(resident=False))
    assert loaded.model is None and loaded.loads == 1  # checked at start, then released
    assert loaded.score(PROMPTS, TRACES) == kept.score(PROMPTS, TRACES)  # bit-identical
    assert loaded.model is None and loaded.loads == 2  # loaded for the call, released after
    assert loaded.score([], []) == [] and loaded.loads == 2  # nothing to score: no load


def test_a_non_resident_scorer_refuses_a_reward_model_changed_on_disk(rm_dir, tmp_path):
    import os
    import shutil

    from recode_lib.core.errors import RecodeError

    rm = tmp_path / "rm"
    shutil.copytree(rm_dir, rm)
    scorer = load_scorer(rm, RMPlacement(resident=False))
    weights = next(rm.glob("*.safetensors"))
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    with pytest.raises(RecodeError, match="changed on disk"):
        scorer.score(PROMPTS, TRACES)


@pytest.mark.parametrize(
    "placement",
    [
        RMPlacement(where="endpoint", endpoint="http://h:1", resident=False),
        RMPlacement(where="trainer", zero3=True, resident=False),
    ],
)
def test_non_resident_is_refused_where_nothing_local_is_reloaded(placement):
    with pytest.raises(ValueError, match="rm_resident: false"):
        placement.validate()
