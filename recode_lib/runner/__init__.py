"""The top tier below the CLI: what runs the pipeline and checks a machine, not a stage.

pipeline (papermill runs of the notebooks, the manifest), staging (fetching models and data),
dryrun (the paper profile shrunk to a tiny model), gpu_check / gpu_check_bare (measuring a GPU
machine), interactive (notebooks bound to a profile in JupyterLab), variants (profile variants),
nbtools (stripping and checking notebooks). Stages never import it.
"""

from recode_lib.core.lazy import lazy_exports

# name -> the submodule defining it, imported on first access (recode_lib.core.lazy)
LAZY_EXPORTS = {
    "parse_list": "pipeline",
}
__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
