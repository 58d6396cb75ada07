"""Profile variants: a named overlay of a profile's notebook sections that runs those notebooks
again, with changed parameters, into a run folder of its own. Paper B runs its strictness /
extrapolation study at two scales; the paper profile's `scale_32b` variant is notebooks 06-08
again with a 32B start checkpoint:

    # notebooks/params/paper.yaml
    _variants:
      scale_32b:
        06_strictness_sweep: {MODEL: Qwen/Qwen2.5-32B-Instruct, RECIPE: strictness_paper_32b}
        07_weight_averaging: {TENSOR_PARALLEL_SIZE: 4}
        08_ensemble_passk: {}

    spec = variant_spec(load_profile("paper"), "scale_32b")   # sections merged, key by key
    variant_notebooks(load_profile("paper"), "scale_32b")     # ["06_...", "07_...", "08_..."]
    variant_profile("paper", "scale_32b")                     # "paper@scale_32b": its run folder

`recode reproduce --profile paper --variant scale_32b` runs the variant's notebooks (only those)
with PROFILE "paper@scale_32b", so results go to runs/paper@scale_32b/ and never mix with the
base run's; `recode plan --profile paper` places the variant's stages beside the base ones
(notebook "06_strictness_sweep@scale_32b", ...) and the budget counts them; `recode stage`
lists their models. The `_variants` section starts with an underscore, so it is no notebook
section: the base run, the dry run and the smoke/laptop profiles never see it.

A variant's section values win over the base section's, key by key; `common` is the base's;
every other section stays as the base profile has it (the plan reads e.g. 06's parameters for
07). An overlay naming no notebook section, or a non-mapping, raises naming the variant and
the key. It runs nothing and knows no notebook's meaning: only the merge.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from recode_lib.core.errors import RecodeError

__all__ = [
    "VARIANTS_KEY",
    "VariantError",
    "variant_names",
    "variant_notebooks",
    "variant_profile",
    "variant_spec",
]

VARIANTS_KEY = "_variants"
SEPARATOR = "@"
STEM_RE = re.compile(r"^\d\d_[A-Za-z0-9_]+$")
NAME_RE = re.compile(r"^[A-Za-z0-9_]+$")


class VariantError(RecodeError, ValueError):
    """A variant that is not in the profile, or an overlay that is not well formed."""


def overlays(spec: Mapping[str, Any]) -> dict[str, dict[str, dict]]:
    """{variant: {notebook stem: parameters}} of a loaded profile ({} when it has none);
    VariantError naming the bad key of a malformed overlay."""
    raw = spec.get(VARIANTS_KEY) or {}
    where = f"{spec.get('_path', 'profile')}: {VARIANTS_KEY}"
    if not isinstance(raw, Mapping):
        raise VariantError(f"{where} must map variant names to notebook sections")
    out = {}
    for name, sections in raw.items():
        if not NAME_RE.match(str(name)):
            raise VariantError(f"{where}: variant name {name!r} must be letters, digits, _")
        if not isinstance(sections, Mapping) or not sections:
            raise VariantError(f"{where}.{name} must map notebook stems to parameters")
        for stem, params in sections.items():
            if not STEM_RE.match(str(stem)):
                raise VariantError(f"{where}.{name}: {stem!r} is not a notebook section (NN_name)")
            if params is not None and not isinstance(params, Mapping):
                raise VariantError(f"{where}.{name}.{stem} must be a parameter mapping")
        out[str(name)] = {str(s): dict(p or {}) for s, p in sections.items()}
    return out


def variant_names(spec: Mapping[str, Any]) -> list[str]:
    return list(overlays(spec))


def _overlay(spec: Mapping[str, Any], name: str) -> dict[str, dict]:
    known = overlays(spec)
    if name not in known:
        raise VariantError(
            f"{spec.get('_path', 'profile')}: no variant {name!r}; known: "
            f"{', '.join(known) or 'none'}"
        )
    return known[name]


def variant_notebooks(spec: Mapping[str, Any], name: str) -> list[str]:
    """The notebook stems the variant runs again (its overlay's sections), in overlay order."""
    return list(_overlay(spec, name))


def variant_spec(spec: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The profile with variant `name`'s sections merged over the base ones (the variant's
    values win), without the `_variants` section."""
    overlay = _overlay(spec, name)
    out = {
        k: (dict(v) if isinstance(v, Mapping) else v) for k, v in spec.items() if k != VARIANTS_KEY
    }
    for stem, params in overlay.items():
        out[stem] = {**dict(out.get(stem) or {}), **params}
    return out


def variant_profile(profile: str, name: str) -> str:
    """The profile name a variant runs under (PROFILE, the run folder): "<profile>@<name>"."""
    return f"{profile}{SEPARATOR}{name}"
