// Datasets: a program's inputs and the interpreter's labels (trainer/dataset.hpp), as columns for
// raspc.dataset, which makes them a datasets.DatasetDict (or plain lists) in Python.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "python/src/bindings.hpp"
#include "compiler/compile.hpp"
#include "support/atomic_file.hpp"
#include "trainer/dataset.hpp"

namespace raspc::python {

namespace {

// The split's rows as columns, the names and types of the CLI's JSON lines.
py::dict columns(const DatasetRows& rows, const std::vector<std::string>& symbol_texts) {
  py::list input, output, defined, undefined, input_ids, labels, length;
  for (size_t r = 0; r < rows.size(); ++r) {
    py::list symbols, ids, row_defined;
    ids.append(0);  // BOS
    for (int s : rows.symbols[r]) {
      symbols.append(symbol_texts[size_t(s)]);
      ids.append(s + 1);
      row_defined.append(rows.undefined[r].empty());
    }
    input.append(symbols);
    output.append(py::cast(rows.outputs[r]));
    defined.append(row_defined);
    undefined.append(rows.undefined[r]);
    input_ids.append(ids);
    labels.append(py::cast(rows.labels[r]));
    length.append(rows.symbols[r].size());
  }
  py::dict d;
  d["input"] = input;
  d["output"] = output;
  d["defined"] = defined;
  d["undefined"] = undefined;
  d["input_ids"] = input_ids;
  d["labels"] = labels;
  d["length"] = length;
  return d;
}

// `folder` non-empty: also written there as `raspc dataset -o` writes it (JSON lines).
py::dict make(const PyProgram& program, const std::vector<Value>& vocab, int shortest, int longest, int max_len,
              long n, uint64_t seed, int held_out, bool causal, int threads, const std::string& folder) {
  LoadedProgram loaded;
  loaded.source = program.source;
  loaded.program = std::make_shared<Program>(program.program);
  loaded.header = program.header;
  DatasetOptions options;
  if (const std::string problem = input_symbols_problem(vocab); !problem.empty()) fail_file("vocab", problem);
  options.task.input_vocab = vocab;
  if (shortest < 1 || shortest > longest || longest > max_len || max_len > 512)
    fail_file("lengths", "give lengths (A, B) with 1 <= A <= B <= max_len <= 512, not (" + std::to_string(shortest) +
                             ", " + std::to_string(longest) + ") with max_len " + std::to_string(max_len));
  if (n < 0 || n > kMaxSamples) fail_file("n", "give from 0 to " + std::to_string(kMaxSamples) + " training inputs");
  if (held_out < 0) fail_file("held_out", "give 0 or more test inputs per length");
  options.task.train_min = shortest;
  options.task.train_max = longest;
  options.task.max_len = max_len;
  options.task.held_out_per_length = held_out;
  options.n = n;
  options.seed = seed;
  options.mode = causal ? Mode::Causal : Mode::Bidirectional;
  options.threads = threads;
  DatasetRows train, test;
  DatasetSummary summary;
  {
    py::gil_scoped_release release;
    if (folder.empty()) {
      summary = make_dataset(loaded, options, [&](DatasetSplit split, DatasetRows&& rows) {
        (split == DatasetSplit::Train ? train : test).append(std::move(rows));
      });
    } else {
      check_dataset_folder(folder, "path", {});
      summary = write_dataset(loaded, options, folder, {}, [&](DatasetSplit split, const DatasetRows& rows) {
        (split == DatasetSplit::Train ? train : test).append(DatasetRows(rows));
      });
    }
  }
  std::vector<std::string> symbol_texts;
  for (const Value& v : vocab) symbol_texts.push_back(to_display(v));
  py::dict result;
  result["card"] = py::module_::import("json").attr("loads")(summary.card(loaded, options).dump());
  result["train"] = columns(train, symbol_texts);
  result["test"] = columns(test, symbol_texts);
  return result;
}

}  // namespace

void bind_datasets(py::module_& module) {
  module.def(
      "dataset",
      [](const PyProgram& program, const py::list& vocab, int shortest, int longest, int max_len, long n,
         uint64_t seed, int held_out, bool causal, int threads, const std::string& folder) {
        return translating_errors("InputError", [&] {
          std::vector<Value> symbols;
          for (const py::handle item : vocab) {
            try {
              symbols.push_back(from_python(item, "vocab"));
            } catch (const py::builtin_exception& error) {
              fail_file("vocab", error.what());
            }
          }
          return make(program, symbols, shortest, longest, max_len, n, seed, held_out, causal, threads, folder);
        });
      },
      py::arg("program"), py::arg("vocab"), py::arg("shortest"), py::arg("longest"), py::arg("max_len"), py::arg("n"),
      py::arg("seed"), py::arg("held_out"), py::arg("causal"), py::arg("threads"), py::arg("folder"));
  // The folder raspc.dataset(path=...) writes: refused where `raspc dataset -o` would refuse it, then
  // filled by `write` in a temporary folder that takes its place (support/atomic_file.hpp).
  module.def(
      "write_dataset_folder",
      [](const std::string& path, const std::function<void(const std::string&)>& write) {
        translating_errors("InputError", [&] {
          check_dataset_folder(path, "path", {});
          write_folder_atomically(path, write);
        });
      },
      py::arg("path"), py::arg("write"));
}

}  // namespace raspc::python
