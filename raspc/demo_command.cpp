// PLACEHOLDER: replaced by the owner of the demo command.
#include "raspc/commands.hpp"
#include "support/diagnostics.hpp"

namespace raspc {
void add_demo_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "(not built yet)");
  cmd->callback([] { fail_file("raspc demo", "this command is not built yet"); });
}
}  // namespace raspc
