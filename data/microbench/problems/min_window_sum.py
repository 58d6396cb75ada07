TITLE = "Shortest block reaching a sum"
STATEMENT = """Given n positive integers and S, print the length of the shortest contiguous block
whose sum is at least S, or 0 if no block reaches S.
Input: n and S on the first line, the n integers on the second.
Output: one integer.
Limits: 1 <= n <= 2*10^4, 1 <= a_i <= 10^4, 1 <= S <= 10^9."""
EFFICIENT = "O(n) (two pointers)"
NAIVE_COMPLEXITY = "O(n^2)"
EXAMPLES = ["6 7\n2 3 1 2 4 3\n", "3 100\n1 2 3\n", "3 3\n1 1 1\n", "1 1\n1\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
n, S = int(d[0]), int(d[1])
a = list(map(int, d[2:2 + n]))
best = n + 1
s = lo = 0
for hi, x in enumerate(a):
    s += x
    while s >= S:
        best = min(best, hi - lo + 1)
        s -= a[lo]
        lo += 1
print(best if best <= n else 0)
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n, S = int(d[0]), int(d[1])
a = [int(x) for x in d[2:2 + n]]
best = 0
for i in range(n):
    s = 0
    for j in range(i, n):
        s += a[j]
        if s >= S:
            if best == 0 or j - i + 1 < best:
                best = j - i + 1
            break
print(best)
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n, S = int(d[0]), int(d[1])
a = list(map(int, d[2:2 + n]))
best = n + 1
s = lo = 0
for hi, x in enumerate(a):
    s += x
    if s >= S:  # shrinks once instead of while the sum still reaches S
        best = min(best, hi - lo + 1)
        s -= a[lo]
        lo += 1
print(best if best <= n else 0)
'''


def generate(rng, length):
    n = max(1, length // 4)
    a = [rng.randint(1, 99) for _ in range(n)]
    S = max(1, sum(a) // 3)  # the shortest block spans about n/3 values: long naive scans
    if rng.random() < 0.5:
        a[rng.randrange(n)] = min(9999, S // 2 + 1)  # a spike: the window must shrink a lot
    return f"{n} {S}\n" + " ".join(map(str, a)) + "\n"
