// A construction with an MLP of its own is its file and its row in the pipeline's table
// (compiler/constructions/README.md): its class is named in no other file of the tree, and its
// rewrite is called from the table alone. A pass that handled one by name instead of through
// MlpConstruction's functions would fail here.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every C++ source of the libraries, the bindings and the command line, relative to the root.
std::vector<fs::path> home_scan_sources(const fs::path& root) {
  std::vector<fs::path> files;
  for (const char* part : {"support", "language", "runtime", "compiler", "circuit", "trainer", "view", "cost", "python",
                           "raspc", "fuzz"}) {
    if (!fs::is_directory(root / part)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / part)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh"))
        files.push_back(fs::relative(entry.path(), root));
    }
  }
  return files;
}

// The files among `files` that name `word` as a whole identifier, sorted.
std::vector<std::string> naming(const fs::path& root, const std::vector<fs::path>& files, const std::string& word) {
  const std::regex whole("\\b" + word + "\\b");
  std::set<std::string> found;
  for (const fs::path& f : files)
    if (std::regex_search(text_of(root / f), whole)) found.insert(f.generic_string());
  return {found.begin(), found.end()};
}

}  // namespace

TEST_CASE("construction homes: an MLP construction is its file and its pipeline row") {
  const fs::path root = fs::path(RASPC_SOURCE_DIR);
  const std::vector<fs::path> sources = home_scan_sources(root);
  REQUIRE(sources.size() > 100);
  const std::regex mlp_class(R"(class\s+(\w+)\s+final\s*:\s*public\s+MlpConstruction\b)");
  // A rewrite at namespace scope: `bool name(Program& program`, at the start of a line.
  const std::regex rewrite(R"((?:^|\n)bool\s+(\w+)\(Program&\s*program)");
  const std::string table = "compiler/pipeline.cpp";
  int constructions = 0;
  for (const auto& entry : fs::directory_iterator(root / "compiler/constructions")) {
    if (entry.path().extension() != ".cpp") continue;
    const std::string home = fs::relative(entry.path(), root).generic_string();
    const std::string text = text_of(entry.path());
    std::smatch m;
    if (!std::regex_search(text, m, mlp_class)) continue;
    ++constructions;
    const std::string cls = m[1];
    INFO(home << " holds " << cls);
    CHECK(naming(root, sources, cls) == std::vector<std::string>{home});
    int rewrites = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), rewrite); it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[1];
      INFO("its rewrite " << name);
      ++rewrites;
      CHECK(naming(root, sources, name) == std::vector<std::string>{home, table});
    }
    CHECK(rewrites >= 1);  // recognised by a rewrite, which the table runs
  }
  // The scan finds what it should: count_rank.cpp is one (a scan that found none would pass above).
  CHECK(constructions >= 1);
}
