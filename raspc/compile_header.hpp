// What the compile, demo and view commands share: the compile report as `raspc compile` prints it,
// read from the report's one JSON (runtime/model_report.hpp).
#pragma once

#include <string>

#include "compiler/compile.hpp"

namespace raspc {

// The model's shape, parameters and FLOPs per token: known once it is assembled, before verifying.
std::string describe_shape(const CompileReport& report);
// The shape and the verification's result, as `raspc compile` prints them.
std::string describe_report(const CompileReport& report);

}  // namespace raspc
