"""The HumanEval+/MBPP+ reference-output cache is shared by every process on a machine
(pytest's workers, two notebooks, an evaluation's Ray tasks): it is filled once, each id once,
and a process that finds another filling it waits and then reads what that one wrote."""

import json
import os
import subprocess
import sys
from pathlib import Path

from recode_lib.core.jsonl import JsonlStore

ROOT = Path(__file__).resolve().parent.parent
FILL = """
import json, sys
from recode_lib.data.evalplus import expected_outputs
jobs = [
    {"id": f"t/{k}", "code": "import time\\ndef f(x):\\n    time.sleep(0.05)\\n    return 2 * x\\n",
     "entry_point": "f", "inputs": [[i] for i in range(4)]}
    for k in range(6)
]
out = expected_outputs(jobs, "T-cache", workers=2, progress=False)
print(json.dumps({k: v[0] for k, v in sorted(out.items())}))
"""


def test_processes_filling_the_cache_at_once_write_each_id_once(tmp_path):
    env = dict(os.environ, RECODE_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", FILL],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    done = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err[-500:] for _, err in done]
    want = {f"t/{k}": [0, 2, 4, 6] for k in range(6)}
    assert all(json.loads(out) == want for out, _ in done)
    store = JsonlStore(tmp_path / "evalplus" / "T-cache.jsonl")  # raises on a duplicate id
    assert len(store) == 6 and store.ids() == set(want)
    # the processes that found it being filled said whose work they waited for
    assert sum("waiting for" in err for _, err in done) >= 1
