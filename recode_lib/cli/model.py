"""`recode model prepare|info [NAME]`: convert the embedded model once, or print a model's config.

The argument half of recode_lib.core.models.resolve_model; it loads no weights.
"""

from __future__ import annotations

import json
from pathlib import Path

from recode_lib.cli import CliError
from recode_lib.core.models import ModelError, resolve_model


def add_arguments(parser) -> None:
    parser.add_argument(
        "action",
        choices=["prepare", "info"],
        help="prepare: convert the embedded model once; info: print its config",
    )
    parser.add_argument(
        "name",
        nargs="?",
        default="smollm2",
        help="embedded alias (smollm2), local folder or hub id",
    )


def run(args) -> int:
    try:
        path = resolve_model(args.name)
    except ModelError as exc:
        raise CliError(str(exc)) from None
    if args.action == "prepare":
        print(path)
        return 0
    cfg = json.loads((Path(path) / "config.json").read_text())
    print(
        json.dumps(
            {
                "path": path,
                "model_type": cfg.get("model_type"),
                "hidden_size": cfg.get("hidden_size"),
                "num_hidden_layers": cfg.get("num_hidden_layers"),
                "vocab_size": cfg.get("vocab_size"),
            },
            indent=2,
        )
    )
    return 0
