"""The alpha sweep without a checkpoint per alpha: one live model, theta_alpha swapped in place.

    res = sweep_alphas(low, high, [-2.5, -1, 0, 0.5, 1, 2, 3.5], problems, spec,
                       OUT / "eval", benchmark="livecodebench", save_alphas=[0.5],
                       save_dir=OUT / "merged")
    res.summaries[0.5]["pass@1"], res.saved[0.5], res.seconds

For each alpha (sorted), theta_alpha = alpha*theta_high + (1-alpha)*theta_low is computed in
memory (recode_lib.weights.live, the same float32 arithmetic as merge.py) and loaded into ONE
live model, which the evaluation harness then generates with (EvalSpec.evaluate with a reused
generator): backend "hf" a transformers model (load_state_dict-style copy), "vllm" the offline
engine updated in place, "openai" a `trl vllm-serve` server (generation through its
OpenAI-compatible /v1, weights through TRL's VLLMClient; pass `server=` or it is built from
spec.base_url). In the tool and agentic settings (spec.setting) the live model's generator
renders the setting's tools (setting_build) and each alpha is evaluated in that setting's loop
(EvalSpec.evaluate in the spec's setting). Cost: one model load + the two endpoints read
once + per alpha one weight push and one evaluation (benchmarks/bench_alpha_sweep.py
measures it against writing K checkpoints).

Data parallel (spec.backend vllm or vllm_standin with spec.data_parallel_size resolving to
more than one engine: recode_lib.generation.data_parallel): every engine loads theta_alpha in
place. In the single setting the grid's samples are generated first, whole alphas per engine
in waves (alpha_waves: 17 alphas on 8 engines = 2 waves of 8, then the last alpha split over
all 8), into each alpha's generation cache; the per-alpha evaluations then only judge. In the
tool and agentic settings generation and tool calls interleave, so each alpha in turn is
loaded into every engine and its episodes are split across them (an episode stays on one
engine). The parent loads no model.

Results land in out_root/alpha_<A>/ (the layout recode_lib.analysis.frontier.load_alpha_samples
reads), each under the model name `alpha_model_id(low, high, alpha)`, which carries a stamp of
both endpoint folders: a re-run resumes from the cached samples, and a retrained endpoint starts
clean. Weights are pushed only when something must be generated, and the model is loaded only
then (a fully cached re-run loads nothing). Checkpoints are written only for `save_alphas`
(merge_grid, the `recode merge` contract). It does not choose endpoints or draw anything.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from recode_lib import models  # models.load_model looked up per call (tests replace it)
from recode_lib.environments.rollout import tool_options
from recode_lib.generation import (
    Backend,
    CachedGenerator,
    DataParallelGenerator,
    Generator,
    SampleRequest,
    check_backend,
    get_generator,
    sample_seed,
)
from recode_lib.generation.base import prompt_fingerprint
from recode_lib.generation.data_parallel import assign, episode_key
from recode_lib.prompts import build_messages
from recode_lib.weights.live import (
    EndpointPair,
    HFModelSink,
    VLLMEngineSink,
    VLLMServerSink,
    allow_worker_functions,
    alpha_model_id,
    server_client,
)
from recode_lib.weights.merge import MergeConfig, alpha_dirname, merge_grid


class LiveAlphaModel:
    """A generator and a sink built on first use by `build() -> (generator, sink)`; `set(alpha)`
    pushes theta_alpha unless the model already holds it. Endpoints are read on first push."""

    def __init__(self, low, high, build: Callable[[], tuple]):
        self.low, self.high = Path(low), Path(high)
        self._build = build
        self._gen = self._sink = self._pair = None
        self.alpha: float | None = None
        self.seconds = {"load_model": 0.0, "load_endpoints": 0.0, "push": {}}

    @property
    def generator(self) -> Generator:
        if self._gen is None:
            t0 = time.perf_counter()
            self._gen, self._sink = self._build()
            self.seconds["load_model"] += time.perf_counter() - t0
        return self._gen

    def set(self, alpha: float) -> None:
        alpha = float(alpha)
        if self.alpha == alpha:
            return
        self.generator  # noqa: B018 (builds the sink too)
        if self._pair is None:
            t0 = time.perf_counter()
            self._pair = EndpointPair.load(self.low, self.high)
            self.seconds["load_endpoints"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        self.alpha = None  # a push that fails midway leaves no alpha claimed
        self._sink.load(self._pair, alpha)
        self.seconds["push"][alpha] = time.perf_counter() - t0
        self.alpha = alpha

    def close(self) -> None:
        if self._gen is not None:
            self._gen.close()
        self._gen = self._sink = self._pair = None
        self.alpha = None


class AlphaGenerator(Generator):
    """The live model seen at one alpha: theta_alpha is pushed just before generating."""

    def __init__(self, live: LiveAlphaModel, alpha: float, model: str, backend: str):
        self.live, self.alpha, self.model, self.backend = live, float(alpha), model, backend

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        self.live.set(self.alpha)
        return self.live.generator.generate_samples(
            requests, sampling, callback=callback, progress=progress
        )


def live_model(
    low, high, spec, *, server=None, served_model: str | None = None, device: str = "cpu"
) -> LiveAlphaModel:
    """The live model for spec.backend in spec.setting, started from `low` (its config and
    tokenizer): built on first use by setting_build."""
    low, high = Path(low), Path(high)
    return LiveAlphaModel(
        low,
        high,
        lambda: setting_build(low, spec, device, server=server, served_model=served_model),
    )


def data_parallel_engines(low, spec) -> DataParallelGenerator | None:
    """The data-parallel engines of the sweep (built lazily: nothing starts here) when
    spec.backend is vllm or vllm_standin and spec.data_parallel_size resolves to more than one
    engine; None otherwise (one live model)."""
    backend = check_backend(spec.backend)
    if backend not in (Backend.VLLM, Backend.VLLM_STANDIN) or spec.precision != "native":
        return None
    options = dict(spec.generator_kwargs())
    if spec.setting != "single":
        options.update(tool_options(spec.setting))
    if backend == Backend.VLLM:  # collective_rpc ships engine_load_alpha's worker function
        options["engine_env"] = {"VLLM_ALLOW_INSECURE_SERIALIZATION": "1"}
    gen = get_generator(backend, str(low), **options)
    if isinstance(gen, DataParallelGenerator):
        return gen
    gen.close()
    return None


def setting_build(
    low, spec, device: str = "cpu", *, server=None, served_model: str | None = None
) -> tuple:
    """(generator, sink) of the live model: recode_lib.generation.get_generator with the
    spec's backend options (spec.generator_kwargs), over the model the sink pushes theta_alpha
    into (hf: the transformers model, loaded here; vllm: the engine; vllm_standin: its CPU
    model; openai: a `trl vllm-serve` server, `server` or a client of spec.base_url, serving
    `served_model` or `low`). In the tool and agentic settings the generator renders the
    setting's tools (recode_lib.environments.rollout.tool_options, as the evaluator's own
    tool_generator); the openai backend has no tool setting (EvalSpec refuses it)."""
    backend = check_backend(spec.backend)
    if spec.setting != "single" and backend == Backend.OPENAI:
        raise ValueError(
            f"the {spec.setting} setting runs on the hf or vllm backend, got {spec.backend!r}"
        )
    if spec.precision != "native":
        raise ValueError(
            f"the live theta_alpha model is written in place for every alpha, in "
            f"float32; EvalSpec.precision must be 'native', got {spec.precision!r} "
            "(evaluate the endpoints' own checkpoints for another precision)"
        )
    options = dict(spec.generator_kwargs())
    if spec.setting != "single":
        options.update(tool_options(spec.setting))
    if backend == Backend.HF:
        net, tok = models.load_model(str(low), device=device)
        gen = get_generator(
            backend, str(low), device=device, model_obj=net, tokenizer=tok, **options
        )
        return gen, HFModelSink(net)
    if backend == Backend.OPENAI:
        gen = get_generator(backend, served_model or str(low), **options)
        return gen, VLLMServerSink(server if server is not None else server_client(spec.base_url))
    if backend == Backend.VLLM:
        allow_worker_functions()
    gen = get_generator(backend, str(low), **options)
    if backend == Backend.VLLM:
        return gen, VLLMEngineSink(gen.engine())
    return gen, HFModelSink(gen.engine().model)  # the dry run: vLLM's request path, CPU weights


# -- data parallel: several engines, each holding its own alpha ------------------------------


def alpha_waves(alphas: Sequence[float], engines: int) -> list[list[tuple[float, tuple]]]:
    """[(alpha, its engines), ...] per wave: whole alphas, one per engine, in waves of
    `engines`; the r < engines alphas left for the last wave share the engines (engines split
    into r groups), so no engine idles while the grid's last alphas run (17 alphas on 8
    engines: 2 waves of 8, then one alpha on all 8)."""
    alphas = list(alphas)
    full = len(alphas) // engines * engines
    waves = [[(alphas[s + j], (j,)) for j in range(engines)] for s in range(0, full, engines)]
    rest = alphas[full:]
    if rest:
        r = len(rest)
        waves.append(
            [
                (a, tuple(range(g * engines // r, (g + 1) * engines // r)))
                for g, a in enumerate(rest)
            ]
        )
    return waves


def engine_load_alpha(engine, low: str, high: str, alpha: float) -> float:
    """Runs in a data-parallel engine's process (DataParallelGenerator's EngineProcess.call):
    theta_alpha into its running engine in place (VLLMEngineSink; the stand-in's CPU model:
    HFModelSink), the endpoints read once per engine; nothing when it holds alpha already."""
    alpha = float(alpha)
    st = engine.state
    key = (str(low), str(high))
    if st.get("endpoints") != key:
        llm = engine.gen.engine()
        st.update(
            endpoints=key,
            alpha=None,
            pair=EndpointPair.load(low, high),
            sink=(
                HFModelSink(llm.model)
                if engine.gen.engine_name == "standin"
                else VLLMEngineSink(llm)
            ),
        )
    if st.get("alpha") != alpha:
        st["alpha"] = None
        st["sink"].load(st["pair"], alpha)
        st["alpha"] = alpha
    return alpha


def engine_generate_at(engine, low: str, high: str, alpha: float, built: list) -> list:
    """Runs in a data-parallel engine's process: theta_alpha loaded if the engine holds
    another alpha (engine_load_alpha), then `built` generated, in one engine call, so the
    samples are theta_alpha's even when calls for other alphas reach the engine between."""
    engine_load_alpha(engine, low, high, alpha)
    return engine.generate(built)


class EngineGroup(Generator):
    """Some engines of a DataParallelGenerator at one alpha, generating requests built in
    advance (the tokenizer stays in the calling thread)."""

    def __init__(
        self,
        dp: DataParallelGenerator,
        engines: Sequence[int],
        built: dict,
        model: str,
        low,
        high,
        alpha: float,
    ):
        self.dp, self.engines, self.built, self.model = dp, list(engines), built, model
        self.call = (engine_generate_at, str(low), str(high), float(alpha))
        self.backend = dp.backend

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        where = assign([episode_key(r) for r in requests], len(self.engines))
        built = [self.built[(prompt_fingerprint(r.messages), r.index)] for r in requests]
        return self.dp.run_on([self.engines[j] for j in where], built, callback, self.call)


class PoolAlphaGenerator(Generator):
    """Every engine of a DataParallelGenerator at one alpha: each engine call loads
    theta_alpha first unless the engine holds it (engine_generate_at)."""

    def __init__(self, dp: DataParallelGenerator, low, high, alpha: float, model: str):
        self.dp, self.low, self.high, self.alpha, self.model = dp, low, high, float(alpha), model
        self.backend = dp.backend

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        return self.dp.generate_via(
            requests,
            sampling,
            callback,
            call=(engine_generate_at, str(self.low), str(self.high), self.alpha),
        )


def pregenerate_alphas(
    dp: DataParallelGenerator,
    low,
    high,
    alphas: Sequence[float],
    problems,
    spec,
    out_root,
    log=print,
    on_wave=None,
    dry: bool = False,
):
    """The single setting's samples of every alpha generated into each alpha's generation
    cache (out_root/alpha_<A>/generations.jsonl, under alpha_model_id: what the evaluation
    then reads), in alpha_waves over the engines; alphas already cached are skipped.
    `on_wave(alphas)` is called after each wave. Returns seconds per wave (`dry`: only the
    alphas that would be generated, nothing started)."""
    sampling = spec.sampling()
    reqs = []
    for p in problems:
        m = build_messages(p, reasoning=spec.reasoning)
        reqs += [SampleRequest(m, i, sample_seed(sampling.seed, m, i)) for i in range(sampling.n)]
    caches = {
        a: CachedGenerator(
            dp,
            Path(out_root) / alpha_dirname(a) / "generations.jsonl",
            model_key=alpha_model_id(low, high, a),
        )
        for a in alphas
    }
    todo = [a for a in alphas if caches[a].missing(reqs, sampling)]
    if dry:
        return todo
    seconds = {}
    if not todo:
        return seconds
    built = dict(
        zip(
            ((prompt_fingerprint(r.messages), r.index) for r in reqs),
            dp.front.build(reqs, sampling),
        )
    )
    pool = dp.pool()
    for w, wave in enumerate(alpha_waves(todo, pool.size)):
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=len(wave)) as ex:
            jobs = [
                ex.submit(
                    CachedGenerator(
                        EngineGroup(dp, group, built, caches[a].model, low, high, a),
                        caches[a].store.path,
                        model_key=caches[a].model,
                    ).generate_samples,
                    reqs,
                    sampling,
                )
                for a, group in wave
            ]
            for job in jobs:
                job.result()
        seconds[w] = time.perf_counter() - t0
        if on_wave is not None:
            on_wave([a for a, _ in wave])
        if log:
            log(
                f"alpha wave {w + 1}: {', '.join(f'{a:+g} on engine(s) {list(g)}' for a, g in wave)}"
                f" ({seconds[w]:.1f} s)"
            )
    return seconds


@dataclass
class SweepResult:
    summaries: dict  # alpha -> evaluation summary
    saved: dict = field(default_factory=dict)  # alpha -> checkpoint folder (save_alphas)
    seconds: dict = field(
        default_factory=dict
    )  # load_model, load_endpoints, push{}, evaluate{}, save
    model_ids: dict = field(default_factory=dict)  # alpha -> the model name it was evaluated under


def sweep_alphas(
    low,
    high,
    alphas: Sequence[float],
    problems,
    spec,
    out_root,
    *,
    benchmark: str | None = None,
    save_alphas: Sequence[float] = (),
    save_dir=None,
    live: LiveAlphaModel | None = None,
    server=None,
    served_model: str | None = None,
    log=print,
) -> SweepResult:
    """Evaluate theta_alpha for every alpha with one live model (see the module docstring);
    write checkpoints only for `save_alphas` (into save_dir, default out_root/../merged)."""
    alphas = sorted({float(a) for a in alphas})
    if not alphas:
        raise ValueError("sweep_alphas: no alphas")
    extra = sorted({float(a) for a in save_alphas} - set(alphas))
    if extra:
        raise ValueError(f"sweep_alphas: save_alphas {extra} are not in the grid {alphas}")
    own = live is None
    dp = data_parallel_engines(low, spec) if live is None else None
    if dp is not None:
        live = LiveAlphaModel(low, high, lambda: (dp, None))  # holds nothing: engines do
    live = live or live_model(low, high, spec, server=server, served_model=served_model)
    out_root = Path(out_root)
    res = SweepResult({}, seconds={"evaluate": {}})

    def evaluate(a: float) -> None:
        mid = alpha_model_id(low, high, a)
        gen = (
            AlphaGenerator(live, a, mid, spec.backend)
            if dp is None
            else PoolAlphaGenerator(dp, low, high, a, mid)
        )
        t0 = time.perf_counter()
        res.summaries[a] = spec.evaluate(
            mid, problems, out_root / alpha_dirname(a), benchmark=benchmark, generator=gen
        )
        res.seconds["evaluate"][a] = time.perf_counter() - t0
        res.model_ids[a] = mid
        if log:
            s = res.summaries[a]
            log(
                f"alpha {a:+g}: pass@1 {s.get('pass@1', float('nan')):.3f} "
                f"({res.seconds['evaluate'][a]:.1f} s, push "
                f"{live.seconds['push'].get(a, 0.0):.2f} s)"
            )

    try:
        if dp is not None and spec.setting == "single":
            # each wave's alphas are judged (their samples cached) on one thread while the
            # next wave generates; the results are the same as judging them afterwards
            with ThreadPoolExecutor(max_workers=1) as judge:
                judged = [
                    judge.submit(evaluate, a)
                    for a in alphas
                    if not pregenerate_alphas(
                        dp, low, high, [a], problems, spec, out_root, log=None, dry=True
                    )
                ]
                res.seconds["waves"] = pregenerate_alphas(
                    dp,
                    low,
                    high,
                    alphas,
                    problems,
                    spec,
                    out_root,
                    log=log,
                    on_wave=lambda done: judged.extend(judge.submit(evaluate, a) for a in done),
                )
                for fut in judged:
                    fut.result()
            res.summaries = {a: res.summaries[a] for a in alphas}
        else:
            for a in alphas:
                evaluate(a)
    finally:
        if dp is not None:
            dp.close()
        res.seconds.update(
            load_model=live.seconds["load_model"],
            load_endpoints=live.seconds["load_endpoints"],
            push=dict(live.seconds["push"]),
        )
        if own:
            live.close()
    if save_alphas:
        t0 = time.perf_counter()
        folder = Path(save_dir) if save_dir is not None else out_root.parent / "merged"
        res.saved = merge_grid(
            MergeConfig(
                str(low), str(high), tuple(sorted(set(save_alphas))), str(folder), progress=False
            )
        )
        res.seconds["save"] = time.perf_counter() - t0
    return res
