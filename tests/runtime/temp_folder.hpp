// A temporary folder of the test's own (mkdtemp under /tmp), removed with everything in it.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace raspc::testing {

struct TempFolder {
  std::filesystem::path path;
  explicit TempFolder(const std::string& prefix = "raspc-test") {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    path = mkdtemp(pattern.data());
  }
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace raspc::testing
