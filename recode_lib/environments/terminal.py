"""The agentic terminal setting: one sandboxed workspace per rollout, shell tools, a submission.

    from recode_lib.environments.terminal import TerminalEnv
    env = TerminalEnv(max_calls=8, limits=ToolLimits(time_limit_s=5))
    note = env.reset(**row)          # workspace: statement.md, solution.py (starter code),
                                     # examples/<k>.in/.out (the row's public_examples, if any)
    env.write_file("solution.py", src); env.run("python solution.py < examples/1.in")
    env.read_file("statement.md"); env.submit("solution.py")
    env.submission                   # the submitted file's text (None before submit)

A TRL environment: the public methods run, write_file, read_file and submit are the tools.
Paper B's words: "agentic coding through a sandboxed terminal". The workspace is
recode_lib.sandbox.workspace.Workspace: files held by the judge, every command run by bash in a
fresh confined sandbox process over a copy of them (no network, writes only inside the
workspace copy, time/memory/output limits per command), processes reaped after each command.
Paths are untrusted (workspace.check_path: no absolute, `..` or link escapes). `submit` records
the file's text and closes the workspace; later calls answer "the episode is over" (TRL keeps
generating until the model stops calling tools; the evaluator stops at submit). `reset` closes
the previous rollout's workspace, so nothing of a workspace outlives its rollout. `submit` is
counted but never refused by the budget: a rollout that used every call can still submit (the
budget error asks it to). The row's
hidden `tests` never enter the workspace. Malformed calls (wrong types, bad paths, over the
budget) raise ToolError, counted in `stats`. It does not judge the submission
(recode_lib.environments.settings does, with the single-turn rewards).
"""

from __future__ import annotations

import json

from recode_lib.environments.python_tool import ToolError
from recode_lib.sandbox.tools import ToolLimits
from recode_lib.sandbox.workspace import PathError, Workspace, check_path

NOTE = (
    "\n\nYou work in a terminal. Your workspace holds {files}. Tools: run(command) runs a "
    "shell command there, write_file(path, text), read_file(path), and submit(path) submits "
    "the file holding your complete solution (this ends the task). You have {n} tool calls."
)


def statement_text(row: dict) -> str:
    prompt = row.get("prompt")
    if isinstance(prompt, list):
        users = [
            m.get("content") or ""
            for m in prompt
            if isinstance(m, dict) and m.get("role") == "user"
        ]
        return users[-1] if users else ""
    return str(prompt or "")


class TerminalEnv:
    """One rollout of the agentic terminal setting (module docstring)."""

    def __init__(self, max_calls: int = 8, limits: ToolLimits | None = None):
        if isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 0:
            raise ValueError(f"max_calls must be a non-negative integer, got {max_calls!r}")
        self.max_calls = max_calls
        self.limits = limits or ToolLimits()
        self.workspace: Workspace | None = None
        self._reset_stats()

    def _reset_stats(self):
        self.calls, self.errors, self.statuses = 0, 0, []
        self.submission: str | None = None
        self.submitted_path: str | None = None

    def reset(self, **row) -> str | None:
        """Start a rollout: a fresh workspace with the statement (never the hidden tests)."""
        self._close()
        self._reset_stats()
        ws = Workspace(self.limits)
        ws.write("statement.md", statement_text(row))
        ws.write("solution.py", row.get("starter_code") or "")
        examples = row.get("public_examples") or []
        if isinstance(examples, str):
            try:
                examples = json.loads(examples)
            except ValueError:
                examples = []
        for k, ex in enumerate(examples if isinstance(examples, list) else [], 1):
            if isinstance(ex, dict) and isinstance(ex.get("input"), str):
                ws.write(f"examples/{k}.in", ex["input"])
                ws.write(f"examples/{k}.out", str(ex.get("output", "")))
        self.workspace = ws
        return NOTE.format(files=", ".join(sorted(ws.files())), n=self.max_calls)

    def _close(self) -> None:
        if self.workspace is not None:
            self.workspace.close()
            self.workspace = None

    def _start(self, name: str, budgeted: bool = True, **args) -> Workspace:
        for key, value in args.items():
            if not isinstance(value, str):
                self.errors += 1
                raise ToolError(f"{name}: {key} must be a string, got {type(value).__name__}")
        if self.workspace is None:
            self.errors += 1
            raise ToolError(f"{name}: the episode is over (a file was submitted)")
        if budgeted and self.calls >= self.max_calls:
            self.errors += 1
            raise ToolError(
                f"{name}: the budget of {self.max_calls} tool calls is used up; "
                "submit your solution now"
            )
        self.calls += 1
        return self.workspace

    def _bad(self, exc: Exception):
        self.errors += 1
        raise ToolError(str(exc)) from None

    def run(self, command: str) -> str:
        """Run a shell command in the workspace (no network; time, memory and output limits).

        Args:
            command: The bash command line to run in the workspace folder.

        Returns:
            The command's status, exit code, standard output and standard error (truncated).
        """
        ws = self._start("run", command=command)
        res = ws.run(command)
        self.statuses.append(res.status)
        return res.text()

    def write_file(self, path: str, text: str) -> str:
        """Write a text file in the workspace (created or replaced).

        Args:
            path: A relative path inside the workspace, e.g. "solution.py".
            text: The file's full content.

        Returns:
            A confirmation or an error.
        """
        ws = self._start("write_file", path=path, text=text)
        try:
            path = ws.write(path, text)
        except ValueError as exc:
            self._bad(exc)
        return f"wrote {path} ({len(text)} characters)"

    def read_file(self, path: str) -> str:
        """Read a text file of the workspace.

        Args:
            path: A relative path inside the workspace.

        Returns:
            The file's content (truncated), or an error.
        """
        ws = self._start("read_file", path=path)
        try:
            text = ws.read(path)
        except (ValueError, FileNotFoundError) as exc:
            self._bad(exc)
        n = int(self.limits.max_output_chars)
        return text if len(text) <= n else text[:n] + f"\n[... truncated: {len(text)} characters]"

    def submit(self, path: str) -> str:
        """Submit the file holding your complete solution; this ends the task.

        Args:
            path: The relative path of the solution file, e.g. "solution.py".

        Returns:
            A confirmation or an error.
        """
        ws = self._start("submit", budgeted=False, path=path)  # what the budget error asks for
        try:
            text = ws.read(path)
            self.submitted_path = check_path(path)
        except (PathError, ValueError, FileNotFoundError) as exc:
            self._bad(exc)
        self.submission = text
        self._close()
        return f"submitted {path}; the task is over"

    @property
    def stats(self) -> dict:
        """Counters of this rollout (a property: TRL takes every public method for a tool)."""
        return {
            "tool_calls": self.calls + self.errors,
            "tool_errors": self.errors,
            "statuses": list(self.statuses),
            "submitted": self.submission is not None,
        }
