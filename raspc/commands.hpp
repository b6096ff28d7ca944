// The raspc subcommands, one file each. Each adds itself to the app; its callback throws a
// UserError for anything the user got wrong, which main() prints before exiting 1.
#pragma once

#include <CLI/CLI.hpp>

namespace raspc {

void add_eval_command(CLI::App& app);      // raspc/eval_command.cpp
void add_compile_command(CLI::App& app);   // raspc/compile_command.cpp
void add_run_command(CLI::App& app);       // raspc/run_command.cpp
void add_generate_command(CLI::App& app);  // raspc/generate_command.cpp
void add_handset_aab_command(CLI::App& app);  // raspc/handset_aab_command.cpp
void add_inspect_command(CLI::App& app);   // raspc/inspect_command.cpp
void add_demo_command(CLI::App& app);      // raspc/demo_command.cpp
void add_train_command(CLI::App& app);     // raspc/train_command.cpp
void add_compare_command(CLI::App& app);   // raspc/compare_command.cpp
void add_dataset_command(CLI::App& app);   // raspc/dataset_command.cpp
void add_import_command(CLI::App& app);    // raspc/import_command.cpp
void add_bench_command(CLI::App& app);     // raspc/bench_command.cpp
void add_export_command(CLI::App& app);    // raspc/export_command.cpp
void add_view_command(CLI::App& app);      // raspc/view_command.cpp
void add_circuit_command(CLI::App& app);   // raspc/circuit_command.cpp
void add_patch_command(CLI::App& app);     // raspc/patch_command.cpp
void add_verify_interventions_command(CLI::App& app);  // raspc/verify_interventions_command.cpp

}  // namespace raspc
