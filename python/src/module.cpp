// The `_raspc` extension module: values and errors across the boundary, and the module itself.
// Everything it exposes is a C++ library function; python/raspc/ adds only Python conveniences.
#include <climits>
#include <cmath>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "python/src/bindings.hpp"

namespace raspc::python {

namespace {

// fractions.Fraction, imported with the module (PYBIND11_MODULE says why).
py::object* fraction_class = nullptr;  // never destroyed: values may be converted until exit

py::object fraction_type() { return *fraction_class; }

// "what: " before a message about a value, or nothing where the caller names the argument itself.
std::string prefix(const char* what) { return what && *what ? std::string(what) + ": " : std::string(); }

// A Python int or numerator/denominator pair as an exact rational of any size (through its
// decimal digits where it does not fit int64).
Rational rational_from_python(const py::handle& numerator, const py::handle& denominator, const py::handle& object,
                              const char* what) {
  int overflow = 0;
  long long num = PyLong_AsLongLongAndOverflow(numerator.ptr(), &overflow);
  if (num == -1 && PyErr_Occurred()) throw py::error_already_set();
  long long den = 1;
  if (overflow == 0 && !denominator.is_none()) {
    den = PyLong_AsLongLongAndOverflow(denominator.ptr(), &overflow);
    if (den == -1 && PyErr_Occurred()) throw py::error_already_set();
  }
  if (overflow == 0 && den != 0) return Rational::of(num, den);
  const std::string den_text = denominator.is_none() ? "1" : py::str(denominator).cast<std::string>();
  if (den_text == "0") throw py::value_error(prefix(what) + py::repr(object).cast<std::string>() +
                                             " has no exact rational form");
  try {
    return Rational::of_decimal(py::str(numerator).cast<std::string>(), den_text);
  } catch (const RationalTooLarge& error) {
    throw py::value_error(prefix(what) + error.what());
  }
}

}  // namespace

py::object to_python(const Value& value) {
  switch (value.kind) {
    case ValueKind::Bool: return py::bool_(value.boolean);
    case ValueKind::String: return py::str(value.string());
    case ValueKind::Number: {
      int64_t small = 0;
      if (value.number.to_int64(small)) return py::int_(small);
      if (!value.number.is_big()) return fraction_type()(value.number.num, value.number.den);
      py::object builtins_int = py::module_::import("builtins").attr("int");
      py::object num = builtins_int(py::str(value.number.numerator()));
      if (value.number.is_integer()) return num;
      return fraction_type()(num, builtins_int(py::str(value.number.denominator())));
    }
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
  if (py::isinstance<py::int_>(object)) return Value::of_number(rational_from_python(object, py::none(), object, what));
  if (py::isinstance<py::str>(object)) return Value::of_string(object.cast<std::string>());
  if (py::isinstance(object, fraction_type()))
    return Value::of_number(rational_from_python(object.attr("numerator"), object.attr("denominator"), object, what));
  if (py::isinstance<py::float_>(object)) {
    if (!std::isfinite(object.cast<double>()))
      throw py::value_error(prefix(what) + py::repr(object).cast<std::string>() +
                            " has no exact rational form");
    py::tuple ratio = object.attr("as_integer_ratio")();
    return Value::of_number(rational_from_python(ratio[0], ratio[1], object, what));
  }
  throw py::type_error(prefix(what) + py::repr(object).cast<std::string>() +
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
  // What conversions need from Python is looked up here, under the import lock, and not on first
  // use: a function-local static whose initialiser imports a module (fractions, or numpy inside
  // pybind11's array support) lets the import release the GIL while a second thread holds it
  // waiting for the same static, and two threads' first Model.run deadlocked.
  raspc::python::fraction_class = new pybind11::object(pybind11::module_::import("fractions").attr("Fraction"));
  (void)pybind11::array_t<float>(0);  // initialises pybind11's numpy API (its static npy_api)
  module.doc() = "raspc's C++ core: the RASP language, the compiler and the GPT-2 runtime";
  raspc::python::bind_programs(module);
  raspc::python::bind_models(module);
  raspc::python::bind_builder(module);
  raspc::python::bind_circuits(module);
  raspc::python::bind_datasets(module);
}
