#include "raspc/command_options.hpp"

#include "runtime/handset_aab.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

Device device_option(const std::string& name) {
  const Device device = parse_device(name);
  // The smallest model there is opens the device, so its errors come now, not after a compilation.
  if (device == Device::Cuda) naming_errors("--device", [] { make_backend(make_handset_aab(), Device::Cuda); });
  return device;
}

}  // namespace raspc
