// Inputs parsed against a model's vocabulary, and outputs read off its forward.
#include <catch2/catch.hpp>

#include <cmath>

#include "runtime/cpu_backend.hpp"
#include "runtime/model_output.hpp"
#include "support/diagnostics.hpp"
#include "tests/runtime/random_model.hpp"

using namespace raspc;

namespace {

// No layers: the final residual stream is the embedding, so every output is known exactly.
// Tokens: BOS, h, e, l, o, 7 (output only). Residual dimension c of token i at position t is
// 10 i + c + 0.5 t.
Model embedding_only_model() {
  Model model;
  model.config.n_layer = 0;
  model.config.n_head = 1;
  model.config.n_embd = 6;
  model.config.n_inner = 0;
  model.config.n_positions = 6;
  model.config.vocab_size = 6;
  model.config.layer_norm = false;
  model.vocab = {"<bos>", "h", "e", "l", "o", "7"};
  model.bos_id = 0;
  model.input_ids = {1, 2, 3, 4};
  model.allocate();
  for (int i = 0; i < 6; ++i)
    for (int c = 0; c < 6; ++c) model.w.wte[i * 6 + c] = 10.0f * i + c;
  for (int t = 0; t < 6; ++t)
    for (int c = 0; c < 6; ++c) model.w.wpe[t * 6 + c] = 0.5f * t;
  return model;
}

std::string error_of(const Model& model, const std::string& text) {
  try {
    parse_model_input(model, text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("inputs are parsed against the model's input vocabulary") {
  Model model = embedding_only_model();
  CHECK(parse_model_input(model, "hello") == std::vector<int>{1, 2, 3, 3, 4});
  CHECK(parse_model_input(model, "\"hole\"") == std::vector<int>{1, 4, 3, 2});
  CHECK(parse_model_input(model, "[h, e,\"l\"]") == std::vector<int>{1, 2, 3});
  CHECK(error_of(model, "help") == "--input:1:4: error: \"p\" is not in the model's input vocabulary (h e l o)\n"
                                   "  help\n"
                                   "     ^\n");
  CHECK(error_of(model, "[h,7]") == "--input:1:4: error: \"7\" is not in the model's input vocabulary (h e l o)\n"
                                    "  [h,7]\n"
                                    "     ^\n");
  CHECK(error_of(model, "hellohe") ==
        "--input:1:1: error: the input has 7 tokens but the model takes at most 5 (its 6 positions minus BOS)\n"
        "  hellohe\n"
        "  ^~~~~~~\n");
  CHECK(error_of(model, "") == "--input:1:1: error: the input is empty; give at least one token\n  \n  ^\n");
  CHECK(error_of(model, "[h,,e]") == "--input:1:4: error: an item of the list input is empty\n"
                                     "  [h,,e]\n"
                                     "     ^\n");
  CHECK(error_of(model, "[h,e") == "--input:1:1: error: a list input must end with ']', as in [3,1,2,4]\n"
                                   "  [h,e\n"
                                   "  ^~~~\n");
}

TEST_CASE("categorical outputs are the argmax over the output tokens, without BOS's position") {
  Model model = embedding_only_model();
  model.metadata["output"] = {{"encoding", "categorical"}};
  CpuBackend backend(model);
  std::vector<int> tokens = parse_model_input(model, "hel");
  ForwardResult result = backend.forward({with_bos(model, tokens)}, output_forward_options(model));
  CHECK(result.lengths[0] == 4);
  // The logit of token j at any position is the dot of two embeddings; token 5 ("7") is largest.
  PositionOutputs out = read_outputs(model, result, 0);
  CHECK(out.values == std::vector<std::string>{"7", "7", "7"});
  const float* logits = result.logits_at(0, 1);
  CHECK(out.margins[0] == logits[5] - logits[4]);

  model.metadata["output"]["token_ids"] = {1, 2};
  out = run_positions(backend, model, tokens);
  CHECK(out.values == std::vector<std::string>{"e", "e", "e"});
  CHECK(format_outputs(out.values) == "[e,e,e]");
  model.metadata["output"]["token_ids"] = {3};
  CHECK(std::isinf(run_positions(backend, model, tokens).margins[0]));
}

TEST_CASE("numerical outputs read one dimension of the final residual stream") {
  Model model = embedding_only_model();
  model.metadata["output"] = {{"encoding", "numerical"}, {"dim", 2}};
  CpuBackend backend(model);
  // Position t (BOS at 0) holding token i: 10 i + 2 + 0.5 t.
  PositionOutputs out = run_positions(backend, model, parse_model_input(model, "oh"));
  CHECK(out.values == std::vector<std::string>{"42.5", "13"});
  CHECK(std::isnan(out.margins[0]));
  model.metadata["output"]["dim"] = 9;
  CHECK_THROWS_WITH(run_positions(backend, model, {1}),
                    "error: the model's output metadata names residual dimension 9, outside 0..5\n");
}

TEST_CASE("without output metadata the output is the argmax over the whole vocabulary") {
  Model model = embedding_only_model();
  model.bos_id = -1;
  model.input_ids.clear();
  CpuBackend backend(model);
  CHECK(format_outputs(run_positions(backend, model, {1, 2}).values) == "[7,7]");
}

TEST_CASE("a numerical output matches its exact value within the stated tolerance, a categorical one only exactly") {
  Model numerical;
  numerical.metadata["output"] = {{"encoding", "numerical"}, {"dim", 0}};
  CHECK(output_matches(numerical, "0.333334", "1/3"));
  CHECK(output_matches(numerical, "2.0005", "2"));       // 2.5e-4 relative: float32 noise
  CHECK(output_matches(numerical, "-1.4999", "-3/2"));
  CHECK_FALSE(output_matches(numerical, "0.34", "1/3"));  // 2% off: a wrong value
  CHECK_FALSE(output_matches(numerical, "2.01", "2"));
  CHECK_FALSE(output_matches(numerical, "abc", "2"));
  Model categorical;
  categorical.metadata["output"] = {{"encoding", "categorical"}};
  CHECK(output_matches(categorical, "2", "2"));
  CHECK_FALSE(output_matches(categorical, "2.0005", "2"));
}

TEST_CASE("a numerical output with listed values prints the value a reading is within tolerance of") {
  Model model = embedding_only_model();
  CpuBackend backend(model);
  const std::vector<int> tokens = parse_model_input(model, "oh");  // readings 42.5 and 13, as above
  // 13 is 0.01 from 12.99, inside its tolerance of 0.01299: the exact value is printed.
  model.metadata["output"] = {{"encoding", "numerical"}, {"dim", 2}, {"values", {"85/2", "1299/100", "-1/3"}}};
  CHECK(run_positions(backend, model, tokens).values == std::vector<std::string>{"85/2", "1299/100"});
  // 42.5 is 0.1 from 42.6, outside its tolerance of 0.0426: a reading the compiler did not prove
  // prints as the raw number, never as the nearest value.
  model.metadata["output"]["values"] = {"13", "213/5"};
  CHECK(run_positions(backend, model, tokens).values == std::vector<std::string>{"42.5", "13"});
  model.metadata["output"]["values"] = {"0", "1"};
  CHECK(run_positions(backend, model, tokens).values == std::vector<std::string>{"42.5", "13"});
  // Readings below the least value and above the greatest are compared with it.
  model.metadata["output"]["values"] = {"85/2"};
  CHECK(run_positions(backend, model, tokens).values == std::vector<std::string>{"85/2", "13"});
  model.metadata["output"]["values"] = {"13"};
  CHECK(run_positions(backend, model, tokens).values == std::vector<std::string>{"42.5", "13"});
  // An empty list and files written before the list existed read raw numbers.
  model.metadata["output"]["values"] = nlohmann::json::array();
  CHECK(run_positions(backend, model, tokens).values == std::vector<std::string>{"42.5", "13"});
  model.metadata["output"].erase("values");
  CHECK(run_positions(backend, model, tokens).values == std::vector<std::string>{"42.5", "13"});
  model.metadata["output"]["values"] = {"13", "x"};
  CHECK_THROWS_WITH(run_positions(backend, model, tokens),
                    "error: the model's output metadata lists value \"x\", which is not a number\n");
  model.metadata["output"]["values"] = "13";
  CHECK_THROWS_WITH(run_positions(backend, model, tokens),
                    "error: the model's output metadata has values \"13\", not a list\n");
}

TEST_CASE("output_matches takes a snapped numerical output as well as a raw one") {
  Model numerical;
  numerical.metadata["output"] = {{"encoding", "numerical"}, {"dim", 0}, {"values", {"0", "1/3", "1"}}};
  CHECK(output_matches(numerical, "1/3", "1/3"));
  CHECK(output_matches(numerical, "0.333336", "1/3"));
  CHECK(output_matches(numerical, "-1/2", "-0.5"));
  CHECK(output_matches(numerical, "1", "True"));
  CHECK(output_matches(numerical, "False", "0"));
  CHECK_FALSE(output_matches(numerical, "1/3", "1/2"));
  CHECK_FALSE(output_matches(numerical, "1/0", "1/3"));
}

TEST_CASE("outputs that are not finite are an error naming the first stage that overflows, never nan") {
  // A random model with every weight scaled towards float32's limit: the first attention overflows.
  Model model = testing::make_random_model(make_config(2, 1, 4, 8, 5, 4, true, false, Activation::Relu), 3);
  model.vocab = {"<bos>", "a", "b", "c"};
  model.bos_id = 0;
  model.input_ids = {1, 2, 3};
  model.metadata["output"] = {{"encoding", "categorical"}, {"token_ids", {1, 2, 3}}};
  for (float& w : model.storage) w *= 3e37f;
  CpuBackend backend(model);
  try {
    run_positions(backend, model, parse_model_input(model, "abc"));
    FAIL("a model whose logits are inf printed outputs");
  } catch (const UserError& error) {
    CHECK(std::string(error.what()) ==
          "error: the model's output at position 0 is not a finite number (inf or NaN): its weights overflow float32; "
          "the first value that is not finite is in blocks.0.attn\n");
  }
  // A numerical output reads the stream itself.
  model.metadata["output"] = {{"encoding", "numerical"}, {"dim", 1}};
  CHECK_THROWS_WITH(run_positions(backend, model, parse_model_input(model, "ab")),
                    Catch::Contains("is not a finite number (inf or NaN)"));
}

TEST_CASE("a list of token texts is taken item by item, never parsed") {
  Model model = embedding_only_model();
  CHECK(model_input_tokens(model, {"h", "e", "l"}, "tokens") == std::vector<int>{1, 2, 3});
  CHECK_THROWS_WITH(model_input_tokens(model, {"h", "e,l"}, "tokens"),
                    "tokens: error: item 1 (\"e,l\") is not in the model's input vocabulary (h e l o)\n");
  CHECK_THROWS_WITH(model_input_tokens(model, {}, "tokens"), "tokens: error: the input is empty; give at least one token\n");
  CHECK_THROWS_WITH(model_input_tokens(model, std::vector<std::string>(6, "h"), "tokens"),
                    "tokens: error: the input has 6 tokens but the model takes at most 5 (its 6 positions minus BOS)\n");
}
