// raspc export, compile --export, and run --inputs / --json, as a user calls them.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/cli/run_raspc.hpp"

using raspc::testing::CommandResult;
using raspc::testing::run_raspc;
using raspc::testing::scratch_folder;
using raspc::testing::slurp;
namespace fs = std::filesystem;

namespace {

const std::string kPrograms = std::string(RASPC_SOURCE_DIR) + "/programs/";

CommandResult raspc_cli(const std::string& args) { return run_raspc(args, scratch_folder()); }

}  // namespace

TEST_CASE("raspc compile --export writes the model and its export beside it") {
  CommandResult r = raspc_cli("compile " + kPrograms + "hist.rasp --max-len 4 -o hist.safetensors --export hf");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("wrote hist.safetensors\nwrote hist.hf (hf)\n") != std::string::npos);
  for (const char* file : {"config.json", "model.safetensors", "generation_config.json", "tokenizer.json",
                           "tokenizer_config.json", "README.md"})
    CHECK(fs::exists(scratch_folder() / "hist.hf" / file));
  // The export's weights are the model's own file.
  CHECK(slurp(scratch_folder() / "hist.hf/model.safetensors") == slurp(scratch_folder() / "hist.safetensors"));

  r = raspc_cli("export hist.safetensors --format gguf -o hist.gguf");
  CHECK(r.code == 0);
  CHECK(r.out == "wrote hist.gguf (gguf)\n");
  CHECK(slurp(scratch_folder() / "hist.gguf").substr(0, 4) == "GGUF");

  // A bidirectional model cannot go to llm.c; nothing is written.
  r = raspc_cli("export hist.safetensors --format llmc -o hist.llmc");
  CHECK(r.code == 1);
  CHECK(r.err ==
        "hist.llmc: error: cannot export as llmc: llm.c's GPT-2 always applies a causal mask, so this bidirectional "
        "model would give wrong answers there; compile with --causal, or export with --format hf, tlens or gguf\n");
  CHECK(!fs::exists(scratch_folder() / "hist.llmc"));
}

TEST_CASE("raspc compile --export refuses before writing anything when the format cannot take the model") {
  CommandResult r = raspc_cli("compile " + kPrograms + "hist.rasp --max-len 4 --no-layernorm --activation relu "
                              "-o h.safetensors --export gguf");
  CHECK(r.code == 1);
  CHECK(r.err ==
        "--export: error: cannot export as gguf: llama.cpp's gpt2 graph always applies LayerNorm, so this model (made "
        "without LayerNorm) would give wrong answers there; export it with --format tlens, which runs models without "
        "LayerNorm exactly; nothing was written\n");
  CHECK(!fs::exists(scratch_folder() / "h.safetensors"));
  CHECK(!fs::exists(scratch_folder() / "h.gguf"));
}

TEST_CASE("raspc export and compile --export explain bad flags") {
  CommandResult r = raspc_cli("export nothing.safetensors --format onnx -o x");
  CHECK(r.code == 1);
  CHECK(r.err == "--format: error: unknown export format \"onnx\"; the formats are hf, tlens, gguf and llmc\n");
  r = raspc_cli("compile " + kPrograms + "hist.rasp --max-len 4 --export hf");
  CHECK(r.code == 1);
  CHECK(r.err == "--export: error: needs -o or --export-to to know where to write\n");
  r = raspc_cli("compile " + kPrograms + "hist.rasp --max-len 4 --export-to x");
  CHECK(r.code == 1);
  CHECK(r.err == "--export-to: error: needs --export FORMAT\n");
}

TEST_CASE("raspc run --inputs runs one input a line, and --json prints one object a line") {
  REQUIRE(raspc_cli("compile " + kPrograms + "hist.rasp --max-len 6 -o h.safetensors").code == 0);
  std::ofstream(scratch_folder() / "inputs.txt") << "abca\n[a,b]\nd\n";
  CommandResult r = raspc_cli("run h.safetensors --inputs inputs.txt");
  CHECK(r.code == 0);
  CHECK(r.out == "[2,1,1,2]\n[1,1]\n[1]\n");

  // Standard input: run_raspc gives raspc /dev/null, so this one pipes the file in itself.
  const std::string piped = "cd '" + scratch_folder().string() + "' && '" RASPC_BINARY
                            "' run h.safetensors --inputs - --json < inputs.txt > piped.txt";
  REQUIRE(std::system(piped.c_str()) == 0);
  r.out = slurp(scratch_folder() / "piped.txt");
  std::istringstream lines(r.out);
  std::string line;
  std::vector<nlohmann::json> results;
  while (std::getline(lines, line)) results.push_back(nlohmann::json::parse(line));
  REQUIRE(results.size() == 3);
  CHECK(results[0]["input"] == "abca");
  CHECK(results[0]["outputs"] == nlohmann::json{"2", "1", "1", "2"});
  CHECK(results[0]["margins"].size() == 4);
  CHECK(results[0]["margins"][0].get<double>() > 10);  // a compiled model's margins are large
  CHECK(!results[0].contains("logits"));
  CHECK(results[1]["input"] == "[a,b]");

  r = raspc_cli("run h.safetensors --input ab --json --logits");
  CHECK(r.code == 0);
  nlohmann::json one = nlohmann::json::parse(r.out);
  CHECK(one["logits"].size() == 3);  // BOS, a, b
  CHECK(one["logits"][0].size() == 11);  // the vocabulary: BOS, a-d, counts 1-6 (a token counts itself)

  // A bad line is reported at its own line and column, before any result is printed.
  std::ofstream(scratch_folder() / "bad.txt") << "ab\nabz\n";
  r = raspc_cli("run h.safetensors --inputs bad.txt");
  CHECK(r.code == 1);
  CHECK(r.out == "");
  CHECK(r.err.substr(0, r.err.find('\n')) ==
        "bad.txt:2:3: error: \"z\" is not in the model's input vocabulary (a b c d)");
  r = raspc_cli("run h.safetensors --input ab --logits");
  CHECK(r.code == 1);
  CHECK(r.err == "--logits: error: needs --json: the logits are printed as JSON\n");
}

TEST_CASE("raspc run --inputs refuses a huge line by its length at once, and standard input past 64 MiB") {
  REQUIRE(raspc_cli("compile " + kPrograms + "hist.rasp --max-len 6 -o h.safetensors").code == 0);
  // 20 MB on one line: counted, not looked up token by token (6.6 s and out of memory before),
  // and the quoted line is the 120 columns around the caret, not a copy of the whole line.
  std::ofstream(scratch_folder() / "huge.txt") << "ab\n" << std::string(20'000'000, 'a') << "\n";
  CommandResult r = raspc_cli("run h.safetensors --inputs huge.txt");
  CHECK(r.code == 1);
  CHECK(r.out == "");
  CHECK(r.err == "huge.txt:2:1: error: the input has 20000000 tokens but the model takes at most 6 (its 7 positions "
                 "minus BOS)\n  " + std::string(120, 'a') + "...\n  ^" + std::string(119, '~') + "\n");
  std::ofstream(scratch_folder() / "huge_list.txt") << "[a" << std::string(100'000, ',') << "]\n";
  r = raspc_cli("run h.safetensors --inputs huge_list.txt");
  CHECK(r.err.substr(0, r.err.find('\n')) ==
        "huge_list.txt:1:1: error: the input has 100001 tokens but the model takes at most 6 (its 7 positions minus BOS)");

  // Standard input is read within the 64 MiB a file is.
  {
    std::ofstream big(scratch_folder() / "big.txt");
    const std::string line = "ab\n";
    for (int i = 0; i < (65 << 20) / 3; ++i) big << line;
  }
  r = run_raspc("run h.safetensors --inputs -", scratch_folder(), "", "big.txt");
  CHECK(r.code == 1);
  CHECK(r.out == "");
  CHECK(r.err == "<stdin>: error: the file is larger than the 64 MiB raspc reads of such a file\n");
}

TEST_CASE("raspc run --json reads a numerical output's raw values") {
  REQUIRE(raspc_cli("compile " + kPrograms + "frac_prevs.rasp --causal --max-len 4 -o f.safetensors").code == 0);
  CommandResult r = raspc_cli("run f.safetensors --input axxa --json");
  REQUIRE(r.code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["outputs"] == nlohmann::json{"0", "1/2", "2/3", "1/2"});
  CHECK(j["margins"] == nlohmann::json{nullptr, nullptr, nullptr, nullptr});
  const std::vector<double> exact = {0, 0.5, 2.0 / 3, 0.5};
  REQUIRE(j["readings"].size() == 4);
  // Within the tolerance the verification accepts (kNumericalOutputTolerance).
  for (size_t i = 0; i < 4; ++i) CHECK(j["readings"][i].get<double>() == Approx(exact[i]).margin(1e-3));
}

TEST_CASE("raspc export and compile --export never write over their input") {
  REQUIRE(raspc_cli("compile " + kPrograms + "hist.rasp --max-len 4 -o m.safetensors").code == 0);
  const std::string before = slurp(scratch_folder() / "m.safetensors");
  CommandResult r = raspc_cli("export m.safetensors --format gguf -o m.safetensors");
  CHECK(r.code == 1);
  CHECK(r.err == "m.safetensors: error: the output is the input file m.safetensors; writing it would destroy the input\n");
  // A folder format onto the model file.
  r = raspc_cli("export m.safetensors --format tlens -o m.safetensors");
  CHECK(r.code == 1);
  CHECK(r.err == "m.safetensors: error: exists and is a file; this format is written as a folder: name a new or "
                 "empty folder, or one a previous --format tlens export wrote\n");
  CHECK(slurp(scratch_folder() / "m.safetensors") == before);
  // A folder format into the folder that holds the model, under the name the export writes.
  std::filesystem::create_directory(scratch_folder() / "out");
  REQUIRE(raspc_cli("compile " + kPrograms + "hist.rasp --max-len 4 -o out/model.safetensors").code == 0);
  const std::string inside = slurp(scratch_folder() / "out/model.safetensors");
  for (const char* format : {"tlens", "hf"}) {
    r = raspc_cli(std::string("export out/model.safetensors --format ") + format + " -o out");
    CHECK(r.code == 1);
    CHECK(r.err == "out: error: holds model.safetensors, the input file out/model.safetensors; the export would "
                   "replace it: export into another folder\n");
  }
  CHECK(slurp(scratch_folder() / "out/model.safetensors") == inside);
  r = raspc_cli("export m.safetensors --format hf -o missing/hf");
  CHECK(r.code == 1);
  CHECK(r.err == "missing/hf: error: cannot create the folder: its parent missing does not exist\n");

  r = raspc_cli("compile " + kPrograms + "hist.rasp --max-len 4 -o x.gguf --export gguf");
  CHECK(r.code == 1);
  CHECK(r.err == "--export: error: would write to -o's path; give the export a path of its own\n");
  r = raspc_cli("compile " + kPrograms + "hist.rasp --max-len 4 --export gguf --export-to " + kPrograms + "hist.rasp");
  CHECK(r.code == 1);
  CHECK(r.err == kPrograms + "hist.rasp: error: the output is the input file " + kPrograms +
                 "hist.rasp; writing it would destroy the input\n");
  CHECK(!fs::exists(scratch_folder() / "x.gguf"));
}
