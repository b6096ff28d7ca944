// The command line around the subcommands: errors in the command line itself (an unknown name
// with the nearest known one, a bad value naming its flag and what it expects, the usage line,
// exit 1), `raspc --version`, `raspc help CMD` and `raspc completion bash`.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace raspc {

// "raspc 0.1.0 (commit 1a2b3c4d5e6f, Release build, CUDA on)".
std::string version_text();

void add_help_command(CLI::App& app);        // raspc help [CMD]
void add_completion_command(CLI::App& app);  // raspc completion bash

// Prints what CLI11 found wrong with the command line, in raspc's words, and returns the exit
// code: 0 for --help and --version (which CLI11 reports as errors), 1 for every real error.
int report_command_line_error(CLI::App& app, const CLI::ParseError& error);


}  // namespace raspc
