#include "support/atomic_file.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "support/diagnostics.hpp"

namespace raspc {

namespace {

std::string parent_folder(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// lstat: a symbolic link at an output is itself what rename would replace.
bool entry_mode(const std::string& path, unsigned& mode) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return false;
  mode = st.st_mode;
  return true;
}

[[noreturn]] void fail_not_regular(const std::string& path, unsigned mode) {
  fail_file(path, "the output is " + describe_file_kind(mode) +
                      ", not a regular file; raspc replaces only regular files, so give another name");
}

bool write_all(int fd, std::string_view contents) {
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

}  // namespace

std::string describe_file_kind(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  unsigned mode = 0;
  if (entry_mode(path, mode) && !S_ISREG(mode)) fail_not_regular(path, mode);
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  // O_EXCL: never write through whatever (a link, a leftover) already has the temporary name.
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail_file(path, std::string("cannot create the file: ") + std::strerror(errno));
  bool ok = write_all(fd, contents);
  ok = (::fsync(fd) == 0) && ok;
  ok = (::close(fd) == 0) && ok;
  if (!ok) {
    std::remove(temp.c_str());
    fail_file(path, "could not write the whole file (is the disk full?)");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(temp.c_str());
    fail_file(path, std::string("cannot move the finished file into place: ") + std::strerror(err));
  }
}

void write_folder_atomically(const std::string& given, const std::function<void(const std::string&)>& write) {
  namespace fs = std::filesystem;
  std::string path = given;  // "out/" is the folder out
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const std::string parent = parent_folder(path);
  const std::string base = parent + "/." + fs::path(path).filename().string() + ".raspc-";
  auto temporary_folder = [&](const char* kind) {
    std::string name = base + kind + "XXXXXX";
    if (!::mkdtemp(name.data())) fail_file(path, std::string("cannot create a folder beside it: ") + std::strerror(errno));
    return name;
  };
  const std::string fresh = temporary_folder("new-");
  std::error_code ignored;
  try {
    // mkdtemp makes the folder private (0700); the export gets the permissions of any new folder.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::chmod(fresh.c_str(), 0777 & ~mask);
    write(fresh);
    if (!fs::exists(fs::symlink_status(path, ignored))) {
      if (::rename(fresh.c_str(), path.c_str()) != 0)
        fail_file(path, std::string("cannot move the folder into place: ") + std::strerror(errno));
      return;
    }
    // rename() replaces only an empty folder: move the old one aside (onto an empty folder of our
    // own), the new one in, then remove the old one.
    const std::string old = temporary_folder("old-");
    if (::rename(path.c_str(), old.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      fs::remove(old, ignored);
      fail_file(path, "cannot replace the folder: " + why);
    }
    if (::rename(fresh.c_str(), path.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      ::rename(old.c_str(), path.c_str());
      fail_file(path, "cannot move the folder into place: " + why);
    }
    fs::remove_all(old, ignored);
  } catch (...) {
    fs::remove_all(fresh, ignored);
    throw;
  }
}

void check_output_path(const std::string& path, std::string_view flag, const std::vector<std::string>& inputs) {
  if (path.empty()) fail_file(flag, "the output file name is empty");
  unsigned mode = 0;
  if (entry_mode(path, mode)) {
    if (!S_ISREG(mode)) fail_not_regular(path, mode);
    struct stat out;
    if (::stat(path.c_str(), &out) == 0) {
      for (const std::string& input : inputs) {
        struct stat in;
        if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
          fail_file(path, "the output is the input file " + input + "; writing it would destroy the input");
      }
    }
    return;
  }
  struct stat folder;
  const std::string parent = parent_folder(path);
  if (::stat(parent.c_str(), &folder) != 0 || !S_ISDIR(folder.st_mode))
    fail_file(path, "cannot create the file: the folder " + parent + " does not exist");
}

void check_output_folder(const std::string& path, std::string_view flag) {
  if (path.empty()) fail_file(flag, "the output folder name is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    fail_file(path, "the output folder (" + std::string(flag) + ") is " + describe_file_kind(st.st_mode) +
                        ", not a folder");
}

void check_replaceable_folder(const std::string& path, std::string_view flag, const std::vector<std::string>& inputs,
                              const std::function<bool(const std::string&)>& ours, const FolderWriter& writer) {
  const std::string& usage = writer.usage;
  namespace fs = std::filesystem;
  if (path.empty()) fail_file(std::string(flag), "is empty; name the " + writer.noun + "'s folder");
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (!fs::exists(status)) {
    const fs::path folder = fs::path(path).lexically_normal();
    const fs::path trimmed = folder.has_filename() ? folder : folder.parent_path();  // "out/" is out
    const fs::path parent = trimmed.parent_path().empty() ? fs::path(".") : trimmed.parent_path();
    if (!fs::is_directory(parent, error))
      fail_file(path, "cannot create the folder: its parent " + parent.string() + " does not exist");
    return;
  }
  if (!fs::is_directory(status))
    fail_file(path, std::string("exists and is ") + (fs::is_regular_file(status) ? "a file" : "not a folder") + usage);
  for (const fs::directory_entry& entry : fs::directory_iterator(path, error)) {
    const std::string name = entry.path().filename().string();
    // Importing a tlens export's load_tlens.py or an hf export's raspc_gpt2.py (to_transformer_lens
    // and to_transformers do) leaves Python's cache beside it: part of the previous export.
    if (name == "__pycache__" && entry.is_directory(error) && !entry.is_symlink(error)) continue;
    for (const std::string& input : inputs)
      if (fs::equivalent(entry.path(), input, error))
        fail_file(path, "holds " + name + ", the input file " + input + "; the " + writer.noun +
                            " would replace it: " + writer.elsewhere);
    if (!ours(name))
      fail_file(path, "holds " + name + ", which a " + writer.name + " does not write; the " + writer.noun +
                          " would mix with it" + usage);
    struct stat st;
    if (::lstat(entry.path().c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      fail_file(path, "holds " + name + ", which is " + describe_file_kind(st.st_mode) + ", not a file a previous " +
                          writer.noun + " wrote" + usage);
  }
  if (error) fail_file(path, "cannot list the folder: " + error.message());
}

std::string read_file_bytes(const std::string& path, uint64_t max_bytes) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) fail_file(path, "cannot open the file (does it exist, and is it readable?)");
  if (S_ISDIR(st.st_mode)) fail_file(path, "this is a folder, not a file");
  auto too_large = [&] {
    // Standard input (read_source_file reads "-" as /dev/stdin) is named as the user gave it.
    const std::string limit = max_bytes % (1u << 20) == 0 ? std::to_string(max_bytes >> 20) + " MiB"
                                                         : std::to_string(max_bytes) + " bytes";
    fail_file(path == "/dev/stdin" ? "<stdin>" : path,
              "the file is larger than the " + limit + " raspc reads of such a file");
  };
  if (S_ISREG(st.st_mode) && uint64_t(st.st_size) > max_bytes) too_large();
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail_file(path, "cannot open the file (does it exist, and is it readable?)");
  // A device or a pipe has no size to check first: read it in pieces, up to the limit.
  std::string bytes;
  char buffer[65536];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) {
    if (bytes.size() + n > max_bytes) {
      std::fclose(f);
      too_large();
    }
    bytes.append(buffer, n);
  }
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) fail_file(path, "cannot read the file");
  return bytes;
}

InputFile::InputFile(const std::string& path) : path_(path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) fail_file(path, "cannot open the file (does it exist, and is it readable?)");
  if (S_ISDIR(st.st_mode)) fail_file(path, "this is a folder, not a file");
  if (!S_ISREG(st.st_mode)) fail_file(path, "this is " + describe_file_kind(st.st_mode) + ", not a regular file");
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) fail_file(path, "cannot open the file (does it exist, and is it readable?)");
  // Checked again on the open file: the path may have been replaced between the two looks.
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fail_file(path, "this is not a regular file");
  }
  size_ = uint64_t(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(uint64_t offset, char* destination, uint64_t count) const {
  while (count > 0) {
    ssize_t n = ::pread(fd_, destination, size_t(std::min<uint64_t>(count, 1u << 30)), off_t(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail_file(path_, "the file ended early while it was read (was it changed meanwhile?)");
    destination += n;
    offset += uint64_t(n);
    count -= uint64_t(n);
  }
}

}  // namespace raspc
