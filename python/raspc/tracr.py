"""Tracr's RASP programs compiled by raspc.

(Longer than 500 lines on purpose: the converter is one class with a method a Tracr primitive,
and the codec, the listing and the second oracle below all read the same conversion state.)

``from_tracr(expr, vocab, max_seq_len)`` turns a program built with Tracr's own ``tracr.rasp.rasp``
module into a raspc Program; ``compile_rasp_to_model`` has the signature of Tracr's
``tracr.compiler.compiling.compile_rasp_to_model`` and returns a model whose
``.apply(["BOS", ...]).decoded`` reads as Tracr's does, so a notebook switches by one import::

    from raspc.tracr import compile_rasp_to_model   # was: from tracr.compiler.compiling import ...

Only Tracr's ``rasp`` module is used (imported, never copied): no jax. The conversion writes no
semantics of its own: Python callables (in Map, SequenceMap and Select predicates) are called, as
Tracr's compiler calls them, on the value sets that raspc's own inference computes for their
inputs, and become lookup tables; raspc's interpreter, compiler and verifier then run those.

Where Tracr's evaluator differs from RASP's, the conversion keeps Tracr's meaning:
  - ``None``: an Aggregate's default is None, and Map/SequenceMap give None on a None input (the
    callable is not called), as ``rasp.evaluate`` does; None is a value of its own (NONE below).
  - a Select predicate that raises (a Comparison on None) selects nothing there.
  - an Aggregate of one selected value is that value, of several numbers their mean, whatever the
    encoding (raspc's aggregate means the same); several strings are undefined in both. Where
    Tracr's categorical (a copy of one value) fails raspc's verification because the Aggregate
    does select several numbers, compile_rasp_to_model compiles it as that mean (``.averaged``).
  - callables see the Python value Tracr's evaluator holds, not only the number: a float map's
    whole result stays 1.0, a mean of several values is a float, one selected value keeps its
    type. Where a callable answers differently for two such values that raspc holds as one
    number (str(2) and str(2.0)), the program is refused, located, with both answers.
  - an Aggregate whose selector selects a key at every position of every input (shown by
    evaluating a selector that reads no token at every length, or a comparison of an s-op with
    itself by EQ, LEQ or GEQ) never gives its default; a default None is then not a value it can
    take, so maps and means of it stay over numbers (the listing says so in a comment).
  - values RASP has no atom for (tuples, as make_nary_sequencemap builds) are opaque values that
    only the callables look inside; a float is the exact binary rational it is (0.1 is
    3602879701896397/2^55; raspc's numbers have any size), handed back to callables as the same
    float, so arithmetic raspc does exactly rounds to what Python's float arithmetic gives.

Expressions are told apart by identity, never by ``unique_id`` or ``label``: Tracr-based benchmarks
reset ``rasp.RASPExpr._ids`` before building each program, after which new expressions draw ids
that ``rasp.tokens``, ``rasp.indices`` and expressions built earlier already hold. Names come from
the program alone (``_unique_names``), so a program gives the same model in any order.

``compile_rasp_to_model`` checks the compiled model twice: raspc's verification compares it with
raspc's interpreter on the converted program, then the model is compared with Tracr's own
evaluator (``rasp.evaluate``) on the program as the user built it, so a conversion that changed
the program's meaning fails the compile instead of passing as verified.
"""

import collections
import itertools
import math
import random
import sys
from fractions import Fraction

import raspc
from raspc import _raspc
from raspc.tracr_model import TracrModel, TracrOutput, check_special_tokens  # noqa: F401 (raspc.tracr's surface)
from raspc.tracr_model import _display

# The value Tracr writes as None (an empty selection's default, and maps of it).
NONE = "\u22a5"
# Opaque values (tuples, ...) are strings between these brackets that only the codec reads.
_OPAQUE = ("\u27e8", "\u27e9")


class _Refusal(Exception):
    """A reason to refuse the program, raised where the current expression is not at hand; the
    converter locates it at the expression it is converting."""


class _Codec:
    """Python values <-> raspc atoms, for one program."""

    def __init__(self):
        self._opaque = {}  # text -> Python object
        self._floats = {}  # Fraction -> the float it stands for
        # Texts of the strings and of the numbers the program's values hold: an output token "0"
        # is the string "0" where the program has that string and no number 0.
        self._strings, self._number_texts = set(), set()
        # The output's values by their display text, where the output's value set is known and no
        # two of its values display alike: the string "0" and the number 0 are then told apart.
        self.output_atoms = {}
        # The output's atoms (by _key) -> the Python value Tracr's evaluator gives for them, where
        # the type is not the one to_python would choose (0.0 computed by a float map, not 0).
        self.output_python = {}

    def to_raspc(self, value):
        if value is None:
            return NONE
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            self._number_texts.add(str(value))
            return value
        if isinstance(value, float) and math.isfinite(value):
            if value.is_integer():
                self._number_texts.add(str(int(value)))
                return int(value)
            # The float's exact binary value: raspc's exact arithmetic on it then rounds to what
            # Python's float arithmetic gives (a + b is the nearest float to the exact sum).
            number = Fraction(value)
            self._floats.setdefault(number, value)
            self._number_texts.add(f"{number.numerator}/{number.denominator}")
            return number
        if isinstance(value, Fraction):
            self._number_texts.add(str(value))
            return value
        if isinstance(value, str) and not (value == NONE or value.startswith(_OPAQUE[0])):
            self._strings.add(value)
            return value
        text = _OPAQUE[0] + repr(value) + _OPAQUE[1]
        previous = self._opaque.setdefault(text, value)
        if previous is not value and previous != value:
            raise _Refusal(f"two different values print as {text}; raspc cannot tell them apart")
        return text

    def to_python(self, value):
        """A raspc atom as Tracr's callables and outputs see it."""
        if isinstance(value, str):
            if value == NONE:
                return None
            return self._opaque.get(value, value)
        if isinstance(value, Fraction):
            return self._floats.get(value, float(value))
        return value

    def output_value(self, atom):
        """An atom of the program's output as Tracr's evaluator gives it (0.0 where a float map
        computed it, 0 where an index did)."""
        return self.output_python.get(_key(atom), self.to_python(atom))

    def from_display(self, text):
        """A model output (a token's text, or a numerical reading) as a Python value."""
        if text == NONE:
            return None
        if text in self._opaque:
            return self._opaque[text]
        if text in self.output_atoms:
            return self.output_value(self.output_atoms[text])  # the output's own value, typed
        if text in self._strings and text not in self._number_texts:
            return text  # "0" and "0.00" that the program computes as strings stay strings
        value = raspc._value_of_display(text)
        return self.to_python(value) if isinstance(value, Fraction) else value


def _key(atom):
    """A dict key for a raspc atom that keeps True and 1 apart (Python hashes them alike)."""
    return type(atom) is bool, atom


def _rasp():
    try:
        from tracr.rasp import rasp
    except ImportError as error:
        raise ImportError("raspc.tracr needs Tracr's rasp module: pip install tracr-pypi") from error
    return rasp


def _callable_name(f):
    code = getattr(f, "__code__", None)
    name = getattr(f, "__name__", type(f).__name__)
    if code is None:
        return name
    return f"{name} at {code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"


def _topological(expr):
    """Every expression the output depends on, children first, each once: told apart by identity
    (``order`` holds every object, so no id() is reused while it lives)."""
    order, seen, stack = [], set(), [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for child in reversed(node.children):
            if id(child) not in seen:
                stack.append((child, False))
    # A node is appended once all its children are (a DAG has no path back to it).
    return order


def _unique_names(rasp, order):
    """id(expression) -> its name in the listing and the model, from the program alone (never from
    unique_id, which depends on what was built before: lib's module-level `length` draws its id
    in whichever program reads it first). A name the program gave one expression stays as it is
    (`hist`); Tracr's default names are numbered in the program's own order (`map_1`, `map_2`);
    a name given to several expressions gets #2, #3, ... after the first."""
    default_name = getattr(rasp, "default_name", lambda e: None)
    given = collections.Counter(_name(e) for e in order)
    numbered, names, taken = collections.Counter(), {}, set()
    for e in order:
        base = _name(e)
        if isinstance(e, (rasp.TokensType, rasp.IndicesType, rasp.LengthType)):
            name = _label(e)  # tokens, indices, length
        elif base == default_name(e):
            numbered[base] += 1
            name = f"{base}_{numbered[base]}"
        else:
            name = base
        unique, k = name, 1
        while unique in taken:
            k += 1
            unique = f"{name}#{k}"
        taken.add(unique)
        names[id(e)] = unique
    return names


def _name(expr):
    # Residual labels are "name:value": a colon in a name would make them ambiguous.
    return str(expr.name).replace(":", "_").replace(" ", "_")


class _Converter:
    def __init__(self, rasp, vocab, max_seq_len, causal, encodings, means=()):
        self.rasp = rasp
        self.encodings = encodings
        self.means = {id(e) for e in means}  # Aggregates to average whatever the encodings say
        self.codec = _Codec()
        self.source_vocab = list(vocab)
        self.vocab = [self.codec.to_raspc(v) for v in sorted(vocab, key=repr)]
        self.max_len = max_seq_len
        self.causal = causal
        self.ids = {}    # id(expression) -> raspc node; the expressions stay alive in self.order
        self.names = {}  # id(expression) -> its unique name
        # raspc node -> {_key(atom): {Python type: value}}: the Python values Tracr's evaluator
        # can hold where raspc holds the atom. Both 1 and 1.0 are the number 1 to raspc, but a
        # callable tells them apart (f"{m}", m.is_integer()): a float map gives 1.0, one selected
        # index 1, a mean of several 1.0. Nodes and atoms not here are what codec.to_python says.
        self.python = {}
        self.unreached_defaults = set()  # id(Aggregate) whose default no input reaches
        self.copies = {}  # name -> Aggregate of numbers that Tracr's categorical makes a copy
        self.name = "tracr"
        self.line = 0
        self.current = None

    # --- the listing: one line per expression, where errors point --------------------------
    def describe(self, expr):
        r = self.rasp
        label = lambda e: self.names.get(id(e), _label(e))
        if isinstance(expr, r.TokensType):
            return "tokens"
        if isinstance(expr, r.IndicesType):
            return "indices"
        if isinstance(expr, r.LengthType):
            return "length"
        if isinstance(expr, r.LinearSequenceMap):
            return f"LinearSequenceMap({label(expr.fst)}, {label(expr.snd)}, {expr.fst_fac!r}, {expr.snd_fac!r})"
        if isinstance(expr, r.SequenceMap):
            return f"SequenceMap({_callable_name(expr.f)}, {label(expr.fst)}, {label(expr.snd)})"
        if isinstance(expr, r.Map):
            return f"Map({_callable_name(expr.f)}, {label(expr.inner)})"
        if isinstance(expr, r.Full):
            return f"Full({expr.fill!r})"
        if isinstance(expr, r.ConstantSOp):
            return f"ConstantSOp({list(expr.value)!r})"
        if isinstance(expr, r.Select):
            predicate = expr.predicate
            shown = predicate.name if isinstance(predicate, r.Comparison) else _callable_name(predicate)
            return f"Select({label(expr.keys)}, {label(expr.queries)}, {shown})"
        if isinstance(expr, r.ConstantSelector):
            return "ConstantSelector(...)"
        if isinstance(expr, r.Aggregate):
            return f"Aggregate({label(expr.selector)}, {label(expr.sop)}, default={expr.default!r})"
        if isinstance(expr, r.SelectorWidth):
            return f"SelectorWidth({label(expr.selector)})"
        if isinstance(expr, (r.SelectorAnd, r.SelectorOr)):
            return f"{type(expr).__name__}({label(expr.fst)}, {label(expr.snd)})"
        if isinstance(expr, r.SelectorNot):
            return f"SelectorNot({label(expr.inner)})"
        return f"{type(expr).__name__}(...)"

    def convert(self, expr):
        self.order = order = _topological(expr)
        self.names = _unique_names(self.rasp, order)
        self.unreached_defaults = {id(e) for e in order
                                   if isinstance(e, self.rasp.Aggregate) and self.always_selects(e.selector)}
        lines = []
        for e in order:
            encoding = _explicit_encoding(e)
            notes = [encoding] if encoding else []
            if id(e) in self.unreached_defaults:
                notes.append("its selector selects a key at every position of every input: the default is never used")
            suffix = f"  # {'; '.join(notes)}" if notes else ""
            lines.append(f"{self.names[id(e)]} = {self.describe(e)}{suffix}")
        self.name = f"tracr:{self.names[id(expr)]}"
        self.b = _raspc.ProgramBuilder(self.name, "\n".join(lines) + "\n")
        for line, e in enumerate(order, start=1):
            self.line = line
            self.current = e
            try:
                node = self.node(e)
                self.ids[id(e)] = node
                if isinstance(e, self.rasp.SOp):
                    self.b.set_name(node, self.names[id(e)])
                    encoding = self.encoding(e)
                    if encoding:
                        self.b.annotate(node, encoding)
            except raspc.RaspcError:
                raise
            except _Refusal as why:
                self.refuse(str(why))
            except Exception as error:  # a malformed expression (a child of the wrong type, ...)
                self.refuse(f"raspc cannot convert this expression ({type(error).__name__}: {error})")
        program = raspc.Program(self.b.build(self.ids[id(expr)]))
        try:
            outputs = self.values(self.ids[id(expr)])
        except raspc.RaspcError:
            outputs = []  # values not listed (a mean over many lengths): read from their text
        shown = {}
        for atom in outputs:
            shown.setdefault(_display(atom), []).append(atom)
        self.codec.output_atoms = {text: atoms[0] for text, atoms in shown.items() if len(atoms) == 1}
        self.codec.output_python = {key: next(iter(by_type.values()))
                                    for key, by_type in self.python.get(self.ids[id(expr)], {}).items()}
        program._codec = self.codec
        program.tracr_vocab = self.vocab
        program.tracr_source_vocab = self.source_vocab
        program.max_seq_len = self.max_len
        program.tracr_causal = self.causal
        program.tracr_copies = self.copies
        program.tracr_means = [self.names[id(e)] for e in order if id(e) in self.means]
        return program

    # --- helpers over the builder ---------------------------------------------------------
    def of(self, expr):
        return self.ids[id(expr)]

    def refuse(self, why):
        """A CompileError located at the current expression's line of the listing."""
        line = f"{self.names.get(id(self.current), _label(self.current))} = {self.describe(self.current)}"
        raise raspc.CompileError(f"{self.name}:{self.line}:1: error: {why}\n  {line}\n  ^") from None

    def values(self, node):
        """The values raspc's inference says `node` takes, as raspc atoms."""
        return self.b.value_set(node, self.vocab, self.max_len, self.causal)

    def constant(self, value):
        return self.b.constant(self.codec.to_raspc(value), self.line)

    def encoding(self, e):
        """The annotation an s-op gets: _encoding's, but none for an Aggregate to average."""
        return None if id(e) in self.means else _encoding(e, self.encodings)

    def remember(self, node, atom, value):
        """Tracr's evaluator may hold the Python `value` where raspc holds `atom` at `node`."""
        self.python.setdefault(node, {}).setdefault(_key(atom), {}).setdefault(type(value), value)

    def python_values(self, node, atom):
        """The Python values Tracr's evaluator may hold where raspc holds `atom` at `node`."""
        known = self.python.get(node, {}).get(_key(atom))
        return list(known.values()) if known else [self.codec.to_python(atom)]

    def scaled(self, e):
        """The program's output, a Map Tracr annotates numerical that multiplies every value of a
        number-valued s-op by one number c in Tracr's own arithmetic (`f(x) == c * x` on every
        Python value the evaluator may hand it), as the numerical product `c * inner` (None where
        it is not one): the compiler takes a mean times a number as one mean, where a table of the
        same values is an MLP discretising it. raspc then holds c * x exactly where Tracr holds the
        float (0.4 for 2 * 0.2), a difference of an ulp in a number output compared to 1e-3. Only
        the output: anywhere else raspc chooses the encoding (a selector may compare the values,
        which a numerical s-op cannot be)."""
        if e is not self.order[-1] or _explicit_encoding(e) != "numerical":
            return None
        inner = self.of(e.inner)
        values = self.values(inner)
        if len(values) < 2 or not all(_is_number(v) for v in values):
            return None
        pairs = []  # (raspc atom, Python value) of every input
        for value in values:
            for python in self.python_values(inner, value):
                if isinstance(python, bool) or not isinstance(python, (int, float)):
                    return None
                pairs.append((value, python))
        try:
            outputs = [e.f(python) for _, python in pairs]
            factor = next((out / python for (_, python), out in zip(pairs, outputs) if python != 0), None)
            if factor is None or any(isinstance(out, bool) or not isinstance(out, (int, float)) or out != factor * python
                                     for (_, python), out in zip(pairs, outputs)):
                return None
        except Exception:
            return None
        number = int(factor) if float(factor).is_integer() else float(factor)
        node = self.b.elementwise("mul", [inner, self.constant(number)], self.line)
        self.b.annotate(node, "numerical")
        for (value, _), out in zip(pairs, outputs):
            product = Fraction(number) * Fraction(value)
            self.remember(node, int(product) if product.denominator == 1 else product, out)
        return node

    def table(self, node, function):
        """A lookup table of `function` over the values of `node` (None in, None out, as Tracr's
        evaluator; values where the callable raises are left out: the program is undefined there)."""
        keys, outputs, results = [], [], []
        for key in self.values(node):
            defined, out, python = self.call(function, (node, key))
            if defined:
                keys.append(key)
                outputs.append(out)
                results.append(python)
        return self.lookup(node, keys, outputs, results)

    def lookup(self, node, keys, outputs, results):
        """A lookup table of `node`, remembering the Python results each output atom stands for."""
        table = self.b.lookup(node, keys, outputs, self.line)
        for out, python in zip(outputs, results):
            for value in python:
                self.remember(table, out, value)
        return table

    def call(self, function, *arguments, none_gives_none=True, shown=None):
        """(defined, the raspc atom of the result, the Python results) of `function` on
        `arguments`, (node, atom) pairs, as Tracr's evaluator computes it: None where an argument
        is None, undefined where the callable raises. Called on every Python value an atom
        stands for (1 and 1.0); where those give different results, raspc cannot hold the
        difference and refuses the program."""
        choices = [self.python_values(node, atom) for node, atom in arguments]
        if none_gives_none and any(values[0] is None for values in choices):
            return True, NONE, [None]
        results = []
        for python in itertools.product(*choices):
            try:
                results.append((python, True, function(*python)))
            except Exception:
                results.append((python, False, None))
        atoms = [self.codec.to_raspc(out) if defined else None for _, defined, out in results]
        for (python, defined, out), atom in zip(results[1:], atoms[1:]):
            if defined != results[0][1] or (defined and _key(atom) != _key(atoms[0])):
                first = results[0]
                said = lambda r: repr(r[2]) if r[1] else "an exception"
                raise _Refusal(
                    f"{shown or _callable_name(function)} gives {said(first)} for {_arguments(first[0])} and "
                    f"{said((python, defined, out))} for {_arguments(python)}, and Tracr's evaluator can pass "
                    "either here (a float where an Aggregate averages several values, the value's own type "
                    "where it selects one); raspc holds both as one number, so it cannot keep them apart")
        if not results[0][1]:
            return False, None, []
        return True, atoms[0], [out for _, _, out in results]

    # --- one Tracr expression -------------------------------------------------------------
    def node(self, e):
        r, b, line = self.rasp, self.b, self.line
        if isinstance(e, r.TokensType):
            tokens = b.tokens(line)
            for token in self.source_vocab:
                self.remember(tokens, self.codec.to_raspc(token), token)
            return tokens
        if isinstance(e, r.IndicesType):
            return b.indices(line)
        if isinstance(e, r.LengthType):
            return b.selector_width(self.select_all(True), line)
        if isinstance(e, r.Map):
            scaled = self.scaled(e)
            return scaled if scaled is not None else self.table(self.of(e.inner), e.f)
        if isinstance(e, r.SequenceMap):
            return self.sequence_map(e)
        if isinstance(e, r.Full):
            full = self.constant(e.fill)
            self.remember(full, self.codec.to_raspc(e.fill), e.fill)
            return full
        if isinstance(e, r.ConstantSOp):
            index = b.indices(line)
            constant = b.lookup(index, list(range(len(e.value))), [self.codec.to_raspc(v) for v in e.value], line)
            for v in e.value:
                self.remember(constant, self.codec.to_raspc(v), v)
            return constant
        if isinstance(e, r.Select):
            return self.select(e)
        if isinstance(e, r.ConstantSelector):
            matrix = e.value
            return self.select_table(b.indices(line), b.indices(line),
                                     lambda k, q: q < len(matrix) and k < len(matrix[q]) and bool(matrix[q][k]))
        if isinstance(e, r.SelectorAnd):
            return b.select_and(self.of(e.fst), self.of(e.snd), line)
        if isinstance(e, r.SelectorOr):
            return b.select_or(self.of(e.fst), self.of(e.snd), line)
        if isinstance(e, r.SelectorNot):
            return b.select_not(self.of(e.inner), line)
        if isinstance(e, r.Aggregate):
            return self.aggregate(e)
        if isinstance(e, r.SelectorWidth):
            return b.selector_width(self.of(e.selector), line)
        self.refuse(f"raspc cannot convert a {type(e).__name__}: it is none of Tracr's RASP primitives")

    def aggregate(self, e):
        """An Aggregate, and the Python values Tracr's evaluator gives for its atoms: a selected
        value as it is, the default, and a float for a mean of several values."""
        sop = self.of(e.sop)
        default, default_atom = e.default, self.codec.to_raspc(e.default)
        values = self.values(sop)
        if id(e) in self.unreached_defaults and default is None and any(v != NONE for v in values):
            # No input reaches the default, so one of the values stands in for it: the same
            # program on every input, without a value (None) that only the default brings, which
            # would keep a mean of it (or of a map of it) from being numerical.
            numbers = [v for v in values if _is_number(v)]
            default_atom = (numbers or [v for v in values if v != NONE] or values)[0]
            default = self.python_values(sop, default_atom)[0]
        node = self.b.aggregate(self.of(e.selector), sop, default_atom, self.line)
        self.remember(node, default_atom, default)
        for atom in values:
            for value in self.python_values(sop, atom):
                self.remember(node, atom, value)
        encoding = self.encoding(e)
        if encoding == "categorical" and _explicit_encoding(e) is None and all(_is_number(v) for v in values):
            # Tracr's default makes it a copy of one selected number; where verification shows
            # it selects several, compile_rasp_to_model averages it instead (self.means).
            self.copies[self.names[id(e)]] = e
        if encoding != "categorical":
            # A mean of several values: Tracr's evaluator divides, so a whole mean is a float too.
            for atom in self.values(node):
                if isinstance(atom, int) and not isinstance(atom, bool):
                    self.remember(node, atom, float(atom))
        return node

    def always_selects(self, selector):
        """Whether `selector` selects at least one key at every query position of every input
        (False where that is not known): a query always selects itself where it compares an s-op
        with itself by EQ, LEQ or GEQ; a selector that does not read the tokens (only indices,
        length, constants, and comparisons that are always true or false) is evaluated at every
        length with Tracr's evaluator."""
        r = self.rasp
        if isinstance(selector, r.Select) and selector.keys is selector.queries and any(
                selector.predicate is c for c in (r.Comparison.EQ, r.Comparison.LEQ, r.Comparison.GEQ)):
            return True
        if isinstance(selector, r.SelectorOr):
            return self.always_selects(selector.fst) or self.always_selects(selector.snd)
        if not self.token_independent(selector):
            return False
        cells = sum(n * n for n in range(1, self.max_len + 1))
        if cells > 2_000_000 or not self.source_vocab:
            return False
        evaluator = _tracr_evaluator(self.rasp, self.causal)
        if evaluator is None:
            return False
        for n in range(1, self.max_len + 1):
            try:
                rows = evaluator.run(selector, [self.source_vocab[0]] * n)
            except Exception:
                return False
            for q, row in enumerate(rows):
                visible = row[:q + 1] if self.causal else row
                if not any(visible):
                    return False
        return True

    def token_independent(self, expr, memo=None):
        """Whether `expr` has the same value on every input of a length (reads no token)."""
        r = self.rasp
        memo = {} if memo is None else memo
        if id(expr) in memo:
            return memo[id(expr)]
        if isinstance(expr, r.TokensType):
            result = False
        elif isinstance(expr, (r.IndicesType, r.LengthType, r.Full, r.ConstantSOp, r.ConstantSelector)):
            result = True
        elif isinstance(expr, r.Select) and (expr.predicate is r.Comparison.TRUE
                                             or expr.predicate is r.Comparison.FALSE):
            result = True
        elif isinstance(expr, (r.Map, r.SequenceMap, r.Select, r.SelectorAnd, r.SelectorOr, r.SelectorNot,
                               r.Aggregate, r.SelectorWidth)):
            result = all(self.token_independent(child, memo) for child in expr.children)
        else:
            result = False
        memo[id(expr)] = result
        return result

    def sequence_map(self, e):
        b, line = self.b, self.line
        fst, snd = self.of(e.fst), self.of(e.snd)
        if isinstance(e, self.rasp.LinearSequenceMap):
            if all(_is_number(v) for v in self.values(fst) + self.values(snd)):
                return self.linear(fst, e.fst_fac, snd, e.snd_fac)
        # One code per pair of values (i * |snd| + j), then a table over the codes: the maps are
        # elementwise, so the compiler fuses them into one MLP reading both inputs (or, where
        # both depend on numerical s-ops, computes the first code in an MLP of its own).
        fst_values, snd_values = self.values(fst), self.values(snd)
        width = len(snd_values)
        fst_code = b.lookup(fst, fst_values, [i * width for i in range(len(fst_values))], line)
        snd_code = b.lookup(snd, snd_values, list(range(width)), line)
        code = b.elementwise("add", [fst_code, snd_code], line)
        # Codes are labels, not quantities: where the compiler computes one in an MLP of its own,
        # it must be a one-hot that the table reads, not a number.
        for node in (fst_code, snd_code, code):
            b.annotate(node, "categorical")
        keys, outputs, results = [], [], []
        for i, x in enumerate(fst_values):
            for j, y in enumerate(snd_values):
                defined, out, python = self.call(e.f, (fst, x), (snd, y))
                if defined:
                    keys.append(i * width + j)
                    outputs.append(out)
                    results.append(python)
        return self.lookup(code, keys, outputs, results)

    def linear(self, fst, fst_fac, snd, snd_fac):
        """fst_fac * fst + snd_fac * snd as the sum it is, which stays numerical; a difference of
        unit factors is written as one, which the compiler merges when both are means over one
        selector (make_pair_balance's opens - closes becomes a single mean)."""
        b, line = self.b, self.line
        if (fst_fac, snd_fac) == (1, 1):
            node = b.elementwise("add", [fst, snd], line)
        elif (fst_fac, snd_fac) == (1, -1):
            node = b.elementwise("sub", [fst, snd], line)
        elif (fst_fac, snd_fac) == (-1, 1):
            node = b.elementwise("sub", [snd, fst], line)
        else:
            scaled_fst = b.elementwise("mul", [fst, self.constant(fst_fac)], line)
            scaled_snd = b.elementwise("mul", [snd, self.constant(snd_fac)], line)
            node = b.elementwise("add", [scaled_fst, scaled_snd], line)
        # A whole sum is a float in Tracr's evaluator where a term is: remember which.
        fst_values, snd_values = self.values(fst), self.values(snd)
        if len(fst_values) * len(snd_values) <= 20_000:
            for x in fst_values:
                for y in snd_values:
                    total = Fraction(fst_fac) * Fraction(x) + Fraction(snd_fac) * Fraction(y)
                    if total.denominator != 1:
                        continue
                    for xp in self.python_values(fst, x):
                        for yp in self.python_values(snd, y):
                            whole = isinstance(fst_fac * xp + snd_fac * yp, int)
                            self.remember(node, int(total), int(total) if whole else float(total))
        return node

    def select_all(self, selected):
        one = self.b.constant(1, self.line)
        return self.b.select(one, one, "eq" if selected else "ne", self.line)

    def select(self, e):
        r = self.rasp
        keys, queries = self.of(e.keys), self.of(e.queries)
        predicate = e.predicate
        if predicate is r.Comparison.TRUE or predicate is r.Comparison.FALSE:
            return self.select_all(predicate is r.Comparison.TRUE)
        native = _NATIVE_COMPARISONS.get(getattr(predicate, "name", None))
        if isinstance(predicate, r.Comparison) and native:
            values = self.values(keys) + self.values(queries)
            if all(_is_number(v) for v in values) or all(isinstance(v, str) and v != NONE
                                                         and not v.startswith(_OPAQUE[0]) for v in values):
                return self.b.select(keys, queries, native, self.line)

        def holds(k, q):
            # Tracr raises where the predicate does (a Comparison on None): nothing is selected.
            defined, selected, _ = self.call(lambda key, query: bool(predicate(key, query)), (keys, k), (queries, q),
                                             none_gives_none=False, shown=_callable_name(predicate))
            return defined and selected is True

        return self.select_table(keys, queries, holds)

    def select_table(self, keys, queries, holds):
        """A selector from any predicate: its table over the two value sets, written with as few
        comparisons as its shape allows, all of them reading `keys` on the key side and `queries`
        on the query side (so the compiler scores it in one head, as a table)."""
        b, line = self.b, self.line
        key_values, query_values = self.values(keys), self.values(queries)
        rows = {q: frozenset(k for k in key_values if holds(k, q)) for q in query_values}
        distinct = set(rows.values())
        everything = frozenset(key_values)
        if distinct <= {frozenset()}:
            return self.select_all(False)
        if distinct == {everything}:
            return self.select_all(True)
        if len(distinct) == 1:
            # Every query selects the same keys: a flag on the key side.
            (accepted,) = distinct
            flag = b.lookup(keys, key_values, [k in accepted for k in key_values], line)
            return b.select(flag, b.constant(True, line), "eq", line)
        if distinct <= {frozenset(), everything}:
            # A query selects every key or none: a flag on the query side.
            flag = b.lookup(queries, query_values, [rows[q] == everything for q in query_values], line)
            return b.select(b.constant(True, line), flag, "eq", line)
        if all(len(row) <= 1 for row in rows.values()):
            # Each query selects the keys holding one value (shift_by): compare keys with it.
            missing = NONE + NONE
            wanted = [next(iter(rows[q])) if rows[q] else missing for q in query_values]
            return b.select(keys, b.lookup(queries, query_values, wanted, line), "eq", line)
        # In general: one term per distinct non-empty row, "the key is in the row and the query's
        # row is this one", or'ed.
        selector = None
        for row in sorted(distinct - {frozenset()}, key=lambda s: sorted(map(repr, s))):
            key_flag = b.lookup(keys, key_values, [1 if k in row else 0 for k in key_values], line)
            query_flag = b.lookup(queries, query_values, [1 if rows[q] == row else 2 for q in query_values], line)
            term = b.select(key_flag, query_flag, "eq", line)
            selector = term if selector is None else b.select_or(selector, term, line)
        return selector


_NATIVE_COMPARISONS = {"EQ": "eq", "NEQ": "ne", "LT": "lt", "LEQ": "le", "GT": "gt", "GEQ": "ge"}


def _arguments(values):
    return ", ".join(f"{type(v).__name__} {v!r}" for v in values)


def _is_number(value):
    return isinstance(value, (int, Fraction)) and not isinstance(value, bool)


def _label(expr):
    # Residual labels are "name:value": a colon in a name would make them ambiguous.
    return expr.label.replace(":", "_").replace(" ", "_")


def _encoding(expr, encodings):
    """The annotation raspc gets for a Tracr s-op. Encodings change how a value is stored, not
    what it is, so Tracr's evaluator and raspc's interpreter agree whatever they are; they do
    change what compiles. With "tracr" (the default), Tracr's categorical (its default too) stays
    categorical: an aggregate that selects one value copies it, as in Tracr, where raspc alone
    would have to allow for a mean. Tracr's numerical is left to raspc, which makes an s-op
    numerical wherever a mean needs it, and merges opens - closes into one mean only where
    nothing is annotated. "explicit" passes only the annotations the program wrote; "raspc"
    none at all."""
    explicit = _explicit_encoding(expr)
    if encodings == "explicit":
        return explicit
    if encodings == "tracr" and explicit != "numerical":
        return "categorical"
    return None


def _explicit_encoding(expr):
    """"numerical" or "categorical" where the program says so; None where Tracr's default
    (categorical) applies, which leaves raspc to choose."""
    inner = getattr(expr.annotations, "_inner_dict", {})
    encoding = inner.get("encoding")
    return getattr(encoding, "value", None) if encoding is not None else None


def from_tracr(expr, vocab, max_seq_len, causal=False, encodings="tracr", means=()):
    """A raspc Program from a Tracr RASP expression (an SOp), for inputs over ``vocab`` of up to
    ``max_seq_len`` tokens; callables are tabulated on the values raspc infers for that domain.
    ``means``: Aggregates (the expressions) to compile as the mean of the selected values
    wherever raspc can, whatever ``encodings`` says (``compile_rasp_to_model`` names those where a
    copy failed verification)."""
    rasp = _rasp()
    if not isinstance(expr, rasp.SOp):
        raise raspc.CompileError(f"tracr: error: from_tracr takes a Tracr SOp (the program's output), "
                                 f"not {type(expr).__name__}")
    vocab = _vocabulary(vocab)
    max_seq_len = _max_seq_len(max_seq_len)
    if encodings not in ("tracr", "explicit", "raspc"):
        raise raspc.InputError(f"encodings: error: {encodings!r} is none of \"tracr\", \"explicit\", \"raspc\"")
    try:
        order = _topological(expr)
    except Exception as error:  # an expression whose children are not Tracr expressions
        raise raspc.CompileError(f"tracr: error: the program is not a graph of Tracr expressions "
                                 f"({type(error).__name__}: {error})") from None
    for e in order:
        if not isinstance(e, rasp.RASPExpr):
            raise raspc.CompileError(f"tracr: error: {e!r} ({type(e).__name__}) stands where a Tracr "
                                     "expression belongs")
    return _Converter(rasp, vocab, max_seq_len, bool(causal), encodings, means).convert(expr)


def _vocabulary(vocab):
    try:
        values = list(vocab)
    except TypeError:
        raise raspc.InputError(f"vocab: error: the vocabulary must be a set or list of tokens, "
                               f"not {type(vocab).__name__}") from None
    if not values:
        raise raspc.InputError("vocab: error: the vocabulary is empty")
    return values


def _max_seq_len(max_seq_len):
    if isinstance(max_seq_len, bool) or not isinstance(max_seq_len, int) or max_seq_len < 1:
        raise raspc.InputError(f"max_seq_len: error: {max_seq_len!r} is not a positive whole number")
    return max_seq_len


def evaluate(program, tokens, causal=None):
    """raspc's interpreter on a converted program, with Tracr's values in and out (None, tuples,
    floats for non-integer numbers)."""
    codec = program._codec
    if causal is None:
        causal = program.tracr_causal
    values = raspc.evaluate(program, [codec.to_raspc(t) for t in tokens], causal=causal)
    return [codec.to_python(v) for v in values]


# --- the second oracle: Tracr's own evaluator ------------------------------------------------------

# How many inputs Tracr's evaluator checks (it is Python, about a thousand times slower than
# raspc's interpreter): every input where there are at most this many, else at least this many,
# spread over the lengths (every input of the short lengths, the same number of random ones of
# each longer length).
TRACR_CHECK_INPUTS = 1000


def _check_inputs(vocab, max_seq_len, seed):
    """(inputs, how they were chosen): every input where there are at most TRACR_CHECK_INPUTS,
    else q random distinct inputs a length (all of a length with at most q), q the smallest number
    that makes TRACR_CHECK_INPUTS in all."""
    symbols = sorted(vocab, key=repr)
    counts = [len(symbols) ** n for n in range(1, max_seq_len + 1)]
    if sum(counts) <= TRACR_CHECK_INPUTS:
        inputs = [list(t) for n in range(1, max_seq_len + 1) for t in itertools.product(symbols, repeat=n)]
        return inputs, f"every input up to length {max_seq_len}"
    per_length = 1
    while sum(min(c, per_length) for c in counts) < TRACR_CHECK_INPUTS:
        per_length += 1
    rng = random.Random(seed)
    inputs, exhaustive = [], 0
    for n, count in enumerate(counts, start=1):
        if count <= per_length:
            inputs += [list(t) for t in itertools.product(symbols, repeat=n)]
            exhaustive = n
            continue
        chosen = set()
        while len(chosen) < per_length:
            chosen.add(tuple(rng.randrange(len(symbols)) for _ in range(n)))
        inputs += [[symbols[i] for i in t] for t in sorted(chosen)]
    how = f"{per_length} random inputs of each length {exhaustive + 1} to {max_seq_len}"
    if exhaustive:
        how = f"every input up to length {exhaustive}, then " + how
    return inputs, how


def _tracr_evaluator(rasp, causal):
    """Tracr's evaluator (its causal one for a causal model), remembering each expression's value
    for the input at hand: rasp.evaluate recomputes a shared subexpression once for every path to
    it, which is exponential in the depth of programs that reuse their parts. Every value is still
    Tracr's own eval_* method's."""
    base = rasp.DefaultRASPEvaluator
    if causal:
        try:
            from tracr.rasp import causal_eval
        except ImportError:
            return None
        base = causal_eval.CausalEvaluator

    class Remembering(base):
        def __init__(self):
            super().__init__()
            self.values = {}

        def evaluate(self, expr, xs):
            key = id(expr)
            if key not in self.values:
                self.values[key] = super().evaluate(expr, xs)
            return self.values[key]

        def run(self, expr, xs):
            self.values = {}
            try:
                return self.evaluate(expr, xs)
            finally:
                self.values = {}

    return Remembering()


def _same(got, expected, numerical, tolerance):
    """Whether a model's output (as Python) is Tracr's: the same value; a number within raspc's
    numerical output tolerance for a numerical output, and within a few float roundings
    otherwise (raspc's arithmetic is exact, Python's rounds at every step)."""
    if got is None or expected is None:
        return got is expected
    if isinstance(expected, bool) or isinstance(got, bool):
        return got == expected
    if isinstance(expected, (int, float, Fraction)) and isinstance(got, (int, float, Fraction)):
        got, expected = float(got), float(expected)
        if numerical:
            return abs(got - expected) <= tolerance * max(1.0, abs(expected))
        return got == expected or abs(got - expected) <= 64 * sys.float_info.epsilon * max(abs(got), abs(expected))
    return got == expected


def check_with_tracr(expr, model, seed=1):
    """Runs Tracr's own evaluator on the program as the user built it and compares it with the
    compiled model, on every input where there are at most TRACR_CHECK_INPUTS, else a sample of
    them (``_check_inputs``). Returns a report dict (``inputs``, ``chosen``, ``mismatches``,
    ``undefined``: inputs where Tracr's evaluator raises, as the interpreter's own report counts
    inputs where the program is undefined); raises CompileError on the first mismatch."""
    rasp = _rasp()
    program = model.program
    codec = program._codec
    evaluator = _tracr_evaluator(rasp, program.tracr_causal)
    if evaluator is None:
        return {"oracle": "none: this tracr has no causal evaluator (tracr.rasp.causal_eval)",
                "inputs": 0, "mismatches": 0, "undefined": 0, "chosen": ""}
    numerical = model.model.report.get("numerical_output", False)
    tolerance = _raspc.numerical_output_tolerance
    tokens_of = {v: t for v, t in zip(program.tracr_vocab, sorted(program.tracr_source_vocab, key=repr))}
    inputs, chosen = _check_inputs(program.tracr_vocab, program.max_seq_len, seed)
    checked = undefined = 0
    for atoms in inputs:
        tokens = [tokens_of[a] for a in atoms]
        try:
            expected = list(evaluator.run(expr, tokens))
        except Exception:
            undefined += 1  # Tracr's evaluator raises here (a mean of strings, a map that raises)
            continue
        try:
            got = model.model.forward(atoms, capture=False).outputs
        except raspc.UndefinedError:
            got = None
        checked += 1
        if got is None or len(got) != len(expected) or not all(
                _same(g, e, numerical, tolerance) for g, e in zip(got, expected)):
            name = program.filename
            raise raspc.CompileError(
                f"{name}: error: the compiled model disagrees with Tracr's evaluator (rasp.evaluate) on input "
                f"{tokens!r}: Tracr gives {expected!r}, the model {got!r}; raspc's conversion of this "
                f"program is wrong, please report it (raspc's own verification passed: "
                f"{model.model.report.get('inputs_checked', '?')} inputs against its interpreter)")
    return {"oracle": "tracr.rasp.evaluate" + (" (causal_eval)" if program.tracr_causal else ""),
            "inputs": checked, "undefined": undefined, "mismatches": 0, "chosen": chosen}


def compile_rasp_to_model(program, vocab, max_seq_len, causal=False, compiler_bos="compiler_bos",
                          compiler_pad="compiler_pad", mlp_exactness=100, **raspc_options):
    """Tracr's ``compile_rasp_to_model``, compiled by raspc: a verified GPT-2 (LayerNorm, GELU)
    instead of Tracr's bespoke transformer. ``mlp_exactness`` is accepted for Tracr's signature and
    not needed (raspc's MLPs are exact, verified). Further keyword arguments go to raspc.compile
    (layer_norm=False, activation="relu", samples=..., ...).

    Two oracles check the model: raspc's verification (the model against raspc's interpreter of the
    converted program), then Tracr's own evaluator on the program as built (``check_with_tracr``);
    ``.tracr_check`` says what the second one checked, ``.model.report`` the first. A model either
    oracle disagrees with raises CompileError."""
    del mlp_exactness
    check_special_tokens(_vocabulary(vocab), compiler_bos, compiler_pad)  # before the compile, not after
    means, refused = [], None
    while True:
        converted = from_tracr(program, vocab, max_seq_len, causal=causal, means=means)
        try:
            model = raspc.compile(converted, vocab=converted.tracr_vocab, max_len=max_seq_len,
                                  causal=bool(causal), **raspc_options)
            break
        except raspc.CompileError as error:
            # Tracr's categorical Aggregate copies the one value it selects; Tracr's evaluator
            # averages several. Where the copy departs from raspc's interpreter (which averages
            # too), compile that Aggregate as a mean, as Tracr's evaluator computes it.
            aggregate = converted.tracr_copies.get(error.departure)
            if aggregate is None or any(a is aggregate for a in means):
                if refused is None:
                    raise
                raise raspc.CompileError(f"{refused}\nnote: with {', '.join(converted.tracr_means)} averaged "
                                         f"instead, as Tracr's evaluator does, the program is refused too: "
                                         f"{error}") from None
            refused = refused or error
            means.append(aggregate)
    tracr_model = TracrModel(model, converted, compiler_bos, compiler_pad)
    tracr_model.averaged = list(converted.tracr_means)
    if raspc_options.get("verify", True):
        tracr_model.tracr_check = check_with_tracr(program, tracr_model, seed=raspc_options.get("seed", 1))
    else:
        tracr_model.tracr_check = {"oracle": "none (verify=False)", "inputs": 0, "mismatches": 0,
                                   "undefined": 0, "chosen": ""}
    return tracr_model
