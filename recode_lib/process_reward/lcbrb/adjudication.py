"""Human adjudication of LCB-RB candidate pairs: a notebook widget, a terminal loop, the batch
stop, and the automatic fallback.

    store = DecisionStore("runs/smoke/03_lcb_rb/adjudication.jsonl")
    widget = adjudication_widget(kept_pairs, store)     # in JupyterLab: display(widget)
    auto_decide(kept_pairs, store, policy="pending")    # ADJUDICATION "auto": never blocks
    decisions = store.decisions()                       # {pair id: {"decision", "by", ...}}

    require_human_decisions(kept_pairs, store, OUT)     # ADJUDICATION "widget": writes the
                                                        # pending pairs, raises AdjudicationPending
    terminal_loop(read_pending(OUT), store)             # `recode adjudicate DIR`: one pair a prompt
    pending_widget(OUT)  # the widget on the pending pairs, any notebook

The widget shows the problem and both traces side by side (better on the left, with their
sandbox verdicts and the consistency judge's answers) and four buttons: Accept, Reject,
Swap (the right trace is actually the better one), Skip. Each click is written to the store at
once (append-only; a later decision on the same pair supersedes an earlier one), so closing
the notebook loses nothing and re-opening resumes at the first undecided pair.
In batch runs nothing waits for a human: auto_decide records, for every undecided pair,
decision "pending" (policy="pending") or "accept" (policy="accept"), always with by="auto",
so a benchmark built from them says how many pairs were not human-verified.
With ADJUDICATION "widget" a batch run (papermill, `make reproduce`) cannot click: notebook 03
calls require_human_decisions, which writes the kept pairs still lacking a human decision to
<dir>/adjudication_pending.jsonl (PENDING_FILE) and raises AdjudicationPending, whose message
says how to decide them (`recode adjudicate <dir>` in a terminal, or pending_widget(<dir>) in
JupyterLab) and that re-running resumes; recode_lib.runner.pipeline stops the batch run there and
adds the exact resume command. Every decision (widget or terminal) is appended to the store at once,
under a file lock and re-read from disk first, so the widget and the terminal may both be open.
It does not build the benchmark file (recode_lib.process_reward.lcbrb.benchmark does).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import html
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.core.jsonl import JsonlStore, read_jsonl, write_jsonl_atomic

DECISIONS = ("accept", "reject", "swap", "pending")
DECISIONS_FILE = "adjudication.jsonl"  # the store notebook 03 keeps in its folder
PENDING_FILE = "adjudication_pending.jsonl"  # the pairs a batch run left for a human


class AdjudicationPending(RecodeError, RuntimeError):
    """Kept LCB-RB pairs still lack a human decision (ADJUDICATION "widget"). `pending` is how
    many, `folder` the notebook folder holding the pending pairs and the decisions."""

    def __init__(self, message: str, pending: int = 0, folder: str = ""):
        super().__init__(message)
        self.pending, self.folder = pending, folder

    def _render_traceback_(self):  # IPython shows the message without a Python traceback
        return [f"{type(self).__name__}: {self}"]


class DecisionStore:
    """Append-only decisions; the latest record per pair wins. Every call reads the file
    again, so decisions another process (the terminal loop, the widget) wrote are seen, and
    record() appends under an exclusive file lock."""

    def __init__(self, path):
        self.path = Path(path)
        self.store = JsonlStore(self.path, key="seq")

    @contextlib.contextmanager
    def _locked(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _reload(self) -> JsonlStore:
        self.store = JsonlStore(self.path, key="seq")
        return self.store

    def record(self, pair_id: str, decision: str, by: str, note: str = "") -> dict:
        if decision not in DECISIONS:
            raise ValueError(f"decision must be one of {DECISIONS}, got {decision!r}")
        with self._locked():
            store = self._reload()
            rec = {
                "seq": len(store),
                "pair_id": pair_id,
                "decision": decision,
                "by": by,
                "note": note,
                "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            }
            store.append(rec)
        return rec

    def decisions(self) -> dict[str, dict]:
        out = {}
        for r in self._reload().records():
            out[r["pair_id"]] = {k: r[k] for k in ("decision", "by", "note", "time")}
        return out


def undecided_by_human(pairs, store: DecisionStore) -> list[dict]:
    """The pairs whose latest decision is not a human's (none, or an automatic one)."""
    have = store.decisions()
    return [p for p in pairs if have.get(p["id"], {}).get("by") != "human"]


def read_pending(folder) -> list[dict]:
    """The pairs a batch run left for a human (folder/PENDING_FILE); FileNotFoundError naming
    the file when no run wrote one."""
    path = Path(folder) / PENDING_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no pending LCB-RB pairs here (notebook 03 writes this "
            'file when it runs with ADJUDICATION = "widget")'
        )
    return read_jsonl(path)


def pending_message(n_pending: int, n_pairs: int, folder) -> str:
    """How to decide the pending pairs and carry on, in words (AdjudicationPending's message)."""
    folder = Path(folder)
    return (
        f"{n_pending} of {n_pairs} LCB-RB pairs await human adjudication (ADJUDICATION = "
        f'"widget"); the pending pairs are in {folder / PENDING_FILE}. Decide them either\n'
        f"  in a terminal:   recode adjudicate {folder}\n"
        f"  or in JupyterLab (make lab): the widget notebook 03 shows, or in any notebook cell\n"
        f"    from recode_lib.process_reward.lcbrb.adjudication import pending_widget; "
        f'pending_widget("{folder}")\n'
        f"Every decision is saved at once to {folder / DECISIONS_FILE} (stop any time and "
        "come back); skipped pairs stay pending. Then re-run this notebook (a batch run: "
        "resume it, it picks the decisions up). To go on without human verification "
        'instead, run it with ADJUDICATION = "auto" (the benchmark is then labelled '
        "unverified)."
    )


def require_human_decisions(pairs, store: DecisionStore, folder) -> int:
    """Write the pairs lacking a human decision to folder/PENDING_FILE (an empty file when none)
    and raise AdjudicationPending naming how to decide them; returns len(pairs) when every
    pair has one."""
    pending = undecided_by_human(pairs, store)
    write_jsonl_atomic(Path(folder) / PENDING_FILE, pending)
    if pending:
        raise AdjudicationPending(
            pending_message(len(pending), len(pairs), folder),
            pending=len(pending),
            folder=str(folder),
        )
    return len(pairs)


# the terminal loop's answers: what the user types -> the decision recorded (None: skip)
ANSWERS = {
    "a": "accept",
    "accept": "accept",
    "r": "reject",
    "reject": "reject",
    "s": "swap",
    "swap": "swap",
    "n": None,
    "next": None,
    "skip": None,
}
QUIT = ("q", "quit", "exit")
PROMPT = "[a]ccept  [r]eject  [s]wap (the second is better)  [n]ext (skip)  [q]uit > "


def _trace_block(title: str, trace: str, verdict: dict, consistent, max_chars: int) -> str:
    text = (
        trace
        if len(trace) <= max_chars
        else trace[:max_chars] + f"\n... [{len(trace) - max_chars} more characters]"
    )
    rule = "-" * 78
    return (
        f"{rule}\n{title}: outcome {verdict.get('outcome')}, passed {verdict.get('passed')}/"
        f"{verdict.get('total')}, judge says consistent: {consistent}\n{rule}\n{text}\n"
    )


def terminal_loop(
    pairs,
    store: DecisionStore,
    *,
    read=input,
    write=print,
    redo: bool = False,
    max_chars: int = 4000,
) -> dict:
    """Ask for a decision on each pair still undecided by a human (every pair with redo=True),
    one at a time: the problem, then the better (passing) and the worse (failing) trace with
    their sandbox verdicts and the consistency judge's answers, then a prompt (PROMPT). Each
    answer is written to the store before the next pair is shown (by="human"). Stops at the
    last pair, at "q", or at the end of input (EOF); returns {"decided", "skipped", "left",
    "total"} (left: still without a human decision afterwards)."""
    queue = list(pairs) if redo else undecided_by_human(pairs, store)
    decided = skipped = 0
    write(
        f"{len(queue)} pair(s) to adjudicate ({len(pairs)} pending in all); decisions go to "
        f"{store.path}"
    )
    for i, p in enumerate(queue, start=1):
        c = p.get("consistency") or {}
        write(f"\n=== [{i}/{len(queue)}] {p['id']} ===\n{p.get('prompt', '')[:3000]}\n")
        write(
            _trace_block(
                "FIRST: better (passes)",
                p["better"],
                p.get("better_verdict") or {},
                c.get("better"),
                max_chars,
            )
        )
        write(
            _trace_block(
                "SECOND: worse (fails)",
                p["worse"],
                p.get("worse_verdict") or {},
                c.get("worse"),
                max_chars,
            )
        )
        while True:
            try:
                answer = read(PROMPT).strip().lower()
            except EOFError:
                answer = "q"
            if answer in QUIT or answer in ANSWERS:
                break
            write(f"not an answer: {answer!r}")
        if answer in QUIT:
            break
        if ANSWERS[answer] is None:
            skipped += 1
            continue
        store.record(p["id"], ANSWERS[answer], "human", note="recode adjudicate")
        decided += 1
        write(f"saved: {ANSWERS[answer]}")
    left = len(undecided_by_human(pairs, store))
    write(
        f"\n{decided} decided, {skipped} skipped; {left} of {len(pairs)} still without a human "
        "decision"
    )
    return {"decided": decided, "skipped": skipped, "left": left, "total": len(pairs)}


def auto_decide(pairs, store: DecisionStore, policy: str = "pending") -> int:
    """Record an automatic decision for every pair without one (or with only "pending" when
    policy="accept"); returns how many were written."""
    if policy not in ("pending", "accept"):
        raise ValueError(f"policy must be 'pending' or 'accept', got {policy!r}")
    have = store.decisions()
    n = 0
    for p in pairs:
        d = have.get(p["id"])
        if d is None or (policy == "accept" and d["decision"] == "pending" and d["by"] == "auto"):
            store.record(p["id"], policy, "auto", note="batch run: no human adjudication")
            n += 1
    return n


def _pane(title: str, trace: str, verdict: dict, consistent) -> str:
    return (
        f"<b>{html.escape(title)}</b> — outcome {html.escape(str(verdict.get('outcome')))}, "
        f"passed {verdict.get('passed')}/{verdict.get('total')}, judge says consistent: "
        f"{consistent}<pre style='white-space:pre-wrap;max-height:420px;overflow:auto'>"
        f"{html.escape(trace)}</pre>"
    )


def adjudication_widget(pairs, store: DecisionStore, *, redo: bool = False):
    """An ipywidgets VBox walking through the pairs still undecided by a human."""
    import ipywidgets as w

    have = store.decisions()
    queue = [p for p in pairs if redo or have.get(p["id"], {}).get("by") != "human"]
    state = {"i": 0}
    header, left, right = (
        w.HTML(),
        w.HTML(layout=w.Layout(width="50%")),
        w.HTML(layout=w.Layout(width="50%")),
    )
    buttons = {
        name: w.Button(description=name.capitalize())
        for name in ("accept", "reject", "swap", "skip")
    }

    def show():
        if state["i"] >= len(queue):
            header.value = f"<b>Done</b>: {len(queue)} pairs adjudicated or skipped."
            left.value = right.value = ""
            for b in buttons.values():
                b.disabled = True
            return
        p = queue[state["i"]]
        c = p.get("consistency", {})
        header.value = (
            f"<b>{state['i'] + 1}/{len(queue)}</b> {html.escape(p['id'])}"
            f"<pre style='white-space:pre-wrap'>{html.escape(p['prompt'][:3000])}</pre>"
        )
        left.value = _pane("Better (passes)", p["better"], p["better_verdict"], c.get("better"))
        right.value = _pane("Worse (fails)", p["worse"], p["worse_verdict"], c.get("worse"))

    def click(name):
        def handler(_):
            if name != "skip":
                store.record(queue[state["i"]]["id"], name, "human")
            state["i"] += 1
            show()

        return handler

    for name, b in buttons.items():
        b.on_click(click(name))
    show()
    return w.VBox([header, w.HBox([left, right]), w.HBox(list(buttons.values()))])


def pending_widget(folder, *, redo: bool = False):
    """adjudication_widget over the pairs a batch run left in folder (read_pending), saving to
    folder/DECISIONS_FILE: paste into any JupyterLab cell, no model is loaded."""
    folder = Path(folder)
    return adjudication_widget(
        read_pending(folder), DecisionStore(folder / DECISIONS_FILE), redo=redo
    )
