#include "trainer/dataset.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <unordered_map>

#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"
#include "support/json_file.hpp"

namespace raspc {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Inputs labelled between two hand-overs to the sink: big enough that the threads' start-up is
// noise, small enough that the progress line moves and a chunk's rows stay a few megabytes.
constexpr long kChunkRows = 8192;
constexpr int kIgnored = -100;  // PyTorch's CrossEntropyLoss ignore_index, what HF's Trainer expects

// "train-00003-of-00012.jsonl": the Hub's shard naming, which load_dataset reads as the split.
std::string shard_name(const char* split, long index, long count) {
  char name[64];
  std::snprintf(name, sizeof name, "%s-%05ld-of-%05ld.jsonl", split, index, count);
  return name;
}

// The first line of an interpreter message ("hist.rasp:3:9: error: ..."), which is what a row keeps.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

void append_json_string(std::string& out, const std::string& text) {
  out += '"';
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += char(c);
        }
    }
  }
  out += '"';
}

// Labels rows with one interpreter a thread. The labels' ids are given afterwards, in row order.
class Labellers {
 public:
  Labellers(const LoadedProgram& program, Mode mode, int threads) {
    for (int t = 0; t < std::max(1, threads); ++t) labellers_.push_back(program.labeller(mode));
  }

  // Fills rows.outputs and rows.undefined for rows.symbols.
  void label(DatasetRows& rows, const std::vector<Value>& vocab) {
    const size_t n = rows.size();
    rows.outputs.assign(n, {});
    rows.undefined.assign(n, "");
    const size_t threads = std::min(labellers_.size(), std::max<size_t>(1, n / 256));
    std::vector<std::exception_ptr> errors(threads);
    auto work = [&](size_t t) {
      try {
        std::vector<Value> input;
        for (size_t r = n * t / threads; r < n * (t + 1) / threads; ++r) {
          input.clear();
          for (int s : rows.symbols[r]) input.push_back(vocab[size_t(s)]);
          std::vector<std::string>& shown = rows.outputs[r];
          try {
            const std::vector<Value> outputs = labellers_[t](input);
            for (size_t i = 0; i < input.size(); ++i) shown.push_back(i < outputs.size() ? to_display(outputs[i]) : "");
          } catch (const UndefinedOnInput& error) {
            shown.assign(input.size(), "");
            rows.undefined[r] = first_line(error.what());
          }
        }
      } catch (...) {
        errors[t] = std::current_exception();
      }
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (std::thread& thread : pool) thread.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }

 private:
  std::vector<Labeller> labellers_;
};

}  // namespace

void DatasetRows::append(DatasetRows&& more) {
  auto move_into = [](auto& to, auto& from) { std::move(from.begin(), from.end(), std::back_inserter(to)); };
  move_into(symbols, more.symbols);
  move_into(labels, more.labels);
  move_into(outputs, more.outputs);
  move_into(undefined, more.undefined);
}

DatasetSummary make_dataset(const LoadedProgram& program, const DatasetOptions& options,
                            const std::function<void(DatasetSplit, DatasetRows&&)>& sink,
                            const std::function<void(long, long)>& progress,
                            const std::function<void(long)>& on_test_size) {
  const auto start = std::chrono::steady_clock::now();
  Task task(program.labeller(options.mode), options.task);
  const std::vector<Value>& vocab = options.task.input_vocab;
  std::vector<int> symbol_of_id(task.vocab().size(), -1);  // input token id -> symbol index
  for (size_t s = 0; s < task.input_ids().size(); ++s) symbol_of_id[size_t(task.input_ids()[s])] = int(s);

  std::vector<std::vector<int>> test_inputs;
  for (const HeldOutSet& set : task.held_out())
    for (const std::vector<int>& tokens : set.tokens) {
      std::vector<int> symbols;
      for (size_t t = 1; t < tokens.size(); ++t) symbols.push_back(symbol_of_id[size_t(tokens[t])]);
      test_inputs.push_back(std::move(symbols));
    }
  if (on_test_size) on_test_size(long(test_inputs.size()));

  DatasetSummary summary;
  const long total = long(test_inputs.size()) + options.n;
  long done = 0;
  if (progress) progress(0, total);
  Labellers labellers(program, options.mode, options.threads);
  std::unordered_map<std::string, int> id_of;  // displayed output -> token id, a cache of Task's
  auto finish_chunk = [&](DatasetSplit split, DatasetRows&& rows) {
    labellers.label(rows, vocab);
    long& undefined = split == DatasetSplit::Train ? summary.train_undefined : summary.test_undefined;
    rows.labels.resize(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
      std::vector<int>& labels = rows.labels[r];
      labels.assign(rows.symbols[r].size() + 1, kIgnored);
      if (!rows.undefined[r].empty()) {
        ++undefined;
        continue;
      }
      for (size_t i = 0; i < rows.outputs[r].size(); ++i) {
        const std::string& shown = rows.outputs[r][i];
        auto it = id_of.find(shown);
        if (it == id_of.end()) it = id_of.emplace(shown, task.output_id(shown)).first;
        labels[i + 1] = it->second;
      }
    }
    (split == DatasetSplit::Train ? summary.train_rows : summary.test_rows) += long(rows.size());
    done += long(rows.size());
    sink(split, std::move(rows));
    if (progress) progress(done, total);
  };

  for (size_t begin = 0; begin < test_inputs.size(); begin += kChunkRows) {
    DatasetRows rows;
    const size_t end = std::min(test_inputs.size(), begin + size_t(kChunkRows));
    rows.symbols.assign(test_inputs.begin() + long(begin), test_inputs.begin() + long(end));
    finish_chunk(DatasetSplit::Test, std::move(rows));
  }

  // The training stream: as Task::fill_batch draws it (a length, then symbols), never a held-out input.
  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<int> length(options.task.train_min, options.task.train_max);
  std::uniform_int_distribution<int> symbol(0, int(vocab.size()) - 1);
  for (long begin = 0; begin < options.n; begin += kChunkRows) {
    DatasetRows rows;
    const long count = std::min(kChunkRows, options.n - begin);
    for (long r = 0; r < count; ++r) {
      std::vector<int> symbols;
      do {
        symbols.resize(size_t(length(rng)));
        for (int& x : symbols) x = symbol(rng);
      } while (task.is_held_out(symbols));
      rows.symbols.push_back(std::move(symbols));
    }
    finish_chunk(DatasetSplit::Train, std::move(rows));
  }

  summary.vocab = task.vocab();
  summary.input_ids = task.input_ids();
  summary.output_ids = task.output_ids();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

std::string dataset_json_lines(const DatasetRows& rows, const std::vector<std::string>& symbol_texts, size_t begin,
                               size_t end) {
  std::string out;
  end = std::min(end, rows.size());
  out.reserve((end - std::min(begin, end)) * 128);
  for (size_t r = begin; r < end; ++r) {
    const std::vector<int>& symbols = rows.symbols[r];
    const bool defined = rows.undefined[r].empty();
    out += "{\"input\": [";
    for (size_t i = 0; i < symbols.size(); ++i) {
      if (i) out += ", ";
      append_json_string(out, symbol_texts[size_t(symbols[i])]);
    }
    out += "], \"output\": [";
    for (size_t i = 0; i < rows.outputs[r].size(); ++i) {
      if (i) out += ", ";
      append_json_string(out, rows.outputs[r][i]);
    }
    out += "], \"defined\": [";
    for (size_t i = 0; i < symbols.size(); ++i) out += i ? (defined ? ", true" : ", false") : (defined ? "true" : "false");
    out += "], \"undefined\": ";
    append_json_string(out, rows.undefined[r]);
    // The input ids: BOS, then each symbol's id (symbol s is token s + 1: Task puts BOS first).
    out += ", \"input_ids\": [0";
    for (int s : symbols) out += ", " + std::to_string(s + 1);
    out += "], \"labels\": [";
    for (size_t i = 0; i < rows.labels[r].size(); ++i) {
      if (i) out += ", ";
      out += std::to_string(rows.labels[r][i]);
    }
    out += "], \"length\": " + std::to_string(symbols.size()) + "}\n";
  }
  return out;
}

json DatasetSummary::card(const LoadedProgram& program, const DatasetOptions& options) const {
  json input_vocab = json::array();
  for (const Value& v : options.task.input_vocab) input_vocab.push_back(to_display(v));
  return {
      {"format", "raspc-dataset"},
      {"version", 1},
      {"program", fs::path(program.source->name).filename().string()},
      {"output", program.program->shown_name(program.program->output)},
      {"program_text", program.source->text},
      {"mode", options.mode == Mode::Causal ? "causal" : "bidirectional"},
      {"input_vocab", input_vocab},
      {"vocab", vocab},
      {"bos_id", 0},
      {"input_ids", input_ids},
      {"output_ids", output_ids},
      {"train_lengths", {options.task.train_min, options.task.train_max}},
      {"max_len", options.task.max_len},
      {"n_positions", options.task.max_len + 1},
      {"seed", options.seed},
      {"held_out_seed", options.task.held_out_seed},
      {"held_out_per_length", options.task.held_out_per_length},
      {"labels", "aligned with input_ids (not shifted); -100 at BOS and where the program is undefined"},
      {"counts",
       {{"train", train_rows}, {"test", test_rows}, {"train_undefined", train_undefined},
        {"test_undefined", test_undefined}}},
  };
}

namespace {

std::string readme_text(const json& card, const std::vector<std::string>& files) {
  auto list = [](const json& values) {
    std::string text;
    for (const json& v : values) text += (text.empty() ? "`" : ", `") + v.get<std::string>() + "`";
    return text;
  };
  std::string train_files, test_files;
  for (const std::string& f : files) {
    if (f.rfind("train-", 0) == 0) train_files += "    - " + f + "\n";
    if (f.rfind("test-", 0) == 0) test_files += "    - " + f + "\n";
  }
  const json& counts = card["counts"];
  std::string text = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path:\n" + train_files +
                     "  - split: test\n    path:\n" + test_files + "tags:\n- raspc\n- rasp\n---\n\n";
  text += "# " + card["program"].get<std::string>() + ": a RASP program's inputs and outputs\n\n";
  text += "Written by `raspc dataset`. Every label is the output of raspc's reference interpreter for the program below, "
          "in " + card["mode"].get<std::string>() + " mode.\n\n";
  text += "- training inputs: " + counts["train"].dump() + " (lengths " + card["train_lengths"][0].dump() + "-" +
          card["train_lengths"][1].dump() + ", drawn from seed " + card["seed"].dump() + "; " +
          counts["train_undefined"].dump() + " undefined)\n";
  text += "- test inputs: " + counts["test"].dump() + " (up to " + card["held_out_per_length"].dump() +
          " per length 1-" + card["max_len"].dump() + ", the held-out set of `raspc train` and `raspc compare`, never among "
          "the training inputs; " + counts["test_undefined"].dump() + " undefined)\n";
  text += "- input symbols: " + list(card["input_vocab"]) + "\n";
  text += "- vocabulary (token ids from 0): " + list(card["vocab"]) + "\n\n";
  text += "Each row: `input` (the symbols), `output` (the program's output at each position, \"\" where undefined), "
          "`defined`, `undefined` (the interpreter's message where the program is undefined on the input, else \"\"), "
          "`input_ids` (BOS = 0 first), `labels` (aligned with `input_ids`, not shifted; -100 at BOS and where "
          "undefined), `length`.\n\n";
  text += "```python\nfrom datasets import load_dataset\nds = load_dataset(\"json\", data_dir=\"THIS_FOLDER\")\n```\n\n";
  text += "## The program\n\n```\n" + card["program_text"].get<std::string>() + "```\n";
  return text;
}

bool is_dataset_file(const std::string& name) {
  auto ends_with = [&](const char* suffix) {
    const std::string s(suffix);
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return name == kDatasetCardName || name == "README.md" ||
         ((name.rfind("train-", 0) == 0 || name.rfind("test-", 0) == 0) && (ends_with(".jsonl") || ends_with(".parquet")));
}

}  // namespace

DatasetSummary write_dataset(const LoadedProgram& program, const DatasetOptions& options, const std::string& folder,
                             const std::function<void(long, long)>& progress,
                             const std::function<void(DatasetSplit, const DatasetRows&)>& also) {
  std::vector<std::string> symbol_texts;
  for (const Value& v : options.task.input_vocab) symbol_texts.push_back(to_display(v));
  DatasetSummary summary;
  write_folder_atomically(folder, [&](const std::string& temporary) {
    std::vector<std::string> files;
    const long train_shards = std::max(1L, (options.n + options.shard_rows - 1) / options.shard_rows);
    long test_shards = 1;
    std::ofstream shard;
    std::string shard_path;
    long shard_index = -1, rows_in_shard = 0;
    DatasetSplit current = DatasetSplit::Test;
    auto close_shard = [&] {
      if (!shard.is_open()) return;
      shard.close();
      if (!shard) fail_file(shard_path, "could not be written (is the disk full?)");
    };
    auto open_shard = [&](DatasetSplit split) {
      close_shard();
      if (split != current) shard_index = -1;
      current = split;
      ++shard_index;
      rows_in_shard = 0;
      const bool train = split == DatasetSplit::Train;
      const std::string name = shard_name(train ? "train" : "test", shard_index, train ? train_shards : test_shards);
      shard_path = (fs::path(temporary) / name).string();
      shard.open(shard_path, std::ios::binary);
      if (!shard) fail_file(shard_path, "cannot be created");
      files.push_back(name);
    };
    summary = make_dataset(
        program, options,
        [&](DatasetSplit split, DatasetRows&& rows) {
          for (size_t begin = 0; begin < rows.size();) {
            if (!shard.is_open() || split != current || rows_in_shard >= options.shard_rows) open_shard(split);
            const size_t end = std::min(rows.size(), begin + size_t(options.shard_rows - rows_in_shard));
            const std::string text = dataset_json_lines(rows, symbol_texts, begin, end);
            shard.write(text.data(), std::streamsize(text.size()));
            rows_in_shard += long(end - begin);
            begin = end;
          }
          if (also) also(split, rows);
        },
        progress, [&](long test_rows) { test_shards = std::max(1L, (test_rows + options.shard_rows - 1) / options.shard_rows); });
    // A split with no rows still gets its (empty) shard: load_dataset then knows the split.
    if (summary.train_rows == 0) open_shard(DatasetSplit::Train);
    if (summary.test_rows == 0) open_shard(DatasetSplit::Test);
    close_shard();
    json card = summary.card(program, options);
    card["files"] = files;
    write_file_atomically((fs::path(temporary) / kDatasetCardName).string(), card.dump(2) + "\n");
    write_file_atomically((fs::path(temporary) / "README.md").string(), readme_text(card, files));
  });
  return summary;
}

void check_dataset_folder(const std::string& folder, const std::string& flag, const std::vector<std::string>& inputs) {
  check_replaceable_folder(folder, flag, inputs, is_dataset_file,
                           {"dataset", "dataset", "write the dataset into another folder",
                            "; name a new or empty folder, or one a previous `raspc dataset` wrote"});
}

DatasetCard read_dataset_card(const std::string& path) {
  std::error_code error;
  const std::string file = fs::is_directory(path, error) ? (fs::path(path) / kDatasetCardName).string() : path;
  if (!fs::exists(file, error))
    fail_file(file, "is missing; a dataset written by `raspc dataset` has one (give its folder)");
  DatasetCard card;
  card.json = read_json_file(file);
  const json& j = card.json;
  auto need = [&](const char* key, bool ok) {
    if (!ok) fail_file(file, std::string("has no valid \"") + key + "\" entry; is it a raspc dataset card?");
  };
  need("format", j.is_object() && j.value("format", "") == "raspc-dataset");
  need("vocab", j.contains("vocab") && j["vocab"].is_array() && !j["vocab"].empty());
  for (const json& t : j["vocab"]) {
    need("vocab", t.is_string());
    card.vocab.push_back(t.get<std::string>());
  }
  const int V = int(card.vocab.size());
  auto ids = [&](const char* key, std::vector<int>& out) {
    need(key, j.contains(key) && j[key].is_array());
    for (const json& id : j[key]) {
      need(key, id.is_number_integer() && id.get<long>() >= 0 && id.get<long>() < V);
      out.push_back(id.get<int>());
    }
  };
  ids("input_ids", card.input_ids);
  ids("output_ids", card.output_ids);
  need("bos_id", j.contains("bos_id") && j["bos_id"].is_number_integer() && j["bos_id"].get<long>() >= 0 &&
                     j["bos_id"].get<long>() < V);
  card.bos_id = j["bos_id"].get<int>();
  need("mode", j.contains("mode") && j["mode"].is_string() &&
                   (j["mode"] == "causal" || j["mode"] == "bidirectional"));
  card.causal = j["mode"] == "causal";
  need("max_len", j.contains("max_len") && j["max_len"].is_number_integer() && j["max_len"].get<long>() >= 1 &&
                      j["max_len"].get<long>() <= 65536);
  card.max_len = j["max_len"].get<int>();
  for (const char* key : {"program_text", "program"}) need(key, !j.contains(key) || j[key].is_string());
  card.program_text = j.value("program_text", "");
  card.program_name = j.value("program", "");
  return card;
}

}  // namespace raspc
