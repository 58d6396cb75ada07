"""The reward registry: names -> factories that build a RewardFunction.

    from recode_lib.rewards.registry import register, get_reward
    @register("my_reward")
    def my_reward(**options) -> RewardFunction: ...
    fn = get_reward("my_reward")

`reject(name, extra)` raises RewardConfigError for options a factory does not know. The families
register themselves when recode_lib.rewards is imported; this module builds no reward itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from recode_lib.rewards.base import RewardFunction

REGISTRY: dict[str, Callable[..., "RewardFunction"]] = {}


class RewardConfigError(ValueError):
    """A reward that cannot be built (unknown name, bad option, RM path that does not load)."""


def register(name: str):
    """Decorator: register a reward factory under `name`."""
    def deco(factory):
        REGISTRY[name] = factory
        return factory
    return deco


def reject(name: str, extra: dict) -> None:
    """Raise RewardConfigError naming the options a reward factory does not accept."""
    if extra:
        raise RewardConfigError(f"reward {name!r}: unknown option(s) {sorted(extra)}")


def get_reward(name: str, **options) -> "RewardFunction":
    """Build the reward function registered as `name` (strict_<k> names carry k)."""
    if name.startswith("strict_") and name not in REGISTRY:
        k = name[len("strict_"):]
        options["k"] = k
        return REGISTRY["strict"](name=name, **options)
    if name not in REGISTRY:
        raise RewardConfigError(f"unknown reward {name!r}; known: {sorted(REGISTRY)} "
                                "and strict_<k>")
    return REGISTRY[name](**options)
