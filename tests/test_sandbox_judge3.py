"""The judge, round 3: hostile submissions that once got a false verdict, one
property per test. Each attack below passed (or got the wrong status) before its fix; each
test asserts the verdict the submission deserves, and a benign control where the attack's
shape could also be an honest program.

Classes: a value's type cannot be forged through the codec; nothing of one stdio test
survives into the next (processes, scratch files, CPU time); signals are crashes, not memory
verdicts; nothing of one record survives into the next (per-uid state, the process list);
the current job's test script is never in the submission's memory.
"""

import json
import os
import uuid

import pytest

from recode_lib.sandbox import SandboxConfig, codec, execute, execute_many, limits

CFG = SandboxConfig(time_limit_s=2.0, memory_mb=512, workers=1)
TOKEN = uuid.uuid4().hex[:12]


def run(code, tests, **rec):
    return execute({"id": "j3", "code": code, "tests": tests, **rec}, config=CFG)


# ---- 1. a value's type cannot be forged ------------------------------------------------------
PLAIN_VALUES = [
    {"__tuple__": [1, 2]},
    {"__set__": [1]},
    {"__float__": "nan"},
    {"__complex__": [1, 2]},
    {"__dict__": [[1, 2]]},
    {"__t": "tuple", "v": [1, 2]},
    {"__t": "float", "v": "inf"},
    {"__t": 5},
    {"a": {"__tuple__": []}},
    [{"__set__": []}],
    {"__tuple__": [1], "x": 2},
    {"__t": "dict", "v": [["__tuple__", [1]]]},
    (1, {"__tuple__": [2]}),
    {1: {"__set__": [3]}},
    {"__tuple__": {"__tuple__": [1]}},
    float("nan"),
    (),
    frozenset({1}),
    {"": None},
]


def _same(a, b):
    """Equal with the same types all the way down (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and a != a:
        return b != b
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and _same(v, b[k]) for k, v in a.items())
    return a == b


@pytest.mark.parametrize("value", PLAIN_VALUES, ids=repr)
def test_codec_round_trip_keeps_every_type(value):
    wire = json.loads(json.dumps(codec.encode(value)))  # through real JSON, as on the pipe
    assert _same(codec.decode(wire), value)


@pytest.mark.parametrize(
    "forged,expected",
    [
        ({"__tuple__": [1, 2]}, {"__t": "tuple", "v": [1, 2]}),
        ({"__set__": [1, 2]}, {"__t": "set", "v": [1, 2]}),
        ({"__dict__": [[1, 2]]}, {"__t": "dict", "v": [[1, 2]]}),
        ({"__complex__": [1, 2]}, {"__t": "complex", "v": [1, 2]}),
    ],
    ids=["tuple", "set", "dict", "complex"],
)
def test_call_test_dict_shaped_like_a_tag_is_a_wrong_answer(forged, expected):
    code = f"def f():\n    return {forged!r}\n"
    tests = {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": expected}]}
    assert run(code, tests)["status"] == "wrong_answer"


def test_call_test_real_tuple_still_passes():
    tests = {
        "kind": "call",
        "fn_name": "f",
        "cases": [{"args": [], "expected": {"__t": "tuple", "v": [1, 2]}}],
    }
    assert run("def f():\n    return (1, 2)\n", tests)["status"] == "passed"


def test_separate_script_dict_shaped_like_a_tuple_is_wrong():
    tests = {"kind": "script", "script": "assert f() == (1, 2)\n", "entry_point": "f"}
    assert run("def f():\n    return {'__tuple__': [1, 2]}\n", tests)["status"] == "wrong_answer"


def test_separate_script_exception_named_like_a_builtin_is_not_that_builtin():
    script = (
        "try:\n    f()\nexcept ValueError:\n    pass\nelse:\n"
        "    raise AssertionError('no ValueError')\n"
    )
    code = "class ValueError(Exception):\n    pass\ndef f():\n    raise ValueError('x')\n"
    res = run(code, {"kind": "script", "script": script, "entry_point": "f"})
    assert res["status"] != "passed"


def test_separate_script_builtin_exception_subclass_still_counts():
    script = (
        "try:\n    f()\nexcept KeyError:\n    pass\nelse:\n"
        "    raise AssertionError('no KeyError')\n"
    )
    code = "class Missing(KeyError):\n    pass\ndef f():\n    raise Missing('x')\n"
    assert run(code, {"kind": "script", "script": script, "entry_point": "f"})["status"] == "passed"


# ---- 3. nothing of one stdio test survives into the next ---------------------------------------
def _two_tests(small_out="small", big_out="big"):
    # the small test runs first (ascending input length); the big one must be computed afresh
    return {
        "kind": "stdio",
        "cases": [{"input": "1\n", "output": small_out}, {"input": "22222\n", "output": big_out}],
    }


def test_stdio_scratch_file_from_an_earlier_test_is_gone():
    code = (
        "import os\nif os.path.exists('seen'):\n    print('big')\nelse:\n"
        "    open('seen', 'w').write('x')\n    print('small')\n"
    )
    assert run(code, _two_tests())["status"] == "wrong_answer"


def test_stdio_tmp_file_from_an_earlier_test_is_gone():
    path = f"/tmp/cache-{TOKEN}"
    code = (
        f"import os\nif os.path.exists({path!r}):\n    print('big')\nelse:\n"
        f"    open({path!r}, 'w').write('x')\n    print('small')\n"
    )
    res = run(code, _two_tests())
    assert res["status"] == "wrong_answer"
    assert not os.path.exists(path)


def test_stdio_hidden_and_locked_directories_are_emptied_too():
    code = (
        "import os\nif os.path.exists('.d/x/y'):\n    print('big')\nelse:\n"
        "    os.makedirs('.d/x')\n    open('.d/x/y', 'w').write('x')\n"
        "    os.chmod('.d/x', 0)\n    print('small')\n"
    )
    assert run(code, _two_tests())["status"] == "wrong_answer"


def test_stdio_background_process_from_an_earlier_test_is_killed():
    # test 1 leaves a daemon (double fork + setsid) serving answers on an abstract socket;
    # test 2 asks it: the daemon must be dead by then
    name = f"\\0recode-{TOKEN}"
    code = f'''
import os, socket, sys, time
n = sys.stdin.read().strip()
def ask():
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("{name}")
        return s.recv(10).decode()
    except OSError:
        return None
    finally:
        s.close()
got = ask()
if got:
    print(got)
    sys.exit(0)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        srv = socket.socket(socket.AF_UNIX)
        srv.bind("{name}")
        srv.listen(4)
        while True:
            c, _ = srv.accept()
            c.send(b"big")
            c.close()
    os._exit(0)
time.sleep(0.2)
print("small")
'''
    res = run(code, _two_tests())
    assert res["tests"][0]["status"] == "passed"
    assert res["status"] == "wrong_answer"


def test_stdio_cpu_time_of_helper_processes_counts_against_the_test():
    # two processes burning ~0.7 s of CPU each (1.4 s in all): over a 1 s limit, whatever
    # the wall clock says
    code = (
        "import os, time\ndef burn(s):\n    end = time.process_time() + s\n"
        "    while time.process_time() < end:\n        pass\n"
        "pid = os.fork()\nburn(0.7)\nif pid == 0:\n    os._exit(0)\nos.waitpid(pid, 0)\n"
        "print('small')\n"
    )
    tests = {"kind": "stdio", "cases": [{"input": "1\n", "output": "small"}]}
    assert run(code, tests, time_limit_s=1.0)["status"] == "time_limit"


def test_stdio_program_with_a_quick_helper_process_still_passes():
    code = (
        "import subprocess, sys\nout = subprocess.run([sys.executable, '-c', 'print(7)'],"
        " capture_output=True, text=True).stdout.strip()\nprint(out)\n"
    )
    tests = {
        "kind": "stdio",
        "cases": [{"input": "", "output": "7"}, {"input": "x", "output": "7"}],
    }
    assert run(code, tests)["status"] == "passed"


# ---- 6. right verdicts on signals --------------------------------------------------------------
def test_stdio_program_that_sigkills_itself_is_a_runtime_error():
    code = (
        "import os, sys\nif len(sys.stdin.read()) > 3:\n    os.kill(os.getpid(), 9)\n"
        "print('small')\n"
    )
    res = run(code, _two_tests(big_out="small"))
    assert res["status"] == "runtime_error"
    assert res["outcome"] == "correctness_failure"


def test_stdio_memory_error_is_still_a_memory_limit():
    code = "import sys\nif len(sys.stdin.read()) > 3:\n    x = bytearray(1 << 34)\nprint('small')\n"
    res = run(code, _two_tests(big_out="small"))
    assert res["status"] == "memory_limit"
    assert res["outcome"] == "optimization_failure"


# ---- 7. correct programs that fail ------------------------------------------------------------
def test_separate_script_with_an_open_multiprocessing_pool_passes_every_time():
    code = "import multiprocessing\nPOOL = multiprocessing.Pool(2)\ndef f(x):\n    return x + 1\n"
    tests = {"kind": "script", "script": "assert f(1) == 2\n", "entry_point": "f"}
    recs = [{"id": i, "code": code, "tests": tests} for i in range(12)]
    results = execute_many(recs, workers=1, config=CFG)
    assert [r["status"] for r in results] == ["passed"] * 12


# ---- 5. the current job's data is not in the submission's memory -------------------------------
SCAN = r'''
import ctypes, re
def leaked():
    """Every readable mapping of this process (ctypes: /proc/self/mem is closed to a
    non-dumpable process), searched for the test's expected value."""
    found = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split()
            special = ("[vvar]", "[vsyscall]", "[vvar_vclock]")
            if not parts[1].startswith("r") or parts[-1] in special:
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            data = ctypes.string_at(lo, hi - lo)
            found.update(m.group(1) for m in re.finditer(rb"secret_answer == (\d{9})", data))
    return found
def f():
    got = leaked()
    return int(got.pop()) if len(got) == 1 else -1
'''


PADDING = "".join(f"# filler line {i} of a long test script\n" for i in range(3000))


def test_separate_script_submission_cannot_find_the_current_script_in_its_memory():
    answer = 100000000 + int(TOKEN[:6], 16) % 800000000
    script = f"secret_answer = f()\nassert secret_answer == {answer}\n" + PADDING
    res = run(SCAN, {"kind": "script", "script": script, "entry_point": "f"})
    assert res["status"] == "wrong_answer"


def test_separate_script_submission_cannot_find_an_earlier_records_script():
    # the same problem sampled twice on one worker (a GRPO group): the second sample must
    # not read the first one's tests out of the memory it inherited
    answer = 100000000 + int(TOKEN[6:], 16) % 800000000
    script = f"secret_answer = f()\nassert secret_answer == {answer}\n" + PADDING
    honest = {
        "id": "first",
        "code": "def f():\n    return 0\n",
        "tests": {"kind": "script", "script": script, "entry_point": "f"},
    }
    scanner = {
        "id": "second",
        "code": SCAN,
        "tests": {"kind": "script", "script": script, "entry_point": "f"},
    }
    results = execute_many([honest, scanner], workers=1, config=CFG)
    assert [r["status"] for r in results] == ["wrong_answer", "wrong_answer"]


# ---- 4. nothing of one record survives into the next ------------------------------------------
KEYS = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
USER_RING, KEYCTL_SEARCH, KEYCTL_READ = -4, 10, 11
def store(secret):
    data = secret.encode()
    return libc.syscall(ADD_KEY, b"user", b"recode-carry", data, len(data),
                        ctypes.c_long(USER_RING)) > 0
def fetch():
    key = libc.syscall(KEYCTL, KEYCTL_SEARCH, ctypes.c_long(USER_RING), b"user",
                       b"recode-carry", 0)
    if key < 0:
        return ""
    buf = ctypes.create_string_buffer(256)
    n = libc.syscall(KEYCTL, KEYCTL_READ, key, buf, 256)
    return buf.raw[:n].decode() if n > 0 else ""
"""


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="syscall numbers")
def test_user_keyring_of_one_record_is_not_seen_by_the_next():
    secret = f"carried-{TOKEN}"
    first = {
        "id": "store",
        "code": KEYS + f"def f():\n    return store({secret!r})\n",
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": True}]},
    }
    second = {
        "id": "fetch",
        "code": KEYS + "def f():\n    return fetch()\n",
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": secret}]},
    }
    results = execute_many([first, second], workers=1, config=CFG)
    assert results[1]["status"] == "wrong_answer"


def test_a_submission_sees_only_the_sandboxs_environment():
    """The environment a submission sees is exactly the sandbox's (nothing of the judge's, such
    as a secret in its environment; set once in the worker and inherited by each child)."""
    code = "import os\ndef f():\n    return sorted(os.environ)\n"
    want = sorted(
        ["PATH", "HOME", "TMPDIR", "LANG", "PYTHONHASHSEED", "JE_ARROW_MALLOC_CONF"]
        + list(limits.THREAD_VARS)
        + list(limits.ALLOCATOR_ENV)
    )
    tests = {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": want}]}
    assert run(code, tests)["status"] == "passed"
    home = "import os\ndef f():\n    return [os.environ['HOME'], os.environ['OMP_NUM_THREADS']]\n"
    tests = {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": ["/tmp", "1"]}]}
    assert run(home, tests)["status"] == "passed"


def test_process_list_does_not_show_the_judge():
    code = (
        "import os\ndef f():\n    seen = []\n    for p in os.listdir('/proc'):\n"
        "        if p.isdigit():\n            try:\n"
        "                seen.append(open('/proc/%s/cmdline' % p, 'rb').read())\n"
        "            except OSError:\n                pass\n"
        "    return [c.decode('latin-1') for c in seen if b'pytest' in c]\n"
    )
    tests = {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": []}]}
    assert run(code, tests)["status"] == "passed"


def test_process_list_shows_only_the_submission_and_its_namespace_init():
    code = (
        "import os\ndef f():\n    return sorted(int(p) for p in os.listdir('/proc')\n"
        "                  if p.isdigit() and int(p) not in (1, os.getpid()))\n"
    )
    tests = {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": []}]}
    assert run(code, tests)["status"] == "passed"


# ---- 2. the problem's own helpers cannot be replaced by the submission -------------------------
CYCLIC_PROMPT = '''
def encode_cyclic(s: str):
    groups = [s[(3 * i):min((3 * i + 3), len(s))] for i in range((len(s) + 2) // 3)]
    groups = [(group[1:] + group[0]) if len(group) == 3 else group for group in groups]
    return "".join(groups)


def decode_cyclic(s: str):
    """takes as input string encoded with encode_cyclic function. Returns decoded string."""
'''
CYCLIC_TESTS = {
    "kind": "script",
    "entry_point": "decode_cyclic",
    "helpers": CYCLIC_PROMPT,
    "script": "def check(candidate):\n    for s in ['abcdefg', 'xyzxyz', 'hello']:\n"
    "        assert candidate(encode_cyclic(s)) == s\n\n"
    "check(decode_cyclic)\n",
}


def test_submission_cannot_replace_a_helper_the_problem_defines():
    code = "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n"
    assert run(code, CYCLIC_TESTS)["status"] == "wrong_answer"


def test_entry_point_may_use_its_own_copy_of_the_helper():
    code = CYCLIC_PROMPT.replace(
        '"""takes as input string encoded with encode_cyclic function. Returns decoded string."""',
        "return encode_cyclic(encode_cyclic(s))",
    )
    assert run(code, CYCLIC_TESTS)["status"] == "passed"


def test_humaneval_loader_gives_script_tests_the_prompt_as_helpers(tmp_path):
    import gzip

    rec = {
        "task_id": "HumanEval/38",
        "prompt": CYCLIC_PROMPT,
        "entry_point": "decode_cyclic",
        "canonical_solution": "    return encode_cyclic(encode_cyclic(s))\n",
        "test": CYCLIC_TESTS["script"].replace("check(decode_cyclic)\n", ""),
    }
    with gzip.open(tmp_path / "HumanEval.jsonl.gz", "wt") as fh:
        fh.write(json.dumps(rec) + "\n")
    from recode_lib.data.humaneval import load_humaneval

    (p,) = load_humaneval(tmp_path, download=False)
    assert p.tests["helpers"] == CYCLIC_PROMPT
    hack = "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n"
    assert run(hack, p.tests)["status"] == "wrong_answer"
    assert run(p.reference_solution, p.tests)["status"] == "passed"


# ---- separate script tests: a lazy return value is usable, and still no plain value ----------
@pytest.mark.parametrize(
    "ret",
    [
        "(x * x for x in range(n))",
        "map(abs, range(-n, 0))",
        "{i: i for i in range(n)}.keys()",
        "iter([0, 1, 4][:n])",
    ],
)
def test_separate_script_generator_like_return_values_can_be_iterated(ret):
    tests = {
        "kind": "script",
        "entry_point": "f",
        "script": "assert sorted(f(3)) == sorted(set(f(3)))\nassert len(list(f(3))) == 3\n",
    }
    assert run(f"def f(n):\n    return {ret}\n", tests)["status"] == "passed"


def test_separate_script_range_has_len_index_and_truth_but_is_not_a_list():
    tests = {
        "kind": "script",
        "entry_point": "f",
        "script": "r = f(4)\nassert len(r) == 4 and r[2] == 2 and bool(r)\n"
        "assert not f(0)\nassert f(4) != [0, 1, 2, 3]\n",
    }
    assert run("def f(n):\n    return range(n)\n", tests)["status"] == "passed"


def test_separate_script_object_of_the_submission_is_truthy_without_len():
    tests = {"kind": "script", "entry_point": "f", "script": "assert f()\n"}
    assert run("class A:\n    pass\ndef f():\n    return A()\n", tests)["status"] == "passed"
