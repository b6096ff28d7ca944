// Decoding the residual stream through the s-op placement a compiled model carries.
#include <catch2/catch.hpp>

#include "runtime/residual_trace.hpp"

using namespace raspc;

namespace {

// A model of no layers whose residual (3 dims) holds a categorical s-op over dims 0-1 and a
// numerical one at dim 2, and a forward result for 3 positions (BOS first).
struct Fixture {
  Model model;
  ForwardResult result;
  Fixture() {
    model.config = make_config(0, 1, 3, 0, 4, 3);
    model.vocab = {"<bos>", "a", "b"};
    model.bos_id = 0;
    model.metadata["sops"] = nlohmann::json::parse(R"([
      {"name": "x", "kind": "map", "encoding": "categorical", "dims": [0, 1], "values": ["a", "b"], "stage": 0},
      {"name": "frac", "kind": "aggregate", "encoding": "numerical", "dims": [2], "values": ["0", "1/3", "1/2"],
       "stage": 0}])");
    result.batch = 1, result.time = 3, result.n_embd = 3, result.n_layer = 0;
    result.lengths = {3};
    result.residual = {0, 0, 0,  0.1f, 0.0f, 0.333334f,  0.02f, 0.9f, 0.25f};
  }
};

}  // namespace

TEST_CASE("the residual decodes to each s-op's value, numbers snapped to the values they stand for") {
  Fixture f;
  ResidualTrace trace = decode_residual(f.model, f.result, 0, {0, 1, 2});
  REQUIRE(trace.placement.sops.size() == 2);
  CHECK(trace.decoded[0][0] == std::vector<std::string>{"?", "a", "b"});
  // 0.25 is within no tolerance of a listed value: it prints as the raw number.
  CHECK(trace.decoded[0][1] == std::vector<std::string>{"0", "1/3", "0.25"});
  CHECK(format_trace(trace) ==
        "after the embedding (hook_embed + hook_pos_embed):\n"
        "position  0    1\n"
        "x         a    b\n"
        "frac      1/3  0.25\n");
}

TEST_CASE("a decoded value that differs from the interpreter's is marked") {
  Fixture f;
  ResidualTrace trace = decode_residual(f.model, f.result, 0, {0, 1, 2});
  trace.expected = {{"a", "a"}, {"1/3", "1/2"}};
  CHECK(trace.mismatch(0, 0, 2));
  CHECK_FALSE(trace.mismatch(0, 0, 1));
  CHECK(trace.any_mismatch());
  CHECK(format_trace(trace) ==
        "after the embedding (hook_embed + hook_pos_embed):\n"
        "position  0    1\n"
        "x         a    b!=a\n"
        "frac      1/3  0.25!=1/2\n");
}

TEST_CASE("stages are named by their TransformerLens hooks, 0-based") {
  CHECK(stage_names(2) == std::vector<std::string>{"blocks.0.hook_resid_pre", "blocks.0.hook_resid_mid",
                                                   "blocks.0.hook_resid_post", "blocks.1.hook_resid_mid",
                                                   "blocks.1.hook_resid_post"});
  // A model of no blocks: TransformerLens has no hook_resid_pre there, only the embedding's two terms.
  CHECK(stage_names(0) == std::vector<std::string>{"hook_embed + hook_pos_embed"});
  CHECK(stage_description(0) == "the embedding");
  CHECK(stage_description(3) == "blocks.1.attn");
  CHECK(stage_description(4) == "blocks.1.mlp");
}

TEST_CASE("malformed s-op metadata is refused with the reason") {
  Fixture f;
  f.model.metadata["sops"][0]["dims"] = {0, 7};
  CHECK_THROWS_WITH(read_placement(f.model),
                    "error: the model's s-op metadata gives s-op \"x\" dimension 7, outside 0..2; recompile the model "
                    "to rewrite it\n");
  f.model.metadata["sops"][0]["dims"] = {0, 1};
  f.model.metadata["sops"][1]["stage"] = 3;
  CHECK_THROWS_WITH(read_placement(f.model),
                    "error: the model's s-op metadata needs \"stage\" to be an integer from 0 to 0, not 3; recompile "
                    "the model to rewrite it\n");
  // An output read from the logits needs a token for each of its values (a file that lists none
  // is refused, not read past its end).
  f.model.metadata["sops"][1]["stage"] = 0;
  f.model.metadata["sops"][0]["logits"] = true;
  CHECK_THROWS_WITH(read_placement(f.model),
                    "error: the model's s-op metadata reads s-op \"x\" from the logits, but \"output\" has no "
                    "\"token_ids\" for its 2 values; recompile the model to rewrite it\n");
  f.model.metadata["output"] = {{"encoding", "categorical"}, {"token_ids", {1, 5}}};
  CHECK_THROWS_WITH(read_placement(f.model),
                    "error: the model's s-op metadata gives s-op \"x\" output token 5, outside 0..2; recompile the "
                    "model to rewrite it\n");
  f.model.metadata["sops"][0]["values"] = nlohmann::json::array();
  f.model.metadata["output"]["token_ids"] = nlohmann::json::array();
  CHECK_THROWS_WITH(read_placement(f.model),
                    "error: the model's s-op metadata reads s-op \"x\" from the logits, but \"output\" has no "
                    "\"token_ids\" for its 0 values; recompile the model to rewrite it\n");
}

TEST_CASE("a number read through a scale and an offset decodes to the value it stands for") {
  // A width held as a number group (compiler/constructions/number_output.cpp): value = offset +
  // scale * x at the first dimension, u = (w - 31) / 31 at max length 63.
  Fixture f;
  f.model.metadata["sops"][1] = nlohmann::json::parse(
      R"({"name": "hist", "kind": "selector_width", "encoding": "numerical", "dims": [2, 0], "values": ["1", "2", "40"],
          "stage": 0, "scale": 31.0, "offset": 31.0})");
  f.result.residual[5] = float((2.0 - 31.0) / 31.0);
  f.result.residual[8] = float((40.0 - 31.0) / 31.0);
  ResidualTrace trace = decode_residual(f.model, f.result, 0, {0, 1, 2});
  CHECK(trace.decoded[0][1] == std::vector<std::string>{"31", "2", "40"});
  f.model.metadata["sops"][1]["scale"] = "31";
  CHECK_THROWS_WITH(read_placement(f.model),
                    "error: the model's s-op metadata gives s-op \"hist\" a scale that is not a finite number: \"31\"; "
                    "recompile the model to rewrite it\n");
}
