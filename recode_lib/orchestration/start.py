"""The start model of a profile: the shared SFT checkpoint notebook 00 builds (or points at), else
the profile's MODEL; the one place the training notebooks ask for it.

    from recode_lib.orchestration.start import start_model
    MODEL = start_model(PROFILE, MODEL)         # notebooks 04, 06, 11: every RL run starts here

    # notebook 00's step (the SFT start of the profile, or its record that there is none)
    rec = prepare_start_model(PROFILE, MODEL, sft=SFTStartConfig(...),
                              transcripts=TranscriptConfig(...), benchmark="mbpp_train",
                              n_problems=32, held_out="humanevalplus,mbppplus,microbench")
    rec = prepare_start_model(PROFILE, MODEL, sft_model="/ckpt/my_sft")   # any SFT folder
    rec = prepare_start_model(PROFILE, MODEL)                               # none: MODEL itself

Paper B starts every RL run "from one shared SFT checkpoint". prepare_start_model writes
runs/<profile>/00_data_and_models/start_model.json: {"base": the MODEL it was built for, "start":
the checkpoint to start from, "source": "sft" | "sft_model" | "model", ...}. With `sft`, it
trains one: the `benchmark`'s problems without any task of the `held_out` benchmarks
(recode_lib.data.overlap: same task id in a family, or same statement), the first `n_problems`
of them (0: all), transcripts written and verified by recode_lib.training.sft_data (cached in
sft_transcripts/transcripts.jsonl, rebuilt when the problems or the transcript config change;
the left-out ones with their reasons in sft_transcripts/dropped.jsonl), then
recode_lib.training.sft_start.train_sft into sft/ (final/ is the merged checkpoint; a finished run
is skipped). `start_model(profile, model)` returns the record's "start" when its "base" is `model`
(so an SFT built for one base never starts another, e.g. notebook 11's paper MODEL), else `model`
unchanged; a record whose SFT folder is gone raises ModelError naming it. It does not evaluate the
start model.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.core.jsonl import read_json, read_jsonl, write_json_atomic, write_jsonl_atomic
from recode_lib.core.models import ModelError, resolve_model
from recode_lib.core.paths import runs_dir
from recode_lib.core.run_files import DATA, step_dir
from recode_lib.core.stamps import fingerprint
from recode_lib.data import load_benchmark
from recode_lib.data.overlap import drop_overlap
from recode_lib.training.sft_data import FORMAT_VERSION, TranscriptConfig, build_transcripts
from recode_lib.training.sft_start import SFTStartConfig, train_sft

START_FILE = "start_model.json"
SFT_DIR = "sft"  # the SFT run (train_sft's output_dir; final/ = the start)
TRANSCRIPTS_DIR = "sft_transcripts"  # its data (kept apart: a run folder holds one run only)


def start_record_path(profile: str) -> Path:
    return step_dir(runs_dir(profile), DATA) / START_FILE


def sft_dir(profile: str) -> Path:
    return step_dir(runs_dir(profile), DATA) / SFT_DIR


def transcripts_dir(profile: str) -> Path:
    return step_dir(runs_dir(profile), DATA) / TRANSCRIPTS_DIR


def start_model(profile: str, model: str) -> str:
    """The checkpoint every RL run of `profile` starts from (module docstring)."""
    path = start_record_path(profile)
    if not path.is_file():
        return model
    rec = read_json(path)
    if str(rec.get("base")) != str(model):
        return model
    start = rec.get("start")
    if not isinstance(start, str) or not start:
        raise ModelError(f"{path}: field 'start' must name a checkpoint, got {start!r}")
    if rec.get("source") == "sft" and not (Path(start) / "config.json").is_file():
        raise ModelError(f"{path}: the start checkpoint {start} is gone; re-run notebook 00")
    return start


def parse_names(names) -> list[str]:
    if isinstance(names, str):
        return [n.strip() for n in names.split(",") if n.strip()]
    return list(names or [])


def sft_problems(benchmark: str, n_problems: int, held_out) -> tuple[list, dict[str, str]]:
    """(the first n_problems (0: all) problems of `benchmark` sharing no task with any problem
    of the `held_out` benchmarks (a list or comma-separated names), {dropped id: why})."""
    pool = load_benchmark(benchmark)
    held = [p for name in parse_names(held_out) for p in load_benchmark(name)]
    kept, dropped = drop_overlap(pool, held)
    return kept[: n_problems or None], dropped


def cached_transcripts(out: Path, problems, cfg: TranscriptConfig) -> tuple[list, list]:
    """(transcripts, dropped) of `problems`: out/transcripts.jsonl when it was written for the
    same problems, config and sft_data.FORMAT_VERSION, else built (sft_data.build_transcripts)
    and written."""
    key = fingerprint(FORMAT_VERSION, asdict(cfg), [p.to_dict() for p in problems])
    meta, data, drops = out / "transcripts.json", out / "transcripts.jsonl", out / "dropped.jsonl"
    if meta.is_file() and data.is_file() and read_json(meta).get("fingerprint") == key:
        return read_jsonl(data), (read_jsonl(drops) if drops.is_file() else [])
    built = build_transcripts(problems, cfg)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl_atomic(data, built.transcripts)
    write_jsonl_atomic(drops, built.dropped)
    write_json_atomic(
        meta, {"fingerprint": key, "counts": built.counts(), "n_dropped": len(built.dropped)}
    )
    return built.transcripts, built.dropped


def losses(metrics_path: Path) -> list[float]:
    rows = read_jsonl(metrics_path, allow_torn_tail=True) if metrics_path.is_file() else []
    return [float(r["loss"]) for r in rows if isinstance(r.get("loss"), (int, float))]


def prepare_start_model(
    profile: str,
    model: str,
    *,
    sft: SFTStartConfig | None = None,
    transcripts: TranscriptConfig | None = None,
    benchmark: str = "mbpp_train",
    n_problems: int = 0,
    held_out="",
    sft_model: str = "",
) -> dict:
    """Build (sft) or point at (sft_model) the profile's start model, or record that there is
    none; writes and returns the start_model.json record (module docstring)."""
    if sft is not None and sft_model:
        raise RecodeError(
            f"SFT_START and SFT_MODEL={sft_model!r} are both set: train an SFT "
            "start or point at one, not both"
        )
    rec: dict = {"base": str(model), "start": str(model), "source": "model"}
    if sft_model:
        rec |= {"start": resolve_model(sft_model), "source": "sft_model"}
    elif sft is not None:
        if sft.model != str(model):
            raise RecodeError(
                f"SFTStartConfig.model {sft.model!r} is not the profile's MODEL {model!r}"
            )
        out = sft_dir(profile)
        problems, held_dropped = sft_problems(benchmark, n_problems, held_out)
        if not problems:
            raise RecodeError(
                f"no SFT problems: benchmark {benchmark!r} holds none outside the "
                f"held-out benchmarks {parse_names(held_out)}"
            )
        data, dropped = cached_transcripts(
            transcripts_dir(profile), problems, transcripts or TranscriptConfig()
        )
        t0 = time.perf_counter()
        result = train_sft(sft, data, out)
        loss = losses(result.metrics_path)
        counts: dict = {}
        for t in data:
            counts[t["setting"]] = counts.get(t["setting"], 0) + 1
        rec |= {
            "start": str(result.final_dir),
            "source": "sft",
            "sft": {
                "benchmark": benchmark,
                "held_out": parse_names(held_out),
                "n_problems": len(problems),
                "n_held_out_tasks_dropped": len(held_dropped),
                "transcripts": counts,
                "n_transcripts_dropped": len(dropped),
                "n_trained": result.n_examples,
                "n_too_long": result.n_too_long,
                "steps": len(loss),
                "loss_first": loss[0] if loss else None,
                "loss_last": loss[-1] if loss else None,
                "skipped": result.skipped,
                "train_s": None if result.skipped else time.perf_counter() - t0,
                "config": asdict(sft),
            },
        }
    write_json_atomic(start_record_path(profile), rec)
    return rec
