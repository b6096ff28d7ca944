// Every error names the file or the flag it is about (never a bare `error:`), and what used to be
// a silent fallback (an empty flag, a clamped length, a count without bound) is an error.
#include <catch2/catch.hpp>

#include "tests/cli/run_raspc.hpp"

using namespace raspc::testing;
namespace fs = std::filesystem;

namespace {

const char* const kReverse = "reversed = aggregate(select(indices, length - indices - 1, ==), tokens);\nreversed;\n";

CommandResult raspc_cli(const std::string& args) {
  fs::path folder = scratch_folder();
  if (!fs::exists(folder / "rev.rasp")) std::ofstream(folder / "rev.rasp") << kReverse;
  return run_raspc(args, folder);
}

}  // namespace

TEST_CASE("generate refuses a bidirectional model and a numerical one, naming the file") {
  REQUIRE(raspc_cli("compile rev.rasp --vocab ab --max-len 3 -o bi.safetensors").code == 0);
  CommandResult r = raspc_cli("generate bi.safetensors --prompt ab");
  CHECK(r.code == 1);
  CHECK(r.err == "bi.safetensors: error: this model is bidirectional (every position sees later ones), so it cannot "
                 "generate token by token; run it with `raspc run`\n");
  const std::string frac = std::string(RASPC_SOURCE_DIR) + "/programs/frac_prevs.rasp";
  REQUIRE(raspc_cli("compile '" + frac + "' --causal --max-len 3 -o num.safetensors").code == 0);
  r = raspc_cli("generate num.safetensors --prompt x");
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "num.safetensors: error: this model's output is a number read off the residual stream, not a token, "
                 "so it cannot generate text; run it with `raspc run`\n");
}

TEST_CASE("a --device cuda where there is none names the flag") {
  REQUIRE(raspc_cli("handset-aab -o aab.safetensors").code == 0);
  for (const std::string command : {"run aab.safetensors --input ab", "generate aab.safetensors --prompt a -n 2",
                                    "compile rev.rasp --vocab ab --max-len 2"}) {
    INFO(command);
    CommandResult r = raspc_cli(command + " --device cuda");
    if (r.code == 0) continue;  // a CUDA build on a machine with a GPU runs it
    CHECK(r.code == 1);
    CHECK(r.err.rfind("--device: error: ", 0) == 0);
    CHECK(r.out.empty());  // refused before the work
  }
}

TEST_CASE("empty flags are errors, not defaults") {
  CommandResult r = raspc_cli("compile rev.rasp --vocab '' --max-len 2");
  CHECK(r.code == 1);
  CHECK(r.err == "--vocab:1:1: error: the vocabulary is empty; give its symbols, as in ehlo\n  \n  ^\n");
  r = raspc_cli("eval rev.rasp --vocab '' --input ab");
  CHECK(r.code == 1);
  CHECK(r.err == "--vocab:1:1: error: the vocabulary is empty; give its symbols, as in ehlo\n  \n  ^\n");
  r = raspc_cli("train rev.rasp --vocab '' --steps 1 -o t.safetensors");
  CHECK(r.code == 1);
  CHECK(r.err == "--vocab:1:1: error: the vocabulary is empty; give its symbols, as in ehlo\n  \n  ^\n");
  REQUIRE(raspc_cli("handset-aab -o aab.safetensors").code == 0);
  r = raspc_cli("inspect aab.safetensors --tensor ''");
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "--tensor: error: the tensor name is empty; name one, as in transformer.wte.weight\n");
}

TEST_CASE("lengths and counts out of their documented range are refused, not clamped or run without bound") {
  CommandResult r = raspc_cli("compile rev.rasp --vocab ab --max-len 4 --verify-len 9");
  CHECK(r.code == 1);
  CHECK(r.err == "--verify-len: error: is 9, above --max-len 4: the model takes no longer inputs to verify\n");
  r = raspc_cli("compile rev.rasp --vocab ab --max-len 4 --samples 9223372036854775807");
  CHECK(r.code == 1);
  CHECK(r.err == "--samples: error: must be from 0 to 10000000, not 9223372036854775807\n");
  REQUIRE(raspc_cli("handset-aab -o aab.safetensors").code == 0);
  r = raspc_cli("generate aab.safetensors --prompt a -n 2147483647");
  CHECK(r.code == 1);
  CHECK(r.err == "-n:1:1: error: the number of tokens to generate must be from 0 to 100000\n  2147483647\n  ^~~~~~~~~~\n");
  r = raspc_cli("compare rev.rasp --vocab ab --verify-samples 9223372036854775807");
  CHECK(r.code == 1);
  CHECK(r.err == "--verify-samples:1:1: error: give from 1 to 10000000 samples\n  9223372036854775807\n  ^~~~~~~~~~~~~~~~~~~\n");
}

TEST_CASE("a refusal about a node with no place in the source names the program") {
  std::string vocab = "[";
  for (int i = 0; i < 3000; ++i) vocab += (i ? "," : "") + std::to_string(i);
  CommandResult r = raspc_cli("compile rev.rasp --vocab '" + vocab + "]' --max-len 4 --no-verify");
  CHECK(r.code == 1);
  CHECK(r.err.rfind("rev.rasp: error: this categorical s-op can take 3000 values, more than the 2048 a compiled model "
                    "can hold",
                    0) == 0);
  std::ofstream(scratch_folder() / "none.rasp") << "x = 1;\n";
  r = raspc_cli("eval none.rasp --input ab");
  CHECK(r.code == 1);
  CHECK(r.err.rfind("none.rasp: error: ", 0) == 0);
}
