"""Tracr's own programs (tracr.compiler.lib), unmodified, through raspc.from_tracr: every one
compiles at max_seq_len 5, 10 and 16, and the compiled GPT-2's output equals Tracr's own
rasp.evaluate on every input up to length 5 and 1,000 random inputs of each longer length.
Needs tracr-pypi (the interop venv)."""

import os
import sys
from fractions import Fraction

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from tracr.rasp import rasp  # noqa: E402

import raspc  # noqa: E402
import raspc.tracr  # noqa: E402
from tracr_cases import CASES, MAX_SEQ_LENS, inputs, same  # noqa: E402


@pytest.mark.parametrize("max_seq_len", MAX_SEQ_LENS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_output_equals_tracrs_evaluator(name, max_seq_len):
    build, vocab = CASES[name]
    program = build(max_seq_len)
    model = raspc.tracr.compile_rasp_to_model(program, vocab, max_seq_len, compiler_bos="BOS", samples=1000)
    assert model.model.report["mismatches"] == 0
    checked = undefined = 0
    for tokens in inputs(vocab, max_seq_len):
        try:
            expected = rasp.evaluate(program, tokens)
        except (ValueError, TypeError):
            undefined += 1  # Tracr's evaluator itself raises here (an average of strings)
            continue
        decoded = model.apply(["BOS"] + tokens).decoded
        assert decoded[0] == "BOS"
        assert all(same(g, e) for g, e in zip(decoded[1:], expected)) and len(decoded) == len(tokens) + 1, \
            (tokens, decoded[1:], expected)
        interpreted = raspc.tracr.evaluate(model.program, tokens)
        assert all(same(g, e) for g, e in zip(interpreted, expected)), (tokens, interpreted, expected)
        checked += 1
    assert checked > 0.9 * (checked + undefined), (checked, undefined)


def test_tracr_values_keep_their_python_types():
    from tracr.compiler import lib
    shifted = raspc.tracr.compile_rasp_to_model(lib.shift_by(1, rasp.tokens), {"a", "b"}, 4, compiler_bos="BOS")
    assert shifted.apply(["BOS", "a", "b", "b"]).decoded == ["BOS", None, "a", "b"]
    frac = raspc.tracr.compile_rasp_to_model(lib.make_frac_prevs(rasp.tokens == "x"), {"x", "y"}, 4,
                                             compiler_bos="BOS")
    decoded = frac.apply(["BOS", "x", "y", "y"]).decoded
    assert decoded[1:] == [1, 0.5, pytest.approx(1 / 3, abs=1e-6)]
    assert raspc.tracr.evaluate(frac.program, ["x", "y", "y"]) == [1, 0.5, 1 / 3]
    tuples = raspc.tracr.from_tracr(rasp.SequenceMap(lambda x, y: (x, y), rasp.tokens, rasp.indices), {1, 2}, 3)
    assert raspc.tracr.evaluate(tuples, [2, 1]) == [(2, 0), (1, 1)]


def test_the_bos_token_must_come_first():
    from tracr.compiler import lib
    model = raspc.tracr.compile_rasp_to_model(lib.make_length(), {"a"}, 3, compiler_bos="BOS")
    with pytest.raises(raspc.InputError) as caught:
        model.apply(["a", "a"])
    assert str(caught.value) == "tokens: error: the first token must be the BOS token 'BOS', as in Tracr"


def test_a_refusal_names_the_tracr_expression_and_why():
    # 150 tokens x 16 positions: a categorical s-op of 2,400 values, more than raspc gives
    # dimensions to (2,048); Tracr would give it 2,400.
    pairs = rasp.SequenceMap(lambda x, i: (x, i), rasp.tokens, rasp.indices).named("pairs")
    with pytest.raises(raspc.CompileError) as caught:
        raspc.tracr.compile_rasp_to_model(pairs, set(range(150)), 16)
    error = caught.value
    converted_lines = raspc.tracr.from_tracr(pairs, {1}, 2).source.splitlines()
    assert error.path == "tracr:pairs"
    assert error.line == len(converted_lines) and error.column == 1
    lines = str(error).splitlines()
    assert "2400 values" in lines[0] and "2048" in lines[0], lines[0]
    assert lines[1] == f"  pairs = SequenceMap(<lambda> at test_tracr_lib.py:{pairs.f.__code__.co_firstlineno}, tokens, indices)"


def test_an_unknown_expression_is_refused_by_name():
    class Custom(rasp.SOp):
        @property
        def children(self):
            return [rasp.tokens]

    with pytest.raises(raspc.CompileError) as caught:
        raspc.from_tracr(Custom(), {"a"}, 3)
    assert "raspc cannot convert a Custom: it is none of Tracr's RASP primitives" in str(caught.value)


def _agree_everywhere(program, vocab, max_seq_len, **options):
    """The compiled model and raspc's interpreter equal Tracr's evaluator on every input."""
    model = raspc.tracr.compile_rasp_to_model(program, vocab, max_seq_len, compiler_bos="BOS", **options)
    for tokens in inputs(vocab, max_seq_len):
        expected = rasp.evaluate(program, tokens)
        assert [*map(same, model.apply(["BOS"] + tokens).decoded[1:], expected)] == [True] * len(tokens), tokens
        assert [*map(same, raspc.tracr.evaluate(model.program, tokens), expected)] == [True] * len(tokens), tokens
    return model


def test_every_primitive_and_predicate_shape():
    tokens, indices = rasp.tokens, rasp.indices
    # A predicate of both sides that is none of the special shapes: the general table of terms.
    near = rasp.Select(tokens, tokens, lambda k, q: abs(k - q) == 1 or k == q == 3)
    both = rasp.SelectorAnd(near, rasp.Select(indices, indices, rasp.Comparison.LT))
    either = rasp.SelectorOr(rasp.SelectorNot(near), rasp.Select(indices, rasp.Full(0), rasp.Comparison.EQ))
    program = rasp.SequenceMap(lambda a, b: a * 10 + b, rasp.SelectorWidth(both), rasp.SelectorWidth(either))
    _agree_everywhere(program, {1, 2, 3}, 5)
    # Only the key matters; only the query matters; a constant per position; length.
    key_only = rasp.SelectorWidth(rasp.Select(tokens, tokens, lambda k, q: k == "a"))
    query_only = rasp.SelectorWidth(rasp.Select(tokens, tokens, lambda k, q: q == "a"))
    _agree_everywhere(rasp.SequenceMap(lambda x, y: (x, y), key_only, query_only), {"a", "b"}, 4)
    offsets = rasp.ConstantSOp([5, 6, 7, 8], check_length=False)
    _agree_everywhere(rasp.LinearSequenceMap(offsets, rasp.length, 2, -1), {"a", "b"}, 4)
    # Comparisons on floats compare the rationals raspc holds for them.
    keys = rasp.numerical(rasp.Map(lambda x: x / 10, tokens))
    _agree_everywhere(lib_sort_unique(tokens, keys), {1, 2, 3, 4}, 4)


def lib_sort_unique(vals, keys):
    from tracr.compiler import lib
    return lib.make_sort_unique(vals, keys)


def test_a_constant_selector_is_a_table_over_positions():
    matrix = [[True, False, False], [True, True, False], [False, True, True]]
    program = rasp.SelectorWidth(rasp.ConstantSelector(matrix))
    model = raspc.tracr.compile_rasp_to_model(program, {"a", "b"}, 3, compiler_bos="BOS")
    assert model.apply(["BOS", "a", "b", "a"]).decoded == ["BOS", 1, 2, 2]
    assert model.apply(["BOS", "b", "b", "b"]).decoded[1:] == rasp.evaluate(program, ["b", "b", "b"])


# --- the flow of Tracr-based benchmarks: ids reset before each program, one process ------------

def _reset_ids():
    import itertools
    rasp.RASPExpr._ids = itertools.count(1)


def _reverse():
    _reset_ids()
    length = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE))
    opp = length - rasp.indices - 1
    return rasp.Aggregate(rasp.Select(rasp.indices, opp, rasp.Comparison.EQ), rasp.tokens)


def test_programs_built_after_an_id_reset_keep_their_meaning():
    # After the reset, `length`, `opp` and the output draw ids that rasp.tokens and rasp.indices
    # (and the previous build's expressions) already hold: keyed by id, they merged.
    for _ in range(3):
        model = raspc.tracr.compile_rasp_to_model(_reverse(), {"a", "b", "c"}, 5, compiler_bos="BOS")
        assert model.apply(["BOS", "a", "b"]).decoded == ["BOS", "b", "a"]
        assert model.apply(["BOS", "a", "b", "c", "c"]).decoded == ["BOS", "c", "c", "b", "a"]
        assert model.tracr_check["mismatches"] == 0 and model.tracr_check["inputs"] >= 363


def test_a_program_built_twice_after_resets_neither_crashes_nor_merges():
    # The palindrome check over reverse: its two builds used to kill the process (an s-op reached
    # the interpreter where a selector belongs).
    for _ in range(2):
        reverse = _reverse()
        palindrome = rasp.SequenceMap(lambda x, y: x == y, rasp.tokens, reverse)
        model = raspc.tracr.compile_rasp_to_model(palindrome, {"a", "b"}, 4, compiler_bos="BOS")
        assert model.apply(["BOS", "a", "b", "a"]).decoded == ["BOS", True, True, True]
        assert model.apply(["BOS", "a", "b", "b"]).decoded == ["BOS", False, True, False]


def test_names_come_from_the_program_not_from_ids():
    # Two expressions named alike (and, after a reset, with one label) get two names; Tracr's
    # default names are numbered in the program's own order, whatever ids were drawn before.
    _reset_ids()
    first = rasp.Map(lambda x: x + 1, rasp.tokens).named("step")
    assert first.label == "step_1"  # draws its id
    _reset_ids()
    second = rasp.Map(lambda x: x * 2, first, simplify=False).named("step")
    assert second.label == first.label
    third = rasp.SequenceMap(lambda x, y: x + y, second, rasp.Map(lambda x: x, rasp.indices))
    model = raspc.tracr.compile_rasp_to_model(third, {1, 2}, 3, compiler_bos="BOS")
    assert model.apply(["BOS", 1, 2]).decoded == ["BOS", 4, 7]
    assert model.program.source.splitlines()[1:] == [
        f"step = Map(<lambda> at test_tracr_lib.py:{first.f.__code__.co_firstlineno}, tokens)",
        f"step#2 = Map(<lambda> at test_tracr_lib.py:{second.f.__code__.co_firstlineno}, step)",
        "indices = indices",
        f"map_1 = Map(<lambda> at test_tracr_lib.py:{third.snd.f.__code__.co_firstlineno}, indices)",
        f"sequence_map_1 = SequenceMap(<lambda> at test_tracr_lib.py:{third.f.__code__.co_firstlineno}, step#2, map_1)"]


def test_float_tie_breaks_are_exact():
    # x + i * 0.00001 makes keys unique; 3 * 0.00001 is 4427218577690293 / 2^67.
    _reset_ids()
    keys = rasp.numerical(rasp.SequenceMap(lambda x, i: x + i * 0.00001, rasp.tokens, rasp.indices))
    smaller = rasp.numerical(rasp.Aggregate(rasp.Select(keys, keys, rasp.Comparison.LT),
                                            rasp.numerical(rasp.Map(lambda _: 1, rasp.tokens)), default=0))
    program = rasp.SelectorWidth(rasp.Select(keys, keys, rasp.Comparison.LT))
    model = raspc.tracr.compile_rasp_to_model(program, {1, 2, 3}, 5, compiler_bos="BOS")
    assert model.apply(["BOS", 2, 1, 2, 1]).decoded == ["BOS", 2, 0, 3, 1]
    del smaller


def test_a_numerical_output_that_scales_a_mean_is_one_mean():
    # numerical(Map(lambda v: v * 2, frac_prevs)): Tracr's 2 * 0.2 is the float 0.4, raspc's the
    # exact 2/5; the mean of 2 * [token is "a"] is one head, and no MLP discretises it.
    from tracr.compiler import lib
    _reset_ids()
    doubled = rasp.numerical(rasp.Map(lambda v: v * 2, lib.make_frac_prevs(rasp.tokens == "a")))
    model = raspc.tracr.compile_rasp_to_model(doubled, {"a", "b"}, 5, compiler_bos="BOS")
    assert model.model.config["n_layer"] == 1 and model.model.config["n_inner"] == 1
    assert model.tracr_check["mismatches"] == 0
    assert [round(v, 6) for v in model.apply(["BOS", "a", "b", "a"]).decoded[1:]] == [2.0, 1.0, round(4 / 3, 6)]
    # Not a product (v * v): a table, as before.
    _reset_ids()
    squared = rasp.numerical(rasp.Map(lambda v: v * v, lib.make_frac_prevs(rasp.tokens == "a")))
    assert raspc.tracr.compile_rasp_to_model(squared, {"a", "b"}, 5, compiler_bos="BOS").model.config["n_inner"] > 1


def test_a_sort_whose_keys_no_model_could_hold_compiles_as_the_stable_sort():
    # lib.make_sort's keys x + i / 520 over four tokens take 2,080 values at 520 positions, past the
    # 2,048 a model holds one dimension each; compared as the tokens, then the positions, they need
    # none, and the sort is two blocks. (raspc's verification only: Tracr's evaluator at 520
    # positions takes minutes.)
    from tracr.compiler import lib
    _reset_ids()
    program = raspc.tracr.from_tracr(lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=520, min_key=1),
                                     {1, 2, 3, 4}, 520)
    model = raspc.compile(program, vocab=program.tracr_vocab, max_len=520, samples=2)
    assert model.report["mismatches"] == 0 and model.config["n_layer"] == 2
    assert raspc.tracr.evaluate(program, [3, 1, 4, 1, 2]) == [1, 1, 2, 3, 4]
    # Such a key compared with another s-op is compiled as written: its value set is refused.
    _reset_ids()
    keys = rasp.SequenceMap(lambda x, i: x * 1000 + i, rasp.tokens, rasp.indices)
    with pytest.raises(raspc.CompileError, match=r"can take 2080 values, more than the 2048"):
        raspc.compile(raspc.tracr.from_tracr(rasp.SelectorWidth(rasp.Select(keys, rasp.tokens, rasp.Comparison.LT)),
                                             {1, 2, 3, 4}, 520), vocab=[1, 2, 3, 4], max_len=520, verify=False)


def test_whole_floats_reach_callables_as_floats():
    # (x + i) / 2 is a float in Python even where it is whole: raspc holds the number 1, and the
    # next callable must still see 1.0 (1.0.is_integer() is True; f"{1.0}" is "1.0").
    _reset_ids()
    average = rasp.SequenceMap(lambda x, i: (x + i) / 2, rasp.tokens, rasp.indices)
    label = raspc.tracr.compile_rasp_to_model(rasp.Map(lambda m: f"avg={m}", average), {0, 1, 2}, 3,
                                              compiler_bos="BOS")
    assert label.apply(["BOS", 0, 2, 1]).decoded == ["BOS", "avg=0.0", "avg=1.5", "avg=1.5"]
    assert label.apply(["BOS", 2]).decoded == ["BOS", "avg=1.0"]
    _reset_ids()
    average = rasp.SequenceMap(lambda x, i: (x + i) / 2, rasp.tokens, rasp.indices)
    whole = raspc.tracr.compile_rasp_to_model(average, {0, 1, 2}, 3, compiler_bos="BOS")
    decoded = whole.apply(["BOS", 2, 0]).decoded
    assert decoded == ["BOS", 1.0, 0.5] and isinstance(decoded[1], float)


def test_a_callable_that_tells_a_mean_from_one_value_is_refused():
    # A numerical mean of ints is 2 where one key is selected and 2.0 where several are: one
    # number to raspc, two texts to str. Tracr's evaluator gives "2" or "2.0" by input.
    _reset_ids()
    ones = rasp.numerical(rasp.Map(lambda x: x, rasp.tokens))
    mean = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), ones,
                                         default=0)).named("running_mean")
    program = rasp.Map(str, mean).named("shown")
    with pytest.raises(raspc.CompileError) as caught:
        raspc.tracr.compile_rasp_to_model(program, {0, 2}, 3, compiler_bos="BOS")
    message = str(caught.value)
    assert message.startswith("tracr:shown:6:1: error: str gives '0' for int 0 and '0.0' for float 0.0, and "
                              "Tracr's evaluator can pass either here"), message
    assert "shown = Map(str, running_mean)" in message


def test_a_default_no_input_reaches_leaves_the_value_set():
    # reverse selects one key at every position of every input, so its default (None) never
    # shows: the palindrome's agreement is a mean of numbers, as Tracr's evaluator computes it.
    from tracr.compiler import lib
    _reset_ids()
    same = rasp.SequenceMap(lambda x, y: x == y, rasp.tokens, lib.make_reverse(rasp.tokens))
    ones = rasp.numerical(rasp.Map(lambda b: 1 if b else 0, same))
    agreement = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE), ones,
                                              default=0))
    program = rasp.Map(lambda m: m == 1, agreement).named("is_palindrome")
    model = raspc.tracr.compile_rasp_to_model(program, {"a", "b"}, 4, compiler_bos="BOS")
    assert model.apply(["BOS", "a", "b", "a"]).decoded == ["BOS", True, True, True]
    assert model.apply(["BOS", "a", "b", "b"]).decoded == ["BOS", False, False, False]
    listing = model.program.source
    assert "reverse = Aggregate(reverse_selector, tokens, default=None)  # its selector selects a key at every " \
           "position of every input: the default is never used" in listing, listing
    assert not any(label.endswith(":\u22a5") for label in model.model.residual_labels if label.startswith("reverse:"))
    # A selector that reads the tokens is not evaluated: its default stays.
    _reset_ids()
    first_a = rasp.Aggregate(rasp.Select(rasp.tokens, rasp.Map(lambda _: "a", rasp.tokens), rasp.Comparison.EQ),
                             rasp.indices).named("an_a")
    kept = raspc.tracr.from_tracr(first_a, {"a", "b"}, 3)
    assert "never used" not in kept.source
    assert raspc.tracr.evaluate(kept, ["b", "b"]) == [None, None]


def test_a_copy_that_fails_verification_is_compiled_as_tracrs_mean():
    # Tracr's categorical Aggregate copies one selected value; Tracr's evaluator averages several.
    _reset_ids()
    program = rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ),
                             rasp.indices).named("mean_position")
    with pytest.raises(raspc.CompileError) as caught:
        raspc.compile(raspc.tracr.from_tracr(program, {"a", "b"}, 4), vocab=["a", "b"], max_len=4)
    assert caught.value.departure == "mean_position"
    model = raspc.tracr.compile_rasp_to_model(program, {"a", "b"}, 4, compiler_bos="BOS")
    assert model.averaged == ["mean_position"]
    assert model.apply(["BOS", "a", "b", "a"]).decoded == ["BOS", 1.0, 1, 1.0]
    assert rasp.evaluate(program, ["a", "b", "a"]) == [1.0, 1, 1.0]
    assert model.tracr_check["mismatches"] == 0 and model.tracr_check["inputs"] == 30
    _reset_ids()
    unique = raspc.tracr.compile_rasp_to_model(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices,
                                                                          rasp.Comparison.EQ), rasp.tokens),
                                               {"a", "b"}, 4, compiler_bos="BOS")
    assert unique.averaged == []


def test_a_conversion_that_changes_the_meaning_fails_the_compile(monkeypatch):
    # The second oracle: were the converter to swap a SequenceMap's arguments, raspc's own
    # verification would pass (it checks the converted program) and Tracr's evaluator must not.
    convert = raspc.tracr._Converter.sequence_map

    def swapped(self, e):
        e.fst, e.snd = e.snd, e.fst
        try:
            return convert(self, e)
        finally:
            e.fst, e.snd = e.snd, e.fst

    monkeypatch.setattr(raspc.tracr._Converter, "sequence_map", swapped)
    _reset_ids()
    program = rasp.SequenceMap(lambda x, i: x - i, rasp.tokens, rasp.indices)
    with pytest.raises(raspc.CompileError) as caught:
        raspc.tracr.compile_rasp_to_model(program, {1, 2}, 3, compiler_bos="BOS")
    assert "disagrees with Tracr's evaluator (rasp.evaluate)" in str(caught.value)
    assert caught.value.path == "tracr:sequence_map_1"


def test_the_tracr_check_says_what_it_checked():
    _reset_ids()
    small = raspc.tracr.compile_rasp_to_model(rasp.Map(lambda x: x, rasp.tokens), {"a", "b"}, 3)
    assert small.tracr_check == {"oracle": "tracr.rasp.evaluate", "inputs": 14, "undefined": 0, "mismatches": 0,
                                 "chosen": "every input up to length 3"}
    large = raspc.tracr.compile_rasp_to_model(rasp.Map(lambda x: x, rasp.tokens), {"a", "b", "c", "d"}, 8)
    check = large.tracr_check
    assert check["inputs"] >= 1000 and check["mismatches"] == 0
    assert check["chosen"] == "every input up to length 3, then 184 random inputs of each length 4 to 8"


def test_bad_arguments_raise_raspc_errors():
    _reset_ids()
    with pytest.raises(raspc.CompileError, match="from_tracr takes a Tracr SOp"):
        raspc.tracr.compile_rasp_to_model(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), {"a"}, 3)
    with pytest.raises(raspc.InputError, match="max_seq_len: error: 0 is not a positive whole number"):
        raspc.tracr.compile_rasp_to_model(rasp.tokens, {"a"}, 0)
    with pytest.raises(raspc.InputError, match="vocab: error: the vocabulary must be a set or list of tokens"):
        raspc.tracr.compile_rasp_to_model(rasp.tokens, 5, 3)
    # An s-op where a selector belongs, built by hand past Tracr's own checks.
    bad = rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), rasp.tokens)
    bad.selector = rasp.tokens
    with pytest.raises(raspc.CompileError) as caught:
        raspc.tracr.compile_rasp_to_model(bad, {"a"}, 3)
    assert caught.value.path == "tracr:aggregate_1" and caught.value.line == 2
    assert "Aggregate's input 1 must be a selector, but `tokens = tokens` is an s-op" in str(caught.value)
