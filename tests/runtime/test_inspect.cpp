// Printing models: labelled, aligned matrices.
#include <catch2/catch.hpp>

#include "runtime/inspect.hpp"
#include "support/diagnostics.hpp"
#include "tests/runtime/random_model.hpp"

using namespace raspc;

TEST_CASE("matrices print every value under aligned, labelled columns") {
  const float values[] = {1, -0.5f, 1024, 0, -0.0f, 3.14159274f};
  CHECK(format_matrix("title", {"row a", "b"}, {"x", "long label", "z"}, values, 3) ==
        "title\n"
        "       x  long label        z\n"
        "row a  1        -0.5     1024\n"
        "b      0           0  3.14159\n");
}

TEST_CASE("tensors are labelled by heads, MLP units and residual dimensions") {
  ModelConfig config = make_config(1, 2, 2, 2, 2, 2, true, false);
  Model model = testing::make_random_model(config, 1);
  model.storage.assign(model.storage.size(), 0.0f);
  model.residual_labels = {"one", ""};
  model.metadata["mlp_units"] = nlohmann::json::array({nlohmann::json::array({"gate", ""})});
  CHECK(format_tensor(model, "transformer.h.0.mlp.c_fc.bias") ==
        "transformer.h.0.mlp.c_fc.bias (2)\n"
        "      gate  u1\n"
        "bias     0   0\n");
  CHECK(format_tensor(model, "transformer.h.0.attn.c_attn.weight").rfind(
            "transformer.h.0.attn.c_attn.weight [q] (2,2)  rows: residual, columns: head dimensions\n"
        "     h0.0  h1.0\n"
        "one     0     0\n"
        "d1      0     0\n"
        "\n"
        "transformer.h.0.attn.c_attn.weight [k] (2,2)",
            0) == 0);
  CHECK_THROWS_WITH(format_tensor(model, "wte"),
                    "--tensor:1:1: error: the model has no tensor \"wte\"; its tensors are transformer.wte.weight, "
                    "transformer.wpe.weight, transformer.h.0.attn.c_attn.weight, transformer.h.0.attn.c_attn.bias, "
                    "transformer.h.0.attn.c_proj.weight, transformer.h.0.attn.c_proj.bias, "
                    "transformer.h.0.mlp.c_fc.weight, transformer.h.0.mlp.c_fc.bias, "
                    "transformer.h.0.mlp.c_proj.weight, transformer.h.0.mlp.c_proj.bias\n"
                    "  wte\n"
                    "  ^~~\n");
}

TEST_CASE("the summary names a head by its shown name where the file gives one as text") {
  // A file is the user's to edit: a shown name that is no string falls back to the head's label.
  ModelConfig config = make_config(1, 2, 2, 2, 2, 2, true, false);
  Model model = testing::make_random_model(config, 1);
  model.metadata["heads"] = nlohmann::json::parse(R"([[{"sop": "key#11", "shown": "key", "kind": "aggregate"},
                                                       {"sop": "map#4", "shown": 3, "kind": "aggregate"}]])");
  const nlohmann::json summary = model_summary(model);
  CHECK(summary["layers"][0]["heads"][0]["sop"] == "key");
  CHECK(summary["layers"][0]["heads"][1]["sop"] == "map#4");
}
