#include "runtime/model_report.hpp"

#include <cstdio>

#include "support/number_text.hpp"

namespace raspc {
namespace {

// The keys metadata["compile"] has held since the first model files: what `inspect` and `view`
// show of a verification, and the compiled shape.
const char* const kStoredKeys[] = {"layers",         "heads",           "n_embd",
                                   "n_inner",        "parameters",      "inputs_checked",
                                   "mismatches",     "undefined_inputs", "verified_len",
                                   "exhaustive",     "numerical_selector_margin",
                                   "numerical_selector_rounding",       "worst_numerical_error",
                                   "min_logit_margin"};

long integer(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<long>() : 0;
}

std::string plural(long n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string describe_config(const nlohmann::json& c) {
  auto count = [&](const char* key) { return c.contains(key) && c[key].is_number() ? c[key].get<long>() : 0L; };
  const long n_layer = count("n_layer"), n_embd = count("n_embd"), n_head = count("n_head");
  std::string out;
  if (n_layer == 0) {  // no heads or MLP to describe: the embeddings compute the output
    out = "0 layers (the embeddings compute the output), n_embd " + std::to_string(n_embd);
  } else {
    out = plural(n_layer, "layer", "layers") + ", " + plural(n_head, "head", "heads") + ", n_embd " +
          std::to_string(n_embd);
    if (n_head > 0) out += " (d_head " + std::to_string(n_embd / n_head) + ")";
    out += ", MLP " + std::to_string(count("n_inner"));
  }
  out += ", vocabulary " + std::to_string(count("vocab_size")) +
         ", positions " + std::to_string(count("n_positions")) + " (BOS included), ";
  out += c.value("layer_norm", true) ? "LayerNorm" : "no LayerNorm";
  out += c.value("activation", std::string("gelu")) == "gelu" ? ", GELU" : ", ReLU";
  out += c.value("causal", false) ? ", causal" : ", bidirectional";
  return out;
}

nlohmann::json stored_report(const nlohmann::json& report) {
  nlohmann::json stored = nlohmann::json::object();
  for (const char* key : kStoredKeys)
    if (report.contains(key)) stored[key] = report[key];
  return stored;
}

std::vector<std::pair<std::string, std::string>> verification_lines(const nlohmann::json& r) {
  std::vector<std::pair<std::string, std::string>> lines;
  if (!r.is_object() || !r.contains("inputs_checked")) return lines;
  const long checked = integer(r, "inputs_checked"), undefined = integer(r, "undefined_inputs");
  if (checked + undefined == 0) return lines;
  const long verified_len = integer(r, "verified_len"), exhaustive_len = integer(r, "exhaustive_len");
  std::string text = with_commas(double(checked)) + " inputs (";
  if (r.value("exhaustive", false)) {
    text += "every input up to length " + std::to_string(verified_len);
  } else if (r.contains("samples_per_length")) {
    if (exhaustive_len > 0) text += "every input up to length " + std::to_string(exhaustive_len) + ", then ";
    text += with_commas(double(integer(r, "samples_per_length"))) + " inputs " +
            (exhaustive_len + 1 == verified_len ? "of length " + std::to_string(verified_len)
                                                : "at each length " + std::to_string(exhaustive_len + 1) + " to " +
                                                      std::to_string(verified_len)) +
            ": each symbol repeated, the rest random";
  } else {
    text += "sampled, up to length " + std::to_string(verified_len);  // a stored report keeps no more
  }
  const long mismatches = integer(r, "mismatches");
  text += "), " + plural(mismatches, "mismatch", "mismatches") + ", ";
  char worst[64] = "";
  if (r.contains("worst_numerical_error") && r["worst_numerical_error"].is_number())
    std::snprintf(worst, sizeof worst, "worst numerical error %.3g", r["worst_numerical_error"].get<double>());
  else if (r.contains("min_logit_margin") && r["min_logit_margin"].is_number())
    std::snprintf(worst, sizeof worst, "minimum logit margin %.2f", r["min_logit_margin"].get<double>());
  lines.emplace_back("verification", text + worst);
  if (undefined > 0 && r.contains("first_undefined") && r["first_undefined"].is_string())
    lines.emplace_back("undefined", "the program itself is undefined on " + plural(undefined, "input", "inputs") +
                                        ", for example " + r["first_undefined"].get<std::string>());
  if (r.contains("first_mismatch") && r["first_mismatch"].is_string() && !r["first_mismatch"].get<std::string>().empty())
    lines.emplace_back("first mismatch", r["first_mismatch"].get<std::string>());
  return lines;
}

std::string describe_verification(const nlohmann::json& report) {
  std::string out;
  for (const auto& [heading, text] : verification_lines(report)) out += heading + ": " + text + "\n";
  return out;
}

}  // namespace raspc
