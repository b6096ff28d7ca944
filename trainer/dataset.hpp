// A program's task as a dataset for other trainers (Hugging Face `Trainer`, `accelerate`): inputs
// and the interpreter's labels, as JSON lines shards and a dataset card, in a folder that
// `datasets.load_dataset("json", data_dir=DIR)` loads as the splits "train" and "test".
//
//   DIR/train-00000-of-00004.jsonl ...  the training inputs, drawn from --seed
//   DIR/test-00000-of-00001.jsonl       the held-out inputs of `raspc train` and `raspc compare`
//                                       (Task's fixed-seed set), never among the training inputs
//   DIR/raspc_dataset.json              the card: program, vocabulary, mode, lengths, seed, counts
//   DIR/README.md                       the same for people, with the Hub's YAML header
//
// A row (one line):
//   {"input": ["a","b"], "output": ["1","1"], "defined": [true,true], "undefined": "",
//    "input_ids": [0,1,2], "labels": [-100,5,5], "length": 2}
// input_ids start with BOS (id 0); labels are aligned with them (not shifted: the label at
// position i+1 is the program's output at input position i), -100 (PyTorch's ignore index) at BOS
// and where the program is undefined. The interpreter reports an undefined input at one position,
// not which others are still defined, so such an input's positions are all marked undefined
// ("defined" false, "output" "", labels -100) and "undefined" holds the interpreter's message: the
// row is kept, never dropped. Every row has every field with one type, so the shards load as one
// table. The vocabulary is the trainer's (trainer/task.hpp): BOS, the input symbols, then the
// output values; a value the training inputs show that the task's scan did not is appended to it.
#pragma once

#include <cstdint>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "language/interpret.hpp"
#include "trainer/program_task.hpp"
#include "trainer/task.hpp"

namespace raspc {

struct DatasetOptions {
  TaskOptions task;    // vocabulary, max_len, training lengths (train_min..train_max), held-out size
  long n = 10000;      // training inputs
  uint64_t seed = 1;   // of the training inputs
  Mode mode = Mode::Bidirectional;
  long shard_rows = 100000;  // rows a training shard holds at most
  int threads = 1;           // labelling threads; the rows are the same for every count
};

// Rows of one split, in order: the labelled inputs of one chunk, or a whole split in memory.
struct DatasetRows {
  std::vector<std::vector<int>> symbols;  // by row: input symbol indices (TaskOptions::input_vocab)
  std::vector<std::vector<int>> labels;   // by row: length + 1 ids, -100 where nothing counts
  std::vector<std::vector<std::string>> outputs;  // by row: displayed outputs, "" where undefined
  std::vector<std::string> undefined;     // by row: the interpreter's message, "" when defined
  size_t size() const { return symbols.size(); }
  void append(DatasetRows&& more);
};

enum class DatasetSplit { Train, Test };

// What a dataset is beyond its rows: the vocabulary (final once every row is labelled) and counts.
struct DatasetSummary {
  std::vector<std::string> vocab;  // by token id
  std::vector<int> input_ids, output_ids;
  long train_rows = 0, test_rows = 0, train_undefined = 0, test_undefined = 0;
  double seconds = 0;  // labelling time
  // raspc_dataset.json; the program and output are named as the user wrote them (file name, s-op).
  nlohmann::json card(const LoadedProgram& program, const DatasetOptions& options) const;
};

// Labels the held-out inputs (the test split, first) and then `options.n` fresh training inputs
// with the program's interpreter (one per thread), handing each chunk of rows to `sink` in order.
// Deterministic for a seed: the inputs come from one generator and every id is given in row
// order, whatever the thread count. `progress(done, total)` after each chunk. `on_test_size`, when
// given, learns the test split's size before any row reaches the sink.
DatasetSummary make_dataset(const LoadedProgram& program, const DatasetOptions& options,
                            const std::function<void(DatasetSplit, DatasetRows&&)>& sink,
                            const std::function<void(long, long)>& progress = {},
                            const std::function<void(long)>& on_test_size = {});

// Rows [begin, end) as JSON lines (the format above), given the input symbols' texts.
std::string dataset_json_lines(const DatasetRows& rows, const std::vector<std::string>& symbol_texts, size_t begin = 0,
                               size_t end = SIZE_MAX);

// Makes and writes the folder (atomically: a temporary folder renamed into place), the shards
// written as their rows are labelled (and handed to `also`, where given); returns the summary.
DatasetSummary write_dataset(const LoadedProgram& program, const DatasetOptions& options, const std::string& folder,
                             const std::function<void(long, long)>& progress = {},
                             const std::function<void(DatasetSplit, const DatasetRows&)>& also = {});

// Refuses an output folder a dataset may not replace: one holding anything a dataset does not
// write (or an input), or a path that is not a folder. A new folder's parent must exist.
void check_dataset_folder(const std::string& folder, const std::string& flag, const std::vector<std::string>& inputs);

// The card as the trainer reads it back (raspc import hf, examples/train_hf.py).
struct DatasetCard {
  std::vector<std::string> vocab;
  int bos_id = 0;
  std::vector<int> input_ids, output_ids;
  bool causal = false;
  int max_len = 0;
  std::string program_text, program_name;
  nlohmann::json json;
};
// Reads FOLDER/raspc_dataset.json (or the file itself); a missing or malformed card is a UserError
// naming the file.
DatasetCard read_dataset_card(const std::string& path);

constexpr const char* kDatasetCardName = "raspc_dataset.json";

}  // namespace raspc
