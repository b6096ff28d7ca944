// verify-interventions on every program of programs/ in both modes at maximum length 8, 200 pairs
// per s-op: every interchange agrees with the interpreter and no node outside the circuit changes
// an output when zero-ablated. Hidden from the default suite ([.]): tests/circuit/long_tests.cmake
// runs them under the `long` label, one entry a program (a program missing here fails its entry).
#include <catch2/catch.hpp>

#include "circuit/verify_interventions.hpp"
#include "circuit_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

void check_program(const std::string& name, Mode mode) {
  const Model model = compiled_model(name, 8, mode);
  InterventionCheckOptions options;
  options.pairs = 200;
  const InterventionReport report = verify_interventions(model, options);
  INFO(format_intervention_report(report));
  CHECK(report.failures() == 0);
  for (const InterchangeCheck& c : report.interchanges) CHECK(c.pairs + c.undefined == 200);
}

}  // namespace

#define PROGRAM(NAME)                                                                                         \
  TEST_CASE("verify-interventions " NAME " bidirectional at 8", "[.][long]") {                             \
    check_program(NAME, Mode::Bidirectional);                                                                 \
  }                                                                                                           \
  TEST_CASE("verify-interventions " NAME " causal at 8", "[.][long]") { check_program(NAME, Mode::Causal); }

PROGRAM("aab")
PROGRAM("count_less_freq")
PROGRAM("detect_pattern")
PROGRAM("double_hist")
PROGRAM("dyck1")
PROGRAM("dyck2")
PROGRAM("dyck3")
PROGRAM("frac_prevs")
PROGRAM("hist")
PROGRAM("length")
PROGRAM("long_addition")
PROGRAM("most_freq")
PROGRAM("pair_balance")
PROGRAM("reverse")
PROGRAM("shift")
PROGRAM("shuffle_dyck")
PROGRAM("shuffle_dyck2")
PROGRAM("sort")
PROGRAM("sort_unique")
