// `raspc dataset`, `raspc import hf` and `compare --trained` as a user runs them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_raspc.hpp"

using namespace raspc::testing;
namespace fs = std::filesystem;

namespace {

fs::path folder() { return scratch_with_programs(); }

CommandResult run(const std::string& args) { return run_raspc(args, folder()); }

std::string file(const std::string& name) { return slurp(folder() / name); }

// A safetensors file's data section: what follows its 8-byte length and the header.
std::string tensor_bytes(const fs::path& path) {
  const std::string bytes = slurp(path);
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | uint8_t(bytes.at(size_t(i)));
  return bytes.substr(size_t(8 + header));
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("raspc dataset writes shards, a card and a README, the same for a seed whatever the threads") {
  CommandResult r = run("dataset programs/hist.rasp --lengths 1-4 --max-len 5 --n 500 --held-out 20 --seed 3 -o d1");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json card = nlohmann::json::parse(file("d1/raspc_dataset.json"));
  const long test_rows = card["counts"]["test"].get<long>();
  CHECK(r.out.find("wrote d1: 500 training inputs (lengths 1-4, seed 3), " + std::to_string(test_rows) +
                   " test inputs (lengths 1-5), bidirectional mode\n") == 0);
  CHECK(r.out.find("vocabulary: 10 tokens (BOS, 4 input symbols, 5 output values); labelled in ") != std::string::npos);
  CHECK(card["vocab"] == nlohmann::json({"BOS", "a", "b", "c", "d", "1", "2", "3", "4", "5"}));
  CHECK(card["files"] == nlohmann::json({"test-00000-of-00001.jsonl", "train-00000-of-00001.jsonl"}));
  CHECK(file("d1/README.md").find("configs:\n- config_name: default\n  data_files:\n  - split: train\n    path:\n"
                                  "    - train-00000-of-00001.jsonl\n") != std::string::npos);
  const std::string train = file("d1/train-00000-of-00001.jsonl");
  CHECK(std::count(train.begin(), train.end(), '\n') == 500);
  // Not a terminal: the progress is plain lines (none for so short a run), never a bar.
  CHECK(r.err.find('\r') == std::string::npos);
  REQUIRE(run("dataset programs/hist.rasp --lengths 1-4 --max-len 5 --n 500 --held-out 20 --seed 3 --threads 1 -o d2")
              .code == 0);
  CHECK(file("d2/train-00000-of-00001.jsonl") == train);
  CHECK(file("d2/test-00000-of-00001.jsonl") == file("d1/test-00000-of-00001.jsonl"));
  REQUIRE(run("dataset programs/hist.rasp --lengths 1-4 --max-len 5 --n 500 --held-out 20 --seed 4 -o d2").code == 0);
  CHECK(file("d2/train-00000-of-00001.jsonl") != train);  // and d2, a dataset, was replaced
  // Causal from the flag or the program's header, in the card.
  REQUIRE(run("dataset programs/aab.rasp --lengths 1-3 --n 10 -o d3").code == 0);
  CHECK(nlohmann::json::parse(file("d3/raspc_dataset.json"))["mode"] == "causal");
}

TEST_CASE("raspc dataset refuses bad flags and a folder it may not replace") {
  auto error = [](const std::string& args) {
    CommandResult r = run("dataset programs/hist.rasp " + args);
    CHECK(r.code == 1);
    return r.err;
  };
  CHECK(error("--lengths 4-2 -o x") == "--lengths:1:1: error: write the lengths as A-B with 1 <= A <= B <= --max-len "
                                      "(512), as in 1-8\n  4-2\n  ^~~\n");
  CHECK(error("--lengths 1-8 --max-len 5 -o x") ==
        "--max-len:1:1: error: the test lengths run from 1 to --max-len, which must be at least the longest of "
        "--lengths (8) and at most 512\n  5\n  ^\n");
  CHECK(error("--n -5 -o x") == "--n:1:1: error: give from 0 to 10,000,000 training inputs\n  -5\n  ^~\n");
  CHECK(error("--threads 2000 -o x") ==
        "--threads:1:1: error: the thread count must be between 0 (every core) and 1024\n  2000\n  ^~~~\n");
  write_file(folder() / "mine/notes.txt", "mine");
  CHECK(error("-o mine") == "mine: error: holds notes.txt, which a dataset does not write; the dataset would mix with "
                            "it; name a new or empty folder, or one a previous `raspc dataset` wrote\n");
  CHECK(file("mine/notes.txt") == "mine");
  write_file(folder() / "plain", "a file");
  CHECK(error("-o plain") == "plain: error: exists and is a file; name a new or empty folder, or one a previous `raspc "
                             "dataset` wrote\n");
  CHECK_FALSE(fs::exists(folder() / "x"));
}

TEST_CASE("a model exported to Hugging Face imports back, runs as it did, and compare measures it") {
  // The dataset and the trainer build the same vocabulary from the same program and lengths.
  REQUIRE(run("dataset programs/hist.rasp --lengths 1-5 --n 100 -o data").code == 0);
  CommandResult train = run("train programs/hist.rasp --max-len 5 --d-model 16 --steps 30 --seed 2 -o t.safetensors");
  REQUIRE(train.code == 0);
  REQUIRE(run("export t.safetensors --format hf -o hf").code == 0);
  CHECK(run("import gguf hf -o back.safetensors").err ==
        "FORMAT:1:1: error: raspc imports hf (a Hugging Face GPT-2 folder); write `raspc import hf DIR -o M`\n  gguf\n"
        "  ^~~~\n");
  CHECK(run("import hf nowhere -o back.safetensors").err ==
        "nowhere: error: is not a folder; give the folder save_pretrained (or Trainer.save_model) wrote\n");
  CommandResult missing = run("import hf hf -o back.safetensors");
  CHECK(missing.code == 1);
  CHECK(missing.err == "hf/raspc_dataset.json: error: is missing; a dataset written by `raspc dataset` has one (give "
                       "its folder)\n");
  CommandResult imported = run("import hf hf --dataset data -o back.safetensors");
  INFO(imported.err);
  REQUIRE(imported.code == 0);
  CHECK(imported.out == "wrote back.safetensors: 1 layer, 1 head, d_model 16, MLP 64, 3568 parameters, vocabulary 10, "
                        "bidirectional\n");
  // The same weights, byte for byte (the files' headers differ: the metadata says where each came
  // from), and so the same outputs. (Logits are not compared across processes: two runs of one
  // model may differ in their last digits.)
  CHECK(tensor_bytes(folder() / "back.safetensors") == tensor_bytes(folder() / "t.safetensors"));
  for (const char* input : {"abca", "ddddd", "b"})
    CHECK(run("run back.safetensors --input " + std::string(input)).out ==
          run("run t.safetensors --input " + std::string(input)).out);
  const nlohmann::json meta = nlohmann::json::parse(run("inspect back.safetensors --json").out);
  CHECK(meta["training"]["source"] == "huggingface");
  CHECK(meta["training"]["dataset"]["program"] == "hist.rasp");
  CHECK(run("inspect back.safetensors").out.find("trained elsewhere: imported from the Hugging Face folder hf, trained on "
                                                 "a dataset of hist.rasp\n") != std::string::npos);

  CommandResult compare = run("compare programs/hist.rasp --max-len 5 --verify-samples 100 --trained back.safetensors "
                                "t.safetensors -o cmp");
  INFO(compare.err);
  REQUIRE(compare.code == 0);
  const nlohmann::json report = nlohmann::json::parse(file("cmp.json"));
  REQUIRE(report["arms"].size() == 3);  // compiled and the two given: nothing trained here
  CHECK(report["arms"][1]["name"] == "back.safetensors");
  CHECK(report["arms"][1]["source"] == "back.safetensors");
  CHECK(report["arms"][1]["by_length"] == report["arms"][2]["by_length"]);  // the same model, both ways
  CHECK(report["arms"][1]["head_matches"].size() == report["arms"][0]["config"]["n_layer"].get<size_t>() *
                                                          report["arms"][0]["config"]["n_head"].get<size_t>());
  CHECK_FALSE(report["arms"][1].contains("steps_run"));
  CHECK(compare.out.find("hist.rasp: vocab a b c d, max length 5, training lengths 1-5, bidirectional; held-out 256 "
                         "per length\n") == 0);
  // A causal comparison refuses the bidirectional model, naming it, before any work.
  CommandResult causal = run("compare programs/hist.rasp --max-len 5 --causal --trained back.safetensors");
  CHECK(causal.code == 1);
  CHECK(causal.err == "back.safetensors: error: the model is bidirectional but the comparison is causal\n");
}
