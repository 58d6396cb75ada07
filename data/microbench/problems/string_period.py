TITLE = "Shortest period"
STATEMENT = """A period of a string s is a p >= 1 with s[i] = s[i + p] for every valid i (p = |s| is
always one). Print the smallest period of s.
Input: one line with s (lowercase letters).
Output: one integer.
Limits: 1 <= |s| <= 2*10^5."""
EFFICIENT = "O(n) (prefix function: n - pi[n-1])"
NAIVE_COMPLEXITY = "O(n^2) (try every p)"
EXAMPLES = ["abaab\n", "abab\n", "abcab\n", "aaaa\n", "z\n"]
REFERENCE = r'''
import sys
s = sys.stdin.buffer.read().decode().strip()
n = len(s)
pi = [0] * n
for i in range(1, n):
    k = pi[i - 1]
    while k and s[i] != s[k]:
        k = pi[k - 1]
    if s[i] == s[k]:
        k += 1
    pi[i] = k
print(n - pi[-1])
'''
NAIVE = r'''
import sys
s = sys.stdin.read().strip()
n = len(s)
for p in range(1, n + 1):
    ok = True
    for i in range(n - p):
        if s[i] != s[i + p]:
            ok = False
            break
    if ok:
        print(p)
        break
'''
WRONG = r'''
import sys
s = sys.stdin.read().strip()
n = len(s)
for p in range(1, n + 1):  # only periods that divide the length
    if n % p == 0 and s[:p] * (n // p) == s:
        print(p)
        break
'''


def generate(rng, length):
    n = max(1, length - 1)
    base = "".join(rng.choice("ab") for _ in range(rng.randint(1, 3)))
    s = (base * (n // len(base) + 2))[:n - 1]
    # a late mismatch makes every short candidate period fail near the end
    return s + ("c" if rng.random() < 0.7 else s[-len(base)] if s else "a") + "\n"
