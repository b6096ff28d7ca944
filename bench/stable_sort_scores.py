"""Can the head that moves a stable sort's values score keys by f(w1, p) + g(w2, p)?

docs/long-contexts.md ("A stable sort's blocks") shows that no score f(w1) + g(w2) picks, for the
query at i, the key whose target w1 + w2 is i. This asks a linear program whether scores that also
read the key's position p do, over every input of up to N keys of K values: for each query i,
find f and g with the winner above every other key of every input by 1.

    python bench/stable_sort_scores.py N [K] [I] [--linear | --constant]

prints, for every query, whether such scores exist and the smallest largest |coefficient| they
can have (against the margin of 1), then the sparsest (least sum of |coefficient|) for the query at
I (default 2). With --linear the scores are linear in the position,
f(w1, p) = a(w1) + b(w1) p and g likewise (4N numbers, where the general form has 2N^2); with
--constant they ignore it (the form the docs rule out). Needs numpy and scipy (the interop venv
of scripts/setup-interop.sh has both); N = 6 takes about a minute, N = 7 with K = 4 a few.
"""
import itertools
import sys

import numpy as np
from scipy.optimize import linprog


def targets(keys):
    """(w1, w2) of every position: keys below, equal keys before."""
    return tuple((sum(k < kq for k in keys), sum(k == kq for k in keys[:q])) for q, kq in enumerate(keys))


def features(p, n, form):
    """What a width's coefficients multiply at position p: one per position, (1, p), or (1)."""
    if form == "general":
        return np.eye(n)[p]
    return np.array([1.0, p]) if form == "linear" else np.array([1.0])


def constraints(inputs, n, i, form):
    """Rows of A x <= -1, x = (f, g) by [w][feature]: every other key scores at least 1 below the winner."""
    m = len(features(0, n, form))
    rows = []
    for t in inputs:
        if i >= len(t):
            continue
        win = next(p for p, (u, v) in enumerate(t) if u + v == i)
        for p, (u, v) in enumerate(t):
            if p == win:
                continue
            row = np.zeros(2 * n * m)
            for (w1, w2), at, sign in (((t[win][0], t[win][1]), win, -1), ((u, v), p, 1)):
                row[w1 * m:(w1 + 1) * m] += sign * features(at, n, form)
                row[(n + w2) * m:(n + w2 + 1) * m] += sign * features(at, n, form)
            rows.append(row)
    return np.array(rows), m


def smallest_largest(a):
    """The least t for which some x with |x| <= t meets A x <= -1."""
    nv = a.shape[1]
    box = np.vstack([np.hstack([np.eye(nv), -np.ones((nv, 1))]), np.hstack([-np.eye(nv), -np.ones((nv, 1))])])
    cost = np.zeros(nv + 1)
    cost[-1] = 1
    res = linprog(cost, A_ub=np.vstack([np.hstack([a, np.zeros((len(a), 1))]), box]),
                  b_ub=np.concatenate([-np.ones(len(a)), np.zeros(2 * nv)]),
                  bounds=[(None, None)] * nv + [(0, None)], method="highs")
    return res.x[-1]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    form = "linear" if "--linear" in sys.argv else "constant" if "--constant" in sys.argv else "general"
    n = int(args[0])
    k = int(args[1]) if len(args) > 1 else n
    shown = int(args[2]) if len(args) > 2 else 2
    inputs = {targets(keys) for length in range(1, n + 1) for keys in itertools.product(range(k), repeat=length)}
    print(f"{len(inputs)} distinct patterns of (w1, w2) over inputs of up to {n} keys of {k} values; {form} scores")
    for i in range(n):
        a, m = constraints(inputs, n, i, form)
        # The sparsest scores: x = plus - minus, both >= 0, least sum.
        res = linprog(np.ones(2 * a.shape[1]), A_ub=np.hstack([a, -a]), b_ub=-np.ones(len(a)),
                      bounds=[(0, None)] * (2 * a.shape[1]), method="highs")
        if res.status != 0:
            print(f"query {i}: no such scores ({len(a)} constraints)", flush=True)
            continue
        print(f"query {i}: scores exist, the largest |coefficient| at least {smallest_largest(a):.3g} "
              f"({len(a)} constraints)", flush=True)
        if i == shown:
            x = res.x[:a.shape[1]] - res.x[a.shape[1]:]
            np.set_printoptions(precision=2, suppress=True, linewidth=150)
            print("f by w1 (rows), feature (columns)\n", x[:n * m].reshape(n, m),
                  "\ng by w2 (rows), feature (columns)\n", x[n * m:].reshape(n, m))


if __name__ == "__main__":
    main()
