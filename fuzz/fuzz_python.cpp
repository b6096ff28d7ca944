// Fuzz target: the Python boundary. CPython runs embedded, with the extension module's own sources
// compiled into this binary (so libFuzzer sees their coverage and the sanitizers their memory)
// and registered as raspc._raspc, beside the package's Python files from python/raspc. Every input
// goes to fuzz_python.py's run(), which calls the public API with valid and hostile arguments:
// each call must return or raise a raspc.RaspcError, and leave the program and model files it
// was given as they were. Any other exception escapes to here and aborts with its traceback; a
// crash of the process (what kills a user's kernel) is a finding by itself.
#include <pybind11/embed.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

extern "C" PyObject* PyInit__raspc();  // python/src/module.cpp's PYBIND11_MODULE

namespace py = pybind11;

namespace {

// The driver's run(), set up once: the interpreter lives until the process ends.
py::object& driver() {
  static py::object* run = [] {
    // Python's own allocator hides its blocks from AddressSanitizer: use malloc.
    setenv("PYTHONMALLOC", "malloc", 0);
    new py::scoped_interpreter();  // never destroyed: the fuzzer exits without returning
    py::module_ sys = py::module_::import("sys");
    sys.attr("path").attr("insert")(0, RASPC_ROOT "/python");
    sys.attr("path").attr("insert")(0, RASPC_ROOT "/fuzz");
    sys.attr("modules")["raspc._raspc"] = py::reinterpret_steal<py::object>(PyInit__raspc());
    static char folder[] = "/tmp/raspc-fuzz-python-XXXXXX";  // this process's own folder, removed at exit
    if (mkdtemp(folder) == nullptr) {
      std::perror("python fuzz: mkdtemp");
      std::abort();
    }
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(folder, ignored);
    });
    py::module_ calls = py::module_::import("fuzz_python");
    calls.attr("setup")(std::string(folder));
    return new py::object(calls.attr("run"));
  }();
  return *run;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  py::object& run = driver();
  try {
    run(py::bytes(reinterpret_cast<const char*>(data), size));
  } catch (py::error_already_set& escaped) {
    std::fprintf(stderr, "python fuzz: a call raised what is not a raspc.RaspcError:\n%s\n", escaped.what());
    std::abort();
  }
  return 0;
}
