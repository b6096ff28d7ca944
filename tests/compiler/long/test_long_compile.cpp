// Histogram, sort and reverse at maximum length 64: zero mismatches on every input up to length 6
// and 10^4 random inputs spread evenly over the lengths 7..64. Label `long`: minutes, not seconds.
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

TEST_CASE("hist, sort and reverse at max length 64 on 10^4 random inputs of all lengths") {
  for (const std::string name : {"hist", "reverse", "sort"}) {
    ProgramFile f = load_program(name);
    CompileOptions o = test_options(header_vocabulary(f.header), 64, Mode::Bidirectional);
    o.samples = 10000;
    CompileResult r = compile_program(f.program, o);
    INFO(name << ": " << r.report.first_mismatch);
    CHECK(r.report.mismatches == 0);
    CHECK(r.report.inputs_checked >= 10000);
    CHECK(r.report.min_logit_margin > 10.0);
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
