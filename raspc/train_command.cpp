// PLACEHOLDER: replaced by the owner of the train command.
#include "raspc/commands.hpp"
#include "support/diagnostics.hpp"

namespace raspc {
void add_train_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "(not built yet)");
  cmd->callback([] { fail_file("raspc train", "this command is not built yet"); });
}
}  // namespace raspc
