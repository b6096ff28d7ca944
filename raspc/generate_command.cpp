// PLACEHOLDER: replaced by the owner of the generate command.
#include "raspc/commands.hpp"
#include "support/diagnostics.hpp"

namespace raspc {
void add_generate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("generate", "(not built yet)");
  cmd->callback([] { fail_file("raspc generate", "this command is not built yet"); });
}
}  // namespace raspc
