TITLE = "Distinct values per window"
STATEMENT = """Given n integers and a window size k (1 <= k <= n), print the number of distinct
values in every window a_i..a_{i+k-1}, for i = 1..n-k+1, space-separated.
Input: n and k on the first line, the n integers on the second.
Output: one line with n-k+1 values.
Limits: 1 <= k <= n <= 2*10^4, |a_i| <= 10^9."""
EFFICIENT = "O(n) (sliding counts)"
NAIVE_COMPLEXITY = "O(n k) (a set per window)"
EXAMPLES = ["5 3\n1 2 1 3 3\n", "3 3\n4 4 4\n", "2 1\n1 2\n"]
REFERENCE = r'''
import sys
from collections import defaultdict
d = sys.stdin.buffer.read().split()
n, k = int(d[0]), int(d[1])
a = d[2:2 + n]
cnt = defaultdict(int)
distinct = 0
out = []
for i, x in enumerate(a):
    cnt[x] += 1
    if cnt[x] == 1:
        distinct += 1
    if i >= k:
        y = a[i - k]
        cnt[y] -= 1
        if cnt[y] == 0:
            distinct -= 1
    if i >= k - 1:
        out.append(distinct)
print(" ".join(map(str, out)))
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n, k = int(d[0]), int(d[1])
a = [int(x) for x in d[2:2 + n]]
out = []
for i in range(n - k + 1):
    seen = []
    for x in a[i:i + k]:
        if x not in seen:
            seen.append(x)
    out.append(len(seen))
print(" ".join(map(str, out)))
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n, k = int(d[0]), int(d[1])
a = d[2:2 + n]
out = [len(set(a[i:i + k])) for i in range(n - k)]  # misses the last window
print(" ".join(map(str, out)))
'''


def generate(rng, length):
    n = max(1, length // 4)
    k = max(1, n // 3)
    a = [rng.randint(0, 500) for _ in range(n)]
    return f"{n} {k}\n" + " ".join(map(str, a)) + "\n"
