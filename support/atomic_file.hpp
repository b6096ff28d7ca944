// Every file raspc writes goes to a temporary name beside the target and is renamed into place,
// so a crash or a full disk never leaves a half-written model, table or plot behind.
#pragma once

#include <string>
#include <string_view>

namespace raspc {

// Writes `contents` to `path` atomically (temporary file in the same folder, then rename).
// Errors (folder missing, disk full) are UserErrors naming the path.
void write_file_atomically(const std::string& path, std::string_view contents);

// Reads a whole binary file; a missing file is a UserError naming it.
std::string read_file_bytes(const std::string& path);

}  // namespace raspc
