// What the parts of the `_raspc` extension module share: how values cross between C++ and Python,
// how a UserError becomes a raspc exception, and the program object Python holds.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "language/interpret.hpp"
#include "language/program.hpp"
#include "language/program_file.hpp"
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

}  // namespace raspc::python
