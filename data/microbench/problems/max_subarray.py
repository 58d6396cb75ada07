TITLE = "Best contiguous stretch"
STATEMENT = """Given n integers, print the largest sum of a non-empty contiguous block.
Input: n on the first line, the n integers on the second.
Output: one integer.
Limits: 1 <= n <= 2*10^4, |a_i| <= 10^4."""
EFFICIENT = "O(n) (running best suffix)"
NAIVE_COMPLEXITY = "O(n^2)"
EXAMPLES = ["3\n-5 -2 -9\n", "5\n1 -3 4 -1 2\n", "1\n-7\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
n = int(d[0])
best = cur = None
for x in map(int, d[1:1 + n]):
    cur = x if cur is None or cur < 0 else cur + x
    best = cur if best is None or cur > best else best
print(best)
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
a = [int(x) for x in d[1:1 + n]]
best = a[0]
for i in range(n):
    s = 0
    for j in range(i, n):
        s += a[j]
        if s > best:
            best = s
print(best)
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
best = cur = 0
for x in map(int, d[1:1 + n]):
    cur = max(0, cur + x)
    best = max(best, cur)
print(best)
'''


def generate(rng, length):
    n = max(1, length // 5)
    lo = -99 if rng.random() < 0.8 else -99
    hi = 60 if rng.random() < 0.7 else -1
    a = [rng.randint(lo, hi) for _ in range(n)]
    return f"{n}\n" + " ".join(map(str, a)) + "\n"
