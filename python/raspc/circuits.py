"""Ground truth for circuit discovery: a compiled model's circuit, interventions the interpreter
predicts, and scores for circuits a method finds.

    model = raspc.compile(raspc.Program.from_file("programs/hist.rasp"), max_len=5)
    truth = model.circuit()              # nodes and edges, with TransformerLens's hook names
    model.patch("abbd", "aaab", "hist")  # the model beside the interpreter's prediction
    raspc.circuits.score({"a0.0", "m0"}, truth)

Nodes are "embed", "pos_embed", "aL.H" (layer L's head H), "mL" (layer L's MLP) and "unembed";
edges are (from, to, via) with via one of "q", "k", "v", "mlp_in", "unembed", or (from, to) for
the pair. The C++ library computes all of it (circuit/ in the repository); this module converts.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Union

from . import _raspc
from .errors import InputError

Edge = tuple  # (from, to) or (from, to, via)


class Circuit:
    """The circuit of a compiled model (``Model.circuit()``; ``raspc circuit --json`` prints the
    same): ``nodes`` and ``edges`` as docs/json.md describes them, read off the weights."""

    def __init__(self, model, data: dict, text: str):
        self.model = model
        self.nodes: list[dict[str, Any]] = data["nodes"]
        self.edges: list[dict[str, Any]] = data["edges"]
        self._text = text

    def json(self) -> dict[str, Any]:
        """The object ``raspc circuit --json`` prints."""
        return {"nodes": self.nodes, "edges": self.edges}

    def node_ids(self, in_circuit: bool = True) -> list[str]:
        """The heads and MLPs in the circuit (``in_circuit=False``: those outside it)."""
        return [n["id"] for n in self.nodes if n["kind"] in ("head", "mlp") and n["in_circuit"] == in_circuit]

    def edge_list(self, in_circuit: bool = True, by_pair: bool = False) -> list[Edge]:
        """The edges in the circuit as (from, to, via), or (from, to) with ``by_pair``."""
        edges = [(e["from"], e["to"], e["via"]) for e in self.edges if e["in_circuit"] == in_circuit]
        if by_pair:
            return list(dict.fromkeys((f, t) for f, t, _ in edges))
        return edges

    def full_graph(self) -> list[Edge]:
        """Every edge the model's graph could have, (from, to, via): what an edge-scoring method
        scores, and the negatives of ``score``'s ROC AUC."""
        return [tuple(e) for e in _raspc.full_graph_edges(self.model._native)]

    def edge_from_hooks(self, parent: str, parent_head: Optional[int], child: str,
                        child_head: Optional[int]) -> Edge:
        """An edge named as ACDC names it (sender hook and head index, receiver hook and head index:
        ``("blocks.0.attn.hook_result", 1, "blocks.1.hook_q_input", 0)``) as (from, to, via)."""
        return tuple(_raspc.edge_from_hooks(self.model._native, _text(parent), _head(parent_head),
                                            _text(child), _head(child_head)))

    def __repr__(self):
        return self._text.rstrip("\n")


class Intervention:
    """One intervention (``Model.patch``, ``Model.ablate``): the model's outputs without and with
    it, the interpreter's prediction (None, with ``no_prediction`` saying why, when the program
    says nothing of it), whether they agree and whether the intervention changed the output."""

    def __init__(self, model, data: dict):
        value = model._output_value
        self.description: str = data["description"]
        self.clean: list = [value(v) for v in data["clean"]]
        self.model: list = [value(v) for v in data["model"]]
        self.predicted: Optional[list] = None if data["predicted"] is None else [value(v) for v in data["predicted"]]
        self.no_prediction: Optional[str] = data["no_prediction"]
        self.agree: Optional[bool] = data["agree"]
        self.changed: bool = data["changed"]

    def __repr__(self):
        predicted = self.predicted if self.predicted is not None else f"no prediction: {self.no_prediction}"
        return (f"Intervention({self.description}: model {self.clean} -> {self.model}, "
                f"interpreter {predicted}, agree={self.agree})")


class InterventionReport(dict):
    """What ``Model.verify_interventions`` found: the JSON of ``raspc verify-interventions --json``
    as a dict, printed as the command prints it."""

    def __init__(self, data: dict, text: str):
        super().__init__(data)
        self._text = text

    @property
    def failures(self) -> int:
        return self["failures"]

    def __repr__(self):
        return self._text.rstrip("\n")


def score(found: Union[Iterable, Mapping, Circuit], truth: Circuit) -> dict[str, Any]:
    """Scores a discovered circuit against ``truth`` (``Model.circuit()``).

    ``found`` is an iterable of node ids ("a0.1", "m0") and edges ((from, to) or (from, to, via)),
    a dict from edges to scores (higher: more likely in the circuit) for the ROC AUC, or a Circuit.
    Returns node and edge precision and recall (None where undefined, and for scored edges), the
    ROC AUC over the model's full graph (unscored edges rank last), and the counts. Nodes count the
    heads and MLPs only; edges are compared by (from, to) when any edge found names no side."""
    if not isinstance(truth, Circuit):
        raise InputError(f"truth: error: must be a raspc.circuits.Circuit (Model.circuit()), not {type(truth).__name__}")
    if isinstance(found, Circuit):
        found = found.node_ids() + found.edge_list()
    nodes, edges, scores = [], [], None
    if isinstance(found, Mapping):
        scores = []
        for edge, value in found.items():
            edges.append(_edge(edge))
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
                raise InputError(f"found: error: the score of {edge!r:.60} must be a number, not {value!r:.60}")
            scores.append(float(value))
    else:
        try:
            if isinstance(found, (str, bytes)):
                raise TypeError
            items = list(found)
        except TypeError:  # not iterable (a 0-d numpy array says so only when iterated)
            raise InputError(f"found: error: must be a collection of node ids and edges, not {found!r:.60}") from None
        for item in items:
            if isinstance(item, str):
                nodes.append(_text(item, "found"))
            else:
                edges.append(_edge(item))
    return _raspc.score(truth.model._native, nodes, edges, scores)


def _edge(item) -> tuple[str, str, str]:
    if isinstance(item, tuple) and len(item) in (2, 3) and all(isinstance(part, str) for part in item):
        return (_text(item[0], "found"), _text(item[1], "found"), _text(item[2], "found") if len(item) == 3 else "")
    raise InputError(f"found: error: {item!r:.60} is neither a node id nor an edge (from, to) or (from, to, via)")


def _text(value, name="hook") -> str:
    if not isinstance(value, str):
        raise InputError(f"{name}: error: must be text, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{name}: error: {value!r:.60} is not valid text (it holds a lone surrogate)") from None
    return value


def _head(value) -> int:
    if value is None:
        return -1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise InputError(f"head: error: must be a head index (int >= 0) or None, not {value!r}")
    return value
