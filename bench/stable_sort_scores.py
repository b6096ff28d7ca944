"""Can the head that moves a stable sort's values score keys by f(w1, p) + g(w2, p)?

docs/long-contexts.md ("A stable sort's blocks") shows that no score f(w1) + g(w2) picks, for the
query at i, the key whose target w1 + w2 is i. This asks a linear program whether scores that also
read the key's position p do, over every input of up to N keys of K values: for each query i,
find f and g with the winner above every other key of every input by 1.

    python bench/stable_sort_scores.py N [K] [I]

prints, for every query, whether such scores exist, then the sparsest (least sum of |f| + |g|)
for the query at I (default 2). Needs numpy and scipy (the interop venv of
scripts/setup-interop.sh has both); N = 6 takes about a minute.
"""
import itertools
import sys

import numpy as np
from scipy.optimize import linprog


def targets(keys):
    """(w1, w2) of every position: keys below, equal keys before."""
    return tuple((sum(k < kq for k in keys), sum(k == kq for k in keys[:q])) for q, kq in enumerate(keys))


def constraints(inputs, n, i):
    """Rows of A x <= -1, x = (f, g) by [w][p]: every other key scores at least 1 below the winner."""
    def column(kind, w, p):
        return (kind * n + w) * n + p
    rows = []
    for t in inputs:
        if i >= len(t):
            continue
        win = next(p for p, (u, v) in enumerate(t) if u + v == i)
        for p, (u, v) in enumerate(t):
            if p == win:
                continue
            row = np.zeros(2 * n * n)
            row[column(0, t[win][0], win)] -= 1
            row[column(1, t[win][1], win)] -= 1
            row[column(0, u, p)] += 1
            row[column(1, v, p)] += 1
            rows.append(row)
    return np.array(rows)


def main():
    n = int(sys.argv[1])
    k = int(sys.argv[2]) if len(sys.argv) > 2 else n
    shown = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    inputs = {targets(keys) for length in range(1, n + 1) for keys in itertools.product(range(k), repeat=length)}
    print(f"{len(inputs)} distinct patterns of (w1, w2) over inputs of up to {n} keys of {k} values")
    for i in range(n):
        a = constraints(inputs, n, i)
        # The sparsest scores: x = plus - minus, both >= 0, least sum.
        res = linprog(np.ones(4 * n * n), A_ub=np.hstack([a, -a]), b_ub=-np.ones(len(a)),
                      bounds=[(0, None)] * (4 * n * n), method="highs")
        print(f"query {i}: {'scores exist' if res.status == 0 else 'no such scores'} ({len(a)} constraints)")
        if i == shown and res.status == 0:
            x = res.x[:2 * n * n] - res.x[2 * n * n:]
            np.set_printoptions(precision=2, suppress=True, linewidth=150)
            print("f[w1][p]\n", x[:n * n].reshape(n, n), "\ng[w2][p]\n", x[n * n:].reshape(n, n))


if __name__ == "__main__":
    main()
