"""The top tier below the CLI: what runs the pipeline and checks a machine, not a stage.

pipeline (papermill runs of the notebooks, the manifest), staging (fetching models and data),
dryrun (the paper profile shrunk to a tiny model), gpu_check / gpu_check_bare (measuring a GPU
machine), interactive (notebooks bound to a profile in JupyterLab), variants (profile variants),
nbtools (stripping and checking notebooks). Stages never import it.
"""
