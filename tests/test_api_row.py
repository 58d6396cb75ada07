"""The API comparison row of notebook 05 (recode_lib.evaluation.api_model): refused with one line
naming the unset environment variables, and, with them set, evaluated through the real openai
backend against a local fake OpenAI-compatible server with the same spec as the other rows."""

from __future__ import annotations

import csv
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from recode_lib.data import load_benchmark
from recode_lib.evaluation.api_model import (
    API_ENV,
    ApiRowRefused,
    api_row,
    api_spec,
    evaluate_api_row,
)
from recode_lib.evaluation.headline import gain_rows, headline_table, write_headline
from recode_lib.evaluation.spec import EvalSpec

KEY = "sk-test-not-a-real-key-1234"


def test_refused_naming_both_variables_when_unset():
    row = api_row("gpt-4-turbo", env={})
    assert row.missing == API_ENV == ("OPENAI_API_KEY", "OPENAI_BASE_URL")
    assert row.refusal.startswith("not run: OPENAI_API_KEY, OPENAI_BASE_URL unset")
    assert "\n" not in row.refusal
    with pytest.raises(ApiRowRefused, match="OPENAI_API_KEY, OPENAI_BASE_URL unset"):
        row.require()


def test_refusal_names_only_the_missing_variable_and_empty_counts_as_unset():
    row = api_row("gpt-4-turbo", env={"OPENAI_API_KEY": "  ", "OPENAI_BASE_URL": "http://x/v1"})
    assert row.missing == ("OPENAI_API_KEY",) and row.refusal.startswith(
        "not run: OPENAI_API_KEY unset"
    )
    assert api_row("m", env={"OPENAI_API_KEY": "k"}).missing == ("OPENAI_BASE_URL",)
    assert api_row("m", env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "u"}).refusal is None


def test_the_recorded_url_carries_no_credentials():
    row = api_row(
        "m",
        env={
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": "https://user:s3cret@proxy.example:8443/v1?key=abc",
        },
    )
    rec = row.record()
    assert rec["base_url"] == "https://proxy.example:8443/v1"
    assert "s3cret" not in str(rec) and "abc" not in str(rec) and KEY not in str(rec)
    assert row.base_url.endswith("?key=abc")  # the request itself still uses the full URL


def test_an_empty_model_name_is_no_row():
    with pytest.raises(ValueError, match="API_MODEL"):
        api_row("", env={})


def test_refused_row_contacts_nothing_and_records_its_status(tmp_path):
    row = api_row("gpt-4-turbo", env={})
    with pytest.raises(ApiRowRefused):
        evaluate_api_row(row, ["microbench"], EvalSpec(), tmp_path, limit=1)
    assert not any(tmp_path.iterdir())
    rec = row.record()
    assert (
        rec["status"] == row.refusal and rec["base_url"] is None and rec["model"] == "gpt-4-turbo"
    )


def test_api_spec_keeps_every_sampling_and_scoring_field():
    spec = EvalSpec(
        backend="hf",
        temperature=0.8,
        top_p=0.95,
        max_new_tokens=2048,
        n=10,
        seed=3,
        k=(1, 10),
        precision="native",
    )
    row = api_row("gpt-4-turbo", env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://h/v1"})
    s = api_spec(spec, row)
    assert s.backend == "openai" and s.base_url == "http://h/v1"
    assert s.protocol() == spec.protocol() and (s.n, s.seed, s.k) == (spec.n, spec.seed, spec.k)
    assert s.sandbox == spec.sandbox


class _Server:
    """A chat-completions server: answers the reference solution for problems in `right`, a
    wrong program for the others; records every request's body and Authorization header."""

    def __init__(self, right: dict[str, str], wrong: str):
        self.bodies, self.auth = [], []
        state = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                state.bodies.append(body)
                state.auth.append(self.headers.get("Authorization"))
                user = "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")
                code = next((sol for prompt, sol in right.items() if prompt in user), wrong)
                text = f"<think>solve it</think>\n```python\n{code}\n```"
                raw = json.dumps(
                    {
                        "choices": [
                            {
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"completion_tokens": 17},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def problems():
    return load_benchmark("microbench", limit=2)


def test_row_runs_through_the_openai_backend_with_the_same_spec(problems, tmp_path, monkeypatch):
    first = problems[0]
    server = _Server({first.prompt.split("\n")[0]: first.reference_solution}, "print('nope')")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    try:
        spec = EvalSpec(
            backend="hf",
            temperature=0.8,
            top_p=0.95,
            max_new_tokens=64,
            n=2,
            seed=5,
            k=(1,),
            workers=1,
            on_config_change="set_aside",
            progress=False,
        )
        row = api_row("gpt-4-turbo")
        got = evaluate_api_row(
            row, ["microbench"], spec, tmp_path / "api", limit=2, greedy=True, log=None
        )
    finally:
        server.close()
    s = got["microbench"]
    assert s["n_problems"] == 2 and s["pass@1"] == pytest.approx(0.5)  # one right, one wrong
    assert s["per_problem"] == {first.id: 1.0, problems[1].id: 0.0}
    assert s["greedy_pass@1"] == pytest.approx(0.5)
    sampled = [b for b in server.bodies if b["temperature"] == 0.8]
    greedy = [b for b in server.bodies if b["temperature"] == 0.0]
    assert len(sampled) == 4 and len(greedy) == 2  # n=2 per problem + the greedy twin
    assert all(
        b["model"] == "gpt-4-turbo" and b["top_p"] == 0.95 and b["max_tokens"] == 64
        for b in sampled
    )
    assert len({b["seed"] for b in sampled}) == 4
    assert set(server.auth) == {f"Bearer {KEY}"}
    assert (tmp_path / "api" / "gpt-4-turbo" / "microbench" / "samples.jsonl").is_file()
    # in the headline table: a comparison row, no relative gain of its own, key never written
    start = {"microbench": {**s, "pass@1": 0.25}}
    h = headline_table(
        {"start": start, "gated": {"microbench": s}, row.policy: {"microbench": s}},
        comparisons=[row.policy],
        n_boot=10,
    )
    assert row.policy in h["policies"] and h["comparisons"] == [row.policy]
    assert (
        row.policy not in h["relative_gain_over_start"] and "gated" in h["relative_gain_over_start"]
    )
    assert all(r["policy"] != row.policy for r in gain_rows(h))
    files = write_headline(h, tmp_path, extra={"api_row": row.record()})
    for f in [*files, *(tmp_path / "api").rglob("*")]:
        if f.is_file():
            assert KEY not in f.read_text(errors="replace"), f
    assert json.loads(files[0].read_text())["api_row"]["base_url"] == server.url


def test_a_not_run_row_is_in_the_csv_with_its_reason(tmp_path):
    s = {
        "pass@1": 0.5,
        "pass@1_ci": [0.4, 0.6],
        "tokens": {"mean": 10, "mean_correct": 9},
        "n_problems": 2,
        "n_samples": 2,
    }
    reason = api_row("gpt-4-turbo", env={}).refusal
    h = headline_table({"start": {"a": s}}, not_run={"gpt-4-turbo": reason})
    assert h["policies"] == ["start"] and h["not_run"] == {"gpt-4-turbo": reason}
    _, cs = write_headline(h, tmp_path)
    rows = {r["policy"]: r for r in csv.DictReader(cs.open())}
    assert rows["start"]["status"] == "evaluated" and rows["gpt-4-turbo"]["status"] == reason
    assert rows["gpt-4-turbo"]["a/pass@1"] == ""


def test_an_unknown_comparison_row_raises():
    s = {"pass@1": 0.5, "pass@1_ci": [0.4, 0.6], "tokens": {"mean": 10, "mean_correct": 9}}
    with pytest.raises(KeyError, match="gpt-4-turbo"):
        headline_table({"start": {"a": s}}, comparisons=["gpt-4-turbo"])
