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

// This test process's scratch folder, /tmp/raspc_cli_<pid>: created on demand (a test may remove
// it when done) and removed when the process ends. ctest runs every test case in a process of its
// own, so parallel tests never share a file.
inline std::filesystem::path scratch_folder() {
  static struct Folder {
    std::filesystem::path path = std::filesystem::temp_directory_path() / ("raspc_cli_" + std::to_string(::getpid()));
    ~Folder() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } folder;
  std::filesystem::create_directories(folder.path);
  return folder.path;
}

// The scratch folder with programs/ linked to the checkout's programs, as the examples expect.
inline std::filesystem::path scratch_with_programs() {
  const std::filesystem::path folder = scratch_folder();
  if (!std::filesystem::exists(folder / "programs"))
    std::filesystem::create_directory_symlink(std::string(RASPC_SOURCE_DIR) + "/programs", folder / "programs");
  return folder;
}

// Runs `raspc ARGS` in `folder` (ARGS pass through the shell as written: quote as a user would),
// with `environment` ("NAME=value ...") set for it and standard input read from `input_file`
// (a path relative to `folder`).
inline CommandResult run_raspc(const std::string& args, const std::filesystem::path& folder,
                               const std::string& environment = "", const std::string& input_file = "/dev/null") {
  std::string command = "cd '" + folder.string() + "' && " + environment + " '" RASPC_BINARY "' " + args +
                        " >out.txt 2>err.txt <'" + input_file + "'";
  int status = std::system(command.c_str());
  CommandResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(folder / "out.txt");
  r.err = slurp(folder / "err.txt");
  return r;
}

}  // namespace raspc::testing
