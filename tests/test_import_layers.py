"""The import contract (docs/architecture.md, "Layers"): shared kernel -> stages in pipeline
order -> orchestration -> cli, with every internal import counted, module level and function body.

    .venv/bin/python tests/test_import_layers.py        # the package graph, its cycles, the
                                                        # function-body internal imports
    .venv/bin/python -m pytest tests/test_import_layers.py -q

The tests read the source (ast), they import nothing. A node of the graph is a package of
recode_lib (`recode_lib/evaluation/`) or a top-level module (`recode_lib/metrics.py`); an arrow
A -> B is any `import recode_lib.B...` / `from recode_lib.B... import ...` (or a relative import
resolving there) anywhere in A, `if TYPE_CHECKING:` blocks and function bodies included. The
contract:
  - no cycle between packages;
  - no arrow from a layer to a later one (LAYERS; arrows inside one layer are free, the cycle
    rule still holds there), except the arrows in KNOWN_EXCEPTIONS, which may only shrink;
  - an internal import inside a function body only where the imported module pulls a heavy
    third-party package in at import time (HEAVY; e.g. training.config imports trl), except the
    modules in LAZY_EXCEPTIONS;
  - no private name (`_name`, or a private module such as data._io from outside its package)
    imported from another module, except PRIVATE_EXCEPTIONS.
It does not see imports by name at run time (importlib.import_module with a computed name, as
cli/__init__ and data/__init__ do inside their own package).
"""

from __future__ import annotations

import ast
import functools
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "recode_lib"

# The layers, lowest first; a package may import its own layer and the layers before it.
# Stage order: the pipeline's (notebooks 00-11, docs/architecture.md) as its data flows. generation
# serves every stage that samples; process_reward (01-03: CRPL, the RM, LCB-RB) comes before
# rewards, whose `process` family loads that RM (docs/architecture.md's layout lists rewards first);
# environments (the single/tool/agentic settings) before the training and evaluation that run
# episodes in them; training (04, 06, 09) makes the policies that weights (07) merges and
# interpolates, and evaluation scores any of them; analysis (08, 99) reads the results of all.
LAYERS: list[tuple[str, ...]] = [
    # shared kernel: one concept per module
    (
        "core",
        "metrics",
        "recode_lib",
    ),
    ("sandbox",),
    ("data",),
    # stages, in pipeline order
    ("generation",),
    ("process_reward",),
    ("rewards",),
    ("environments",),
    ("training",),
    ("weights",),
    ("evaluation",),
    ("analysis",),
    # orchestration: what ties the stages together (the step functions notebooks call; the
    # resource plan, notebook runner and checks)
    (
        "orchestration",
        "runner",
        "steps",
        "plan",
    ),
    # the run report: reads every stage's results and the runner's manifest, runs nothing
    ("report",),
    # entry points
    ("cli",),
    ("__main__",),
]

# (importing module, imported package): why the arrow still runs against the layers.
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}

# Third-party packages too heavy (or optional) to import with recode_lib: imported inside the
# function that needs them, and so are the internal modules that import one at module level.
HEAVY = {
    "torch",
    "transformers",
    "trl",
    "vllm",
    "peft",
    "datasets",
    "deepspeed",
    "ray",
    "accelerate",
    "safetensors",
    "matplotlib",
    "seaborn",
    "pandas",
    "openai",
    "math_verify",
    "sympy",
    "huggingface_hub",
    "papermill",
    "jupyter_client",
    "nbformat",
    "ipywidgets",
    "tokenizers",
    "pyarrow",
    "gguf",
    "tensorboard",
    "playwright",
}

# module, or package ending in "." -> why its function-body internal imports stay.
LAZY_EXCEPTIONS: dict[str, str] = {
    "recode_lib.generation.": "the backends are being reworked in their own change",
}

# (importing module, "module.name"): why it still imports another module's private name.
PRIVATE_EXCEPTIONS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, e.g. recode_lib.evaluation.loop
    target: str  # the imported module, e.g. recode_lib.sandbox.records
    line: int
    in_function: bool

    @property
    def src(self) -> str:
        return package_of(self.module)

    @property
    def dst(self) -> str:
        return package_of(self.target)


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    path = ROOT.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _walk(node, in_function: bool):
    for child in ast.iter_child_nodes(node):
        yield child, in_function
        yield from _walk(
            child,
            in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)),
        )


@functools.cache
def _import_nodes(path: Path) -> tuple:
    """(node, in_function) for every import statement of the file at `path`, parsed once per
    session (several tests read the whole tree; the source does not change during a run)."""
    return tuple(
        (node, in_function)
        for node, in_function in _walk(ast.parse(path.read_text()), False)
        if isinstance(node, (ast.Import, ast.ImportFrom))
    )


def _third_party(path: Path) -> set[str]:
    """Top-level third-party names imported at module level."""
    out = set()
    for node, in_function in _import_nodes(path):
        if in_function:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out - {"recode_lib"}


def internal_imports() -> list[Import]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        mod = module_name(path)
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node, in_function in _import_nodes(path):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                # `from recode_lib import sandbox` imports the module recode_lib.sandbox
                subs = [f"{base}.{a.name}" for a in node.names if _is_module(f"{base}.{a.name}")]
                targets = subs or [base]
            else:
                continue
            found += [
                Import(mod, t, node.lineno, in_function)
                for t in targets
                if t == "recode_lib" or t.startswith("recode_lib.")
            ]
    return found


def package_graph(imports) -> dict[str, dict[str, list[Import]]]:
    graph: dict[str, dict[str, list[Import]]] = defaultdict(lambda: defaultdict(list))
    for imp in imports:
        if imp.src != imp.dst:
            graph[imp.src][imp.dst].append(imp)
    return graph


def cycles(graph) -> list[list[str]]:
    """The strongly connected components with more than one package (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return out


def layer_of(package: str) -> int | None:
    for i, layer in enumerate(LAYERS):
        if package in layer:
            return i
    return None  # not placed yet: test_every_package_has_a_layer says so


def upward_arrows(imports) -> list[Import]:
    return [
        i
        for i in imports
        if i.src != i.dst
        and None not in (layer_of(i.src), layer_of(i.dst))
        and layer_of(i.dst) > layer_of(i.src)
    ]


def heavy_modules() -> set[str]:
    """Internal modules whose import pulls in a HEAVY package (directly or through another
    internal module imported at module level)."""
    paths = {module_name(p): p for p in ROOT.rglob("*.py")}
    direct = {m for m, p in paths.items() if _third_party(p) & HEAVY}
    edges = defaultdict(set)
    for imp in internal_imports():
        if not imp.in_function:
            edges[imp.module].add(imp.target)
    heavy, changed = set(direct), True
    while changed:
        changed = False
        for m in paths:
            if m not in heavy and edges[m] & heavy:
                heavy.add(m)
                changed = True
    return heavy


def _covers(key: str, module: str) -> bool:
    return module == key or (key.endswith(".") and (module == key[:-1] or module.startswith(key)))


def _lazy_exception(module: str) -> str | None:
    return next((why for key, why in LAZY_EXCEPTIONS.items() if _covers(key, module)), None)


def lazy_internal_imports(imports) -> list[Import]:
    """Function-body internal imports of a module that is not heavy to import."""
    heavy = heavy_modules()
    return [i for i in imports if i.in_function and i.target not in heavy and i.module != i.target]


# --- the contract ----------------------------------------------------------------------------


def test_every_package_has_a_layer():
    packages = {package_of(module_name(p)) for p in ROOT.rglob("*.py")}
    missing = sorted(p for p in packages if not any(p in layer for layer in LAYERS))
    assert not missing, f"place these in LAYERS (tests/test_import_layers.py): {missing}"


def test_no_package_cycle():
    graph = package_graph(internal_imports())
    found = cycles(graph)
    detail = [
        f"{i.module}:{i.line} -> {i.target}"
        for comp in found
        for a in comp
        for b in graph[a]
        if b in comp
        for i in graph[a][b]
    ]
    assert not found, f"recode_lib's packages import each other in a cycle {found}:\n" + "\n".join(
        detail
    )


def test_no_stage_imports_a_later_layer():
    bad = [
        f"{i.module}:{i.line} -> {i.target} ({i.src} is below {i.dst})"
        for i in upward_arrows(internal_imports())
        if (i.module, i.dst) not in KNOWN_EXCEPTIONS
    ]
    assert not bad, (
        "imports against the layers (LAYERS in tests/test_import_layers.py):\n" + "\n".join(bad)
    )


def test_known_exceptions_are_still_needed():
    used = {(i.module, i.dst) for i in upward_arrows(internal_imports())}
    stale = sorted(set(KNOWN_EXCEPTIONS) - used)
    assert not stale, f"remove these from KNOWN_EXCEPTIONS, they no longer happen: {stale}"


def test_internal_imports_at_module_level():
    bad = [
        f"{i.module}:{i.line} -> {i.target}"
        for i in lazy_internal_imports(internal_imports())
        if not _lazy_exception(i.module)
    ]
    assert not bad, (
        "import these at module level (a function-body import only for a module "
        "that pulls a heavy package in, see HEAVY):\n" + "\n".join(bad)
    )


def test_lazy_exceptions_are_still_needed():
    lazy = lazy_internal_imports(internal_imports())
    stale = sorted(k for k in LAZY_EXCEPTIONS if not any(_covers(k, i.module) for i in lazy))
    assert not stale, f"remove these from LAZY_EXCEPTIONS, they import at module level now: {stale}"


def private_imports() -> list[tuple[str, str, int]]:
    """(module, "imported.module.name", line) for every `from recode_lib.X import _name` of
    another module, and every import of a private module (`_io`) from outside its package."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        mod = module_name(path)
        for node, _ in _import_nodes(path):
            if (
                isinstance(node, ast.ImportFrom)
                and not node.level
                and (node.module or "").startswith("recode_lib")
                and node.module != mod
            ):
                out += [
                    (mod, f"{node.module}.{a.name}", node.lineno)
                    for a in node.names
                    if a.name.startswith("_")
                ]
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
                targets = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                for t in targets:
                    parts = t.split(".")
                    for k, part in enumerate(parts):
                        owner = ".".join(parts[:k])
                        if (
                            part.startswith("_")
                            and not part.startswith("__")
                            and owner
                            and not (mod == owner or mod.startswith(owner + "."))
                        ):
                            out.append((mod, t, node.lineno))
    return out


def test_no_private_name_imported_from_another_module():
    bad = [
        f"{m}:{line} imports {name}"
        for m, name, line in private_imports()
        if (m, name) not in PRIVATE_EXCEPTIONS
    ]
    assert not bad, "private names imported from another module:\n" + "\n".join(bad)


def test_private_exceptions_are_still_needed():
    used = {(m, name) for m, name, _ in private_imports()}
    stale = sorted(set(PRIVATE_EXCEPTIONS) - used)
    assert not stale, f"remove these from PRIVATE_EXCEPTIONS, they no longer happen: {stale}"


def test_the_walker_sees_function_body_and_relative_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "recode_lib"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "b.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("from . import x\n")
    (pkg / "a" / "x.py").write_text("def f():\n    from recode_lib import b\nfrom ..b import y\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", pkg)
    got = {(i.module, i.target, i.in_function) for i in internal_imports()}
    assert got == {
        ("recode_lib.a", "recode_lib.a.x", False),
        ("recode_lib.a.x", "recode_lib.b", True),
        ("recode_lib.a.x", "recode_lib.b", False),
    }
    assert cycles({"a": {"b": []}, "b": {"c": [], "a": []}, "c": {}}) == [["a", "b"]]


def report() -> str:
    imports = internal_imports()
    graph = package_graph(imports)
    body = [i for i in imports if i.in_function]
    lines = [
        f"internal imports: {len(imports)}, in function bodies: {len(body)} "
        f"({100 * len(body) / max(len(imports), 1):.0f}%), of modules that are not heavy "
        f"to import: {len(lazy_internal_imports(imports))}",
        "package graph (* = only function-body imports):",
    ]
    for a in sorted(graph):
        arrows = [
            f"{b}{'*' if all(i.in_function for i in graph[a][b]) else ''}" for b in sorted(graph[a])
        ]
        lines.append(f"  {a:15s} -> {', '.join(arrows)}")
    lines.append(f"cycles: {cycles(graph) or 'none'}")
    up = upward_arrows(imports)
    lines.append(f"arrows against the layers: {len(up)}")
    lines += [f"  {i.module}:{i.line} -> {i.target}" for i in up]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
