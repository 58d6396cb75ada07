"""recode_lib.weights.merge: one-pass multi-alpha weight interpolation/extrapolation."""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from recode_lib.weights import merge as M

ALPHAS = (-1.0, 0.0, 0.3, 1.0, 2.5)


def _tiny(
    path: Path,
    *,
    seed: int,
    tied: bool = True,
    dtype=torch.bfloat16,
    hidden: int = 32,
    shard: str | None = None,
) -> Path:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=96,
        hidden_size=hidden,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=tied,
    )
    model = LlamaForCausalLM(cfg).to(dtype)
    kw = {"max_shard_size": shard} if shard else {}
    model.save_pretrained(path, **kw)
    (path / "tokenizer.json").write_text('{"fake": "tokenizer"}\n')
    (path / "chat_template.jinja").write_text("{{ messages }}")
    return path


def _state(folder: Path) -> dict[str, torch.Tensor]:
    if (folder / M.INDEX_NAME).exists():
        files = set(json.loads((folder / M.INDEX_NAME).read_text())["weight_map"].values())
    else:
        files = {M.SINGLE_NAME}
    out = {}
    for f in sorted(files):
        out.update(load_file(folder / f))
    return out


def _reference(low, high, alpha):
    return {
        k: (lo.float() + alpha * (high[k].float() - lo.float())).to(lo.dtype)
        if lo.is_floating_point()
        else lo
        for k, lo in low.items()
    }


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("pair")
    return _tiny(root / "low", seed=0), _tiny(root / "high", seed=1)


@pytest.mark.parametrize("chunk", [1 << 16, 1000])  # 1000: tensors span uneven chunks
def test_every_alpha_equals_float32_reference_bit_for_bit(pair, tmp_path, chunk):
    low, high = pair
    done = M.merge_grid(
        M.MergeConfig(str(low), str(high), ALPHAS, str(tmp_path), progress=False, chunk_elems=chunk)
    )
    lo, hi = _state(low), _state(high)
    assert "lm_head.weight" not in lo  # tied: no separate head
    for a in ALPHAS:
        got, want = _state(done[a]), _reference(lo, hi, a)
        assert set(got) == set(want)
        for k in want:
            assert got[k].dtype == torch.bfloat16
            assert torch.equal(got[k].view(torch.int16), want[k].view(torch.int16)), (a, k)
    # alpha 0 reproduces the low endpoint exactly
    assert all(torch.equal(v, lo[k]) for k, v in _state(done[0.0]).items())


def test_outputs_are_complete_hf_folders(pair, tmp_path):
    from transformers import AutoModelForCausalLM

    low, high = pair
    done = M.merge_grid(M.MergeConfig(str(low), str(high), (1.5,), str(tmp_path), progress=False))
    folder = done[1.5]
    assert folder.name == "alpha_1.5"
    for name in ("config.json", "generation_config.json", "tokenizer.json", "chat_template.jinja"):
        assert (folder / name).read_bytes() == (low / name).read_bytes()
    info = json.loads((folder / "merge_info.json").read_text())
    assert info["alpha"] == 1.5
    model = AutoModelForCausalLM.from_pretrained(folder)
    want = _reference(_state(low), _state(high), 1.5)
    assert torch.equal(model.model.embed_tokens.weight, want["model.embed_tokens.weight"])
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()


def test_float32_source_stays_float32(tmp_path):
    low = _tiny(tmp_path / "l", seed=0, dtype=torch.float32, tied=False)
    high = _tiny(tmp_path / "h", seed=2, dtype=torch.float32, tied=False)
    done = M.merge_grid(
        M.MergeConfig(str(low), str(high), (-0.5,), str(tmp_path / "o"), progress=False)
    )
    got, want = _state(done[-0.5]), _reference(_state(low), _state(high), -0.5)
    assert "lm_head.weight" in got
    assert all(got[k].dtype == torch.float32 and torch.equal(got[k], want[k]) for k in want)


def test_sharded_source_keeps_shards_and_index(tmp_path):
    low = _tiny(tmp_path / "l", seed=0, shard="20KB")
    high = _tiny(tmp_path / "h", seed=1, shard="20KB")
    src_index = json.loads((low / M.INDEX_NAME).read_text())
    assert len(set(src_index["weight_map"].values())) > 1
    done = M.merge_grid(
        M.MergeConfig(str(low), str(high), (0.5, 2.0), str(tmp_path / "o"), progress=False)
    )
    for a, folder in done.items():
        index = json.loads((folder / M.INDEX_NAME).read_text())
        assert index["weight_map"] == src_index["weight_map"]
        got, want = _state(folder), _reference(_state(low), _state(high), a)
        assert all(torch.equal(got[k], want[k]) for k in want)


def test_large_unsharded_source_is_written_sharded(pair, tmp_path):
    from transformers import AutoModelForCausalLM

    low, high = pair
    done = M.merge_grid(
        M.MergeConfig(
            str(low), str(high), (0.25,), str(tmp_path), max_shard_bytes=16_000, progress=False
        )
    )
    index = json.loads((done[0.25] / M.INDEX_NAME).read_text())
    shards = sorted(set(index["weight_map"].values()))
    assert len(shards) > 1 and not (done[0.25] / M.SINGLE_NAME).exists()
    assert index["metadata"]["total_size"] == sum(
        t.numel() * t.element_size() for t in _state(low).values()
    )
    model = AutoModelForCausalLM.from_pretrained(done[0.25])
    want = _reference(_state(low), _state(high), 0.25)
    assert torch.equal(model.model.norm.weight, want["model.norm.weight"])


def test_non_float_tensors_are_copied(tmp_path):
    for name, seed in (("l", 0), ("h", 1)):
        (tmp_path / name).mkdir()
        torch.manual_seed(seed)
        save_file(
            {
                "w": torch.randn(4, 3).to(torch.bfloat16),
                "ids": torch.arange(5, dtype=torch.int64) + seed,
                "mask": torch.tensor([True, False, bool(seed)]),
            },
            tmp_path / name / M.SINGLE_NAME,
            metadata={"format": "pt"},
        )
    done = M.merge_grid(
        M.MergeConfig(
            str(tmp_path / "l"),
            str(tmp_path / "h"),
            (3.0, 0.5),
            str(tmp_path / "o"),
            progress=False,
            chunk_elems=2,
        )
    )
    got, lo = _state(done[3.0]), _state(tmp_path / "l")
    assert torch.equal(got["ids"], lo["ids"]) and torch.equal(got["mask"], lo["mask"])
    assert torch.equal(got["w"], _reference(lo, _state(tmp_path / "h"), 3.0)["w"])


@pytest.mark.parametrize(
    "kind, match",
    [
        ("tied", "tied embeddings"),
        ("shape", "shape"),
        ("dtype", "dtype"),
        ("arch", "model_type"),
        ("bin", "re-save"),
    ],
)
def test_mismatches_fail_before_writing(pair, tmp_path, kind, match):
    low, _ = pair
    other = tmp_path / "other"
    if kind == "tied":
        _tiny(other, seed=1, tied=False)
    elif kind == "shape":
        _tiny(other, seed=1, hidden=48)
    elif kind == "dtype":
        _tiny(other, seed=1, dtype=torch.float32)
    elif kind == "arch":
        _tiny(other, seed=1)
        cfg = json.loads((other / "config.json").read_text())
        cfg["model_type"], cfg["architectures"] = "mistral", ["MistralForCausalLM"]
        (other / "config.json").write_text(json.dumps(cfg))
    else:
        _tiny(other, seed=1)
        (other / M.SINGLE_NAME).rename(other / "pytorch_model.bin")
    out = tmp_path / "out"
    with pytest.raises(M.MergeError, match=match):
        M.merge_grid(M.MergeConfig(str(low), str(other), (0.5,), str(out), progress=False))
    assert not out.exists()


def test_not_enough_disk_space_fails_before_writing(pair, tmp_path, monkeypatch):
    low, high = pair
    usage = collections.namedtuple("usage", "total used free")(10, 10, 1000)  # 1000 bytes free
    monkeypatch.setattr(M.shutil, "disk_usage", lambda p: usage)
    with pytest.raises(M.MergeError, match="only 0.00 GB free"):
        M.merge_grid(M.MergeConfig(str(low), str(high), (0.5, 1.5), str(tmp_path / "o")))
    assert not (tmp_path / "o").exists()


def test_resume_skips_complete_outputs_and_force_rebuilds(pair, tmp_path):
    low, high = pair
    cfg = M.MergeConfig(str(low), str(high), (0.0, 0.5), str(tmp_path), progress=False)
    M.merge_grid(cfg)
    marker = tmp_path / "alpha_0.5" / "marker"
    marker.write_text("x")
    stale = tmp_path / ".alpha_2.0.tmp"  # what a crash mid-merge leaves behind
    stale.mkdir()
    (stale / M.SINGLE_NAME).write_bytes(b"partial")
    cfg.alphas = (0.0, 0.5, 2.0)
    M.merge_grid(cfg)
    assert marker.exists()  # skipped, untouched
    assert not stale.exists()
    assert torch.equal(
        _state(tmp_path / "alpha_2.0")["model.norm.weight"],
        _reference(_state(low), _state(high), 2.0)["model.norm.weight"],
    )
    cfg.force = True
    M.merge_grid(cfg)
    assert not marker.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alpha_0.0", "alpha_0.5", "alpha_2.0"]


def test_duplicate_alphas_rejected(pair, tmp_path):
    low, high = pair
    with pytest.raises(M.MergeError, match="duplicate"):
        M.merge_grid(M.MergeConfig(str(low), str(high), (0.5, 0.5), str(tmp_path)))
    with pytest.raises(M.MergeError, match="finite"):
        M.merge_grid(M.MergeConfig(str(low), str(high), (float("nan"),), str(tmp_path)))


def test_cli(pair, tmp_path, capsys):
    from recode_lib.cli import main

    low, high = pair
    rc = main(
        [
            "merge",
            "--low",
            str(low),
            "--high",
            str(high),
            "--alpha",
            "-0.5",
            "--alpha",
            "0.5,1.5",
            "--out",
            str(tmp_path / "o"),
            "--no-progress",
        ]
    )
    assert rc == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        "alpha_-0.5",
        "alpha_0.5",
        "alpha_1.5",
    ]
    rc = main(
        [
            "merge",
            "--low",
            str(low),
            "--high",
            str(tmp_path),
            "--alpha",
            "1",
            "--out",
            str(tmp_path / "o2"),
        ]
    )
    assert rc == 2 and "no model.safetensors" in capsys.readouterr().err


def _mergekit_yaml() -> str | None:
    for cand in (
        os.environ.get("RECODE_MERGEKIT_YAML"),
        shutil.which("mergekit-yaml"),
        "/tmp/mergekit-venv/bin/mergekit-yaml",
    ):
        if cand and Path(cand).exists():
            return cand
    return None


@pytest.mark.skipif(
    _mergekit_yaml() is None,
    reason="mergekit not installed (set RECODE_MERGEKIT_YAML or install "
    "mergekit==0.1.5 into /tmp/mergekit-venv)",
)
def test_matches_mergekit_task_arithmetic(pair, tmp_path):
    low, high = pair
    alpha = -0.75
    cfg = tmp_path / "mk.yml"
    cfg.write_text(
        f"merge_method: task_arithmetic\nbase_model: {low}\nmodels:\n"
        f"  - model: {high}\n    parameters:\n      weight: {alpha}\n"
        "parameters:\n  normalize: false\ndtype: float32\nout_dtype: bfloat16\n"
    )
    subprocess.run(
        [_mergekit_yaml(), str(cfg), str(tmp_path / "mk"), "--quiet"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    done = M.merge_grid(
        M.MergeConfig(str(low), str(high), (alpha,), str(tmp_path / "ours"), progress=False)
    )
    ours, theirs = _state(done[alpha]), _state(tmp_path / "mk")
    assert set(ours) == set(theirs)
    for k in ours:
        assert torch.equal(ours[k].view(torch.int16), theirs[k].view(torch.int16)), k
