// Expressions: compile-time values fold on the spot; anything touching an s-op or a selector
// becomes a node of the Program.
#include <algorithm>

#include "language/evaluate_internal.hpp"

namespace raspc {

void CDict::set(const Value& key, const CValue& value) {
  auto [found, added] = position_.emplace(key, keys.size());
  if (!added) {
    values[found->second] = value;
  } else {
    keys.push_back(key);
    values.push_back(value);
  }
}

const CValue* CDict::find(const Value& key) const {
  auto found = position_.find(key);
  return found == position_.end() ? nullptr : &values[found->second];
}

void Evaluator::charge(size_t steps, const Span& span) {
  steps_ += long(std::min<size_t>(steps, size_t(kMaxEvaluationSteps) + 1));
  if (steps_ > kMaxEvaluationSteps)
    fail_at(top_statement_.valid() ? top_statement_ : span,
            "this statement takes more than " + std::to_string(kMaxEvaluationSteps) +
                " steps of compile-time evaluation (raspc's limit); is a range, loop or comprehension larger than meant?");
}

void Evaluator::fail(const Span& span, const std::string& message) const {
  // Inside library code, the user's call is the place to look at.
  if (library_call_span_) fail_at(*library_call_span_, message + " (inside the library function `" + library_function_ + "`)");
  fail_at(span, message);
}

std::string Evaluator::describe(const CValue& v) const {
  switch (v.kind) {
    case CValue::Kind::Atom:
      switch (v.atom.kind) {
        case ValueKind::Number: return "a number";
        case ValueKind::Bool: return "a boolean";
        case ValueKind::String: return "a string";
      }
      break;
    case CValue::Kind::List: return "a list";
    case CValue::Kind::Dict: return "a dictionary";
    case CValue::Kind::Function:
    case CValue::Kind::Builtin: return "a function";
    case CValue::Kind::SOp: return "an s-op";
    case CValue::Kind::Selector: return "a selector";
  }
  return "a value";
}

NodeId Evaluator::add_node(Node node) {
  if (program_.nodes.size() >= size_t(kMaxProgramNodes))
    fail_at(top_statement_.valid() ? top_statement_ : node.span,
            "the program has more than " + std::to_string(kMaxProgramNodes) +
                " operations here (raspc's limit on the size of a program)");
  // A structural key: kind, inputs and parameters. Identical computations share one node.
  auto value_key = [](const Value& v) {
    std::string text(1, "nbs"[int(v.kind)]);
    switch (v.kind) {
      case ValueKind::Number: text += v.number.to_string(); break;
      case ValueKind::Bool: text += v.boolean ? "1" : "0"; break;
      case ValueKind::String: text += std::to_string(v.string_id); break;
    }
    return text;
  };
  std::string key = std::to_string(int(node.kind)) + ":" + std::to_string(int(node.op)) + ":" +
                    std::to_string(int(node.comparison)) + ":";
  for (NodeId in : node.inputs) key += std::to_string(in) + ",";
  if (node.kind == NodeKind::Constant) key += value_key(node.constant);
  if (node.kind == NodeKind::Aggregate) key += value_key(node.default_value);
  if (node.kind == NodeKind::Elementwise) {
    for (const Value& v : node.table_keys) (key += ";") += value_key(v);
    key += "|";
    for (const Value& v : node.table_values) (key += ";") += value_key(v);
  }
  if (node.kind == NodeKind::Tokens || node.kind == NodeKind::Indices) key += "input";
  auto found = node_index_.find(key);
  if (found != node_index_.end()) return found->second;
  NodeId id = NodeId(program_.nodes.size());
  program_.nodes.push_back(std::move(node));
  node_index_.emplace(std::move(key), id);
  return id;
}

NodeId Evaluator::constant(const Value& v, const Span& span) {
  Node n;
  n.kind = NodeKind::Constant;
  n.span = node_span(span);
  n.constant = v;
  return add_node(std::move(n));
}

NodeId Evaluator::elementwise(ElementOp op, const Span& span, std::vector<NodeId> inputs) {
  Node n;
  n.kind = NodeKind::Elementwise;
  n.span = node_span(span);
  n.op = op;
  n.inputs = std::move(inputs);
  return add_node(std::move(n));
}

NodeId Evaluator::as_sop(const CValue& v, const Span& span, const char* role) {
  if (v.is_sop()) return v.node;
  if (v.is_atom()) return constant(v.atom, span);
  fail(span, std::string(role) + " must be an s-op or an atom, not " + describe(v));
}

Value Evaluator::atom_of(const CValue& v, const Span& span, const char* role) const {
  if (!v.is_atom()) fail(span, std::string(role) + " must be an atom (a number, string or boolean), not " + describe(v));
  return v.atom;
}

Value Evaluator::fold(ElementOp op, const Span& span, std::vector<Value> inputs) const {
  Node n;
  n.kind = NodeKind::Elementwise;
  n.op = op;
  n.span = node_span(span);
  if (library_call_span_) {
    try {
      return apply_elementwise(n, inputs.data());
    } catch (const UserError& error) {
      // Re-say the atom error with the library's name; its text after "error: " is the sentence.
      std::string text = error.what();
      size_t start = text.find("error: ");
      size_t stop = text.find('\n', start);
      fail(span, text.substr(start + 7, stop - start - 7));
    }
  }
  return apply_elementwise(n, inputs.data());
}

CValue Evaluator::eval(const Expr& e, Env* env) {
  if (eval_depth_ >= kMaxEvalDepth) {
    if (!current_function_.empty())
      fail(current_call_, "the call of `" + current_function_ + "` nests too deeply (over " + std::to_string(kMaxEvalDepth) +
                       " levels of expressions and calls); does its recursion lack a base case?");
    fail(e.span, "this expression nests too deeply (over " + std::to_string(kMaxEvalDepth) + " levels)");
  }
  charge(1, e.span);
  ++eval_depth_;
  struct Leave {
    int& depth;
    ~Leave() { --depth; }
  } leave{eval_depth_};
  return eval_unguarded(e, env);
}

CValue Evaluator::eval_unguarded(const Expr& e, Env* env) {
  switch (e.kind) {
    case ExprKind::Number: return CValue::of_atom(Value::of_number(e.number));
    case ExprKind::String: return CValue::of_atom(Value::of_string(e.text));
    case ExprKind::Name: {
      const CValue* v = env->find(e.text);
      if (!v) undefined_name(e.text, e.span, env);
      return *v;
    }
    case ExprKind::List: {
      CList items;
      for (const auto& child : e.children) items.push_back(eval(*child, env));
      return CValue::of_list(std::move(items));
    }
    case ExprKind::Dict: {
      auto dict = std::make_shared<CDict>();
      for (size_t i = 0; i + 1 < e.children.size(); i += 2) {
        Value key = atom_of(eval(*e.children[i], env), e.children[i]->span, "a dictionary key");
        dict->set(key, eval(*e.children[i + 1], env));
      }
      CValue c;
      c.kind = CValue::Kind::Dict;
      c.dict = dict;
      return c;
    }
    case ExprKind::ListComp:
    case ExprKind::DictComp: return comprehension(e, env);
    case ExprKind::Index: return index(e, env);
    case ExprKind::Call: return call(e, env);
    case ExprKind::Unary: return unary(e, env);
    case ExprKind::Binary: return binary(e, env);
    case ExprKind::IfElse: return if_else(e, env);
    case ExprKind::In: return membership(e, env);
    case ExprKind::Select: return select(e, env);
  }
  return CValue();
}

CValue Evaluator::comprehension(const Expr& e, Env* env) {
  const Expr& iterable_expr = *e.children.back();
  std::vector<CValue> items = iterate(eval(iterable_expr, env), iterable_expr.span);
  Env* scope = new_env(env);  // like Python 3, the loop variable stays inside the comprehension
  Context ctx{scope, false};
  CList results;
  auto dict = std::make_shared<CDict>();
  for (const CValue& item : items) {
    bind_loop_names(e.loop_names, e.loop_name_spans, item, iterable_expr.span, ctx);
    if (e.kind == ExprKind::ListComp) {
      results.push_back(eval(*e.children[0], scope));
    } else {
      Value key = atom_of(eval(*e.children[0], scope), e.children[0]->span, "a dictionary key");
      dict->set(key, eval(*e.children[1], scope));
    }
  }
  if (e.kind == ExprKind::ListComp) return CValue::of_list(std::move(results));
  CValue c;
  c.kind = CValue::Kind::Dict;
  c.dict = dict;
  return c;
}

CValue Evaluator::unary(const Expr& e, Env* env) {
  CValue operand = eval(*e.children[0], env);
  ElementOp op = e.unary == UnaryOp::Not ? ElementOp::Not : (e.unary == UnaryOp::Neg ? ElementOp::Neg : ElementOp::Pos);
  if (operand.is_atom()) return CValue::of_atom(fold(op, e.span, {operand.atom}));
  if (operand.is_sop()) return CValue::of_node(elementwise(op, e.span, {operand.node}), false);
  if (operand.is_selector() && op == ElementOp::Not) {
    Node n;
    n.kind = NodeKind::SelectNot;
    n.span = node_span(e.span);
    n.inputs = {operand.node};
    return CValue::of_node(add_node(std::move(n)), true);
  }
  if (operand.is_selector())
    fail(e.operator_span, std::string("cannot apply `") + (op == ElementOp::Neg ? "-" : "+") +
                              "` to a selector; selectors combine only with `and`, `or` and `not`");
  const char* verb = op == ElementOp::Not ? "apply `not` to " : (op == ElementOp::Neg ? "negate " : "apply unary `+` to ");
  fail(e.span, std::string("cannot ") + verb + describe(operand));
}

namespace {

ElementOp element_op(BinaryOp op) {
  switch (op) {
    case BinaryOp::Pow: return ElementOp::Pow;
    case BinaryOp::Mul: return ElementOp::Mul;
    case BinaryOp::Div: return ElementOp::Div;
    case BinaryOp::Mod: return ElementOp::Mod;
    case BinaryOp::Add: return ElementOp::Add;
    case BinaryOp::Sub: return ElementOp::Sub;
    case BinaryOp::Eq: return ElementOp::Eq;
    case BinaryOp::Lt: return ElementOp::Lt;
    case BinaryOp::Gt: return ElementOp::Gt;
    case BinaryOp::Le: return ElementOp::Le;
    case BinaryOp::Ge: return ElementOp::Ge;
    case BinaryOp::And: return ElementOp::And;
    case BinaryOp::Or: return ElementOp::Or;
  }
  return ElementOp::Add;
}

const char* verb_of(BinaryOp op) {
  switch (op) {
    case BinaryOp::Pow: return "raise";
    case BinaryOp::Mul: return "multiply";
    case BinaryOp::Div: return "divide";
    case BinaryOp::Mod: return "take the remainder of";
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "subtract";
    case BinaryOp::Eq:
    case BinaryOp::Lt:
    case BinaryOp::Gt:
    case BinaryOp::Le:
    case BinaryOp::Ge: return "compare";
    case BinaryOp::And: return "combine with `and`";
    case BinaryOp::Or: return "combine with `or`";
  }
  return "combine";
}

}  // namespace

CValue Evaluator::binary(const Expr& e, Env* env) {
  CValue left = eval(*e.children[0], env);
  CValue right = eval(*e.children[1], env);
  ElementOp op = element_op(e.binary);
  if (left.is_selector() || right.is_selector()) {
    if (left.is_selector() && right.is_selector() && (e.binary == BinaryOp::And || e.binary == BinaryOp::Or)) {
      Node n;
      n.kind = e.binary == BinaryOp::And ? NodeKind::SelectAnd : NodeKind::SelectOr;
      n.span = node_span(e.span);
      n.inputs = {left.node, right.node};
      return CValue::of_node(add_node(std::move(n)), true);
    }
    if (e.binary == BinaryOp::And || e.binary == BinaryOp::Or)
      fail(e.span, std::string("cannot ") + verb_of(e.binary) + " " + describe(left) + " and " + describe(right) +
                       "; `and`/`or` combine two selectors or two s-ops");
    fail(e.span, std::string("cannot ") + verb_of(e.binary) + " " + describe(left) + " and " + describe(right) +
                     "; selectors combine only with `and`, `or` and `not`");
  }
  // Joining strings or lists copies them: the copy is work too, or doubling one would fill the memory in 40 steps.
  if (left.is_atom() && right.is_atom()) {
    if (left.atom.is_string() && right.atom.is_string())
      charge(left.atom.string().size() + right.atom.string().size(), e.span);
    return CValue::of_atom(fold(op, e.span, {left.atom, right.atom}));
  }
  if (left.is_sop() || right.is_sop()) {
    if ((left.is_sop() || left.is_atom()) && (right.is_sop() || right.is_atom())) {
      NodeId a = as_sop(left, e.children[0]->span, "an operand");
      NodeId b = as_sop(right, e.children[1]->span, "an operand");
      return CValue::of_node(elementwise(op, e.span, {a, b}), false);
    }
  }
  if (left.kind == CValue::Kind::List && right.kind == CValue::Kind::List && e.binary == BinaryOp::Add) {
    charge(left.list->size() + right.list->size(), e.span);
    CList joined = *left.list;
    joined.insert(joined.end(), right.list->begin(), right.list->end());
    return CValue::of_list(std::move(joined));
  }
  fail(e.span, std::string("cannot ") + verb_of(e.binary) + " " + describe(left) + " and " + describe(right));
}

CValue Evaluator::if_else(const Expr& e, Env* env) {
  CValue condition = eval(*e.children[1], env);
  // A compile-time condition chooses a branch without evaluating the other (recursion needs this).
  if (condition.is_atom()) {
    Node negate;
    negate.op = ElementOp::Not;
    bool falsy = apply_elementwise(negate, &condition.atom).boolean;
    return eval(*e.children[falsy ? 2 : 0], env);
  }
  if (!condition.is_sop()) fail(e.children[1]->span, "the condition of `if` must be an s-op or an atom, not " + describe(condition));
  CValue then = eval(*e.children[0], env);
  CValue otherwise = eval(*e.children[2], env);
  NodeId a = as_sop(then, e.children[0]->span, "the value before `if`");
  NodeId b = as_sop(otherwise, e.children[2]->span, "the value after `else`");
  return CValue::of_node(elementwise(ElementOp::IfElse, e.span, {a, condition.node, b}), false);
}

CValue Evaluator::membership(const Expr& e, Env* env) {
  CValue element = eval(*e.children[0], env);
  CValue container = eval(*e.children[1], env);
  const Span& container_span = e.children[1]->span;
  if (container.is_sop()) {
    if (!element.is_atom())
      fail(e.span, "`in` with an s-op on the right needs an atom on the left (`\"a\" in tokens`), not " + describe(element));
    // One attention step: does any position hold the atom?
    Node sel;
    sel.kind = NodeKind::Select;
    sel.span = node_span(e.span);
    sel.comparison = Comparison::Eq;
    sel.inputs = {container.node, constant(element.atom, e.children[0]->span)};
    NodeId selector = add_node(std::move(sel));
    Node agg;
    agg.kind = NodeKind::Aggregate;
    agg.span = node_span(e.span);
    agg.inputs = {selector, constant(Value::of_int(1), e.span)};
    agg.default_value = Value::of_int(0);
    NodeId mean = add_node(std::move(agg));
    return CValue::of_node(elementwise(ElementOp::Eq, e.span, {mean, constant(Value::of_int(1), e.span)}), false);
  }
  std::vector<Value> keys;
  if (container.kind == CValue::Kind::List) {
    for (const CValue& item : *container.list) {
      if (!item.is_atom()) fail(container_span, "`in` needs a list of atoms here, but the list holds " + describe(item));
      keys.push_back(item.atom);
    }
  } else if (container.kind == CValue::Kind::Dict) {
    keys = container.dict->keys;
  } else if (container.is_atom() && container.atom.is_string()) {
    if (element.is_atom()) {
      if (!element.atom.is_string())
        fail(e.span, "`in` with a string on the right needs a string on the left, not " + describe(element));
      return CValue::of_atom(Value::of_bool(container.atom.string().find(element.atom.string()) != std::string::npos));
    }
    for (char c : container.atom.string()) keys.push_back(Value::of_string(std::string(1, c)));
  } else {
    fail(container_span, "the right side of `in` must be a list, a dictionary, a string or an s-op, not " + describe(container));
  }
  if (element.is_atom())
    return CValue::of_atom(Value::of_bool(std::find(keys.begin(), keys.end(), element.atom) != keys.end()));
  if (!element.is_sop()) fail(e.children[0]->span, "the left side of `in` must be an atom or an s-op, not " + describe(element));
  Node n;
  n.kind = NodeKind::Elementwise;
  n.op = ElementOp::InTable;
  n.span = node_span(e.span);
  n.inputs = {element.node};
  n.table_keys = std::move(keys);
  return CValue::of_node(add_node(std::move(n)), false);
}

CValue Evaluator::index(const Expr& e, Env* env) {
  CValue indexed = eval(*e.children[0], env);
  CValue position = eval(*e.children[1], env);
  const Span& index_span = e.children[1]->span;
  auto integer_index = [&](size_t size) -> size_t {
    Value v = position.atom;
    int64_t i;
    if (v.is_bool()) i = v.boolean;
    else if (v.is_number() && v.number.is_integer()) {
      if (!v.number.to_int64(i)) fail(index_span, "index " + to_display(v) + " is out of range for " + describe(indexed));
    } else {
      fail(index_span, "an index must be an integer, not " + (v.is_number() ? to_display(v) : describe(position)));
    }
    int64_t n = int64_t(size);
    if (i < -n || i >= n)
      fail(index_span, "index " + std::to_string(i) + " is out of range for " + describe(indexed) + " of length " +
                           std::to_string(n));
    return size_t(i < 0 ? i + n : i);
  };
  if (indexed.is_sop()) {
    if (!position.is_atom())
      fail(index_span, "an s-op can only be indexed by an integer (`tokens[0]`), not by " + describe(position));
    Value v = position.atom;
    if (!(v.is_number() && v.number.is_integer()) && !v.is_bool())
      fail(index_span, "an index must be an integer, not " + to_source(v));
    int64_t i = v.boolean;
    if (!v.is_bool() && !v.number.to_int64(i))
      fail(index_span, "index " + to_display(v) + " is out of range: no input is that long");
    // sop[i] reads position i everywhere: aggregate(select(indices, i, ==), sop); a negative i
    // counts from the end, so it reads position length + i.
    NodeId target;
    if (i >= 0) {
      target = constant(Value::of_int(i), index_span);
    } else {
      const CValue* length = library_->find("length");
      target = elementwise(ElementOp::Add, e.span, {length->node, constant(Value::of_int(i), index_span)});
    }
    const CValue* indices = library_->find("indices");
    Node sel;
    sel.kind = NodeKind::Select;
    sel.span = node_span(e.span);
    sel.comparison = Comparison::Eq;
    sel.inputs = {indices->node, target};
    NodeId selector = add_node(std::move(sel));
    Node agg;
    agg.kind = NodeKind::Aggregate;
    agg.span = node_span(e.span);
    agg.inputs = {selector, indexed.node};
    agg.default_value = Value::of_int(0);
    return CValue::of_node(add_node(std::move(agg)), false);
  }
  if (position.is_sop()) {
    // list[sop], dict[sop], "str"[sop]: a lookup table applied at every position.
    Node n;
    n.kind = NodeKind::Elementwise;
    n.op = ElementOp::LookupTable;
    n.span = node_span(e.span);
    n.inputs = {position.node};
    if (indexed.kind == CValue::Kind::List) {
      for (size_t i = 0; i < indexed.list->size(); ++i) {
        const CValue& item = (*indexed.list)[i];
        if (!item.is_atom())
          fail(e.children[0]->span, "a list indexed by an s-op must hold atoms, but it holds " + describe(item));
        n.table_keys.push_back(Value::of_int(int64_t(i)));
        n.table_values.push_back(item.atom);
      }
    } else if (indexed.kind == CValue::Kind::Dict) {
      for (size_t i = 0; i < indexed.dict->keys.size(); ++i) {
        const CValue& item = indexed.dict->values[i];
        if (!item.is_atom())
          fail(e.children[0]->span, "a dictionary indexed by an s-op must hold atoms, but it holds " + describe(item));
        n.table_keys.push_back(indexed.dict->keys[i]);
        n.table_values.push_back(item.atom);
      }
    } else if (indexed.is_atom() && indexed.atom.is_string()) {
      const std::string& text = indexed.atom.string();
      for (size_t i = 0; i < text.size(); ++i) {
        n.table_keys.push_back(Value::of_int(int64_t(i)));
        n.table_values.push_back(Value::of_string(std::string(1, text[i])));
      }
    } else {
      fail(e.children[0]->span, "only a list, a dictionary or a string can be indexed by an s-op, not " + describe(indexed));
    }
    return CValue::of_node(add_node(std::move(n)), false);
  }
  if (indexed.kind == CValue::Kind::Dict) {
    Value key = atom_of(position, index_span, "a dictionary key");
    const CValue* found = indexed.dict->find(key);
    if (!found) fail(index_span, "the dictionary has no key " + to_source(key));
    return *found;
  }
  if (indexed.kind == CValue::Kind::List) {
    if (!position.is_atom()) fail(index_span, "a list index must be an integer, not " + describe(position));
    return (*indexed.list)[integer_index(indexed.list->size())];
  }
  if (indexed.is_atom() && indexed.atom.is_string()) {
    if (!position.is_atom()) fail(index_span, "a string index must be an integer, not " + describe(position));
    const std::string& text = indexed.atom.string();
    return CValue::of_atom(Value::of_string(std::string(1, text[integer_index(text.size())])));
  }
  fail(e.children[0]->span, "cannot index " + describe(indexed) + "; only lists, dictionaries, strings and s-ops can be indexed");
}

CValue Evaluator::select(const Expr& e, Env* env) {
  CValue keys = eval(*e.children[0], env);
  CValue queries = eval(*e.children[1], env);
  Node n;
  n.kind = NodeKind::Select;
  n.span = node_span(e.span);
  n.comparison = e.comparison;
  NodeId k = as_sop(keys, e.children[0]->span, "the keys of `select`");
  NodeId q = as_sop(queries, e.children[1]->span, "the queries of `select`");
  n.inputs = {k, q};
  return CValue::of_node(add_node(std::move(n)), true);
}

}  // namespace raspc
