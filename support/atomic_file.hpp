// Every file raspc writes goes to a temporary name beside the target and is renamed into place,
// so a crash or a full disk never leaves a half-written model, table or plot behind. Only a
// regular file is ever replaced: a folder, a symbolic link, a device or a FIFO at the target is
// refused, and a command checks its outputs (check_output_path) before any long work, so that an
// output which is its own input is refused before verification or training, not after.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace raspc {

// Writes `contents` to `path` atomically (temporary file in the same folder, then rename).
// Errors (folder missing, disk full, `path` not a regular file) are UserErrors naming the path.
void write_file_atomically(const std::string& path, std::string_view contents);

// Writes a folder atomically: `write` fills a new temporary folder beside `path`, which then takes
// `path`'s place (absent, or a folder, whose old contents are removed once the new folder is in).
// If `write` or a rename fails, the temporary folder is removed and `path` is as it was. The
// caller has checked that `path` may be replaced (no input inside, nothing of the user's).
void write_folder_atomically(const std::string& path, const std::function<void(const std::string&)>& write);

// Refuses an output file a write would destroy or could not make: an empty name (named by
// `flag`, as "-o"), an existing path that is not a regular file (saying what it is), a path that
// is one of `inputs` (compared by filesystem identity, so ./x.rasp and x.rasp are the same), or
// one in a folder that does not exist.
void check_output_path(const std::string& path, std::string_view flag, const std::vector<std::string>& inputs = {});

// Refuses an output folder that cannot be one: an empty name, or an existing path that is not a
// folder (or a symbolic link to one).
void check_output_folder(const std::string& path, std::string_view flag);

// Refuses an output folder that write_folder_atomically may not replace: an empty name (named by
// `flag`), a path that is not a folder, a folder holding one of `inputs` or a name `ours` does not
// accept (Python's __pycache__ aside) or anything but regular files, and a new folder whose parent
// does not exist. `writer` says what writes it, for the messages.
struct FolderWriter {
  std::string name;       // "tlens export": "holds x, which a tlens export does not write"
  std::string noun;       // "export": "the export would mix with it"
  std::string elsewhere;  // "export into another folder": what to do when an input is inside
  std::string usage;      // "; name a new or empty folder, ...": ends the messages
};
void check_replaceable_folder(const std::string& path, std::string_view flag, const std::vector<std::string>& inputs,
                              const std::function<bool(const std::string&)>& ours, const FolderWriter& writer);

// What a file system entry of this st_mode is, for messages: "a folder", "a symbolic link", ...
std::string describe_file_kind(unsigned mode);

// The most raspc reads of a text file (a program, a results table): a larger one, or an endless
// one such as a device, is refused instead of filling the memory.
constexpr uint64_t kMaxTextFileBytes = 64ull << 20;

// Reads a whole file of at most `max_bytes`; a missing file, a folder or a larger file is a
// UserError naming it.
std::string read_file_bytes(const std::string& path, uint64_t max_bytes = kMaxTextFileBytes);

// A regular file read in pieces (a model's 8-byte length and header before its data), so nothing
// is read whole before its first bytes are checked. A folder, a device or a FIFO is refused before
// it is opened, so opening never blocks.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }
  // Copies `count` bytes from `offset`; a short read (the file shrank) is a UserError.
  void read_at(uint64_t offset, char* destination, uint64_t count) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace raspc
