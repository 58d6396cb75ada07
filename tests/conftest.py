"""Shared pytest fixtures: a tiny random model built offline, runs/cache dirs in tmp."""

from __future__ import annotations

import os

import pytest

from recode_lib.paths import data_dir


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A tiny random Qwen2 causal LM with a real BPE tokenizer and ChatML template."""
    from recode_lib.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny_model"))


@pytest.fixture(scope="session")
def shared_data_dir():
    """The real benchmark files; skips when absent (a fresh clone has no ../shared)."""
    d = data_dir()
    if d is None or not d.is_dir():
        pytest.skip("benchmark data not found: set RECODE_DATA_DIR or place it at ../shared/data")
    return d


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path, monkeypatch):
    """Tests never write into the user's runs/ (the model cache stays shared on purpose)."""
    monkeypatch.setenv("RECODE_RUNS_DIR", str(tmp_path / "runs"))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
