"""The evaluation settings as episode strategies: each turns problems into finished episodes.

    strategy = episode_strategy(spec, model, generator=None)      # spec: an EvalSpec
    episodes = strategy.run([(problem, 0), (problem, 1)], out_dir)  # list[FinishedEpisode]
    strategy.guard_fields(), strategy.summary_fields(rows)
    generator_for(spec, model)        # the backend a setting generates with (tools rendered)

It does not execute answers or write rows.
More: docs/modules/evaluation.md (recode_lib.evaluation.episodes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from recode_lib.core.prompts import build_messages
from recode_lib.environments.rollout import run_episodes, tool_generator
from recode_lib.environments.settings import Setting, environment_factory, reset_row
from recode_lib.evaluation.rows import TRUNCATED
from recode_lib.evaluation.summary import episode_summary
from recode_lib.generation import (
    CachedGenerator,
    Generator,
    SampleRequest,
    get_generator,
    sample_seed,
)

FLUSH_EPISODES = 256  # single setting: finished samples handed to the judge at once


@dataclass
class FinishedEpisode:
    """One sample's final answer and how the episode went (single: one turn, no tools)."""

    problem: object  # the Problem
    sample: int
    setting: str
    response: str  # the final answer's text ("" when there is none)
    n_tokens: int  # the model's tokens over every turn
    finish_reason: str  # of the last turn
    truncated: bool = False  # the answer hit the token limit: a format error
    no_answer: str = ""  # why there is no answer ("" when there is one)
    turns: int = 1
    tool_calls: int = 0
    tool_errors: int = 0
    tool_statuses: list = field(default_factory=list)
    transcript: list | None = None  # generated messages and tool results (None: single)


def generator_for(spec, model, generator_kwargs: dict | None = None) -> Generator:
    """The backend `spec.setting` generates with: recode_lib.generation.get_generator, for
    tool/agentic through rollout.tool_generator (get_generator with the options that render the
    setting's tools)."""
    kwargs = dict(spec.generator_kwargs() if generator_kwargs is None else generator_kwargs)
    if spec.setting == "single":
        return get_generator(spec.backend, str(model), **kwargs)
    return tool_generator(spec.backend, model, spec.setting, **kwargs)


class LazyGenerator(Generator):
    """Builds the real backend (generator_for) only when a sample is actually generated."""

    def __init__(self, spec, model, generator_kwargs: dict | None):
        self.spec, self.model, self.kwargs, self.inner = spec, str(model), generator_kwargs, None
        self.backend = spec.backend

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        if self.inner is None:
            self.inner = generator_for(self.spec, self.model, self.kwargs)
        return self.inner.generate_samples(requests, sampling, callback, progress)

    def close(self) -> None:
        inner, self.inner = self.inner, None
        if inner is not None:
            inner.close()


class SingleTurn:
    """One generation per sample; its text is the answer."""

    runs_tools = False  # only the sandbox judging answers needs Linux (not with remote Ray)

    def __init__(self, spec, model, generator=None, generator_kwargs=None):
        self.spec, self.model = spec, model
        self.own = generator is None  # built here: closed after the run (its engines)
        self.generator = generator or LazyGenerator(spec, model, generator_kwargs)

    def guard_fields(self) -> dict:
        return {}

    def config_fields(self) -> dict:
        return {}

    def summary_fields(self, rows: list[dict]) -> dict:
        return {}

    def run(
        self,
        missing: list,
        out_dir,
        progress: bool = False,
        on_episodes=None,
        flush: int | None = None,
    ) -> list[FinishedEpisode]:
        """The episodes of `missing`; with `on_episodes`, finished ones are also handed to it in
        batches of `flush` (default FLUSH_EPISODES) as the generator reports them (the loop
        judges them meanwhile)."""
        flush = flush or FLUSH_EPISODES
        sampling = self.spec.sampling()
        msgs = {p.id: build_messages(p, reasoning=self.spec.reasoning) for p, _ in missing}
        cached = CachedGenerator(
            self.generator, out_dir / "generations.jsonl", model_key=str(self.model)
        )
        reqs = [
            SampleRequest(msgs[p.id], i, sample_seed(sampling.seed, msgs[p.id], i))
            for p, i in missing
        ]
        buffer: list = []

        def done(j: int, c) -> None:
            buffer.append(single_episode(missing[j], c))
            if len(buffer) >= flush:
                on_episodes(list(buffer))
                buffer.clear()

        try:
            comps = cached.generate_samples(
                reqs, sampling, progress=progress, callback=done if on_episodes else None
            )
        finally:
            if self.own:
                self.generator.close()
        if on_episodes and buffer:
            on_episodes(list(buffer))
        return [single_episode(m, c) for m, c in zip(missing, comps, strict=True)]


def single_episode(item, comp) -> FinishedEpisode:
    """The single setting's episode of one (problem, sample) and its completion."""
    p, i = item
    return FinishedEpisode(
        problem=p,
        sample=i,
        setting="single",
        response=comp.text,
        n_tokens=comp.n_tokens,
        finish_reason=comp.finish_reason,
        truncated=comp.finish_reason == TRUNCATED,
    )


class MultiTurn:
    """Episodes in the tool or agentic environment; the final answer is the setting's."""

    runs_tools = True  # tool calls run in this machine's sandbox

    def __init__(self, spec, model, generator=None, generator_kwargs=None, factory=None):
        self.spec, self.model, self.setting = spec, model, spec.setting
        self.generator, self.generator_kwargs = generator, generator_kwargs
        self.factory = factory

    def guard_fields(self) -> dict:
        limits = self.spec.tool_limits()
        return {
            "setting": self.setting,
            "max_turns": int(self.spec.max_turns),
            "max_tool_calls": int(self.spec.max_tool_calls),
            "limits": {
                f: getattr(limits, f) for f in ("time_limit_s", "memory_mb", "max_output_chars")
            },
        }

    def config_fields(self) -> dict:
        return {"max_turns": self.spec.max_turns, "max_tool_calls": self.spec.max_tool_calls}

    def summary_fields(self, rows: list[dict]) -> dict:
        return {"episodes": episode_summary(rows)}

    def run(
        self, missing: list, out_dir, progress: bool = False, on_episodes=None
    ) -> list[FinishedEpisode]:
        spec = self.spec
        gen = self.generator or generator_for(spec, self.model, self.generator_kwargs)
        factory = self.factory or environment_factory(
            self.setting, max_calls=spec.max_tool_calls, limits=spec.tool_limits()
        )
        problems = list({p.id: p for p, _ in missing}.values())
        wanted = {(p.id, i) for p, i in missing}
        sampling = spec.sampling()
        try:
            eps = run_episodes(
                gen,
                [reset_row(p, spec.reasoning) for p in problems],
                self.setting,
                sampling,
                n=sampling.n,
                max_turns=spec.max_turns,
                factory=factory,
                progress=progress,
            )
        finally:
            if self.generator is None:  # built here: its engines go with the run
                gen.close()
        by_id = {p.id: p for p in problems}
        cut_answer = self.setting == Setting.TOOL  # the answer is the last (cut) turn's text
        return [
            FinishedEpisode(
                problem=by_id[e.row["problem_id"]],
                sample=e.sample,
                setting=self.setting,
                response=e.answer,
                n_tokens=e.n_tokens,
                finish_reason=e.finish_reason,
                no_answer=e.no_answer,
                truncated=(cut_answer and not e.no_answer and e.finish_reason == TRUNCATED),
                turns=e.turns,
                tool_calls=e.tool_calls,
                tool_errors=e.tool_errors,
                tool_statuses=list(e.statuses),
                transcript=e.transcript,
            )
            for e in eps
            if (e.row["problem_id"], e.sample) in wanted
        ]


def episode_strategy(spec, model, generator=None, generator_kwargs=None, factory=None):
    """The strategy of spec.setting: SingleTurn, or MultiTurn (tool, agentic; `factory`
    replaces the setting's environment factory)."""
    if spec.setting == "single":
        return SingleTurn(spec, model, generator, generator_kwargs)
    return MultiTurn(spec, model, generator, generator_kwargs, factory)
