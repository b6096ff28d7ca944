// The programs/ library as the tests see it: the files (found at run time) and their programs.
// Headers are read with language/program_file.hpp, as the compiler and trainer read them.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "language/evaluate.hpp"
#include "language/interpret.hpp"

namespace raspc::testing {

inline std::vector<std::filesystem::path> program_paths() {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(RASPC_SOURCE_DIR) + "/programs"))
    if (entry.path().extension() == ".rasp") paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

inline Program load_library_program(const std::string& stem) {
  return evaluate_program(read_source_file(std::string(RASPC_SOURCE_DIR) + "/programs/" + stem + ".rasp"));
}

inline std::string display_all(const std::vector<Value>& values) {
  std::string text;
  for (const Value& v : values) text += (text.empty() ? "" : " ") + to_display(v);
  return text;
}

}  // namespace raspc::testing
