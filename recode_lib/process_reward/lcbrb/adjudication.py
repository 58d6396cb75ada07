"""Human adjudication of LCB-RB candidate pairs: a notebook widget, and the batch fallback.

    store = DecisionStore("runs/smoke/03_lcb_rb/adjudication.jsonl")
    widget = adjudication_widget(kept_pairs, store)     # in JupyterLab: display(widget)
    auto_decide(kept_pairs, store, policy="pending")    # papermill/batch: never blocks
    decisions = store.decisions()                       # {pair id: {"decision", "by", ...}}

The widget shows the problem and both traces side by side (better on the left, with their
sandbox verdicts and the consistency judge's answers) and four buttons: Accept, Reject,
Swap (the right trace is actually the better one), Skip. Each click is written to the store at
once (append-only; a later decision on the same pair supersedes an earlier one), so closing
the notebook loses nothing and re-opening resumes at the first undecided pair.
In batch runs nothing waits for a human: auto_decide records, for every undecided pair,
decision "pending" (policy="pending") or "accept" (policy="accept"), always with by="auto",
so a benchmark built from them says how many pairs were not human-verified.
It does not build the benchmark file (recode_lib.process_reward.lcbrb.benchmark does).
"""

from __future__ import annotations

import datetime as _dt
import html

from recode_lib.jsonl import JsonlStore

DECISIONS = ("accept", "reject", "swap", "pending")


class DecisionStore:
    """Append-only decisions; the latest record per pair wins."""

    def __init__(self, path):
        self.store = JsonlStore(path, key="seq")

    def record(self, pair_id: str, decision: str, by: str, note: str = "") -> dict:
        if decision not in DECISIONS:
            raise ValueError(f"decision must be one of {DECISIONS}, got {decision!r}")
        rec = {"seq": len(self.store), "pair_id": pair_id, "decision": decision, "by": by,
               "note": note, "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        self.store.append(rec)
        return rec

    def decisions(self) -> dict[str, dict]:
        out = {}
        for r in self.store.records():
            out[r["pair_id"]] = {k: r[k] for k in ("decision", "by", "note", "time")}
        return out


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
    return (f"<b>{html.escape(title)}</b> — outcome {html.escape(str(verdict.get('outcome')))}, "
            f"passed {verdict.get('passed')}/{verdict.get('total')}, judge says consistent: "
            f"{consistent}<pre style='white-space:pre-wrap;max-height:420px;overflow:auto'>"
            f"{html.escape(trace)}</pre>")


def adjudication_widget(pairs, store: DecisionStore, *, redo: bool = False):
    """An ipywidgets VBox walking through the pairs still undecided by a human."""
    import ipywidgets as w

    have = store.decisions()
    queue = [p for p in pairs if redo or have.get(p["id"], {}).get("by") != "human"]
    state = {"i": 0}
    header, left, right = w.HTML(), w.HTML(layout=w.Layout(width="50%")), \
        w.HTML(layout=w.Layout(width="50%"))
    buttons = {name: w.Button(description=name.capitalize()) for name in
               ("accept", "reject", "swap", "skip")}

    def show():
        if state["i"] >= len(queue):
            header.value = f"<b>Done</b>: {len(queue)} pairs adjudicated or skipped."
            left.value = right.value = ""
            for b in buttons.values():
                b.disabled = True
            return
        p = queue[state["i"]]
        c = p.get("consistency", {})
        header.value = (f"<b>{state['i'] + 1}/{len(queue)}</b> {html.escape(p['id'])}"
                        f"<pre style='white-space:pre-wrap'>{html.escape(p['prompt'][:3000])}</pre>")
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
