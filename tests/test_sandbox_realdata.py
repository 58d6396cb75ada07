"""Real data: HumanEval+ / MBPP+ canonical solutions pass their base+plus inputs; broken
variants fail with the right status. Records come from the library's EvalPlus builder
(recode_lib.data.evalplus.sandbox_records; expected outputs from running each canonical
solution in a plain subprocess, as EvalPlus does)."""

import sys

import pytest

from recode_lib.core.paths import data_dir
from recode_lib.data.evalplus import sandbox_records
from recode_lib.data.humaneval import load_humanevalplus
from recode_lib.data.mbpp import load_mbppplus
from recode_lib.sandbox import SandboxConfig, execute_many

pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.skipif(data_dir() is None, reason="needs ../shared/data (RECODE_DATA_DIR)"),
]


def plus_records(name, limit=None):
    load = load_humanevalplus if name == "humanevalplus" else load_mbppplus
    return sandbox_records(load(limit=limit, download=False))


CFG = SandboxConfig(workers=2)
# HumanEval/32's reference (Newton's method, 1000 steps, |f(x)| < 1e-5) converges on every
# input under Python 3.11's sum(); from 3.12 on sum() of floats is compensated, its iterates
# change, and on 5 of its 888 inputs it stops where the oracle (|poly(x)| <= atol, poly summed
# left to right on every version) finds no root (docs/sandbox.md, "HumanEval+ on Python 3.12")
REFERENCE_FAILS = {"humanevalplus/32"} if sys.version_info >= (3, 12) else set()


def test_canonical_solutions_pass_subset():
    recs = plus_records("humanevalplus", limit=10) + plus_records("mbppplus", limit=10)
    bad = [
        (r["id"], r["status"]) for r in execute_many(recs, config=CFG) if r["status"] != "passed"
    ]
    assert bad == []


SUM = "return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])"
FOLD = (
    "return functools.reduce(operator.add, [coeff * math.pow(x, i) for i, coeff in enumerate(xs)])"
)


def folded_find_zero(rec: dict) -> dict:
    """HumanEval/32's reference with poly's sum() a plain left fold (what sum() of floats was
    before Python 3.12): its Newton iterates are then 3.11's on every version, so it passes."""
    assert SUM in rec["code"]
    code = "import functools, operator\n" + rec["code"].replace(SUM, FOLD)
    return dict(rec, code=code)


def test_humaneval32_is_judged_by_the_root_oracle():
    rec = folded_find_zero(plus_records("humanevalplus", limit=33)[32])
    assert rec["id"] == "humanevalplus/32"
    shifted = dict(
        rec, code=rec["code"] + "\n_fz = find_zero\ndef find_zero(xs):\n    return _fz(xs) + 1e-3\n"
    )
    ok, bad = execute_many([rec, shifted], config=CFG)
    assert ok["status"] == "passed" and bad["status"] == "wrong_answer"


def test_broken_variants_fail_with_the_right_status():
    recs = {r["id"]: r for r in plus_records("humanevalplus", limit=10)}
    rec = recs["humanevalplus/0"]
    variants = {
        "wrong_answer": "def has_close_elements(numbers, threshold):\n    return False\n",
        "runtime_error": (
            "def has_close_elements(numbers, threshold):\n    return numbers[10 ** 9]\n"
        ),
        "time_limit": (
            "def has_close_elements(numbers, threshold):\n    while True:\n        pass\n"
        ),
        "syntax_error": "def has_close_elements(numbers, threshold)\n    return False\n",
        "no_code": "",
    }
    recs = [dict(rec, id=k, code=v, time_limit_s=0.5) for k, v in variants.items()]
    res = execute_many(recs, config=CFG, early_stop=True)
    assert [r["status"] for r in res] == list(variants)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["humanevalplus", "mbppplus"])
def test_all_canonical_solutions_pass(name):
    recs = plus_records(name)
    bad = [
        (r["id"], r["status"]) for r in execute_many(recs, config=CFG) if r["status"] != "passed"
    ]
    assert bad == [(i, "wrong_answer") for i in sorted(REFERENCE_FAILS) if i.startswith(name)]


def test_find_zero_reference_passes_before_python_312_only():
    """The oracle judges the root, not equality with the reference's output: the reference's
    own Newton iterates fail it on Python >= 3.12 (compensated float sum()); the same Newton
    summing left to right passes on every version (the oracle's sum is fixed, not the
    interpreter's)."""
    rec = plus_records("humanevalplus", limit=33)[32]
    assert rec["id"] == "humanevalplus/32" and "checker" in rec["tests"]
    res = execute_many([rec], config=CFG)[0]
    if REFERENCE_FAILS:
        assert res["status"] == "wrong_answer" and 0 < res["total"] - res["passed"] <= 10
    else:
        assert res["status"] == "passed"
    assert execute_many([folded_find_zero(rec)], config=CFG)[0]["status"] == "passed"
