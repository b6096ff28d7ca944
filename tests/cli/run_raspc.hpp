// Running the raspc command as a user does, for the command-line tests: stdout, stderr and the
// exit code, in a scratch folder of the test's own.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace raspc::testing {

struct CommandResult {
  int code = -1;  // the exit status; -1 when the process did not exit normally (a crash)
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A folder for one test file's outputs: /tmp/raspc_<name>_<pid>.
inline std::filesystem::path scratch_folder(const std::string& name) {
  auto folder = std::filesystem::temp_directory_path() / ("raspc_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  return folder;
}

// Runs `raspc ARGS` in `folder` (ARGS pass through the shell as written: quote as a user would).
inline CommandResult run_raspc(const std::string& args, const std::filesystem::path& folder) {
  std::string command = "cd '" + folder.string() + "' && '" RASPC_BINARY "' " + args + " >out.txt 2>err.txt </dev/null";
  int status = std::system(command.c_str());
  CommandResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(folder / "out.txt");
  r.err = slurp(folder / "err.txt");
  return r;
}

}  // namespace raspc::testing
