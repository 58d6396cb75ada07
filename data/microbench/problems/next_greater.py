TITLE = "Next strictly larger to the right"
STATEMENT = """Given n integers, print for every position the first value to its right that is
strictly larger, or -1 if there is none, space-separated.
Input: n on the first line, the n integers on the second.
Output: one line with n values.
Limits: 1 <= n <= 2*10^4, 0 <= a_i <= 10^9."""
EFFICIENT = "O(n) (monotonic stack)"
NAIVE_COMPLEXITY = "O(n^2)"
EXAMPLES = ["4\n2 2 3 1\n", "3\n3 2 1\n", "1\n5\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
n = int(d[0])
a = list(map(int, d[1:1 + n]))
res = [-1] * n
stack = []
for i, x in enumerate(a):
    while stack and a[stack[-1]] < x:
        res[stack.pop()] = x
    stack.append(i)
print(" ".join(map(str, res)))
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
a = [int(x) for x in d[1:1 + n]]
res = []
for i in range(n):
    v = -1
    for j in range(i + 1, n):
        if a[j] > a[i]:
            v = a[j]
            break
    res.append(v)
print(" ".join(map(str, res)))
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
a = list(map(int, d[1:1 + n]))
res = [-1] * n
stack = []
for i, x in enumerate(a):
    while stack and a[stack[-1]] <= x:  # also pops on equal values
        res[stack.pop()] = x
    stack.append(i)
print(" ".join(map(str, res)))
'''


def generate(rng, length):
    n = max(1, length // 4)
    # non-increasing with ties (catches >= vs >): every naive scan runs to the end, except
    # where a few larger values are planted in the last 5%
    a = sorted((rng.randint(0, 300) for _ in range(n)), reverse=True)
    tail = max(1, n // 20)
    for _ in range(max(1, n // 200)):
        i = n - 1 - rng.randrange(tail)
        a[i] = rng.randint(0, 300)
    return f"{n}\n" + " ".join(map(str, a)) + "\n"
