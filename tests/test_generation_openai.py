"""The OpenAI-compatible backend against a real local HTTP server speaking chat completions."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from recode_lib.generation import CachedGenerator, GenerationError, SamplingConfig, get_generator
from recode_lib.generation.openai_backend import OpenAIGenerator


class _State:
    def __init__(self):
        self.lock = threading.Lock()
        self.active = self.peak = 0
        self.attempts: dict[str, int] = {}
        self.bodies: list[dict] = []


def _make_handler(state: _State):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):  # keep pytest output clean
            pass

        def _send(self, code, obj, headers=()):
            raw = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self):
            if self.path != "/v1/chat/completions":
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            user = body["messages"][-1]["content"]
            key = f"{user}|{body['seed']}"
            with state.lock:
                state.bodies.append(body)
                state.attempts[key] = state.attempts.get(key, 0) + 1
                attempt = state.attempts[key]
                state.active += 1
                state.peak = max(state.peak, state.active)
            try:
                time.sleep(0.05)
                if "BAD" in user:
                    return self._send(400, {"error": {"message": "bad field 'messages'"}})
                if "FLAKY" in user and attempt <= 2:
                    return self._send(
                        503, {"error": {"message": "overloaded"}}, [("Retry-After", "0")]
                    )
                if "GARBLED" in user and attempt == 1:
                    return self._send(200, b"{not json")
                if "SLOW" in user and attempt == 1:
                    time.sleep(1.0)
                if "DOWN" in user:
                    return self._send(502, {"error": {"message": "bad gateway"}})
                words = f"echo {user} seed={body['seed']}".split()
                words = words[: body["max_tokens"]]
                finish = "length" if len(words) == body["max_tokens"] else "stop"
                return self._send(
                    200,
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": finish,
                                "message": {"role": "assistant", "content": " ".join(words)},
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 3,
                            "completion_tokens": len(words),
                            "total_tokens": 3 + len(words),
                        },
                    },
                )
            finally:
                with state.lock:
                    state.active -= 1

    return Handler


@pytest.fixture
def server():
    state = _State()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def _msgs(text):
    return [{"role": "system", "content": "sys"}, {"role": "user", "content": text}]


def test_concurrent_requests_one_per_sample_with_seeds(server):
    url, state = server
    gen = get_generator("openai", "served-model", base_url=url, concurrency=8)
    s = SamplingConfig(temperature=0.7, top_p=0.9, max_new_tokens=50, n=4, seed=1)
    out = gen.generate([_msgs(f"p{i}") for i in range(4)], s)
    assert [len(r) for r in out] == [4] * 4
    assert out[2][3].text.startswith("echo p2 seed=") and out[2][3].finish_reason == "stop"
    assert len({c.text for c in out[0]}) == 4  # one distinct seed per sample
    assert state.peak > 1  # the pool really overlapped requests
    b = state.bodies[0]
    assert b["n"] == 1 and b["model"] == "served-model" and b["temperature"] == 0.7
    assert b["max_tokens"] == 50 and b["top_p"] == 0.9 and "stop" not in b
    assert out[1][1].n_tokens == len(out[1][1].text.split())


def test_retries_transient_errors_and_timeouts(server):
    url, state = server
    gen = OpenAIGenerator("m", base_url=url, timeout_s=0.5, backoff_s=0.01, max_retries=3)
    s = SamplingConfig(max_new_tokens=20)
    out = gen.generate([_msgs("FLAKY one"), _msgs("SLOW two"), _msgs("GARBLED three")], s)
    assert [r[0].text.split()[1] for r in out] == ["FLAKY", "SLOW", "GARBLED"]
    assert sorted(state.attempts.values()) == [2, 2, 3]


def test_length_finish_and_stop_passed_through(server):
    url, state = server
    gen = OpenAIGenerator("m", base_url=url)
    c = gen.generate([_msgs("a b c d e f")], SamplingConfig(max_new_tokens=3, stop=("###",)))[0][0]
    assert c.finish_reason == "length" and c.n_tokens == 3
    assert state.bodies[-1]["stop"] == ["###"]


def test_client_errors_are_not_retried_and_name_the_request(server):
    url, state = server
    gen = OpenAIGenerator("m", base_url=url, backoff_s=0.01)
    with pytest.raises(GenerationError, match=r"request 0 .*HTTP 400.*bad field 'messages'"):
        gen.generate([_msgs("BAD")], SamplingConfig())
    assert list(state.attempts.values()) == [1]


def test_persistent_failure_raises_but_keeps_finished_samples(server, tmp_path):
    url, state = server
    gen = CachedGenerator(
        OpenAIGenerator("m", base_url=url, backoff_s=0.01, max_retries=2, concurrency=2),
        tmp_path / "c.jsonl",
    )
    with pytest.raises(GenerationError, match="failed after 3 attempts; last error: HTTP 502"):
        gen.generate([_msgs("fine"), _msgs("DOWN"), _msgs("also fine")], SamplingConfig())
    done = {
        r["text"].split()[1]
        for r in CachedGenerator(gen.inner, tmp_path / "c.jsonl").store.records()
    }
    assert done == {"fine", "also"}


def test_unreachable_server_raises_after_retries():
    gen = OpenAIGenerator(
        "m", base_url="http://127.0.0.1:9/v1", backoff_s=0.01, max_retries=1, timeout_s=2
    )
    with pytest.raises(GenerationError, match="failed after 2 attempts"):
        gen.generate([_msgs("x")], SamplingConfig())
