// Checks the subcommands share: the device a command runs on, and the most work one may ask for.
#pragma once

#include <string>

#include "runtime/forward.hpp"

namespace raspc {

// --device, checked at once: cuda where this build or this machine has none is refused before any
// work, naming the flag.
Device device_option(const std::string& name);

// The documented bounds of the counts a user gives (an enormous --samples or -n would run for
// ever instead of failing).
constexpr long kMaxSamples = 10'000'000;
constexpr int kMaxGeneratedTokens = 100'000;

}  // namespace raspc
