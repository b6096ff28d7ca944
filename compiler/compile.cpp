// What compile.hpp promises beside the pipeline (pipeline.cpp): the bounds of a compile's options,
// and the report as JSON.
#include "compiler/compile.hpp"

#include <algorithm>
#include <thread>

#include "runtime/flops.hpp"
#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"
#include "support/edit_distance.hpp"

namespace raspc {

std::string mostly_undefined_warning(const CompileReport& report) {
  const long undefined = report.undefined_inputs, total = report.inputs_checked + report.undefined_inputs;
  if (total <= 0 || 2 * undefined <= total) return "";
  return "THE PROGRAM IS UNDEFINED ON " + std::to_string(undefined) + " OF THE " + std::to_string(total) +
         " INPUTS CHECKED (" + std::to_string(100 * undefined / total) +
         "%): the interpreter fails on them (the `undefined:` line names one, and the operation that fails), so the "
         "model was verified on the other " +
         std::to_string(total - undefined) + " only";
}

std::string causal_header_warning(std::optional<bool> header_causal, Mode mode) {
  if (mode != Mode::Causal || header_causal != false) return "";
  return "the header says `causal: no`, but the program is compiled causally: a selector then sees only earlier "
         "keys, so the program computes something else than its header describes";
}

nlohmann::json report_json(const CompileReport& r) {
  const auto text = [](const std::string& t) { return t.empty() ? nlohmann::json(nullptr) : nlohmann::json(t); };
  nlohmann::json j;
  j["config"] = config_to_json(r.config);
  j["layers"] = r.layers;
  j["heads"] = r.heads;
  j["n_embd"] = r.n_embd;
  j["n_inner"] = r.n_inner;
  j["parameters"] = r.parameters;
  j["flops_per_token"] = flops_per_token(r.config, r.config.n_positions);
  j["numerical_output"] = r.numerical_output;
  j["verified"] = r.verified;
  j["inputs_checked"] = r.inputs_checked;
  j["mismatches"] = r.mismatches;
  j["undefined_inputs"] = r.undefined_inputs;
  j["verified_len"] = r.verified_len;
  j["exhaustive"] = r.exhaustive;
  j["exhaustive_len"] = r.exhaustive_len;
  j["samples_per_length"] = r.samples_per_length;
  j["checked_by_length"] = r.checked_by_length;
  if (r.numerical_selector_margin > 0) {
    j["numerical_selector_margin"] = r.numerical_selector_margin;
    j["numerical_selector_rounding"] = r.numerical_selector_rounding;
  }
  // One of the two, as the output is numerical or categorical.
  if (r.numerical_output) j["worst_numerical_error"] = r.worst_numerical_error;
  else j["min_logit_margin"] = r.min_logit_margin;
  j["first_mismatch"] = text(r.first_mismatch);
  j["first_departure"] = text(r.first_departure);
  j["first_undefined"] = text(r.first_undefined);
  j["estimated_verify_inputs"] = r.estimated_verify_inputs;
  j["estimated_verify_seconds"] = r.estimated_verify_seconds;
  j["verify_threads"] = r.verify_threads;
  j["compile_ms"] = r.compile_ms;
  j["verify_ms"] = r.verify_ms;
  return j;
}

void check_pass_name(const std::string& name, const std::string& option) {
  const std::vector<std::string>& names = compiler_pass_names();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  std::string list;
  for (const std::string& pass : names) list += (list.empty() ? "" : ", ") + pass;
  const std::string nearest = closest_name(name, names);
  fail_file(option, "unknown pass \"" + name + "\"; the passes, in order, are " + list +
                        (nearest.empty() ? "" : "; did you mean `" + nearest + "`?"));
}

unsigned verification_threads(const CompileOptions& options) {
  if (options.device != Device::Cpu) return 1;
  return options.threads > 0 ? unsigned(options.threads) : std::max(1u, std::thread::hardware_concurrency());
}

void check_compile_limits(int max_len, int verify_len, long samples, const OptionNames& names) {
  if (max_len < 1 || max_len > kMaxCompileLength)
    fail_file(names.max_len, "must be between 1 and " + std::to_string(kMaxCompileLength) + ", not " + std::to_string(max_len));
  if (verify_len < 0) fail_file(names.verify_len, "must be at least 1");
  if (verify_len > max_len)
    fail_file(names.verify_len, "is " + std::to_string(verify_len) + ", above " + names.max_len + " " +
                                    std::to_string(max_len) + ": the model takes no longer inputs to verify");
  if (samples < 0 || samples > kMaxSamples)
    fail_file(names.samples, "must be from 0 to " + std::to_string(kMaxSamples) + ", not " + std::to_string(samples));
}

}  // namespace raspc
