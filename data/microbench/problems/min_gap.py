TITLE = "Closest pair of values"
STATEMENT = """Given n >= 2 integers, print the smallest |a_i - a_j| over pairs i != j.
Input: n on the first line, the n integers on the second.
Output: one integer.
Limits: 2 <= n <= 2*10^4, |a_i| <= 10^9."""
EFFICIENT = "O(n log n) (sort, compare neighbours)"
NAIVE_COMPLEXITY = "O(n^2)"
EXAMPLES = ["3\n10 1 9\n", "4\n5 100 7 5\n", "2\n-3 3\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
n = int(d[0])
a = sorted(map(int, d[1:1 + n]))
print(min(a[i + 1] - a[i] for i in range(n - 1)))
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
a = [int(x) for x in d[1:1 + n]]
best = abs(a[0] - a[1])
for i in range(n):
    ai = a[i]
    for j in range(i + 1, n):
        g = ai - a[j]
        if g < 0:
            g = -g
        if g < best:
            best = g
print(best)
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
a = [int(x) for x in d[1:1 + n]]
print(min(abs(a[i + 1] - a[i]) for i in range(n - 1)))  # neighbours in input order only
'''


def generate(rng, length):
    n = max(2, length // 11)
    a = [rng.randint(-10**9, 10**9) for _ in range(n)]
    return f"{n}\n" + " ".join(map(str, a)) + "\n"
