TITLE = "Range sums"
STATEMENT = """Given n integers and q queries (l, r) with 1 <= l <= r <= n, print for each query
the sum a_l + ... + a_r (inclusive), one per line.
Input: n and q on the first line, the n integers on the second, then q lines "l r".
Output: q lines.
Limits: 1 <= n, q <= 10^4, |a_i| <= 10^6."""
EFFICIENT = "O(n + q) (prefix sums)"
NAIVE_COMPLEXITY = "O(n q)"
EXAMPLES = ["3 2\n1 2 3\n1 3\n2 2\n", "1 1\n-5\n1 1\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
n, q = int(d[0]), int(d[1])
pre = [0]
for x in d[2:2 + n]:
    pre.append(pre[-1] + int(x))
out = []
p = 2 + n
for _ in range(q):
    l, r = int(d[p]), int(d[p + 1])
    p += 2
    out.append(pre[r] - pre[l - 1])
print("\n".join(map(str, out)))
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n, q = int(d[0]), int(d[1])
a = [int(x) for x in d[2:2 + n]]
p = 2 + n
for _ in range(q):
    l, r = int(d[p]), int(d[p + 1])
    p += 2
    s = 0
    for i in range(l - 1, r):
        s += a[i]
    print(s)
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n, q = int(d[0]), int(d[1])
pre = [0]
for x in d[2:2 + n]:
    pre.append(pre[-1] + int(x))
p = 2 + n
out = []
for _ in range(q):
    l, r = int(d[p]), int(d[p + 1])
    p += 2
    out.append(pre[r - 1] - pre[l - 1])  # drops a_r
print("\n".join(map(str, out)))
'''


def generate(rng, length):
    n = max(1, length // 8)
    q = max(1, length // 16)
    a = [rng.randint(-99, 99) for _ in range(n)]
    qs = []
    for _ in range(q):
        l = rng.randint(1, max(1, n // 8))
        qs.append(f"{l} {rng.randint(max(l, n - n // 8), n)}")
    return f"{n} {q}\n" + " ".join(map(str, a)) + "\n" + "\n".join(qs) + "\n"
