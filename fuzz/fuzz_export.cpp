// Fuzz target: the export writers, onto odd targets. The first byte picks the format (hf, tlens,
// gguf, llmc), the second what stands at the target path (see Target); the rest is a model file.
// Everything happens in a scratch folder of this process's own (in the temporary folder, removed
// at exit), set up afresh for every input. What must hold, whatever the bytes (a violation aborts,
// so libFuzzer keeps the input):
//   - a refused export (a UserError) changes nothing in the scratch folder: no partial folder, no
//     temporary left behind, no file replaced;
//   - a successful one changes only the target, which then holds exactly the format's files (a
//     folder format) or one regular file (gguf); the input and the user's files keep their bytes.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "runtime/export/export.hpp"
#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"

namespace {

namespace fs = std::filesystem;

// What stands at the export's target path before the export.
enum class Target {
  Absent,             // out
  EmptyFolder,        // out/
  UserFileInside,     // out/notes.txt
  FormatNameInside,   // out/<the format's first file name>, the user's own
  TheInput,           // the input model file itself
  InputInside,        // the input is out/model.safetensors
  LinkToFolder,       // out -> real/ (holding notes.txt)
  MissingParent,      // missing/out
  UserFile,           // out, a regular file of the user's
  PreviousExport,     // out, a previous export of the same format
  Fifo,               // out, a named pipe
  FifoInside,         // out/<the format's first file name>, a named pipe
  kCount
};

struct Scratch {
  fs::path path = fs::temp_directory_path() / ("raspc_fuzz_export_" + std::to_string(::getpid()));
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

const fs::path& scratch() {
  static Scratch folder;
  return folder.path;
}

void write(const fs::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every entry under the scratch folder (links not followed): a file's bytes, or what it is.
std::map<std::string, std::string> snapshot() {
  std::map<std::string, std::string> entries;
  for (auto it = fs::recursive_directory_iterator(scratch()); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = fs::relative(it->path(), scratch()).string();
    const fs::file_status status = it->symlink_status();
    if (fs::is_symlink(status)) entries[name] = "<link to " + fs::read_symlink(it->path()).string() + ">";
    else if (fs::is_directory(status)) entries[name] = "<folder>";
    else if (fs::is_regular_file(status)) entries[name] = read(it->path());
    else entries[name] = "<other>";
  }
  return entries;
}

[[noreturn]] void violated(const char* what, const std::string& detail) {
  std::fprintf(stderr, "export fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace raspc;
  if (size < 2) return 0;
  static const ExportFormat formats[] = {ExportFormat::HuggingFace, ExportFormat::TransformerLens, ExportFormat::Gguf,
                                         ExportFormat::Llmc};
  const ExportFormat format = formats[data[0] % 4];
  const Target target = Target(data[1] % uint8_t(Target::kCount));
  const std::string_view bytes(reinterpret_cast<const char*>(data + 2), size - 2);
  Model model;
  try {
    model = parse_model(bytes, "fuzz.safetensors");
  } catch (const UserError&) {
    return 0;  // the reader's own target fuzzes what it refuses
  }

  std::error_code ignored;
  fs::remove_all(scratch(), ignored);
  fs::create_directories(scratch());
  const bool folder_format = format != ExportFormat::Gguf;
  const std::string first_name = folder_format ? export_file_names(format).front() : "model.gguf";
  fs::path input = scratch() / "in.safetensors", out = scratch() / "out";
  switch (target) {
    case Target::Absent: break;
    case Target::EmptyFolder: fs::create_directory(out); break;
    case Target::UserFileInside:
      fs::create_directory(out);
      write(out / "notes.txt", "the user's notes");
      break;
    case Target::FormatNameInside:
      fs::create_directory(out);
      write(out / first_name, "the user's own " + first_name);
      break;
    case Target::TheInput: out = input; break;
    case Target::InputInside:
      fs::create_directory(out);
      input = out / "model.safetensors";
      break;
    case Target::LinkToFolder:
      fs::create_directory(scratch() / "real");
      write(scratch() / "real" / "notes.txt", "the user's notes");
      fs::create_directory_symlink("real", out);
      break;
    case Target::MissingParent: out = scratch() / "missing" / "out"; break;
    case Target::UserFile: write(out, "the user's file"); break;
    case Target::PreviousExport: break;  // written below, once the input is
    case Target::Fifo: ::mkfifo(out.c_str(), 0600); break;
    case Target::FifoInside:
      fs::create_directory(out);
      ::mkfifo((out / first_name).c_str(), 0600);
      break;
    case Target::kCount: break;
  }
  write(input, bytes);
  if (target == Target::PreviousExport) {
    try {
      export_model(model, format, out.string(), {input.string()});
    } catch (const UserError&) {
      return 0;  // a model the format refuses: nothing to export again
    }
  }

  const std::map<std::string, std::string> before = snapshot();
  bool exported = false;
  try {
    check_export_path(format, out.string(), "-o", {input.string()});
    export_model(model, format, out.string(), {input.string()});
    exported = true;
  } catch (const UserError& e) {
    if (std::getenv("RASPC_FUZZ_VERBOSE")) std::fputs(e.what(), stderr);
  }
  const std::map<std::string, std::string> after = snapshot();
  if (read(input) != bytes) violated("the input changed", input.string());
  if (!exported) {
    if (after != before) violated("a refused export changed the scratch folder", out.string());
    return 0;
  }
  // Only the target changed, and it holds exactly what the format writes.
  const std::string target_name = fs::relative(out, scratch()).string();
  auto outside_target = [&](const std::map<std::string, std::string>& entries) {
    std::map<std::string, std::string> rest;
    for (const auto& [name, content] : entries)
      if (name != target_name && name.rfind(target_name + "/", 0) != 0) rest[name] = content;
    return rest;
  };
  if (outside_target(after) != outside_target(before)) violated("an export changed more than its target", target_name);
  const fs::file_status status = fs::symlink_status(out);
  if (!folder_format) {
    if (!fs::is_regular_file(status)) violated("a gguf export is not a regular file", target_name);
    return 0;
  }
  if (!fs::is_directory(status)) violated("a folder export is not a folder", target_name);
  std::set<std::string> names, expected(export_file_names(format).begin(), export_file_names(format).end());
  for (const auto& entry : fs::directory_iterator(out)) names.insert(entry.path().filename().string());
  if (names != expected) violated("a folder export holds other files than its format's", target_name);
  return 0;
}
