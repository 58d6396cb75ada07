"""Turn a model response into the program the sandbox runs, for the problem's test kind.

    prog = assemble(problem, response_text)
    prog.code      # the program, or None: a format error (it never reaches the sandbox)
    prog.how       # "function" | "starter+body" | "program" | "none"
    prog.dropped   # top-level statements removed from a function answer (test code, prints)
    prog.parsed    # recode_lib.prompts.Parsed (format_ok, reason, ...)

Code extraction is recode_lib.prompts.parse_response (the last fenced Python block that parses).
Then, for problems whose tests call a function (kinds "call" and "script" with an entry point):
- a full function (the answer defines the entry point, at top level or as a method of a class):
  sanitized the way EvalPlus does it: only imports, function and class definitions and
  assignments are kept, so module-level test code, prints, `input()` calls and
  `if __name__ == "__main__":` blocks never run; the starter code's imports and helper
  definitions the answer does not define itself (HumanEval/10's is_palindrome, /32's poly)
  are put in front;
- a body only (HumanEval-style completion: the answer continues the given signature; a block
  that does not parse alone, or returns at top level, or defines no function or class): when
  the starter code ends with the entry point's `def` and starter + the indented block parses,
  that program is used — also for an indented block, which parse_response rejects;
- otherwise the code is run as written (it then fails the tests, a correctness failure).
For "stdio" problems the code is the program; if it only defines a `main()`/`solve()` taking
no arguments and never calls anything at top level, a call is appended.
A problem's `metadata["prelude"]` (the imports LeetCode/LiveCodeBench code assumes, e.g.
`from typing import *`) is put in front of every program, as LiveCodeBench's runner does (after
the program's own `from __future__` imports, which must stay first).
It does not execute anything and does not judge correctness.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field

from recode_lib.prompts import Parsed, code_blocks, parse_response

KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
        ast.Assign, ast.AnnAssign)


@dataclass
class Program:
    code: str | None
    how: str
    parsed: Parsed
    dropped: list[str] = field(default_factory=list)


def _parse(src: str) -> ast.Module | None:
    try:
        return ast.parse(src)
    except (SyntaxError, ValueError):
        return None


def defined_names(tree: ast.Module) -> set[str]:
    """Names bound at module level by defs, classes, imports and assignments."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def defines(tree: ast.Module, entry: str) -> bool:
    if entry in defined_names(tree):
        return True
    return any(isinstance(n, ast.ClassDef) and any(
        isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == entry
        for m in n.body) for n in tree.body)


def _starter_preamble(starter: str, entry: str, have: set[str]) -> str:
    """Imports and helper definitions of the starter that the answer lacks (entry excluded)."""
    tree = _parse(starter or "")
    if tree is None:
        return ""
    keep = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            keep.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name != entry and node.name not in have:
            keep.append(node)
    return "\n\n".join(ast.get_source_segment(starter, n) for n in keep)


def put_in_front(front: str, code: str) -> str:
    """`front` + code, but after the code's leading docstring and `from __future__` imports,
    which Python accepts only at the top of a module (a prelude in front of them would turn a
    correct answer into a syntax error). Code that does not parse gets `front` first."""
    if not front:
        return code
    tree = _parse(code)
    end = 0
    for i, node in enumerate(tree.body if tree is not None else []):
        docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(
            getattr(node, "value", None), ast.Constant) and isinstance(node.value.value, str)
        if docstring or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            end = node.end_lineno
        else:
            break
    if not end:
        return front + "\n\n" + code
    lines = code.splitlines()
    return "\n".join(lines[:end]) + "\n" + front + "\n\n" + "\n".join(lines[end:]) + "\n"


def sanitize(code: str, tree: ast.Module) -> tuple[str, list[str]]:
    kept, dropped = [], []
    for node in tree.body:
        seg = ast.get_source_segment(code, node) or ""
        if isinstance(node, KEEP):
            start = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) \
                else node.lineno
            lines = code.splitlines()[start - 1:node.end_lineno]
            kept.append("\n".join(lines))
        else:
            dropped.append(seg.splitlines()[0][:80] if seg else type(node).__name__)
    return "\n\n".join(kept) + "\n", dropped


def _looks_like_body(body: str) -> bool:
    """A function body rather than a module: it does not parse alone, returns at top level,
    or defines no function or class."""
    tree = _parse(textwrap.dedent(body))
    return tree is None or any(isinstance(n, ast.Return) for n in tree.body) or not any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in tree.body)


def _body_completion(starter: str, entry: str, body: str) -> str | None:
    if not _looks_like_body(body):
        return None
    tree = _parse(starter or "")
    if tree is None or not tree.body or not isinstance(tree.body[-1], ast.FunctionDef) \
            or tree.body[-1].name != entry:
        return None
    indented = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    src = starter.rstrip() + "\n" + indented + "\n"
    full = _parse(src)
    return src if full is not None and defines(full, entry) else None


def _stdio_program(code: str, tree: ast.Module) -> str:
    runs_something = any(not isinstance(n, KEEP) for n in tree.body)
    if runs_something:
        return code
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("main", "solve") \
                and not node.args.args and not node.args.posonlyargs:
            return code.rstrip() + f"\n\n{node.name}()\n"
    return code


def assemble(problem, text: str) -> Program:
    prog = _assemble(problem, text)
    prelude = ((getattr(problem, "metadata", None) or {}).get("prelude") or "").strip()
    if prog.code is not None and prelude:
        prog.code = put_in_front(prelude, prog.code)
    return prog


def _assemble(problem, text: str) -> Program:
    parsed = parse_response(text)
    kind = (problem.tests or {}).get("kind")
    entry = problem.entry_point or (problem.tests or {}).get("fn_name")
    starter = problem.starter_code or ""
    if kind == "stdio" or not entry:
        if parsed.code is None:
            return Program(None, "none", parsed)
        tree = _parse(parsed.code)
        return Program(_stdio_program(parsed.code, tree) if kind == "stdio" else parsed.code,
                       "program", parsed)
    if parsed.code is not None:
        tree = _parse(parsed.code)
        if defines(tree, entry):
            body, dropped = sanitize(parsed.code, tree)
            pre = _starter_preamble(starter, entry, defined_names(tree))
            return Program(put_in_front(pre + "\n" if pre else "", body), "function", parsed,
                           dropped)
    # a body-only answer continuing the starter's signature (also when indented)
    blocks = [b for lang, b, _ in code_blocks(text or "")
              if lang in ("python", "py", "python3", "")]
    for body in reversed(blocks):
        src = _body_completion(starter, entry, body)
        if src is not None:
            return Program(src, "starter+body", parsed)
    if parsed.code is not None:
        return Program(parsed.code, "as_is", parsed)
    return Program(None, "none", parsed)
