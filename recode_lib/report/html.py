"""The report page's building blocks: escaped text, numbers with intervals, tables, embedded
figures, "not run" notes, and the page itself.

    page("Run smoke", section("Status", table(["notebook", "status"], [["00", "completed"]])))
    figure("figures/smoke/frontier.png", "frontier")   # <img src="data:image/png;base64,...">
    not_run("05_codegen_eval", "runs/smoke/05_codegen_eval/headline.json")

A page is one static HTML file: its style sheet inline, every figure a base64 PNG data URI, no
script and no address outside the file except the relative links the report adds to local
folders (tracker logs). Every function returns HTML text; values are escaped here, so callers
pass plain strings and numbers (`Markup` marks text that is HTML already). It reads only the PNG
files it embeds and decides nothing about what a run shows (run_page, compare do).
"""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222;
       line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
h3 { margin-top: 1.4em; }
table { border-collapse: collapse; margin: .6em 0; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.not-run { color: #8a5a00; background: #fff6e0; padding: .3em .6em;
           border-left: 3px solid #e0a800; }
.refused { color: #8a1c1c; background: #fdeaea; padding: .3em .6em;
           border-left: 3px solid #c62828; }
.ok { color: #1b5e20; } .bad { color: #b71c1c; } .muted { color: #777; }
figure { display: inline-block; margin: .5em; max-width: 560px; vertical-align: top; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: .8em; color: #555; word-break: break-all; }
code, pre { font-family: ui-monospace, monospace; font-size: .85em; }
pre { background: #f7f7f7; padding: .6em; overflow-x: auto; white-space: pre-wrap; }
details { margin: .4em 0; } summary { cursor: pointer; }
.status-completed { color: #1b5e20; } .status-failed { color: #b71c1c; }
.status-awaiting_human { color: #8a5a00; font-weight: bold; }
"""


class Markup(str):
    """Text that is HTML already (not escaped again)."""


def esc(x) -> str:
    return x if isinstance(x, Markup) else html.escape("" if x is None else str(x))


def fmt(x, nd: int = 3) -> str:
    """A number for a table: n/a for None or NaN, yes/no for a bool, `nd` decimals for a float."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def fmt_ci(value, ci, nd: int = 3) -> str:
    """'0.500 [0.200, 0.800]' (the interval left out when it is unknown)."""
    if ci and len(ci) == 2 and ci[0] is not None and ci[1] is not None:
        return f"{fmt(value, nd)} [{fmt(ci[0], nd)}, {fmt(ci[1], nd)}]"
    return fmt(value, nd)


def fmt_delta(a, b, nd: int = 3) -> str:
    """b - a with its sign, n/a unless both are numbers."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
        return "n/a"
    return f"{b - a:+.{nd}f}"


def table(header: list, rows: list[list], numeric: set[int] | None = None) -> str:
    """An HTML table; cells are escaped unless `Markup`; columns in `numeric` right-aligned."""
    numeric = numeric or set()
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td{' class=num' if i in numeric else ''}>{esc(c)}</td>" for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return Markup(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def png_data_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def figure(path, caption: str) -> str:
    """The PNG at path embedded as a data URI, with its caption; a not_run note when the file
    cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return not_run(caption, path, f"unreadable: {exc}")
    return figure_bytes(data, caption)


def figure_bytes(data: bytes, caption: str) -> str:
    return Markup(
        f'<figure><img src="{png_data_uri(data)}" alt="{esc(caption)}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def not_run(what: str, path, why: str = "") -> str:
    """'<what>: not run — <path>' (or the reason the file could not be read)."""
    tail = f" ({esc(why)})" if why else ""
    return Markup(
        f'<p class="not-run"><b>{esc(what)}</b>: not run, no <code>{esc(path)}</code>{tail}</p>'
    )


def refused(what: str, reason: str) -> str:
    return Markup(f'<p class="refused"><b>{esc(what)}</b>: refused: {esc(reason)}</p>')


def para(text, cls: str = "") -> str:
    return Markup(f"<p{f' class={cls!r}' if cls else ''}>{esc(text)}</p>")


def details(summary: str, body) -> str:
    return Markup(f"<details><summary>{esc(summary)}</summary>{esc(body)}</details>")


def pre(text: str) -> str:
    return Markup(f"<pre>{esc(text)}</pre>")


def link(href: str, text: str) -> str:
    return Markup(f'<a href="{esc(href)}">{esc(text)}</a>')


def section(title: str, *parts, level: int = 2, anchor: str = "") -> str:
    ident = f' id="{esc(anchor)}"' if anchor else ""
    return Markup(f"<h{level}{ident}>{esc(title)}</h{level}>" + "".join(esc(p) for p in parts))


def page(title: str, *parts) -> str:
    """The whole document: inline style, no script, no external resource."""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{esc(title)}</h1>" + "".join(esc(p) for p in parts) + "</body></html>\n"
    )
