TITLE = "Prime or not"
STATEMENT = """Given q integers, print for each "yes" if it is prime and "no" otherwise.
Input: q on the first line, the q integers on the second.
Output: q lines.
Limits: 1 <= q <= 2*10^4, 1 <= x <= 2*10^4."""
EFFICIENT = "O(V log log V + q) (sieve)"
NAIVE_COMPLEXITY = "O(q * x) (trial division by every smaller number)"
EXAMPLES = ["4\n1 2 9 97\n", "2\n1 1\n"]
REFERENCE = r'''
import sys
d = sys.stdin.buffer.read().split()
q = int(d[0])
xs = list(map(int, d[1:1 + q]))
m = max(xs) + 1
sieve = bytearray([1]) * m
sieve[0] = 0
if m > 1:
    sieve[1] = 0
i = 2
while i * i < m:
    if sieve[i]:
        sieve[i * i::i] = bytearray(len(range(i * i, m, i)))
    i += 1
print("\n".join("yes" if sieve[x] else "no" for x in xs))
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
q = int(d[0])
out = []
for x in map(int, d[1:1 + q]):
    ok = x >= 2
    for k in range(2, x):
        if x % k == 0:
            ok = False
            break
    out.append("yes" if ok else "no")
print("\n".join(out))
'''
WRONG = r'''
import sys
d = sys.stdin.read().split()
q = int(d[0])
out = []
for x in map(int, d[1:1 + q]):
    ok = True  # 1 is not prime
    k = 2
    while k * k <= x:
        if x % k == 0:
            ok = False
            break
        k += 1
    out.append("yes" if ok else "no")
print("\n".join(out))
'''


_PRIMES = [p for p in range(15000, 20000) if all(p % k for k in range(2, int(p ** .5) + 1))]


def generate(rng, length):
    q = max(1, length // 7)
    xs = []
    for _ in range(q):
        r = rng.random()
        xs.append(rng.choice(_PRIMES) if r < 0.5 else 1 if r < 0.55 else rng.randint(1, 20000))
    return f"{q}\n" + " ".join(map(str, xs)) + "\n"
