// PLACEHOLDER: replaced by the owner of the inspect command.
#include "raspc/commands.hpp"
#include "support/diagnostics.hpp"

namespace raspc {
void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "(not built yet)");
  cmd->callback([] { fail_file("raspc inspect", "this command is not built yet"); });
}
}  // namespace raspc
