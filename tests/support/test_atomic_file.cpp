#include <catch2/catch.hpp>

#include <filesystem>

#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"

using namespace raspc;
namespace fs = std::filesystem;

TEST_CASE("write_file_atomically replaces the file whole and leaves no temporary behind") {
  fs::path dir = fs::temp_directory_path() / ("raspc_atomic_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "out.bin").string();
  write_file_atomically(path, "first");
  write_file_atomically(path, std::string("sec\0nd", 6));
  CHECK(read_file_bytes(path) == std::string("sec\0nd", 6));
  int entries = 0;
  for (auto& e : fs::directory_iterator(dir)) (void)e, ++entries;
  CHECK(entries == 1);
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomically into a missing folder is a user error naming the path") {
  CHECK_THROWS_WITH(write_file_atomically("/nonexistent-dir/x.bin", "x"),
                    Catch::StartsWith("/nonexistent-dir/x.bin: error: cannot create the file"));
}
