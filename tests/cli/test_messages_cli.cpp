// What the commands say while they work and when they refuse: compile's summary, progress and
// warnings, generate's refusals, eval's vocabulary, the parser's locations, and the exit codes.
#include <catch2/catch.hpp>

#include "tests/cli/run_raspc.hpp"

namespace {

using Result = raspc::testing::CommandResult;

std::filesystem::path scratch() { return raspc::testing::scratch_folder(); }

Result raspc_cli(const std::string& args, const std::string& environment = "") {
  return raspc::testing::run_raspc(args, raspc::testing::scratch_with_programs(), environment);
}

void write(const std::string& name, const std::string& text) { std::ofstream(scratch() / name) << text; }

size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  size_t n = 0;
  for (size_t at = 0; at < text.size();) {
    if (text.compare(at, prefix.size(), prefix) == 0) ++n;
    size_t end = text.find('\n', at);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return n;
}

}  // namespace

TEST_CASE("messages: compile without -o says that nothing is written") {
  Result r = raspc_cli("compile programs/hist.rasp --max-len 3");
  CHECK(r.code == 0);
  CHECK(r.out.rfind("model: 1 layer", 0) == 0);
  CHECK(r.out.substr(r.out.size() - 30) == "nothing written (no -o given)\n");
  CHECK(r.err == "");  // piped, and done in well under the 5 s between progress lines
}

TEST_CASE("messages: piped, the verification's progress is a line at each interval, on stderr") {
  // RASPC_PROGRESS_INTERVAL=0: a line after every round of checked batches but the last.
  Result r = raspc_cli("compile programs/hist.rasp --max-len 8 --samples 20000 --threads 2", "RASPC_PROGRESS_INTERVAL=0");
  CHECK(r.code == 0);
  const size_t lines = count_lines_starting(r.err, "verifying: ");
  CHECK(lines >= 1);
  CHECK(lines == count_lines_starting(r.err, ""));  // nothing else on stderr
  CHECK(r.err.find(" of 87,380 inputs on 2 threads (") != std::string::npos);
  CHECK(r.err.find("% ), ") == std::string::npos);
  CHECK(r.err.find(" elapsed, about ") != std::string::npos);
  CHECK(r.err.find("\r") == std::string::npos);  // no terminal bar in a log
  // The summary comes first on stdout, the verification after it.
  CHECK(r.out.find("model: ") < r.out.find("verification: "));
}

TEST_CASE("messages: --causal on a program whose header says causal: no warns") {
  Result r = raspc_cli("compile programs/hist.rasp --max-len 3 --causal");
  CHECK(r.code == 0);
  CHECK(r.err ==
        "programs/hist.rasp: warning: the header says `causal: no`, but the program is compiled causally: a selector "
        "then sees only earlier keys, so the program computes something else than its header describes (--causal)\n");
  Result fine = raspc_cli("compile programs/aab.rasp --max-len 3 --causal");
  CHECK(fine.err == "");
}

TEST_CASE("messages: a program undefined on most inputs is a loud warning in compile, a refusal in compare") {
  // A mean of strings: undefined wherever a query selects two or more positions holding tokens.
  write("mean.rasp", "# vocab: a b\naggregate(select(indices, indices, <=), tokens);\n");
  Result r = raspc_cli("compile mean.rasp --max-len 4");
  CHECK(r.code == 0);
  CHECK(r.err ==
        "mean.rasp: warning: THE PROGRAM IS UNDEFINED ON 28 OF THE 30 INPUTS CHECKED (93%): the interpreter fails on "
        "them (the `undefined:` line names one, and the operation that fails), so the model was verified on the other 2 "
        "only\n");
  CHECK(r.out.find("undefined: the program itself is undefined on 28 inputs, for example \"aa\": mean.rasp:2:1: error: "
                   "at position 1 this aggregate selects 2 positions") != std::string::npos);
  Result compare = raspc_cli("compare mean.rasp --max-len 4 --steps 1");
  CHECK(compare.code == 1);
  CHECK(compare.out == "");
  CHECK(compare.err.rfind("mean.rasp: error: the program is undefined on ", 0) == 0);
  CHECK(compare.err.find("held-out inputs (the interpreter fails there), so there is nothing to compare") !=
        std::string::npos);
}

TEST_CASE("messages: -o is checked before verifying") {
  Result r = raspc_cli("compile programs/hist.rasp -o missing/hist.safetensors");
  CHECK(r.code == 1);
  CHECK(r.out == "");
  CHECK(r.err == "missing/hist.safetensors: error: cannot create the file: the folder missing does not exist\n");
}

TEST_CASE("messages: generate refuses a model whose outputs are not next tokens, unless --force") {
  // hist's outputs are counts, not letters: it computes a value at each position.
  REQUIRE(raspc_cli("compile programs/hist.rasp --causal --max-len 4 -o counts.safetensors").code == 0);
  Result r = raspc_cli("generate counts.safetensors --prompt ab -n 2");
  CHECK(r.code == 1);
  CHECK(r.out == "");
  CHECK(r.err ==
        "counts.safetensors: error: this model's outputs include tokens that are not input tokens (1 2 3 4), so its "
        "output at a position is a value computed there, not the next token; run it with `raspc run` (--force "
        "generates anyway)\n");
  Result forced = raspc_cli("generate counts.safetensors --prompt ab -n 1 --force");
  CHECK(forced.code == 0);
  CHECK(forced.err ==
        "counts.safetensors: warning: this model's outputs include tokens that are not input tokens (1 2 3 4), so its "
        "output at a position is a value computed there, not the next token; generating anyway (--force)\n");
}

TEST_CASE("messages: generate says when it slides a window past the model's positions") {
  REQUIRE(raspc_cli("handset-aab -o aab.safetensors").code == 0);
  Result r = raspc_cli("generate aab.safetensors --prompt a -n 10");
  CHECK(r.code == 0);
  CHECK(r.out == "baabaabaab\n");
  CHECK(r.err ==
        "note: the model has 5 positions; past them each token is predicted from the last 5 tokens (a window that "
        "slides, recomputed at each step)\n");
  Result short_run = raspc_cli("generate aab.safetensors --prompt a -n 3");
  CHECK(short_run.err == "");
}

TEST_CASE("messages: eval reads the # vocab: line, --vocab \"1 2 3 4\" is ints") {
  write("neg.rasp", "# vocab: 1 2 3 4\n-tokens;\n");
  Result header = raspc_cli("eval neg.rasp --input '[1,2]'");
  CHECK(header.code == 0);
  CHECK(header.out == "[-1,-2]\n");
  Result outside = raspc_cli("eval neg.rasp --input '[1,5]'");
  CHECK(outside.code == 1);
  CHECK(outside.err.rfind("--input:1:4: error: the token 5 is not in the vocabulary (1 2 3 4)\n", 0) == 0);
  Result ints = raspc_cli("eval -e '-tokens' --vocab '1 2 3 4' --input '[3]'");
  CHECK(ints.code == 0);
  CHECK(ints.out == "[-3]\n");
  write("neg2.rasp", "-tokens;\n");
  Result vocab_ints = raspc_cli("compile neg2.rasp --vocab '1 2 3 4' --max-len 2");
  CHECK(vocab_ints.code == 0);
  CHECK(vocab_ints.out.find("0 mismatches") != std::string::npos);
}

TEST_CASE("messages: an expression undefined on every input names the operation that fails") {
  write("neg_strings.rasp", "-tokens;\n");
  Result r = raspc_cli("compile neg_strings.rasp --vocab '1 2 3 4' --max-len 2");
  CHECK(r.code == 0);  // "1 2 3 4" is ints: -tokens is defined
  Result strings = raspc_cli("compile neg_strings.rasp --vocab 'a b' --max-len 2");
  CHECK(strings.code == 1);
  CHECK(strings.err.rfind("neg_strings.rasp:1:1: error: this expression is undefined on every input (every combination "
                          "of its inputs fails, for example: cannot negate ",
                          0) == 0);
}

TEST_CASE("messages: a missing semicolon is reported at the end of the statement that lacks it") {
  write("semi.rasp", "a = tokens\nb = a;\nb;\n");
  Result r = raspc_cli("eval semi.rasp --input ab");
  CHECK(r.code == 1);
  CHECK(r.err ==
        "semi.rasp:1:11: error: expected `;` after the assignment but found the name `b` on line 2\n  a = tokens\n"
        "            ^\n");
}

TEST_CASE("messages: a refused select on a numerical s-op points at the select, with a note at the s-op") {
  write("num.rasp", "# vocab: a b\nf = aggregate(full_s, indicator(tokens == \"a\"));\nselector_width(select(f, f, ==));\n");
  Result r = raspc_cli("compile num.rasp --max-len 3");
  CHECK(r.code == 1);
  CHECK(r.err ==
        "num.rasp:3:16: error: a selector cannot compare a numerical s-op (attention compares one-hot values); make "
        "it categorical with categorical(...) or compare a categorical s-op\n"
        "  selector_width(select(f, f, ==));\n"
        "                 ^~~~~~~~~~~~~~~~\n"
        "num.rasp:2:5: note: this s-op is numerical: its selector may select several keys and its values are numbers: "
        "the mean, numerical\n"
        "  f = aggregate(full_s, indicator(tokens == \"a\"));\n"
        "      ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n");
}

TEST_CASE("messages: no failure exits 0: bench --device cuda without CUDA exits 1 before measuring") {
  if (raspc_cli("--version").out.find("CUDA off)") == std::string::npos) return;  // a CUDA build may have a GPU
  Result r = raspc_cli("bench programs/hist.rasp --max-len 3 --device cuda --no-instructions");
  CHECK(r.code == 1);
  CHECK(r.out == "");
  CHECK(r.err.rfind("--device: error: ", 0) == 0);
}

TEST_CASE("messages: out of memory names the file and only the options the command has") {
#if defined(__SANITIZE_ADDRESS__)
  // The address sanitizer reserves terabytes of address space: no process starts under ulimit -v.
  return;
#else
  // 100 MB of address space: raspc starts in under 10 MB; dyck2 at length 64 needs about 600 MB.
  Result r = raspc_cli("compile programs/dyck2.rasp --max-len 64 --no-verify -o d.safetensors", "ulimit -v 100000;");
  CHECK(r.code == 1);
  CHECK(r.err == "programs/dyck2.rasp: error: out of memory (try a smaller --max-len, --vocab or --samples)\n");
  CHECK(!std::filesystem::exists(scratch() / "d.safetensors"));
#endif
}
