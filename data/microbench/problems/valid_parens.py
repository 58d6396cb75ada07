TITLE = "Longest balanced stretch"
STATEMENT = """Given a string of '(' and ')', print the length of its longest contiguous
substring that is a balanced bracket sequence (0 if none).
Input: one line with the string.
Output: one integer.
Limits: 1 <= length <= 2*10^5."""
EFFICIENT = "O(n) (stack of indices)"
NAIVE_COMPLEXITY = "O(n^2) (balance scan from every start)"
EXAMPLES = ["(()\n", ")()())\n", "()(()\n", "))((\n"]
REFERENCE = r'''
import sys
s = sys.stdin.buffer.read().decode().strip()
stack = [-1]
best = 0
for i, ch in enumerate(s):
    if ch == "(":
        stack.append(i)
    else:
        stack.pop()
        if stack:
            best = max(best, i - stack[-1])
        else:
            stack.append(i)
print(best)
'''
NAIVE = r'''
import sys
s = sys.stdin.read().strip()
n = len(s)
best = 0
for i in range(n):
    bal = 0
    for j in range(i, n):
        bal += 1 if s[j] == "(" else -1
        if bal < 0:
            break
        if bal == 0 and j - i + 1 > best:
            best = j - i + 1
print(best)
'''
WRONG = r'''
import sys
s = sys.stdin.read().strip()
opened = pairs = 0
for ch in s:  # counts matched pairs anywhere, not a contiguous stretch
    if ch == "(":
        opened += 1
    elif opened:
        opened -= 1
        pairs += 1
print(2 * pairs)
'''


def generate(rng, length):
    n = max(1, length - 1)
    parts, size = [], 0
    while size < n:
        depth = rng.randint(1, 30)
        # balanced runs with stray '(' (never a stray ')'): the balance never drops below zero,
        # so a naive scan from each start runs to the end
        chunk = "(" * depth + ")" * depth if rng.random() < 0.9 else "("
        parts.append(chunk)
        size += len(chunk)
    return "".join(parts)[:n] + "\n"
