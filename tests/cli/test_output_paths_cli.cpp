// Outputs that would destroy something are refused before any work: the input itself, a symbolic
// link, a FIFO, a folder, an empty name. Every case runs in the test's own scratch folder, and
// checks that the thing named is still there, unchanged.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "tests/cli/run_raspc.hpp"

using namespace raspc::testing;
namespace fs = std::filesystem;

namespace {

const char* const kProgram = "# vocab: a b\nreversed = aggregate(select(indices, length - indices - 1, ==), tokens);\nreversed;\n";

fs::path program_in_scratch() {
  fs::path folder = scratch_folder();
  std::ofstream(folder / "p.rasp") << kProgram;
  return folder;
}

}  // namespace

TEST_CASE("compile -o onto its own input is refused, by identity not by spelling, and the program survives") {
  fs::path folder = program_in_scratch();
  for (const std::string& out : std::vector<std::string>{"p.rasp", "./p.rasp", "../" + folder.filename().string() + "/p.rasp"}) {
    INFO(out);
    CommandResult r = run_raspc("compile p.rasp --max-len 2 -o " + out, folder);
    CHECK(r.code == 1);
    CHECK(r.out.empty());  // refused before the compilation and its report
    CHECK(r.err == out + ": error: the output is the input file p.rasp; writing it would destroy the input\n");
    CHECK(slurp(folder / "p.rasp") == kProgram);
  }
  // A hard link is the same file under another name.
  fs::create_hard_link(folder / "p.rasp", folder / "same.rasp");
  CommandResult r = run_raspc("compile p.rasp --max-len 2 -o same.rasp", folder);
  CHECK(r.code == 1);
  CHECK(r.err == "same.rasp: error: the output is the input file p.rasp; writing it would destroy the input\n");
  CHECK(slurp(folder / "p.rasp") == kProgram);
}

TEST_CASE("an output onto a symbolic link, a FIFO or a folder is refused, saying what it is, and left as it was") {
  fs::path folder = program_in_scratch();
  std::ofstream(folder / "target.txt") << "keep me";
  fs::create_symlink("target.txt", folder / "link");
  REQUIRE(::mkfifo((folder / "fifo").c_str(), 0600) == 0);
  fs::create_directory(folder / "dir");
  const std::pair<const char*, const char*> cases[] = {
      {"link", "a symbolic link"}, {"fifo", "a FIFO (named pipe)"}, {"dir", "a folder"}};
  for (const auto& [name, kind] : cases) {
    INFO(name);
    for (const std::string command : {"compile p.rasp --max-len 2 -o ", "handset-aab -o ",
                                      "train p.rasp --steps 1 --max-len 2 -o "}) {
      INFO(command);
      CommandResult r = run_raspc(command + name, folder);
      CHECK(r.code == 1);
      CHECK(r.out.empty());
      CHECK(r.err == std::string(name) + ": error: the output is " + kind +
                         ", not a regular file; raspc replaces only regular files, so give another name\n");
    }
  }
  CHECK(fs::is_symlink(folder / "link"));
  CHECK(slurp(folder / "target.txt") == "keep me");
  CHECK(fs::is_fifo(folder / "fifo"));
  CHECK(fs::is_directory(folder / "dir"));
}

TEST_CASE("an empty -o and an -o in a missing folder are refused before the work") {
  fs::path folder = program_in_scratch();
  CommandResult r = run_raspc("compile p.rasp --max-len 2 -o ''", folder);
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "-o: error: the output file name is empty\n");
  r = run_raspc("handset-aab -o ''", folder);
  CHECK(r.code == 1);
  CHECK(r.err == "-o: error: the output file name is empty\n");
  r = run_raspc("compare p.rasp --steps 1 -o ''", folder);
  CHECK(r.code == 1);
  CHECK(r.err == "-o: error: the output file name is empty\n");
  r = run_raspc("compile p.rasp --max-len 2 -o missing/m.safetensors", folder);
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "missing/m.safetensors: error: cannot create the file: the folder missing does not exist\n");
}

TEST_CASE("compare -o refuses each of its three outputs before training") {
  fs::path folder = program_in_scratch();
  fs::create_directory(folder / "cmp.svg");
  CommandResult r = run_raspc("compare p.rasp --steps 1 -o cmp", folder);
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "cmp.svg: error: the output is a folder, not a regular file; raspc replaces only regular files, so "
                 "give another name\n");
  CHECK(!fs::exists(folder / "cmp.md"));
}

TEST_CASE("bench --out-dir naming a file, or --update-results naming a folder, is refused before measuring") {
  fs::path folder = program_in_scratch();
  std::ofstream(folder / "notes.txt") << "keep me";
  CommandResult r = run_raspc("bench p.rasp --max-len 2 --samples 1 --no-instructions --out-dir notes.txt", folder);
  CHECK(r.code == 1);
  CHECK(r.err == "notes.txt: error: the output folder (--out-dir) is a regular file, not a folder\n");  // no "measuring"
  CHECK(r.out.empty());
  CHECK(slurp(folder / "notes.txt") == "keep me");
  fs::create_directories(folder / "out" / "cost.md");
  r = run_raspc("bench p.rasp --max-len 2 --samples 1 --no-instructions --out-dir out", folder);
  CHECK(r.code == 1);
  CHECK(r.err == "out/cost.md: error: the output is a folder, not a regular file; raspc replaces only regular files, "
                 "so give another name\n");
  r = run_raspc("bench p.rasp --max-len 2 --samples 1 --no-instructions --out-dir ''", folder);
  CHECK(r.code == 1);
  CHECK(r.err == "--out-dir: error: the output folder name is empty\n");
  r = run_raspc("bench p.rasp --max-len 2 --samples 1 --no-instructions --update-results out", folder);
  CHECK(r.code == 1);
  CHECK(r.err == "out: error: the output is a folder, not a regular file; raspc replaces only regular files, so give "
                 "another name\n");
}

TEST_CASE("a folder given as a program or a model is a folder, not a file") {
  fs::path folder = scratch_folder();
  fs::create_directories(folder / "d.rasp");
  fs::create_directories(folder / "m.safetensors");
  CommandResult r = run_raspc("eval d.rasp --input ab", folder);
  CHECK(r.code == 1);
  CHECK(r.err == "d.rasp: error: this is a folder, not a file\n");
  r = run_raspc("compile d.rasp --vocab ab", folder);
  CHECK(r.err == "d.rasp: error: this is a folder, not a file\n");
  r = run_raspc("run m.safetensors --input ab", folder);
  CHECK(r.code == 1);
  CHECK(r.err == "m.safetensors: error: this is a folder, not a file\n");
  REQUIRE(::mkfifo((folder / "f.safetensors").c_str(), 0600) == 0);
  r = run_raspc("inspect f.safetensors", folder);  // refused without opening it, so it cannot block
  CHECK(r.code == 1);
  CHECK(r.err == "f.safetensors: error: this is a FIFO (named pipe), not a regular file\n");
}
