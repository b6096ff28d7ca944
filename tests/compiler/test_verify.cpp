// The verification's sampling: exhaustive while the count stays within exhaustive_limit, then
// `samples` inputs at every longer length (not spread over them; each symbol repeated, the rest
// random), counted by length.
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"
#include "runtime/model_report.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

CompileOptions small_options(int max_len, long samples) {
  CompileOptions o;
  o.vocab = parse_vocabulary("ab");
  o.max_len = max_len;
  o.samples = samples;
  o.exhaustive_limit = 30;  // 2 + 4 + 8 + 16: every input up to length 4
  return o;
}

}  // namespace

TEST_CASE("verify: `samples` inputs at every length beyond the exhaustive ones") {
  ProgramFile f = load_program("hist");
  CompileResult r = compile_program(f.program, small_options(10, 7));
  const CompileReport& report = r.report;
  CHECK(report.mismatches == 0);
  CHECK_FALSE(report.exhaustive);
  CHECK(report.verified_len == 10);
  CHECK(report.exhaustive_len == 4);
  CHECK(report.samples_per_length == 7);
  CHECK(report.inputs_checked == 30 + 6 * 7);
  CHECK(report.checked_by_length == std::vector<long>{0, 2, 4, 8, 16, 7, 7, 7, 7, 7, 7});
}

TEST_CASE("verify: the sampled inputs start with each symbol repeated, where a count is at its extremes") {
  // hist's closest counts are n against n - 1 at the longest length, and only an input of one
  // symbol repeated holds them: the margin printed is then the model's true least one (40.29 at
  // 16; random inputs gave 89-90, never drawing such an input), and the report says how it sampled.
  ProgramFile f = load_program("hist");
  CompileOptions o = small_options(16, 3);
  o.vocab = parse_vocabulary("abcd");
  CompileResult r = compile_program(f.program, o);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.min_logit_margin > 40.0);
  CHECK(r.report.min_logit_margin < 40.5);
  const auto lines = verification_lines(report_json(r.report));
  REQUIRE_FALSE(lines.empty());
  CHECK(lines.front().second ==
        "62 inputs (every input up to length 2, then 3 inputs at each length 3 to 16: each symbol repeated, the "
        "rest random), 0 mismatches, minimum logit margin 40.29");
}

TEST_CASE("verify: samples 0 checks the exhaustive lengths only, verify_len stops the sampling early") {
  ProgramFile f = load_program("hist");
  CompileResult none = compile_program(f.program, small_options(10, 0));
  CHECK(none.report.inputs_checked == 30);
  CHECK(none.report.checked_by_length == std::vector<long>{0, 2, 4, 8, 16, 0, 0, 0, 0, 0, 0});
  CHECK_FALSE(none.report.exhaustive);

  CompileOptions o = small_options(10, 5);
  o.verify_len = 6;
  CompileResult shorter = compile_program(f.program, o);
  CHECK(shorter.report.verified_len == 6);
  CHECK(shorter.report.inputs_checked == 30 + 2 * 5);
  CHECK(shorter.report.checked_by_length == std::vector<long>{0, 2, 4, 8, 16, 5, 5});
}

TEST_CASE("verify: a count within the limit is exhaustive at every length, whatever `samples` says") {
  ProgramFile f = load_program("hist");
  CompileOptions o = small_options(4, 1000);
  CompileResult r = compile_program(f.program, o);
  CHECK(r.report.exhaustive);
  CHECK(r.report.exhaustive_len == 4);
  CHECK(r.report.samples_per_length == 0);
  CHECK(r.report.inputs_checked == 30);
  CHECK(r.report.checked_by_length == std::vector<long>{0, 2, 4, 8, 16});
}

TEST_CASE("verify: undefined inputs are drawn but not counted as checked") {
  // sort_unique is undefined where two tokens are equal; over "ab" that is every input of length 3
  // and more, so the sampled lengths check nothing while drawing their full share.
  ProgramFile f = load_program("sort_unique");
  CompileOptions o = small_options(6, 4);
  CompileResult r = compile_program(f.program, o);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.inputs_checked + r.report.undefined_inputs == 30 + 2 * 4);
  long by_length = 0;
  for (long n : r.report.checked_by_length) by_length += n;
  CHECK(by_length == r.report.inputs_checked);
  CHECK(r.report.checked_by_length[5] == 0);
  CHECK(r.report.checked_by_length[6] == 0);
}

TEST_CASE("verify: progress rises to the total it announced, the summary comes before it") {
  ProgramFile f = load_program("hist");
  CompileOptions o = small_options(10, 7);
  std::vector<std::pair<long, long>> calls;
  std::vector<double> work;
  int parameters_seen = -1;
  o.on_assembled = [&](const CompileReport& r) {
    CHECK(calls.empty());
    CHECK(r.inputs_checked == 0);
    parameters_seen = int(r.parameters);
  };
  o.on_verify_progress = [&](long done, long total, double w) {
    calls.emplace_back(done, total);
    work.push_back(w);
  };
  CompileResult r = compile_program(f.program, o);
  CHECK(parameters_seen == int(r.report.parameters));
  REQUIRE(calls.size() >= 2);
  CHECK(calls[0].first == 0);  // verification starts: the progress's clock starts
  CHECK(work[0] == 0.0);
  for (size_t k = 1; k < calls.size(); ++k) {
    CHECK(calls[k].first > calls[k - 1].first);
    CHECK(calls[k].second == calls[0].second);
    CHECK(work[k] > work[k - 1]);
    // The longer inputs come later and weigh more: the work done trails the count done.
    CHECK(work[k] <= double(calls[k].first) / double(calls[k].second) + 1e-12);
  }
  CHECK(calls.back() == std::pair<long, long>{30 + 6 * 7, 30 + 6 * 7});
  CHECK(work.back() == 1.0);
}
