// What the compile and demo commands share: the compile report as text and as JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "compiler/compile.hpp"

namespace raspc {

// 1234567 -> "1,234,567".
std::string format_count(double n);

// The model's shape, parameters and FLOPs per token: known once it is assembled, before verifying.
std::string describe_shape(const CompileReport& report);
// The verification's result (empty when nothing was verified).
std::string describe_verification(const CompileReport& report);
// Both, as `raspc compile` prints them.
std::string describe_report(const CompileReport& report);

// `raspc compile --json`'s report (the schema is in docs/json.md).
nlohmann::json report_as_json(const CompileReport& report);

}  // namespace raspc
