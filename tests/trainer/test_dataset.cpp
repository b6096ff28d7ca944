// raspc dataset's rows: the interpreter's labels, the held-out split, determinism, undefined inputs,
// the JSON lines and the card.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"
#include "trainer/dataset.hpp"

using namespace raspc;
namespace fs = std::filesystem;

namespace {

DatasetOptions hist_options(long n, int threads) {
  DatasetOptions o;
  o.task.input_vocab = parse_vocabulary("abcd");
  o.task.max_len = 6;
  o.task.train_min = 1;
  o.task.train_max = 5;
  o.task.held_out_per_length = 40;
  o.n = n;
  o.seed = 7;
  o.threads = threads;
  return o;
}

struct Collected {
  DatasetRows train, test;
  DatasetSummary summary;
};

Collected collect(const LoadedProgram& program, const DatasetOptions& options) {
  Collected c;
  c.summary = make_dataset(program, options, [&](DatasetSplit split, DatasetRows&& rows) {
    (split == DatasetSplit::Train ? c.train : c.test).append(std::move(rows));
  });
  return c;
}

const fs::path& scratch() {
  static struct Folder {
    fs::path path = fs::temp_directory_path() / ("raspc_dataset_test_" + std::to_string(getpid()));
    Folder() { fs::create_directories(path); }
    ~Folder() { fs::remove_all(path); }
  } folder;
  return folder.path;
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("a dataset's labels are the interpreter's, its test split is the trainer's held-out set") {
  LoadedProgram hist = load_program(std::string(RASPC_SOURCE_DIR) + "/programs/hist.rasp");
  const DatasetOptions options = hist_options(3000, 1);
  Collected c = collect(hist, options);
  REQUIRE(c.train.size() == 3000);
  Task task(hist.labeller(Mode::Bidirectional), options.task);
  long held_out = 0;
  for (const HeldOutSet& set : task.held_out()) held_out += long(set.tokens.size());
  REQUIRE(long(c.test.size()) == held_out);
  // The test rows are the held-out inputs in Task's order (symbol s is token s + 1).
  size_t row = 0;
  for (const HeldOutSet& set : task.held_out())
    for (const std::vector<int>& tokens : set.tokens) {
      std::vector<int> symbols;
      for (size_t t = 1; t < tokens.size(); ++t) symbols.push_back(tokens[t] - 1);
      CHECK(c.test.symbols[row++] == symbols);
    }
  Interpreter interpreter(*hist.program, Mode::Bidirectional);
  for (const DatasetRows* rows : {&c.train, &c.test})
    for (size_t r = 0; r < rows->size(); ++r) {
      const std::vector<int>& symbols = rows->symbols[r];
      REQUIRE(symbols.size() >= 1);
      if (rows == &c.train) {
        CHECK(symbols.size() <= 5);
        CHECK_FALSE(task.is_held_out(symbols));  // never a test input
      }
      std::vector<Value> input;
      for (int s : symbols) input.push_back(options.task.input_vocab[size_t(s)]);
      const std::vector<Value> expected = interpreter.run(input);
      const std::vector<int>& labels = rows->labels[r];
      REQUIRE(labels.size() == symbols.size() + 1);
      CHECK(labels[0] == -100);
      for (size_t i = 0; i < symbols.size(); ++i) {
        CHECK(rows->outputs[r][i] == to_display(expected[i]));
        CHECK(c.summary.vocab[size_t(labels[i + 1])] == to_display(expected[i]));
      }
      CHECK(rows->undefined[r].empty());
    }
  CHECK(c.summary.vocab == task.vocab());  // hist's outputs were all in the scan: no value appended
  CHECK(c.summary.train_rows == 3000);
  CHECK(c.summary.test_rows == held_out);
}

TEST_CASE("a dataset's rows do not depend on the thread count, and change with the seed") {
  LoadedProgram hist = load_program(std::string(RASPC_SOURCE_DIR) + "/programs/hist.rasp");
  Collected one = collect(hist, hist_options(20000, 1));
  Collected two = collect(hist, hist_options(20000, 3));
  CHECK(one.train.symbols == two.train.symbols);
  CHECK(one.train.labels == two.train.labels);
  CHECK(one.test.labels == two.test.labels);
  DatasetOptions other = hist_options(20000, 1);
  other.seed = 8;
  CHECK(collect(hist, other).train.symbols != one.train.symbols);
}

TEST_CASE("an input the program is undefined on is kept, marked, and counts in no label") {
  // A mean over strings: defined where every token is distinct, undefined where one repeats.
  LoadedProgram program = program_from_text("test.rasp", "aggregate(select(tokens, tokens, ==), tokens);\n");
  DatasetOptions o;
  o.task.input_vocab = parse_vocabulary("ab");
  o.task.max_len = 2;
  o.task.train_min = o.task.train_max = 2;
  o.n = 200;
  Collected c = collect(program, o);
  long undefined = 0;
  for (size_t r = 0; r < c.train.size(); ++r) {
    const bool repeats = c.train.symbols[r][0] == c.train.symbols[r][1];
    CHECK(c.train.undefined[r].empty() == !repeats);
    if (!repeats) continue;
    ++undefined;
    CHECK(c.train.undefined[r].find("test.rasp:1:1: error: at position 0 this aggregate selects 2 positions") == 0);
    CHECK(c.train.outputs[r] == std::vector<std::string>{"", ""});
    CHECK(c.train.labels[r] == std::vector<int>{-100, -100, -100});
  }
  CHECK(undefined > 0);
  CHECK(c.summary.train_undefined == undefined);
  const std::string lines = dataset_json_lines(c.train, {"a", "b"}, 0, c.train.size());
  CHECK(lines.find("\"output\": [\"\", \"\"], \"defined\": [false, false], \"undefined\": \"test.rasp:1:1: error:") !=
        std::string::npos);
}

TEST_CASE("a row is one JSON line, its texts escaped") {
  DatasetRows rows;
  rows.symbols = {{0, 1}};
  rows.outputs = {{"1/3", "say \"hi\"\\"}};
  rows.labels = {{-100, 5, 6}};
  rows.undefined = {""};
  CHECK(dataset_json_lines(rows, {"a", "\t"}) ==
        "{\"input\": [\"a\", \"\\t\"], \"output\": [\"1/3\", \"say \\\"hi\\\"\\\\\"], \"defined\": [true, true], "
        "\"undefined\": \"\", \"input_ids\": [0, 1, 2], \"labels\": [-100, 5, 6], \"length\": 2}\n");
}

TEST_CASE("an output value the task's scan did not see gets the next id, and keeps it") {
  LoadedProgram hist = load_program(std::string(RASPC_SOURCE_DIR) + "/programs/hist.rasp");
  Task task(hist.labeller(Mode::Bidirectional), hist_options(1, 1).task);
  const size_t before = task.vocab().size();
  CHECK(task.output_id("1") == 5);  // hist's first output value, after BOS and a b c d
  const int id = task.output_id("99");
  CHECK(id == int(before));
  CHECK(task.vocab().back() == "99");
  CHECK(task.output_ids().back() == id);
  CHECK(task.output_id("99") == id);
  CHECK(task.vocab().size() == before + 1);
}

TEST_CASE("a dataset folder holds its shards, its card and a README, and refuses a user's folder") {
  LoadedProgram hist = load_program(std::string(RASPC_SOURCE_DIR) + "/programs/hist.rasp");
  DatasetOptions o = hist_options(250, 2);
  o.shard_rows = 100;
  const fs::path folder = scratch() / "hist";
  const DatasetSummary summary = write_dataset(hist, o, folder.string());
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(folder)) files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  CHECK(files == std::vector<std::string>{"README.md", "raspc_dataset.json", "test-00000-of-00002.jsonl",
                                          "test-00001-of-00002.jsonl", "train-00000-of-00003.jsonl",
                                          "train-00001-of-00003.jsonl", "train-00002-of-00003.jsonl"});
  auto lines = [&](const std::string& name) {
    const std::string text = text_of(folder / name);
    return std::count(text.begin(), text.end(), '\n');
  };
  CHECK(lines("train-00000-of-00003.jsonl") == 100);
  CHECK(lines("train-00002-of-00003.jsonl") == 50);
  CHECK(lines("test-00000-of-00002.jsonl") + lines("test-00001-of-00002.jsonl") == summary.test_rows);
  const DatasetCard card = read_dataset_card(folder.string());
  CHECK(card.vocab == summary.vocab);
  CHECK(card.input_ids == std::vector<int>{1, 2, 3, 4});
  CHECK(card.output_ids == summary.output_ids);
  CHECK_FALSE(card.causal);
  CHECK(card.max_len == 6);
  CHECK(card.json["counts"]["train"] == 250);
  CHECK(card.json["train_lengths"] == nlohmann::json::array({1, 5}));
  CHECK(card.json["output"] == "hist");
  CHECK(card.program_text == hist.source->text);
  // Writing again replaces the earlier dataset; a folder with a user's file in it is refused.
  CHECK_NOTHROW(check_dataset_folder(folder.string(), "-o", {}));
  write_file_atomically((folder / "notes.txt").string(), "mine");
  try {
    check_dataset_folder(folder.string(), "-o", {});
    FAIL("a folder with a user's file was accepted");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()) == folder.string() + ": error: holds notes.txt, which a dataset does not write; the "
                                                     "dataset would mix with it; name a new or empty folder, or one a "
                                                     "previous `raspc dataset` wrote\n");
  }
}

TEST_CASE("a card that is missing or not a raspc dataset's is refused, naming the file") {
  auto error_of = [](const std::string& path) {
    try {
      read_dataset_card(path);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const fs::path empty = scratch() / "empty";
  fs::create_directories(empty);
  CHECK(error_of(empty.string()) == (empty / "raspc_dataset.json").string() +
                                        ": error: is missing; a dataset written by `raspc dataset` has one (give its "
                                        "folder)\n");
  const fs::path card = scratch() / "card.json";
  write_file_atomically(card.string(), "{\"format\": \"raspc-dataset\", \"vocab\": [\"BOS\", \"a\"], \"input_ids\": [1], "
                                       "\"output_ids\": [2], \"bos_id\": 0, \"mode\": \"causal\", \"max_len\": 4}");
  CHECK(error_of(card.string()) == card.string() + ": error: has no valid \"output_ids\" entry; is it a raspc "
                                                   "dataset card?\n");
  write_file_atomically(card.string(), "{\"vocab\": 3");
  CHECK(error_of(card.string()).find(card.string() + ": error: is not valid JSON: ") == 0);
}
