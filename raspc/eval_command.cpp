// PLACEHOLDER: replaced by the owner of the eval command.
#include "raspc/commands.hpp"
#include "support/diagnostics.hpp"

namespace raspc {
void add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "(not built yet)");
  cmd->callback([] { fail_file("raspc eval", "this command is not built yet"); });
}
}  // namespace raspc
