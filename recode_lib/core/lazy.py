"""Lazy package exports (PEP 562): a package's public names, each imported from its own
submodule on first access, so that `import recode_lib.<package>` stays cheap when some of its
submodules pull torch or trl in.

    # recode_lib/evaluation/__init__.py
    from recode_lib.core.lazy import lazy_exports
    EXPORTS = {"EvalSpec": "spec", "summary_table": "summary"}   # name -> submodule
    __all__ = sorted(EXPORTS)
    __getattr__, __dir__ = lazy_exports(__name__, EXPORTS)

    from recode_lib.evaluation import EvalSpec   # imports recode_lib.evaluation.spec now

A name is looked up once, then kept in the package's namespace. It maps names to submodules of
the same package only (no re-export across packages, so the import-layer test's arrows stay
those of the submodules), and it refuses a name that is also a submodule's name: after that
submodule is imported, the package attribute would be the module or the name depending on
import order. Submodules themselves (`from recode_lib.analysis import plots`) need no entry.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from recode_lib.core.errors import RecodeError


class LazyExportError(RecodeError, AttributeError):
    """A lazy export table that names a missing submodule, or a name that is also one."""


def submodules(package: str) -> set[str]:
    """The names of `package`'s submodules and subpackages (from its folder; nothing imported)."""
    folder = Path(sys.modules[package].__file__).parent
    return {
        p.stem if p.suffix == ".py" else p.name
        for p in folder.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """(__getattr__, __dir__) for the package named `package` (its __name__, already in
    sys.modules) exporting each name of `exports` from the submodule it maps to. Raises
    LazyExportError for a name that is also a submodule, or a submodule that does not exist."""
    subs = submodules(package)
    clash = sorted(set(exports) & subs)
    if clash:
        raise LazyExportError(
            f"{package}: export(s) {clash} are also submodule names (ambiguous: rename one)"
        )
    missing = sorted({m for m in exports.values() if m.split(".")[0] not in subs})
    if missing:
        raise LazyExportError(f"{package}: no submodule(s) {missing} for its lazy exports")
    table = dict(exports)

    def __getattr__(name: str):
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)  # looked up once
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
