"""A scripted generator and a recording sandbox runner for the reward/verdict parity tests."""

from __future__ import annotations

from recode_lib.generation import Completion, Generator
from recode_lib.rewards.execution import SandboxRunner


class Scripted(Generator):
    """Sample i of every problem gets RESPONSES[i]."""

    backend = model = "scripted"

    def __init__(self, responses):
        self.responses = responses

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        out = [
            Completion(self.responses[r.index], n_tokens=5, finish_reason="stop") for r in requests
        ]
        for j, c in enumerate(out):
            if callback:
                callback(j, c)
        return out


class Recording(SandboxRunner):
    """The real runner, remembering the programs it was asked to run."""

    def __init__(self, **kw):
        super().__init__(workers=1, **kw)
        self.codes = []

    def run(self, codes, tests, **kw):
        self.codes += list(codes)
        return super().run(codes, tests, **kw)
