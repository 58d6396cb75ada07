"""Turn a model response into the program the sandbox runs, for the problem's test kind.

    prog = assemble(problem, response_text)
    prog.code      # the program, or None: a format error (it never reaches the sandbox)
    prog.how       # "function" | "starter+body" | "program" | "none"
    prog.dropped   # top-level statements removed from a function answer (test code, prints)
    prog.parsed    # recode_lib.core.prompts.Parsed (format_ok, reason, ...)

It does not execute anything and does not judge correctness.
More: docs/modules/core_and_runner.md (recode_lib.core.assemble).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from recode_lib.core.prompts import (
    PYTHON_LANGS,
    UNREADABLE,
    Parsed,
    code_blocks,
    parse_response,
    unreadable,
)

KEEP = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
)


@dataclass
class Program:
    code: str | None
    how: str
    parsed: Parsed
    dropped: list[str] = field(default_factory=list)


# Python's line model: its tokenizer ends a line at \n, \r\n or \r only. str.splitlines() also
# splits at \v, \f, \x1c-\x1e, \x85 (NEL), U+2028 and U+2029, which Python allows inside
# strings and comments: splitting code with it shifts every line number after one of them.
_LINE_END = re.compile(r"\r\n|\r|\n")
_SPLIT_KEEP = re.compile(r"(\r\n|\r|\n)")


def code_lines(code: str) -> list[str]:
    """The lines of Python source as Python numbers them (ast's lineno): split at \n, \r\n
    and \r only, without their line ends; a final line end makes no empty last line (as
    str.splitlines)."""
    lines = _LINE_END.split(code)
    if lines[-1] == "":
        lines.pop()
    return lines


def _lines_with_ends(text: str) -> list[tuple[str, str]]:
    parts = _SPLIT_KEEP.split(text)
    return [(parts[i], parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2)]


def dedent_code(text: str) -> str:
    """textwrap.dedent on Python's line model: the common leading spaces/tabs of the non-blank
    lines removed, lines of only spaces/tabs emptied, line ends kept."""
    lines = [(("" if not c.strip(" \t") else c), e) for c, e in _lines_with_ends(text)]
    margin = None
    for c, _ in lines:
        if not c:
            continue
        indent = c[: len(c) - len(c.lstrip(" \t"))]
        if margin is None or margin.startswith(indent):
            margin = indent
        elif not indent.startswith(margin):
            k = 0
            while k < min(len(margin), len(indent)) and margin[k] == indent[k]:
                k += 1
            margin = margin[:k]
    if margin:
        lines = [(c[len(margin) :] if c.startswith(margin) else c, e) for c, e in lines]
    return "".join(c + e for c, e in lines)


def indent_code(text: str, prefix: str) -> str:
    """textwrap.indent on Python's line model: `prefix` before every line that is not blank."""
    return "".join((prefix + c if c.strip() else c) + e for c, e in _lines_with_ends(text))


def _parse(src: str) -> ast.Module | None:
    """The module's tree, or None when it does not parse (a syntax error, too deep for the
    parser: RecursionError/MemoryError, a lone surrogate: the same as prompts' compile)."""
    try:
        return ast.parse(src)
    except Exception:
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
    return any(
        isinstance(n, ast.ClassDef)
        and any(
            isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == entry
            for m in n.body
        )
        for n in tree.body
    )


def _starter_preamble(starter: str, entry: str, have: set[str]) -> str:
    """Imports and helper definitions of the starter that the answer lacks (entry excluded)."""
    tree = _parse(starter or "")
    if tree is None:
        return ""
    keep = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            keep.append(node)
        elif (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.name != entry
            and node.name not in have
        ):
            keep.append(node)
    return "\n\n".join(ast.get_source_segment(starter, n) for n in keep)


# blank and comment lines, then spaces (possessive: no backtracking, linear time)
_BLANK_LINES = re.compile(r"(?:[ \t\f]*+(?:#[^\r\n]*+)?+(?:\r\n|\r|\n))*+[ \t\f]*+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+")
_STRING_PREFIXES = {"r", "u", "f", "b", "rb", "br", "fr", "rf"}


def may_have_head(code: str) -> bool:
    """False when the code's first statement is surely neither a string nor a `from __future__`
    import (it starts with another word: `def`, `import`, `class`, a name...), so there is no
    docstring or __future__ import to keep first and no need to parse it all; True otherwise."""
    i = _BLANK_LINES.match(code).end()
    m = _WORD.match(code, i)
    if m is None:
        return True  # a quote, a parenthesis, a backslash, a non-ASCII name: parse
    word, j = m.group(), m.end()
    if word.lower() in _STRING_PREFIXES and code[j : j + 1] in ("'", '"'):
        return True
    if word == "from":
        while j < len(code) and code[j] in " \t\f":
            j += 1
        return code.startswith("__future__", j) or not (
            code[j : j + 1].isalnum() or code[j : j + 1] == "_"
        )
    return False


def put_in_front(front: str, code: str) -> str:
    """`front` + code, but after the code's leading docstring and `from __future__` imports,
    which Python accepts only at the top of a module (a prelude in front of them would turn a
    correct answer into a syntax error). Code that does not parse gets `front` first."""
    if not front:
        return code
    tree = _parse(code) if may_have_head(code) else None
    end = 0
    for i, node in enumerate(tree.body if tree is not None else []):
        docstring = (
            i == 0
            and isinstance(node, ast.Expr)
            and isinstance(getattr(node, "value", None), ast.Constant)
            and isinstance(node.value.value, str)
        )
        if docstring or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            end = node.end_lineno
        else:
            break
    if not end:
        return front + "\n\n" + code
    lines = code_lines(code)
    return "\n".join(lines[:end]) + "\n" + front + "\n\n" + "\n".join(lines[end:]) + "\n"


DROPPED_CHARS = 80  # of a dropped statement's first line, in Program.dropped


def first_line(lines: list[str], node: ast.stmt, limit: int = DROPPED_CHARS, encoded=None) -> str:
    """At most `limit` characters of `node`'s text on its first line (col_offset counts UTF-8
    bytes, as ast does). `encoded` (optional): a dict caching each line's UTF-8 bytes by line
    number, so that many statements on one long line encode it once; only 4 * limit bytes of it
    are decoded (a UTF-8 character is at most 4 bytes), so the cost does not grow with the
    line."""
    if not 0 < node.lineno <= len(lines):
        return ""
    raw = encoded.get(node.lineno) if encoded is not None else None
    if raw is None:
        raw = lines[node.lineno - 1].encode("utf-8", "surrogatepass")
        if encoded is not None:
            encoded[node.lineno] = raw
    start = node.col_offset
    return raw[start : start + 4 * limit].decode("utf-8", "replace")[:limit]


def sanitize(code: str, tree: ast.Module) -> tuple[str, list[str]]:
    """(kept top-level imports, definitions and assignments, first lines of the dropped
    statements), in time linear in the code: the lines are split once, and each line is kept
    at most once (statements sharing a line, `a = 1; b = 2`, keep that line once: copying it
    for each one cost time quadratic in the line, 18 s for 32,000 of them)."""
    kept, dropped = [], []
    lines = code_lines(code)
    encoded: dict = {}
    done = 0  # the last line number kept so far
    for node in tree.body:
        if isinstance(node, KEEP):
            start = (
                node.decorator_list[0].lineno
                if getattr(node, "decorator_list", None)
                else node.lineno
            )
            if node.end_lineno > done:
                if start <= done:  # it begins on a line kept already: keep the rest only
                    kept[-1] += "\n" + "\n".join(lines[done : node.end_lineno])
                else:
                    kept.append("\n".join(lines[start - 1 : node.end_lineno]))
                done = node.end_lineno
        else:
            dropped.append(first_line(lines, node, encoded=encoded) or type(node).__name__)
    return "\n\n".join(kept) + "\n", dropped


def _looks_like_body(body: str) -> bool:
    """A function body rather than a module: it does not parse alone, returns at top level,
    or defines no function or class."""
    tree = _parse(dedent_code(body))
    return (
        tree is None
        or any(isinstance(n, ast.Return) for n in tree.body)
        or not any(
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in tree.body
        )
    )


def ends_with_entry(starter: str, entry: str) -> bool:
    """Whether the starter code ends with the entry point's `def` (a body can continue it)."""
    tree = _parse(starter or "")
    return (
        tree is not None
        and bool(tree.body)
        and isinstance(tree.body[-1], ast.FunctionDef)
        and tree.body[-1].name == entry
    )


def _body_completion(starter: str, entry: str, body: str) -> str | None:
    if not _looks_like_body(body):
        return None
    indented = indent_code(dedent_code(body).strip("\n"), "    ")
    src = starter.rstrip() + "\n" + indented + "\n"
    full = _parse(src)
    return src if full is not None and defines(full, entry) else None


def _stdio_program(code: str, tree: ast.Module) -> str:
    runs_something = any(not isinstance(n, KEEP) for n in tree.body)
    if runs_something:
        return code
    for node in tree.body:
        if (
            isinstance(node, ast.FunctionDef)
            and node.name in ("main", "solve")
            and not node.args.args
            and not node.args.posonlyargs
        ):
            return code.rstrip() + f"\n\n{node.name}()\n"
    return code


def assemble(problem, text: str) -> Program:
    """The program of one response to `problem` (module docstring). Never raises for the
    response: one the judge cannot read (nested too deep for the parser, too big, not text) is
    a format error, Program(None, "none", ...) with the reason in parsed.reason. A bad
    problem (its tests, starter code or prelude) still raises."""
    kind = (problem.tests or {}).get("kind")
    entry = problem.entry_point or (problem.tests or {}).get("fn_name")
    starter = problem.starter_code or ""
    prelude = ((getattr(problem, "metadata", None) or {}).get("prelude") or "").strip()
    try:
        prog = _assemble(kind, entry, starter, text)
        if prog.code is not None and prelude:
            prog.code = put_in_front(prelude, prog.code)
        return prog
    except Exception as exc:  # one response's failure is its own format error
        return Program(None, "none", unreadable(exc))


def _assemble(kind, entry, starter: str, text: str) -> Program:
    parsed = parse_response(text)
    if parsed.reason.startswith(UNREADABLE):
        return Program(None, "none", parsed)
    if kind == "stdio" or not entry:
        if parsed.code is None:
            return Program(None, "none", parsed)
        tree = _parse(parsed.code)
        return Program(
            _stdio_program(parsed.code, tree) if kind == "stdio" else parsed.code, "program", parsed
        )
    if parsed.code is not None:
        tree = _parse(parsed.code)
        if defines(tree, entry):
            body, dropped = sanitize(parsed.code, tree)
            pre = _starter_preamble(starter, entry, defined_names(tree))
            return Program(
                put_in_front(pre + "\n" if pre else "", body), "function", parsed, dropped
            )
    # a body-only answer continuing the starter's signature (also when indented)
    if ends_with_entry(starter, entry):
        tried = set()
        for lang, body, _ in reversed(code_blocks(text or "")):
            if lang not in PYTHON_LANGS or body in tried:
                continue
            tried.add(body)
            src = _body_completion(starter, entry, body)
            if src is not None:
                return Program(src, "starter+body", parsed)
    if parsed.code is not None:
        return Program(parsed.code, "as_is", parsed)
    return Program(None, "none", parsed)
