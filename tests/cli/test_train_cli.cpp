// `raspc train` and `raspc compare` as a user runs them.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

struct Run {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh folder per test run, removed at exit.
const fs::path& scratch() {
  static struct Folder {
    fs::path path = fs::temp_directory_path() / ("raspc_train_cli_" + std::to_string(getpid()));
    Folder() { fs::create_directories(path); }
    ~Folder() { fs::remove_all(path); }
  } folder;
  return folder.path;
}

Run raspc(const std::string& args) {
  const fs::path out = scratch() / "stdout.txt", err = scratch() / "stderr.txt";
  const std::string command = std::string(RASPC_BINARY) + " " + args + " > " + out.string() + " 2> " + err.string();
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

std::string program(const std::string& name) { return std::string(RASPC_SOURCE_DIR) + "/programs/" + name; }

const std::string kAabTraining =
    " --max-len 6 --layers 1 --heads 1 --d-model 16 --steps 300 --batch 32 --lr 1e-2 --eval-every 100 --seed 2";

}  // namespace

TEST_CASE("raspc train writes a model that raspc run and inspect accept") {
  const std::string model = (scratch() / "aab.safetensors").string();
  Run train = raspc("train " + program("aab.rasp") + kAabTraining + " -o " + model);
  INFO(train.err);
  REQUIRE(train.code == 0);
  const std::string curves = (scratch() / "aab.curves.svg").string();
  CHECK(train.out.find("wrote " + model + " and its learning curves, " + curves + "\n") != std::string::npos);
  // Held-out accuracy and loss at each of the 3 evaluations, one series each.
  const std::string svg = slurp(curves);
  CHECK(svg.find("held-out token accuracy") != std::string::npos);
  CHECK(svg.find("held-out loss") != std::string::npos);
  CHECK(svg.find("class=\"series\"") != std::string::npos);
  CHECK(train.out.find("held-out, lengths 1-6: token accuracy 100.00%") != std::string::npos);
  // Not a terminal: plain lines at every evaluation.
  CHECK(train.err.find("step 100/300  loss ") != std::string::npos);
  CHECK(train.err.find("step 300/300  loss ") != std::string::npos);

  Run run = raspc("run " + model + " --input aabaa");
  CHECK(run.code == 0);
  CHECK(run.out == "[a,b,a,a,b]\n");
  CHECK(raspc("inspect " + model).code == 0);
  // The curve is in the file too: an evaluation every 100 steps, held-out loss falling as the
  // accuracy reaches 100%.
  const nlohmann::json curve = nlohmann::json::parse(raspc("inspect " + model + " --json").out)["training"]["curve"];
  CHECK(curve["step"] == nlohmann::json({100, 200, 300}));
  CHECK(curve["held_out_token_accuracy"][2] == 1.0);
  CHECK(curve["held_out_loss"][2].get<double>() < curve["held_out_loss"][0].get<double>());
}

TEST_CASE("raspc train: the same seed writes the same file") {
  const std::string first = (scratch() / "first.safetensors").string(), second = (scratch() / "second.safetensors").string();
  REQUIRE(raspc("train " + program("hist.rasp") + " --max-len 5 --d-model 8 --heads 2 --steps 40 --batch 8 --seed 7 -o " + first).code == 0);
  REQUIRE(raspc("train " + program("hist.rasp") + " --max-len 5 --d-model 8 --heads 2 --steps 40 --batch 8 --seed 7 -o " + second).code == 0);
  CHECK(slurp(first) == slurp(second));
  // Two threads split each batch: the same file on every run with that count.
  const std::string third = (scratch() / "third.safetensors").string(), fourth = (scratch() / "fourth.safetensors").string();
  for (const std::string& path : {third, fourth})
    REQUIRE(raspc("train " + program("hist.rasp") + " --max-len 5 --d-model 8 --heads 2 --steps 40 --batch 8 --seed 7 "
                  "--threads 2 -o " + path).code == 0);
  CHECK(slurp(third) == slurp(fourth));
  // The thread count is in the file, beside the seed, since both are needed to reproduce it.
  const nlohmann::json settings = nlohmann::json::parse(raspc("inspect " + third + " --json").out)["training"]["settings"];
  CHECK(settings["seed"] == 7);
  CHECK(settings["threads"] == 2);
  CHECK(nlohmann::json::parse(raspc("inspect " + first + " --json").out)["training"]["settings"]["threads"] == 1);
}

TEST_CASE("raspc train refuses bad settings with a message") {
  const std::string out = " -o " + (scratch() / "never.safetensors").string();
  Run lengths = raspc("train " + program("hist.rasp") + " --max-len 6 --train-len 5-3" + out);
  CHECK(lengths.code == 1);
  CHECK(lengths.err ==
        "--train-len:1:1: error: write the lengths as A-B with 1 <= A <= B <= --max-len (6), as in 1-8\n"
        "  5-3\n"
        "  ^~~\n");
  Run heads = raspc("train " + program("hist.rasp") + " --d-model 10 --heads 4" + out);
  CHECK(heads.code == 1);
  CHECK(heads.err.find("error: d_model must be a multiple of the number of heads (4)") != std::string::npos);
  Run steps = raspc("train " + program("hist.rasp") + " --steps 0" + out);
  CHECK(steps.code == 1);
  CHECK(steps.err.find("error: give at least one step") != std::string::npos);
  Run threads = raspc("train " + program("hist.rasp") + " --threads -2" + out);
  CHECK(threads.code == 1);
  CHECK(threads.err.find("--threads") != std::string::npos);
  CHECK(threads.err.find("error: the thread count must be between 0 (every core) and 1024") != std::string::npos);
  CHECK_FALSE(fs::exists(scratch() / "never.safetensors"));
}

TEST_CASE("raspc compare prints one table and writes Markdown, JSON and SVG") {
  const std::string prefix = (scratch() / "aab_compare").string();
  Run compare = raspc("compare " + program("aab.rasp") +
                      " --max-len 6 --train-len 1-4 --steps 200 --batch 32 --lr 1e-2 --eval-every 50 --held-out 32 -o " + prefix);
  INFO(compare.err);
  REQUIRE(compare.code == 0);
  CHECK(compare.out.find("arm ") != std::string::npos);
  CHECK(compare.out.find("trained, compiled shape") != std::string::npos);
  CHECK(compare.out.find("trained, 1 layer fewer") != std::string::npos);
  CHECK(compare.out.find("trained, comfortable") != std::string::npos);
  nlohmann::json report = nlohmann::json::parse(slurp(prefix + ".json"));
  CHECK(report["arms"].size() == 4);
  CHECK(report["arms"][0]["name"] == "compiled");
  CHECK(report["arms"][0]["by_length"].size() == 6);
  CHECK(report["train_lengths"] == nlohmann::json::array({1, 4}));
  const std::string svg = slurp(prefix + ".svg");
  CHECK(svg.rfind("<svg ", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(slurp(prefix + ".md").find("![token accuracy against length](aab_compare.svg)") != std::string::npos);
  // The learning curves: one accuracy and one loss line per trained arm.
  const std::string curves = slurp(prefix + ".curves.svg");
  size_t lines = 0;
  for (size_t at = curves.find("class=\"series\""); at != std::string::npos; at = curves.find("class=\"series\"", at + 1)) ++lines;
  CHECK(lines == 6);
  CHECK(curves.find(">trained, comfortable<") != std::string::npos);
}

TEST_CASE("raspc compare on a model of no blocks trains no layer fewer, and a comfortable model of 2 layers") {
  const fs::path source = scratch() / "vowel.rasp";
  std::ofstream(source) << "# vocab: a b c e\nvowel = tokens in [\"a\", \"e\"];\nvowel;\n";
  const std::string prefix = (scratch() / "vowel_compare").string();
  Run compare = raspc("compare " + source.string() +
                      " --max-len 4 --train-len 1-4 --steps 50 --batch 16 --lr 1e-2 --eval-every 25 --held-out 16 -o " +
                      prefix);
  INFO(compare.err);
  REQUIRE(compare.code == 0);
  const nlohmann::json report = nlohmann::json::parse(slurp(prefix + ".json"));
  REQUIRE(report["arms"].size() == 3);
  CHECK(report["arms"][0]["config"]["n_layer"] == 0);
  CHECK(report["arms"][1]["name"] == "trained, compiled shape");
  CHECK(report["arms"][1]["config"]["n_layer"] == 0);
  CHECK(report["arms"][2]["name"] == "trained, comfortable");
  CHECK(report["arms"][2]["config"]["n_layer"] == 2);
}
