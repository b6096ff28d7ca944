// `raspc bench`: the cost table, its JSON and plots, against figures computed here.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "compiler/compile.hpp"
#include "language/evaluate.hpp"
#include "language/program_file.hpp"
#include "runtime/flops.hpp"
#include "runtime/safetensors.hpp"
#include "tests/cli/run_raspc.hpp"

using namespace raspc;
using namespace raspc::testing;

TEST_CASE("raspc bench measures a program and writes the table, JSON and plots") {
  auto folder = scratch_folder();
  const std::string hist = std::string(RASPC_SOURCE_DIR) + "/programs/hist.rasp";
  CommandResult r = run_raspc("bench '" + hist + "' --max-len 4,6 --samples 1 --no-instructions --no-post --out-dir out", folder);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("| program | model | mode | max len |") != std::string::npos);
  CHECK(slurp(folder / "out/cost.md") == r.out);

  nlohmann::json report = nlohmann::json::parse(slurp(folder / "out/cost.json"));
  REQUIRE(report["rows"].size() == 2);
  CHECK(report["machine"]["threads"] == 1);
  // The flags raspc was built with: -O3 in a Release build, -O1 and the sanitizers in build-asan.
  CHECK(report["machine"]["flags"] == RASPC_BUILD_FLAGS);

  // The figures are the compiled model's own: compile it here and compare.
  auto source = read_source_file(hist);
  Program program = evaluate_program(source);
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json& row = report["rows"][i];
    const int max_len = i == 0 ? 4 : 6;
    CompileOptions options;
    options.vocab = header_vocabulary(read_program_header(source));
    options.max_len = max_len;
    options.verify = false;
    CompileResult compiled = compile_program(program, options);
    INFO("max len " << max_len);
    CHECK(row["program"] == "hist");
    CHECK(row["max_len"] == max_len);
    CHECK(row["mode"] == "bidirectional");
    CHECK(row["layers"] == compiled.model.config.n_layer);
    CHECK(row["parameters"] == compiled.model.storage.size());
    const int T = max_len + 1;  // BOS
    CHECK(row["flops_per_token"].get<double>() == Approx(forward_flops(compiled.model.config, T) / T).epsilon(1e-12));
    // The native rule and the interpreter ran; instructions were not counted (--no-instructions).
    CHECK(row["native_ns_per_position"]["median"].get<double>() > 0);
    CHECK(row["interpreter_us_per_position"]["median"].get<double>() > 0);
    CHECK(row["native_instructions_per_position"].is_null());
  }
  std::string svg = slurp(folder / "out/plots/flops.svg");
  CHECK(svg.find("hist network") != std::string::npos);
  CHECK(svg.find("hist native") != std::string::npos);
  std::filesystem::remove_all(folder);
}

TEST_CASE("raspc bench refuses a malformed length list with a caret") {
  auto folder = scratch_folder();
  CommandResult r = run_raspc("bench --max-len 5,x8", folder);
  CHECK(r.code == 1);
  CHECK(r.err ==
        "--max-len:1:3: error: each maximum length is a whole number from 1 to 4096, separated by commas, as in 5,8,16\n"
        "  5,x8\n"
        "    ^~\n");
  std::filesystem::remove_all(folder);
}

TEST_CASE("raspc bench updates only its own section of a results file") {
  auto folder = scratch_folder();
  {
    std::ofstream results(folder / "RESULTS.md");
    results << "# Results\n\n## Runtime\n\nkept as it is\n";
  }
  const std::string length = std::string(RASPC_SOURCE_DIR) + "/programs/length.rasp";
  const std::string args = "bench '" + length + "' --max-len 3 --samples 1 --no-instructions --no-post --update-results RESULTS.md";
  REQUIRE(run_raspc(args, folder).code == 0);
  REQUIRE(run_raspc(args, folder).code == 0);  // a second run replaces the section, not appends
  std::string text = slurp(folder / "RESULTS.md");
  CHECK(text.rfind("# Results\n\n## Runtime\n\nkept as it is\n", 0) == 0);
  size_t first = text.find("<!-- raspc bench: begin");
  REQUIRE(first != std::string::npos);
  CHECK(text.find("<!-- raspc bench: begin", first + 1) == std::string::npos);
  CHECK(text.find("| length | compiled | bidirectional | 3 |") != std::string::npos);
  std::filesystem::remove_all(folder);
}

TEST_CASE("raspc bench measures a model file, and its program when the file carries it") {
  auto folder = scratch_folder();
  const std::string hist = std::string(RASPC_SOURCE_DIR) + "/programs/hist.rasp";
  REQUIRE(run_raspc("compile '" + hist + "' --max-len 4 --no-verify -o hist.safetensors", folder).code == 0);
  REQUIRE(run_raspc("handset-aab -o aab.safetensors", folder).code == 0);
  CommandResult r = run_raspc("bench hist.safetensors aab.safetensors --samples 1 --no-instructions --out-dir out", folder);
  INFO(r.err);
  REQUIRE(r.code == 0);
  nlohmann::json report = nlohmann::json::parse(slurp(folder / "out/cost.json"));
  REQUIRE(report["rows"].size() == 2);  // no post rows: aab.rasp was not named
  const nlohmann::json& compiled = report["rows"][0];
  CHECK(compiled["program"] == "hist.safetensors");
  CHECK(compiled["model"] == "file");
  CHECK(compiled["max_len"] == 4);
  CHECK(compiled["layers"] == 1);
  CHECK(compiled["interpreter_us_per_position"]["median"].get<double>() > 0);  // the source is in the file
  const nlohmann::json& handset = report["rows"][1];
  CHECK(handset["max_len"] == 5);     // no BOS: all 5 positions
  CHECK(handset["parameters"] == 344);
  CHECK(handset["flops_per_token"].get<double>() == Approx(3535.0 / 5).epsilon(1e-12));
  CHECK(handset["interpreter_us_per_position"].is_null());  // hand-set: no program to run
}

TEST_CASE("raspc bench keeps tokens made of '-' and digits strings, and refuses an integer token beyond 64 bits") {
  auto folder = scratch_folder();
  std::ofstream(folder / "rev.rasp") << "reversed = aggregate(select(indices, length - indices - 1, ==), tokens);\nreversed;\n";
  REQUIRE(run_raspc("compile rev.rasp --vocab '- --' --max-len 2 --no-verify -o dash.safetensors", folder).code == 0);
  CommandResult r = run_raspc("bench dash.safetensors --samples 1 --no-instructions", folder);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("| dash.safetensors |") != std::string::npos);

  REQUIRE(run_raspc("compile rev.rasp --vocab '[1,2]' --max-len 2 --no-verify -o huge.safetensors", folder).code == 0);
  Model model = load_model((folder / "huge.safetensors").string());
  const int two = model.token_id("2");
  REQUIRE(two >= 0);
  model.vocab[size_t(two)] = "99999999999999999999";
  save_model(model, (folder / "huge.safetensors").string());
  r = run_raspc("bench huge.safetensors --samples 1 --no-instructions", folder);
  CHECK(r.code == 1);
  CHECK(r.err == "measuring huge.safetensors...\nhuge.safetensors: error: the model's token 99999999999999999999 is an "
                 "integer that does not fit in 64 bits\n");
}

TEST_CASE("raspc bench on a model whose stored program never ends refuses it at the statement, not hangs") {
  auto folder = scratch_folder();
  std::ofstream(folder / "rev.rasp") << "reversed = aggregate(select(indices, length - indices - 1, ==), tokens);\nreversed;\n";
  REQUIRE(run_raspc("compile rev.rasp --vocab ab --max-len 2 --no-verify -o crafted.safetensors", folder).code == 0);
  Model model = load_model((folder / "crafted.safetensors").string());
  model.metadata["program"] = "n = [[[i for i in range(1000)] for j in range(1000)] for k in range(1000)];\ntokens;\n";
  save_model(model, (folder / "crafted.safetensors").string());
  CommandResult r = run_raspc("bench crafted.safetensors --samples 1 --no-instructions", folder);
  CHECK(r.code == 1);
  CHECK(r.err.find("crafted.safetensors (program):1:1: error: this statement takes more than 5000000 steps of "
                   "compile-time evaluation") != std::string::npos);
}
