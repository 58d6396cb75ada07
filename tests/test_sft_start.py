"""The shared SFT start: program-written transcripts that the settings' own parser and tools read
back and whose answers pass, SFT problems off every held-out set, one tiny LoRA SFT step that
writes a loadable merged checkpoint, and the start model every RL notebook resolves."""

from __future__ import annotations

import json

import pytest

from recode_lib.core.assemble import assemble
from recode_lib.core.models import ModelError, load_tokenizer
from recode_lib.core.prompts import user_prompt
from recode_lib.data.easy_tasks import generate_easy_tasks
from recode_lib.data.overlap import drop_overlap, overlap
from recode_lib.data.schema import Problem
from recode_lib.environments import prepare_tool_tokenizer, reset_row
from recode_lib.environments.rollout import parse_turn
from recode_lib.environments.settings import environment_factory
from recode_lib.orchestration.start import (
    prepare_start_model,
    sft_problems,
    start_model,
    start_record_path,
)
from recode_lib.rewards.execution import SandboxRunner
from recode_lib.runner.pipeline import declared_parameters, load_profile, notebooks_dir
from recode_lib.training.sft_data import (
    CLOSING,
    TranscriptConfig,
    assistant_texts,
    build_transcripts,
    examples_hidden,
    run_scripted,
    setting_tools,
)
from recode_lib.training.sft_start import (
    SFTStartConfig,
    run_fingerprint,
    sft_args,
    tokenize_transcripts,
    train_sft,
)

# a function task and a program task (their smallest tests are the examples), no data needed
EASY = generate_easy_tasks(1, seed=3, kinds=("call",)) + generate_easy_tasks(
    1, seed=4, kinds=("stdio",)
)


@pytest.fixture(scope="module")
def built():
    return build_transcripts(EASY, TranscriptConfig(n_examples=2))


def test_every_setting_gets_a_transcript_and_nothing_is_dropped(built):
    assert built.dropped == []
    # single: one per prompt style; tool and agentic: one each
    assert built.counts() == {"single": 4, "tool": 2, "agentic": 2}
    for t in built.transcripts:
        calls = [
            c
            for m in t["messages"]
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
        ]
        names = [c["function"]["name"] for c in calls]
        assert (
            names
            == {"single": [], "tool": ["run_python"], "agentic": ["write_file", "run", "submit"]}[
                t["setting"]
            ]
        ), t["id"]
        assert t["tool_calls"] == len(names)
        tools = [m for m in t["messages"] if m.get("role") == "tool"]
        assert all(m["content"].startswith(("status: ok", "wrote", "submitted")) for m in tools)


def test_rendered_transcripts_parse_back_replay_and_pass(built, tiny_model_dir):
    """Render each transcript with the tool template, take each assistant turn's text as the
    model would emit it, replay those texts through the environments (their parser, their
    tools) and judge the final answer in the sandbox: same tool calls, same messages, a pass."""
    tok = prepare_tool_tokenizer(load_tokenizer(tiny_model_dir))
    by_id = {p.id: p for p in EASY}
    runner = SandboxRunner(workers=1)
    for t in built.transcripts:
        msgs, setting = t["messages"], t["setting"]
        texts = assistant_texts(tok, msgs, setting_tools(setting))
        turns = [m for m in msgs if m["role"] == "assistant"]
        assert len(texts) == len(turns)
        for m, text in zip(turns, texts, strict=True):
            content, calls, errors = parse_turn(text)
            assert not errors
            assert calls == [c["function"] for c in m.get("tool_calls") or []], t["id"]
            if calls:
                assert "<tool_call>" in text and content == m["content"]
        p = by_id[t["problem_id"]]
        if setting == "single":
            answer = texts[0]
        else:
            replay = (
                texts[:-1] if setting == "agentic" else texts
            )  # the closing turn follows submit
            budget = {"tool": 4, "agentic": 8}[setting]  # TranscriptConfig's defaults
            ep = run_scripted(
                setting,
                reset_row(p, t["reasoning"]),
                replay,
                environment_factory(setting, max_calls=budget),
            )
            assert (ep.tool_calls, ep.tool_errors) == (t["tool_calls"], 0), t["id"]
            want = msgs[:-1] if setting == "agentic" else msgs
            assert ep.messages == want, t["id"]  # same prompt, calls and tool results
            answer = ep.answer
            if setting == "agentic":
                assert msgs[-1] == {"role": "assistant", "content": CLOSING}
        [res] = runner.run([assemble(p, answer).code], [p.tests], time_limit_s=p.time_limit_s)
        assert res["status"] == "passed", (t["id"], res)


def test_a_wrong_or_missing_reference_is_dropped_with_its_reason():
    p = EASY[0]
    wrong = Problem.from_dict(
        {
            **p.to_dict(),
            "id": "easy/wrong",
            "reference_solution": p.reference_solution.replace("return", "return 1 +", 1),
        }
    )
    none = Problem.from_dict({**p.to_dict(), "id": "easy/none", "reference_solution": None})
    b = build_transcripts([wrong, none], TranscriptConfig(settings=("single", "tool")))
    assert b.transcripts == []
    why = {(d["problem_id"], d["setting"]): d["reason"] for d in b.dropped}
    assert why[("easy/none", "single")] == "no reference solution"
    assert why[("easy/wrong", "tool")].startswith("the examples fail in the tool")
    assert why[("easy/wrong", "single")].startswith("the final answer does not pass")


# an MBPP-style task: the statement lists the asserts its tests hold
MBPP_LIKE = Problem.from_dict(
    {
        "id": "mbpp/9001",
        "source": "mbpp",
        "prompt": "Write a function to add the squares of a list.\n"
        "Your code should pass these tests:\n\n"
        "assert sq_sum([1, 2]) == 5\nassert sq_sum([]) == 0",
        "tests": {
            "kind": "script",
            "script": "assert sq_sum([1, 2]) == 5\nassert sq_sum([]) == 0\n"
            "assert sq_sum([3]) == 9\n",
        },
        "entry_point": "sq_sum",
        "reference_solution": "def sq(x):\n    return x * x\n\ndef sq_sum(xs, start=0):\n"
        "    return start + sum(sq(x) for x in xs)\n",
    }
)


def test_a_hidden_statement_keeps_the_prose_and_the_signature_and_no_example():
    h = examples_hidden(MBPP_LIKE, MBPP_LIKE.reference_solution)
    assert h.prompt == "Write a function to add the squares of a list."
    assert h.starter_code == "def sq_sum(xs, start=0):"  # the entry function, not the helper
    assert h.tests == MBPP_LIKE.tests and h.id == MBPP_LIKE.id
    shown = user_prompt(h)
    assert "assert" not in shown and "Complete this code" in shown
    assert examples_hidden(EASY[0], EASY[0].reference_solution) is None  # nothing to hide
    assert examples_hidden(MBPP_LIKE, "def other(xs):\n    return 0\n") is None  # no entry function


def test_hidden_transcripts_check_asserts_the_statement_never_showed():
    """With multiturn_statements="shown,hidden" each multi-turn setting gets both transcripts:
    the hidden one's prompt holds no assert, yet its check runs the same asserts, and its answer
    passes; single-turn transcripts are not doubled."""
    b = build_transcripts([MBPP_LIKE], TranscriptConfig(multiturn_statements="shown,hidden"))
    assert b.dropped == []
    assert b.counts() == {"single": 2, "tool": 2, "agentic": 2}
    hidden = [t for t in b.transcripts if t["id"].endswith(":hidden")]
    assert sorted(t["setting"] for t in hidden) == ["agentic", "tool"]
    for t in hidden:
        user = next(m["content"] for m in t["messages"] if m["role"] == "user")
        assert "assert" not in user.split("\n\nYou ")[0] and "def sq_sum(xs, start=0):" in user
        args = json.dumps(
            [c["function"]["arguments"] for m in t["messages"] for c in m.get("tool_calls") or []]
        )
        assert "assert sq_sum([1, 2]) == 5" in args


def test_multiturn_statements_refuses_an_unknown_kind_by_name():
    with pytest.raises(ValueError, match="multiturn_statements"):
        TranscriptConfig(multiturn_statements="shown,secret")
    with pytest.raises(ValueError, match="multiturn_statements"):
        TranscriptConfig(multiturn_statements="")


def test_overlap_by_family_task_id_and_by_statement():
    base = EASY[0].to_dict()
    train = [
        Problem.from_dict(
            {**base, "id": "mbpp/602", "source": "mbpp", "prompt": "Write a function to do X."}
        ),
        Problem.from_dict(
            {
                **base,
                "id": "mbpp/700",
                "source": "mbpp",
                "prompt": "Write a function to count the vowels of a word.\nassert f('a') == 1",
            }
        ),
        Problem.from_dict(
            {
                **base,
                "id": "mbpp/701",
                "source": "mbpp",
                "prompt": "Write a function to sort a list of tuples.",
            }
        ),
    ]
    held = [
        Problem.from_dict(
            {
                **base,
                "id": "mbppplus/602",
                "source": "mbppplus",
                "prompt": '"""\nSomething else.\n"""',
            }
        ),
        Problem.from_dict(
            {
                **base,
                "id": "humaneval/9",
                "source": "humaneval",
                "prompt": 'def f(w):\n    """ Write a function to count  the vowels of a word.\n'
                '    >>> f("a")\n    """',
            }
        ),
    ]
    kept, dropped = drop_overlap(train, held)
    assert [p.id for p in kept] == ["mbpp/701"]
    assert dropped == {
        "mbpp/602": "same task as held-out mbppplus/602",
        "mbpp/700": "same statement as held-out humaneval/9",
    }


def held_out_benchmarks(profile: dict) -> set[str]:
    """Every benchmark a notebook of the profile evaluates, calibrates on or trains RL on."""
    keys = (
        "BENCHMARK",
        "EVAL_BENCHMARK",
        "BENCHMARKS",
        "HEADLINE_BENCHMARKS",
        "SOURCES",
        "SEEDED_SOURCES",
        "HELD_OUT_BENCHMARKS",
    )
    out = set()
    for name, section in profile.items():
        if not isinstance(section, dict) or "skip" in section or name.startswith(("10_", "_")):
            continue
        for k in keys:
            out |= {b.strip() for b in str(section.get(k) or "").split(",") if b.strip()}
    calibrated = {b for b in out if b.startswith("calibrated:")}
    # calibrated:<profile> holds calibration candidates: easy tasks and MBPP+/HumanEval+ problems
    return (out - calibrated) | ({"easy", "mbppplus", "humanevalplus"} if calibrated else set())


def notebook_00_params(profile: dict) -> dict:
    """Notebook 00's parameters under a profile: its defaults, then common, then its section."""
    nb = notebooks_dir() / "00_data_and_models.ipynb"
    return declared_parameters(nb) | profile.get("common", {}) | profile["00_data_and_models"]


@pytest.mark.parametrize("name", ["smoke", "laptop", "paper"])
def test_each_profile_holds_every_evaluated_benchmark_out_of_sft(name):
    from recode_lib.data import benchmark_family

    p = load_profile(name)
    nb = notebook_00_params(p)
    held = {benchmark_family(b) for b in nb.get("SFT_HELD_OUT", "").split(",") if b}
    want = {benchmark_family(b) for b in held_out_benchmarks(p)}
    assert want <= held, f"{name}: SFT_HELD_OUT misses {sorted(want - held)}"
    assert benchmark_family(nb["SFT_BENCHMARK"]) not in held


@pytest.mark.parametrize("name", ["smoke", "laptop"])
def test_sft_problems_share_no_task_with_any_held_out_problem(name, shared_data_dir):
    from recode_lib.data import load_benchmark
    from recode_lib.evaluation.calibration import candidate_problems

    p = load_profile(name)
    nb = notebook_00_params(p)
    train, dropped = sft_problems(nb["SFT_BENCHMARK"], 0, nb["SFT_HELD_OUT"])
    held = [q for b in sorted(held_out_benchmarks(p)) for q in load_benchmark(b)]
    held += candidate_problems(
        int(nb.get("CAL_N_EASY", 48)), seed=0, n_easiest=8, log=lambda *_: None
    )
    assert len(train) >= 250 and overlap(train, held) == {}
    ids = {q.id for q in held}
    assert not ids & {q.id for q in train}
    # MBPP repeats three train-split statements elsewhere: those tasks are left out
    assert {"mbpp/704", "mbpp/872", "mbpp/928"} <= set(dropped)


def test_one_tiny_sft_step_writes_a_loadable_merged_checkpoint(built, tiny_model_dir, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    tok = prepare_tool_tokenizer(load_tokenizer(tiny_model_dir, padding_side="right"))
    rows, too_long = tokenize_transcripts(tok, built.transcripts, 4096)
    assert too_long == 0 and len(rows) == len(built.transcripts)
    agentic = rows[[t["setting"] for t in built.transcripts].index("agentic")]
    trained = tok.decode([i for i in agentic["labels"] if i != -100])
    context = tok.decode(
        [i for i, lab in zip(agentic["input_ids"], agentic["labels"], strict=True) if lab == -100]
    )
    assert (
        "<tool_call>" in trained and "<tool_response>" not in trained
    )  # loss on the model's turns only
    assert "<tool_response>" in context and "<tools>" in context

    cfg = SFTStartConfig(model=str(tiny_model_dir), max_steps=1, batch_size=2, max_length=4096)
    out = tmp_path / "sft"
    res = train_sft(cfg, built.transcripts, out)
    assert not res.skipped and res.n_examples == len(built.transcripts)
    assert (res.final_dir / ".complete").is_file()
    merged = AutoModelForCausalLM.from_pretrained(res.final_dir)
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    names = [n for n, _ in base.named_parameters() if n.endswith("q_proj.weight")]
    assert names and not any(k.startswith("base_model") or "lora" in k for k in merged.state_dict())
    assert any(
        not torch.equal(dict(merged.named_parameters())[n], dict(base.named_parameters())[n])
        for n in names
    )  # the adapter is merged in
    saved = load_tokenizer(res.final_dir)
    assert (
        saved.chat_template == load_tokenizer(tiny_model_dir).chat_template
    )  # the base's, unchanged
    rows = [json.loads(line) for line in res.metrics_path.read_text().splitlines()]
    assert rows and rows[0]["step"] == 1 and "loss" in rows[0]
    assert train_sft(cfg, built.transcripts, out).skipped  # a finished run is skipped


def test_gradient_checkpointing_trains_the_same_step_and_keeps_the_fingerprint(
    built, tiny_model_dir, tmp_path
):
    """On by default (CPU memory: 5.9 -> 4.2 GiB on the laptop profile's longest transcripts);
    recomputing activations must not change what is learned, nor which run a folder holds."""
    runs = {}
    for gc in (True, False):
        cfg = SFTStartConfig(
            model=str(tiny_model_dir),
            max_steps=1,
            batch_size=2,
            max_length=4096,
            gradient_checkpointing=gc,
        )
        args = sft_args(cfg, tmp_path / f"args{gc}")
        assert args.gradient_checkpointing is gc
        res = train_sft(cfg, built.transcripts, tmp_path / f"sft{gc}")
        runs[gc] = (
            json.loads(res.metrics_path.read_text().splitlines()[0]),
            run_fingerprint(cfg, built.transcripts),
        )
    assert SFTStartConfig().gradient_checkpointing is True
    assert runs[True][0]["loss"] == pytest.approx(runs[False][0]["loss"], rel=1e-5)
    assert runs[True][0]["grad_norm"] == pytest.approx(runs[False][0]["grad_norm"], rel=1e-4)
    assert runs[True][1] == runs[False][1]


def test_train_sft_returns_with_its_trainer_model_and_optimizer_freed(
    built, tiny_model_dir, tmp_path, monkeypatch
):
    """Notebook 00 calibrates the start in the same kernel right after training it: the trainer
    (a cycle with its callback) must not keep the model, adapter and AdamW state resident until
    some later collection. The collector is off during the run, as in a kernel where large
    tensor allocations never trigger it; only train_sft's own release may free them."""
    import gc
    import weakref

    from recode_lib.training import sft_start

    seen = {}

    def spy(trainer, tokenizer, final):
        seen.update(
            trainer=weakref.ref(trainer),
            model=weakref.ref(trainer.model),
            optimizer=weakref.ref(trainer.optimizer),
        )
        save_final(trainer, tokenizer, final)

    save_final = sft_start.save_final
    monkeypatch.setattr(sft_start, "save_final", spy)
    cfg = SFTStartConfig(model=str(tiny_model_dir), max_steps=1, batch_size=2, max_length=4096)
    gc.disable()
    try:
        res = train_sft(cfg, built.transcripts, tmp_path / "sft")
        alive = {name: ref() is not None for name, ref in seen.items()}
    finally:
        gc.enable()
    assert (res.final_dir / ".complete").is_file()
    assert alive == {"trainer": False, "model": False, "optimizer": False}


def test_train_sft_trims_the_heap_after_every_step_and_learns_the_same(
    built, tiny_model_dir, tmp_path, monkeypatch
):
    """Transcripts of different lengths leave freed activations resident step after step (the
    laptop profile's SFT start grew ~60 MiB a step to 5.96 GiB): each optimizer step's end hands
    them back. Trimming moves no number: the same losses and the same merged weights."""
    from safetensors.torch import load_file

    from recode_lib.core import memory
    from recode_lib.training import callbacks

    calls = []
    runs = {}
    for trim in (True, False):
        monkeypatch.setattr(
            callbacks,
            "trim_heap",
            (lambda: calls.append(1) or memory.trim_heap()) if trim else (lambda: False),
        )
        cfg = SFTStartConfig(model=str(tiny_model_dir), max_steps=2, batch_size=1, max_length=4096)
        res = train_sft(cfg, built.transcripts, tmp_path / f"sft{trim}")
        losses = [json.loads(line)["loss"] for line in res.metrics_path.read_text().splitlines()]
        runs[trim] = (losses, load_file(res.final_dir / "model.safetensors"))
    assert len(calls) == 2  # once per optimizer step
    assert runs[True][0] == runs[False][0] and len(runs[True][0]) == 2
    assert runs[True][1].keys() == runs[False][1].keys()
    assert all(runs[True][1][k].equal(runs[False][1][k]) for k in runs[True][1])


def test_the_start_model_is_the_recorded_sft_of_the_same_base(tiny_model_dir, tmp_path):
    profile = "startmodel"
    assert start_model(profile, "smollm2") == "smollm2"  # 00 never ran
    rec = prepare_start_model(profile, "smollm2", sft_model=str(tiny_model_dir))
    assert rec["source"] == "sft_model" and start_record_path(profile).is_file()
    assert start_model(profile, "smollm2") == str(tiny_model_dir)
    assert (
        start_model(profile, "Qwen/Qwen2.5-7B-Instruct") == "Qwen/Qwen2.5-7B-Instruct"
    )  # another base
    assert prepare_start_model(profile, "smollm2")["source"] == "model"
    assert start_model(profile, "smollm2") == "smollm2"  # SFT off again: the base
    with pytest.raises(Exception, match="both set"):
        prepare_start_model(profile, "smollm2", sft=SFTStartConfig(), sft_model=str(tiny_model_dir))
    path = start_record_path(profile)
    path.write_text(
        json.dumps({"base": "smollm2", "start": str(tmp_path / "gone"), "source": "sft"})
    )
    with pytest.raises(ModelError, match="gone"):
        start_model(profile, "smollm2")


def test_notebook_00s_step_trains_the_sft_start_and_records_it(tiny_model_dir, monkeypatch):
    import recode_lib.orchestration.start as sm

    profile, base = "sftstep", str(tiny_model_dir)
    cfg = SFTStartConfig(model=base, max_steps=1, batch_size=2, max_length=4096)
    tcfg = TranscriptConfig(settings=("single", "tool"), reasoning_styles="direct")
    rec = prepare_start_model(
        profile, base, sft=cfg, transcripts=tcfg, benchmark="easy", n_problems=1, held_out=""
    )
    assert rec["source"] == "sft" and rec["sft"]["transcripts"] == {"single": 1, "tool": 1}
    assert rec["sft"]["steps"] == 1 and not rec["sft"]["skipped"]
    assert start_model(profile, base) == rec["start"] == str(sm.sft_dir(profile) / "final")
    cache = sm.transcripts_dir(profile) / "transcripts.jsonl"
    stamp = cache.stat().st_mtime_ns
    again = prepare_start_model(
        profile, base, sft=cfg, transcripts=tcfg, benchmark="easy", n_problems=1, held_out=""
    )
    assert again["sft"]["skipped"] and cache.stat().st_mtime_ns == stamp  # nothing redone
    monkeypatch.setattr(sm, "FORMAT_VERSION", -1)  # transcripts of another format: rebuilt
    sm.cached_transcripts(sm.transcripts_dir(profile), generate_easy_tasks(1), tcfg)
    assert cache.stat().st_mtime_ns != stamp
