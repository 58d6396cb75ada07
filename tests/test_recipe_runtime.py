"""Every shipped GRPO recipe's logging backends are installed: transformers raises when the
trainer is created with a `report_to` backend that is missing, which a GPU recipe would only
hit on the cluster."""

import pytest

from recode_lib.training.grpo import RECIPES_DIR, load_recipe


@pytest.mark.parametrize("name", sorted(p.stem for p in RECIPES_DIR.glob("*.yaml")))
def test_recipe_report_to_backends_are_installed(name):
    from transformers.integrations import get_reporting_integration_callbacks

    backends = [b for b in load_recipe(name).report_to if b != "none"]
    for callback in get_reporting_integration_callbacks(backends):
        callback()  # raises RuntimeError naming the package when the backend is missing
