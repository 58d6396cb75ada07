"""Paper B's tool and agentic settings: sandboxed tools, environments, scripted episodes, rewards,
evaluation and a GRPO step through TRL's environment_factory (tiny model, CPU)."""

from __future__ import annotations

import json
import os
import sys
import types

import pytest

from recode_lib.data.schema import Problem
from recode_lib.environments import (
    PythonToolEnv,
    TerminalEnv,
    ToolError,
    environment_factory,
    final_answer,
    prepare_tool_tokenizer,
    reset_row,
    setting_reward,
)
from recode_lib.environments.rollout import parse_turn, run_episodes, tool_generator
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import Completion
from recode_lib.sandbox.tools import ToolLimits, parse_report, run_command
from recode_lib.sandbox.workspace import PathError, Workspace, check_path

FAST = ToolLimits(
    time_limit_s=3,
    max_output_chars=200,
    max_workspace_bytes=1 << 20,
    max_file_bytes=256 << 10,
    max_files=20,
)
SOLUTION = "def f(x):\n    return x + 1"


def problem(pid="toy/inc", secret=41):
    return Problem(
        id=pid,
        source="toy",
        prompt="Write f(x) returning x + 1.",
        tests={
            "kind": "call",
            "fn_name": "f",
            "cases": [{"args": [secret], "expected": secret + 1}],
        },
        time_limit_s=2.0,
    )


def call(name, **args):
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def answer(code=SOLUTION):
    return f"<think>\nadd one\n</think>\n```python\n{code}\n```"


class Scripted:
    """A generation backend whose reply is script(conversation) -> text."""

    backend = "scripted"

    def __init__(self, script):
        self.script, self.seen = script, []

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        self.seen.append([r.messages for r in requests])
        out = [
            Completion(text=self.script(r.messages), n_tokens=7, finish_reason="stop")
            for r in requests
        ]
        for i, c in enumerate(out):
            if callback is not None:
                callback(i, c)
        return out


def tool_turns(msgs):
    return [m for m in msgs if m["role"] == "tool"]


# ---- sandbox tools ---------------------------------------------------------------------------
def test_run_command_returns_stdout_stderr_and_exit_status():
    r = run_command(
        ["python", "main.py"],
        files={"main.py": "import sys\nprint(input()[::-1])\nsys.exit('bad')"},
        stdin="abc",
        limits=FAST,
    )
    assert (r.status, r.exit_code, r.stdout, r.stderr.strip()) == ("error", 1, "cba\n", "bad")


def test_flooding_output_is_truncated_and_its_size_reported():
    r = run_command(["python", "-c", "print('x' * 10**6)"], limits=FAST)
    assert r.status == "ok" and len(r.stdout) == 200 and r.stdout_bytes == 10**6 + 1
    assert "truncated: 1000001 bytes" in r.text()


def test_a_tool_command_runs_a_pool_of_16_threads():
    # the command's environment keeps glibc to two malloc arenas (limits.ALLOCATOR_ENV): one
    # 64 MB address-space reservation per thread put a 16-thread pool over its memory limit
    code = (
        "import os, threading\n"
        "ts = [threading.Thread(target=sum, args=([1],)) for _ in range(16)]\n"
        "[t.start() for t in ts]\n[t.join() for t in ts]\nprint(os.environ['MALLOC_ARENA_MAX'])"
    )
    r = run_command(["python", "-c", code], limits=FAST)
    assert (r.status, r.stdout) == ("ok", "2\n")


def test_a_hanging_command_gets_the_timeout_verdict():
    r = run_command(["python", "-c", "while True: pass"], limits=FAST)
    assert r.status == "timeout"


def test_the_network_is_unreachable():
    code = "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)\nprint('CONNECTED')"
    r = run_command(["python", "-c", code], limits=FAST)
    assert r.status == "error" and "CONNECTED" not in r.stdout


def test_no_process_outlives_its_command():
    marker = f"recode_leftover_{os.getpid()}"
    r = run_command(
        [
            "/bin/bash",
            "-c",
            f"(exec -a {marker} sleep 300) & disown; "
            f"setsid bash -c 'exec -a {marker} sleep 300' & echo started",
        ],
        limits=FAST,
    )
    assert r.status == "ok" and "started" in r.stdout
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    left.append(pid)
        except OSError:
            pass
    assert left == []


def test_a_forged_report_is_a_sandbox_error_not_a_crash():
    for forged in (
        "not json",
        "[1]",
        json.dumps({"status": "ok", "exit_code": "0"}),
        json.dumps(
            {
                "status": "ok",
                "exit_code": 0,
                "stdout": "!!",
                "stderr": "",
                "stdout_bytes": 0,
                "stderr_bytes": 0,
            }
        ),
        json.dumps(
            {
                "status": "ok",
                "exit_code": 0,
                "stdout": "",
                "stderr": "",
                "stdout_bytes": 0,
                "stderr_bytes": 0,
                "files": [["../escape", ""]],
            }
        ),
        None,
    ):
        assert parse_report(forged, FAST).status == "sandbox_error"


def test_a_report_past_the_protocol_bounds_is_refused_before_it_is_built():
    ok = {"status": "ok", "exit_code": 0, "stdout": "", "stderr": ""}
    ok.update(stdout_bytes=0, stderr_bytes=0)
    deep = json.dumps(ok)[:-1] + ', "x": ' + "[" * 300 + "]" * 300 + "}"
    wide = json.dumps(ok)[:-1] + ', "x": [' + "[]," * 1_100_000 + "[]]}"  # ~3.3 MB
    for forged, why in ((deep, "deeper"), (wide, "elements")):
        run = parse_report(forged, ToolLimits())  # the default report bound: ~5.4 MB
        assert run.status == "sandbox_error" and why in run.reason, run.reason
    assert parse_report(json.dumps(ok), FAST).status == "ok"
    assert parse_report(json.dumps(ok)[:-1] + ', "x": ' + "[" * 200 + "]" * 200 + "}", FAST)


def test_a_command_cannot_write_into_the_drivers_report():
    """The report is the driver's stdout: a command it runs cannot open that pipe through
    /proc/<driver>/fd (the driver is not dumpable), so it cannot forge or inflate the report."""
    code = (
        "import os\n"
        "try:\n"
        "    fd = os.open('/proc/%d/fd/1' % os.getppid(), os.O_WRONLY)\n"
        "    os.write(fd, b'[]')\n"
        "    print('opened')\n"
        "except OSError as e:\n"
        "    print('refused', e.errno)\n"
    )
    run = run_command(["python3", "-c", code], limits=FAST)
    assert run.status == "ok" and run.stdout.startswith("refused"), (run.status, run.stdout)


# ---- workspace -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad", ["../x", "/etc/passwd", "a/../../x", "", "a\x00b", "..", ".", "~/x", "a\\..\\x", 7]
)
def test_paths_that_leave_the_workspace_are_refused(bad):
    with pytest.raises(PathError):
        check_path(bad)


def test_a_symlink_made_by_a_command_is_never_kept():
    ws = Workspace(FAST)
    r = ws.run("ln -s /etc/passwd link; ln -s / root; echo hi > real.txt")
    assert r.status == "ok" and set(ws.files()) == {"real.txt"}
    with pytest.raises(FileNotFoundError):
        ws.read("link")


def test_filling_the_disk_keeps_the_workspace_within_its_limits():
    ws = Workspace(FAST)
    ws.write("keep.txt", "kept")
    r = ws.run("head -c 50000000 /dev/zero > big; echo done")
    assert ws.size() <= FAST.max_workspace_bytes and "big" not in ws.files()
    assert ws.read("keep.txt") == "kept" and r.status in ("ok", "error", "output_limit")
    assert ws.run("cat keep.txt").stdout == "kept"  # the next command still works


def test_files_persist_between_commands_and_a_closed_workspace_refuses_calls():
    ws = Workspace(FAST)
    ws.run("mkdir -p d && echo 1 > d/a.txt")
    assert ws.run("cat d/a.txt").stdout == "1\n"
    ws.close()
    with pytest.raises(RuntimeError):
        ws.run("true")


# ---- environments ----------------------------------------------------------------------------
def test_python_tool_budget_and_wrong_types_are_counted_tool_errors():
    env = PythonToolEnv(max_calls=1, limits=FAST)
    env.reset(**reset_row(problem()))
    with pytest.raises(ToolError):
        env.run_python(code=123)
    assert "42" in env.run_python("print(41 + 1)")
    with pytest.raises(ToolError, match="budget"):
        env.run_python("print(1)")
    assert env.stats["tool_errors"] == 2 and env.stats["tool_calls"] == 3


def test_terminal_workspace_has_the_statement_never_the_hidden_tests():
    env = TerminalEnv(limits=FAST)
    p = problem(secret=987654)
    row = reset_row(p) | {"problem": p.to_json()}  # the training row carries the tests
    env.reset(**row)
    blob = b"".join(env.workspace.files().values())
    assert b"Write f(x)" in blob and b"987655" not in blob and b"987654" not in blob
    assert "987655" not in env.run("cat -- * 2>&1; ls -R")


def test_terminal_path_escapes_are_tool_errors():
    env = TerminalEnv(limits=FAST)
    env.reset(**reset_row(problem()))
    for path in ("../x", "/tmp/x", "a/../../x"):
        with pytest.raises(ToolError):
            env.write_file(path, "x")
    with pytest.raises(ToolError):
        env.read_file("/etc/passwd")
    assert env.stats["tool_errors"] == 4


def test_submit_closes_the_workspace():
    env = TerminalEnv(limits=FAST)
    env.reset(**reset_row(problem()))
    env.write_file("solution.py", SOLUTION)
    env.submit("solution.py")
    assert env.submission == SOLUTION and env.workspace is None
    with pytest.raises(ToolError, match="over"):
        env.run("ls")


# ---- episodes --------------------------------------------------------------------------------
def test_a_tool_result_reaches_the_next_turn():
    def script(msgs):
        tools = tool_turns(msgs)
        if not tools:
            return call("run_python", code="print(6 * 7)")
        return answer(f"def f(x):\n    return x + {1 if '42' in tools[-1]['content'] else 2}")

    eps = run_episodes(
        Scripted(script),
        [reset_row(problem())],
        "tool",
        _sampling(),
        max_turns=4,
        factory=environment_factory("tool", limits=FAST),
    )
    e = eps[0]
    assert (e.turns, e.tool_calls, e.tool_errors) == (2, 1, 0) and "return x + 1" in e.answer
    assert e.n_tokens == 14


def test_the_turn_limit_holds_and_no_answer_is_a_format_error(tmp_path):
    gen = Scripted(lambda msgs: call("run_python", code="print(1)"))
    spec = EvalSpec.from_sampling(
        _sampling(),
        setting="tool",
        max_turns=3,
        max_tool_calls=10,
        tool_time_limit_s=FAST.time_limit_s,
        tool_memory_mb=FAST.memory_mb,
        tool_max_output_chars=FAST.max_output_chars,
        progress=False,
    )
    s = spec.evaluate("scripted", [problem()], tmp_path, generator=gen)
    row = json.loads((tmp_path / "samples.jsonl").read_text().splitlines()[0])
    assert len(gen.seen) == 3 and row["turns"] == 3 and row["tool_calls"] == 3
    assert row["outcome"] == "format_error" and row["no_answer"]
    assert s["setting"] == "tool" and s["outcomes"]["format_error"] == 1.0


def test_malformed_tool_calls_are_returned_as_errors_and_counted():
    bad = [
        "<tool_call>{not json</tool_call>",
        call("nosuch", x=1),
        call("run_python", code=1),
        call("run_python", cod="print(1)"),
    ]

    def script(msgs):
        n = len([m for m in msgs if m["role"] == "assistant"])
        return bad[n] if n < len(bad) else answer()

    eps = run_episodes(
        Scripted(script),
        [reset_row(problem())],
        "tool",
        _sampling(),
        max_turns=6,
        factory=environment_factory("tool", limits=FAST),
    )
    e = eps[0]
    assert (e.tool_calls, e.tool_errors, e.turns) == (4, 4, 5)
    assert all(m["content"].startswith("error") for m in tool_turns(e.transcript))


def test_a_hostile_tool_call_is_contained_and_the_episode_goes_on():
    def script(msgs):
        tools = tool_turns(msgs)
        if not tools:
            return call("run", command="yes | head -c 10000000; while true; do :; done")
        return (
            call("submit", path="solution.py")
            if len(tools) == 2
            else call("write_file", path="solution.py", text=SOLUTION)
        )

    eps = run_episodes(
        Scripted(script),
        [reset_row(problem())],
        "agentic",
        _sampling(),
        max_turns=6,
        factory=environment_factory("agentic", limits=FAST),
    )
    e = eps[0]
    assert "status: timeout" in tool_turns(e.transcript)[0]["content"]
    assert e.turns == 3 and e.answer and "return x + 1" in e.answer  # submit ended it


def test_rewards_are_identical_to_single_turn_for_the_same_final_code():
    from recode_lib.rewards import get_reward
    from recode_lib.rewards.execution import SandboxRunner

    runner = SandboxRunner(workers=1, batch_timeout_s=60)
    p = problem()
    cols = {"problem": [p.to_json()] * 3}
    text = answer()
    env = TerminalEnv(limits=FAST)
    env.reset(**reset_row(p))
    env.write_file("solution.py", SOLUTION)
    env.submit("solution.py")
    tool_completion = [
        {"role": "assistant", "content": "", "tool_calls": [{}]},
        {"role": "tool", "content": "ok"},
        {"role": "assistant", "content": text},
    ]
    for name in ("strict_inf", "outcome_only", "partial_continuous"):
        fn = get_reward(name, runner=runner)
        single = fn([""], [text], **{k: v[:1] for k, v in cols.items()})
        tool = setting_reward(fn, "tool")(
            [""], [tool_completion], **{k: v[:1] for k, v in cols.items()}
        )
        agentic = setting_reward(fn, "agentic")(
            [""], ["ignored"], environments=[env], **{k: v[:1] for k, v in cols.items()}
        )
        assert single == tool and single[0] > 0
        assert (
            fn([""], [final_answer("agentic", None, env)[0]], **{k: v[:1] for k, v in cols.items()})
            == agentic
        )
    out_of_turns = [{"role": "assistant", "content": text, "tool_calls": [{}]}]
    assert setting_reward(get_reward("strict_inf", runner=runner), "tool")(
        [""], [out_of_turns], **{k: v[:1] for k, v in cols.items()}
    ) == [0.0]


def test_parse_turn_splits_content_and_calls():
    content, calls, errors = parse_turn("let me test\n" + call("run_python", code="print(1)"))
    assert content == "let me test" and calls == [
        {"name": "run_python", "arguments": {"code": "print(1)"}}
    ]
    assert parse_turn(answer()) == (answer(), [], [])


# ---- chat templates --------------------------------------------------------------------------
def test_chatml_tool_template_renders_tools_and_trl_parses_the_call(tiny_model_dir):
    from transformers import AutoTokenizer
    from trl.chat_template_utils import is_chat_template_prefix_preserving, parse_response

    tok = prepare_tool_tokenizer(AutoTokenizer.from_pretrained(tiny_model_dir))
    env = PythonToolEnv()
    text = tok.apply_chat_template(
        [{"role": "user", "content": "hi"}],
        tools=[env.run_python],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert '"name": "run_python"' in text and "<tool_call>" in text
    assert is_chat_template_prefix_preserving(tok)
    ids = tok(call("run_python", code="print(1)") + "<|im_end|>", add_special_tokens=False)[
        "input_ids"
    ]
    parsed = parse_response(tok, ids, prefix=tok(text, add_special_tokens=False)["input_ids"])
    assert parsed["tool_calls"][0]["function"] == {
        "name": "run_python",
        "arguments": {"code": "print(1)"},
    }


# ---- evaluation ------------------------------------------------------------------------------
def _sampling():
    from recode_lib.generation import SamplingConfig

    return SamplingConfig(max_new_tokens=64)


def test_eval_spec_runs_the_agentic_setting_and_records_episodes(tmp_path):
    def script(msgs):
        n = len(tool_turns(msgs))
        return [
            call("write_file", path="solution.py", text=SOLUTION),
            call("run", command="python -c 'import solution; print(solution.f(1))'"),
            call("submit", path="solution.py"),
        ][n]

    spec = EvalSpec(
        setting="agentic", max_new_tokens=64, progress=False, max_turns=5, tool_time_limit_s=3
    )
    s = spec.evaluate("scripted", [problem()], tmp_path, generator=Scripted(script))
    row = json.loads((tmp_path / "samples.jsonl").read_text())
    assert s["setting"] == "agentic" and s["pass@1"] == 1.0
    assert (row["turns"], row["tool_calls"], row["tool_errors"], row["n_tokens"]) == (3, 3, 0, 21)
    assert "2" in row["transcript"][3]["content"] and s["episodes"]["mean_turns"] == 3


def test_single_turn_summary_records_its_setting(tmp_path):
    spec = EvalSpec.from_sampling(_sampling(), progress=False)
    s = spec.evaluate("scripted", [problem()], tmp_path, generator=Scripted(lambda m: answer()))
    assert s["setting"] == "single" and s["pass@1"] == 1.0


def test_vllm_tool_backend_renders_tools_and_keeps_conversations_apart(tiny_model_dir, monkeypatch):
    """The vLLM path on CPU: a fake engine stands in for vllm.LLM."""
    seen = []

    class FakeLLM:
        def generate(self, prompts, params, use_tqdm=False):
            seen.extend(p["prompt_token_ids"] for p in prompts)
            out = types.SimpleNamespace(text=answer(), token_ids=[1, 2, 3], finish_reason="stop")
            return [types.SimpleNamespace(outputs=[out]) for _ in prompts]

    fake = types.ModuleType("vllm")
    fake.SamplingParams = lambda **kw: kw
    monkeypatch.setitem(sys.modules, "vllm", fake)
    gen = tool_generator("vllm", str(tiny_model_dir), "tool")
    gen._llm = FakeLLM()
    from recode_lib.generation import SampleRequest

    base = [{"role": "user", "content": "q"}]
    convs = [
        base
        + [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": "run_python", "arguments": {"code": c}},
                    }
                ],
            },
            {"role": "tool", "name": "run_python", "content": "ok"},
        ]
        for c in ("print(1)", "print(2)")
    ]
    comps = gen.generate_samples([SampleRequest(c, 0, 0) for c in convs], _sampling())
    assert [c.n_tokens for c in comps] == [3, 3] and seen[0] != seen[1]
    text = gen.tokenizer().decode(seen[0])
    assert "run_python" in text and "<tools>" in text


# ---- training --------------------------------------------------------------------------------
@pytest.mark.parametrize("setting", ["tool", "agentic"])
def test_grpo_step_with_environment_factory_runs_tools_on_cpu(
    setting, tiny_model_dir, tmp_path, monkeypatch
):
    from trl import GRPOTrainer

    from recode_lib.core.run_files import read_metrics
    from recode_lib.training.grpo import load_recipe, train

    def scripted(
        self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False
    ):
        tok = self.processing_class
        outs = []
        for ids in prompt_ids:
            n = tok.decode(ids).count("<tool_response>")
            if setting == "tool":
                text = call("run_python", code="print(6 * 7)") if n == 0 else answer()
            else:
                text = [
                    call("write_file", path="solution.py", text=SOLUTION),
                    call("submit", path="solution.py"),
                    "done",
                ][min(n, 2)]
            outs.append(tok(text + "<|im_end|>", add_special_tokens=False)["input_ids"])
        return outs, None

    monkeypatch.setattr(GRPOTrainer, "_generate_single_turn", scripted)
    r = load_recipe(
        f"{setting}_smoke",
        model=str(tiny_model_dir),
        max_steps=1,
        max_completion_length=256,
        per_device_train_batch_size=4,
        num_generations=4,
        save_steps=1,
        sandbox_workers=1,
        tool_time_limit_s=3.0,
        rewards=[{"name": "strict_inf"}],
    )
    res = train(r, [problem(f"toy/{i}", secret=i) for i in range(2)], tmp_path / "run")
    m = read_metrics(res.output_dir)[0]
    assert m["tools/call_frequency"] >= 1 and m["tools/failure_frequency"] == 0
    assert m["strict_inf/out"] == 1.0


@pytest.mark.parametrize("setting", ["tool", "agentic"])
def test_cli_eval_runs_a_setting_with_the_tiny_model_on_the_hf_backend(
    setting, tiny_model_dir, tmp_path, capsys
):
    from recode_lib.cli import main

    code = main(
        [
            "eval",
            "--model",
            str(tiny_model_dir),
            "--benchmark",
            "microbench",
            "--limit",
            "1",
            "--max-new-tokens",
            "8",
            "--setting",
            setting,
            "--max-turns",
            "2",
            "--out",
            str(tmp_path / "o"),
            "--workers",
            "1",
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    assert f"({setting} setting)" in out.out and "episodes:" in out.out
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    row = json.loads((tmp_path / "o" / "samples.jsonl").read_text().splitlines()[0])
    assert s["setting"] == setting and s["backend"] == "hf"
    assert 1 <= row["turns"] <= 2 and row["n_tokens"] >= 1
    assert row["outcome"] in (
        "correct",
        "optimization_failure",
        "correctness_failure",
        "format_error",
    )


def test_math_summary_records_its_setting(tiny_model_dir, tmp_path):
    p = Problem(
        id="m/1",
        source="m",
        prompt="What is 1+1?",
        answer="2",
        tests={"kind": "script", "script": "pass"},
    )
    s = EvalSpec(max_new_tokens=4, batch_size=1, progress=False).evaluate_math(
        tiny_model_dir, [p], tmp_path / "eval"
    )
    assert s["setting"] == "single"
    assert json.loads((tmp_path / "eval" / "summary.json").read_text())["setting"] == "single"
