"""The programs that Tracr's tracr.compiler.lib builds, with the vocabularies of Tracr's own
test cases (tracr/compiler/test_cases.py); shared by the interop tests and bench/tracr_compare.py."""

from tracr.compiler import lib
from tracr.rasp import rasp

# name -> (build(max_seq_len) -> SOp, vocab). Programs that take max_seq_len (the sorts) get the
# one they are compiled for, as Tracr's docs say they must.
CASES = {
    "make_length": (lambda n: lib.make_length(), {"a", "b", "c", "d"}),
    "make_reverse": (lambda n: lib.make_reverse(rasp.tokens), {"a", "b", "c", "d"}),
    "make_hist": (lambda n: lib.make_hist(), {"a", "b", "c", "d"}),
    "make_sort_unique": (lambda n: lib.make_sort_unique(rasp.tokens, rasp.tokens), {1, 2, 3, 4}),
    "make_sort": (lambda n: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=n, min_key=1), {1, 2, 3, 4}),
    "make_sort_freq": (lambda n: lib.make_sort_freq(max_seq_len=n), {1, 2, 3, 4}),
    "make_frac_prevs": (lambda n: lib.make_frac_prevs(rasp.tokens == "l"), {"h", "e", "l", "o"}),
    "make_pair_balance": (lambda n: lib.make_pair_balance(rasp.tokens, "(", ")"), {"a", "b", "c", "(", ")"}),
    "make_shuffle_dyck_2": (lambda n: lib.make_shuffle_dyck(pairs=["()", "{}"]), {"(", ")", "{", "}"}),
    "make_shuffle_dyck_3": (lambda n: lib.make_shuffle_dyck(pairs=["()", "{}", "[]"]),
                            {"(", ")", "{", "}", "[", "]"}),
    "detect_pattern": (lambda n: lib.detect_pattern(rasp.tokens, "abc"), {"a", "b", "c"}),
    "make_count_less_freq": (lambda n: lib.make_count_less_freq(n=2), {"a", "b", "c", "d"}),
    "make_count": (lambda n: lib.make_count(rasp.tokens, "a"), {"a", "b", "c"}),
    "shift_by_1": (lambda n: lib.shift_by(1, rasp.tokens), {"a", "b", "c", "d"}),
    "shift_by_2": (lambda n: lib.shift_by(2, rasp.tokens), {"a", "b", "c", "d"}),
    "make_nary_sequencemap": (lambda n: lib.make_nary_sequencemap(lambda x, y, z: x + y - z, rasp.tokens,
                                                                  rasp.tokens, rasp.indices), {1, 2, 3}),
}

MAX_SEQ_LENS = (5, 10, 16)
EXHAUSTIVE_LEN = 5      # every input up to this length
RANDOM_PER_LENGTH = 1000  # then this many random inputs of each longer length


def inputs(vocab, max_seq_len, seed=0):
    """Every input up to EXHAUSTIVE_LEN, then RANDOM_PER_LENGTH random ones of each longer length."""
    import itertools
    import random
    symbols = sorted(vocab, key=repr)
    for n in range(1, min(EXHAUSTIVE_LEN, max_seq_len) + 1):
        yield from (list(t) for t in itertools.product(symbols, repeat=n))
    rng = random.Random(seed)
    for n in range(EXHAUSTIVE_LEN + 1, max_seq_len + 1):
        for _ in range(RANDOM_PER_LENGTH):
            yield [rng.choice(symbols) for _ in range(n)]


def same(got, expected):
    """Tracr's evaluator computes means in floats, raspc exactly: numbers agree within raspc's
    numerical output tolerance (1e-3, relative above 1); everything else exactly."""
    if got is None or expected is None:
        return got is expected
    numeric = (int, float)
    if isinstance(got, numeric) and isinstance(expected, numeric) and not isinstance(expected, str):
        return abs(float(got) - float(expected)) <= 1e-3 * max(1.0, abs(float(expected)))
    return got == expected
