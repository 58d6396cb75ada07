"""The math protocol: train on a math training set (public via `datasets`, or generated offline),
never on AIME; evaluate AIME with n samples per problem (avg@n, pass@k, bootstrap CIs)."""

import json
import math
import re

import pytest

from recode_lib.core.math_answers import answer_correct
from recode_lib.data import DataError, load_benchmark
from recode_lib.data.math_synth import FAMILIES, load_math_synth
from recode_lib.data.math_train import (
    assert_disjoint,
    decontaminate,
    load_math_train,
    math_train_eval,
    normalise_statement,
)
from recode_lib.evaluation.math import math_summary, score_math_response
from recode_lib.metrics import pass_at_k, pass_at_k_ci

# rows shaped like DigitalLearningGmbH/MATH-lighteval (problem, level, solution, type)
MATH_ROWS = [
    {
        "problem": "What is $1+2$?",
        "level": "Level 1",
        "type": "Algebra",
        "solution": "We add: $1+2=\\boxed{3}$.",
    },
    {
        "problem": "Compute $\\dbinom{5}{2}$.",
        "level": "Level 2",
        "type": "Counting & Probability",
        "solution": "$\\dbinom{5}{2}=\\frac{5\\cdot 4}{2}=\\boxed{10}$.",
    },
    {
        "problem": "Simplify $\\frac{6}{8}$.",
        "level": "Level 1",
        "type": "Prealgebra",
        "solution": "Divide by 2: $\\boxed{\\frac{3}{4}}$.",
    },
]


def _write_parquet(path, rows):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


def test_math_synth_is_deterministic_and_its_answers_are_exact():
    a, b = load_math_synth(limit=80, seed=3), load_math_synth(limit=40, seed=3)
    assert [p.to_dict() for p in a[:40]] == [p.to_dict() for p in b]  # prefix-stable
    assert [p.prompt for p in load_math_synth(limit=80, seed=4)] != [p.prompt for p in a]
    assert {p.metadata["family"] for p in a} == set(FAMILIES)
    assert len({p.id for p in a}) == 80 and all(p.id.startswith("math_synth/3-") for p in a)
    for p in a:  # recompute each answer from the statement
        nums = [int(x) for x in re.findall(r"-?\d+", p.prompt.replace("$", " "))]
        fam, ans = p.metadata["family"], int(p.answer)
        if fam == "arithmetic":
            x, y, z = nums[:3]
            assert ans == (x * y + z if "+" in p.prompt else x * y - z)
        elif fam == "modular":
            assert ans == pow(nums[0], nums[1], nums[2])
        elif fam == "combinatorics":
            assert ans == math.comb(nums[1], nums[0])
        else:
            coef, rhs = nums[0], nums[2]
            b_ = nums[1] if " + " in p.prompt else -nums[1]
            assert coef * ans + b_ == rhs
        assert answer_correct(f"<think>so</think> \\boxed{{{p.answer}}}", p.answer)[0]
        assert p.tests["kind"] == "script"  # never passes the code sandbox
    assert load_benchmark("math_synth", limit=5, seed=3)[4].prompt == a[4].prompt


def test_math_train_reads_a_local_copy_in_the_upstream_format(tmp_path):
    # a hub snapshot folder at <data dir>/<hub id>, as `huggingface-cli download` writes it
    _write_parquet(
        tmp_path / "DigitalLearningGmbH/MATH-lighteval/data/train-00000-of-00001.parquet", MATH_ROWS
    )
    _write_parquet(
        tmp_path / "DigitalLearningGmbH/MATH-lighteval/data/test-00000-of-00001.parquet",
        MATH_ROWS[:1],
    )
    probs = load_benchmark("math_train", data_dir=tmp_path)
    assert [p.answer for p in probs] == ["3", "10", "\\frac{3}{4}"]
    assert probs[1].difficulty == "Level 2" and probs[1].metadata["type"].startswith("Counting")
    assert len(load_benchmark("math_train", data_dir=tmp_path, split="test")) == 1
    assert len(load_math_train(data_dir=tmp_path, limit=2)) == 2
    # an explicit file; GSM8K- and DeepScaleR-style rows
    f = tmp_path / "mixed.jsonl"
    f.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"question": "Tom has 3 apples and buys 4. How many?", "answer": "3+4=7\n#### 7"},
                {"problem": "Find $x$ if $2x=8$.", "answer": "4", "id": "ds-1"},
            ]
        )
        + "\n"
    )
    got = load_math_train(dataset=str(f))
    assert [p.answer for p in got] == ["7", "4"] and got[1].id == "math_train/ds-1"
    f.write_text(json.dumps({"problem": "no answer here", "solution": "none"}) + "\n")
    with pytest.raises(DataError, match=r"mixed\.jsonl record 0: no answer"):
        load_math_train(dataset=str(f))


def test_math_train_names_the_hub_dataset_when_it_cannot_be_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError, match="no-such-org/no-such-math"):
        load_math_train(data_dir=tmp_path, dataset="no-such-org/no-such-math")


def test_decontamination_removes_overlapping_training_problems():
    from recode_lib.data.schema import Problem

    def prob(i, text):
        return Problem(
            id=i, source=i.split("/")[0], prompt=text, tests={"kind": "script", "script": ""}
        )

    aime = [
        prob(
            "aime24/1",
            "Let $ABC$ be a triangle inscribed in circle $\\omega$ with sides "
            "five nine and ten; find the length of segment AP as m over n.",
        )
    ]
    train = [
        prob("math_train/0", "What is $1+2$?"),
        prob(
            "math_train/1",
            "  LET $ABC$ be a triangle inscribed in circle $\\omega$ with sides "
            "five nine and ten; find the length of segment AP as m over n. ",
        ),
        prob(
            "math_train/2",
            "Hint: let abc be a triangle inscribed in circle omega with sides "
            "five nine and ten. Solve it.",
        ),
        prob("aime24/1", "renamed copy"),
    ]
    kept, removed = decontaminate(train, aime)
    assert [p.id for p in kept] == ["math_train/0"]
    assert {r["id"]: r["reason"] for r in removed} == {
        "math_train/1": "same statement",
        "math_train/2": "shares a 13-gram",
        "aime24/1": "same id",
    }
    with pytest.raises(ValueError, match="overlap the held-out set"):
        assert_disjoint(train, aime)
    assert_disjoint(kept, aime)


def test_math_training_never_contains_aime(shared_data_dir, tmp_path):
    aime = load_benchmark("aime24")
    # smoke: the generated set; paper: a public set, here a local copy contaminated on purpose
    train, held, rep = math_train_eval("math_synth", 64, 0)
    assert len(train) == 64 and len(held) == 30
    rows = MATH_ROWS + [{"problem": aime[3].prompt, "solution": f"\\boxed{{{aime[3].answer}}}"}]
    _write_parquet(tmp_path / "math/train.parquet", rows)
    train2, held2, rep2 = math_train_eval("math_train", 0, 0, dataset=str(tmp_path / "math"))
    assert len(train2) == 3 and [r["held_out_id"] for r in rep2["removed_overlapping"]] == [
        aime[3].id
    ]
    aime_ids = {p.id for p in aime}
    aime_text = {normalise_statement(p.prompt) for p in aime}
    for t in (train, train2):
        assert not {p.id for p in t} & aime_ids
        assert not {normalise_statement(p.prompt) for p in t} & aime_text
        assert all(p.source != "aime24" for p in t)
    with pytest.raises(ValueError, match="never train on the evaluation benchmark"):
        math_train_eval("aime24", 4, 4)


def test_pass_at_k_ci_is_a_bootstrap_over_problems():
    counts = {f"p{i}": (8, c) for i, c in enumerate([0, 0, 1, 2, 8, 4, 0, 3])}
    v, lo, hi = pass_at_k_ci(counts, 4, n_boot=500, seed=1)
    assert v == pytest.approx(sum(pass_at_k(8, c, 4) for _, c in counts.values()) / 8)
    assert lo <= v <= hi and hi - lo > 0.05
    assert pass_at_k_ci(counts, 4, n_boot=500, seed=1) == (v, lo, hi)
    assert pass_at_k_ci({"a": (4, 4), "b": (4, 4)}, 2, n_boot=50) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="problem 'p0': pass@9 is undefined"):
        pass_at_k_ci(counts, 9)


def test_math_summary_reports_avg_at_n_and_pass_at_k_with_intervals():
    rows = [
        {
            "problem_id": pid,
            "correct": ok,
            "format_ok": True,
            "n_tokens": 10,
            "finish_reason": "length" if pid == "b" and i == 0 else "stop",
        }
        for pid, oks in {"a": [1, 0, 0, 0], "b": [0, 0, 0, 0], "c": [1, 1, 0, 1]}.items()
        for i, ok in enumerate(oks)
    ]
    s = math_summary(rows, ks=(1, 2, 4), n_boot=300)
    assert s["n_per_problem"] == 4 and s["n_problems"] == 3 and s["truncated"] == 1
    assert s["avg@4"] == s["pass@1"] == pytest.approx(4 / 12)
    assert s["pass@2"] == pytest.approx((pass_at_k(4, 1, 2) + 0 + pass_at_k(4, 3, 2)) / 3)
    assert s["pass@4"] == pytest.approx(2 / 3)
    for k in ("avg@4", "pass@2", "pass@4"):
        lo, hi = s[f"{k}_ci"]
        assert lo <= s[k] <= hi
    with pytest.raises(ValueError, match="k=\\[8\\] needs at least"):
        math_summary(rows, ks=(8,))
    with pytest.raises(ValueError, match="different sample counts"):
        math_summary(rows[:-1])


@pytest.mark.parametrize("name", ["math_smoke", "math_paper"])
def test_math_recipes_train_on_a_math_training_set_not_on_aime(name):
    """`recode grpo --recipe math_*` loads the recipe's `benchmark` as its training problems."""
    from recode_lib.data import list_benchmarks
    from recode_lib.training.grpo import load_recipe

    r = load_recipe(name)
    assert r.domain == "math" and r.benchmark in list_benchmarks()
    assert r.benchmark in ("math_synth", "math_train") and "aime" not in r.benchmark


def test_a_truncated_math_response_is_a_format_error_even_with_a_right_answer():
    text = "<think>1+2 is 3</think> \\boxed{3} and then more"
    done = score_math_response(text, "3", "stop")
    cut = score_math_response(text, "3", "length")
    assert done["correct"] and done["format_ok"]
    assert not cut["correct"] and not cut["format_ok"]
    assert cut["reason"].startswith("truncated") and cut["finish_reason"] == "length"
    s = math_summary([{**cut, "problem_id": "p", "n_tokens": 9}], ks=(1,), n_boot=10)
    assert s["truncated"] == 1 and s["format_rate"] == 0.0 and s["pass@1"] == 0.0


def _aime_samples(folder, correct_per_problem, n=10, truncated=()):
    """samples.jsonl of 30 problems x n samples, the first c of problem i correct."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, c in enumerate(correct_per_problem):
        for j in range(n):
            text, reason = "<think>ok</think> \\boxed{1}", "stop"
            if (i, j) in truncated:
                reason = "length"
            row = score_math_response(text, "1" if j < c else "2", reason)
            rows.append(
                {
                    "id": f"aime24/{i}#{j}",
                    "problem_id": f"aime24/{i}",
                    "sample": j,
                    **row,
                    "n_tokens": 9,
                }
            )
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_math_reports_the_relative_gain_over_outcome_only_with_an_interval(tmp_path):
    """avg@10 0.27 (outcome-only) -> 0.29 (gated): ReCode's "+7.4% relative over RL without the
    process reward" on AIME 2024; 30 problems give a wide interval around it."""
    from recode_lib.evaluation.math import PAPER_AIME_GAIN, math_gains

    oo = [3] * 27 + [0] * 3  # 81 / 300 = 0.27
    gated = [3] * 27 + [2] * 3  # 87 / 300 = 0.29
    _aime_samples(tmp_path / "start", [2] * 30)
    _aime_samples(tmp_path / "math_outcome_only", oo)
    _aime_samples(tmp_path / "math_gated", gated)
    g = math_gains(tmp_path, ["start", "math_outcome_only", "math_gated"], n_boot=500)
    over = g["relative_gain_over_outcome_only"]["math_gated"]
    assert (
        over["value"] == pytest.approx(0.29 / 0.27 - 1) == pytest.approx(PAPER_AIME_GAIN, abs=1e-3)
    )
    assert over["reference"] == "math_outcome_only" and over["n_problems"] == 30
    assert over["ci"][0] < over["value"] < over["ci"][1]
    assert set(g["relative_gain_over_outcome_only"]) == {"math_gated"}
    assert g["relative_gain_over_start"]["math_gated"]["value"] == pytest.approx(0.29 / 0.2 - 1)


def test_a_truncated_right_answer_lowers_the_math_gain(tmp_path):
    """Six of gated's correct answers hit the token limit: format errors, not correct."""
    from recode_lib.evaluation.math import math_gains

    _aime_samples(tmp_path / "math_outcome_only", [3] * 27 + [0] * 3)
    _aime_samples(tmp_path / "math_gated", [3] * 27 + [2] * 3, truncated={(i, 0) for i in range(6)})
    g = math_gains(tmp_path, ["math_outcome_only", "math_gated"], n_boot=50)
    assert g["relative_gain_over_outcome_only"]["math_gated"]["value"] == pytest.approx(
        0.27 / 0.27 - 1
    )
    assert g["relative_gain_over_start"] == {}  # no start model evaluated
