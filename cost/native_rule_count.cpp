// Runs one native rule CALLS times on random inputs of length N, for instruction counting:
//   valgrind --tool=callgrind --toggle-collect=raspc_native_hist native_rule_count hist 16 1000
// counts exactly the instructions inside the rule (raspc bench does this and divides by CALLS).
// RULE "none" makes the same random inputs and runs no rule: with perf's whole-process counts,
// the difference between a rule's run and this one is the rule's own instructions.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cost/native_rules.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: native_rule_count RULE LENGTH CALLS VOCAB_SIZE\n");
    return 2;
  }
  std::string rule = argv[1];
  size_t length = std::strtoul(argv[2], nullptr, 10);
  long calls = std::strtol(argv[3], nullptr, 10);
  unsigned vocab = unsigned(std::strtoul(argv[4], nullptr, 10));
  bool baseline = rule == "none";
  if ((!baseline && !raspc::native::has_rule(rule)) || length == 0 || length > 256 || calls <= 0 || vocab == 0 || vocab > 256) {
    std::fprintf(stderr, "native_rule_count: bad arguments\n");
    return 2;
  }
  std::mt19937 rng(1234);
  std::uniform_int_distribution<unsigned> token(0, vocab - 1);
  std::vector<uint8_t> tokens(length);
  uint64_t checksum = 0;
  for (long c = 0; c < calls; ++c) {
    for (auto& t : tokens) t = uint8_t(token(rng));
    checksum += baseline ? tokens[0] : raspc::native::run_rule(rule, tokens.data(), tokens.size());
  }
  std::printf("%llu\n", (unsigned long long)checksum);
  return 0;
}
