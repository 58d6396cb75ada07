"""Two runs side by side: headline deltas, and frontiers overlaid only where their evaluation
specs match.

    path = write_comparison("runs/smoke", "runs/laptop")   # -> runs/smoke/compare-laptop.html
    deltas = headline_deltas(read_run(a), read_run(b))      # {step: [(key, a, b), ...]}
    ok, why = overlay_allowed({"smoke 07": fa, "laptop 07": fb})

The page shows: each notebook's status and wall time in both runs; ReCode's headline table
(05) with B - A per policy and benchmark and for the average, with whether both were evaluated
under one protocol (the protocol fingerprint of recode_lib.evaluation.spec, from each
evaluation folder's run.json: when they differ the deltas mix the change of protocol with the
change of model, and the page says so); every other step's headline.json numbers with B - A
(numeric leaves only); paper B's frontiers (06's sweep, 07's alpha grid, 11's per setting)
overlaid in one figure (recode_lib.report.overlay) when every point of both carries one
evaluation-spec fingerprint (recode_lib.analysis.frontier.check_overlay), else refused with
check_overlay's reason (both fingerprints and the protocol fields that differ); and 08's pass@k
side by side. A step one run lacks shows as "not run" with the path. It computes differences
only; significance stays with each run's own intervals (run_page).
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.analysis.frontier import FrontierError, check_overlay
from recode_lib.core.run_files import (
    ENSEMBLE,
    SETTINGS_SWEEP,
    STEPS,
    STRICTNESS_SWEEP,
    WEIGHT_AVERAGING,
)
from recode_lib.report.html import (
    Markup,
    details,
    esc,
    figure_bytes,
    fmt,
    fmt_delta,
    not_run,
    page,
    para,
    refused,
    section,
    table,
)
from recode_lib.report.overlay import overlay_png
from recode_lib.report.run_view import SETTINGS, is_missing, read_run

MAX_ROWS = 300  # numbers shown per step's headline (the rest counted)


def flatten(obj, prefix: str = "", depth: int = 0) -> dict[str, float]:
    """The numeric leaves of a JSON value as {"a/b/0": x} (booleans are not numbers)."""
    out: dict[str, float] = {}
    if depth > 8:
        return out
    if isinstance(obj, bool):
        return out
    if isinstance(obj, (int, float)):
        out[prefix or "value"] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out |= flatten(v, f"{prefix}/{k}" if prefix else str(k), depth + 1)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out |= flatten(v, f"{prefix}/{i}" if prefix else str(i), depth + 1)
    return out


def headline_deltas(a: dict, b: dict) -> dict[str, list[tuple]]:
    """{step: [(key, value in A, value in B)]} over the numeric keys both headline.json have."""
    out = {}
    for step in STEPS:
        ha, hb = a["headlines"].get(step), b["headlines"].get(step)
        if ha is None or hb is None or is_missing(ha) or is_missing(hb):
            continue
        fa, fb = flatten(ha), flatten(hb)
        out[step] = [(k, fa[k], fb[k]) for k in fa if k in fb]
    return out


def overlay_allowed(frontiers: dict) -> tuple[bool, str]:
    """(True, the shared spec fingerprint) or (False, check_overlay's reason)."""
    try:
        return True, check_overlay(frontiers)
    except FrontierError as exc:
        return False, str(exc)


def protocol_note(a: dict, b: dict) -> str:
    pa, pb = a["headline_protocols"], b["headline_protocols"]
    if is_missing(pa) or is_missing(pb) or not pa or not pb:
        return para("evaluation protocol: not recorded in both runs (no run.json)", "muted")
    sa, sb = set(pa.values()), set(pb.values())
    if sa == sb and len(sa) == 1:
        return para(f"both evaluated under one protocol (fingerprint {sa.pop()})", "ok")
    return refused(
        "one protocol",
        f"{a['label']} was evaluated with protocol fingerprint(s) "
        f"{sorted(sa)}, {b['label']} with {sorted(sb)}: each delta mixes the change "
        "of sampling protocol with the change of model",
    )


def status_section(a: dict, b: dict) -> str:
    rb = {r["notebook"]: r for r in b["notebooks"]}
    rows = []
    for r in a["notebooks"]:
        o = rb.get(r["notebook"], {})
        rows.append(
            [
                r["notebook"],
                r["status"],
                fmt(r["wall_s"], 1),
                o.get("status", "not run"),
                fmt(o.get("wall_s"), 1),
            ]
        )
    return section(
        "Notebooks",
        table(
            [
                "notebook",
                f"A: {a['label']} status",
                "wall time (s)",
                f"B: {b['label']} status",
                "wall time (s)",
            ],
            rows,
            numeric={2, 4},
        ),
        anchor="notebooks",
    )


def recode_section(a: dict, b: dict) -> str:
    title = "ReCode headline table: B - A"
    ha, hb = a["headline"], b["headline"]
    for name, h in ((a["label"], ha), (b["label"], hb)):
        if is_missing(h):
            return section(
                title,
                not_run(f"{name}: ReCode's headline table", h["missing"], h.get("why", "")),
                anchor="headline",
            )
    rows = []
    for p in [p for p in ha.get("policies", []) if p in hb.get("policies", [])]:
        for bench in [x for x in ha.get("benchmarks", []) if x in hb.get("benchmarks", [])]:
            va = ha["table"].get(p, {}).get(bench, {}).get("pass@1")
            vb = hb["table"].get(p, {}).get(bench, {}).get("pass@1")
            rows.append([p, bench, fmt(va), fmt(vb), fmt_delta(va, vb)])
        va = ha.get("summary", {}).get(p, {}).get("average_pass@1")
        vb = hb.get("summary", {}).get(p, {}).get("average_pass@1")
        rows.append(
            [
                p,
                Markup("<b>average</b>"),
                fmt(va),
                fmt(vb),
                Markup(f"<b>{esc(fmt_delta(va, vb))}</b>"),
            ]
        )
    return section(
        title,
        protocol_note(a, b),
        table(
            [
                "policy",
                "benchmark",
                f"{a['label']} pass@1",
                f"{b['label']} pass@1",
                "delta (B - A)",
            ],
            rows,
            numeric={2, 3, 4},
        ),
        anchor="headline",
    )


def deltas_section(a: dict, b: dict) -> str:
    deltas = headline_deltas(a, b)
    parts = []
    for step in STEPS:
        if step not in deltas:
            marks = [(v, v["headlines"].get(step) or {"missing": ""}) for v in (a, b)]
            which = [
                str(Path(v["run_dir"]) / step / "headline.json")
                + (f" ({m['why']})" if m.get("why") else "")
                for v, m in marks
                if is_missing(m)
            ]
            parts.append(para(f"{step}: no numbers in both: {' and '.join(which)}", "not-run"))
            continue
        rows = [[k, fmt(x), fmt(y), fmt_delta(x, y)] for k, x, y in deltas[step][:MAX_ROWS]]
        extra = len(deltas[step]) - len(rows)
        body = table(["key", a["label"], b["label"], "delta (B - A)"], rows, numeric={1, 2, 3})
        if extra > 0:
            body = Markup(body + para(f"... and {extra} more numbers", "muted"))
        parts.append(details(f"{step}: {len(deltas[step])} numbers in both headline.json", body))
    return section("Every headline.json: B - A", *parts, anchor="deltas")


def frontier_block(title: str, fa, fb, a: dict, b: dict) -> str:
    for name, f in ((a["label"], fa), (b["label"], fb)):
        if is_missing(f):
            return section(
                title, not_run(f"{name}: {title}", f["missing"], f.get("why", "")), level=3
            )
    labels = {f"A {a['label']} ({title})": fa, f"B {b['label']} ({title})": fb}
    ok, why = overlay_allowed(labels)
    if not ok:
        return section(title, refused("overlay", why), level=3)
    png = overlay_png(
        {f"A: {a['label']}": fa, f"B: {b['label']}": fb}, f"{title}: {a['label']} vs {b['label']}"
    )
    return section(
        title,
        para(f"same evaluation spec (fingerprint {why}): overlaid", "ok"),
        figure_bytes(png, f"{title}: {a['label']} vs {b['label']}"),
        level=3,
    )


def ensemble_block(a: dict, b: dict) -> str:
    title = f"Ensemble pass@k ({ENSEMBLE})"
    ea, eb = a["ensemble"], b["ensemble"]
    for name, e in ((a["label"], ea), (b["label"], eb)):
        if is_missing(e):
            return section(title, not_run(f"{name}: the ensemble table", e["missing"]), level=3)
    ia = {(r["pool"], r["k"]): r["pass"] for r in ea.get("rows", [])}
    ib = {(r["pool"], r["k"]): r["pass"] for r in eb.get("rows", [])}
    rows = [
        [p, k, fmt(ia[(p, k)]), fmt(ib[(p, k)]), fmt_delta(ia[(p, k)], ib[(p, k)])]
        for (p, k) in ia
        if (p, k) in ib
    ]
    return section(
        title,
        table(["pool", "k", a["label"], b["label"], "delta (B - A)"], rows, numeric={1, 2, 3, 4}),
        level=3,
    )


def frontiers_section(a: dict, b: dict) -> str:
    parts = [
        frontier_block(f"strictness sweep ({STRICTNESS_SWEEP})", a["sweep"], b["sweep"], a, b),
        frontier_block(f"alpha frontier ({WEIGHT_AVERAGING})", a["frontier"], b["frontier"], a, b),
        ensemble_block(a, b),
    ]
    for s in SETTINGS:
        ra = a["settings"].get(s) if not is_missing(a["settings"]) else None
        rb = b["settings"].get(s) if not is_missing(b["settings"]) else None
        if ra is None or rb is None:
            lacking = [
                str(Path(v["settings_dir"]) / s / "frontier.json")
                for v, r in ((a, ra), (b, rb))
                if r is None
            ]
            parts.append(not_run(f"{SETTINGS_SWEEP}, {s} setting", " and no ".join(lacking)))
            continue
        parts.append(frontier_block(f"{s} setting: sweep", ra["sweep"], rb["sweep"], a, b))
        parts.append(frontier_block(f"{s} setting: alpha grid", ra["alpha"], rb["alpha"], a, b))
    return section(
        "Paper B: frontiers (overlaid only under one evaluation spec)", *parts, anchor="frontiers"
    )


def comparison_html(a: dict, b: dict) -> str:
    """The page comparing two read_run views (A first, B second; deltas are B - A)."""
    return page(
        f"Run comparison: {a['label']} (A) vs {b['label']} (B)",
        para(f"A = {a['run_dir']}; B = {b['run_dir']}; every delta is B - A", "muted"),
        status_section(a, b),
        recode_section(a, b),
        frontiers_section(a, b),
        deltas_section(a, b),
    )


def write_comparison(run_a, run_b, out=None) -> Path:
    """comparison_html of both run folders written to `out` (default
    <run_a>/compare-<name of run_b>.html), atomically; returns the path."""
    a, b = read_run(run_a), read_run(run_b)
    out = Path(out) if out is not None else Path(run_a) / f"compare-{b['name']}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(comparison_html(a, b), encoding="utf-8")
    tmp.replace(out)
    return out
