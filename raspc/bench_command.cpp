// PLACEHOLDER: replaced by the owner of the bench command.
#include "raspc/commands.hpp"
#include "support/diagnostics.hpp"

namespace raspc {
void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "(not built yet)");
  cmd->callback([] { fail_file("raspc bench", "this command is not built yet"); });
}
}  // namespace raspc
