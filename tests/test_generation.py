"""Generation interface, the transformers backend (tiny random model) and the resumable cache."""

from __future__ import annotations

import pytest

from recode_lib.core.jsonl import read_jsonl
from recode_lib.generation import CachedGenerator, SamplingConfig, get_generator, sample_seed
from recode_lib.generation.base import cut_at_stop
from recode_lib.generation.hf import HFGenerator

PROMPTS = [[{"role": "user", "content": "def add(a, b): " * k}] for k in (1, 6, 3)]


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    """The tiny model is 20-50x faster on one thread when the 2 cores are shared."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def hf(tiny_model_dir):
    return HFGenerator(str(tiny_model_dir), batch_size=4, memo=False)  # every call generates


def test_sampling_config_rejects_bad_values_naming_the_field():
    for kw, field in [
        ({"temperature": -1}, "temperature"),
        ({"top_p": 0}, "top_p"),
        ({"n": 0}, "n"),
        ({"max_new_tokens": 1.5}, "max_new_tokens"),
        ({"stop": [""]}, "stop"),
    ]:
        with pytest.raises(ValueError, match=field):
            SamplingConfig(**kw)


def test_sample_seed_depends_on_seed_prompt_and_index_only():
    p, q = PROMPTS[0], PROMPTS[1]
    seeds = {sample_seed(0, p, 0), sample_seed(0, p, 1), sample_seed(1, p, 0), sample_seed(0, q, 0)}
    assert len(seeds) == 4
    assert sample_seed(0, p, 3) == sample_seed(0, [dict(m) for m in p], 3)
    assert SamplingConfig(n=2).sample_key() == SamplingConfig(n=8).sample_key()


def test_cut_at_stop_uses_the_earliest_stop_string():
    assert cut_at_stop("abc```x\n###", ["###", "```"]) == ("abc", True)
    assert cut_at_stop("abc", ["z"]) == ("abc", False)


def test_hf_results_keep_input_order_and_shape(hf):
    s = SamplingConfig(temperature=0, max_new_tokens=8, n=2)
    out = hf.generate(PROMPTS, s)
    assert [len(r) for r in out] == [2, 2, 2]
    rev = hf.generate(PROMPTS[::-1], s)
    assert [r[0].text for r in rev] == [r[0].text for r in out][::-1]
    for r in out:
        assert r[0] == r[1]  # greedy: every index gives the same text
        assert 1 <= r[0].n_tokens <= 8 and r[0].finish_reason in ("stop", "length")


def test_hf_sample_does_not_depend_on_batch_composition(hf, tiny_model_dir):
    s = SamplingConfig(temperature=1.0, top_p=0.9, max_new_tokens=12, n=3, seed=7)
    full = hf.generate(PROMPTS, s)
    texts = {r.text for row in full for r in row}
    assert len(texts) > 3  # sampling actually varies across samples
    alone = HFGenerator(str(tiny_model_dir), batch_size=1)
    req = alone.requests_for([PROMPTS[1]], s, indices=[2])
    assert alone.generate_samples(req, s) == [full[1][2]]
    other_seed = hf.generate(
        PROMPTS, SamplingConfig(temperature=1.0, max_new_tokens=12, n=3, seed=8)
    )
    assert other_seed != full


def test_hf_budget_gives_length_finish(hf):
    out = hf.generate(PROMPTS, SamplingConfig(temperature=1.0, max_new_tokens=5, n=4, seed=1))
    for row in out:
        for c in row:
            assert c.n_tokens <= 5
            if c.finish_reason == "length":
                assert c.n_tokens == 5


def test_hf_stop_string_cuts_the_text(hf):
    s = SamplingConfig(temperature=1.0, max_new_tokens=24, seed=5)
    base = hf.generate([PROMPTS[1]], s)[0][0]
    text = base.text
    assert len(text) >= 8, "tiny model produced too little text to pick a stop string"
    stop = next(text[i : i + 3] for i in range(2, len(text) - 3) if text[i : i + 3].strip())
    cut = hf.generate(
        [PROMPTS[1]], SamplingConfig(temperature=1.0, max_new_tokens=24, seed=5, stop=(stop,))
    )[0][0]
    assert cut.text == text[: text.find(stop)]
    assert cut.finish_reason == "stop" and cut.n_tokens <= base.n_tokens


class _Counting(HFGenerator):
    """The real backend, counting samples and optionally failing on the k-th batch."""

    def __init__(self, *a, fail_on_batch=None, **kw):
        super().__init__(*a, **kw)
        self.generated, self.batches, self.fail_on_batch = 0, 0, fail_on_batch

    def _generate_batch(self, texts, seeds, sampling):
        self.batches += 1
        if self.batches == self.fail_on_batch:
            raise KeyboardInterrupt("simulated interruption")
        self.generated += len(texts)
        return super()._generate_batch(texts, seeds, sampling)


def test_cache_resumes_and_extends(tiny_model_dir, tmp_path):
    path = tmp_path / "gen.jsonl"
    s = SamplingConfig(temperature=1.0, max_new_tokens=10, n=2, seed=3)
    ref = HFGenerator(str(tiny_model_dir), batch_size=2).generate(PROMPTS, s)

    flaky = _Counting(str(tiny_model_dir), batch_size=2, fail_on_batch=2)
    with pytest.raises(KeyboardInterrupt):
        CachedGenerator(flaky, path).generate(PROMPTS, s)
    assert len(read_jsonl(path)) == 2  # the first batch survived the crash

    resumed = _Counting(str(tiny_model_dir), batch_size=2)
    out = CachedGenerator(resumed, path).generate(PROMPTS, s)
    assert resumed.generated == 4 and out == ref

    again = _Counting(str(tiny_model_dir), batch_size=2)
    assert CachedGenerator(again, path).generate(PROMPTS, s) == ref and again.generated == 0

    more = _Counting(str(tiny_model_dir), batch_size=2)
    s4 = SamplingConfig(temperature=1.0, max_new_tokens=10, n=4, seed=3)
    out4 = CachedGenerator(more, path).generate(PROMPTS, s4)
    assert more.generated == 6 and [row[:2] for row in out4] == ref
    rows = read_jsonl(path)
    assert len(rows) == 12 and len({r["id"] for r in rows}) == 12
    assert {"model", "prompt", "index", "sampling", "text", "n_tokens", "finish_reason"} <= set(
        rows[0]
    )


def test_cache_key_separates_models_and_sampling(tiny_model_dir, tmp_path):
    path = tmp_path / "gen.jsonl"
    s = SamplingConfig(temperature=0, max_new_tokens=4)
    a = _Counting(str(tiny_model_dir))
    CachedGenerator(a, path, model_key="m1").generate(PROMPTS[:1], s)
    b = _Counting(str(tiny_model_dir))
    CachedGenerator(b, path, model_key="m2").generate(PROMPTS[:1], s)
    c = _Counting(str(tiny_model_dir))
    CachedGenerator(c, path, model_key="m2").generate(PROMPTS[:1], SamplingConfig(max_new_tokens=5))
    assert (a.generated, b.generated, c.generated) == (1, 1, 1)


def test_get_generator_names_unknown_backend(tiny_model_dir, tmp_path):
    with pytest.raises(ValueError, match="unknown generation backend 'tgi'"):
        get_generator("tgi", "x")
    gen = get_generator("hf", str(tiny_model_dir), cache=tmp_path / "c.jsonl", batch_size=2)
    assert isinstance(gen, CachedGenerator) and gen.backend == "hf"


def test_hf_memo_answers_a_repeated_request_without_generating_until_a_weight_changes(
    tiny_model_dir,
):
    import torch

    gen = _Counting(str(tiny_model_dir), batch_size=2)  # loads its own weights: memo on
    s = SamplingConfig(temperature=1.0, max_new_tokens=8, n=2, seed=4)
    first = gen.generate(PROMPTS, s)
    assert gen.generated == 6 and gen.generated_tokens == sum(c.n_tokens for r in first for c in r)
    tokens = gen.generated_tokens
    assert gen.generate(PROMPTS[::-1], s) == first[::-1]  # a benchmark's subset, reordered
    assert gen.generated == 6 and gen.generated_tokens == tokens  # no forward pass
    assert (
        gen.generate(PROMPTS, SamplingConfig(temperature=1.0, max_new_tokens=8, n=2, seed=5))
        != first
        and gen.generated == 12
    )  # another seed is another request
    greedy = gen.generate(PROMPTS, SamplingConfig(temperature=0, max_new_tokens=8, n=3))
    assert gen.generated == 15  # greedy: one generation per prompt
    assert all(r[0] == r[1] == r[2] for r in greedy)
    with torch.no_grad():  # e.g. an optimizer step
        next(gen.lm.parameters()).mul_(1.5)
    gen.generate(PROMPTS, SamplingConfig(temperature=0, max_new_tokens=8, n=3))
    assert gen.generated == 18  # the memo was dropped


def test_hf_memo_is_off_over_a_callers_model_and_bounded(tiny_model_dir):
    own = _Counting(str(tiny_model_dir), batch_size=2, memo_size=2)
    s = SamplingConfig(temperature=0, max_new_tokens=4)
    own.generate(PROMPTS, s)
    own.generate(PROMPTS, s)
    assert own.generated == 4  # 2 remembered, the oldest dropped
    shared = _Counting(str(tiny_model_dir), model_obj=own.lm, tokenizer=own.tok)
    shared.generate(PROMPTS[:1], s)
    shared.generate(PROMPTS[:1], s)
    assert shared.generated == 2  # a policy being trained: no memo
