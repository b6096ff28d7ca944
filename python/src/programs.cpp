// Programs: parsing RASP source (language/evaluate.hpp) and running the reference interpreter.
#include <pybind11/stl.h>

#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/interpret.hpp"
#include "python/src/bindings.hpp"

namespace raspc::python {

namespace {

std::shared_ptr<PyProgram> program_from_source(std::shared_ptr<const SourceFile> source, const std::string& output) {
  auto result = std::make_shared<PyProgram>();
  result->header = read_program_header(source);
  EvaluateOptions options;
  options.output_name = output;
  {
    py::gil_scoped_release release;
    result->program = evaluate_program(source, options);
  }
  result->source = std::move(source);
  return result;
}

// A sequence as Python gives it: a str in the CLI's --input form ("hello", "[3,1,2]"), else a list.
std::vector<Value> input_from_python(const py::handle& tokens) {
  if (py::isinstance<py::str>(tokens)) return parse_input(tokens.cast<std::string>(), "tokens");
  std::vector<Value> input;
  for (const py::handle item : tokens) {
    try {
      input.push_back(from_python(item, ""));
    } catch (const py::builtin_exception& error) {
      fail_file("tokens", error.what());
    }
  }
  if (input.empty()) fail_file("tokens", "the input sequence is empty");
  return input;
}

py::object evaluate(const PyProgram& program, const py::handle& tokens, bool causal, bool trace) {
  std::vector<Value> input = input_from_python(tokens);
  Interpreter interpreter(program.program, causal ? Mode::Causal : Mode::Bidirectional);
  Trace values;
  std::vector<Value> output;
  {
    py::gil_scoped_release release;
    output = interpreter.run(input, trace ? &values : nullptr);
  }
  if (!trace) return to_python(output);
  py::dict named;
  for (const auto& [name, id] : program.program.named) {
    if (program.program.node(id).is_selector()) continue;
    const auto& sop = values.sop[size_t(id)];
    named[py::str(name)] = sop.empty() ? py::object(py::none()) : py::object(to_python(sop));
  }
  named["output"] = to_python(output);
  return named;
}

}  // namespace

void bind_programs(py::module_& module) {
  py::class_<PyProgram, std::shared_ptr<PyProgram>>(module, "Program")
      .def_property_readonly("source", [](const PyProgram& p) { return p.source->text; })
      .def_property_readonly("filename", [](const PyProgram& p) { return p.source->name; })
      .def_property_readonly("output", [](const PyProgram& p) { return p.program.label(p.program.output); })
      .def_property_readonly("names",
                             [](const PyProgram& p) {
                               std::vector<std::string> names;
                               for (const auto& entry : p.program.named) names.push_back(entry.first);
                               return names;
                             })
      .def_property_readonly("header_name", [](const PyProgram& p) { return p.header.name; })
      .def_property_readonly("description", [](const PyProgram& p) { return p.header.description; })
      .def_property_readonly("vocab", [](const PyProgram& p) { return to_python(header_vocabulary(p.header)); })
      .def_property_readonly("causal", [](const PyProgram& p) -> py::object {
        if (!p.header.causal) return py::none();
        return py::bool_(*p.header.causal);
      })
      .def_property_readonly("expectations", [](const PyProgram& p) {
        py::list list;
        for (const Expectation& e : p.header.expectations)
          list.append(py::make_tuple(e.input, e.output, e.causal));
        return list;
      });

  module.def(
      "parse",
      [](const std::string& text, const std::string& filename, const std::string& output) {
        return translating_errors("CompileError", [&] {
          auto source = std::make_shared<SourceFile>();
          source->name = filename;
          source->text = text;
          return program_from_source(source, output);
        });
      },
      py::arg("source"), py::arg("filename"), py::arg("output"));
  module.def(
      "parse_file",
      [](const std::string& path, const std::string& output) {
        return translating_errors("CompileError", [&] { return program_from_source(read_source_file(path), output); });
      },
      py::arg("path"), py::arg("output"));
  module.def(
      "evaluate",
      [](const PyProgram& program, const py::object& tokens, bool causal, bool trace) {
        return translating_errors("InputError", [&] { return evaluate(program, tokens, causal, trace); });
      },
      py::arg("program"), py::arg("tokens"), py::arg("causal"), py::arg("trace"));
  module.def(
      "parse_vocabulary",
      [](const std::string& text) {
        return translating_errors("InputError", [&] { return to_python(parse_vocabulary(text, "vocab")); });
      },
      py::arg("text"));
}

}  // namespace raspc::python
