// The command line itself: unknown names with a suggestion, bad values naming the flag, the usage
// line and exit 1; --version, help, completion; one meaning per flag.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "tests/cli/run_raspc.hpp"

namespace {

using Result = raspc::testing::CommandResult;

std::filesystem::path scratch() { return raspc::testing::scratch_folder(); }

Result raspc_cli(const std::string& args) { return raspc::testing::run_raspc(args, scratch()); }

void write(const std::string& name, const std::string& text) { std::ofstream(scratch() / name) << text; }

const std::string kEvalUsage =
    "Usage: raspc eval [OPTIONS] [file]\nRun `raspc eval --help` for every flag and its default.\n";

}  // namespace

TEST_CASE("command line: an unknown subcommand names the nearest one and exits 1") {
  Result r = raspc_cli("evl x.rasp");
  CHECK(r.code == 1);
  CHECK(r.out == "");
  CHECK(r.err ==
        "raspc: error: unknown subcommand `evl`; did you mean `eval`?\nUsage: raspc [OPTIONS] SUBCOMMAND\n"
        "Run `raspc --help` for every flag and its default.\n");
  // Nothing near: no suggestion.
  Result far = raspc_cli("frobnicate");
  CHECK(far.code == 1);
  CHECK(far.err.rfind("raspc: error: unknown subcommand `frobnicate`\n", 0) == 0);
  Result none = raspc_cli("");
  CHECK(none.code == 1);
  CHECK(none.err.rfind("raspc: error: give a subcommand, as in `raspc eval FILE --input hello`", 0) == 0);
}

TEST_CASE("command line: an unknown flag names the nearest flag of its subcommand") {
  Result r = raspc_cli("eval -e tokens --iput abc");
  CHECK(r.code == 1);
  CHECK(r.err == "raspc eval: error: unknown flag `--iput`; did you mean `--input`?\n" + kEvalUsage);
  Result with_value = raspc_cli("eval -e tokens --iput=abc");
  CHECK(with_value.err == "raspc eval: error: unknown flag `--iput`; did you mean `--input`?\n" + kEvalUsage);
  Result top = raspc_cli("--verison");
  CHECK(top.code == 1);
  CHECK(top.err.rfind("raspc: error: unknown flag `--verison`; did you mean `--version`?\n", 0) == 0);
  Result extra = raspc_cli("eval a.rasp b.rasp");
  CHECK(extra.code == 1);
  CHECK(extra.err == "raspc eval: error: unexpected argument `b.rasp`\n" + kEvalUsage);
}

TEST_CASE("command line: a bad value names the flag and what it expects, a missing one too") {
  Result r = raspc_cli("compile x.rasp --max-len abc");
  CHECK(r.code == 1);
  CHECK(r.err ==
        "--max-len: error: expects a whole number, not \"abc\"\nUsage: raspc compile [OPTIONS] file\n"
        "Run `raspc compile --help` for every flag and its default.\n");
  Result missing = raspc_cli("eval -e tokens --input");
  CHECK(missing.code == 1);
  CHECK(missing.err == "--input: error: expects text after it\n" + kEvalUsage);
  Result required = raspc_cli("generate");
  CHECK(required.code == 1);
  CHECK(required.err.rfind("raspc generate: error: model is required\nUsage: raspc generate [OPTIONS] model\n", 0) == 0);
  // A positional named in capitals keeps them.
  CHECK(raspc_cli("train").err.rfind("raspc train: error: PROGRAM is required\n", 0) == 0);
  Result range = raspc_cli("bench --samples 0");
  CHECK(range.code == 1);
  CHECK(range.err.rfind("--samples: error: value 0 not in range 1 to 1000\nUsage: raspc bench [OPTIONS] [targets...]\n", 0) == 0);
}

TEST_CASE("command line: --version says the version, commit, build type and CUDA") {
  Result r = raspc_cli("--version");
  CHECK(r.code == 0);
  CHECK(r.err == "");
  // "raspc 0.1.0 (commit 1a2b3c4d5e6f, Release build, CUDA off)"
  const std::string& v = r.out;
  CHECK(v.rfind("raspc 0.1.0 (commit ", 0) == 0);
  CHECK(v.find(" build, CUDA o") != std::string::npos);
  CHECK((v.find("CUDA on)\n") != std::string::npos || v.find("CUDA off)\n") != std::string::npos));
  const std::string commit = v.substr(20, v.find(',') - 20);
  CHECK((commit == "unknown" || commit.size() >= 12));
}

TEST_CASE("command line: help CMD is CMD --help, every default is shown") {
  Result help = raspc_cli("help compile");
  Result flag = raspc_cli("compile --help");
  CHECK(help.code == 0);
  CHECK(flag.code == 0);
  CHECK(help.out == flag.out);
  CHECK(help.out.find("--max-len INT=16") != std::string::npos);
  CHECK(help.out.find("--samples INT=10000") != std::string::npos);
  CHECK(help.out.find("--activation TEXT=gelu") != std::string::npos);
  CHECK(help.out.find("--device TEXT=cpu") != std::string::npos);
  Result all = raspc_cli("help");
  CHECK(all.code == 0);
  CHECK(all.out.find("completion") != std::string::npos);
  Result unknown = raspc_cli("help compil");
  CHECK(unknown.code == 1);
  CHECK(unknown.err == "raspc help: error: unknown subcommand `compil`; did you mean `compile`?\n");
}

TEST_CASE("command line: the bash completion script is valid bash and knows the subcommands and flags") {
  Result r = raspc_cli("completion bash");
  CHECK(r.code == 0);
  write("completion.bash", r.out);
  const std::string check = "bash -n '" + (scratch() / "completion.bash").string() + "'";
  CHECK(std::system(check.c_str()) == 0);
  CHECK(r.out.find("complete -o filenames -o bashdefault -F _raspc raspc\n") != std::string::npos);
  CHECK(r.out.find("    eval) flags=\"--help -h --help-all --expression -e --input --causal --vocab --output --trace --analyse --json\" ;;\n") !=
        std::string::npos);
  // Completing `raspc comp` and `raspc eval --tr` in bash itself.
  write("complete.sh", r.out +
                           "COMP_WORDS=(raspc comp); COMP_CWORD=1; _raspc; echo \"${COMPREPLY[*]}\"\n"
                           "COMP_WORDS=(raspc eval --tr); COMP_CWORD=2; _raspc; echo \"${COMPREPLY[*]}\"\n"
                           "COMP_WORDS=(raspc run m --device ''); COMP_CWORD=4; _raspc; echo \"${COMPREPLY[*]}\"\n");
  const std::string run = "bash '" + (scratch() / "complete.sh").string() + "' > '" + (scratch() / "done.txt").string() + "'";
  CHECK(std::system(run.c_str()) == 0);
  CHECK(raspc::testing::slurp(scratch() / "done.txt") == "compile compare completion\n--trace\ncpu cuda\n");
  Result zsh = raspc_cli("completion zsh");
  CHECK(zsh.code == 1);
  CHECK(zsh.err == "raspc completion: error: knows only bash, not `zsh`\n");
}

TEST_CASE("command line: -o is the output file everywhere, --output names an s-op") {
  Result old_flag = raspc_cli("handset-aab --output aab.safetensors");
  CHECK(old_flag.code == 1);
  CHECK(old_flag.err.rfind("raspc handset-aab: error: unknown flag `--output`", 0) == 0);
  Result r = raspc_cli("handset-aab -o aab.safetensors");
  CHECK(r.code == 0);
  CHECK(r.out == "wrote aab.safetensors\n");
  Result to_stdout = raspc_cli("handset-aab -o -");
  CHECK(to_stdout.code == 1);
  CHECK(to_stdout.err == "-o: error: the output is a binary file; give a file name, not - (standard output)\n");
}

TEST_CASE("command line: - reads the program from standard input") {
  write("rev.rasp", "# vocab: a b c\naggregate(select(indices, length - indices - 1, ==), tokens);\n");
  Result r = raspc::testing::run_raspc("eval - --input abc", scratch(), "", "rev.rasp");
  CHECK(r.code == 0);
  CHECK(r.out == "[c,b,a]\n");
  write("bad.rasp", "tokens +;\n");
  Result bad = raspc::testing::run_raspc("eval - --input abc", scratch(), "", "bad.rasp");
  CHECK(bad.code == 1);
  CHECK(bad.err == "<stdin>:1:9: error: expected an expression but found `;`\n  tokens +;\n          ^\n");
}
