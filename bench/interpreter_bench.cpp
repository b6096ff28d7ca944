// How fast the reference interpreter labels random inputs, single-threaded: the trainer's data
// source. Target: one million inputs of length 16 for hist and for sort in under a minute each.
//   interpreter_bench [INPUTS [LENGTH [PROGRAMS_DIR]]]
// Figures are recorded in bench/RESULTS.md, section "Interpreter".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "bench/thread_clock.hpp"
#include "language/evaluate.hpp"
#include "language/interpret.hpp"

namespace {

struct Workload {
  const char* program;            // programs/<program>.rasp
  std::vector<raspc::Value> vocabulary;
};

}  // namespace

int main(int argc, char** argv) {
  long inputs = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1000000;
  long length = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 16;
  std::string programs_dir = argc > 3 ? argv[3]
                                      : (std::filesystem::path(__FILE__).parent_path().parent_path() / "programs")
                                            .string();
  if (inputs <= 0 || length <= 0 || length > 4096) {
    std::fprintf(stderr, "usage: interpreter_bench [INPUTS [LENGTH [PROGRAMS_DIR]]]\n");
    return 2;
  }

  std::vector<Workload> workloads = {
      {"hist", {raspc::Value::of_string("a"), raspc::Value::of_string("b"), raspc::Value::of_string("c"),
                raspc::Value::of_string("d")}},
      {"sort", {raspc::Value::of_int(1), raspc::Value::of_int(2), raspc::Value::of_int(3), raspc::Value::of_int(4)}},
  };
  std::printf("interpreter_bench: %ld random inputs of length %ld per program, one thread\n", inputs, length);
  for (const Workload& workload : workloads) {
    try {
      raspc::Program program =
          raspc::evaluate_program(raspc::read_source_file(programs_dir + "/" + workload.program + ".rasp"));
      raspc::Interpreter interpreter(program, raspc::Mode::Bidirectional);
      std::mt19937_64 rng(20261129);
      std::uniform_int_distribution<size_t> pick(0, workload.vocabulary.size() - 1);
      std::vector<raspc::Value> input(static_cast<size_t>(length));
      uint64_t checksum = 0;  // keeps the work observable
      auto start = std::chrono::steady_clock::now();
      const double cpu_start = raspc::bench::thread_cpu_seconds();
      for (long i = 0; i < inputs; ++i) {
        for (auto& token : input) token = workload.vocabulary[pick(rng)];
        std::vector<raspc::Value> labels = interpreter.run(input);
        checksum = checksum * 31 + uint64_t(labels[0].number.num) + labels[size_t(length) - 1].string_id;
      }
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      // CPU time is what one core costs even when the machine is shared; wall time is shown beside it.
      const double cpu_seconds = raspc::bench::thread_cpu_seconds() - cpu_start;
      std::printf("%-5s %10ld inputs  cpu %7.2f s  wall %7.2f s  %11.0f inputs/s (cpu)  %6.2f us/input  (checksum %016llx)\n",
                  workload.program, inputs, cpu_seconds, seconds, double(inputs) / cpu_seconds,
                  1e6 * cpu_seconds / double(inputs), (unsigned long long)checksum);
    } catch (const raspc::UserError& error) {
      std::fprintf(stderr, "%s", error.what());
      return 1;
    }
  }
  return 0;
}
