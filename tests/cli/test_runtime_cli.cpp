// raspc run, generate, inspect and handset-aab, as a user calls them.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "tests/cli/run_raspc.hpp"

namespace {

struct Outcome {
  int status = -1;
  std::string out, err;
};

// Runs raspc with `arguments` (shell syntax) in this test process's own scratch folder, so tests
// running in parallel never share a file.
std::filesystem::path scratch() { return raspc::testing::scratch_folder(); }

Outcome raspc_cli(const std::string& arguments) {
  raspc::testing::CommandResult r = raspc::testing::run_raspc(arguments, scratch());
  return Outcome{r.code, r.out, r.err};
}

const char* kModel = "runtime_cli_aab.safetensors";

// The hand-set (aab)* model written by `raspc handset-aab` for one test, removed after it.
struct AabFile {
  std::string written = raspc_cli(std::string("handset-aab -o ") + kModel).out;
  ~AabFile() { std::filesystem::remove(scratch() / kModel); }
};

}  // namespace

TEST_CASE("raspc generate runs the hand-set (aab)* model as in the post") {
  AabFile file;
  REQUIRE(file.written == std::string("wrote ") + kModel + "\n");
  const std::pair<const char*, const char*> cases[] = {
      {"a", "baabaabaab"}, {"ba", "abaabaabaa"}, {"abaab", "aabaabaaba"}, {"ababa", "abaabaabaa"}, {"bbbbb", "aabaabaaba"}};
  for (auto [prompt, expected] : cases) {
    Outcome o = raspc_cli(std::string("generate ") + kModel + " --prompt " + prompt + " -n 10");
    CHECK(o.status == 0);
    CHECK(o.out == std::string(expected) + "\n");
    // The post's model has 5 positions: generation slides its window past them, and says so.
    CHECK(o.err == "note: the model has 5 positions; past them each token is predicted from the last 5 tokens (a "
                   "window that slides, recomputed at each step)\n");
  }
  CHECK(raspc_cli(std::string("generate ") + kModel + " --prompt a -n 0").out == "\n");
}

TEST_CASE("raspc run prints the output at every position") {
  AabFile file;
  Outcome o = raspc_cli(std::string("run ") + kModel + " --input aabaa --margins");
  CHECK(o.status == 0);
  CHECK(o.out == "[b,b,a,a,b]\nmargins: [1023,1023,1023,1025,1023]\n");
  CHECK(raspc_cli(std::string("run ") + kModel + " --input '[a,b]' --device cpu").out == "[b,a]\n");
}

TEST_CASE("RASPC_MAX_ISA caps the product kernels, and a value that names none is refused") {
  AabFile file;
  // Every kernel this CPU runs gives the (aab)* model's outputs and margins (they differ from the
  // AVX-512 kernel's in the last bits at most; %.4g shows none of them).
  for (const char* cap : {"avx512", "avx2", "generic"}) {
    raspc::testing::CommandResult r = raspc::testing::run_raspc(
        std::string("run ") + kModel + " --input aabaa --margins", scratch(), std::string("RASPC_MAX_ISA=") + cap);
    INFO("RASPC_MAX_ISA=" << cap);
    CHECK(r.code == 0);
    CHECK(r.out == "[b,b,a,a,b]\nmargins: [1023,1023,1023,1025,1023]\n");
  }
  raspc::testing::CommandResult bad =
      raspc::testing::run_raspc(std::string("run ") + kModel + " --input aabaa", scratch(), "RASPC_MAX_ISA=sse4");
  CHECK(bad.code == 1);
  CHECK(bad.out.empty());
  CHECK(bad.err == "raspc: error: RASPC_MAX_ISA is 'sse4', which is not one of avx512, avx2 or generic.\n");
}

TEST_CASE("raspc inspect --all --dense prints the config and every labelled matrix") {
  AabFile file;
  Outcome o = raspc_cli(std::string("inspect --all --dense ") + kModel);
  CHECK(o.status == 0);
  CHECK(o.out.find("parameters: 344\nFLOPs per token: 783 (attending to all 5 positions)\nvocabulary: a b\n") !=
        std::string::npos);
  CHECK(o.out.find("transformer.wte.weight (2,8)  rows: tokens, columns: residual\n"
                   "   pos:0  pos:1  pos:2  pos:3  pos:4  tokens:a  tokens:b  scratch\n"
                   "a      0      0      0      0      0         1         0        0\n"
                   "b      0      0      0      0      0         0         1        0\n") != std::string::npos);
  Outcome one = raspc_cli(std::string("inspect ") + kModel + " --tensor transformer.h.0.attn.c_proj.bias --dense");
  CHECK(one.out == "transformer.h.0.attn.c_proj.bias (8)\n"
                   "      pos:0  pos:1  pos:2  pos:3  pos:4  tokens:a  tokens:b  scratch\n"
                   "bias      0      0      0      0      0      1024         0        0\n");
  // Without --dense the all-zero columns are left out, and said to be.
  one = raspc_cli(std::string("inspect ") + kModel + " --tensor transformer.h.0.attn.c_proj.bias");
  CHECK(one.out == "transformer.h.0.attn.c_proj.bias (8)\n"
                   "(0 all-zero rows and 7 all-zero columns left out)\n"
                   "      tokens:a\n"
                   "bias      1024\n");
  one = raspc_cli(std::string("inspect ") + kModel + " --tensor transformer.h.0.attn.c_attn.bias");
  CHECK(one.out.rfind("transformer.h.0.attn.c_attn.bias [q] (8)\n(all zero)\n\n", 0) == 0);
}

TEST_CASE("the runtime commands explain bad input") {
  AabFile file;
  Outcome o = raspc_cli(std::string("run ") + kModel + " --input aabca");
  CHECK(o.status == 1);
  CHECK(o.out.empty());
  CHECK(o.err == "--input:1:4: error: \"c\" is not in the model's input vocabulary (a b)\n  aabca\n     ^\n");
  o = raspc_cli(std::string("run ") + kModel + " --input aabaab");
  CHECK(o.status == 1);
  CHECK(o.err == "--input:1:1: error: the input has 6 tokens but the model takes at most 5 (its positions)\n"
                 "  aabaab\n  ^~~~~~\n");
  o = raspc_cli("run runtime_cli_missing.safetensors --input a");
  CHECK(o.status == 1);
  CHECK(o.err == "runtime_cli_missing.safetensors: error: cannot open the file (does it exist, and is it readable?)\n");
  o = raspc_cli(std::string("generate ") + kModel + " --prompt a --device tpu");
  CHECK(o.status == 1);
  CHECK(o.err == "--device:1:1: error: unknown device \"tpu\"; use cpu or cuda\n  tpu\n  ^~~\n");
  o = raspc_cli(std::string("inspect ") + kModel + " --tensor transformer.h.1.attn.c_proj.bias");
  CHECK(o.status == 1);
  CHECK(o.err.rfind("--tensor:1:1: error: the model has no tensor \"transformer.h.1.attn.c_proj.bias\"; its "
                    "tensors are transformer.wte.weight, transformer.wpe.weight, ",
                    0) == 0);
  std::ofstream(scratch() / "runtime_cli_bad.safetensors") << "abc";
  o = raspc_cli("inspect runtime_cli_bad.safetensors");
  CHECK(o.status == 1);
  CHECK(o.err == "runtime_cli_bad.safetensors: error: the file is truncated: it has 3 bytes, fewer than the 8-byte "
                 "header length of a safetensors file\n");
  std::filesystem::remove(scratch() / "runtime_cli_bad.safetensors");
}
