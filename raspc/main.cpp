// raspc: compile RASP programs into GPT-2 weights, run them, train them, and measure them.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "raspc/command_line.hpp"
#include "raspc/command_options.hpp"
#include "raspc/commands.hpp"
#include "runtime/gemm.hpp"
#include "support/diagnostics.hpp"

namespace {

// "raspc compile": who ran out of memory, when no file or flag can be named.
std::string command_name(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return "raspc " + sub->get_name();
  return "raspc";
}

// Out of memory, said of the file the command was working on (its first positional argument),
// with the options of that command that size what it holds: no advice it cannot take.
std::string out_of_memory_message(const CLI::App& app) {
  std::string who = command_name(app), knobs;
  for (const CLI::App* sub : app.get_subcommands()) {
    for (const CLI::Option* option : sub->get_options())
      if (option->get_positional() && option->count() > 0 && !option->results().empty()) {
        who = option->results().front();
        break;
      }
    std::vector<std::string> flags;
    for (const char* flag : {"--max-len", "--vocab", "--batch", "--samples"})
      if (sub->get_option_no_throw(flag) != nullptr) flags.push_back(flag);
    for (size_t i = 0; i < flags.size(); ++i)
      knobs += (i == 0 ? "" : i + 1 == flags.size() ? " or " : ", ") + flags[i];
  }
  return raspc::escaped_message(who) + ": error: out of memory" +
         (knobs.empty() ? std::string(": this machine has too little memory for it\n")
                        : " (try a smaller " + knobs + ")\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "raspc: compiles RASP programs into the weights of a real GPT-2, runs them on CPU and CUDA,\n"
      "trains GPT-2s of the same shape on the same tasks, and measures what the network costs."};
  app.name("raspc");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print the help of every subcommand");
  app.set_version_flag("--version", raspc::version_text(), "Print the version, the git commit, the build type and whether CUDA is built");
  raspc::add_eval_command(app);
  raspc::add_compile_command(app);
  raspc::add_run_command(app);
  raspc::add_generate_command(app);
  raspc::add_handset_aab_command(app);
  raspc::add_inspect_command(app);
  raspc::add_export_command(app);
  raspc::add_view_command(app);
  raspc::add_circuit_command(app);
  raspc::add_patch_command(app);
  raspc::add_verify_interventions_command(app);
  raspc::add_demo_command(app);
  raspc::add_train_command(app);
  raspc::add_compare_command(app);
  raspc::add_dataset_command(app);
  raspc::add_import_command(app);
  raspc::add_bench_command(app);
  raspc::add_help_command(app);
  raspc::add_completion_command(app);
  // Refused before any command starts: the first product may run on a worker thread.
  if (const std::string problem = raspc::gemm_environment_problem(); !problem.empty()) {
    std::cerr << "raspc: error: " << problem << ".\n";
    return 1;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return raspc::report_command_line_error(app, e);
  } catch (const raspc::VerificationMismatch& e) {
    std::cout.flush();
    std::cerr << e.what();
    return 2;
  } catch (const raspc::UserError& e) {
    std::cout.flush();
    std::cerr << e.what();
    return 1;
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << out_of_memory_message(app);
    return 1;
  } catch (const std::exception& e) {
    // A defect of raspc, not of the input: said as one, never an abort, and an exit code of its own.
    std::cout.flush();
    std::cerr << command_name(app) << ": internal error: " << e.what() << " (this is a bug in raspc; please report it)\n";
    return 3;
  }
  return 0;
}
