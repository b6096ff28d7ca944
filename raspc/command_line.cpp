#include "raspc/command_line.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>

#include "compiler/compile.hpp"
#include "raspc/build_info.hpp"
#include "support/diagnostics.hpp"
#include "support/edit_distance.hpp"

namespace raspc {

namespace {

std::vector<CLI::App*> subcommands(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}

std::vector<std::string> subcommand_names(CLI::App& app) {
  std::vector<std::string> names;
  for (CLI::App* sub : subcommands(app)) names.push_back(sub->get_name());
  return names;
}

// Every flag of a command as typed: "--input", "-o".
std::vector<std::string> flag_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

std::string suggestion(const std::string& given, const std::vector<std::string>& names) {
  const std::string near = closest_name(given, names);
  return near.empty() ? "" : "; did you mean `" + near + "`?";
}

// What a value of CLI11's type name must look like, in words.
std::string expected_value(const CLI::Option* option) {
  if (option == nullptr) return "a value of another kind";
  std::string type = option->get_type_name();
  type = type.substr(0, type.find(':'));
  if (type == "INT") return "a whole number";
  if (type == "UINT") return "a whole number, 0 or more";
  if (type == "FLOAT") return "a number";
  if (type == "TEXT") return "text";
  return "a value (" + type + ")";
}

// CLI11 reports a failed conversion as "Could not convert: --max-len = abc".
std::string conversion_message(const CLI::App& command, const std::string& what, std::string& origin) {
  const std::string prefix = "Could not convert: ";
  const size_t equals = what.find(" = ");
  if (what.rfind(prefix, 0) != 0 || equals == std::string::npos) return what;
  const std::string flag = what.substr(prefix.size(), equals - prefix.size());
  const std::string value = what.substr(equals + 3);
  origin = flag;
  return "expects " + expected_value(command.get_option_no_throw(flag)) + ", not \"" + value + "\"";
}

// CLI11's "Value 0 not in range" as the middle of a sentence; a name in capitals ("PROGRAM is
// required") stays as written.
std::string sentence_case(std::string message) {
  const bool capitals = message.size() > 1 && std::isupper(static_cast<unsigned char>(message[1]));
  if (!message.empty() && !capitals) message[0] = char(std::tolower(static_cast<unsigned char>(message[0])));
  return message;
}

std::string usage_line(const CLI::App& command, const std::string& path) {
  std::string usage = CLI::Formatter().make_usage(&command, path);
  if (!usage.empty() && usage.back() != '\n') usage += '\n';
  return usage + "Run `" + path + " --help` for every flag and its default.\n";
}

}  // namespace

std::string version_text() {
  return std::string("raspc ") + kVersion + " (commit " + kGitCommit + ", " + kBuildType + " build, CUDA " +
         (kBuiltWithCuda ? "on" : "off") + ")";
}

int report_command_line_error(CLI::App& app, const CLI::ParseError& error) {
  if (error.get_exit_code() == 0) return app.exit(error);  // --help, --help-all, --version
  std::vector<CLI::App*> parsed = app.get_subcommands();
  CLI::App& command = parsed.empty() ? app : *parsed.back();
  const std::string path = parsed.empty() ? "raspc" : "raspc " + command.get_name();
  std::string origin = path, message = error.what();
  const std::vector<std::string> left = command.remaining();
  if (parsed.empty() && dynamic_cast<const CLI::RequiredError*>(&error)) {
    const std::vector<std::string> rest = app.remaining();
    if (rest.empty()) message = "give a subcommand, as in `raspc eval FILE --input hello` (`raspc --help` lists them)";
    else if (rest[0].rfind("-", 0) == 0)
      message = "unknown flag `" + rest[0] + "`" + suggestion(rest[0], flag_names(app));
    else
      message = "unknown subcommand `" + rest[0] + "`" + suggestion(rest[0], subcommand_names(app));
  } else if ((dynamic_cast<const CLI::ExtrasError*>(&error) ||
              (dynamic_cast<const CLI::RequiredError*>(&error) && !left.empty() && left[0].rfind("-", 0) == 0)) &&
             !left.empty()) {
    // An unknown flag explains a missing required one (handset-aab --output for -o), so it comes first.
    const std::string& extra = left[0];
    if (extra.size() > 1 && extra[0] == '-') {
      const std::string flag = extra.substr(0, extra.find('='));
      message = "unknown flag `" + flag + "`" + suggestion(flag, flag_names(command));
    } else {
      message = "unexpected argument `" + extra + "`";
      if (parsed.empty()) message = "unknown subcommand `" + extra + "`" + suggestion(extra, subcommand_names(app));
    }
  } else if (dynamic_cast<const CLI::ConversionError*>(&error)) {
    message = conversion_message(command, message, origin);
  } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&error)) {
    // "--input: 1 required TEXT missing"
    const size_t colon = message.find(':');
    if (colon != std::string::npos && message.rfind("-", 0) == 0) {
      origin = message.substr(0, colon);
      message = "expects " + expected_value(command.get_option_no_throw(origin)) + " after it";
    }
  } else if (message.rfind("-", 0) == 0 && message.find(": ") != std::string::npos) {
    // "--samples: Value 0 not in range 1 to 1000": the flag is the place.
    const size_t colon = message.find(": ");
    origin = message.substr(0, colon);
    message = message.substr(colon + 2);
    message = sentence_case(message);
  } else {
    message = sentence_case(message);
  }
  std::cout.flush();
  std::cerr << origin << ": error: " << message << "\n" << usage_line(command, path);
  return 1;
}

void add_help_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("help", "Print the help of raspc, or of one subcommand (raspc help compile)");
  auto name = std::make_shared<std::string>();
  cmd->add_option("command", *name, "The subcommand");
  cmd->callback([&app, name] {
    if (name->empty()) {
      // Not app.help(): while `help` runs, that is the help of the selected subcommand, `help` itself.
      std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
      return;
    }
    for (CLI::App* sub : subcommands(app))
      if (sub->get_name() == *name) {
        std::cout << sub->help(app.get_name());
        return;
      }
    fail_file("raspc help", "unknown subcommand `" + *name + "`" + suggestion(*name, subcommand_names(app)));
  });
}

void add_completion_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script: eval \"$(raspc completion bash)\"");
  auto shell = std::make_shared<std::string>();
  cmd->add_option("shell", *shell, "The shell (bash)")->required();
  cmd->callback([&app, shell] {
    if (*shell != "bash") fail_file("raspc completion", "knows only bash, not `" + *shell + "`");
    std::string names;
    for (const std::string& name : subcommand_names(app)) names += " " + name;
    std::string passes;
    for (const std::string& pass : compiler_pass_names()) passes += " " + pass;
    std::string flags_by_command;
    for (CLI::App* sub : subcommands(app)) {
      std::string flags;
      for (const std::string& flag : flag_names(*sub)) flags += (flags.empty() ? "" : " ") + flag;
      flags_by_command += "    " + sub->get_name() + ") flags=\"" + flags + "\" ;;\n";
    }
    std::cout << "# bash completion for raspc (generated by `raspc completion bash`): eval \"$(raspc completion bash)\",\n"
                 "# or save it as ~/.local/share/bash-completion/completions/raspc\n"
                 "_raspc() {\n"
                 "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} flags=\"\"\n"
                 "  if [[ $COMP_CWORD -eq 1 ]]; then\n"
                 "    COMPREPLY=($(compgen -W \"" << names.substr(1) << " --help --help-all --version\" -- \"$cur\"))\n"
                 "    return\n"
                 "  fi\n"
                 "  case $prev in\n"
                 "    --device) COMPREPLY=($(compgen -W \"cpu cuda\" -- \"$cur\")); return ;;\n"
                 "    --activation) COMPREPLY=($(compgen -W \"gelu relu\" -- \"$cur\")); return ;;\n"
                 "    --format|--export) COMPREPLY=($(compgen -W \"hf tlens gguf llmc\" -- \"$cur\")); return ;;\n"
                 "    --dump-after) COMPREPLY=($(compgen -W \"" << passes.substr(1) << "\" -- \"$cur\")); return ;;\n"
                 "  esac\n"
                 "  case ${COMP_WORDS[1]} in\n"
              << flags_by_command
              << "  esac\n"
                 "  if [[ ${COMP_WORDS[1]} == help && $COMP_CWORD -eq 2 ]]; then\n"
                 "    COMPREPLY=($(compgen -W \"" << names.substr(1) << "\" -- \"$cur\"))\n"
                 "  elif [[ $cur == -* ]]; then\n"
                 "    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n"
                 "  else\n"
                 "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
                 "  fi\n"
                 "}\n"
                 "complete -o filenames -o bashdefault -F _raspc raspc\n";
  });
}

}  // namespace raspc
