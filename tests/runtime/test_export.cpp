// The export writers: each format read back by a reader written from the format's specification
// (tests/runtime/export_readers.hpp) gives the model's tensors bit for bit, in that format's
// layout; what a format cannot run is refused with its reason. Loading into the peers themselves
// is the interop label's job (tests/interop).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "runtime/export/export.hpp"
#include "runtime/forward.hpp"
#include "runtime/safetensors.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"
#include "tests/runtime/export_readers.hpp"
#include "tests/runtime/random_model.hpp"
#include "tests/runtime/temp_folder.hpp"

using namespace raspc;
using namespace raspc::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// 2 layers, 2 heads of 4, an MLP of 12 (not 4C), BOS at 0, every weight random and non-zero.
Model sample_model(bool causal = true, bool layer_norm = true, Activation activation = Activation::Gelu,
                   int n_inner = 12) {
  Model m = make_random_model(make_config(2, 2, 8, n_inner, 6, 5, causal, layer_norm, activation), 11, 0.3f, true);
  m.vocab = {"<bos>", "a", "b", "c", "10"};
  m.input_ids = {1, 2, 3};
  m.metadata = {{"mode", causal ? "causal" : "bidirectional"},
                {"program", "hist = selector_width(select(tokens, tokens, ==));\n"},
                {"output", {{"encoding", "categorical"}, {"token_ids", {4, 1}}}}};
  return m;
}

std::string error_of(const Model& model, ExportFormat format, const std::string& path) {
  try {
    export_model(model, format, path);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

json read_json(const std::string& path) { return json::parse(read_file_bytes(path)); }

// A (rows, cols) row-major matrix read back from a (cols, rows) one.
std::vector<float> untransposed(const std::vector<float>& v, size_t rows, size_t cols) {
  return transposed(v.data(), cols, rows);
}

std::vector<float> slice(const float* p, size_t n) { return std::vector<float>(p, p + n); }

}  // namespace

TEST_CASE("export formats are parsed by name, and an unknown one is refused naming the flag") {
  CHECK(parse_export_format("hf") == ExportFormat::HuggingFace);
  CHECK(parse_export_format("tlens") == ExportFormat::TransformerLens);
  CHECK(parse_export_format("gguf") == ExportFormat::Gguf);
  CHECK(parse_export_format("llmc") == ExportFormat::Llmc);
  try {
    parse_export_format("onnx");
    FAIL("onnx accepted");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()) == "--format: error: unknown export format \"onnx\"; the formats are hf, tlens, gguf and llmc\n");
  }
}

TEST_CASE("hf export: raspc's own file as model.safetensors, a config HF loads, a tokenizer and a card") {
  TempFolder dir("raspc-export-test");
  Model model = sample_model(/*causal=*/false);
  export_model(model, ExportFormat::HuggingFace, dir / "hf");
  Model back = load_model(dir / "hf/model.safetensors");
  CHECK(back.storage == model.storage);
  CHECK(back.vocab == model.vocab);

  json config = read_json(dir / "hf/config.json");
  CHECK(config["model_type"] == "gpt2");
  CHECK(config["architectures"] == json{"GPT2LMHeadModel"});
  CHECK(config["n_layer"] == 2);
  CHECK(config["n_head"] == 2);
  CHECK(config["n_embd"] == 8);
  CHECK(config["n_inner"] == 12);
  CHECK(config["n_positions"] == 6);
  CHECK(config["vocab_size"] == 5);
  CHECK(config["activation_function"] == "gelu_new");
  CHECK(config["layer_norm_epsilon"] == 1e-5);
  CHECK(config["tie_word_embeddings"] == true);
  CHECK(config["scale_attn_weights"] == true);
  CHECK(config["resid_pdrop"] == 0.0);
  CHECK(config["attn_pdrop"] == 0.0);
  CHECK(config["embd_pdrop"] == 0.0);
  CHECK(config["bos_token_id"] == 0);
  // A pad id equal to BOS would make generate() mask BOS out.
  CHECK(config["pad_token_id"].is_null());
  CHECK(config["eos_token_id"].is_null());
  CHECK(config["raspc"]["vocab"] == json(model.vocab));
  CHECK(config["raspc"]["output"]["token_ids"] == json{4, 1});
  CHECK(config["raspc"]["residual_labels"].size() == 8);
  CHECK(config["raspc"]["mode"] == "bidirectional");

  json tokenizer = read_json(dir / "hf/tokenizer.json");
  CHECK(tokenizer["model"]["type"] == "WordLevel");
  CHECK(tokenizer["model"]["vocab"] == json{{"<bos>", 0}, {"a", 1}, {"b", 2}, {"c", 3}, {"10", 4}});
  CHECK(tokenizer["post_processor"]["single"][0]["SpecialToken"]["id"] == "<bos>");
  CHECK(tokenizer["added_tokens"][0]["content"] == "<bos>");
  // Every input token is one character, so "abc" splits into characters as well as "a b c" does.
  CHECK(tokenizer["pre_tokenizer"]["type"] == "Sequence");
  CHECK(read_json(dir / "hf/tokenizer_config.json")["tokenizer_class"] == "PreTrainedTokenizerFast");
  CHECK(read_json(dir / "hf/generation_config.json")["bos_token_id"] == 0);

  std::string card = read_file_bytes(dir / "hf/README.md");
  CHECK(card.find("**This model is bidirectional.**") != std::string::npos);
  CHECK(card.find("mask = torch.zeros(1, 1, T, T)") != std::string::npos);
  CHECK(card.find("hist = selector_width(select(tokens, tokens, ==));") != std::string::npos);
}

TEST_CASE("hf export of a causal model needs no mask, and an MLP-less model gets one zero unit") {
  TempFolder dir("raspc-export-test");
  Model model = sample_model(true, true, Activation::Relu, /*n_inner=*/0);
  export_model(model, ExportFormat::HuggingFace, dir / "hf");
  json config = read_json(dir / "hf/config.json");
  CHECK(config["n_inner"] == 1);
  CHECK(config["activation_function"] == "relu");
  CHECK(read_file_bytes(dir / "hf/README.md").find("attention_mask") == std::string::npos);

  Model back = load_model(dir / "hf/model.safetensors");
  REQUIRE(back.config.n_inner == 1);
  for (const LayerWeights& L : back.w.layers) {
    for (int c = 0; c < 8; ++c) CHECK(L.fc_w[c] == 0.0f);
    CHECK(L.fc_b[0] == 0.0f);
    for (int c = 0; c < 8; ++c) CHECK(L.fc_proj_w[c] == 0.0f);
  }
  // The zero unit changes nothing: same logits (exactly: it only adds zeros).
  auto a = make_backend(model)->forward({{0, 1, 2, 3, 1}});
  auto b = make_backend(back)->forward({{0, 1, 2, 3, 1}});
  CHECK(a.logits == b.logits);
}

TEST_CASE("hf export's card reads the file's compile report field by field") {
  // Found by fuzz_export: a "compile" report with inputs_checked but no mismatches (a file edited,
  // or written by another tool) had the card read a missing key through json's const [], which
  // reads freed memory. The counts are said only when both are there.
  TempFolder dir("raspc-export-test");
  Model model = sample_model(true);
  model.metadata["compile"] = {{"inputs_checked", 20}, {"mi3matches", 0}};
  export_model(model, ExportFormat::HuggingFace, dir / "partial");
  CHECK(read_file_bytes(dir / "partial/README.md").find("verified against raspc's reference interpreter.\n") !=
        std::string::npos);
  model.metadata["compile"] = {{"inputs_checked", 20}, {"mismatches", 0}};
  export_model(model, ExportFormat::HuggingFace, dir / "whole");
  CHECK(read_file_bytes(dir / "whole/README.md").find("reference interpreter on 20 inputs (0 mismatches).") !=
        std::string::npos);
}

TEST_CASE("tlens export: weights in TransformerLens's names and per-head shapes, and a config for its loader") {
  TempFolder dir("raspc-export-test");
  Model model = sample_model(false);
  export_model(model, ExportFormat::TransformerLens, dir / "tl");
  SafetensorsFile file = read_safetensors(read_file_bytes(dir / "tl/model.safetensors"));
  const size_t C = 8, NH = 2, dh = 4, I = 12, V = 5;
  CHECK(file.tensors.at("embed.W_E").values == slice(model.w.wte, V * C));
  CHECK(file.tensors.at("pos_embed.W_pos").values == slice(model.w.wpe, 6 * C));
  CHECK(file.tensors.at("unembed.W_U").shape == std::vector<uint64_t>{C, V});
  CHECK(untransposed(file.tensors.at("unembed.W_U").values, V, C) == slice(model.w.wte, V * C));
  CHECK(file.tensors.at("unembed.b_U").values == std::vector<float>(V, 0.0f));
  for (int l = 0; l < 2; ++l) {
    const LayerWeights& L = model.w.layers[size_t(l)];
    const std::string b = "blocks." + std::to_string(l) + ".";
    const char* parts[3] = {"Q", "K", "V"};
    for (size_t part = 0; part < 3; ++part) {
      const Tensor& w = file.tensors.at(b + "attn.W_" + parts[part]);
      const Tensor& bias = file.tensors.at(b + "attn.b_" + parts[part]);
      REQUIRE(w.shape == std::vector<uint64_t>{NH, C, dh});
      REQUIRE(bias.shape == std::vector<uint64_t>{NH, dh});
      for (size_t h = 0; h < NH; ++h)
        for (size_t j = 0; j < dh; ++j) {
          for (size_t r = 0; r < C; ++r)
            CHECK(w.values[(h * C + r) * dh + j] == L.attn_w[r * 3 * C + part * C + h * dh + j]);
          CHECK(bias.values[h * dh + j] == L.attn_b[part * C + h * dh + j]);
        }
    }
    CHECK(file.tensors.at(b + "attn.W_O").shape == std::vector<uint64_t>{NH, dh, C});
    CHECK(file.tensors.at(b + "attn.W_O").values == slice(L.attn_proj_w, C * C));
    CHECK(file.tensors.at(b + "ln1.w").values == slice(L.ln_1_w, C));
    CHECK(file.tensors.at(b + "ln2.b").values == slice(L.ln_2_b, C));
    CHECK(file.tensors.at(b + "mlp.W_in").values == slice(L.fc_w, C * I));
    CHECK(file.tensors.at(b + "mlp.W_out").values == slice(L.fc_proj_w, I * C));
    CHECK(file.tensors.at(b + "mlp.b_out").values == slice(L.fc_proj_b, C));
  }
  CHECK(file.tensors.at("ln_final.w").values == slice(model.w.ln_f_w, C));
  CHECK(file.tensors.size() == 2 + 2 * 16 + 2 + 2);
  CHECK(json::parse(file.metadata["raspc"].get<std::string>())["bos_id"] == 0);

  json config = read_json(dir / "tl/tlens_config.json")["config"];
  CHECK(config["attention_dir"] == "bidirectional");
  CHECK(config["normalization_type"] == "LN");
  CHECK(config["act_fn"] == "gelu_new");
  CHECK(config["attn_only"] == false);
  CHECK(config["d_mlp"] == 12);
  CHECK(config["d_head"] == 4);
  CHECK(config["n_ctx"] == 6);
  CHECK(read_file_bytes(dir / "tl/load_tlens.py").find("def load(") != std::string::npos);
}

TEST_CASE("tlens export takes what the other formats refuse: no LayerNorm, ReLU, no MLP") {
  TempFolder dir("raspc-export-test");
  Model model = sample_model(true, false, Activation::Relu, 0);
  export_model(model, ExportFormat::TransformerLens, dir / "tl");
  SafetensorsFile file = read_safetensors(read_file_bytes(dir / "tl/model.safetensors"));
  CHECK(file.tensors.count("blocks.0.ln1.w") == 0);
  CHECK(file.tensors.count("ln_final.w") == 0);
  CHECK(file.tensors.count("blocks.0.mlp.W_in") == 0);
  json config = read_json(dir / "tl/tlens_config.json")["config"];
  CHECK(config["normalization_type"].is_null());
  CHECK(config["attn_only"] == true);
  CHECK(config["act_fn"] == "relu");
  CHECK(config["attention_dir"] == "causal");
}

TEST_CASE("gguf export: architecture gpt2, llama.cpp's keys, F32 tensors in (out, in) layout") {
  TempFolder dir("raspc-export-test");
  Model model = sample_model(false);
  export_model(model, ExportFormat::Gguf, dir / "m.gguf");
  GgufFile file = read_gguf(read_file_bytes(dir / "m.gguf"));
  CHECK(file.version == 3);
  CHECK(file.kv["general.architecture"] == "gpt2");
  CHECK(file.kv["gpt2.context_length"] == 6);
  CHECK(file.kv["gpt2.embedding_length"] == 8);
  CHECK(file.kv["gpt2.feed_forward_length"] == 12);
  CHECK(file.kv["gpt2.block_count"] == 2);
  CHECK(file.kv["gpt2.attention.head_count"] == 2);
  CHECK(file.kv["gpt2.attention.layer_norm_epsilon"] == Approx(1e-5));
  CHECK(file.kv["gpt2.attention.causal"] == false);
  CHECK(file.kv["tokenizer.ggml.model"] == "none");
  CHECK(file.kv["tokenizer.ggml.tokens"] == json(model.vocab));
  CHECK(file.kv["tokenizer.ggml.bos_token_id"] == 0);
  CHECK(file.kv["tokenizer.ggml.token_type"] == json{3, 1, 1, 1, 1});
  CHECK(json::parse(file.kv["raspc.metadata"].get<std::string>())["output"]["token_ids"] == json{4, 1});

  const size_t C = 8, I = 12, V = 5;
  CHECK(file.tensors.at("token_embd.weight").shape == std::vector<uint64_t>{C, V});
  CHECK(file.tensors.at("token_embd.weight").values == slice(model.w.wte, V * C));
  CHECK(file.tensors.at("output.weight").values == slice(model.w.wte, V * C));
  CHECK(file.tensors.at("position_embd.weight").values == slice(model.w.wpe, 6 * C));
  for (int l = 0; l < 2; ++l) {
    const LayerWeights& L = model.w.layers[size_t(l)];
    const std::string b = "blk." + std::to_string(l) + ".";
    CHECK(file.tensors.at(b + "attn_qkv.weight").shape == std::vector<uint64_t>{C, 3 * C});
    CHECK(untransposed(file.tensors.at(b + "attn_qkv.weight").values, C, 3 * C) == slice(L.attn_w, C * 3 * C));
    CHECK(file.tensors.at(b + "attn_qkv.bias").values == slice(L.attn_b, 3 * C));
    CHECK(untransposed(file.tensors.at(b + "attn_output.weight").values, C, C) == slice(L.attn_proj_w, C * C));
    CHECK(file.tensors.at(b + "ffn_up.weight").shape == std::vector<uint64_t>{C, I});
    CHECK(untransposed(file.tensors.at(b + "ffn_up.weight").values, C, I) == slice(L.fc_w, C * I));
    CHECK(file.tensors.at(b + "ffn_down.weight").shape == std::vector<uint64_t>{I, C});
    CHECK(untransposed(file.tensors.at(b + "ffn_down.weight").values, I, C) == slice(L.fc_proj_w, I * C));
    CHECK(file.tensors.at(b + "attn_norm.weight").values == slice(L.ln_1_w, C));
    CHECK(file.tensors.at(b + "ffn_norm.bias").values == slice(L.ln_2_b, C));
  }
  CHECK(file.tensors.at("output_norm.bias").values == slice(model.w.ln_f_b, C));
  CHECK(file.tensors.size() == 3 + 2 * 12 + 2);
}

TEST_CASE("llmc export: the v3 checkpoint with the vocabulary padded to 128 and the MLP to 4C, and its tokenizer") {
  TempFolder dir("raspc-export-test");
  Model model = sample_model(true);
  export_model(model, ExportFormat::Llmc, dir / "llmc");
  LlmcFile file = read_llmc(read_file_bytes(dir / "llmc/model.bin"));
  CHECK(file.header[0] == 20240326);
  CHECK(file.header[1] == 3);
  CHECK(file.header[2] == 6);    // maxT
  CHECK(file.header[3] == 5);    // V
  CHECK(file.header[4] == 2);    // L
  CHECK(file.header[5] == 2);    // NH
  CHECK(file.header[6] == 8);    // C
  CHECK(file.header[7] == 128);  // Vp
  CHECK(file.trailing_bytes == 0);
  const size_t C = 8, I = 12, V = 5;
  const std::vector<float>& wte = file.tensors.at("wte").values;
  CHECK(std::vector<float>(wte.begin(), wte.begin() + V * C) == slice(model.w.wte, V * C));
  CHECK(std::all_of(wte.begin() + V * C, wte.end(), [](float x) { return x == 0.0f; }));
  for (size_t l = 0; l < 2; ++l) {
    const LayerWeights& L = model.w.layers[l];
    auto layer = [&](const std::string& name, size_t n) {
      const std::vector<float>& v = file.tensors.at(name).values;
      return std::vector<float>(v.begin() + l * n, v.begin() + (l + 1) * n);
    };
    CHECK(layer("ln1w", C) == slice(L.ln_1_w, C));
    CHECK(layer("ln2b", C) == slice(L.ln_2_b, C));
    CHECK(untransposed(layer("qkvw", 3 * C * C), C, 3 * C) == slice(L.attn_w, 3 * C * C));
    CHECK(layer("qkvb", 3 * C) == slice(L.attn_b, 3 * C));
    CHECK(untransposed(layer("attprojw", C * C), C, C) == slice(L.attn_proj_w, C * C));
    // fcw (4C, C): the first I rows are the model's units, the rest zero.
    std::vector<float> fcw = untransposed(layer("fcw", 4 * C * C), C, 4 * C);
    for (size_t r = 0; r < C; ++r)
      for (size_t u = 0; u < 4 * C; ++u) CHECK(fcw[r * 4 * C + u] == (u < I ? L.fc_w[r * I + u] : 0.0f));
    std::vector<float> fcb = layer("fcb", 4 * C);
    for (size_t u = 0; u < 4 * C; ++u) CHECK(fcb[u] == (u < I ? L.fc_b[u] : 0.0f));
    std::vector<float> fcproj = untransposed(layer("fcprojw", C * 4 * C), 4 * C, C);
    for (size_t u = 0; u < 4 * C; ++u)
      for (size_t c = 0; c < C; ++c) CHECK(fcproj[u * C + c] == (u < I ? L.fc_proj_w[u * C + c] : 0.0f));
  }
  CHECK(file.tensors.at("lnfw").values == slice(model.w.ln_f_w, C));

  std::string tokenizer = read_file_bytes(dir / "llmc/tokenizer.bin");
  std::vector<uint32_t> header(256);
  std::memcpy(header.data(), tokenizer.data(), 1024);
  CHECK(header[0] == 20240328);
  CHECK(header[1] == 2);
  CHECK(header[2] == 5);
  CHECK(header[3] == 0);  // BOS as end-of-text
  CHECK(tokenizer.substr(1024) == std::string("\x05<bos>\x01" "a\x01" "b\x01" "c\x02" "10"));
  CHECK(read_json(dir / "llmc/raspc.json")["llmc"]["padded_vocab_size"] == 128);
}

TEST_CASE("each format refuses what its runtime cannot run, with the reason and a format that can") {
  TempFolder dir("raspc-export-test");
  const std::string tlens = "export it with --format tlens, which runs models without LayerNorm exactly\n";
  Model no_ln = sample_model(true, false);
  CHECK(error_of(no_ln, ExportFormat::HuggingFace, dir / "x") ==
        dir / "x" + ": error: cannot export as hf: Hugging Face's GPT2LMHeadModel always applies LayerNorm, so this "
                    "model (made without LayerNorm) would give wrong answers there; " + tlens);
  CHECK(error_of(no_ln, ExportFormat::Gguf, dir / "x") ==
        dir / "x" + ": error: cannot export as gguf: llama.cpp's gpt2 graph always applies LayerNorm, so this model "
                    "(made without LayerNorm) would give wrong answers there; " + tlens);
  CHECK(error_of(no_ln, ExportFormat::Llmc, dir / "x") ==
        dir / "x" + ": error: cannot export as llmc: llm.c's GPT-2 always applies LayerNorm, so this model (made "
                    "without LayerNorm) would give wrong answers there; " + tlens);
  CHECK(error_of(sample_model(true, true, Activation::Relu), ExportFormat::Gguf, dir / "x") ==
        dir / "x" + ": error: cannot export as gguf: llama.cpp's gpt2 graph has only a GELU MLP, so this ReLU model "
                    "would give wrong answers there; export it with --format tlens (or hf), which run ReLU exactly\n");
  CHECK(error_of(sample_model(false), ExportFormat::Llmc, dir / "x") ==
        dir / "x" + ": error: cannot export as llmc: llm.c's GPT-2 always applies a causal mask, so this bidirectional "
                    "model would give wrong answers there; compile with --causal, or export with --format hf, tlens or gguf\n");
  CHECK(error_of(sample_model(true, true, Activation::Relu), ExportFormat::Llmc, dir / "x") ==
        dir / "x" + ": error: cannot export as llmc: llm.c's GPT-2 has only a GELU MLP, so this ReLU model would give "
                    "wrong answers there; export it with --format tlens or hf, which run ReLU exactly\n");
  CHECK(error_of(sample_model(true, true, Activation::Gelu, 40), ExportFormat::Llmc, dir / "x") ==
        dir / "x" + ": error: cannot export as llmc: llm.c's GPT-2 has an MLP of exactly 4 x n_embd = 32 units and "
                    "this model's has 40 (a narrower one is padded with zero units, but a wider one cannot be cut); "
                    "export it with --format hf, tlens or gguf\n");
  // Nothing was written for any refusal.
  CHECK(!fs::exists(dir / "x"));
  CHECK(export_refusal(no_ln, ExportFormat::TransformerLens) == std::nullopt);
}

TEST_CASE("a folder export onto an existing file is refused and leaves the file as it was") {
  TempFolder dir("raspc-export-test");
  write_file_atomically(dir / "model.safetensors", "not a folder");
  CHECK(error_of(sample_model(), ExportFormat::HuggingFace, dir / "model.safetensors") ==
        dir / "model.safetensors" +
            ": error: exists and is a file; this format is written as a folder: name a new or empty folder, or one a "
            "previous --format hf export wrote\n");
  CHECK(read_file_bytes(dir / "model.safetensors") == "not a folder");
  // An empty folder is written into; a missing parent is refused.
  fs::create_directory(dir / "existing");
  export_model(sample_model(), ExportFormat::TransformerLens, dir / "existing/");
  CHECK(fs::exists(dir / "existing/tlens_config.json"));
  CHECK(error_of(sample_model(), ExportFormat::TransformerLens, dir / "missing/tl") ==
        dir / "missing/tl" + ": error: cannot create the folder: its parent " + dir / "missing" + " does not exist\n");
  CHECK(!fs::exists(dir / "missing"));
}

TEST_CASE("a folder export never replaces its input or a user's file, and replaces a previous export whole") {
  TempFolder dir("raspc-export-test");
  // The raspc model itself is out/model.safetensors, the name TransformerLens's export writes too.
  fs::create_directory(dir / "out");
  save_model(sample_model(), dir / "out/model.safetensors");
  const std::string model_bytes = read_file_bytes(dir / "out/model.safetensors");
  try {
    export_model(sample_model(), ExportFormat::TransformerLens, dir / "out", {dir / "out/model.safetensors"});
    FAIL("the export replaced its own input");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()) == dir / "out" + ": error: holds model.safetensors, the input file " + dir /
                                       "out/model.safetensors" + "; the export would replace it: export into another folder\n");
  }
  CHECK(read_file_bytes(dir / "out/model.safetensors") == model_bytes);
  // A user's own file (or another format's) in the folder: refused, untouched.
  fs::create_directory(dir / "mine");
  write_file_atomically(dir / "mine/config.json", "{\"mine\": true}");
  CHECK(error_of(sample_model(), ExportFormat::TransformerLens, dir / "mine") ==
        dir / "mine" + ": error: holds config.json, which a tlens export does not write; the export would mix with it; "
                       "this format is written as a folder: name a new or empty folder, or one a previous --format "
                       "tlens export wrote\n");
  CHECK(read_file_bytes(dir / "mine/config.json") == "{\"mine\": true}");
  // A named pipe under one of the format's names is no previous export's file: refused, said so.
  fs::create_directory(dir / "piped");
  REQUIRE(::mkfifo((dir / "piped/model.bin").c_str(), 0600) == 0);
  CHECK(error_of(sample_model(true), ExportFormat::Llmc, dir / "piped") ==
        dir / "piped" + ": error: holds model.bin, which is a FIFO (named pipe), not a file a previous export wrote; "
                        "this format is written as a folder: name a new or empty folder, or one a previous --format "
                        "llmc export wrote\n");
  fs::remove_all(dir / "piped");
  // A tlens export whose loader Python imported (its __pycache__ beside it) is a previous export.
  export_model(sample_model(), ExportFormat::TransformerLens, dir / "tl");
  fs::create_directory(dir / "tl/__pycache__");
  write_file_atomically(dir / "tl/__pycache__/load_tlens.cpython-311.pyc", "cache");
  export_model(sample_model(), ExportFormat::TransformerLens, dir / "tl");
  CHECK(!fs::exists(dir / "tl/__pycache__"));
  fs::remove_all(dir / "tl");
  // A previous export of the same format is replaced whole, and nothing is left beside it.
  export_model(sample_model(), ExportFormat::HuggingFace, dir / "hf");
  write_file_atomically(dir / "hf/README.md", "old card");
  fs::remove(dir / "hf/tokenizer.json");  // an older, partial export is still one
  export_model(sample_model(), ExportFormat::HuggingFace, dir / "hf");
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir / "hf")) names.push_back(entry.path().filename().string());
  std::vector<std::string> written = export_file_names(ExportFormat::HuggingFace);
  REQUIRE(sample_model().config.causal);  // a causal model's export has no raspc_gpt2.py (bidirectional only)
  std::erase(written, "raspc_gpt2.py");
  std::sort(names.begin(), names.end());
  std::sort(written.begin(), written.end());
  CHECK(names == written);
  CHECK(read_file_bytes(dir / "hf/README.md") != "old card");
  std::vector<std::string> beside;
  for (const auto& entry : fs::directory_iterator(dir.path)) beside.push_back(entry.path().filename().string());
  std::sort(beside.begin(), beside.end());
  CHECK(beside == std::vector<std::string>{"hf", "mine", "out"});
}

TEST_CASE("with_mlp_width pads with zero units that leave the logits unchanged") {
  Model model = sample_model(true, true, Activation::Gelu, 12);
  Model wide = with_mlp_width(model, 32);
  REQUIRE(wide.config.n_inner == 32);
  auto a = make_backend(model)->forward({{0, 3, 1, 2, 2, 1}});
  auto b = make_backend(wide)->forward({{0, 3, 1, 2, 2, 1}});
  REQUIRE(a.logits.size() == b.logits.size());
  // The zero units add exact zeros, but a wider GEMM may sum the real units in another order.
  for (size_t i = 0; i < a.logits.size(); ++i) CHECK(b.logits[i] == Approx(a.logits[i]).epsilon(1e-6).margin(1e-6));
}

TEST_CASE("a model of no blocks stays one in hf and tlens, and gets one block of zeros in gguf and llmc") {
  // What an embedded map compiles to (compiler/constructions/embedded_map.cpp): embeddings and ln_f.
  Model model = make_random_model(make_config(0, 1, 8, 0, 6, 5, true, true, Activation::Gelu), 13, 0.3f, true);
  model.vocab = {"<bos>", "a", "b", "c", "10"};
  model.input_ids = {1, 2, 3};
  model.metadata = {{"mode", "causal"}, {"output", {{"encoding", "categorical"}, {"token_ids", {4, 1}}}}};
  TempFolder dir("raspc-export-test");
  export_model(model, ExportFormat::HuggingFace, dir / "hf");
  CHECK(read_json(dir / "hf/config.json")["n_layer"] == 0);
  CHECK(load_model(dir / "hf/model.safetensors").config.n_layer == 0);
  export_model(model, ExportFormat::TransformerLens, dir / "tlens");
  CHECK(read_json(dir / "tlens/tlens_config.json")["config"]["n_layers"] == 0);

  // The block of zeros changes nothing: the same logits, exactly (its attention averages values of
  // 0 and its MLP writes 0).
  Model one_block = with_mlp_width(model, 1);
  REQUIRE(one_block.config.n_layer == 1);
  REQUIRE(one_block.config.n_inner == 1);
  const LayerWeights& L = one_block.w.layers[0];
  CHECK(std::all_of(L.attn_w, L.attn_w + 8 * 24, [](float v) { return v == 0.0f; }));
  CHECK(std::all_of(L.fc_proj_w, L.fc_proj_w + 8, [](float v) { return v == 0.0f; }));
  const std::vector<int> input = {0, 3, 1, 2, 2, 1};
  CHECK(make_backend(model)->forward({input}).logits == make_backend(one_block)->forward({input}).logits);

  export_model(model, ExportFormat::Gguf, dir / "m.gguf");
  const GgufFile gguf = read_gguf(read_file_bytes(dir / "m.gguf"));
  CHECK(gguf.kv["gpt2.block_count"] == 1);
  CHECK(gguf.tensors.count("blk.0.attn_qkv.weight") == 1);
  export_model(model, ExportFormat::Llmc, dir / "llmc");
  const LlmcFile llmc = read_llmc(read_file_bytes(dir / "llmc/model.bin"));
  CHECK(llmc.header[4] == 1);  // L
  CHECK(llmc.trailing_bytes == 0);
}
