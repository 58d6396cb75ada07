"""The reward model behind HTTP: a tiny scorer server and the client GRPO uses to reach it.

    # on the GPU (or node) that holds the RM:
    python -m recode_lib.process_reward.serving --rm runs/paper/02_reward_model/rm \
        --device cuda:7 --batch-size 32 --host 0.0.0.0 --port 8008
    # in the recipe: rm_placement: endpoint, rm_endpoint: http://HOST:8008
    client = EndpointScorer("http://HOST:8008", batch_size=32)
    client.health()                        # {"ok": true, "model": ..., "device": ..., "dtype": ...}
    client.score(prompts, traces)          # list[float], one POST /score per batch_size traces

    server = start_server(scorer, port=0)  # in-process (tests): server.url, server.shutdown()

Protocol (JSON): `GET /health` -> {"ok": true, "model", "device", "dtype"};
`POST /score` {"prompts": [str], "traces": [str]} -> {"scores": [float]} (HTTP 400 with
{"error": ...} for a malformed request, 500 when scoring raised). The server scores with a
recode_lib.process_reward.model.ProcessRewardScorer, so texts are encoded exactly as in RM
training; requests are scored one at a time (a lock), each batched by the scorer. The client
raises RuntimeError naming the URL on any failure (the process reward records it as a 0 with
its reason). No authentication and no TLS: bind it to a private network.
"""

from __future__ import annotations

import json
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from recode_lib.process_reward.model import ProcessRewardScorer


class ScorerHandler(BaseHTTPRequestHandler):
    """GET /health, POST /score; the server carries `scorer`, `lock` and `info`."""

    def reply(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path.rstrip("/") == "/health":
            self.reply(200, {"ok": True, **self.server.info})
        else:
            self.reply(404, {"error": f"no route {self.path}"})

    def do_POST(self):  # noqa: N802
        if self.path.rstrip("/") != "/score":
            self.reply(404, {"error": f"no route {self.path}"})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            prompts, traces = body["prompts"], body["traces"]
            if not (
                isinstance(prompts, list)
                and isinstance(traces, list)
                and len(prompts) == len(traces)
                and all(isinstance(x, str) for x in prompts + traces)
            ):
                raise ValueError("prompts and traces must be lists of strings of equal length")
        except (ValueError, KeyError, TypeError) as exc:
            self.reply(400, {"error": f"bad request: {exc}"})
            return
        try:
            with self.server.lock:
                scores = self.server.scorer.score(prompts, traces)
        except Exception as exc:
            self.reply(500, {"error": f"{type(exc).__name__}: {exc}"[:500]})
            return
        self.reply(200, {"scores": [float(s) for s in scores]})

    def log_message(self, fmt, *args):  # quiet: one line per request is noise in training logs
        pass


def start_server(scorer, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """Serve `scorer` (anything with .score(prompts, traces)) from a daemon thread; the returned
    server has `.url`; stop it with `.shutdown()` then `.server_close()`."""
    server = ThreadingHTTPServer((host, port), ScorerHandler)
    server.scorer, server.lock = scorer, threading.Lock()
    server.info = {
        "model": str(getattr(scorer, "path", type(scorer).__name__)),
        "device": str(getattr(scorer, "device", "")),
        "dtype": str(getattr(scorer, "dtype", "")).replace("torch.", ""),
    }
    server.url = f"http://{host}:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, name="rm-scorer", daemon=True).start()
    return server


class EndpointScorer:
    """A scorer that sends (prompt, trace) pairs to a scorer server, batch_size per request."""

    def __init__(self, url: str, *, batch_size: int = 8, timeout_s: float = 300.0):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.url, self.batch_size, self.timeout_s = url.rstrip("/"), batch_size, timeout_s
        self.path, self.collective = self.url, False
        self.requests = 0

    def call(self, route: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.url + route, data=data, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            try:
                why = json.loads(exc.read()).get("error", "")
            except (ValueError, OSError):
                why = ""
            raise RuntimeError(
                f"reward model endpoint {self.url}{route}: HTTP {exc.code} {why}".strip()
            ) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise RuntimeError(
                f"reward model endpoint {self.url}{route} unreachable: {exc}"
            ) from None

    def health(self) -> dict:
        """The server's /health answer; RuntimeError when it does not answer ok."""
        info = self.call("/health")
        if not info.get("ok"):
            raise RuntimeError(f"reward model endpoint {self.url} is not healthy: {info}")
        return info

    def score(self, prompts: list[str], traces: list[str]) -> list[float]:
        if len(prompts) != len(traces):
            raise ValueError(f"{len(prompts)} prompts but {len(traces)} traces")
        out: list[float] = []
        for s in range(0, len(traces), self.batch_size):
            ans = self.call(
                "/score",
                {
                    "prompts": list(prompts[s : s + self.batch_size]),
                    "traces": [t or "" for t in traces[s : s + self.batch_size]],
                },
            )
            self.requests += 1
            got = ans.get("scores")
            if not isinstance(got, list) or len(got) != len(traces[s : s + self.batch_size]):
                raise RuntimeError(f"reward model endpoint {self.url}/score answered {ans!r:.200}")
            out.extend(float(x) for x in got)
        return out


def main(argv: list[str] | None = None) -> int:
    """`python -m recode_lib.process_reward.serving --rm PATH [--device D] [--port P]`."""
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m recode_lib.process_reward.serving",
        description="serve a Bradley-Terry reward model over HTTP",
    )
    ap.add_argument("--rm", required=True, help="the reward-model folder (02_reward_model/rm)")
    ap.add_argument("--device", default="cuda:0", help="torch device (default cuda:0)")
    ap.add_argument("--dtype", default="auto", help="auto | float32 | bfloat16 | float16")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8008)
    args = ap.parse_args(argv)

    scorer = ProcessRewardScorer(
        args.rm, batch_size=args.batch_size, device=args.device, dtype=args.dtype
    )
    server = start_server(scorer, args.host, args.port)
    print(f"scoring with {args.rm} on {args.device} at {server.url}", file=sys.stderr, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
