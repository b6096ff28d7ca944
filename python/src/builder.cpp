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

  NodeId add(NodeKind kind, std::vector<NodeId> inputs, int line) {
    for (NodeId input : inputs)
      if (input < 0 || input >= NodeId(program_.nodes.size())) throw py::index_error("no node " + std::to_string(input));
    Node node;
    node.kind = kind;
    node.inputs = std::move(inputs);
    node.span = span_of(line);
    program_.nodes.push_back(std::move(node));
    return NodeId(program_.nodes.size() - 1);
  }

  Node& node(NodeId id) {
    if (id < 0 || id >= NodeId(program_.nodes.size())) throw py::index_error("no node " + std::to_string(id));
    return program_.nodes[size_t(id)];
  }

  void set_name(NodeId id, const std::string& name) {
    node(id).name = name;
    program_.named.emplace_back(name, id);
  }

  py::list value_set(NodeId id, const py::handle& vocab, int max_len, bool causal) {
    node(id);
    CompileOptions options;
    options.vocab = values_from_python(vocab, "vocab");
    options.max_len = max_len;
    options.mode = causal ? Mode::Causal : Mode::Bidirectional;
    Program partial = program_;
    partial.output = id;
    compiler::Inference inference;
    {
      py::gil_scoped_release release;
      inference = compiler::infer(partial, options);
    }
    const compiler::SopInfo& info = inference.info[size_t(id)];
    if (!info.values_known)
      fail_at(program_.node(id).span, "raspc cannot list the values this s-op takes (" + info.why + ")");
    return to_python(info.values);
  }

  std::shared_ptr<PyProgram> build(NodeId output) {
    node(output);
    auto result = std::make_shared<PyProgram>();
    result->program = program_;
    result->program.output = output;
    result->source = source_;
    return result;
  }

 private:
  Span span_of(int line) const {
    if (line < 1 || size_t(line) > line_starts_.size()) return Span{};
    uint32_t begin = line_starts_[size_t(line - 1)];
    uint32_t end = size_t(line) < line_starts_.size() ? line_starts_[size_t(line)] - 1 : uint32_t(source_->text.size());
    return Span{source_, begin, std::max(end, begin + 1)};
  }

  Program program_;
  std::shared_ptr<const SourceFile> source_;
  std::vector<uint32_t> line_starts_;
};

template <class Map>
auto lookup_name(const Map& map, const std::string& name, const char* what) {
  auto it = map.find(name);
  if (it == map.end()) throw py::value_error(std::string("unknown ") + what + " \"" + name + "\"");
  return it->second;
}

}  // namespace

void bind_builder(py::module_& module) {
  py::class_<ProgramBuilder>(module, "ProgramBuilder")
      .def(py::init<const std::string&, const std::string&>(), py::arg("name"), py::arg("listing"))
      .def("tokens", [](ProgramBuilder& b, int line) { return b.add(NodeKind::Tokens, {}, line); })
      .def("indices", [](ProgramBuilder& b, int line) { return b.add(NodeKind::Indices, {}, line); })
      .def("constant",
           [](ProgramBuilder& b, const py::object& value, int line) {
             NodeId id = b.add(NodeKind::Constant, {}, line);
             b.node(id).constant = from_python(value, "constant");
             return id;
           })
      .def("lookup",
           [](ProgramBuilder& b, NodeId input, const py::object& keys, const py::object& values, int line) {
             NodeId id = b.add(NodeKind::Elementwise, {input}, line);
             Node& node = b.node(id);
             node.op = ElementOp::LookupTable;
             node.table_keys = values_from_python(keys, "table keys");
             node.table_values = values_from_python(values, "table values");
             if (node.table_keys.size() != node.table_values.size())
               throw py::value_error("a lookup table needs as many values as keys");
             return id;
           })
      .def("elementwise",
           [](ProgramBuilder& b, const std::string& op, std::vector<NodeId> inputs, int line) {
             NodeId id = b.add(NodeKind::Elementwise, std::move(inputs), line);
             b.node(id).op = lookup_name(element_ops(), op, "operation");
             return id;
           })
      .def("select",
           [](ProgramBuilder& b, NodeId keys, NodeId queries, const std::string& cmp, int line) {
             NodeId id = b.add(NodeKind::Select, {keys, queries}, line);
             b.node(id).comparison = lookup_name(comparisons(), cmp, "comparison");
             return id;
           })
      .def("select_and", [](ProgramBuilder& b, NodeId x, NodeId y, int line) { return b.add(NodeKind::SelectAnd, {x, y}, line); })
      .def("select_or", [](ProgramBuilder& b, NodeId x, NodeId y, int line) { return b.add(NodeKind::SelectOr, {x, y}, line); })
      .def("select_not", [](ProgramBuilder& b, NodeId x, int line) { return b.add(NodeKind::SelectNot, {x}, line); })
      .def("aggregate",
           [](ProgramBuilder& b, NodeId selector, NodeId sop, const py::object& default_value, int line) {
             NodeId id = b.add(NodeKind::Aggregate, {selector, sop}, line);
             b.node(id).default_value = from_python(default_value, "default");
             return id;
           })
      .def("selector_width",
           [](ProgramBuilder& b, NodeId selector, int line) { return b.add(NodeKind::SelectorWidth, {selector}, line); })
      .def("set_name", &ProgramBuilder::set_name)
      .def("annotate",
           [](ProgramBuilder& b, NodeId id, const std::string& encoding) {
             if (encoding == "numerical") b.node(id).annotation = Encoding::Numerical;
             else if (encoding == "categorical") b.node(id).annotation = Encoding::Categorical;
             else throw py::value_error("unknown encoding \"" + encoding + "\"");
           })
      .def("value_set",
           [](ProgramBuilder& b, NodeId id, const py::object& vocab, int max_len, bool causal) {
             return translating_errors("CompileError", [&] { return b.value_set(id, vocab, max_len, causal); });
           },
           py::arg("id"), py::arg("vocab"), py::arg("max_len"), py::arg("causal"))
      .def("build", &ProgramBuilder::build);
}

}  // namespace raspc::python
