// The `_raspc` extension module: values and errors across the boundary, and the module itself.
// Everything it exposes is a C++ library function; python/raspc/ adds only Python conveniences.
#include <climits>

#include <pybind11/stl.h>

#include "python/src/bindings.hpp"

namespace raspc::python {

namespace {

py::object fraction_type() {
  static py::object* fraction = new py::object(py::module_::import("fractions").attr("Fraction"));
  return *fraction;
}

int64_t to_int64(const py::handle& object, const char* what) {
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(object.ptr(), &overflow);
  if (overflow != 0) throw py::value_error(std::string(what) + ": " + py::repr(object).cast<std::string>() +
                                           " does not fit in 64 bits, as raspc's exact numbers must");
  if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
  return value;
}

Value rational_from_python(const py::handle& numerator, const py::handle& denominator, const py::handle& object,
                           const char* what) {
  Rational q{to_int64(numerator, what), to_int64(denominator, what)};
  if (q.den <= 0) throw py::value_error(std::string(what) + ": " + py::repr(object).cast<std::string>() +
                                        " has no exact rational form");
  return Value::of_number(q);
}

}  // namespace

py::object to_python(const Value& value) {
  switch (value.kind) {
    case ValueKind::Bool: return py::bool_(value.boolean);
    case ValueKind::String: return py::str(value.string());
    case ValueKind::Number:
      if (value.number.is_integer()) return py::int_(value.number.num);
      return fraction_type()(value.number.num, value.number.den);
  }
  return py::none();
}

py::list to_python(const std::vector<Value>& values) {
  py::list list;
  for (const Value& v : values) list.append(to_python(v));
  return list;
}

Value from_python(const py::handle& object, const char* what) {
  if (py::isinstance<py::bool_>(object)) return Value::of_bool(object.cast<bool>());
  if (py::isinstance<py::int_>(object)) return Value::of_int(to_int64(object, what));
  if (py::isinstance<py::str>(object)) return Value::of_string(object.cast<std::string>());
  if (py::isinstance(object, fraction_type()))
    return rational_from_python(object.attr("numerator"), object.attr("denominator"), object, what);
  if (py::isinstance<py::float_>(object)) {
    py::tuple ratio = object.attr("as_integer_ratio")();
    return rational_from_python(ratio[0], ratio[1], object, what);
  }
  throw py::type_error(std::string(what) + ": " + py::repr(object).cast<std::string>() +
                       " is not a RASP value (int, fractions.Fraction, float, bool or str)");
}

std::vector<Value> values_from_python(const py::handle& sequence, const char* what) {
  std::vector<Value> values;
  for (const py::handle item : sequence) values.push_back(from_python(item, what));
  return values;
}

void raise_raspc_error(const char* class_name, const std::string& message) {
  py::object error = py::module_::import("raspc.errors").attr(class_name)(message);
  PyErr_SetObject(error.get_type().ptr(), error.ptr());
  throw py::error_already_set();
}

void raise_undefined_error(const std::string& message, int position) {
  py::object error = py::module_::import("raspc.errors").attr("UndefinedError")(message, position);
  PyErr_SetObject(error.get_type().ptr(), error.ptr());
  throw py::error_already_set();
}

}  // namespace raspc::python

PYBIND11_MODULE(_raspc, module) {
  module.doc() = "raspc's C++ core: the RASP language, the compiler and the GPT-2 runtime";
  raspc::python::bind_programs(module);
  raspc::python::bind_models(module);
  raspc::python::bind_builder(module);
}
