// PLACEHOLDER: replaced by the owner of the run command.
#include "raspc/commands.hpp"
#include "support/diagnostics.hpp"

namespace raspc {
void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "(not built yet)");
  cmd->callback([] { fail_file("raspc run", "this command is not built yet"); });
}
}  // namespace raspc
