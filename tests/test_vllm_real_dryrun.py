"""The paper profile's dry run on the real vLLM engine (recode_lib.runner.dryrun, engine "vllm"):
the tiny model loads and generates in vLLM, and a subset of the paper notebooks runs end to
end with every vLLM path on the real engine.

The subset (CI pays ~1 engine start per trained or evaluated model, 25-70 s each on 2 shared
cores): notebook 11 alone, its SETTINGS cut to "agentic" (SUBSET). It is the one notebook
that runs every vLLM path of the paper profile: GRPO with use_vllm in colocate mode (the
launcher dryrun_vllm: TRL's in-process engine samples the rollouts and takes the weights),
evaluation on the vllm backend in a multi-turn setting (tools rendered by the chat template,
tool calls run in the sandbox), and the live alpha sweep (theta_alpha loaded into the running
engine, alpha by alpha). The single setting, the tool setting and the other notebooks' vLLM
use (01's generators, 03's judge, 05/06/09/10's evaluations, 07's sweep) are the same code
on the same engine: `make test-dryrun-vllm` runs all of them (docs/measured.md: its time).
What the real-engine dry run does not run, and why: recode_lib.runner.dryrun.NOT_ON_CPU, written to
the run folder (tests/dryrun_helpers.ENGINE_FILE).
Marked `vllm` and `slow`: `pytest -m vllm`; skipped (saying why) without vllm. The subset test
is also marked `dryrun_engine`: `make test-dryrun-vllm` runs it, CI's `make test-vllm` leaves
it out (~6 min of CI's 30).
"""

from __future__ import annotations

import json

import pytest
import yaml
from dryrun_helpers import ENGINE_FILE, run_dryrun
from vllm_helpers import VLLM_MARKS, Timer, vllm_or_skip

from recode_lib.core.paths import data_dir
from recode_lib.core.run_files import read_metrics
from recode_lib.generation import SamplingConfig, get_generator
from recode_lib.runner.dryrun import NOT_ON_CPU

pytestmark = VLLM_MARKS
SUBSET = {"only": "11", "overrides": {"SETTINGS": "agentic"}}
STEM = "11_settings_sweep"
LOGP = "sampling/sampling_logp_difference/max"


def test_tiny_model_loads_in_the_real_engine_and_generates(tiny_model_dir):
    """The dry run's tiny model (head size 32, tiny_model) in vLLM; the earlier one (4
    heads of 16) was refused by vLLM's CPU attention."""
    vllm_or_skip()
    cfg = json.loads((tiny_model_dir / "config.json").read_text())
    assert cfg["hidden_size"] // cfg["num_attention_heads"] >= 32
    gen = get_generator("vllm", str(tiny_model_dir))
    try:
        with Timer("engine load (tiny model)"):
            gen.engine()
        msgs = [{"role": "user", "content": "write f"}]
        outs = gen.generate([msgs], SamplingConfig(temperature=0.8, n=2, max_new_tokens=12))
    finally:
        gen.close()
    assert [len(o) for o in outs] == [2]
    assert all(c.n_tokens > 0 for c in outs[0])
    assert outs[0][0].text != outs[0][1].text  # two seeds, two samples


@pytest.fixture(scope="module")
def subset(tiny_model_dir, tmp_path_factory):
    vllm_or_skip()
    if data_dir() is None:
        pytest.skip("the dry run needs the benchmark files: set RECODE_DATA_DIR")
    root = tmp_path_factory.mktemp("dryrun_vllm")
    with Timer(f"real-engine dry run, notebook {SUBSET['only']} {SUBSET['overrides']}"):
        run, error = run_dryrun(root, tiny_model_dir, engine="vllm", **SUBSET)
    return root, run, error


@pytest.mark.dryrun_engine  # `make test-dryrun-vllm`; CI runs the tiny-model test above
@pytest.mark.timeout(2400)  # the fixture runs notebook 11 (~6 min at load 9-14 on 2 cores)
def test_real_engine_dryrun_subset_runs_every_vllm_path(subset):
    """Notebook 11 (agentic) completes on the real engine, and its records say so: GRPO
    rollouts from TRL's colocated engine holding the policy's weights (TRL logs the sampler/
    trainer log-prob gap only with use_vllm; float32 both sides: < 1e-3, measured 1e-6), every
    evaluation (the trained runs and each alpha of the live sweep) on the vllm backend (the
    stand-in records "vllm_standin") in the agentic setting; the engine report beside it."""
    root, run, error = subset
    manifest = json.loads((run / "manifest.json").read_text())
    entry = manifest.get(STEM)
    assert entry is not None, error
    assert entry["status"] == "completed", entry.get("error")
    params = yaml.safe_load((root / "dryrun.yaml").read_text())
    assert params["common"]["BACKEND"] == "vllm"
    assert params[STEM]["LAUNCHER"] == "dryrun_vllm"
    out = run / STEM
    headline = json.loads((out / "headline.json").read_text())
    assert headline["settings"] == ["agentic"] and headline["runs"] == ["k1", "kinf"]
    for name in headline["runs"]:
        recipe = yaml.safe_load((out / "agentic" / name / "recipe.yaml").read_text())
        assert recipe["use_vllm"] is True and recipe["vllm_mode"] == "colocate"
        assert recipe["use_cpu"] is True and recipe["vllm_tensor_parallel_size"] == 1
        rows = read_metrics(out / "agentic" / name)
        gaps = [r[LOGP] for r in rows if LOGP in r]
        assert gaps and max(gaps) < 1e-3, (name, gaps)
    summaries = sorted(out.rglob("summary.json"))
    alpha = [p for p in summaries if "/alpha/" in str(p)]
    assert len(alpha) == len(headline["alphas"]) == 4  # every alpha of the live sweep
    assert len(summaries) > len(alpha)  # and the trained runs' evaluations
    for path in summaries:
        summary = json.loads(path.read_text())
        assert summary["provenance"]["config"]["backend"] == "vllm", path
        assert summary["setting"] == "agentic" and summary["n_samples"] >= 1, path
    report = json.loads((run / ENGINE_FILE).read_text())
    assert report["engine"] == "vllm" and report["not_real_engine"] == NOT_ON_CPU
    assert "tensor parallelism" in (root / "dryrun.yaml").read_text()
