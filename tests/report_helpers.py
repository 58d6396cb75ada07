"""A tiny constructed run folder for the run-report tests: the result files the notebooks
write (their shapes as the notebooks write them), one real PNG figure and one TensorBoard event
file. `shift` moves every pass@1 by that much (a second run to compare); `fingerprint` and
`temperature` are the evaluation spec the frontiers record."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

OUTCOMES = ("correct", "optimization_failure", "correctness_failure", "format_error")


def png(width: int = 4, height: int = 3) -> bytes:
    """A valid RGB PNG (solid colour), built by hand."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    raw = b"".join(b"\x00" + b"\xe6\x39\x46" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def write(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


def outcome_row(correct: float, fmt_err: float) -> dict:
    rest = 1.0 - correct - fmt_err
    return {
        "correct": correct,
        "optimization_failure": rest / 2,
        "correctness_failure": rest / 2,
        "format_error": fmt_err,
    }


def make_run(
    root: Path,
    name: str,
    *,
    shift: float = 0.0,
    fingerprint: str = "fp-a",
    temperature: float = 0.8,
) -> Path:
    run = Path(root) / name
    run.mkdir(parents=True)
    protocol = {
        "temperature": temperature,
        "top_p": 1.0,
        "max_new_tokens": 256,
        "reasoning": True,
        "early_stop": False,
    }
    stamp = {"git": "abc123", "versions": {"torch": "2.13.0", "trl": "1.16.0"}}
    write(
        run / "manifest.json",
        {
            "00_data_and_models": {
                "status": "completed",
                "wall_s": 12.5,
                "parameters": {"MODEL": "smollm2"},
                "started": "2026-12-01T10:00:00",
                "finished": "2026-12-01T10:00:12",
                **stamp,
            },
            "03_lcb_rb": {
                "status": "awaiting_human",
                "wall_s": 3.0,
                "pending": "3 of 3 LCB-RB pairs await human adjudication\n  recode adjudicate X",
                **stamp,
            },
            "05_codegen_eval": {
                "status": "completed",
                "wall_s": 40.0,
                "parameters": {"N_SAMPLES": 2},
                **stamp,
            },
            "06_strictness_sweep": {
                "status": "failed",
                "wall_s": 5.0,
                "error": "notebook 06_strictness_sweep.ipynb failed in cell 4: boom",
                **stamp,
            },
            "11_settings_sweep": {
                "status": "excluded",
                "reason": "no claim at this scale",
                **stamp,
            },
        },
    )
    benches = ["humanevalplus", "mbppplus"]
    table = {
        p: {
            b: {
                "pass@1": v + shift,
                "ci": [v + shift - 0.2, v + shift + 0.2],
                "mean_tokens": 100.0,
                "n_problems": 8,
                "n_samples": 2,
            }
            for b in benches
        }
        for p, v in (("start", 0.5), ("outcome_only", 0.5), ("gated", 0.625))
    }
    summary = {
        p: {"average_pass@1": sum(c["pass@1"] for c in t.values()) / 2, "mean_tokens": 100.0}
        for p, t in table.items()
    }
    base = summary["outcome_only"]["average_pass@1"]
    for s in summary.values():
        s["gain_vs_baseline"] = (s["average_pass@1"] - base) / base
        s["token_change_vs_baseline"] = 0.0
    write(
        run / "05_codegen_eval" / "headline.json",
        {
            "benchmarks": benches,
            "policies": list(table),
            "baseline": "outcome_only",
            "table": table,
            "summary": summary,
            "k": [1],
            "transfer": None,
        },
    )
    for b in benches:
        write(
            run / "05_codegen_eval" / b / "run.json",
            {
                "model": "smollm2",
                "sampling": {k: protocol[k] for k in ("temperature", "top_p", "max_new_tokens")}
                | {"seed": 0},
                "reasoning": True,
                "early_stop": False,
            },
        )
    spec = {"protocol": protocol, "spec_fingerprint": fingerprint, "eval_spec": protocol}
    sweep_rows = []
    for r, k, c in (("k1", "1", 0.4), ("kinf", "inf", 0.3)):
        sweep_rows.append(
            {
                "run": r,
                "k": k,
                "reward": f"strict_{k}",
                "pass@1": c + shift,
                "tokens_mean": 90.0,
                "spec_fingerprint": fingerprint,
                **outcome_row(c + shift, 0.1),
            }
        )
        write(
            run / "06_strictness_sweep" / "eval" / r / "summary.json",
            {"pass@1": c + shift, "pass@1_ci": [c + shift - 0.1, c + shift + 0.1]},
        )
    write(run / "06_strictness_sweep" / "frontier.json", {"rows": sweep_rows, **spec})
    write(
        run / "06_strictness_sweep" / "headline.json",
        {"runs": ["k1", "kinf"], "pass@1": {r["run"]: r["pass@1"] for r in sweep_rows}},
    )
    eval_dir = run / "07_weight_averaging" / "sweep" / "eval"
    alpha_rows = []
    for a, c, f in ((-1.0, 0.2, 0.3), (0.0, 0.4, 0.05), (1.0, 0.3, 0.05), (2.5, 0.1, 0.6)):
        alpha_rows.append(
            {
                "alpha": a,
                "n_samples": 20,
                "n_problems": 10,
                "pass@1": c + shift,
                "solve_rate": 0.5,
                "mean_tokens": 80.0,
                "spec_fingerprint": fingerprint,
                **outcome_row(c + shift, f),
            }
        )
        write(
            eval_dir / f"alpha_{a!r}" / "summary.json",
            {"pass@1": c + shift, "pass@1_ci": [c + shift - 0.05, c + shift + 0.05]},
        )
    write(
        run / "07_weight_averaging" / "frontier.json",
        {
            "rows": alpha_rows,
            "eval_dir": str(eval_dir),
            "n_samples": 2,
            "endpoints": {"source": "sweep", "low": "k1/final", "high": "kinf/final"},
            "format_error_rise": {"threshold": 2.0, "inside": 0.133, "outside": 0.6},
            "turnover": [
                {
                    "alpha_a": -1.0,
                    "alpha_b": 0.0,
                    "turnover": 0.5,
                    "matched_turnover": 0.4,
                    "matched_turnover_lo": 0.2,
                    "matched_turnover_hi": 0.6,
                    "turnover_null": 0.3,
                    "turnover_null_lo": 0.1,
                    "turnover_null_hi": 0.5,
                    "turnover_excess": 0.1,
                    "turnover_excess_lo": -0.1,
                    "turnover_excess_hi": 0.3,
                }
            ],
            **spec,
        },
    )
    write(
        run / "07_weight_averaging" / "headline.json",
        {
            "alphas": [r["alpha"] for r in alpha_rows],
            "pass@1": {repr(r["alpha"]): r["pass@1"] for r in alpha_rows},
        },
    )
    write(
        run / "08_ensemble_passk" / "passk.json",
        {
            "ks": [1, 2],
            "pools": {"best_single": [0.0], "interp+extrap": [-1.0, 0.0, 1.0, 2.5]},
            "rows": [
                {
                    "pool": "best_single",
                    "k": 2,
                    "pass": 0.45 + shift,
                    "lo": 0.3,
                    "hi": 0.6,
                    "members": [0.0],
                    "n_problems": 10,
                },
                {
                    "pool": "interp+extrap",
                    "k": 2,
                    "pass": 0.55 + shift,
                    "lo": 0.4,
                    "hi": 0.7,
                    "members": [-1.0, 0.0, 1.0, 2.5],
                    "n_problems": 10,
                },
            ],
            "gain_extended_vs_best": {
                "k": 2,
                "gain": 0.1,
                "lo": 0.02,
                "hi": 0.18,
                "base": 0.45,
                "pool": 0.55,
                "relative": 0.222,
                "relative_lo": 0.04,
                "relative_hi": 0.4,
            },
            "extrapolated_unique": {
                "budget": 1,
                "rate": 0.1,
                "rate_lo": 0.0,
                "rate_hi": 0.2,
                "null_rate": 0.05,
                "excess_rate": 0.05,
                "excess_rate_lo": -0.05,
                "excess_rate_hi": 0.15,
            },
        },
    )
    fig_dir = run / "99_paper_figures" / "figures"
    fig_dir.mkdir(parents=True)
    (fig_dir / "frontier.png").write_bytes(png())
    (run / "05_codegen_eval" / "headline.png").write_bytes(png(6, 2))
    write(run / "99_paper_figures" / "figures.json", {"figures_dir": str(fig_dir), "made": {}})
    tb = run / "04_cg_grpo" / "gated" / "runs" / "Dec01_10-00-00_host"
    tb.mkdir(parents=True)
    (tb / "events.out.tfevents.1764583200.host.1.0").write_bytes(b"\x00")
    return run
