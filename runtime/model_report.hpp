// How a model's config and its compile report read, in one place: `raspc compile`'s summary and
// --json, `raspc inspect`, `raspc view` and Python all take them from here.
//
// The config's JSON is config_to_json's (safetensors.hpp: what a model file stores). The report's
// JSON is one flat object (compiler/compile.hpp's report_json writes it from the compiler's
// report; docs/json.md lists its keys); a model file stores the keys stored_report keeps, in
// metadata["compile"], so a reader of a file sees those and no more.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/model.hpp"

namespace raspc {

// "1 layer, 1 head, n_embd 27 (d_head 27), MLP 32, vocabulary 22, positions 17 (BOS included),
// LayerNorm, GELU, bidirectional", from config_to_json's object.
std::string describe_config(const nlohmann::json& config);

// The keys of a report that a model file keeps in metadata["compile"], those of them the report has.
nlohmann::json stored_report(const nlohmann::json& report);

// The verification as lines to show, each a heading and its text: ("verification", "340 inputs
// (every input up to length 4), 0 mismatches, minimum logit margin 40.00"), then ("undefined",
// ...) and ("first mismatch", ...) where the report has them. Nothing where nothing was verified.
// A stored report says less (no sampled lengths, no first mismatch) and its lines say less.
std::vector<std::pair<std::string, std::string>> verification_lines(const nlohmann::json& report);
// Those lines as text, "heading: text\n" each.
std::string describe_verification(const nlohmann::json& report);

}  // namespace raspc
