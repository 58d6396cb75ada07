TITLE = "Covered length"
STATEMENT = """Given n closed intervals [l, r] on the number line (l <= r, integers), print the
total length of their union.
Input: n on the first line, then n lines "l r".
Output: one integer.
Limits: 1 <= n <= 10^4, 0 <= l <= r <= 10^9."""
EFFICIENT = "O(n log n) (sort by start, sweep)"
NAIVE_COMPLEXITY = "O(n^2) (merge by repeated passes)"
EXAMPLES = ["3\n5 8\n1 3\n2 6\n", "2\n1 2\n3 4\n", "2\n0 10\n2 3\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
n = int(d[0])
iv = sorted((int(d[1 + 2 * i]), int(d[2 + 2 * i])) for i in range(n))
total = 0
cl, cr = iv[0]
for l, r in iv[1:]:
    if l > cr:
        total += cr - cl
        cl, cr = l, r
    elif r > cr:
        cr = r
print(total + cr - cl)
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
merged = []
for i in range(n):
    l, r = int(d[1 + 2 * i]), int(d[2 + 2 * i])
    keep = []
    for a, b in merged:
        if b < l or a > r:
            keep.append((a, b))
        else:
            l, r = min(l, a), max(r, b)
    keep.append((l, r))
    merged = keep
print(sum(b - a for a, b in merged))
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
iv = [(int(d[1 + 2 * i]), int(d[2 + 2 * i])) for i in range(n)]
total = 0
cl, cr = iv[0]
for l, r in iv[1:]:  # sweeps in input order: forgets to sort
    if l > cr or r < cl:
        total += cr - cl
        cl, cr = l, r
    else:
        cl, cr = min(cl, l), max(cr, r)
print(total + cr - cl)
'''


def generate(rng, length):
    n = max(1, length // 14)
    span = 10 ** 6
    iv = []
    for _ in range(n):
        l = rng.randint(0, span * n)  # sparse: many disjoint pieces for the naive merge
        iv.append((l, l + rng.randint(0, span)))
    return f"{n}\n" + "\n".join(f"{l} {r}" for l, r in iv) + "\n"
