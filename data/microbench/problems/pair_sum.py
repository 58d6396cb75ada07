TITLE = "Pairs with a given sum"
STATEMENT = """Given n integers a_1..a_n and a target K, count the pairs (i, j) with i < j and
a_i + a_j = K.
Input: the first line holds n and K; the second line holds the n integers.
Output: one integer, the number of pairs.
Limits: 1 <= n <= 2*10^4, |a_i|, |K| <= 10^6."""
EFFICIENT = "O(n) with a hash map"
NAIVE_COMPLEXITY = "O(n^2)"
EXAMPLES = ["4 4\n2 2 2 1\n", "3 0\n0 0 5\n", "1 2\n1\n"]
REFERENCE = r'''
import sys
from collections import Counter
d = sys.stdin.buffer.read().split()
n, k = int(d[0]), int(d[1])
seen = Counter()
total = 0
for x in map(int, d[2:2 + n]):
    total += seen[k - x]
    seen[x] += 1
print(total)
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n, k = int(d[0]), int(d[1])
a = [int(x) for x in d[2:2 + n]]
total = 0
for i in range(n):
    for j in range(i + 1, n):
        if a[i] + a[j] == k:
            total += 1
print(total)
'''
WRONG = r'''
import sys
from collections import Counter
d = sys.stdin.read().split()
n, k = int(d[0]), int(d[1])
c = Counter(int(x) for x in d[2:2 + n])
# counts each unordered pair once but forgets that x + x = k needs two copies
total = sum(c[x] * c[k - x] for x in c if x < k - x)
total += sum(c[x] * (c[x] - 1) // 2 for x in c if 2 * x == k)
total += sum(1 for x in c if 2 * x == k)
print(total)
'''


def generate(rng, length):
    n = max(1, length // 4)
    a = [rng.randint(-50, 50) for _ in range(n)]
    k = rng.randint(-20, 20) * 2
    return f"{n} {k}\n" + " ".join(map(str, a)) + "\n"
