TITLE = "Cheapest k items"
STATEMENT = """Given n item prices and k (1 <= k <= n), print the total price of the k cheapest
items.
Input: n and k on the first line, the n prices on the second.
Output: one integer.
Limits: 1 <= k <= n <= 2*10^4, 1 <= p_i <= 10^9."""
EFFICIENT = "O(n log n) (sort, or a heap)"
NAIVE_COMPLEXITY = "O(n k) (remove the minimum k times)"
EXAMPLES = ["4 2\n5 1 4 1\n", "3 3\n2 2 2\n", "1 1\n7\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
n, k = int(d[0]), int(d[1])
print(sum(sorted(map(int, d[2:2 + n]))[:k]))
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n, k = int(d[0]), int(d[1])
p = [int(x) for x in d[2:2 + n]]
total = 0
for _ in range(k):
    m = 0
    for i in range(1, len(p)):
        if p[i] < p[m]:
            m = i
    total += p.pop(m)
print(total)
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n, k = int(d[0]), int(d[1])
p = sorted(set(int(x) for x in d[2:2 + n]))  # drops duplicate prices
print(sum(p[:k]))
'''


def generate(rng, length):
    n = max(1, length // 7)
    k = max(1, n // 2)
    p = [rng.randint(1, 10**5) for _ in range(n)]
    return f"{n} {k}\n" + " ".join(map(str, p)) + "\n"
