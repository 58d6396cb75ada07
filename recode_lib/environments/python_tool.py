"""The Python tool setting: the policy may run Python programs in the sandbox before answering.

    from recode_lib.environments.python_tool import PythonToolEnv
    env = PythonToolEnv(max_calls=4, limits=ToolLimits(time_limit_s=5, max_output_chars=2000))
    note = env.reset(**row)             # the dataset row (its `tests` are never used)
    env.run_python("print(input()[::-1])", stdin="abc")   # -> "status: ok\nstdout:\ncba\n"
    env.stats                           # {"tool_calls", "tool_errors", "statuses"}

A TRL environment (GRPOTrainer(environment_factory=...)): its one public method `run_python`
is the tool. Paper B's words: "multi-turn reasoning with Python tool calls". Each call runs
`python main.py` with the code and stdin in a fresh confined sandbox process
(recode_lib.sandbox.tools.run_command: no network, time, memory and output limits) and
returns status, exit code, stdout and stderr truncated to `limits.max_output_chars`.
A call with arguments of the wrong type, or one past `max_calls`, is a tool error: counted,
and answered with an error text (TRL counts a raising tool as a failure too). The hidden tests
(the row's `tests`) never reach a tool; the statement's own examples are the only ones shown.
The final answer is the last assistant message's code block, judged by the single-turn rewards
(recode_lib.environments.settings). It does not parse tool calls (TRL does).
"""

from __future__ import annotations

from recode_lib.core.errors import RecodeError
from recode_lib.sandbox.tools import ToolLimits, run_command

NOTE = (
    "\n\nYou may call the tool run_python(code, stdin) up to {n} times to test your code "
    "before answering; it returns the program's status, stdout and stderr. Then give your "
    "final answer as a single ```python code block, without a tool call."
)


class ToolError(RecodeError, ValueError):
    """A malformed tool call: wrong argument types, budget exhausted, bad path."""


class PythonToolEnv:
    """One rollout of the Python tool setting (module docstring)."""

    def __init__(self, max_calls: int = 4, limits: ToolLimits | None = None):
        if isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 0:
            raise ValueError(f"max_calls must be a non-negative integer, got {max_calls!r}")
        self.max_calls = max_calls
        self.limits = limits or ToolLimits()
        self._reset_stats()

    def _reset_stats(self):
        self.calls, self.errors, self.statuses = 0, 0, []

    def reset(self, **row) -> str | None:
        """Start a rollout; returns the note TRL appends to the user message."""
        self._reset_stats()
        return NOTE.format(n=self.max_calls)

    def _fail(self, msg: str):
        self.errors += 1
        raise ToolError(msg)

    def run_python(self, code: str, stdin: str = "") -> str:
        """Run a Python program in a sandbox (no network; time, memory and output limits) and
        return its status, stdout and stderr.

        Args:
            code: The complete Python program to run.
            stdin: Text given to the program on standard input.

        Returns:
            The program's status, exit code, standard output and standard error (truncated).
        """
        if not isinstance(code, str):
            self._fail(f"run_python: code must be a string, got {type(code).__name__}")
        if stdin is None:
            stdin = ""
        if not isinstance(stdin, str):
            self._fail(f"run_python: stdin must be a string, got {type(stdin).__name__}")
        if self.calls >= self.max_calls:
            self._fail(
                f"run_python: the budget of {self.max_calls} calls is used up; "
                "give your final answer now"
            )
        self.calls += 1
        res = run_command(
            ["python", "main.py"], files={"main.py": code}, stdin=stdin, limits=self.limits
        )
        self.statuses.append(res.status)
        return res.text()

    @property
    def stats(self) -> dict:
        """Counters of this rollout (a property: TRL takes every public method for a tool)."""
        return {
            "tool_calls": self.calls + self.errors,
            "tool_errors": self.errors,
            "statuses": list(self.statuses),
        }
