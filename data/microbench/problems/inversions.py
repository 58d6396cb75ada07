TITLE = "Out-of-order pairs"
STATEMENT = """Given n integers, count the pairs (i, j) with i < j and a_i > a_j.
Input: n on the first line, the n integers on the second.
Output: one integer.
Limits: 1 <= n <= 2*10^4, 0 <= a_i <= 10^9."""
EFFICIENT = "O(n log n) (merge sort or Fenwick tree)"
NAIVE_COMPLEXITY = "O(n^2)"
EXAMPLES = ["4\n2 2 1 1\n", "3\n1 2 3\n", "5\n5 4 3 2 1\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
n = int(d[0])
a = list(map(int, d[1:1 + n]))
rank = {v: i + 1 for i, v in enumerate(sorted(set(a)))}
tree = [0] * (len(rank) + 1)
inv = 0
for seen, x in enumerate(a):
    r = rank[x]
    i, le = r, 0
    while i > 0:
        le += tree[i]
        i -= i & -i
    inv += seen - le
    i = r
    while i < len(tree):
        tree[i] += 1
        i += i & -i
print(inv)
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
a = [int(x) for x in d[1:1 + n]]
inv = 0
for i in range(n):
    ai = a[i]
    for j in range(i + 1, n):
        if ai > a[j]:
            inv += 1
print(inv)
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
a = list(map(int, d[1:1 + n]))
# counts a_i >= a_j: ties are wrongly counted
import bisect
seen, inv = [], 0
for x in a:
    inv += len(seen) - bisect.bisect_left(seen, x)
    bisect.insort(seen, x)
print(inv)
'''


def generate(rng, length):
    n = max(1, length // 4)
    a = [rng.randint(0, 200) for _ in range(n)]
    return f"{n}\n" + " ".join(map(str, a)) + "\n"
