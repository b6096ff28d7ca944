"""A corpus of Tracr programs, written in Tracr's own API the way Tracr-based benchmarks
(InterpBench / TracrBench) write them, for issue 32's acceptance test
(test_tracr_corpus.py) and bench/tracr_corpus.py.

Every function of the installed tracr.compiler.lib (and its module-level `length`) is used at
least once (LIB_ENTRIES name them in lib_functions; the test checks them against the module), and
the rest are our own: maps with float arithmetic, float tie-break keys (x + i * 0.00001,
x + i * 1e-14), numerical Aggregates, SelectorWidth over SelectorAnd / SelectorOr / SelectorNot,
programs that reuse subexpressions, that call one builder twice, that are built twice
(consecutive entries with the same builder), that use rasp.tokens, rasp.indices, rasp.length and
lib's module-level `length` after a reset, programs in the style of InterpBench's cases (tokens
0..10, floats, words, lengths up to 9), and values of every Python type those use (strings that
look like numbers, whole floats, tuples, None, numpy numbers).

Programs are built the way those benchmarks build them: all in one Python process, with
`rasp.RASPExpr._ids = itertools.count(1)` before each build (build_fresh). Ids are drawn
lazily (the first time an expression's unique_id is read), so rasp.tokens, rasp.indices and
lib.length keep the ids they drew in whichever program read them first, and later programs
draw the same ids again: a converter that keys expressions by unique_id confuses them. That is
also why the order of ENTRIES matters and is part of the test.

Each entry is defined by Tracr's evaluator (rasp.evaluate) on most inputs: where it raises (an
average of strings, a Comparison on None) the input has no answer and is not counted.
"""

import itertools
import math
import random
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
from tracr.compiler import lib
from tracr.rasp import rasp


@dataclass(frozen=True)
class Entry:
    name: str                      # unique, usable as a file name
    build: Callable[[], "rasp.SOp"]  # called right after the _ids reset
    vocab: frozenset
    max_seq_len: int
    category: str
    causal: bool = False
    # Why raspc is expected to refuse this program; None: it must compile. Every refusal that is
    # not expected fails the test (the aim is none).
    expected_refusal: Optional[str] = None
    lib_functions: tuple = field(default=())  # the tracr.compiler.lib functions it calls


def reset_ids():
    """What the benchmarks do before building each program."""
    rasp.RASPExpr._ids = itertools.count(1)


def build_fresh(entry):
    reset_ids()
    return entry.build()


# --- inputs ------------------------------------------------------------------------------------

CHECKED_INPUTS = 500    # defined inputs checked per program (every input where there are fewer)
MAX_CANDIDATES = 4000   # inputs tried at most to find them
EXHAUSTIVE_PREFIX = 250  # lengths short enough that all their inputs fit in this many come first


def candidate_inputs(entry):
    """Inputs for `entry`, in the order they are tried: every input of the shortest lengths (as
    long as they number at most EXHAUSTIVE_PREFIX together), then distinct random inputs drawn
    round-robin over the longer lengths (the longest included), seeded by the entry's name. All
    inputs when there are at most 1.5 * CHECKED_INPUTS."""
    symbols = sorted(entry.vocab, key=repr)
    n, v = entry.max_seq_len, len(symbols)
    total = sum(v ** k for k in range(1, n + 1))
    exhaustive = n if total <= 1.5 * CHECKED_INPUTS else 0
    if not exhaustive:
        count = 0
        while exhaustive < n and count + v ** (exhaustive + 1) <= EXHAUSTIVE_PREFIX:
            exhaustive += 1
            count += v ** exhaustive
    for k in range(1, exhaustive + 1):
        for t in itertools.product(symbols, repeat=k):
            yield list(t)
    longer = list(range(exhaustive + 1, n + 1))
    if not longer:
        return
    rng = random.Random(f"tracr corpus: {entry.name}")
    seen = set()
    available = {k: v ** k for k in longer}
    while longer:
        for k in list(longer):
            if available[k] == 0:
                longer.remove(k)
                continue
            while True:
                t = tuple(rng.choice(symbols) for _ in range(k))
                if t not in seen:
                    break
            seen.add(t)
            available[k] -= 1
            yield list(t)


def same(got, expected):
    """Tracr's evaluator computes in floats, raspc exactly: numbers agree within 1e-3 (relative
    above 1), as tracr_cases.same and raspc's numerical output tolerance; None only with None;
    everything else exactly."""
    if got is None or expected is None:
        return got is expected
    numeric = (int, float)
    if isinstance(got, numeric) and isinstance(expected, numeric):
        return abs(float(got) - float(expected)) <= 1e-3 * max(1.0, abs(float(expected)))
    return got == expected


def tracr_evaluate(program, tokens):
    """rasp.evaluate, or None where Tracr's evaluator raises (the program is undefined there)."""
    try:
        return list(rasp.evaluate(program, tokens))
    except Exception:  # ValueError (mean of strings, Comparison on None), ZeroDivisionError, ...
        return None


def checked_inputs(entry, program):
    """(inputs with Tracr's answers, candidates tried): up to CHECKED_INPUTS inputs where
    rasp.evaluate is defined, from at most MAX_CANDIDATES candidates."""
    pairs, tried = [], 0
    for tokens in candidate_inputs(entry):
        if len(pairs) >= CHECKED_INPUTS or tried >= MAX_CANDIDATES:
            break
        tried += 1
        expected = tracr_evaluate(program, tokens)
        if expected is not None:
            pairs.append((tokens, expected))
    return pairs, tried


# --- helpers, as a researcher writes them on top of lib ----------------------------------------

def select_all():
    return rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)


def with_tiebreak(keys, eps=0.00001):
    """Unique sort keys: x + i * eps (the benchmarks' way of breaking ties)."""
    return rasp.SequenceMap(lambda x, i: x + i * eps, keys, rasp.indices).named("tiebreak_keys")


def sort_by(vals, keys, eps=0.00001):
    return lib.make_sort_unique(vals, with_tiebreak(keys, eps)).named("sorted")


def at_position(sop, position):
    """sop's value at `position` (an s-op of positions), broadcast to every position."""
    return rasp.Aggregate(rasp.Select(rasp.indices, position, rasp.Comparison.EQ), sop).named("at_position")


def numeric(sop):
    """A categorical number s-op as a numerical one (Tracr's numerical Aggregates need it)."""
    return rasp.numerical(rasp.Map(lambda x: x, sop)).named("numeric")


def mean_over(selector, values, default=0):
    return rasp.numerical(rasp.Aggregate(selector, values, default=default)).named("mean")


def make_palindrome_check(sop):
    """True where the sequence equals its reverse (the program of issue 32's SIGSEGV)."""
    return rasp.SequenceMap(lambda x, y: x == y, sop, lib.make_reverse(sop)).named("palindrome")


def make_is_palindrome(sop):
    same_char = make_palindrome_check(sop)
    ones = rasp.numerical(rasp.Map(lambda b: 1 if b else 0, same_char)).named("ones")
    agreement = mean_over(select_all(), ones)
    return rasp.Map(lambda m: m == 1, agreement).named("is_palindrome")


def make_occurrences_before(sop):
    earlier_same = rasp.SelectorAnd(rasp.Select(sop, sop, rasp.Comparison.EQ),
                                    rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT))
    return rasp.SelectorWidth(earlier_same).named("occurrences_before")


def make_swap(first=0, second=1):
    def partner(i):
        return second if i == first else first if i == second else i
    source = rasp.Map(partner, rasp.indices).named("partner")
    return rasp.Aggregate(rasp.Select(rasp.indices, source, rasp.Comparison.EQ), rasp.tokens).named("swap")


def make_alternation_check(sop):
    prev = lib.shift_by(1, sop)
    nxt = lib.shift_by(-1, sop)
    differs_prev = rasp.SequenceMap(lambda x, y: x != y, prev, sop).named("differs_prev")
    differs_next = rasp.SequenceMap(lambda x, y: x != y, sop, nxt).named("differs_next")
    return rasp.SequenceMap(lambda a, b: a and b, differs_prev, differs_next).named("alternates")


def make_depth(open_token="(", close_token=")"):
    """Nesting depth: the pair balance (a fraction of the prefix) times the prefix length."""
    balance = lib.make_pair_balance(rasp.tokens, open_token, close_token)
    return rasp.SequenceMap(lambda b, i: round(b * (i + 1)), balance, rasp.indices).named("depth")


def make_annotated_copy_sharing_an_id():
    """Tracr's annotate() copies the expression with copy.copy, and unique_id is a cached
    property: a copy made after the id was read keeps it. Two different objects (one numerical)
    share one unique_id here."""
    values = rasp.Map(lambda x: x + 1, rasp.tokens).named("values")
    values.label  # reads (draws) the id, as printing or naming with the label does
    as_numbers = rasp.numerical(values)
    mean = mean_over(select_all(), as_numbers)
    return rasp.SequenceMap(lambda v, m: v - m, values, mean).named("minus_mean")


def make_mean_deviation():
    mean = mean_over(select_all(), numeric(rasp.tokens))
    return rasp.SequenceMap(lambda x, m: x - m, rasp.tokens, mean).named("deviation")


def make_shared_selector():
    same_tok = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ).named("same_tok")
    width = rasp.SelectorWidth(same_tok)
    mean_index = mean_over(same_tok, numeric(rasp.indices))
    return rasp.SequenceMap(lambda w, m: w + m, width, mean_index).named("width_plus_mean_index")


def make_flag_reused():
    is_a = (rasp.tokens == "a").named("is_a")
    count_a = rasp.SelectorWidth(rasp.Select(is_a, is_a, lambda k, q: k)).named("count_a")
    frac_a = lib.make_frac_prevs(is_a)
    not_a = (~is_a).named("not_a")
    first = rasp.SequenceMap(lambda c, f: c + f, count_a, frac_a)
    return rasp.SequenceMap(lambda x, n: x if n else -x, first, not_a).named("flag_reused")


def make_diamond():
    x = rasp.Map(lambda t: t + 1, rasp.tokens).named("x")
    y = rasp.Map(lambda v: v * 2, x, simplify=False).named("y")
    z = rasp.Map(lambda v: v - 1, x, simplify=False).named("z")
    return rasp.SequenceMap(lambda a, b: a * b, y, z).named("diamond")


def make_length_reused():
    n = lib.make_length()
    opp = (n - rasp.indices - 1).named("opp")
    middle = rasp.SequenceMap(lambda i, m: i == m // 2, rasp.indices, n).named("is_middle")
    return rasp.SequenceMap(lambda o, f: o * 2 + int(f), opp, middle).named("length_reused")


def make_hist_reused():
    hist = lib.make_hist()
    rank = rasp.SelectorWidth(rasp.Select(hist, hist, rasp.Comparison.LT)).named("rarer")
    return rasp.SequenceMap(lambda h, r: h * 10 + r, hist, rank).named("hist_and_rank")


def make_distinct_count():
    first = rasp.Map(lambda c: c == 0, make_occurrences_before(rasp.tokens)).named("first_time")
    return rasp.SelectorWidth(rasp.Select(first, first, lambda k, q: k)).named("distinct")


def make_is_most_frequent():
    hist = lib.make_hist()
    more = rasp.SelectorWidth(rasp.Select(hist, hist, rasp.Comparison.GT)).named("more_frequent")
    return (more == 0).named("is_most_frequent")


def make_median():
    ordered = sort_by(rasp.tokens, rasp.tokens)
    middle = rasp.Map(lambda n: (n - 1) // 2, lib.make_length()).named("middle")
    return at_position(ordered, middle).named("median")


def make_max():
    ordered = sort_by(rasp.tokens, rasp.tokens)
    return at_position(ordered, (lib.make_length() - 1).named("last")).named("max")


def make_second_largest():
    ordered = sort_by(rasp.tokens, rasp.tokens)
    return at_position(ordered, (lib.make_length() - 2).named("second_last")).named("second_largest")


def make_min_by_rank():
    keys = with_tiebreak(rasp.tokens)
    rank = rasp.SelectorWidth(rasp.Select(keys, keys, rasp.Comparison.LT)).named("rank")
    return rasp.Aggregate(rasp.Select(rank, rasp.Full(0), rasp.Comparison.EQ), rasp.tokens).named("min")


def make_is_max():
    return rasp.SequenceMap(lambda x, m: x == m, rasp.tokens, make_max()).named("is_max")


def make_sort_by_frequency():
    hist = lib.make_hist()
    keys = rasp.SequenceMap(lambda h, i: -h + i * 0.00001, hist, rasp.indices).named("freq_keys")
    return lib.make_sort_unique(rasp.tokens, keys).named("sort_by_frequency")


def make_sort_twice():
    once = sort_by(rasp.tokens, rasp.tokens)
    return sort_by(once, once).named("sorted_twice")


def make_palindrome_two_reverses():
    forward = rasp.SequenceMap(lambda x, y: x == y, rasp.tokens, lib.make_reverse(rasp.tokens))
    backward = rasp.SequenceMap(lambda x, y: x == y, lib.make_reverse(rasp.tokens), rasp.tokens)
    return (forward & backward).named("palindrome_both_ways")


# Helpers in the style of the benchmarks' programs (int tokens 0..10, lengths up to 9).

def first_element(sop):
    zero = rasp.Map(lambda x: 0, rasp.indices).named("zero")
    return rasp.Aggregate(rasp.Select(rasp.indices, zero, rasp.Comparison.EQ), sop).named("first_element")


def previous_or_first(sop):
    """sop one position back; position 0 reads itself (no None)."""
    back = rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1 or (k == 0 and q == 0))
    return rasp.Aggregate(back, sop).named("previous_or_first")


def none_of(checks):
    """1 where no position has checks == 0, else 0: the benchmarks' "all" idiom."""
    zero = rasp.Map(lambda x: 0, rasp.indices).named("zero")
    failures = rasp.SelectorWidth(rasp.Select(checks, zero, rasp.Comparison.EQ)).named("failures")
    return rasp.Map(lambda x: 0 if x > 0 else 1, failures).named("all_hold")


def make_is_sorted():
    prev = previous_or_first(rasp.tokens)
    checks = rasp.SequenceMap(lambda p, x: 1 if p <= x else 0, prev, rasp.tokens).named("in_order")
    return none_of(checks).named("is_sorted")


def make_even_median():
    keys = rasp.SequenceMap(lambda x, i: x + 0.0001 * i, rasp.tokens, rasp.indices).named("unique_keys")
    ordered = lib.make_sort_unique(rasp.tokens, keys)
    length = lib.make_length()
    low = at_position(ordered, rasp.Map(lambda n: (n - 1) // 2, length).named("low_index"))
    high = at_position(ordered, rasp.Map(lambda n: n // 2, length).named("high_index"))
    return rasp.SequenceMap(lambda a, b: (a + b) / 2, low, high).named("median")


def make_scale_by_max():
    keys = rasp.SequenceMap(lambda x, i: x + i * 0.00000000000001, rasp.tokens, rasp.indices).named("unique")
    not_above = rasp.SelectorWidth(rasp.Select(keys, keys, rasp.Comparison.LEQ)).named("leq_count")
    length = lib.make_length()
    is_max = rasp.SequenceMap(lambda c, n: c == n, not_above, length).named("is_max")
    top = rasp.Aggregate(rasp.Select(is_max, rasp.Map(lambda x: True, rasp.indices), rasp.Comparison.EQ),
                         rasp.tokens).named("max")
    return rasp.SequenceMap(lambda x, m: x / m if m > 0 else 0, rasp.tokens, top).named("scaled")


def make_average_first_last():
    first = first_element(rasp.tokens)
    last = at_position(rasp.tokens, rasp.Map(lambda n: n - 1, lib.make_length()).named("last_index"))
    return rasp.SequenceMap(lambda x, y: (x + y) / 2.0, first, last).named("average_first_last")


def make_halve_second_half():
    half = rasp.Map(lambda n: n // 2, lib.make_length()).named("half")
    second = rasp.SequenceMap(lambda i, h: i >= h, rasp.indices, half).named("in_second_half")
    return rasp.SequenceMap(lambda x, c: x / 2 if c else x, rasp.tokens, second).named("halved")


def make_divides_first():
    first = first_element(rasp.tokens)
    return rasp.SequenceMap(lambda x, f: (1 if x % f == 0 else 0) if f != 0 else 0, rasp.tokens,
                            first).named("multiple_of_first")


def make_relative_frequency():
    share = rasp.SequenceMap(lambda h, n: h / n if n > 0 else None, lib.make_hist(), lib.make_length())
    return rasp.Map(lambda f: "frequent" if f > 0.5 else ("common" if f > 0.25 else "rare"),
                    share.named("share")).named("frequency_class")


def make_drop_repeats():
    prev = lib.shift_by(1, rasp.tokens)
    return rasp.SequenceMap(lambda x, p: x if x != p else None, rasp.tokens, prev).named("drop_repeats")


def make_pairwise_max():
    prev = previous_or_first(rasp.tokens)
    return rasp.SequenceMap(lambda x, y: int(max(x, y)), rasp.tokens, prev).named("pairwise_max")


def make_swap_pairs():
    length = rasp.SelectorWidth(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)).named("n")
    partner = rasp.SequenceMap(lambda i, n: i if (i == n - 1 and n % 2 == 1) else (i + 1 if i % 2 == 0 else i - 1),
                               rasp.indices, length).named("partner")
    return rasp.Aggregate(rasp.Select(rasp.indices, partner, rasp.Comparison.EQ), rasp.tokens).named("swap_pairs")


def make_fold_in_half():
    """Position i reads position i // 2 (a stretch), odd positions give 0."""
    source = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == int(q / 2))
    stretched = rasp.Aggregate(source, rasp.tokens).named("stretched")
    return rasp.SequenceMap(lambda x, i: x if i % 2 == 0 else 0, stretched, rasp.indices).named("stretch_even")


def make_mirror_halves():
    length = rasp.SelectorWidth(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)).named("n")
    target = rasp.SequenceMap(lambda i, n: n - 1 - i if i >= n // 2 else i, rasp.indices, length).named("target")
    return rasp.Aggregate(rasp.Select(rasp.indices, target, rasp.Comparison.EQ), rasp.tokens).named("mirrored")


def make_words_frequency_of_long():
    long_word = rasp.Map(lambda w: len(w) > 3, rasp.tokens).named("long_word")
    return lib.make_frac_prevs(long_word).named("share_long")


def make_palindromic_words():
    return rasp.Map(lambda w: w if w == w[::-1] else None, rasp.tokens).named("palindromic_word")


def make_rank_plus_one():
    smaller = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)).named("smaller")
    return rasp.Map(lambda x: x + 1, smaller).named("rank")


def make_poly_first():
    """first ** 2 + 2 * second + third, from positional reads (a benchmark-style polynomial)."""
    base = first_element(rasp.tokens)
    second = rasp.Aggregate(rasp.Select(rasp.indices, rasp.Map(lambda x: 1, rasp.tokens), rasp.Comparison.EQ),
                            rasp.tokens, default=None).named("second")
    square = rasp.SequenceMap(lambda b, s: b ** 2 + 2 * s, base, second).named("poly")
    return rasp.SequenceMap(lambda p, x: p + x, square, rasp.tokens).named("poly_plus_token")


def make_share_of_previous_a():
    """The running share of positions whose previous token (position 0: itself) is "a", then a
    threshold: a numerical mean over an Aggregate whose default (None) no input reaches."""
    previous_is_a = rasp.numerical(rasp.Map(lambda x: 1 if x == "a" else 0, previous_or_first(rasp.tokens)))
    share = mean_over(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), previous_is_a)
    return rasp.Map(lambda m: m > 0.5, share).named("mostly_after_a")


# --- the corpus --------------------------------------------------------------------------------

ABCD = frozenset("abcd")
ABC = frozenset("abc")
DIGITS = frozenset(range(1, 6))      # 1..5
SMALL = frozenset(range(0, 5))       # 0..4
PARENS = frozenset("()ab")
INTS = frozenset(range(0, 11))       # the benchmarks' get_int_numbers_vocab(): 0..10
FLOATS_ZERO_TO_FIVE = frozenset(0 + x * (5 - 0) / 20 for x in range(20))     # their float vocabulary
FLOATS_MINUS_ONE_TO_ONE = frozenset(-1 + x * (1 - -1) / 20 for x in range(20))
WORDS = frozenset({"spam", "it", "offer", "now", "we", "click", "a", "hello"})


def _lib(name, build, vocab, n, functions, causal=False):
    return Entry(f"lib_{name}", build, frozenset(vocab), n, "tracr lib", causal=causal,
                 lib_functions=tuple(functions))


# Tracr's lib.py, with the vocabularies of Tracr's own test cases (tracr/compiler/test_cases.py).
LIB_ENTRIES = [
    _lib("make_length", lambda: lib.make_length(), "abcd", 5, ["make_length"]),
    _lib("length_module_object", lambda: (lib.length - rasp.indices).named("remaining"), "abcd", 5, ["length"]),
    _lib("make_reverse", lambda: lib.make_reverse(rasp.tokens), "abcd", 5, ["make_reverse"]),
    _lib("make_hist", lambda: lib.make_hist(), "abcd", 5, ["make_hist"]),
    _lib("make_sort_unique", lambda: lib.make_sort_unique(rasp.tokens, rasp.tokens), {1, 2, 3, 4}, 5,
         ["make_sort_unique"]),
    _lib("make_sort", lambda: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=5, min_key=1), {1, 2, 3, 4}, 5,
         ["make_sort"]),
    _lib("make_sort_freq", lambda: lib.make_sort_freq(max_seq_len=5), {1, 2, 3, 4}, 5, ["make_sort_freq"]),
    _lib("make_frac_prevs", lambda: lib.make_frac_prevs(rasp.tokens == "l"), "helo", 5, ["make_frac_prevs"]),
    _lib("make_frac_prevs_causal", lambda: lib.make_frac_prevs(rasp.tokens == "l"), "helo", 5,
         ["make_frac_prevs"], causal=True),
    _lib("make_pair_balance", lambda: lib.make_pair_balance(rasp.tokens, "(", ")"), "abc()", 5,
         ["make_pair_balance"]),
    _lib("make_pair_balance_causal", lambda: lib.make_pair_balance(rasp.tokens, "(", ")"), "abc()", 5,
         ["make_pair_balance"], causal=True),
    _lib("make_shuffle_dyck_2", lambda: lib.make_shuffle_dyck(pairs=["()", "{}"]), "(){}", 5,
         ["make_shuffle_dyck"]),
    _lib("make_shuffle_dyck_3", lambda: lib.make_shuffle_dyck(pairs=["()", "{}", "[]"]), "(){}[]", 5,
         ["make_shuffle_dyck"]),
    _lib("make_shuffle_dyck2", lambda: lib.make_shuffle_dyck2(), "(){}", 5, ["make_shuffle_dyck2"]),
    _lib("shift_by_1", lambda: lib.shift_by(1, rasp.tokens), "abcd", 5, ["shift_by"]),
    _lib("shift_by_2", lambda: lib.shift_by(2, rasp.tokens), "abcd", 5, ["shift_by"]),
    _lib("shift_by_1_causal", lambda: lib.shift_by(1, rasp.tokens), "abcd", 5, ["shift_by"], causal=True),
    _lib("detect_pattern", lambda: lib.detect_pattern(rasp.tokens, "abc"), "abc", 5, ["detect_pattern"]),
    _lib("detect_pattern_causal", lambda: lib.detect_pattern(rasp.tokens, "abc"), "abc", 5, ["detect_pattern"],
         causal=True),
    _lib("make_count_less_freq", lambda: lib.make_count_less_freq(n=2), "abcd", 5, ["make_count_less_freq"]),
    _lib("make_count", lambda: lib.make_count(rasp.tokens, "a"), "abc", 5, ["make_count"]),
    _lib("make_nary_sequencemap",
         lambda: lib.make_nary_sequencemap(lambda x, y, z: x + y - z, rasp.tokens, rasp.tokens, rasp.indices),
         {1, 2, 3}, 5, ["make_nary_sequencemap"]),
]


def _own(name, category, build, vocab, n, causal=False, expected_refusal=None):
    return Entry(name, build, frozenset(vocab), n, category, causal=causal, expected_refusal=expected_refusal)


OWN_ENTRIES = [
    # Maps with float arithmetic.
    _own("halve", "float map", lambda: rasp.Map(lambda x: x / 2, rasp.tokens).named("halve"), range(7), 5),
    _own("square_root", "float map", lambda: rasp.Map(lambda x: x ** 0.5, rasp.tokens).named("sqrt"),
         {0, 1, 2, 3, 4, 9}, 5),
    _own("affine_tenths", "float map", lambda: rasp.Map(lambda x: 0.1 * x + 0.3, rasp.tokens).named("affine"),
         range(6), 5),
    _own("reciprocal", "float map", lambda: rasp.Map(lambda x: 1 / (x + 1), rasp.tokens).named("reciprocal"),
         range(5), 5),
    _own("power_of_half", "float map", lambda: rasp.Map(lambda x: 0.5 ** x, rasp.tokens).named("decay"),
         range(6), 5),
    _own("log1p", "float map", lambda: rasp.Map(lambda x: math.log(x + 1), rasp.tokens).named("log1p"),
         range(5), 5),
    _own("rounded_thirds", "float map", lambda: rasp.Map(lambda x: round(x / 3, 2), rasp.tokens).named("thirds"),
         range(8), 5),
    _own("divide_then_multiply", "float map",
         lambda: rasp.Map(lambda y: y * 3, rasp.Map(lambda x: x / 3, rasp.tokens), simplify=False).named("back"),
         range(8), 5),
    _own("float_vocab_double", "float map", lambda: rasp.Map(lambda x: x * 2, rasp.tokens).named("double"),
         {0.5, 1.5, 2.25}, 5),
    _own("mean_of_token_and_index", "float map",
         lambda: rasp.SequenceMap(lambda x, i: (x + i) / 2, rasp.tokens, rasp.indices).named("midpoint"),
         range(4), 6),
    _own("token_over_position", "float map",
         lambda: rasp.SequenceMap(lambda x, i: x / (i + 1), rasp.tokens, rasp.indices).named("ratio"),
         {1, 2, 3}, 6),
    _own("scaled_difference", "float map",
         lambda: rasp.SequenceMap(lambda x, i: (x - i) * 0.25, rasp.tokens, rasp.indices).named("scaled"),
         range(4), 6),
    _own("square_by_self", "float map", lambda: (rasp.tokens * rasp.tokens).named("square"), range(5), 5),
    # Sorts with float tie-break keys, and what researchers build on them.
    _own("sort_tiebreak_1e-5", "float sort", lambda: sort_by(rasp.tokens, rasp.tokens), DIGITS, 6),
    _own("sort_tiebreak_from_zero", "float sort", lambda: sort_by(rasp.tokens, rasp.tokens), range(4), 6),
    _own("sort_tiebreak_1e-14", "float sort", lambda: sort_by(rasp.tokens, rasp.tokens, eps=1e-14),
         {1, 2, 3, 4}, 5),
    _own("sort_descending", "float sort",
         lambda: lib.make_sort_unique(rasp.tokens, rasp.SequenceMap(lambda x, i: -x + i * 0.001, rasp.tokens,
                                                                    rasp.indices)).named("descending"),
         DIGITS, 6),
    _own("argsort", "float sort", lambda: sort_by(rasp.indices, rasp.tokens).named("argsort"), {1, 2, 3, 4}, 6),
    _own("sort_letters_by_code", "float sort",
         lambda: lib.make_sort_unique(rasp.tokens, rasp.SequenceMap(lambda c, i: ord(c) + i * 0.01, rasp.tokens,
                                                                    rasp.indices)).named("letters_sorted"),
         ABCD, 6),
    _own("sort_by_distance_from_3", "float sort",
         lambda: lib.make_sort_unique(rasp.tokens, rasp.SequenceMap(lambda x, i: abs(x - 3) + i * 1e-4,
                                                                    rasp.tokens, rasp.indices)).named("near_3"),
         DIGITS, 6),
    _own("sort_by_frequency_tiebreak", "float sort", make_sort_by_frequency, {1, 2, 3, 4}, 5),
    _own("sort_min_key_tenth", "float sort",
         lambda: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=6, min_key=0.1), {1, 2, 3, 4}, 6),
    _own("rank_stable", "float sort",
         lambda: rasp.SelectorWidth(rasp.Select(with_tiebreak(rasp.tokens), with_tiebreak(rasp.tokens),
                                                rasp.Comparison.LT)).named("rank"), DIGITS, 6),
    _own("float_token_rank", "float sort",
         lambda: rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)).named("rank"),
         {0.1, 0.2, 0.3, 0.30000000000000004}, 5),
    _own("median", "float sort", make_median, DIGITS, 5),
    _own("max_via_sort", "float sort", make_max, DIGITS, 6),
    _own("second_largest", "float sort", make_second_largest, DIGITS, 6),
    _own("min_via_rank", "float sort", make_min_by_rank, DIGITS, 6),
    _own("is_max", "float sort", make_is_max, {1, 2, 3}, 6),
    # Numerical aggregates.
    _own("mean_all", "numerical", lambda: mean_over(select_all(), numeric(rasp.tokens)), range(5), 6),
    _own("prefix_mean_quarters", "numerical",
         lambda: mean_over(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ),
                           rasp.numerical(rasp.Map(lambda x: x / 4, rasp.tokens))), range(5), 6),
    _own("prefix_mean_quarters_causal", "numerical",
         lambda: mean_over(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ),
                           rasp.numerical(rasp.Map(lambda x: x / 4, rasp.tokens))), range(5), 6, causal=True),
    _own("frac_vowels", "numerical", lambda: lib.make_frac_prevs(rasp.Map(lambda c: c in "aeiou", rasp.tokens)),
         "abek", 6),
    _own("frac_vowels_causal", "numerical",
         lambda: lib.make_frac_prevs(rasp.Map(lambda c: c in "aeiou", rasp.tokens)), "abek", 6, causal=True),
    _own("frac_greater_than_two", "numerical",
         lambda: mean_over(select_all(), rasp.numerical(rasp.tokens > 2)), range(5), 6),
    _own("window_mean", "numerical",
         lambda: mean_over(rasp.Select(rasp.indices, rasp.indices, lambda k, q: q - 1 <= k <= q),
                           numeric(rasp.tokens)), range(4), 6),
    _own("annotated_numerical", "numerical",
         lambda: rasp.Aggregate(select_all(),
                                (rasp.tokens == "a").annotated(encoding=rasp.Encoding.NUMERICAL),
                                default=0).annotated(encoding=rasp.Encoding.NUMERICAL).named("share_of_a"),
         ABC, 6),
    _own("frac_then_threshold", "numerical",
         lambda: rasp.Map(lambda f: f > 0.5, lib.make_frac_prevs(rasp.tokens == "a")).named("mostly_a"), ABC, 6),
    _own("weighted_balance", "numerical",
         lambda: rasp.numerical(rasp.LinearSequenceMap(lib.make_frac_prevs(rasp.tokens == "a"),
                                                       lib.make_frac_prevs(rasp.tokens == "b"), 2, -1)), ABC, 6),
    _own("numerical_double", "numerical",
         lambda: rasp.numerical(rasp.Map(lambda v: v * 2, lib.make_frac_prevs(rasp.tokens == "a"))), ABC, 5),
    _own("mean_of_halves", "numerical",
         lambda: mean_over(select_all(), rasp.numerical(rasp.Map(lambda x: x / 2, rasp.tokens))), range(5), 6),
    _own("first_value_numerical", "numerical",
         lambda: mean_over(rasp.Select(rasp.indices, rasp.Full(0), rasp.Comparison.EQ), numeric(rasp.tokens)),
         range(5), 6),
    _own("deviation_from_mean", "numerical", make_mean_deviation, range(4), 5),
    _own("annotated_copy_sharing_an_id", "numerical", make_annotated_copy_sharing_an_id, range(4), 5),
    # SelectorWidth over composite selectors.
    _own("occurrences_before", "selector width", lambda: make_occurrences_before(rasp.tokens), ABC, 6),
    _own("width_or_first", "selector width",
         lambda: rasp.SelectorWidth(rasp.SelectorOr(
             rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ),
             rasp.Select(rasp.indices, rasp.Full(0), rasp.Comparison.EQ))).named("same_or_first"), ABC, 6),
    _own("width_not_equal", "selector width",
         lambda: rasp.SelectorWidth(rasp.SelectorNot(
             rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ))).named("different"), ABCD, 6),
    _own("width_nested", "selector width",
         lambda: rasp.SelectorWidth(rasp.SelectorAnd(
             rasp.SelectorNot(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)),
             rasp.SelectorOr(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT),
                             rasp.Select(rasp.tokens, rasp.Full("a"), rasp.Comparison.EQ)))).named("nested"),
         ABC, 6),
    _own("width_operators", "selector width",
         lambda: rasp.SelectorWidth(~rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
                                    & rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.GT)).named("later_other"),
         ABC, 6),
    _own("width_simplified_and", "selector width",
         lambda: rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LEQ)
                                    & rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.NEQ)).named("smaller"),
         DIGITS, 6),
    _own("width_against_full", "selector width",
         lambda: rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.Full(3), rasp.Comparison.LT)).named("below_3"),
         DIGITS, 6),
    _own("prefix_count_a", "selector width",
         lambda: rasp.SelectorWidth(rasp.SelectorAnd(
             rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k == "a"),
             rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ))).named("prefix_count_a"), ABC, 6),
    _own("prefix_count_a_causal", "selector width",
         lambda: rasp.SelectorWidth(rasp.SelectorAnd(
             rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k == "a"),
             rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ))).named("prefix_count_a"), ABC, 6,
         causal=True),
    _own("width_or_not", "selector width",
         lambda: rasp.SelectorWidth(rasp.SelectorOr(
             rasp.SelectorNot(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k == "a")),
             rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ))).named("not_a_or_self"), ABC, 6),
    _own("count_in_window", "selector width",
         lambda: rasp.SelectorWidth(rasp.SelectorAnd(
             rasp.Select(rasp.indices, rasp.indices, lambda k, q: abs(k - q) <= 1),
             rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ))).named("same_nearby"), ABC, 6),
    _own("appears_later", "selector width",
         lambda: (rasp.SelectorWidth(rasp.SelectorAnd(
             rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ),
             rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.GT))) > 0).named("appears_later"), ABCD, 6),
    _own("distinct_count", "selector width", make_distinct_count, ABCD, 6),
    # Subexpressions reused.
    _own("hist_reused", "reuse", make_hist_reused, ABCD, 6),
    _own("length_reused", "reuse", make_length_reused, ABC, 6),
    _own("reverse_of_reverse", "reuse", lambda: lib.make_reverse(lib.make_reverse(rasp.tokens)), ABCD, 6),
    _own("shared_selector", "reuse", make_shared_selector, ABC, 6),
    _own("flag_reused", "reuse", make_flag_reused, ABC, 6),
    _own("diamond", "reuse", make_diamond, range(4), 5),
    # One builder called twice in one program.
    _own("hist_twice", "builder twice",
         lambda: rasp.SequenceMap(lambda a, b: a - b, lib.make_hist(), lib.make_hist()).named("zero"), ABCD, 6),
    _own("length_twice", "builder twice",
         lambda: rasp.SequenceMap(lambda a, b: a + b, lib.make_length(), lib.make_length()).named("twice_n"),
         ABC, 6),
    _own("palindrome_two_reverses", "builder twice", make_palindrome_two_reverses, ABC, 6),
    _own("frac_prevs_twice", "builder twice",
         lambda: rasp.numerical(rasp.LinearSequenceMap(lib.make_frac_prevs(rasp.tokens == "a"),
                                                       lib.make_frac_prevs(rasp.tokens == "b"), 1, -1)), ABC, 6),
    _own("sort_twice", "builder twice", make_sort_twice, DIGITS, 5),
    # Palindromes and Dyck languages (the palindrome built twice: issue 32's SIGSEGV).
    _own("palindrome", "palindrome / dyck", lambda: make_palindrome_check(rasp.tokens), ABC, 6),
    _own("palindrome_built_again", "palindrome / dyck", lambda: make_palindrome_check(rasp.tokens), ABC, 6),
    _own("is_palindrome", "palindrome / dyck", lambda: make_is_palindrome(rasp.tokens), ABC, 6),
    _own("dyck_1", "palindrome / dyck", lambda: lib.make_shuffle_dyck(pairs=["()"]), PARENS, 6),
    _own("dyck_1_built_again", "palindrome / dyck", lambda: lib.make_shuffle_dyck(pairs=["()"]), PARENS, 6),
    _own("dyck_letters", "palindrome / dyck", lambda: lib.make_shuffle_dyck(pairs=["ab"]), "abx", 6),
    _own("nesting_depth", "palindrome / dyck", make_depth, PARENS, 6),
    # Counting and histograms.
    _own("count_below_three", "count",
         lambda: rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k < 3)).named("below_3"),
         DIGITS, 6),
    _own("count_smaller", "count",
         lambda: rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)).named("smaller"),
         DIGITS, 6),
    _own("count_b", "count", lambda: lib.make_count(rasp.tokens, "b"), ABCD, 6),
    _own("is_most_frequent", "count", make_is_most_frequent, ABC, 6),
    _own("bucket_hist", "count",
         lambda: (lambda b: rasp.SelectorWidth(rasp.Select(b, b, rasp.Comparison.EQ)).named("bucket_hist"))(
             rasp.Map(lambda x: x // 2, rasp.tokens).named("bucket")), range(6), 6),
    _own("hist_of_residues", "count",
         lambda: (lambda r: rasp.SelectorWidth(rasp.Select(r, r, rasp.Comparison.EQ)).named("residue_hist"))(
             rasp.Map(lambda x: x % 3, rasp.tokens).named("residue")), range(7), 6),
    _own("hist_built_again", "count", lambda: lib.make_hist(), ABCD, 6),
    # Elementwise and positional programs of the kind the benchmarks list.
    _own("swap_first_two", "positional", make_swap, ABCD, 5),
    _own("shift_left", "positional", lambda: lib.shift_by(-1, rasp.tokens), ABCD, 6),
    _own("same_as_previous", "positional",
         lambda: rasp.SequenceMap(lambda p, x: p == x, lib.shift_by(1, rasp.tokens), rasp.tokens).named("repeat"),
         ABC, 6),
    _own("same_as_previous_causal", "positional",
         lambda: rasp.SequenceMap(lambda p, x: p == x, lib.shift_by(1, rasp.tokens), rasp.tokens).named("repeat"),
         ABC, 6, causal=True),
    _own("alternation", "positional", lambda: make_alternation_check(rasp.tokens), ABC, 6),
    _own("neighbour_sum", "positional", lambda: (rasp.tokens + lib.shift_by(1, rasp.tokens)).named("pair_sum"),
         range(4), 6),
    _own("broadcast_first", "positional",
         lambda: rasp.Aggregate(rasp.Select(rasp.indices, rasp.Full(0), rasp.Comparison.EQ),
                                rasp.tokens).named("first"), ABCD, 6),
    _own("broadcast_last", "positional", lambda: at_position(rasp.tokens, (lib.length - 1).named("last")), ABCD, 6),
    _own("rasp_length_primitive", "positional",
         lambda: rasp.SequenceMap(lambda n, i: n - i, rasp.length, rasp.indices).named("remaining"), ABC, 6),
    _own("caesar", "elementwise",
         lambda: rasp.Map(lambda c: chr((ord(c) - 97 + 3) % 26 + 97), rasp.tokens).named("caesar"), "axyz", 6),
    _own("upper", "elementwise", lambda: rasp.Map(str.upper, rasp.tokens).named("upper"), ABCD, 6),
    _own("parity", "elementwise", lambda: rasp.Map(lambda x: x % 2 == 0, rasp.tokens).named("even"), range(6), 6),
    _own("clip", "elementwise", lambda: rasp.Map(lambda x: min(max(x, 1), 3), rasp.tokens).named("clip"),
         range(6), 6),
    _own("tuples_then_pick", "elementwise",
         lambda: rasp.Map(lambda t: t[0] if t[1] else "-",
                          rasp.SequenceMap(lambda x, i: (x, i % 2), rasp.tokens, rasp.indices)).named("odd_only"),
         ABC, 6),
    # In the benchmarks' style: tokens 0..10 (their int vocabulary), floats, words, lengths up to 9.
    _own("bench_sine", "benchmark style", lambda: rasp.Map(lambda x: math.sin(x), rasp.tokens).named("sine"),
         INTS, 6),
    _own("bench_exp", "benchmark style", lambda: rasp.Map(lambda x: math.exp(x), rasp.tokens).named("exp"), INTS, 6),
    _own("bench_atan_causal", "benchmark style",
         lambda: rasp.Map(lambda x: math.atan(x), rasp.tokens).named("atan"), INTS, 6, causal=True),
    _own("bench_asin_float_vocab", "benchmark style",
         lambda: rasp.Map(lambda x: math.asin(x), rasp.tokens).named("asin"), FLOATS_MINUS_ONE_TO_ONE, 5),
    _own("bench_round_float_vocab", "benchmark style",
         lambda: rasp.Map(lambda x: int(x), rasp.Map(lambda x: x + 0.5, rasp.tokens).named("shifted")).named("rounded"),
         FLOATS_ZERO_TO_FIVE, 5),
    _own("bench_is_square", "benchmark style",
         lambda: rasp.Map(lambda x: 1 if x ** 0.5 == int(x ** 0.5) else 0, rasp.tokens).named("is_square"),
         frozenset(range(30)), 5),
    _own("bench_cube_root", "benchmark style",
         lambda: rasp.Map(lambda x: x ** (1 / 3) if x >= 0 else -(-x) ** (1 / 3), rasp.tokens).named("cbrt"),
         frozenset(range(-5, 6)), 6),
    _own("bench_factorial", "benchmark style",
         lambda: rasp.Map(lambda x: math.factorial(x), rasp.tokens).named("factorial"), INTS, 6),
    _own("bench_huge_powers", "benchmark style",
         lambda: rasp.Map(lambda x: 2 ** x + 1, rasp.tokens).named("beyond_int64"), {60, 63, 64, 70}, 5),
    _own("bench_multiply_by_length", "benchmark style",
         lambda: rasp.SequenceMap(lambda x, n: x * n, rasp.tokens, lib.make_length()).named("times_length"), INTS, 8),
    _own("bench_divide_by_length", "benchmark style",
         lambda: rasp.SequenceMap(lambda x, n: x / n if n > 0 else 0, rasp.tokens,
                                  lib.make_length()).named("over_length"), INTS, 8),
    _own("bench_is_sorted", "benchmark style", make_is_sorted, INTS, 8),
    _own("bench_even_median", "benchmark style", make_even_median, INTS, 7),
    _own("bench_scale_by_max", "benchmark style", make_scale_by_max, INTS, 7),
    _own("bench_average_first_last", "benchmark style", make_average_first_last, INTS, 9),
    _own("bench_halve_second_half", "benchmark style", make_halve_second_half, INTS, 8),
    _own("bench_divides_first", "benchmark style", make_divides_first, INTS, 8),
    _own("bench_relative_frequency", "benchmark style", make_relative_frequency, "abcde", 8),
    _own("bench_drop_repeats", "benchmark style", make_drop_repeats, ABC, 9),
    _own("bench_pairwise_max", "benchmark style", make_pairwise_max, INTS, 9),
    _own("bench_swap_pairs", "benchmark style", make_swap_pairs, INTS, 9),
    _own("bench_stretch", "benchmark style", make_fold_in_half, INTS, 9),
    _own("bench_mirror_halves", "benchmark style", make_mirror_halves, INTS, 9),
    _own("bench_rank_plus_one", "benchmark style", make_rank_plus_one, INTS, 9),
    _own("bench_count_greater", "benchmark style",
         lambda: rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.GT)).named("greater"),
         INTS, 9),
    _own("bench_poly_first", "benchmark style", make_poly_first, INTS, 6),
    _own("bench_word_lengths", "benchmark style", lambda: rasp.Map(len, rasp.tokens).named("word_length"), WORDS, 8),
    _own("bench_share_of_long_words", "benchmark style", make_words_frequency_of_long, WORDS, 8),
    _own("bench_palindromic_words", "benchmark style", make_palindromic_words, WORDS | {"noon", "radar"}, 6),
    _own("bench_mask_every_third", "benchmark style",
         lambda: rasp.SequenceMap(lambda x, third: 0 if third else x, rasp.tokens,
                                  rasp.Map(lambda b: 1 if b else 0,
                                           rasp.Map(lambda i: (i + 1) % 3 == 0, rasp.indices))).named("masked"),
         INTS, 9),
    _own("bench_sort_1e-14_long", "benchmark style", lambda: sort_by(rasp.tokens, rasp.tokens, eps=1e-14), INTS, 9),
    _own("bench_sort_1e-4_long", "benchmark style", lambda: sort_by(rasp.tokens, rasp.tokens, eps=0.0001), INTS, 9),
    # Values of every Python type the benchmarks use: strings that look like numbers (their
    # get_str_numbers_vocab), floats that are whole (1.0 is a float to callables), tuples, None.
    _own("string_digits_reverse", "values", lambda: lib.make_reverse(rasp.tokens), set("0123"), 5),
    _own("string_numbers_increment", "values",
         lambda: rasp.Map(lambda s: str(int(s) + 1), rasp.tokens).named("next_number"), {str(i) for i in range(12)}, 5),
    _own("string_numbers_in_range", "values",
         lambda: rasp.Map(lambda s: 10 <= int(s) <= 20 if s.isdigit() else False, rasp.tokens).named("in_range"),
         {str(i) for i in range(0, 30, 3)}, 5),
    _own("string_numbers_sort", "values",
         lambda: lib.make_sort_unique(rasp.tokens, rasp.SequenceMap(lambda s, i: int(s) + i * 0.001, rasp.tokens,
                                                                    rasp.indices)).named("sorted_numbers"),
         {str(i) for i in range(12)}, 5),
    _own("float_format", "values", lambda: rasp.Map(lambda x: f"{x:.2f}", rasp.tokens).named("formatted"),
         FLOATS_ZERO_TO_FIVE, 4),
    _own("whole_average", "values",
         lambda: rasp.Map(lambda m: m.is_integer(),
                          rasp.SequenceMap(lambda x, i: (x + i) / 2, rasp.tokens, rasp.indices)).named("whole"),
         range(4), 5),
    _own("average_label", "values",
         lambda: rasp.Map(lambda m: f"avg={m}",
                          rasp.SequenceMap(lambda x, i: (x + i) / 2, rasp.tokens, rasp.indices)).named("label"),
         range(4), 5),
    _own("mean_index_of_same_token", "values",
         lambda: rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ),
                                rasp.indices).named("mean_position"), "abc", 5),
    _own("share_after_a", "values", make_share_of_previous_a, "ab", 6),
    _own("words_compared", "values",
         lambda: rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)).named("before"),
         {"Zebra", "apple", "b", "ab", "B"}, 5),
    _own("ints_and_floats_compared", "values",
         lambda: rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)).named("smaller"),
         {1, 1.5, 2, 2.5}, 5),
    _own("tuples_compared", "values",
         lambda: (lambda t: rasp.SelectorWidth(rasp.Select(t, t, rasp.Comparison.EQ)).named("same_pair"))(
             rasp.SequenceMap(lambda x, i: (x, i % 2), rasp.tokens, rasp.indices).named("pair")), "ab", 6),
    _own("none_through_maps", "values",
         lambda: rasp.Map(lambda v: v * 2, rasp.Map(lambda x: x if x > 1 else None, rasp.tokens),
                          simplify=False).named("doubled_big"), range(4), 5),
    _own("numerical_default_one", "values",
         lambda: mean_over(rasp.Select(rasp.tokens, rasp.Full("z"), rasp.Comparison.EQ), numeric(rasp.indices),
                           default=1), "abz", 5),
    _own("positions_at_least_half_a", "values",
         lambda: mean_over(rasp.Select(lib.make_frac_prevs(rasp.tokens == "a"), rasp.Full(0.5), rasp.Comparison.GEQ),
                           numeric(rasp.indices)).named("mean_position_mostly_a"), "ab", 5,
         # A select over a numerical s-op (frac_prevs' mean): Tracr's compiler refuses it too ("Select
         # keys must be categorical"); raspc compares numbers only against integers it can place.
         expected_refusal="a selector comparing a numerical s-op"),
    _own("numpy_sign", "values", lambda: rasp.Map(lambda x: np.sign(x - 2), rasp.tokens).named("sign"), range(5), 5),
    _own("constant_weights", "values",
         lambda: rasp.SequenceMap(lambda x, w: x * w, rasp.tokens,
                                  rasp.ConstantSOp([1, 2, 3, 4, 5], check_length=False)).named("weighted"),
         range(3), 5),
    _own("long_sort_tiebreak", "float sort", lambda: sort_by(rasp.tokens, rasp.tokens), {1, 2, 3}, 10),
    _own("long_hist", "count", lambda: lib.make_hist(), ABC, 10),
    _own("long_reverse", "reuse", lambda: lib.make_reverse(rasp.tokens), ABC, 8),
]

ENTRIES = LIB_ENTRIES + OWN_ENTRIES


def lib_functions():
    """Every public function and module-level RASP object tracr.compiler.lib defines."""
    import inspect
    names = set()
    for name, value in vars(lib).items():
        if name.startswith("_"):
            continue
        if inspect.isfunction(value) and value.__module__ == lib.__name__:
            names.add(name)
        elif isinstance(value, rasp.RASPExpr):
            names.add(name)
    return names
