// Building a Program node by node from Python (raspc.from_tracr), with the value sets the
// compiler's inference (compiler/infer.cpp) gives each s-op, so that Python callables can be
// tabulated on exactly the values they will see. Every node points at one line of a listing the
// caller writes (one line per Tracr expression), so errors are located there.
#include <pybind11/stl.h>

#include "compiler/ir.hpp"
#include "python/src/bindings.hpp"

namespace raspc::python {

namespace {

const std::map<std::string, ElementOp>& element_ops() {
  static const std::map<std::string, ElementOp> ops = {
      {"neg", ElementOp::Neg}, {"not", ElementOp::Not}, {"add", ElementOp::Add}, {"sub", ElementOp::Sub},
      {"mul", ElementOp::Mul}, {"div", ElementOp::Div}, {"eq", ElementOp::Eq},   {"lt", ElementOp::Lt},
      {"gt", ElementOp::Gt},   {"le", ElementOp::Le},   {"ge", ElementOp::Ge},   {"and", ElementOp::And},
      {"or", ElementOp::Or}};
  return ops;
}

const std::map<std::string, Comparison>& comparisons() {
  static const std::map<std::string, Comparison> cmps = {{"eq", Comparison::Eq}, {"ne", Comparison::Ne},
                                                         {"lt", Comparison::Lt}, {"gt", Comparison::Gt},
                                                         {"le", Comparison::Le}, {"ge", Comparison::Ge}};
  return cmps;
}

// What a node's input must be: the builder checks every call, so that no ill-typed program (an
// s-op where a selector belongs) ever reaches the interpreter, the compiler or the verifier.
enum class Role { Sop, Selector };

const char* role_name(Role role) { return role == Role::Sop ? "an s-op" : "a selector"; }

// How many inputs an elementwise operation takes (-1: one or more).
int arity(ElementOp op) {
  switch (op) {
    case ElementOp::Neg: case ElementOp::Pos: case ElementOp::Not: case ElementOp::Round:
    case ElementOp::Indicator: case ElementOp::InTable: case ElementOp::LookupTable:
      return 1;
    case ElementOp::IfElse: return 3;
    case ElementOp::Tuple: return -1;
    default: return 2;
  }
}

class ProgramBuilder {
 public:
  ProgramBuilder(const std::string& name, const std::string& listing) {
    auto file = std::make_shared<SourceFile>();
    file->name = name;
    file->text = listing;
    line_starts_.push_back(0);
    for (size_t i = 0; i < listing.size(); ++i)
      if (listing[i] == '\n') line_starts_.push_back(uint32_t(i + 1));
    source_ = file;
  }

  // A node of `kind` whose inputs play `roles` (one role a input); a wrong count, an unknown
  // node or an input of the wrong kind is a CompileError at `line` of the listing.
  NodeId add(NodeKind kind, std::vector<NodeId> inputs, const std::vector<Role>& roles, int line,
             const char* what) {
    const Span where = span_of(line);
    if (inputs.size() != roles.size())
      fail_at(where, std::string(what) + " takes " + std::to_string(roles.size()) + " input" +
                         (roles.size() == 1 ? "" : "s") + ", not " + std::to_string(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Node& input = node_at(inputs[i], line);
      const Role actual = input.is_selector() ? Role::Selector : Role::Sop;
      if (actual != roles[i])
        fail_at(where, std::string(what) + "'s input " + std::to_string(i + 1) + " must be " + role_name(roles[i]) +
                           ", but `" + describe(inputs[i]) + "` is " + role_name(actual));
    }
    Node node;
    node.kind = kind;
    node.inputs = std::move(inputs);
    node.span = where;
    program_.nodes.push_back(std::move(node));
    return NodeId(program_.nodes.size() - 1);
  }

  // A node made earlier by this builder; any other id is a CompileError at `line`.
  Node& node_at(NodeId id, int line) {
    if (id < 0 || id >= NodeId(program_.nodes.size()))
      fail_at(span_of(line), "no expression " + std::to_string(id) + " has been built (this builder made " +
                                 std::to_string(program_.nodes.size()) + ")");
    return program_.nodes[size_t(id)];
  }

  // A Python value as an atom; anything RASP has no atom for is a CompileError at `line`.
  Value value_at(const py::handle& object, const char* what, int line) {
    try {
      return from_python(object, what);
    } catch (const py::builtin_exception& error) {
      fail_at(span_of(line), error.what());
    } catch (py::error_already_set& error) {
      fail_at(span_of(line), std::string(what) + ": " + error.what());
    }
  }
  std::vector<Value> values_at(const py::handle& sequence, const char* what, int line) {
    if (!py::isinstance<py::sequence>(sequence) || py::isinstance<py::str>(sequence))
      fail_at(span_of(line), std::string(what) + " must be a list of values");
    std::vector<Value> values;
    for (const py::handle item : sequence) values.push_back(value_at(item, what, line));
    return values;
  }

  void set_name(NodeId id, const std::string& name) {
    Node& named = node_at(id, 0);
    for (const auto& [other, _] : program_.named)
      if (other == name) fail_at(named.span, "two expressions are named `" + name + "`; names must be unique");
    named.name = name;
    program_.named.emplace_back(name, id);
  }

  py::list value_set(NodeId id, const py::handle& vocab, int max_len, bool causal) {
    const Node& sop = node_at(id, 0);
    if (sop.is_selector()) fail_at(sop.span, "a selector has no values: only an s-op's values can be listed");
    CompileOptions options;
    options.vocab = values_at(vocab, "vocab", 0);
    options.max_len = max_len;
    options.mode = causal ? Mode::Causal : Mode::Bidirectional;
    Program partial = program_;
    partial.output = id;
    compiler::Inference inference;
    {
      py::gil_scoped_release release;
      // Past the 2,048 values a model holds: the compile refuses what it cannot build (a key a
      // rewrite removes may take more, Tracr's sort keys `x + i * eps` at long lengths).
      inference = compiler::infer(partial, options, /*past_model_limit=*/true);
    }
    const compiler::SopInfo& info = inference.info[size_t(id)];
    if (!info.values_known)
      fail_at(program_.node(id).span, "raspc cannot list the values this s-op takes (" + info.why + ")");
    return to_python(info.values);
  }

  std::shared_ptr<PyProgram> build(NodeId output) {
    const Node& result_node = node_at(output, 0);
    if (result_node.is_selector())
      fail_at(result_node.span, "a program outputs an s-op, not a selector");
    auto result = std::make_shared<PyProgram>();
    result->program = program_;
    result->program.output = output;
    result->source = source_;
    return result;
  }

  Span span_of(int line) const {
    if (line < 1 || size_t(line) > line_starts_.size()) return Span{source_, 0, 0};
    uint32_t begin = line_starts_[size_t(line - 1)];
    uint32_t end = size_t(line) < line_starts_.size() ? line_starts_[size_t(line)] - 1 : uint32_t(source_->text.size());
    return Span{source_, begin, std::max(end, begin + 1)};
  }

 private:
  // The listing's line that made node `id`, as the user wrote it.
  std::string describe(NodeId id) const {
    const Span& span = program_.nodes[size_t(id)].span;
    if (!span.valid() || span.end <= span.begin) return "expression " + std::to_string(id);
    std::string text = source_->text.substr(span.begin, span.end - span.begin);
    return text.size() > 80 ? text.substr(0, 77) + "..." : text;
  }

  Program program_;
  std::shared_ptr<const SourceFile> source_;
  std::vector<uint32_t> line_starts_;
};

}  // namespace

void bind_builder(py::module_& module) {
  // Every call runs under translating_errors: whatever a caller passes, a mistake is a
  // raspc.CompileError located in the listing, never a crash or a bare Python exception.
  using B = ProgramBuilder;
  auto compile_errors = [](auto body) { return translating_errors("CompileError", body); };
  py::class_<ProgramBuilder>(module, "ProgramBuilder")
      .def(py::init<const std::string&, const std::string&>(), py::arg("name"), py::arg("listing"))
      .def("tokens", [=](B& b, int line) { return compile_errors([&] { return b.add(NodeKind::Tokens, {}, {}, line, "tokens"); }); })
      .def("indices", [=](B& b, int line) { return compile_errors([&] { return b.add(NodeKind::Indices, {}, {}, line, "indices"); }); })
      .def("constant",
           [=](B& b, const py::object& value, int line) {
             return compile_errors([&] {
               Value atom = b.value_at(value, "constant", line);
               NodeId id = b.add(NodeKind::Constant, {}, {}, line, "a constant");
               b.node_at(id, line).constant = atom;
               return id;
             });
           })
      .def("lookup",
           [=](B& b, NodeId input, const py::object& keys, const py::object& values, int line) {
             return compile_errors([&] {
               std::vector<Value> table_keys = b.values_at(keys, "table keys", line);
               std::vector<Value> table_values = b.values_at(values, "table values", line);
               if (table_keys.size() != table_values.size())
                 fail_at(b.span_of(line), "a lookup table needs as many values as keys");
               NodeId id = b.add(NodeKind::Elementwise, {input}, {Role::Sop}, line, "a lookup table");
               Node& node = b.node_at(id, line);
               node.op = ElementOp::LookupTable;
               node.table_keys = std::move(table_keys);
               node.table_values = std::move(table_values);
               return id;
             });
           })
      .def("elementwise",
           [=](B& b, const std::string& op_name, std::vector<NodeId> inputs, int line) {
             return compile_errors([&] {
               auto found = element_ops().find(op_name);
               if (found == element_ops().end()) fail_at(b.span_of(line), "unknown operation \"" + op_name + "\"");
               const ElementOp op = found->second;
               const int n = arity(op) < 0 ? std::max<int>(1, int(inputs.size())) : arity(op);
               NodeId id = b.add(NodeKind::Elementwise, std::move(inputs), std::vector<Role>(size_t(n), Role::Sop), line,
                                 ("operation \"" + op_name + "\"").c_str());
               b.node_at(id, line).op = op;
               return id;
             });
           })
      .def("select",
           [=](B& b, NodeId keys, NodeId queries, const std::string& cmp, int line) {
             return compile_errors([&] {
               auto found = comparisons().find(cmp);
               if (found == comparisons().end()) fail_at(b.span_of(line), "unknown comparison \"" + cmp + "\"");
               NodeId id = b.add(NodeKind::Select, {keys, queries}, {Role::Sop, Role::Sop}, line, "Select");
               b.node_at(id, line).comparison = found->second;
               return id;
             });
           })
      .def("select_and",
           [=](B& b, NodeId x, NodeId y, int line) {
             return compile_errors(
                 [&] { return b.add(NodeKind::SelectAnd, {x, y}, {Role::Selector, Role::Selector}, line, "SelectorAnd"); });
           })
      .def("select_or",
           [=](B& b, NodeId x, NodeId y, int line) {
             return compile_errors(
                 [&] { return b.add(NodeKind::SelectOr, {x, y}, {Role::Selector, Role::Selector}, line, "SelectorOr"); });
           })
      .def("select_not",
           [=](B& b, NodeId x, int line) {
             return compile_errors([&] { return b.add(NodeKind::SelectNot, {x}, {Role::Selector}, line, "SelectorNot"); });
           })
      .def("aggregate",
           [=](B& b, NodeId selector, NodeId sop, const py::object& default_value, int line) {
             return compile_errors([&] {
               Value fallback = b.value_at(default_value, "default", line);
               NodeId id = b.add(NodeKind::Aggregate, {selector, sop}, {Role::Selector, Role::Sop}, line, "Aggregate");
               b.node_at(id, line).default_value = fallback;
               return id;
             });
           })
      .def("selector_width",
           [=](B& b, NodeId selector, int line) {
             return compile_errors(
                 [&] { return b.add(NodeKind::SelectorWidth, {selector}, {Role::Selector}, line, "SelectorWidth"); });
           })
      .def("set_name", [=](B& b, NodeId id, const std::string& name) { compile_errors([&] { b.set_name(id, name); }); })
      .def("annotate",
           [=](B& b, NodeId id, const std::string& encoding) {
             compile_errors([&] {
               Node& node = b.node_at(id, 0);
               if (encoding == "numerical") node.annotation = Encoding::Numerical;
               else if (encoding == "categorical") node.annotation = Encoding::Categorical;
               else fail_at(node.span, "unknown encoding \"" + encoding + "\" (numerical or categorical)");
             });
           })
      .def("value_set",
           [=](B& b, NodeId id, const py::object& vocab, int max_len, bool causal) {
             return compile_errors([&] { return b.value_set(id, vocab, max_len, causal); });
           },
           py::arg("id"), py::arg("vocab"), py::arg("max_len"), py::arg("causal"))
      .def("build", [=](B& b, NodeId output) { return compile_errors([&] { return b.build(output); }); });
}

}  // namespace raspc::python
