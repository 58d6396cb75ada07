TITLE = "First occurrences"
STATEMENT = """Given n integers, print the distinct values in the order of their first
occurrence, space-separated.
Input: n on the first line, the n integers on the second.
Output: one line.
Limits: 1 <= n <= 2*10^4, |a_i| <= 10^9."""
EFFICIENT = "O(n) (hash set)"
NAIVE_COMPLEXITY = "O(n * distinct) (a scan of the values seen so far)"
EXAMPLES = ["5\n3 1 3 2 1\n", "1\n-4\n", "3\n7 7 7\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
n = int(d[0])
seen = set()
out = []
for x in d[1:1 + n]:
    v = int(x)
    if v not in seen:
        seen.add(v)
        out.append(v)
print(" ".join(map(str, out)))
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
out = []
for x in d[1:1 + n]:
    v = int(x)
    new = True
    for y in out:
        if y == v:
            new = False
            break
    if new:
        out.append(v)
print(" ".join(map(str, out)))
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
print(" ".join(map(str, sorted(set(int(x) for x in d[1:1 + n])))))  # sorted, not first-seen
'''


def generate(rng, length):
    n = max(1, length // 7)
    a = [rng.randint(-10**5, 10**5) for _ in range(n)]
    return f"{n}\n" + " ".join(map(str, a)) + "\n"
