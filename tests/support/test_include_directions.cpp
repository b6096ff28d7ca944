// The source tree's layers, checked on every #include: support at the bottom; language and the
// runtime on support only (the runtime runs weights without knowing where they came from);
// the compiler on language and the runtime; the circuit (a model against its program) on language
// and the runtime, the view on it too; the trainer, the cost engine, the Python bindings and the
// command line above them; nothing includes the command line (raspc/) or the
// benchmarks (bench/).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::set<std::string> kLibraries{"support", "language", "runtime", "compiler", "circuit", "trainer", "view", "cost"};

// What each part of the tree may include besides itself.
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> parts{
      {"support", {}},
      {"language", {"support"}},
      {"runtime", {"support"}},
      {"compiler", {"support", "language", "runtime"}},
      {"trainer", {"support", "language", "runtime", "compiler"}},
      {"circuit", {"support", "language", "runtime"}},
      {"view", {"support", "language", "runtime", "circuit"}},
      {"cost", {"support", "language", "runtime", "compiler"}},
      {"python", kLibraries},
      {"raspc", kLibraries},
      {"fuzz", kLibraries},
      {"tests", kLibraries},
      {"bench", [] {
         std::set<std::string> below = kLibraries;
         below.insert("tests");  // its random models
         return below;
       }()},
  };
  return parts;
}

bool is_source(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh" || ext == ".h";
}

// The part of the tree a path (relative to the root) lies in: its first folder.
std::string part_of(const fs::path& relative) { return relative.begin()->string(); }

}  // namespace

TEST_CASE("layers: every #include goes down the allowed directions") {
  const fs::path root = fs::path(RASPC_SOURCE_DIR);
  std::vector<std::string> violations;
  std::set<std::pair<std::string, std::string>> seen;  // (from part, to part)
  size_t files = 0;
  for (const auto& [part, may] : allowed()) {
    const fs::path folder = root / part;
    REQUIRE(fs::is_directory(folder));
    for (const auto& entry : fs::recursive_directory_iterator(folder)) {
      if (!entry.is_regular_file() || !is_source(entry.path())) continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      for (int number = 1; std::getline(in, line); ++number) {
        const size_t at = line.find("#include \"");
        if (at == std::string::npos || line.find_first_not_of(" \t") != at) continue;
        const size_t start = at + 10, end = line.find('"', start);
        if (end == std::string::npos) continue;
        const std::string included = line.substr(start, end - start);
        // Relative to the including file where it is there ("compile_helpers.hpp",
        // "../language/program_files.hpp"), else relative to the root ("compiler/ir.hpp").
        fs::path target = entry.path().parent_path() / included;
        if (!fs::exists(target)) target = root / included;
        if (!fs::exists(target)) continue;  // generated (build_info) or a dependency's header
        const fs::path relative = fs::relative(fs::weakly_canonical(target), fs::weakly_canonical(root));
        const std::string to = part_of(relative);
        seen.insert({part, to});
        if (to == part || may.count(to)) continue;
        violations.push_back(fs::relative(entry.path(), root).string() + ":" + std::to_string(number) + " includes " +
                             relative.string() + " (" + part + "/ may include only itself and the parts below it)");
      }
    }
  }
  INFO("scanned " << files << " files");
  for (const std::string& v : violations) UNSCOPED_INFO(v);
  CHECK(violations.empty());
  // The scan reads what it should: these edges exist, so a scan that found nothing would fail here.
  CHECK(files > 200);
  CHECK(seen.count({"compiler", "language"}));
  CHECK(seen.count({"raspc", "cost"}));
  CHECK(seen.count({"tests", "tests"}));
}
