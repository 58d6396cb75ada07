"""`recode merge --low DIR --high DIR --alpha A [--alpha B ...] --out DIR`: a checkpoint per alpha.

The argument half of recode_lib.weights.merge.merge_grid (theta = alpha*high + (1-alpha)*low, in
float32; outputs DIR/alpha_<A>). Prints one `alpha=<A>\t<path>` line per output.
"""

from __future__ import annotations

from recode_lib.cli import CliError
from recode_lib.weights.merge import MergeConfig, MergeError, merge_grid, parse_alphas


def add_arguments(parser) -> None:
    parser.add_argument("--low", required=True, help="checkpoint at alpha=0 (HF folder)")
    parser.add_argument("--high", required=True, help="checkpoint at alpha=1 (HF folder)")
    parser.add_argument(
        "--alpha",
        action="append",
        required=True,
        type=str,
        help="an alpha (repeatable; a comma-separated list also works)",
    )
    parser.add_argument("--out", required=True, help="parent folder of the alpha_<A> outputs")
    parser.add_argument("--force", action="store_true", help="rebuild existing outputs")
    parser.add_argument(
        "--max-shard-gb",
        type=float,
        default=5.0,
        help="shard an unsharded source above this size (default 5)",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bars (default: a bar per alpha written)",
    )


def run(args) -> int:
    try:
        cfg = MergeConfig(
            low=args.low,
            high=args.high,
            alphas=parse_alphas(args.alpha),
            out=args.out,
            force=args.force,
            max_shard_bytes=int(args.max_shard_gb * 1024**3),
            progress=not args.no_progress,
        )
        done = merge_grid(cfg)
    except MergeError as exc:
        raise CliError(str(exc)) from None
    for a, path in done.items():
        print(f"alpha={a!r}\t{path}")
    return 0
