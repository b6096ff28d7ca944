// PLACEHOLDER: replaced by the owner of the compile command.
#include "raspc/commands.hpp"
#include "support/diagnostics.hpp"

namespace raspc {
void add_compile_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compile", "(not built yet)");
  cmd->callback([] { fail_file("raspc compile", "this command is not built yet"); });
}
}  // namespace raspc
