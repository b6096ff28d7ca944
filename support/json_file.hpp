// A JSON file read whole (a config, an index, a dataset card).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace raspc {

// A missing, unreadable, oversized or malformed file is a UserError naming it.
nlohmann::json read_json_file(const std::string& path);

}  // namespace raspc
