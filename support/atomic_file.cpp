#include "support/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "support/diagnostics.hpp"

namespace raspc {

void write_file_atomically(const std::string& path, std::string_view contents) {
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) fail_file(path, std::string("cannot create the file: ") + std::strerror(errno));
  size_t written = contents.empty() ? 0 : std::fwrite(contents.data(), 1, contents.size(), f);
  bool ok = written == contents.size();
  ok = (std::fflush(f) == 0) && ok;
  ok = (::fsync(::fileno(f)) == 0) && ok;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(temp.c_str());
    fail_file(path, "could not write the whole file (is the disk full?)");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(temp.c_str());
    fail_file(path, std::string("cannot move the finished file into place: ") + std::strerror(err));
  }
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_file(path, "cannot open the file (does it exist, and is it readable?)");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace raspc
