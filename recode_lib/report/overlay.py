"""The comparison's overlay figure: two runs' frontiers on one set of axes, as PNG bytes.

    png = overlay_png({"smoke": payload_a, "laptop": payload_b}, "07 frontier")

Each payload is a frontier.json (an alpha grid's rows with `alpha`, or a strictness sweep's with
`run`). Left panel: paper B's plane, optimization- vs correctness-failure rate, one line per
run (alpha order, or the sweep's k order), points labelled; right panel: pass@1 per alpha (or
per sweep run) for each run, with its interval when the payload carries `ci` (run_view adds
it). Drawn in the house style (recode_lib.analysis.plots.set_style). It does not decide
whether two frontiers may be overlaid: recode_lib.report.compare checks their evaluation
specs first (analysis.frontier.check_overlay) and never calls this for a mismatch.
"""

from __future__ import annotations

import io
from collections.abc import Mapping

from recode_lib.analysis.plots import annotate_points, set_style

COLORS = ("#457b9d", "#e63946")


def _key(row) -> str:
    return f"{float(row['alpha']):g}" if "alpha" in row else str(row.get("run"))


def _ci(payload, row):
    ci = (payload.get("ci") or {}).get(
        repr(float(row["alpha"])) if "alpha" in row else row.get("run")
    )
    return ci if ci and None not in ci else None


def overlay_png(payloads: Mapping[str, Mapping], title: str) -> bytes:
    """Both runs' points (module docstring) in one PNG."""
    import matplotlib.pyplot as plt

    set_style()
    fig, (plane, rate) = plt.subplots(1, 2, figsize=(8.4, 3.4))
    alpha_axis = all(all("alpha" in r for r in p.get("rows", [])) for p in payloads.values())
    order = []
    for p in payloads.values():
        for r in p.get("rows", []):
            if _key(r) not in order:
                order.append(_key(r))
    if alpha_axis:
        order.sort(key=float)
    for (name, p), color in zip(payloads.items(), COLORS, strict=False):
        rows = sorted(p.get("rows", []), key=lambda r: order.index(_key(r)))
        xs = [r["correctness_failure"] for r in rows]
        ys = [r["optimization_failure"] for r in rows]
        plane.plot(xs, ys, "-o", color=color, ms=4, lw=1, label=name)
        annotate_points(
            plane, [(_key(r), x, y) for r, x, y in zip(rows, xs, ys, strict=True)], color=color
        )
        pos = [float(_key(r)) if alpha_axis else order.index(_key(r)) for r in rows]
        vals = [r.get("pass@1") or 0.0 for r in rows]
        err = [
            [
                v - c[0]
                for v, c in ((v, _ci(p, r) or (v, v)) for v, r in zip(vals, rows, strict=True))
            ],
            [
                c[1] - v
                for v, c in ((v, _ci(p, r) or (v, v)) for v, r in zip(vals, rows, strict=True))
            ],
        ]
        rate.errorbar(pos, vals, yerr=err, fmt="-o", color=color, ms=4, lw=1, capsize=2, label=name)
    plane.set_xlabel("correctness-failure rate")
    plane.set_ylabel("optimization-failure rate")
    plane.legend()
    rate.set_xlabel("alpha" if alpha_axis else "run")
    if not alpha_axis:
        rate.set_xticks(range(len(order)), order, rotation=30)
    rate.set_ylabel("pass@1 (95% CI)")
    rate.legend()
    fig.suptitle(title)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
