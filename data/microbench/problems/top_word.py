TITLE = "Most frequent word"
STATEMENT = """Given n lowercase words, print the word that occurs most often; among equally
frequent words print the alphabetically smallest.
Input: n on the first line, the n words separated by spaces on the second.
Output: one word.
Limits: 1 <= n <= 2*10^4, words of 1..8 letters."""
EFFICIENT = "O(n) (hash map counts)"
NAIVE_COMPLEXITY = "O(n^2) (list.count per word)"
EXAMPLES = ["4\nb a b a\n", "3\nzed zed abc\n", "1\nq\n"]
REFERENCE = r'''
import sys
from collections import Counter
d = sys.stdin.buffer.read().decode().split()
n = int(d[0])
c = Counter(d[1:1 + n])
best = max(c.values())
print(min(w for w, k in c.items() if k == best))
'''
NAIVE = r'''
import sys
d = sys.stdin.read().split()
n = int(d[0])
w = d[1:1 + n]
best, word = -1, None
for x in w:
    k = w.count(x)
    if k > best or (k == best and x < word):
        best, word = k, x
print(word)
'''
WRONG = r'''
import sys
from collections import Counter
d = sys.stdin.read().split()
n = int(d[0])
print(Counter(d[1:1 + n]).most_common(1)[0][0])  # ties go to the first seen, not the smallest
'''


def generate(rng, length):
    n = max(1, length // 4)
    vocab = ["".join(rng.choice("abcdefgh") for _ in range(rng.randint(1, 5)))
             for _ in range(max(2, n // 3))]
    w = [rng.choice(vocab) for _ in range(n)]
    return f"{n}\n" + " ".join(w) + "\n"
