"""Off Linux, what would execute submissions stops first with the reason; reading results works.

sys.platform is monkeypatched after everything is imported (the standard library itself
imports macOS-only modules when it reads "darwin"): the check is made where the sandbox is about
to be used, never when recode_lib is imported.
"""

from __future__ import annotations

import importlib
import json
import sys

import pytest

import recode_lib
import recode_lib.cli.sandbox  # noqa: F401  (what `recode sandbox` loads, imported on Linux)
from recode_lib.analysis import frontier as F
from recode_lib.analysis import plots
from recode_lib.cli import main
from recode_lib.core.linux import LinuxRequired, is_linux, require_linux
from recode_lib.data.schema import Problem
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import Generator
from recode_lib.rewards.execution import SandboxRunner


@pytest.fixture
def macos(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")


def test_linux_passes_and_another_os_gets_the_reason(monkeypatch):
    assert is_linux("linux") and not is_linux("darwin") and not is_linux("win32")
    require_linux("x")  # this machine: Linux
    for platform in ("darwin", "win32"):
        monkeypatch.setattr(sys, "platform", platform)
        with pytest.raises(LinuxRequired) as exc:
            require_linux("evaluation")
        msg = str(exc.value)
        assert msg.startswith("evaluation runs untrusted programs") and repr(platform) in msg
        assert "Linux namespaces" in msg and "memfd_create" in msg and "WSL2" in msg


def test_importing_and_reading_results_still_work_off_linux(monkeypatch, tmp_path):
    F.write_frontier(
        tmp_path / "run" / "07_weight_averaging",
        {0.0: [{"problem_id": "p", "sample": 0, "outcome": "correct"}]},
    )
    plots.rebuild_all(tmp_path / "run", out_dir=tmp_path / "warm")  # matplotlib imported here
    monkeypatch.setattr(sys, "platform", "darwin")
    importlib.reload(recode_lib)  # no check at import
    built = plots.rebuild_all(tmp_path / "run", out_dir=tmp_path / "figs")
    assert "frontier" in built["made"] and (tmp_path / "figs" / "frontier.png").is_file()


def test_evaluation_stops_before_generating(macos, tmp_path):
    class Never(Generator):
        def generate_samples(self, *a, **k):
            raise AssertionError("nothing may be generated off Linux")

    p = Problem(
        id="t/1",
        source="t",
        prompt="p",
        tests={"kind": "stdio", "cases": [{"input": "", "output": "1"}]},
    )
    with pytest.raises(LinuxRequired, match="^evaluation runs untrusted programs"):
        EvalSpec(progress=False).evaluate("m", [p], tmp_path / "ev", generator=Never())


def test_a_code_reward_refuses_before_training_starts(macos):
    with pytest.raises(LinuxRequired, match="^a code reward"):
        SandboxRunner(workers=1).check_tests({"kind": "stdio", "cases": []}, "problem 'x'")


def test_recode_sandbox_says_why_in_one_line(macos, tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(
        json.dumps(
            {
                "id": "a",
                "code": "print(1)",
                "tests": {"kind": "stdio", "cases": [{"input": "", "output": "1"}]},
            }
        )
        + "\n"
    )
    assert main(["sandbox", str(src), "--out", str(tmp_path / "out.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("recode sandbox: error: `recode sandbox` runs untrusted programs")
    assert "needs Linux" in err and not (tmp_path / "out.jsonl").exists()


def test_the_sandbox_pool_itself_refuses_another_os(monkeypatch):
    import sys

    from recode_lib.core.linux import LinuxRequired
    from recode_lib.sandbox import SandboxConfig
    from recode_lib.sandbox.pool import get_pool

    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(LinuxRequired, match="namespaces"):
        get_pool(SandboxConfig(time_limit_s=1.5))
