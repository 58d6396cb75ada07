"""`recode rm --config FILE --output-dir DIR [--pairs FILE] [--retrain] [--save-steps N]`.

The argument half of reward-model training, and the module accelerate runs:
`accelerate launch ... -m recode_lib.cli.rm --config RUN/rm_config.json --pairs
RUN/train_pairs.jsonl --output-dir DIR --retrain` (what
recode_lib.training.rm_launch.launch_reward_model(launcher="accelerate") starts). --config is a
JSON (or YAML) mapping of recode_lib.process_reward.model.RMConfig fields; --pairs a jsonl of
{"prompt", "chosen", "rejected"} records (default: train_pairs.jsonl next to --config). An RM
already trained on these pairs with this config (its record's fingerprint) is kept unless
--retrain. Under accelerate every rank runs this; rank 0 writes the RM and its record.
"""

from __future__ import annotations

import sys
from pathlib import Path

from recode_lib.cli import CliError, module_main
from recode_lib.core.jsonl import read_jsonl
from recode_lib.process_reward.model import train_or_reuse
from recode_lib.training.rm_launch import PAIRS_FILE, load_rm_config


def add_arguments(parser) -> None:
    """`recode rm` / `python -m recode_lib.cli.rm` (the accelerate entry point)."""
    parser.add_argument(
        "--config",
        required=True,
        help="JSON/YAML of RMConfig fields (the launcher writes "
        "<output_dir>_launch/rm_config.json)",
    )
    parser.add_argument(
        "--output-dir",
        required=True,
        help="the reward model's folder (replaces the config's output_dir)",
    )
    parser.add_argument(
        "--pairs",
        default=None,
        help=f"jsonl of training pairs (default: {PAIRS_FILE} next to --config)",
    )
    parser.add_argument(
        "--retrain",
        action="store_true",
        help="train even when a finished RM of these pairs and config exists",
    )
    parser.add_argument(
        "--save-steps",
        type=int,
        default=0,
        help="checkpoint every N steps (resumed after a failure); 0: none",
    )


def run(args) -> int:
    pairs_file = Path(args.pairs) if args.pairs else Path(args.config).parent / PAIRS_FILE
    for f in (Path(args.config), pairs_file):
        if not f.is_file():
            raise CliError(f"{f} does not exist")
    try:
        cfg = load_rm_config(args.config, output_dir=args.output_dir)
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from None
    info = train_or_reuse(
        read_jsonl(pairs_file), cfg, retrain=args.retrain, save_steps=args.save_steps
    )
    print(
        f"reward model: {cfg.output_dir} ({info['steps']} steps, "
        f"{'reused' if info['reused'] else 'trained'})"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m recode_lib.cli.rm` (the entry point accelerate runs)."""
    return module_main(
        sys.modules[__name__],
        "python -m recode_lib.cli.rm",
        "train the Bradley-Terry process reward model",
        argv,
    )


if __name__ == "__main__":
    raise SystemExit(main())
