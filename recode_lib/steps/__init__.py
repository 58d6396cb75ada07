"""The pipeline's steps as typed objects: each step's parameters (recode_lib.steps.catalog),
its notebook's parameters cell kept equal to them (cells), and profiles checked against them
before anything runs (profile). `python -m recode_lib.steps [--write | --fields]` checks (or
rewrites) the cells. It runs nothing itself."""

from recode_lib.steps.base import ParameterError, StepParams, param
from recode_lib.steps.catalog import STEPS
from recode_lib.steps.profile import check_profile, step_schemas

__all__ = ["STEPS", "ParameterError", "StepParams", "check_profile", "param", "step_schemas"]
