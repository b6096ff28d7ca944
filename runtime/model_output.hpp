// A model's inputs and outputs as a user sees them: token sequences parsed against the model's own
// vocabulary, and one output value per input position read off the forward's result.
//
// Model::metadata["output"] says how to read the output:
//   {"encoding": "categorical"}           argmax of the logits over metadata["output"]["token_ids"]
//                                         when present, else over every non-BOS token
//   {"encoding": "numerical", "dim": k}   the final residual stream (the last stage, before ln_f)
//                                         at dimension k, printed with up to 6 significant digits
//     "values": ["0", "1/3", "1/2", ...]  (optional) the exact values the output can take, as the
//                                         interpreter displays them. A reading within
//                                         kNumericalOutputTolerance of the nearest one prints as
//                                         that value (1/3, not 0.333336); a reading farther from
//                                         every value (an input the compiler did not verify, a
//                                         model edited since) prints as the raw number, so a wrong
//                                         answer never looks exact. The compiler stores the list
//                                         only when its values are far enough apart that the
//                                         nearest one is the only one within tolerance, so every
//                                         reading the verification accepted prints exactly; files
//                                         without it print raw numbers.
//   absent                                argmax over the whole vocabulary
// When the model has a BOS token its input is [BOS] + tokens and position 0's output is dropped.
#pragma once

#include <string>
#include <vector>

#include "runtime/forward.hpp"
#include "runtime/model.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

// What is wrong with a model's metadata["output"], in one sentence ("" when nothing): an object
// whose "encoding" is "categorical" (optional "token_ids": a non-empty list of ids below
// vocab_size) or "numerical" ("dim": a residual dimension below n_embd; optional "values": a list
// of numbers written as text). The model reader refuses a file whose metadata fails this.
std::string output_metadata_problem(const nlohmann::json& metadata, const ModelConfig& config);

// Whether the model's output is a number read off the residual stream, not a token.
bool has_numerical_output(const Model& model);

// The ids a user may give: input_ids, or every non-BOS token when the model lists none.
std::vector<int> input_vocabulary(const Model& model);

// The token ids of a sequence the user wrote: "hello" (or hello) is one token per character,
// "[3,1,2,4]" or "[a, b]" a list of tokens (quotes around an item are dropped). Every token must be
// in the model's input vocabulary and the sequence must fit beside BOS in n_positions; errors
// point at `text` with a caret, naming it `origin`.
std::vector<int> parse_model_input(const Model& model, const std::string& text, const std::string& origin = "--input");
// The same for the bytes [first, last) of a file holding many inputs (run --inputs), so errors
// point at the file's own line and column; the caller has checked the file's UTF-8 (require_utf8).
std::vector<int> parse_model_input(const Model& model, const std::shared_ptr<const SourceFile>& source, size_t first,
                                   size_t last);

// The lines of a file of inputs (run --inputs), after require_utf8: the byte range [first, last)
// of each, a CR before its newline left out.
std::vector<std::pair<size_t, size_t>> input_lines(const std::shared_ptr<const SourceFile>& file);

// The token ids of a sequence given as a list of token texts (Python's list input): each item is
// one token, taken as it is (no parsing: "a,b" is one token, refused unless the vocabulary holds
// it). Errors name `origin` and the item's position.
std::vector<int> model_input_tokens(const Model& model, const std::vector<std::string>& tokens,
                                    const std::string& origin);

// [BOS] + tokens when the model has a BOS token, else tokens.
std::vector<int> with_bos(const Model& model, const std::vector<int>& tokens);

// The forward options reading the outputs needs (the residual stream for a numerical output).
ForwardOptions output_forward_options(const Model& model);

struct PositionOutputs {
  std::vector<std::string> values;  // one per input position (BOS excluded)
  // Categorical: the logit of the chosen token minus the best other candidate's (infinity with a
  // single candidate). Numerical: NaN (there is no margin to read).
  std::vector<float> margins;
};

// The outputs of sequence b of `result`, which must come from a forward over with_bos(tokens)
// with output_forward_options(model).
// A logit or a numerical reading that is not finite (weights that overflow float32) is a
// NonFiniteOutput, never a printed nan; read_outputs_locating names the first stage where the
// forward stops being finite.
PositionOutputs read_outputs(const Model& model, const ForwardResult& result, int b);
struct NonFiniteOutput : UserError {
  NonFiniteOutput(const std::string& formatted, int position) : UserError(formatted), position(position) {}
  int position;  // the input position (BOS excluded)
};
// read_outputs, and on a NonFiniteOutput a UserError that also names the first stage of the model
// ("the embeddings", "blocks.0.attn", "blocks.0.mlp", ..., "ln_f or the unembedding") holding a value
// that is not finite, found by running `sequence` (b's, BOS included) again with the residual.
PositionOutputs read_outputs_locating(Backend& backend, const Model& model, const ForwardResult& result, int b,
                                      const std::vector<int>& sequence);

// Runs one input sequence (token ids without BOS) and reads its outputs.
PositionOutputs run_positions(Backend& backend, const Model& model, const std::vector<int>& tokens);

// How close a numerical output must be to the exact value: float32 arithmetic and LayerNorm's
// scale (which the compiler's anchor holds within about 1e-4 of nominal while numerical values are
// live) leave compiled numerical outputs this close, relative to max(1, |value|).
constexpr double kNumericalOutputTolerance = 1e-3;

// Whether an output read off the model (read_outputs) is the expected value, given as the
// interpreter displays it: the same text for categorical outputs; for numerical outputs the same
// number within kNumericalOutputTolerance, either written as 3, -1.5, 1/3 or True/False (1 and 0),
// so a raw reading (0.333336) and a snapped one (1/3) both match 1/3.
bool output_matches(const Model& model, const std::string& produced, const std::string& expected);

// A numerical reading as text: the value of `exact_values` (numbers as the interpreter displays
// them) it stands for when within kNumericalOutputTolerance of it, else the raw number (%.6g).
std::string format_reading(float reading, const std::vector<std::string>& exact_values);

// Whether two numbers as the interpreter displays them (3, -1.5, 1/3, True) are equal within
// kNumericalOutputTolerance; texts that are not numbers compare as text.
bool numbers_match(const std::string& produced, const std::string& expected);

// "[1,1,2,2,1]": the values joined by commas, as `raspc eval` prints a sequence.
std::string format_outputs(const std::vector<std::string>& values);

}  // namespace raspc
