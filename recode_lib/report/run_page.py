"""One run's report page: a self-contained static HTML file of what a run folder holds.

    path = write_report("runs/smoke")              # -> runs/smoke/report.html
    html = run_report_html(read_run("runs/smoke"))

Sections, in order: the notebooks (status and wall time per notebook from the run manifest,
the reason, error or pending human step), ReCode's headline table (05: pass@1 with its bootstrap
CI per policy and benchmark, the average, the gain over outcome-only GRPO, tokens), paper B's
tables with their intervals (06's strictness sweep, 07's frontier along alpha with the
format-error rise and the solved-set turnover, 08's ensembles and their paired gains over the
best single checkpoint, 11's per-setting results), the laptop profile's claims observed or not
(recode_lib.orchestration.laptop_report), every figure embedded as a PNG, the training-curve
trackers (a relative link to each TensorBoard log folder and the command that opens them), and
provenance (git hashes, package versions, each notebook's parameters). A result a notebook did
not write shows as "not run" with the path looked for. It reads through run_view and draws
nothing new (the figures are the run's own).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from recode_lib.core.jsonl import write_json_atomic
from recode_lib.core.run_files import ENSEMBLE, SETTINGS_SWEEP, STRICTNESS_SWEEP, WEIGHT_AVERAGING
from recode_lib.orchestration.laptop_report import report_markdown
from recode_lib.report.html import (
    Markup,
    details,
    esc,
    figure,
    fmt,
    fmt_ci,
    link,
    not_run,
    page,
    para,
    pre,
    section,
    table,
)
from recode_lib.report.run_view import is_missing, read_run

REPORT_FILE = "report.html"
OUTCOMES = ("correct", "optimization_failure", "correctness_failure", "format_error")


def _missing_note(what: str, marker: dict) -> str:
    return not_run(what, marker["missing"], marker.get("why", ""))


def notebooks_section(view: dict) -> str:
    rows, total = [], 0.0
    for r in view["notebooks"]:
        total += r["wall_s"] or 0.0
        note = (r["note"] or "").strip().splitlines()
        rows.append(
            [
                r["notebook"],
                Markup(f'<span class="status-{esc(r["status"])}">{esc(r["status"])}</span>'),
                fmt(r["wall_s"], 1),
                r["started"] or "",
                r["finished"] or "",
                (note[0][:240] + (" ..." if len(note) > 1 or len(note[0]) > 240 else ""))
                if note
                else "",
            ]
        )
    parts = [
        table(
            ["notebook", "status", "wall time (s)", "started", "finished", "note"],
            rows,
            numeric={2},
        )
    ]
    if is_missing(view["manifest"]):
        parts.insert(
            0, _missing_note("run manifest (recode reproduce writes it)", view["manifest"])
        )
    parts.append(para(f"total wall time {total:.1f} s over the notebooks the manifest records"))
    waiting = [r for r in view["notebooks"] if r["status"] == "awaiting_human"]
    for r in waiting:
        parts.append(section(f"{r['notebook']} waits for a person", pre(r["note"]), level=3))
    return section("Notebooks", *parts, anchor="notebooks")


def headline_section(view: dict) -> str:
    h = view["headline"]
    title = "ReCode: headline table (05_codegen_eval)"
    if is_missing(h):
        return section(title, _missing_note("ReCode's headline table", h), anchor="headline")
    benches = h.get("benchmarks", [])
    rows = []
    for p in h.get("policies", []):
        cells = h["table"].get(p, {})
        s = h.get("summary", {}).get(p, {})
        rows.append(
            [p]
            + [fmt_ci(cells.get(b, {}).get("pass@1"), cells.get(b, {}).get("ci")) for b in benches]
            + [
                fmt(s.get("average_pass@1")),
                _pct(s.get("gain_vs_baseline")),
                fmt(s.get("mean_tokens"), 1),
                _pct(s.get("token_change_vs_baseline")),
            ]
        )
    header = (
        ["policy"]
        + [f"{b} pass@1 [95% CI]" for b in benches]
        + [
            "average pass@1",
            f"gain vs {h.get('baseline')}",
            "mean tokens",
            f"token change vs {h.get('baseline')}",
        ]
    )
    parts = [table(header, rows, numeric=set(range(1, len(header))))]
    protos = view["headline_protocols"]
    if protos and not is_missing(protos):
        fps = sorted(set(protos.values()))
        parts.append(
            para(
                f"evaluation protocol fingerprint{'s' if len(fps) > 1 else ''}: "
                f"{', '.join(fps)} (over {len(protos)} evaluation folders)",
                "muted",
            )
        )
    return section(title, *parts, anchor="headline")


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:+.1f}%"


def _spec_line(payload: dict) -> str:
    fp = payload.get("spec_fingerprint")
    proto = payload.get("protocol")
    return para(
        f"evaluation spec fingerprint {fp or 'not recorded'}"
        + (f"; protocol {json.dumps(proto, sort_keys=True)}" if proto else ""),
        "muted",
    )


def sweep_table(payload: dict) -> str:
    rows = []
    for r in payload.get("rows", []):
        rows.append(
            [
                r.get("run"),
                r.get("k") if r.get("k") is not None else "",
                r.get("reward", ""),
                fmt_ci(r.get("pass@1"), payload["ci"].get(r.get("run"))),
            ]
            + [fmt(r.get(o)) for o in OUTCOMES]
            + [fmt(r.get("tokens_mean"), 1)]
        )
    return table(
        ["run", "k", "reward", "pass@1 [95% CI]", *OUTCOMES, "mean tokens"],
        rows,
        numeric=set(range(3, 9)),
    )


def alpha_table(payload: dict) -> str:
    rows = []
    for r in payload.get("rows", []):
        a = repr(float(r["alpha"]))
        rows.append(
            [
                fmt(float(r["alpha"]), 2),
                fmt_ci(r.get("pass@1"), payload["ci"].get(a)),
                fmt_ci(r.get("format_error"), payload["format_ci"].get(a)),
            ]
            + [fmt(r.get(o)) for o in OUTCOMES[:3]]
            + [fmt(r.get("solve_rate")), r.get("n_samples"), fmt(r.get("mean_tokens"), 1)]
        )
    return table(
        [
            "alpha",
            "pass@1 [95% CI]",
            "format error [Wilson 95%]",
            *OUTCOMES[:3],
            "solve rate",
            "samples",
            "mean tokens",
        ],
        rows,
        numeric=set(range(0, 9)),
    )


def turnover_table(payload: dict) -> str:
    rows = [
        [
            f"{fmt(t['alpha_a'], 2)} -> {fmt(t['alpha_b'], 2)}",
            fmt(t.get("turnover")),
            fmt_ci(
                t.get("matched_turnover"),
                [t.get("matched_turnover_lo"), t.get("matched_turnover_hi")],
            ),
            fmt_ci(t.get("turnover_null"), [t.get("turnover_null_lo"), t.get("turnover_null_hi")]),
            fmt_ci(
                t.get("turnover_excess"), [t.get("turnover_excess_lo"), t.get("turnover_excess_hi")]
            ),
        ]
        for t in payload.get("turnover", [])
    ]
    return table(
        [
            "neighbouring alphas",
            "turnover (all samples)",
            "matched turnover [95%]",
            "split-half null [95%]",
            "excess [95%]",
        ],
        rows,
        numeric={1, 2, 3, 4},
    )


def ensemble_parts(passk: dict) -> list:
    rows = [
        [
            r["pool"],
            r["k"],
            fmt_ci(r.get("pass"), [r.get("lo"), r.get("hi")]),
            ", ".join(str(m) for m in r.get("members", [])),
        ]
        for r in passk.get("rows", [])
    ]
    parts = [table(["pool", "k", "pass@k [95% CI]", "members"], rows, numeric={1, 2})]
    gains = []
    for name, key in (
        ("extended (interp+extrap) vs best single", "gain_extended_vs_best"),
        ("interpolation vs best single", "gain_interp_vs_best"),
    ):
        g = passk.get(key)
        if g:
            gains.append(
                [
                    name,
                    g.get("k"),
                    fmt(g.get("base")),
                    fmt(g.get("pool")),
                    fmt_ci(g.get("gain"), [g.get("lo"), g.get("hi")]),
                    fmt_ci(g.get("relative"), [g.get("relative_lo"), g.get("relative_hi")]),
                ]
            )
    if gains:
        parts.append(
            table(
                ["paired gain", "k", "best single", "pool", "gain [95% CI]", "relative [95% CI]"],
                gains,
                numeric={1, 2, 3, 4, 5},
            )
        )
    u = passk.get("extrapolated_unique")
    if u and u.get("rate") is not None:
        parts.append(
            para(
                f"unique extrapolated solves at an equal budget of {u.get('budget')} "
                f"draws: rate {fmt_ci(u.get('rate'), [u.get('rate_lo'), u.get('rate_hi')])}"
                f", null {fmt(u.get('null_rate'))}, excess "
                + fmt_ci(u.get("excess_rate"), [u.get("excess_rate_lo"), u.get("excess_rate_hi")])
            )
        )
    return parts


def paper_b_section(view: dict) -> str:
    parts = []
    sweep = view["sweep"]
    parts.append(section(f"Strictness sweep ({STRICTNESS_SWEEP})", level=3))
    parts += (
        [_missing_note("the strictness sweep's frontier", sweep)]
        if is_missing(sweep)
        else [sweep_table(sweep), _spec_line(sweep)]
    )
    front = view["frontier"]
    parts.append(section(f"Frontier along alpha ({WEIGHT_AVERAGING})", level=3))
    if is_missing(front):
        parts.append(_missing_note("the weight-averaging frontier", front))
    else:
        rise = front.get("format_error_rise") or {}
        ends = front.get("endpoints") or {}
        parts += [
            para(
                f"endpoints: {ends.get('source', 'n/a')} (low {ends.get('low')}, high "
                f"{ends.get('high')}); {front.get('n_samples')} samples per problem and alpha"
            ),
            alpha_table(front),
            para(
                f"format-error share for |alpha| <= {rise.get('threshold')}: "
                f"{fmt(rise.get('inside'))}; beyond: {fmt(rise.get('outside'))}"
            ),
            turnover_table(front),
            _spec_line(front),
        ]
    ens = view["ensemble"]
    parts.append(section(f"Ensemble pass@k ({ENSEMBLE})", level=3))
    parts += [_missing_note("the ensemble table", ens)] if is_missing(ens) else ensemble_parts(ens)
    parts.append(section(f"Settings: single, tool, agentic ({SETTINGS_SWEEP})", level=3))
    settings = view["settings"]
    if is_missing(settings) or not settings:
        parts.append(
            not_run(
                "the per-setting sweeps",
                settings["missing"]
                if is_missing(settings)
                else f"{view['settings_dir']}/<setting>/frontier.json",
                settings.get("why", "") if is_missing(settings) else "",
            )
        )
    for s, res in settings.items() if not is_missing(settings) else []:
        parts.append(section(f"{s} setting", level=4))
        for what, key, render in (
            ("sweep", "sweep", lambda p: [sweep_table(p), _spec_line(p)]),
            ("alpha grid", "alpha", lambda p: [alpha_table(p), _spec_line(p)]),
            ("ensembles", "ensemble", ensemble_parts),
        ):
            payload = res[key]
            parts += (
                [_missing_note(f"{s}: {what}", payload)]
                if is_missing(payload)
                else [para(what, "muted"), *render(payload)]
            )
    return section("Paper B: strictness, weight averaging, ensembles", *parts, anchor="paper-b")


def markdown_html(md: str) -> str:
    """The laptop report's markdown (headers, bullets, **bold**) as HTML."""
    out, open_list = [], False
    for line in md.splitlines():
        text = esc(line.strip().lstrip("-").strip())
        text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
        if line.startswith("## "):
            if open_list:
                out.append("</ul>")
                open_list = False
            out.append(f"<h3>{text.lstrip('#').strip()}</h3>")
        elif line.lstrip().startswith("- "):
            if not open_list:
                out.append("<ul>")
                open_list = True
            indent = ' style="margin-left:1.5em"' if line.startswith("  ") else ""
            out.append(f"<li{indent}>{text}</li>")
    if open_list:
        out.append("</ul>")
    return Markup("".join(out))


def claims_section(view: dict) -> str:
    claims = view["claims"]
    title = "Claims: observed or not"
    if is_missing(claims):
        return section(title, _missing_note("the claims report", claims), anchor="claims")
    verdicts = {
        True: ("observed", "ok"),
        False: ("NOT observed", "bad"),
        None: ("not measured", "muted"),
    }
    rows = []
    for name, c in claims.items():
        word, cls = verdicts[c.get("observed")]
        rows.append(
            [name, c.get("claim", ""), Markup(f'<b class="{cls}">{word}</b>'), c.get("why", "")]
        )
    evidence = markdown_html(report_markdown({"run_dir": view["run_dir"], "claims": claims}))
    return section(
        title,
        table(["claim", "statement", "verdict", "why"], rows),
        details("the numbers behind each claim", evidence),
        anchor="claims",
    )


def figures_section(view: dict) -> str:
    figs = view["figures"]
    if not figs:
        return section(
            "Figures",
            para(
                "no figures: run notebook 99 (`make figures PROFILE=...`) "
                "or the notebooks that draw them",
                "not-run",
            ),
            anchor="figures",
        )
    parts = []
    for group in dict.fromkeys(f["group"] for f in figs):
        parts.append(
            section(
                group,
                *[figure(f["path"], f["caption"]) for f in figs if f["group"] == group],
                level=3,
            )
        )
    return section("Figures", *parts, anchor="figures")


def trackers_section(view: dict, base: Path) -> str:
    found = view["trackers"]
    cmd = f"tensorboard --logdir {view['run_dir']}"
    if not found:
        return section(
            "Training curves (tracker)",
            para(
                "no tracker logs in this run yet: GRPO recipes and the reward model log to "
                "TensorBoard under each run's output folder (<output_dir>/runs/, "
                "02_reward_model/tb/); see docs/tracking.md",
                "not-run",
            ),
            anchor="trackers",
        )
    rows = [[link(os.path.relpath(t["dir"], base), t["relative"]), t["files"]] for t in found]
    return section(
        "Training curves (tracker)",
        table(["TensorBoard log folder", "event files"], rows, numeric={1}),
        para("open them all:"),
        pre(cmd),
        anchor="trackers",
    )


def provenance_section(view: dict) -> str:
    prov = view["provenance"]
    parts = []
    gits = prov.get("git") or {}
    parts.append(
        table(
            ["git commit (manifest)", "notebooks"],
            [[g, ", ".join(stems)] for g, stems in gits.items()],
        )
        if gits
        else para("no git hash recorded (no manifest)", "muted")
    )
    vers = prov.get("versions") or {}
    if vers:
        parts.append(
            table(
                ["package", "version (notebooks)"],
                [
                    [pkg, "; ".join(f"{v} ({len(stems)} notebooks)" for v, stems in vs.items())]
                    for pkg, vs in sorted(vers.items())
                ],
            )
        )
    now = prov.get("report") or {}
    parts.append(
        para(
            f"this report: written {now.get('time')} from git {now.get('git')}, python "
            f"{now.get('python')} on {now.get('platform')}",
            "muted",
        )
    )
    params = [
        details(r["notebook"], pre(json.dumps(r["parameters"], indent=1, sort_keys=True)))
        for r in view["notebooks"]
        if r.get("parameters")
    ]
    if params:
        parts.append(section("Parameters per notebook", *params, level=3))
    return section("Provenance", *parts, anchor="provenance")


def run_report_html(view: dict, base: Path | None = None) -> str:
    """The page for one read_run view; `base` is the folder the page lives in (relative links)."""
    base = Path(base) if base is not None else Path(view["run_dir"])
    toc = " · ".join(
        f'<a href="#{a}">{t}</a>'
        for a, t in (
            ("notebooks", "notebooks"),
            ("headline", "ReCode headline"),
            ("paper-b", "paper B"),
            ("claims", "claims"),
            ("figures", "figures"),
            ("trackers", "training curves"),
            ("provenance", "provenance"),
        )
    )
    return page(
        f"Run report: {view['name']}",
        para(f"run folder {view['run_dir']}", "muted"),
        Markup(f"<p>{toc}</p>"),
        notebooks_section(view),
        headline_section(view),
        paper_b_section(view),
        claims_section(view),
        figures_section(view),
        trackers_section(view, base),
        provenance_section(view),
    )


def write_report(run_dir, out=None) -> Path:
    """read_run(run_dir) rendered to `out` (default run_dir/report.html), written atomically;
    returns the path. Also writes <out>.json: the view it rendered (for scripts)."""
    view = read_run(run_dir)
    out = Path(out) if out is not None else Path(run_dir) / REPORT_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    text = run_report_html(view, out.parent)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    write_json_atomic(out.with_suffix(".json"), view)
    return out
