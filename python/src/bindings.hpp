// What the parts of the `_raspc` extension module share: how values cross between C++ and Python,
// how a UserError becomes a raspc exception, and the program object Python holds.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

#include "compiler/compile.hpp"
#include "language/interpret.hpp"
#include "language/program.hpp"
#include "language/program_file.hpp"
#include "runtime/forward.hpp"
#include "support/diagnostics.hpp"

namespace raspc::python {

namespace py = pybind11;

// A program with the source it came from (a .rasp file, a string, or the listing from_tracr
// writes): compile() stores the source in the model, and the header gives the defaults.
struct PyProgram {
  Program program;
  std::shared_ptr<const SourceFile> source;
  ProgramHeader header;
};

// A model with the backend that runs it. One forward at a time: the backends reuse buffers, and
// Python threads may call while the GIL is released.
struct PyModel {
  Model model;
  std::mutex mutex;
  std::unique_ptr<Backend> backend;
  Device device = Device::Cpu;
  std::optional<CompileReport> report;  // compiled here; a loaded model's is in its metadata
  // The files it came from (the model file it was loaded from, the program file it was compiled
  // from): save and export refuse to write over them, as the command line does.
  std::vector<std::string> sources;

  Backend& backend_for(Device wanted) {
    if (!backend || device != wanted) {
      backend = make_backend(model, wanted);
      device = wanted;
    }
    return *backend;
  }
};

// JSON as Python's own objects (json.loads of its text).
py::object json_to_python(const nlohmann::json& json);

// A sequence as Python gives it: a str in the CLI's --input form, or a list (or tuple) of tokens,
// each taken as one token as it is: never joined into text and parsed again, so a token holding
// `,` or `]` passes and "a,b" is not two tokens. Errors are UserErrors naming "tokens".
std::vector<int> model_input(const Model& model, const py::handle& tokens);

// Atoms to Python: integers as int, other rationals as fractions.Fraction, bools, strings.
py::object to_python(const Value& value);
py::list to_python(const std::vector<Value>& values);
// Python to atoms: bool, int, fractions.Fraction, float (taken exactly), str. Anything else is a
// TypeError naming `what` (nothing where `what` is "": the caller names the argument).
Value from_python(const py::handle& object, const char* what);
std::vector<Value> values_from_python(const py::handle& sequence, const char* what);

// Raises the Python exception raspc.errors.<class_name>(message) (error_already_set).
[[noreturn]] void raise_raspc_error(const char* class_name, const std::string& message);

[[noreturn]] void raise_undefined_error(const std::string& message, int position);

// Runs `body`; a UserError leaving it becomes raspc.<class_name>, an UndefinedOnInput
// raspc.UndefinedError (with its position), with the diagnostic text the CLI prints.
template <class Body>
auto translating_errors(const char* class_name, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const UndefinedOnInput& error) {
    raise_undefined_error(error.what(), error.position);
  } catch (const UserError& error) {
    raise_raspc_error(class_name, error.what());
  }
}

void bind_programs(py::module_& module);
void bind_models(py::module_& module);
void bind_builder(py::module_& module);
void bind_circuits(py::module_& module);
void bind_datasets(py::module_& module);  // python/src/datasets.cpp

}  // namespace raspc::python
