"""Single-fault mutants: one change each, distinct, deterministic, only inside functions."""

from __future__ import annotations

import ast

import pytest

from recode_lib.process_reward.lcbrb.mutants import OPS, make_mutants, normalize

PROG = '''
LIMIT = 10

def count_small(xs, k=3):
    """How many x < k, capped at LIMIT."""
    n = 0
    for x in xs:
        if x < k and x != 0:
            n = n + 1
    return min(n, LIMIT)
'''


def _changed_lines(a: str, b: str) -> int:
    la, lb = a.splitlines(), b.splitlines()
    assert len(la) == len(lb)
    return sum(x != y for x, y in zip(la, lb, strict=True))


def test_every_mutant_is_distinct_compiles_and_differs_from_the_reference():
    ms = make_mutants(PROG, n=50, seed=0)
    codes = [m.code for m in ms]
    assert len(ms) >= 6 and len(set(codes)) == len(codes)
    assert normalize(PROG) not in codes
    for m in ms:
        compile(m.code, "m", "exec")
        assert m.op in OPS and m.site.startswith("line ")
        assert _changed_lines(normalize(PROG), m.code) == 1, m


def test_module_level_code_and_defaults_are_not_mutated():
    for m in make_mutants(PROG, n=50, seed=0):
        tree = ast.parse(m.code)
        assert ast.unparse(tree.body[0]) == "LIMIT = 10"
        assert ast.unparse(tree.body[1].args.defaults[0]) == "3"


def test_mutants_are_deterministic_given_the_seed_and_vary_with_it():
    a = [m.code for m in make_mutants(PROG, n=3, seed=1)]
    assert a == [m.code for m in make_mutants(PROG, n=3, seed=1)]
    assert any([m.code for m in make_mutants(PROG, n=3, seed=s)] != a for s in range(2, 6))


def test_a_program_without_sites_has_no_mutants_and_bad_code_raises():
    assert make_mutants("def f():\n    return 'x'\n", n=3) == []
    with pytest.raises(SyntaxError):
        make_mutants("def f(:\n", n=1)


def test_ops_filter_restricts_the_faults():
    ms = make_mutants(PROG, n=50, seed=0, ops=("minmax_swap",))
    assert [m.op for m in ms] == ["minmax_swap"] and "max(n, LIMIT)" in ms[0].code
