#include "support/json_file.hpp"

#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

nlohmann::json read_json_file(const std::string& path) {
  const std::string text = read_file_bytes(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail_file(path, std::string("is not valid JSON: ") + e.what());
  }
}

}  // namespace raspc
