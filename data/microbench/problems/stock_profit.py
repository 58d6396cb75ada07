TITLE = "One trade"
STATEMENT = """Prices p_1..p_n are given day by day. Buy on some day i and sell on a day j >= i;
print the largest profit p_j - p_i (0 if no trade gains).
Input: n on the first line, the n prices on the second.
Output: one integer.
Limits: 1 <= n <= 2*10^4, 1 <= p_i <= 10^9."""
EFFICIENT = "O(n) (running minimum)"
NAIVE_COMPLEXITY = "O(n^2)"
EXAMPLES = ["5\n9 1 5 3 6\n", "3\n9 5 1\n", "4\n5 9 1 2\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
n = int(d[0])
lo = None
best = 0
for x in map(int, d[1:1 + n]):
    lo = x if lo is None or x < lo else lo
    best = max(best, x - lo)
print(best)
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
p = [int(x) for x in d[1:1 + n]]
best = 0
for i in range(n):
    pi = p[i]
    for j in range(i, n):
        if p[j] - pi > best:
            best = p[j] - pi
print(best)
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
p = [int(x) for x in d[1:1 + n]]
print(max(p) - min(p))  # ignores that the sale must come after the purchase
'''


def generate(rng, length):
    n = max(1, length // 7)
    if rng.random() < 0.5:  # falling prices: the trade order matters
        p = sorted((rng.randint(1, 10**6) for _ in range(n)), reverse=True)
        for _ in range(max(1, n // 100)):
            i = rng.randrange(n)
            p[i] = max(1, p[i] - rng.randint(0, 1000))
    else:
        p = [rng.randint(1, 10**6) for _ in range(n)]
    return f"{n}\n" + " ".join(map(str, p)) + "\n"
