// What the compile and demo commands share: the compile report as text.
#pragma once

#include <string>

#include "compiler/compile.hpp"

namespace raspc {

// 1234567 -> "1,234,567".
std::string format_count(double n);

// Shape, parameters, FLOPs per token and the verification result, as `raspc compile` prints them.
std::string describe_report(const CompileReport& report, const Model& model);

}  // namespace raspc
