"""The reward registry: names -> entries that say how to build a reward and what it needs.

    from recode_lib.rewards.registry import Need, RewardResources, build_reward, get_reward
    fn = get_reward("outcome", runner=my_runner)            # options given by hand
    res = RewardResources({Need.SANDBOX: make_runner, Need.REWARD_MODEL: load_scorer})
    fn = build_reward("gated", res, proc_temperature=2.0)   # what the entry needs comes from res
    Need.REWARD_MODEL in reward_needs("math_gated")         # True: callers ask, never keep lists

Each entry (`RewardEntry`) holds a factory and the resources it needs (`Need.SANDBOX`: a
recode_lib.rewards.execution.SandboxRunner, given as `runner=`; `Need.REWARD_MODEL`: an object
with `.score(prompts, traces) -> list[float]`, given as `scorer=`). `build_reward` asks a
`RewardResources` for exactly those, each made once per run on first need (so two rewards share
one sandbox cache and one loaded reward model). A factory's options are its keyword parameters;
any other option raises RewardConfigError naming it. `strict_<k>` names resolve to the `strict`
entry with k set. The families register themselves when recode_lib.rewards is imported; this
module defines no reward itself.

Your own reward (docs/extending.md): a plain function with TRL's signature,
`f(prompts, completions, **columns) -> list[float]` (columns: the dataset's, e.g. `tests`,
`problem_id`, and TRL's `completion_ids`, `trainer_state`, ...), registered with
`register_function("name", f)`, or a factory with keyword options and needs,
`@register("name", needs=(Need.SANDBOX,))` over `def make(*, runner, weight=1.0): return f`
(build_reward passes the run's SandboxRunner as `runner=`); a recipe then names it
(`rewards: [{name: name, <option>: value}]`). Names are looked up after importing the modules
in $RECODE_PLUGINS (recode_lib.core.plugins), so a registration there reaches every process.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recode_lib.core.errors import RecodeError
from recode_lib.core.plugins import load_plugins

if TYPE_CHECKING:
    from recode_lib.rewards.base import RewardFunction


class RewardConfigError(RecodeError, ValueError):
    """A reward that cannot be built (unknown name, bad option, RM path that does not load)."""


class RewardDataError(RecodeError, ValueError):
    """A batch the rewards cannot judge, the dataset's fault and never a completion's: a missing
    column, a row without tests or without a gold answer (the message names the row). Raised,
    like every RecodeError, by a reward function; any other failure stays with its sample
    (recode_lib.rewards.base.RewardFunction)."""


class Need(enum.Enum):
    """A resource a reward needs from the run; the value is the factory keyword it arrives as."""

    SANDBOX = "runner"  # a SandboxRunner (tests executed, cached per step)
    REWARD_MODEL = "scorer"  # the process reward model: .score(prompts, traces)


@dataclass(frozen=True)
class RewardEntry:
    """A registered reward: its factory (keyword options only) and what it needs."""

    name: str
    factory: Callable[..., RewardFunction]
    needs: frozenset = frozenset()

    def options(self) -> set[str]:
        """The option names the factory accepts (its keyword parameters)."""
        params = inspect.signature(self.factory).parameters.values()
        return {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


REGISTRY: dict[str, RewardEntry] = {}


def register(name: str, *, needs=()):
    """Decorator: register a reward factory under `name`, needing the given `Need`s."""

    def deco(factory):
        REGISTRY[name] = RewardEntry(name, factory, frozenset(needs))
        return factory

    return deco


def register_function(name: str, fn: RewardFunction) -> RewardFunction:
    """Register a ready reward function (no options, needs nothing) under `name`."""

    def factory():
        return fn

    factory.__doc__ = fn.__doc__
    REGISTRY[name] = RewardEntry(name, factory)
    return fn


def resolve(name: str) -> tuple[RewardEntry, dict]:
    """(entry, options the name itself implies): `strict_<k>` is `strict` with k and name set."""
    if name not in REGISTRY:
        load_plugins()
    if name in REGISTRY:
        return REGISTRY[name], {}
    if name.startswith("strict_") and "strict" in REGISTRY:
        return REGISTRY["strict"], {"k": name[len("strict_") :], "name": name}
    raise RewardConfigError(f"unknown reward {name!r}; known: {sorted(REGISTRY)} and strict_<k>")


def reward_needs(name: str) -> frozenset:
    """The `Need`s of the reward registered as `name` (RewardConfigError when unknown)."""
    return resolve(name)[0].needs


def get_reward(name: str, **options) -> RewardFunction:
    """Build the reward registered as `name` from explicit options (unknown ones raise)."""
    entry, implied = resolve(name)
    accepted = entry.options() - set(implied)  # strict_2 already says k: no k= as well
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise RewardConfigError(
            f"reward {name!r}: unknown option(s) {unknown}; accepted: {sorted(accepted)}"
        )
    return entry.factory(**implied, **options)


class RewardResources:
    """What a run provides to its rewards: a provider per `Need`, each called at most once."""

    def __init__(self, providers: Mapping[Need, Callable[[], Any]]):
        self.providers = dict(providers)
        self.made: dict[Need, Any] = {}

    def get(self, need: Need):
        """The resource for `need`, made on first request (RewardConfigError if none provided)."""
        if need not in self.made:
            if need not in self.providers:
                raise RewardConfigError(
                    f"no {need.name.lower().replace('_', ' ')} provided to the rewards of this run"
                )
            self.made[need] = self.providers[need]()
        return self.made[need]


def build_reward(name: str, resources: RewardResources, **options) -> RewardFunction:
    """get_reward(name, **options) with every resource the entry needs taken from `resources`
    (an option given explicitly wins)."""
    entry, _ = resolve(name)
    for need in entry.needs:
        if need.value not in options:
            options[need.value] = resources.get(need)
    return get_reward(name, **options)
