// The fuzzer's bytes as a program file, for the targets that read programs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "support/diagnostics.hpp"

namespace raspc {

inline std::shared_ptr<const SourceFile> fuzzed_program(const uint8_t* data, size_t size) {
  auto file = std::make_shared<SourceFile>();
  file->name = "fuzz.rasp";
  file->text.assign(reinterpret_cast<const char*>(data), size);
  return file;
}

}  // namespace raspc
