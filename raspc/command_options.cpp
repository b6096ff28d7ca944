#include "raspc/command_options.hpp"

#include <unistd.h>

#include <filesystem>

#include "runtime/handset_aab.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

Device device_option(const std::string& name) {
  const Device device = parse_device(name);
  // The smallest model there is opens the device, so its errors come now, not after a compilation.
  if (device == Device::Cuda) naming_errors("--device", [] { make_backend(make_handset_aab(), Device::Cuda); });
  return device;
}

void check_writable_output(const std::string& path, const std::string& flag, const std::vector<std::string>& inputs) {
  if (path == "-") fail_file(flag, "the output is a binary file; give a file name, not - (standard output)");
  check_output_path(path, flag, inputs);
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  if (::access(folder.c_str(), W_OK) != 0)
    fail_file(path, "cannot write here: the folder " + folder + " is not writable");
}

std::string format_file_error(const std::string& file, const std::string& message) {
  return file + ": error: " + message + "\n";
}


}  // namespace raspc
