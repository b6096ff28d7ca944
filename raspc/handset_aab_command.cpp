// raspc handset-aab -o FILE: writes the hand-set (aab)* model, the file `generate` runs in the post.
#include <iostream>

#include "raspc/command_options.hpp"
#include "raspc/commands.hpp"
#include "runtime/handset_aab.hpp"
#include "runtime/safetensors.hpp"
#include "support/atomic_file.hpp"

namespace raspc {

void add_handset_aab_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "handset-aab", "Write the hand-set (aab)* transformer of \"I made a transformer by hand\" to a model file");
  auto output = std::make_shared<std::string>();
  cmd->add_option("-o", *output, "The model file to write (.safetensors)")->required();
  cmd->callback([output] {
    check_writable_output(*output, "-o", {});
    save_model(make_handset_aab(), *output);
    std::cout << "wrote " << *output << "\n";
  });
}

}  // namespace raspc
