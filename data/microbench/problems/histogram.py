TITLE = "Largest rectangle under a skyline"
STATEMENT = """n bars of width 1 stand side by side with heights h_1..h_n. Print the largest area
of an axis-aligned rectangle that fits under the bars.
Input: n on the first line, the n heights on the second.
Output: one integer.
Limits: 1 <= n <= 2*10^4, 0 <= h_i <= 10^6."""
EFFICIENT = "O(n) (monotonic stack)"
NAIVE_COMPLEXITY = "O(n^2) (extend from every bar)"
EXAMPLES = ["6\n2 1 5 6 2 3\n", "3\n3 3 3\n", "1\n0\n", "4\n1 3 2 1\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
n = int(d[0])
h = list(map(int, d[1:1 + n])) + [0]
stack = [-1]
best = 0
for i, x in enumerate(h):
    while stack[-1] != -1 and h[stack[-1]] >= x:
        top = h[stack.pop()]
        best = max(best, top * (i - stack[-1] - 1))
    stack.append(i)
print(best)
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
h = [int(x) for x in d[1:1 + n]]
best = 0
for i in range(n):
    m = h[i]
    for j in range(i, n):
        if h[j] < m:
            m = h[j]
        if m * (j - i + 1) > best:
            best = m * (j - i + 1)
print(best)
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
h = list(map(int, d[1:1 + n])) + [0]
stack = [-1]
best = 0
for i, x in enumerate(h):
    while stack[-1] != -1 and h[stack[-1]] >= x:
        top = h[stack.pop()]
        best = max(best, top * (i - stack[-1] - 2 if stack[-1] != -1 else i))  # off by one
    stack.append(i)
print(best)
'''


def generate(rng, length):
    n = max(1, length // 5)
    h = [rng.randint(0, 999) for _ in range(n)]
    return f"{n}\n" + " ".join(map(str, h)) + "\n"
