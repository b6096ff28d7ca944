// `--json` on eval, compile and bench: parsed, and checked against the schema of docs/json.md
// (every key the page lists, of the type it says, and no other).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <set>

#include "tests/cli/run_raspc.hpp"

namespace {

using Result = raspc::testing::CommandResult;
using nlohmann::json;

Result raspc_cli(const std::string& args) {
  return raspc::testing::run_raspc(args, raspc::testing::scratch_with_programs());
}

std::set<std::string> keys(const json& object) {
  std::set<std::string> names;
  for (const auto& [key, value] : object.items()) names.insert(key);
  return names;
}

bool strings(const json& array) {
  if (!array.is_array()) return false;
  for (const json& item : array)
    if (!item.is_string()) return false;
  return true;
}

// The compile report's schema (docs/json.md, `raspc compile --json`): the report's one JSON, as
// Python's Model.report has it, with the program and the files written.
void check_compile_report(const json& j, bool verified) {
  std::set<std::string> expected{"program",          "written",         "config",           "layers",
                                 "heads",            "n_embd",          "n_inner",          "parameters",
                                 "flops_per_token",  "numerical_output", "verified",        "inputs_checked",
                                 "mismatches",       "undefined_inputs", "verified_len",    "exhaustive",
                                 "exhaustive_len",   "samples_per_length", "checked_by_length", "first_mismatch",
                                 "first_departure",  "first_undefined", "estimated_verify_inputs",
                                 "estimated_verify_seconds", "verify_threads", "compile_ms", "verify_ms"};
  // Exactly one of the two figures, as the output is numerical or categorical.
  expected.insert(j["numerical_output"] == true ? "worst_numerical_error" : "min_logit_margin");
  std::set<std::string> found = keys(j);
  found.erase("numerical_selector_margin");  // with numerical selectors only, both together
  found.erase("numerical_selector_rounding");
  CHECK(found == expected);
  CHECK(keys(j["config"]) == std::set<std::string>{"n_layer", "n_head", "n_embd", "n_inner", "n_positions",
                                                   "vocab_size", "causal", "layer_norm", "activation"});
  for (const char* count : {"n_layer", "n_head", "n_embd", "n_inner", "n_positions", "vocab_size"})
    CHECK(j["config"][count].is_number_integer());
  CHECK(j["config"]["causal"].is_boolean());
  CHECK(j["config"]["layer_norm"].is_boolean());
  CHECK(j["config"]["activation"].is_string());
  CHECK(j["layers"] == j["config"]["n_layer"]);
  CHECK(j["parameters"].is_number_integer());
  CHECK(j["flops_per_token"].is_number());
  CHECK(j["numerical_output"].is_boolean());
  CHECK(j["compile_ms"].get<double>() > 0);
  CHECK(strings(j["written"]));
  CHECK(j["verified"] == verified);
  for (const char* count : {"inputs_checked", "mismatches", "undefined_inputs", "verified_len", "exhaustive_len",
                            "samples_per_length"})
    CHECK(j[count].is_number_integer());
  CHECK(j["exhaustive"].is_boolean());
  CHECK(j["checked_by_length"].is_array());
  for (const char* text : {"first_mismatch", "first_departure", "first_undefined"})
    CHECK((j[text].is_null() || j[text].is_string()));
  if (!verified) {
    CHECK(j["inputs_checked"] == 0);
    CHECK(j["verify_ms"] == 0);
    CHECK(j["estimated_verify_seconds"] == 0);
    CHECK(j["verify_threads"] == 0);
    return;
  }
  CHECK(j["verify_ms"].get<double>() > 0);
  CHECK(j["verify_threads"].get<int>() >= 1);
  CHECK(j["estimated_verify_seconds"].get<double>() > 0);
  CHECK(j["checked_by_length"].size() == j["verified_len"].get<size_t>() + 1);
}

}  // namespace

TEST_CASE("json: eval prints one object with input and output, trace and analysis on request") {
  Result r = raspc_cli("eval -e 'selector_width(select(tokens, tokens, ==))' --input hello --json");
  CHECK(r.code == 0);
  CHECK(r.out == "{\"input\":[\"h\",\"e\",\"l\",\"l\",\"o\"],\"output\":[\"1\",\"1\",\"2\",\"2\",\"1\"]}\n");
  Result all = raspc_cli("eval -e 'f = aggregate(full_s, indicator(tokens == \"a\")); g = aggregate(full_s, tokens); f' "
                         "--input ab --trace --analyse --json");
  CHECK(all.code == 0);
  json j = json::parse(all.out);
  CHECK(keys(j) == std::set<std::string>{"input", "output", "trace", "analysis"});
  CHECK(j["output"] == json({"1/2", "1/2"}));
  CHECK(j["trace"]["f"] == json({"1/2", "1/2"}));
  CHECK(j["trace"]["g"].is_null());  // a mean of strings: undefined on this input
  CHECK(keys(j["analysis"]) == std::set<std::string>{"layers", "heads_per_layer", "max_heads"});
  CHECK(j["analysis"]["layers"] == 1);
  CHECK(j["analysis"]["heads_per_layer"] == json({1}));
  CHECK(j["analysis"]["max_heads"] == 1);
}

TEST_CASE("json: compile prints the report, the files written, and nothing else on stdout") {
  Result r = raspc_cli("compile programs/hist.rasp --max-len 4 -o hist.safetensors --json");
  CHECK(r.code == 0);
  json j = json::parse(r.out);
  check_compile_report(j, true);
  CHECK(j["program"] == "programs/hist.rasp");
  CHECK(j["written"] == json({"hist.safetensors"}));
  CHECK(j["config"]["n_layer"] == 1);
  CHECK(j["config"]["n_positions"] == 5);
  CHECK(j["config"]["activation"] == "gelu");
  CHECK(j["inputs_checked"] == 340);  // 4 + 16 + 64 + 256
  CHECK(j["checked_by_length"] == json({0, 4, 16, 64, 256}));
  CHECK(j["mismatches"] == 0);
  CHECK(j["exhaustive"] == true);

  Result unverified = raspc_cli("compile programs/frac_prevs.rasp --causal --max-len 4 --no-verify --json");
  CHECK(unverified.code == 0);
  json u = json::parse(unverified.out);
  check_compile_report(u, false);
  CHECK(u["numerical_output"] == true);
  CHECK(u["written"] == json::array());

  Result numerical = raspc_cli("compile programs/frac_prevs.rasp --causal --max-len 4 --json");
  check_compile_report(json::parse(numerical.out), true);

  // The estimate is wall time on the verification's threads: three share the same inputs.
  Result one = raspc_cli("compile programs/hist.rasp --max-len 6 --threads 1 --json");
  Result three = raspc_cli("compile programs/hist.rasp --max-len 6 --threads 3 --json");
  const json j1 = json::parse(one.out), j3 = json::parse(three.out);
  CHECK(j1["verify_threads"] == 1);
  CHECK(j3["verify_threads"] == 3);
  CHECK(j3["estimated_verify_inputs"] == j1["estimated_verify_inputs"]);
  CHECK(j3["estimated_verify_seconds"].get<double>() ==
        Approx(j1["estimated_verify_seconds"].get<double>() / 3).epsilon(1e-12));
  Result text = raspc_cli("compile programs/hist.rasp --max-len 6 --threads 3 -o hist6.safetensors");
  CHECK(text.out.find(" s estimated on 3 threads\n") != std::string::npos);

  Result combined = raspc_cli("compile programs/hist.rasp --json --explain");
  CHECK(combined.code == 1);
  CHECK(combined.err.rfind("raspc compile: error: --explain excludes --json\n", 0) == 0);
}

TEST_CASE("json: bench prints cost.json's object") {
  Result r = raspc_cli("bench programs/hist.rasp --max-len 3 --samples 1 --no-instructions --json");
  CHECK(r.code == 0);
  json j = json::parse(r.out);
  CHECK(keys(j) == std::set<std::string>{"machine", "rows"});
  CHECK(keys(j["machine"]) == std::set<std::string>{"cpu", "cores", "compiler", "flags", "threads", "date"});
  REQUIRE(j["rows"].size() == 1);
  const json& row = j["rows"][0];
  CHECK(row["program"] == "hist");
  CHECK(row["model"] == "compiled");
  CHECK(row["mode"] == "bidirectional");
  CHECK(row["max_len"] == 3);
  for (const char* key : {"layers", "heads", "n_embd", "n_inner", "parameters", "nonzero_parameters", "flops_per_token",
                          "timed", "sequence_us_per_token", "batch64_us_per_token", "interpreter_us_per_position",
                          "native_ns_per_position", "native_instructions_per_position"})
    CHECK(row.contains(key));
  CHECK(keys(row["sequence_us_per_token"]) == std::set<std::string>{"median", "min", "max", "samples"});
  CHECK(row["sequence_us_per_token"]["samples"] == 1);
}
