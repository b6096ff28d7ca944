// Checks the subcommands share: the device a command runs on, the most work one may ask for, the
// outputs they write, and the warnings and failures every command says the same way.
#pragma once

#include <string>
#include <vector>

#include "compiler/compile.hpp"
#include "runtime/forward.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

// --device, checked at once: cuda where this build or this machine has none is refused before any
// work, naming the flag.
Device device_option(const std::string& name);

// The documented bounds of the counts a user gives (an enormous --samples or -n would run for
// ever instead of failing).
using raspc::kMaxSamples;  // compiler/compile.hpp
constexpr int kMaxGeneratedTokens = 100'000;

// check_output_path, and also that the folder can be written (a file is renamed into place
// there), so a long verification or training never ends in "permission denied". "-" (standard
// output) is refused: the files these flags name are binary.
void check_writable_output(const std::string& path, const std::string& flag, const std::vector<std::string>& inputs);

// "file: error: message\n", the text fail_file throws.
std::string format_file_error(const std::string& file, const std::string& message);

// Verification found mismatches: main() prints it and exits 2 (not 1), so a script can tell a
// model that is wrong from a command that was wrong.
class VerificationMismatch : public UserError {
 public:
  using UserError::UserError;
};

}  // namespace raspc
