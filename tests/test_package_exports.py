"""Package exports: each package's public names (its __all__) resolve, importing a package
stays cheap (its heavy submodules load on first access: recode_lib.core.lazy), no public name
is also a submodule's name, and the lazy-export helper does what it says."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import textwrap

import pytest

import recode_lib
from recode_lib.core.lazy import LazyExportError, lazy_exports, submodules

PACKAGES = sorted(
    info.name for info in pkgutil.walk_packages(recode_lib.__path__, "recode_lib.") if info.ispkg
)
HEAVY = ("torch", "transformers", "trl", "vllm", "datasets", "pandas", "matplotlib")
# (package, name): why a public name may still equal a submodule's (it may only shrink)
CLASH_EXCEPTIONS: dict[tuple[str, str], str] = {}


def test_the_packages_are_found():
    assert {"recode_lib.core", "recode_lib.evaluation", "recode_lib.training"} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_importing_a_package_imports_no_heavy_package(package):
    code = f"import sys, {package}; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]", f"import {package} pulls in {out}"


def test_every_public_name_resolves():
    bad = []
    for package in PACKAGES:
        mod = importlib.import_module(package)
        for name in getattr(mod, "__all__", ()):
            try:
                getattr(mod, name)
            except Exception as e:  # an export naming a missing attribute or a broken module
                bad.append(f"{package}.{name}: {type(e).__name__}: {e}")
    assert not bad, "\n".join(bad)


def test_no_public_name_is_also_a_submodule():
    clash = sorted(
        (package, name)
        for package in PACKAGES
        for name in set(getattr(importlib.import_module(package), "__all__", ()))
        & submodules(package)
    )
    assert set(clash) <= set(CLASH_EXCEPTIONS), f"ambiguous names (rename one): {clash}"
    assert set(CLASH_EXCEPTIONS) <= set(clash), "remove the stale CLASH_EXCEPTIONS"


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """A package `lazypkg` with a submodule `sub` (defining `value`) and `other`."""
    pkg = tmp_path / "lazypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "sub.py").write_text("value = 42\n")
    (pkg / "other.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("lazypkg")
    for name in [m for m in sys.modules if m == "lazypkg" or m.startswith("lazypkg.")]:
        del sys.modules[name]


def test_a_lazy_name_is_imported_on_first_access_only(fake_package):
    getattr_, dir_ = lazy_exports("lazypkg", {"value": "sub"})
    fake_package.__getattr__, fake_package.__dir__ = getattr_, dir_
    assert "lazypkg.sub" not in sys.modules
    assert "value" in dir(fake_package)
    assert fake_package.value == 42
    assert "lazypkg.sub" in sys.modules and vars(fake_package)["value"] == 42  # kept
    with pytest.raises(AttributeError, match="nothing"):
        getattr(fake_package, "nothing")  # noqa: B009


def test_a_name_that_is_also_a_submodule_is_refused(fake_package):
    with pytest.raises(LazyExportError, match=r"\['other'\]"):
        lazy_exports("lazypkg", {"other": "sub"})


def test_a_missing_submodule_is_refused(fake_package):
    with pytest.raises(LazyExportError, match="nowhere"):
        lazy_exports("lazypkg", {"value": "nowhere"})


def test_a_package_whose_module_is_imported_first_still_gives_the_name():
    # the ambiguity the clash rule prevents: after `import pkg.module`, pkg.module is the
    # module; an exported name, distinct from every submodule, is unaffected by import order
    code = textwrap.dedent(
        """
        import recode_lib.core.stamps
        from recode_lib.core import provenance
        print(callable(provenance) and provenance.__module__)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "recode_lib.core.stamps"
