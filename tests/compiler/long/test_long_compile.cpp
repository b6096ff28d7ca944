// Histogram, sort and reverse at maximum length 64: zero mismatches on every input up to the
// exhaustive length (at most 10^5 inputs in all) and on 10^4 random inputs of every longer
// length. Label `long`: minutes, not seconds.
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

TEST_CASE("hist, sort and reverse at max length 64, exhaustive then 10^4 random inputs of every length") {
  for (const std::string name : {"hist", "reverse", "sort"}) {
    ProgramFile f = load_program(name);
    const std::vector<Value> vocab = header_vocabulary(f.header);
    CompileOptions o;  // the compiler's own defaults: exhaustive within 10^5 inputs, 10^4 a length beyond
    o.vocab = vocab;
    o.max_len = 64;
    REQUIRE(o.exhaustive_limit == 100000);
    REQUIRE(o.samples == 10000);
    CompileResult r = compile_program(f.program, o);
    const CompileReport& report = r.report;
    INFO(name << ": " << report.first_mismatch);
    CHECK(report.mismatches == 0);
    CHECK(report.undefined_inputs == 0);
    CHECK(report.min_logit_margin > 10.0);
    REQUIRE(report.verified_len == 64);
    REQUIRE(report.checked_by_length.size() == 65);
    // The exhaustive length is the longest whose inputs, with all the shorter ones, are at most 10^5.
    double total = 0, count = 1;
    int exhaustive_len = 0;
    for (int n = 1; n <= 64 && (total += (count *= double(vocab.size()))) <= 1e5; ++n) exhaustive_len = n;
    CHECK(report.exhaustive_len == exhaustive_len);
    count = 1;
    for (int n = 1; n <= 64; ++n) {
      INFO("length " << n);
      if (n <= exhaustive_len) CHECK(report.checked_by_length[size_t(n)] == long(count *= double(vocab.size())));
      else CHECK(report.checked_by_length[size_t(n)] >= 10000);
    }
  }
}

TEST_CASE("dyck2 and dyck3 at max length 8, causal") {
  for (const std::string name : {"dyck2", "dyck3"}) {
    ProgramFile f = load_program(name);
    CompileOptions o = test_options(header_vocabulary(f.header), 8, Mode::Causal);
    CompileResult r = compile_program(f.program, o);
    INFO(name << ": " << r.report.first_mismatch);
    CHECK(r.report.mismatches == 0);
  }
}
