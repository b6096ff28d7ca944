// The view's s-op graph draws the circuit (circuit/circuit.hpp): an arrow where the node computing
// an s-op reads another's dimensions in the weights, and each s-op's writer by its hook.
#include <catch2/catch.hpp>

#include "../compiler/compile_helpers.hpp"
#include "runtime/cpu_backend.hpp"
#include "view/html_view.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("view: the s-op graph's arrows are the circuit's edges") {
  const ProgramFile f = load_program("hist");
  CompileOptions o = test_options(parse_vocabulary("1234"), 4, Mode::Bidirectional);
  o.source_text = f.source->text;
  o.verify = false;
  o.layer_norm = false;
  const Model model = compile_program(f.program, o).model;
  CpuBackend backend(model);
  const std::string page = view_page(model, backend, with_bos(model, parse_model_input(model, "1221")), "hist");
  // Without LayerNorm (an MLP writes hist's one-hot; under it the unembedding reads the scratch,
  // compiler/constructions/scratch_output.cpp): tokens -> hist's scratch (the head compares
  // tokens), scratch -> hist (the MLP reads it); no arrow from tokens to hist: the MLP reads no
  // token dimension.
  CHECK(count_of(page, "<path class=\"sop-edge\"") == 2);
  CHECK(page.find("written by blocks.0.attn.hook_z[0]") != std::string::npos);
  CHECK(page.find("written by blocks.0.hook_mlp_out") != std::string::npos);
  // Under LayerNorm the head writes hist itself (its 1/(w+1), which the unembedding reads): one arrow.
  o.vocab = parse_vocabulary(f.header.vocab_text);
  o.layer_norm = true;
  const Model short_model = compile_program(f.program, o).model;
  CpuBackend short_backend(short_model);
  const std::string short_page =
      view_page(short_model, short_backend, with_bos(short_model, parse_model_input(short_model, "abba")), "hist");
  CHECK(count_of(short_page, "<path class=\"sop-edge\"") == 1);
  CHECK(short_page.find("written by blocks.0.attn.hook_z[0]") != std::string::npos);
  CHECK(short_page.find("written by blocks.0.hook_mlp_out") == std::string::npos);
}

TEST_CASE("view: a model of no blocks shows its embedding's stage and says it has no attention") {
  // An embedded map (compiler/constructions/embedded_map.cpp): the embeddings compute the output.
  const Program program = program_from_text("even = indices % 2 == 0;\neven;\n");
  CompileOptions o = test_options(parse_vocabulary("ab"), 4, Mode::Bidirectional);
  o.source_text = "even = indices % 2 == 0;\neven;\n";
  const Model model = compile_program(program, o).model;
  REQUIRE(model.config.n_layer == 0);
  CpuBackend backend(model);
  const std::string page = view_page(model, backend, with_bos(model, parse_model_input(model, "abba")), "even");
  CHECK(page.find("<h3 id=\"hook_embed+hook_pos_embed\">after the embedding <code>hook_embed + hook_pos_embed") !=
        std::string::npos);
  CHECK(page.find("None: this model has no blocks") != std::string::npos);
}
