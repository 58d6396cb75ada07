"""Single-fault variants of a program (mutants), for seeding failing traces.

    mutants = make_mutants(reference_code, n=2, seed=0)   # [Mutant(op, code, site), ...]
    normalize(reference_code)                            # the same printing as the mutants

A mutant applies exactly one classic fault to a node inside a function body:
    cmp_boundary   <  <-> <=,  > <-> >=          (boundary / off-by-one in a comparison)
    cmp_negate     == <-> !=,  in <-> not in
    int_off_by_one an integer literal n -> n + 1 (0 -> 1)
    arith_swap     + <-> -,  * -> +,  // -> /
    bool_swap      and <-> or
    minmax_swap    min( <-> max(
Only statements inside function bodies are mutated (module-level code, default argument
values and strings never are). Sites are enumerated in walk order, shuffled with the seed, and
the first `n` that give a distinct, compilable program are returned. Programs are printed with
ast.unparse, so comments are dropped: present the reference through normalize() so that both
sides look alike and differ only by the fault.

Whether a mutant actually fails is NOT decided here: run it in the sandbox (an "equivalent
mutant" that still passes is then a passing program, and callers count it). No execution here.
"""

from __future__ import annotations

import ast
import copy
import random
from dataclasses import dataclass

_CMP_BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_CMP_NEGATE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In}
_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.FloorDiv: ast.Div}
_BOOL = {ast.And: ast.Or, ast.Or: ast.And}
OPS = ("cmp_boundary", "cmp_negate", "int_off_by_one", "arith_swap", "bool_swap", "minmax_swap")


@dataclass(frozen=True)
class Mutant:
    op: str  # one of OPS
    code: str  # the mutated program (ast.unparse)
    site: str  # where: "line L: <original expression>"


def normalize(code: str) -> str:
    """The program as ast.unparse prints it (what mutants look like); raises SyntaxError."""
    return ast.unparse(ast.parse(code)) + "\n"


def _sites(tree: ast.AST) -> list[tuple[str, ast.AST, int]]:
    """(op, node, index) for every mutable spot inside a function body, in walk order."""
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for stmt in fn.body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Compare):
                    for i, op in enumerate(node.ops):
                        if type(op) in _CMP_BOUNDARY:
                            out.append(("cmp_boundary", node, i))
                        elif type(op) in _CMP_NEGATE:
                            out.append(("cmp_negate", node, i))
                elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
                    out.append(("arith_swap", node, 0))
                elif isinstance(node, ast.BoolOp) and type(node.op) in _BOOL:
                    out.append(("bool_swap", node, 0))
                elif isinstance(node, ast.Constant) and type(node.value) is int:
                    out.append(("int_off_by_one", node, 0))
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id in ("min", "max")
                ):
                    out.append(("minmax_swap", node, 0))
    # nested functions are walked twice (as statements of the outer one and on their own)
    seen, unique = set(), []
    for op, node, i in out:
        if (op, id(node), i) not in seen:
            seen.add((op, id(node), i))
            unique.append((op, node, i))
    return unique


def _apply(op: str, node: ast.AST, i: int) -> None:
    if op == "cmp_boundary":
        node.ops[i] = _CMP_BOUNDARY[type(node.ops[i])]()
    elif op == "cmp_negate":
        node.ops[i] = _CMP_NEGATE[type(node.ops[i])]()
    elif op == "arith_swap":
        node.op = _ARITH[type(node.op)]()
    elif op == "bool_swap":
        node.op = _BOOL[type(node.op)]()
    elif op == "int_off_by_one":
        node.value = node.value + 1
    elif op == "minmax_swap":
        node.func.id = "max" if node.func.id == "min" else "min"
    else:
        raise ValueError(f"unknown mutation op {op!r}; expected one of {OPS}")


def make_mutants(code: str, n: int = 2, seed: int = 0, ops=OPS) -> list[Mutant]:
    """Up to `n` distinct single-fault mutants of `code` (fewer when it has fewer sites).
    Raises SyntaxError when `code` does not parse."""
    base = ast.parse(code)
    original = ast.unparse(base)
    n_sites = len(_sites(base))
    order = list(range(n_sites))
    random.Random(f"{seed}:{original}").shuffle(order)
    found, seen = [], {original}
    for k in order:
        if len(found) >= n:
            break
        tree = copy.deepcopy(base)
        op, node, i = _sites(tree)[k]
        if op not in ops:
            continue
        where = f"line {getattr(node, 'lineno', '?')}: {ast.unparse(node)}"
        _apply(op, node, i)
        new = ast.unparse(tree)
        if new in seen:
            continue
        try:
            compile(new, "<mutant>", "exec")
        except SyntaxError:
            continue
        seen.add(new)
        found.append(Mutant(op, new + "\n", where))
    return found
