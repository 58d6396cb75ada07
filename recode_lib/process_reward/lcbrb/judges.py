"""LLM-judge baselines for reasoning quality, and the reasoning/code consistency judge.

    judge = PointwiseJudge(generator)                  # any recode_lib.generation generator
    judge.score(prompts, traces) -> list[float | None] # 1..10, None where unparsable
    pj = PairwiseJudge(generator, both_orders=True)
    pj.compare(prompts, traces_a, traces_b) -> list[float]   # 1: A better, 0: B better, 0.5: tie
    cj = ConsistencyJudge(generator)
    cj.check(prompts, traces) -> list[bool | None]     # does the reasoning agree with the code?

Every judge keeps `parse_failures` (a count) and `failures` (the raw unparsable replies, capped)
so that reports can say how often the judge's answer could not be read. Parsing is tolerant:
"Score: 7", "7/10", "**8**", "Rating - 6.5" for pointwise (clipped to 1..10); "A", "Response
B", "[[A]]", "Answer: B" for pairwise; yes/no, consistent/inconsistent for consistency.
The pairwise judge asks in both orders by default (position bias) and calls a disagreement or
an unparsable reply a tie. Judging is greedy (temperature 0) unless told otherwise.
This module does not compute accuracies (recode_lib.process_reward.lcbrb.scoring does).
"""

from __future__ import annotations

import re

from recode_lib.generation.chat import generate

POINTWISE_SYSTEM = (
    "You are a strict reviewer of reasoning for programming problems. Judge only "
    "the quality of the reasoning: factual correctness, logical rigor and logical "
    "coherence."
)
POINTWISE_USER = (
    "Problem:\n{prompt}\n\nResponse:\n{trace}\n\nRate the reasoning of the response "
    "from 1 (worst) to 10 (best). Reply with one line: Score: <number>"
)
PAIRWISE_USER = (
    "Problem:\n{prompt}\n\nResponse A:\n{a}\n\nResponse B:\n{b}\n\nWhich response has "
    "the better reasoning (factual correctness, logical rigor, logical coherence)? "
    "Reply with one line: Answer: A or Answer: B"
)
CONSISTENCY_USER = (
    "Problem:\n{prompt}\n\nResponse:\n{trace}\n\nDoes the code implement exactly "
    "what the reasoning describes (same algorithm, same edge cases, no "
    "contradiction)? Reply with one line: Answer: yes or Answer: no"
)

_SCORE_PATTERNS = [
    r"score\s*[:=\-]?\s*\**\s*(\d+(?:\.\d+)?)",
    r"(\d+(?:\.\d+)?)\s*/\s*10\b",
    r"rating\s*[:=\-]?\s*\**\s*(\d+(?:\.\d+)?)",
    r"\*\*(\d+(?:\.\d+)?)\*\*",
    r"^\s*(\d+(?:\.\d+)?)\s*$",
]
_MAX_KEPT = 50


def parse_score(text: str) -> float | None:
    """A 1..10 score from a judge reply, or None."""
    t = (text or "").strip().lower()
    for pat in _SCORE_PATTERNS:
        m = re.search(pat, t, flags=re.MULTILINE)
        if m:
            v = float(m.group(1))
            if 0 <= v <= 100:
                return min(max(v, 1.0), 10.0)
    return None


def parse_choice(text: str) -> str | None:
    """ "A" or "B" from a pairwise reply, or None (both or neither mentioned as the answer)."""
    t = (text or "").strip()
    for pat in (
        r"answer\s*[:=\-]?\s*\**\s*\[*\(?([AB])\b",
        r"\[\[([AB])\]\]",
        r"response\s+([AB])\s+(?:is|has)\s+(?:the\s+)?better",
        r"^\s*\**\(?([AB])\)?\**\s*[.:]?\s*$",
    ):
        m = re.search(pat, t, flags=re.IGNORECASE | re.MULTILINE)
        if m:
            return m.group(1).upper()
    found = set(re.findall(r"\b(?:response|option)\s+([AB])\b", t, flags=re.IGNORECASE))
    return found.pop().upper() if len(found) == 1 else None


def parse_yes_no(text: str) -> bool | None:
    t = (text or "").strip().lower()
    m = re.search(r"answer\s*[:=\-]?\s*\**\s*(yes|no)\b", t)
    if m:
        return m.group(1) == "yes"
    yes = re.search(r"\b(yes|consistent)\b", t) is not None
    no = re.search(r"\b(no|inconsistent|not consistent)\b", t) is not None
    return yes if yes != no else None


class _Judge:
    def __init__(
        self,
        generator,
        *,
        temperature: float = 0.0,
        max_new_tokens: int = 32,
        seed: int = 0,
        batch_size: int = 16,
    ):
        self.generator = generator
        self.sampling = dict(
            temperature=temperature, top_p=1.0, max_new_tokens=max_new_tokens, n=1, seed=seed
        )
        self.batch_size = batch_size
        self.parse_failures = 0
        self.calls = 0
        self.failures: list[str] = []

    def _ask(self, users: list[str], system: str = POINTWISE_SYSTEM) -> list[str]:
        msgs = [
            [{"role": "system", "content": system}, {"role": "user", "content": u}] for u in users
        ]
        out = []
        for s in range(0, len(msgs), self.batch_size):
            out += [
                c[0].text
                for c in generate(self.generator, msgs[s : s + self.batch_size], **self.sampling)
            ]
        self.calls += len(msgs)
        return out

    def _failed(self, reply: str) -> None:
        self.parse_failures += 1
        if len(self.failures) < _MAX_KEPT:
            self.failures.append(reply[:500])

    def _parse_all(self, replies, parser) -> list:
        """parser(reply) for each reply; a None (unparsable) is counted as a failure."""
        out = []
        for r in replies:
            v = parser(r)
            if v is None:
                self._failed(r)
            out.append(v)
        return out


class PointwiseJudge(_Judge):
    def score(self, prompts: list[str], traces: list[str]) -> list[float | None]:
        replies = self._ask(
            [POINTWISE_USER.format(prompt=p, trace=t) for p, t in zip(prompts, traces, strict=True)]
        )
        return self._parse_all(replies, parse_score)


class PairwiseJudge(_Judge):
    def __init__(self, generator, *, both_orders: bool = True, **kw):
        super().__init__(generator, **kw)
        self.both_orders = both_orders

    def compare(self, prompts, traces_a, traces_b) -> list[float]:
        """1.0 when A is judged better, 0.0 when B, 0.5 for a tie/disagreement/unparsable."""
        n = len(prompts)
        users = [
            PAIRWISE_USER.format(prompt=p, a=a, b=b)
            for p, a, b in zip(prompts, traces_a, traces_b, strict=True)
        ]
        if self.both_orders:
            users += [
                PAIRWISE_USER.format(prompt=p, a=b, b=a)
                for p, a, b in zip(prompts, traces_a, traces_b, strict=True)
            ]
        votes = self._parse_all(self._ask(users), parse_choice)
        out = []
        for i in range(n):
            v1 = {"A": 1.0, "B": 0.0}.get(votes[i])
            if not self.both_orders:
                out.append(0.5 if v1 is None else v1)
                continue
            v2 = {"A": 0.0, "B": 1.0}.get(votes[n + i])  # swapped order: "A" means b
            known = [v for v in (v1, v2) if v is not None]
            out.append(0.5 if not known or (len(known) == 2 and v1 != v2) else known[0])
        return out


class ConsistencyJudge(_Judge):
    def check(self, prompts, traces) -> list[bool | None]:
        replies = self._ask(
            [
                CONSISTENCY_USER.format(prompt=p, trace=t)
                for p, t in zip(prompts, traces, strict=True)
            ]
        )
        return self._parse_all(replies, parse_yes_no)
