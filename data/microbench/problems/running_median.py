TITLE = "Running median"
STATEMENT = """Numbers arrive one by one. After each arrival print the median of the numbers so
far; for an even count print the smaller of the two middle values.
Input: n on the first line, the n integers on the second.
Output: n lines.
Limits: 1 <= n <= 2*10^4, |a_i| <= 10^9."""
EFFICIENT = "O(n log n) (two heaps)"
NAIVE_COMPLEXITY = "O(n^2 log n) (sort every prefix)"
EXAMPLES = ["4\n5 1 3 2\n", "2\n1 2\n", "1\n-3\n"]
REFERENCE = r'''
import sys
import heapq
d = sys.stdin.buffer.read().split()
n = int(d[0])
low, high = [], []  # max-heap (negated) of the lower half, min-heap of the upper half
out = []
for x in map(int, d[1:1 + n]):
    if not low or x <= -low[0]:
        heapq.heappush(low, -x)
    else:
        heapq.heappush(high, x)
    if len(low) > len(high) + 1:
        heapq.heappush(high, -heapq.heappop(low))
    elif len(high) > len(low):
        heapq.heappush(low, -heapq.heappop(high))
    out.append(-low[0])
print("\n".join(map(str, out)))
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
seen = []
out = []
for x in d[1:1 + n]:
    seen.append(int(x))
    s = sorted(seen)
    out.append(s[(len(s) - 1) // 2])
print("\n".join(map(str, out)))
'''
WRONG = r'''
import sys
import heapq
d = sys.stdin.read().split()
n = int(d[0])
low, high = [], []
out = []
for x in map(int, d[1:1 + n]):
    if not low or x <= -low[0]:
        heapq.heappush(low, -x)
    else:
        heapq.heappush(high, x)
    if len(low) > len(high) + 1:
        heapq.heappush(high, -heapq.heappop(low))
    elif len(high) > len(low):
        heapq.heappush(low, -heapq.heappop(high))
    out.append(high[0] if len(low) == len(high) else -low[0])  # upper middle on even counts
print("\n".join(map(str, out)))
'''


def generate(rng, length):
    n = max(1, length // 8)
    a = [rng.randint(-10**6, 10**6) for _ in range(n)]
    return f"{n}\n" + " ".join(map(str, a)) + "\n"
