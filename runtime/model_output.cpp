#include "runtime/model_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <utility>

#include "support/diagnostics.hpp"
#include "support/utf8.hpp"

namespace raspc {

std::vector<int> input_vocabulary(const Model& model) {
  if (!model.input_ids.empty()) return model.input_ids;
  std::vector<int> ids;
  for (int v = 0; v < model.config.vocab_size; ++v)
    if (v != model.bos_id) ids.push_back(v);
  return ids;
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The same test the verification applies (compiler/verify.cpp): what it proves is what this reads.
bool within_tolerance(double got, double exact) {
  return std::fabs(got - exact) <= kNumericalOutputTolerance * std::max(1.0, std::fabs(exact));
}

// A number written as the interpreter displays it: 3, -1.5, 1/3, True, False.
bool parse_number(const std::string& text, double& value) {
  if (text == "True" || text == "False") return value = text == "True" ? 1.0 : 0.0, true;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return false;
  if (*end == '/') {
    const char* denominator = end + 1;
    double d = std::strtod(denominator, &end);
    if (end == denominator || d == 0) return false;
    value /= d;
  }
  return *end == '\0';
}

const nlohmann::json& output_of(const Model& model) {
  static const nlohmann::json none;
  return model.metadata.is_object() && model.metadata.contains("output") ? model.metadata["output"] : none;
}

// A JSON integer in [0, limit): nlohmann holds one as signed or unsigned, and get<int>() of a
// larger one would wrap (2^32 reads as 0).
bool id_below(const nlohmann::json& j, int limit) {
  if (j.is_number_unsigned()) return j.get<uint64_t>() < uint64_t(limit);
  return j.is_number_integer() && j.get<int64_t>() >= 0 && j.get<int64_t>() < limit;
}

std::string values_problem(const nlohmann::json& output) {
  if (!output.contains("values")) return "";
  if (!output["values"].is_array()) return "the model's output metadata has values " + output["values"].dump() + ", not a list";
  for (const nlohmann::json& v : output["values"]) {
    double number = 0;
    if (!v.is_string() || !parse_number(v.get<std::string>(), number))
      return "the model's output metadata lists value " + v.dump() + ", which is not a number";
  }
  return "";
}

// metadata["output"]["values"] by number; empty when the model has no list (files written before
// the compiler stored one, or value sets it could not snap to unambiguously).
std::vector<std::pair<double, std::string>> output_values(const nlohmann::json& output) {
  std::vector<std::pair<double, std::string>> values;
  if (!output.contains("values")) return values;
  if (std::string problem = values_problem(output); !problem.empty()) fail_at(Span{}, problem);
  for (const nlohmann::json& v : output["values"]) {
    double number = 0;
    parse_number(v.get<std::string>(), number);
    values.emplace_back(number, v.get<std::string>());
  }
  std::sort(values.begin(), values.end());
  return values;
}

// The listed value nearest to `reading` when the reading is within the tolerance of it, else null.
const std::string* snapped(const std::vector<std::pair<double, std::string>>& values, double reading) {
  auto above = std::lower_bound(values.begin(), values.end(), reading,
                                [](const auto& v, double r) { return v.first < r; });
  const std::pair<double, std::string>* nearest = above == values.end() ? nullptr : &*above;
  if (above != values.begin() && (!nearest || reading - (above - 1)->first < nearest->first - reading))
    nearest = &*(above - 1);
  if (!nearest || !within_tolerance(reading, nearest->first)) return nullptr;
  return &nearest->second;
}

std::string reading_text(float reading, const std::vector<std::pair<double, std::string>>& values) {
  if (const std::string* exact = values.empty() ? nullptr : snapped(values, reading)) return *exact;
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", reading == 0.0f ? 0.0f : reading);  // no "-0"
  return text;
}

std::string printable(const std::string& token);

// The input vocabulary as an error lists it: tokens as printable() shows them (a newline in a
// token is \x0a, not a line break inside the message), the first 64 of a larger one.
std::string describe_vocabulary(const Model& model, const std::vector<int>& ids) {
  constexpr size_t kListed = 64;
  std::string s;
  for (size_t i = 0; i < ids.size() && i < kListed; ++i) {
    if (i) s += ' ';
    s += printable(model.vocab[ids[i]]);
  }
  if (ids.size() > kListed) s += " ... (" + std::to_string(ids.size()) + " tokens in all)";
  return s;
}

}  // namespace

std::string output_metadata_problem(const nlohmann::json& metadata, const ModelConfig& config) {
  if (!metadata.is_object() || !metadata.contains("output")) return "";
  const nlohmann::json& output = metadata["output"];
  if (!output.is_object()) return "\"output\" must be an object, not " + output.dump();
  std::string encoding = "categorical";
  if (output.contains("encoding")) {
    if (!output["encoding"].is_string())
      return "output.encoding must be the string \"categorical\" or \"numerical\", not " + output["encoding"].dump();
    encoding = output["encoding"].get<std::string>();
  }
  if (encoding == "numerical") {
    if (!output.contains("dim") || !id_below(output["dim"], config.n_embd))
      return "output.dim must be an integer residual dimension from 0 to " + std::to_string(config.n_embd - 1) +
             ", not " + (output.contains("dim") ? output["dim"].dump() : std::string("missing"));
    return values_problem(output);
  }
  if (encoding != "categorical")
    return "output.encoding must be \"categorical\" or \"numerical\", not " + output["encoding"].dump();
  if (output.contains("token_ids")) {
    const nlohmann::json& ids = output["token_ids"];
    if (!ids.is_array() || ids.empty()) return "output.token_ids must be a non-empty list of token ids, not " + ids.dump();
    for (const nlohmann::json& id : ids)
      if (!id_below(id, config.vocab_size))
        return "output.token_ids lists " + id.dump() + ", which is not a token id below vocab_size " +
               std::to_string(config.vocab_size);
  }
  return "";
}

bool has_numerical_output(const Model& model) {
  const nlohmann::json& output = output_of(model);
  return output.is_object() && output.contains("encoding") && output["encoding"] == "numerical";
}

namespace {

// The id of `token` where it is one of the `allowed` input ids, else -1.
int allowed_id(const Model& model, const std::vector<int>& allowed, const std::string& token) {
  const int id = model.token_id(token);
  for (int a : allowed)
    if (a == id) return id;
  return -1;
}

// Why a sequence of `count` tokens cannot run ("" when it can): empty, or longer than the
// positions beside BOS.
std::string length_problem(const Model& model, size_t count) {
  if (count == 0) return "the input is empty; give at least one token";
  const int capacity = model.config.n_positions - (model.bos_id >= 0 ? 1 : 0);
  if (count <= size_t(capacity)) return "";
  return "the input has " + std::to_string(count) + " tokens but the model takes at most " + std::to_string(capacity) +
         (model.bos_id >= 0 ? " (its " + std::to_string(model.config.n_positions) + " positions minus BOS)"
                            : std::string(" (its positions)"));
}

// A token as a message shows it: control characters (a newline) escaped, long ones cut.
std::string printable(const std::string& token) {
  std::string out;
  for (unsigned char c : token) {
    if (out.size() > 60) return out + "...";
    if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += char(c);
    }
  }
  return out;
}

}  // namespace

std::vector<int> parse_model_input(const Model& model, const std::string& text, const std::string& origin) {
  auto source = std::make_shared<SourceFile>(SourceFile{origin, text});
  require_utf8(source);
  return parse_model_input(model, source, 0, text.size());
}

std::vector<int> parse_model_input(const Model& model, const std::shared_ptr<const SourceFile>& source, size_t first,
                                   size_t last) {
  const std::string& text = source->text;
  auto span = [&](size_t begin, size_t end) {
    return Span{source, uint32_t(begin), uint32_t(std::max(end, begin + 1))};
  };
  const std::vector<int> allowed = input_vocabulary(model);
  auto lookup = [&](size_t begin, size_t end) {
    std::string token = text.substr(begin, end - begin);
    const int id = allowed_id(model, allowed, token);
    if (id < 0)
      fail_at(span(begin, end), "\"" + token + "\" is not in the model's input vocabulary (" +
                                    describe_vocabulary(model, allowed) + ")");
    return id;
  };

  size_t begin = first, end = last;
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  // The tokens counted before any is looked up: a 50 MB line is refused for its length at once,
  // not after 50 million lookups (an item a comma, or a token a code point).
  size_t count = 0;
  if (begin < end && text[begin] == '[') {
    count = size_t(std::count(text.begin() + long(begin), text.begin() + long(end), ',')) + 1;
  } else {
    const bool quoted = end - begin >= 2 && text[begin] == '"' && text[end - 1] == '"';  // as below
    for (size_t i = begin + quoted; i < end - quoted; i += std::max<size_t>(1, utf8_length_at(text, i))) ++count;
  }
  if (count > 0)
    if (const std::string problem = length_problem(model, count); !problem.empty()) fail_at(span(first, last), problem);
  std::vector<int> tokens;
  if (begin < end && text[begin] == '[') {
    if (text[end - 1] != ']') fail_at(span(begin, end), "a list input must end with ']', as in [3,1,2,4]");
    size_t item = begin + 1;
    const size_t close = end - 1;
    while (item <= close) {
      size_t comma = text.find(',', item);
      if (comma == std::string::npos || comma > close) comma = close;
      size_t a = item, b = comma;
      while (a < b && is_space(text[a])) ++a;
      while (b > a && is_space(text[b - 1])) --b;
      if (b - a >= 2 && (text[a] == '"' || text[a] == '\'') && text[b - 1] == text[a]) {
        ++a;
        --b;
      }
      if (a == b) {
        if (comma == close && tokens.empty() && item == close) break;  // "[]"
        fail_at(span(item, comma), "an item of the list input is empty");
      }
      tokens.push_back(lookup(a, b));
      item = comma + 1;
      if (comma == close) break;
    }
  } else {
    if (end - begin >= 2 && text[begin] == '"' && text[end - 1] == '"') {
      ++begin;
      --end;
    }
    // One token a code point: "é" is one symbol of the vocabulary, not two bytes.
    for (size_t i = begin; i < end;) {
      const size_t length = std::max<size_t>(1, utf8_length_at(text, i));
      tokens.push_back(lookup(i, i + length));
      i += length;
    }
  }
  if (const std::string problem = length_problem(model, tokens.size()); !problem.empty()) fail_at(span(first, last), problem);
  return tokens;
}

std::vector<std::pair<size_t, size_t>> input_lines(const std::shared_ptr<const SourceFile>& file) {
  require_utf8(file);
  const std::string& text = file->text;
  std::vector<std::pair<size_t, size_t>> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const size_t stop = end > begin && text[end - 1] == '\r' ? end - 1 : end;
    lines.push_back({begin, stop});
    begin = end + 1;
  }
  return lines;
}

std::vector<int> model_input_tokens(const Model& model, const std::vector<std::string>& tokens,
                                    const std::string& origin) {
  if (const std::string problem = length_problem(model, tokens.size()); !problem.empty()) fail_file(origin, problem);
  const std::vector<int> allowed = input_vocabulary(model);
  std::vector<int> ids;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int id = allowed_id(model, allowed, tokens[i]);
    if (id < 0)
      fail_file(origin, "item " + std::to_string(i) + " (\"" + printable(tokens[i]) +
                            "\") is not in the model's input vocabulary (" + describe_vocabulary(model, allowed) + ")");
    ids.push_back(id);
  }
  return ids;
}

std::vector<int> with_bos(const Model& model, const std::vector<int>& tokens) {
  std::vector<int> sequence;
  if (model.bos_id >= 0) sequence.push_back(model.bos_id);
  sequence.insert(sequence.end(), tokens.begin(), tokens.end());
  return sequence;
}

ForwardOptions output_forward_options(const Model& model) {
  ForwardOptions options;
  options.capture_residual = has_numerical_output(model);
  return options;
}

namespace {

[[noreturn]] void fail_non_finite(int position) {
  throw NonFiniteOutput(format_error(Span{}, "the model's output at position " + std::to_string(position) +
                                                 " is not a finite number (inf or NaN): its weights overflow float32"),
                        position);
}

}  // namespace

PositionOutputs read_outputs(const Model& model, const ForwardResult& result, int b) {
  const int first = model.bos_id >= 0 ? 1 : 0;
  const int length = result.lengths.at(b);
  const nlohmann::json& output = output_of(model);
  PositionOutputs out;

  if (has_numerical_output(model)) {
    if (!output.contains("dim") || !id_below(output["dim"], model.config.n_embd))
      fail_at(Span{}, "the model's output metadata names residual dimension " + output.value("dim", nlohmann::json()).dump() +
                          ", outside 0.." + std::to_string(model.config.n_embd - 1));
    const int dim = output["dim"].get<int>();
    if (result.residual.empty())
      fail_at(Span{}, "reading a numerical output needs the residual stream (output_forward_options)");
    const std::vector<std::pair<double, std::string>> values = output_values(output);
    const int last_stage = 2 * model.config.n_layer;
    for (int t = first; t < length; ++t) {
      if (!std::isfinite(result.residual_at(b, last_stage, t)[dim])) fail_non_finite(t - first);
      out.values.push_back(reading_text(result.residual_at(b, last_stage, t)[dim], values));
      out.margins.push_back(std::numeric_limits<float>::quiet_NaN());
    }
    return out;
  }

  std::vector<int> candidates;
  if (output.is_object() && output.contains("token_ids")) {
    if (!output["token_ids"].is_array() || output["token_ids"].empty())
      fail_at(Span{}, "the model's output metadata has token ids " + output["token_ids"].dump() + ", not a non-empty list");
    for (const nlohmann::json& id : output["token_ids"]) {
      if (!id_below(id, model.config.vocab_size))
        fail_at(Span{}, "the model's output metadata lists token id " + id.dump() + ", outside its vocabulary");
      candidates.push_back(id.get<int>());
    }
  } else {
    for (int v = 0; v < model.config.vocab_size; ++v)
      if (v != model.bos_id || !output.is_object()) candidates.push_back(v);
  }
  for (int t = first; t < length; ++t) {
    const float* logits = result.logits_at(b, t);
    for (int v = 0; v < model.config.vocab_size; ++v)
      if (!std::isfinite(logits[v])) fail_non_finite(t - first);
    int best = -1;
    float runner_up = -std::numeric_limits<float>::infinity();
    for (int v : candidates) {
      if (best < 0 || logits[v] > logits[best]) {
        if (best >= 0) runner_up = logits[best];
        best = v;
      } else {
        runner_up = std::max(runner_up, logits[v]);
      }
    }
    out.values.push_back(model.vocab[best]);
    out.margins.push_back(candidates.size() > 1 ? logits[best] - runner_up : std::numeric_limits<float>::infinity());
  }
  return out;
}

PositionOutputs read_outputs_locating(Backend& backend, const Model& model, const ForwardResult& result, int b,
                                      const std::vector<int>& sequence) {
  try {
    return read_outputs(model, result, b);
  } catch (const NonFiniteOutput& error) {
    ForwardOptions options;
    options.capture_residual = true;
    const ForwardResult full = backend.forward({sequence}, options);
    const int stages = 2 * model.config.n_layer + 1;
    std::string where = "ln_f or the unembedding";
    for (int stage = 0; stage < stages && where == "ln_f or the unembedding"; ++stage) {
      const float* x = full.residual_at(0, stage, 0);
      if (std::all_of(x, x + size_t(full.time) * full.n_embd, [](float v) { return std::isfinite(v); })) continue;
      where = stage == 0 ? "the embeddings"
                         : "blocks." + std::to_string((stage - 1) / 2) + (stage % 2 == 1 ? ".attn" : ".mlp");
    }
    std::string message = error.what();
    message.pop_back();  // the newline
    fail_at(Span{}, message.substr(std::string("error: ").size()) + "; the first value that is not finite is in " +
                        where);
  }
}

PositionOutputs run_positions(Backend& backend, const Model& model, const std::vector<int>& tokens) {
  const std::vector<int> sequence = with_bos(model, tokens);
  ForwardResult result = backend.forward({sequence}, output_forward_options(model));
  return read_outputs_locating(backend, model, result, 0, sequence);
}

std::string format_reading(float reading, const std::vector<std::string>& exact_values) {
  std::vector<std::pair<double, std::string>> values;
  for (const std::string& text : exact_values) {
    double number = 0;
    if (parse_number(text, number)) values.emplace_back(number, text);
  }
  std::sort(values.begin(), values.end());
  return reading_text(reading, values);
}

bool output_matches(const Model& model, const std::string& produced, const std::string& expected) {
  if (!has_numerical_output(model)) return produced == expected;
  return numbers_match(produced, expected);
}

bool numbers_match(const std::string& produced, const std::string& expected) {
  double got = 0, want = 0;
  if (!parse_number(produced, got) || !parse_number(expected, want)) return produced == expected;
  return within_tolerance(got, want);
}

std::string format_outputs(const std::vector<std::string>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ",";
    s += values[i];
  }
  return s + "]";
}

}  // namespace raspc
