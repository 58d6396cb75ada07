"""`recode adjudicate [DIR] [--profile P] [--redo]`: decide the LCB-RB pairs a batch run left
for a person.

The argument half of recode_lib.process_reward.lcbrb.adjudication.terminal_loop: DIR is
notebook 03's folder (default runs/<profile>/03_lcb_rb), holding the pending pairs
(adjudication_pending.jsonl, written when the batch run stopped there) and the decisions
(adjudication.jsonl). One pair at a time: the problem, the passing and the failing trace, then
a prompt (a = accept, r = reject, s = swap, n = skip, q = quit); each answer is saved before the
next pair shows, so it can be stopped (q, Ctrl-D, Ctrl-C, a kill) and started again at the first
undecided pair. Standard input may be a pipe (one answer a line). At the end it prints how many
pairs are still undecided and the command that resumes the batch run (from the run's manifest).
Exit status 0; 2 (one error line) when DIR holds no pending pairs.
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.cli import CliError
from recode_lib.core.jsonl import read_json
from recode_lib.core.paths import runs_dir
from recode_lib.core.run_files import LCB_RB, step_dir
from recode_lib.process_reward.lcbrb.adjudication import (
    DECISIONS_FILE,
    DecisionStore,
    read_pending,
    terminal_loop,
)


def add_arguments(parser) -> None:
    parser.add_argument(
        "dir",
        nargs="?",
        default=None,
        help=f"notebook 03's folder (default: runs/<profile>/{LCB_RB})",
    )
    parser.add_argument(
        "--profile",
        default="paper",
        help="the run whose pairs to decide when DIR is not given (default paper)",
    )
    parser.add_argument(
        "--redo",
        action="store_true",
        help="also show pairs a person already decided (the latest answer wins)",
    )
    parser.add_argument(
        "--max-chars", type=int, default=4000, help="characters shown of each trace (default 4000)"
    )


def resume_hint(folder: Path) -> str | None:
    """The resume command the batch run recorded in its manifest for notebook 03, if any."""
    manifest = folder.parent / "manifest.json"
    if not manifest.is_file():
        return None
    return (read_json(manifest).get(folder.name) or {}).get("resume")


def run(args) -> int:
    folder = Path(args.dir) if args.dir else step_dir(runs_dir(args.profile, create=False), LCB_RB)
    try:
        pairs = read_pending(folder)
    except FileNotFoundError as exc:  # no batch run stopped here
        raise CliError(str(exc)) from None
    try:
        out = terminal_loop(
            pairs, DecisionStore(folder / DECISIONS_FILE), redo=args.redo, max_chars=args.max_chars
        )
    except KeyboardInterrupt:
        print("\ninterrupted: every decision made so far is saved")
        return 0
    resume = resume_hint(folder)
    if out["left"] == 0:
        print(
            "every pending pair has a human decision"
            + (f"; resume the batch run: {resume}" if resume else "")
        )
    else:
        print(f"run `recode adjudicate {folder}` again to decide the other {out['left']}")
    return 0
