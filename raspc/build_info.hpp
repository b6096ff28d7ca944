// How this raspc was built, for `raspc --version` (written at build time by cmake/build_info.cmake).
#pragma once

namespace raspc {

extern const char* const kVersion;    // the project's version, as in pyproject.toml
extern const char* const kGitCommit;  // short commit hash, "-dirty" with uncommitted changes, or "unknown"
extern const char* const kBuildType;  // CMAKE_BUILD_TYPE
extern const bool kBuiltWithCuda;     // whether --device cuda exists in this build

}  // namespace raspc
