TITLE = "Longest strictly rising subsequence"
STATEMENT = """Given n integers, print the length of the longest strictly increasing subsequence
(not necessarily contiguous).
Input: n on the first line, the n integers on the second.
Output: one integer.
Limits: 1 <= n <= 2*10^4, 0 <= a_i <= 10^9."""
EFFICIENT = "O(n log n) (patience sorting with binary search)"
NAIVE_COMPLEXITY = "O(n^2)"
EXAMPLES = ["4\n3 3 3 3\n", "6\n1 2 2 3 3 4\n", "1\n9\n"]
REFERENCE = r'''
import sys
from bisect import bisect_left
d = sys.stdin.buffer.read().split()
n = int(d[0])
tails = []
for x in map(int, d[1:1 + n]):
    i = bisect_left(tails, x)
    if i == len(tails):
        tails.append(x)
    else:
        tails[i] = x
print(len(tails))
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
a = [int(x) for x in d[1:1 + n]]
best = [1] * n
for i in range(n):
    ai = a[i]
    b = 1
    for j in range(i):
        if a[j] < ai and best[j] + 1 > b:
            b = best[j] + 1
    best[i] = b
print(max(best))
'''
WRONG = r'''
import sys
from bisect import bisect_right
d = sys.stdin.read().split()
n = int(d[0])
tails = []
for x in map(int, d[1:1 + n]):
    i = bisect_right(tails, x)
    if i == len(tails):
        tails.append(x)
    else:
        tails[i] = x
print(len(tails))
'''


def generate(rng, length):
    n = max(1, length // 4)
    a = [rng.randint(0, 300) for _ in range(n)]
    return f"{n}\n" + " ".join(map(str, a)) + "\n"
