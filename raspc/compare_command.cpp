// PLACEHOLDER: replaced by the owner of the compare command.
#include "raspc/commands.hpp"
#include "support/diagnostics.hpp"

namespace raspc {
void add_compare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "(not built yet)");
  cmd->callback([] { fail_file("raspc compare", "this command is not built yet"); });
}
}  // namespace raspc
