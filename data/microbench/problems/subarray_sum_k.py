TITLE = "Blocks with a given sum"
STATEMENT = """Given n integers and K, count the non-empty contiguous blocks whose sum is K.
Input: n and K on the first line, the n integers on the second.
Output: one integer.
Limits: 1 <= n <= 2*10^4, |a_i| <= 100, |K| <= 10^6."""
EFFICIENT = "O(n) (prefix sums in a hash map)"
NAIVE_COMPLEXITY = "O(n^2)"
EXAMPLES = ["3 3\n1 2 3\n", "3 0\n0 0 0\n", "2 5\n2 2\n"]
REFERENCE = r'''
import sys
from collections import defaultdict
d = sys.stdin.buffer.read().split()
n, k = int(d[0]), int(d[1])
seen = defaultdict(int)
seen[0] = 1
s = total = 0
for x in map(int, d[2:2 + n]):
    s += x
    total += seen[s - k]
    seen[s] += 1
print(total)
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n, k = int(d[0]), int(d[1])
a = [int(x) for x in d[2:2 + n]]
total = 0
for i in range(n):
    s = 0
    for j in range(i, n):
        s += a[j]
        if s == k:
            total += 1
print(total)
'''
WRONG = r'''
import sys
from collections import defaultdict
d = sys.stdin.read().split()
n, k = int(d[0]), int(d[1])
seen = defaultdict(int)  # forgets the empty prefix: blocks starting at 1 are missed
s = total = 0
for x in map(int, d[2:2 + n]):
    s += x
    total += seen[s - k]
    seen[s] += 1
print(total)
'''


def generate(rng, length):
    n = max(1, length // 3)
    a = [rng.randint(-3, 3) for _ in range(n)]
    k = rng.randint(-4, 4)
    return f"{n} {k}\n" + " ".join(map(str, a)) + "\n"
