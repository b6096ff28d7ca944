// The compiler's pipeline as one table: every pass in the order it runs, what it requires, what it
// guarantees, and how --dump-after shows its result. compile_program (pipeline.cpp) is the loop
// over the table; docs/compiler.md lists the same rows (a test keeps the two equal).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile.hpp"
#include "compiler/ir.hpp"

namespace raspc::compiler {

// Everything one compile's passes hand each other.
struct CompileState {
  CompileState(const Program& source, const CompileOptions& options);
  CompileState(const CompileState&) = delete;
  CompileState& operator=(const CompileState&) = delete;

  const Program& source;  // as the user wrote it: verification checks the model against it
  const CompileOptions& options;
  Program program;        // what is compiled: the source, rewritten by the first passes
  Inference inference;    // of `program` while values_current
  bool values_current = false;
  // Open from the schedule on, when the program no longer changes (ir.hpp: FusedCacheScope).
  std::unique_ptr<FusedCacheScope> fused_cache;
  Schedule schedule;
  Allocation allocation;
  Lowered lowered;
  CompileResult result;   // the model, its report, the explanation
  // With --explain: the top-level s-ops the user named that a rewrite left out of the program
  // (nothing reads them any more), and the pass that did, said beside how the rest is computed.
  std::vector<std::pair<std::string, std::string>> rewritten_away;
  std::chrono::steady_clock::time_point started;  // for the report's compile_ms
};

struct Pass {
  std::string name;        // what --dump-after takes
  std::string needs;       // what the pass needs from the passes before it
  std::string guarantees;  // what holds of its result
  // It reads value sets: the driver infers them first where a rewrite has changed the program
  // since they were last inferred.
  bool reads_values = false;
  // Runs the pass; returns whether it changed the program (a rewrite that did: the value sets are
  // then out of date). The passes after the rewrites never do.
  bool (*run)(CompileState& state) = nullptr;
  // --dump-after's text (the program after a rewrite, titled with the pass's name).
  std::string (*dump)(const CompileState& state, const std::string& pass) = nullptr;
};

// In the order they run.
const std::vector<Pass>& pipeline();

// Runs one pass on `state`, inferring value sets first where it reads them and a rewrite has
// changed the program since; returns whether it changed the program.
bool run_pass(CompileState& state, const Pass& pass);
// Runs the passes in order on `state` through the one named `last` (all of them where it is
// empty), inferring value sets where a pass reads them and a rewrite has changed the program since,
// and handing over the dump options.dump_after names as soon as its pass has run.
void run_passes(CompileState& state, const std::string& last = "");

}  // namespace raspc::compiler
