#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <vector>
#include <fstream>

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

TEST_CASE("write_file_atomically never replaces what is not a regular file") {
  fs::path dir = fs::temp_directory_path() / ("raspc_atomic_kinds_" + std::to_string(::getpid()));
  fs::create_directories(dir / "folder");
  std::ofstream(dir / "target") << "keep";
  fs::create_symlink("target", dir / "link");
  CHECK_THROWS_WITH(write_file_atomically((dir / "link").string(), "x"),
                    (dir / "link").string() + ": error: the output is a symbolic link, not a regular file; raspc "
                                              "replaces only regular files, so give another name\n");
  CHECK_THROWS_WITH(write_file_atomically((dir / "folder").string(), "x"),
                    Catch::Contains("the output is a folder, not a regular file"));
  CHECK(fs::is_symlink(dir / "link"));
  CHECK(read_file_bytes((dir / "target").string()) == "keep");
  int entries = 0;
  for (auto& e : fs::directory_iterator(dir)) (void)e, ++entries;
  CHECK(entries == 3);  // no temporary left behind
  fs::remove_all(dir);
}

TEST_CASE("write_folder_atomically leaves the old folder whole when the writer fails, and no temporary behind") {
  fs::path dir = fs::temp_directory_path() / ("raspc_atomic_folder_" + std::to_string(::getpid()));
  fs::create_directories(dir / "out");
  std::ofstream(dir / "out" / "old.txt") << "old";
  auto entries = [&](const fs::path& folder) {
    std::vector<std::string> names;
    for (auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  // A writer that fails half way (a full disk, a device where a file should go): nothing changes.
  CHECK_THROWS_WITH(write_folder_atomically((dir / "out").string(),
                                            [](const std::string& folder) {
                                              write_file_atomically(folder + "/first.txt", "1");
                                              fail_file(folder + "/second.txt", "the disk is full");
                                            }),
                    Catch::EndsWith("second.txt: error: the disk is full\n"));
  CHECK(entries(dir) == std::vector<std::string>{"out"});
  CHECK(entries(dir / "out") == std::vector<std::string>{"old.txt"});
  // A writer that succeeds replaces the folder whole; a new one is made where there was none.
  auto write_two = [](const std::string& folder) {
    write_file_atomically(folder + "/a.txt", "a");
    write_file_atomically(folder + "/b.txt", "b");
  };
  write_folder_atomically((dir / "out").string(), write_two);
  write_folder_atomically((dir / "new/").string(), write_two);
  CHECK(entries(dir) == std::vector<std::string>{"new", "out"});
  CHECK(entries(dir / "out") == std::vector<std::string>{"a.txt", "b.txt"});
  CHECK(entries(dir / "new") == std::vector<std::string>{"a.txt", "b.txt"});
  fs::remove_all(dir);
}

TEST_CASE("check_output_path compares an output with the inputs by identity") {
  fs::path dir = fs::temp_directory_path() / ("raspc_atomic_same_" + std::to_string(::getpid()));
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "in.rasp") << "x";
  const std::string input = (dir / "in.rasp").string();
  CHECK_THROWS_WITH(check_output_path((dir / "sub" / ".." / "in.rasp").string(), "-o", {input}),
                    Catch::EndsWith("error: the output is the input file " + input +
                                    "; writing it would destroy the input\n"));
  CHECK_NOTHROW(check_output_path((dir / "out.bin").string(), "-o", {input}));
  CHECK_THROWS_WITH(check_output_path("", "-o", {input}), "-o: error: the output file name is empty\n");
  fs::remove_all(dir);
}

TEST_CASE("read_file_bytes refuses a folder and a file over its limit") {
  fs::path dir = fs::temp_directory_path() / ("raspc_atomic_read_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "big") << std::string(100, 'x');
  CHECK_THROWS_WITH(read_file_bytes(dir.string()), dir.string() + ": error: this is a folder, not a file\n");
  CHECK(read_file_bytes((dir / "big").string(), 100).size() == 100);
  CHECK_THROWS_WITH(read_file_bytes((dir / "big").string(), 99), Catch::Contains("the file is larger than"));
  fs::remove_all(dir);
}
