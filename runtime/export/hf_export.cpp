// The Hugging Face transformers folder: GPT2LMHeadModel.from_pretrained(folder) and
// AutoTokenizer.from_pretrained(folder) load it with no missing or unexpected keys.
//
// raspc's own file is already an HF checkpoint (HF names, Conv1D [in, out], "format": "pt"), so
// model.safetensors is that file, raspc's metadata included. What HF cannot be told by a config:
// that a model has no LayerNorm (refused in export.cpp) and that a model is bidirectional (its
// default mask is causal: the export ships raspc_gpt2.py, GPT2LMHeadModel with the mask defaulted
// to none, which config.json's auto_map names, and the model card gives the all-zero 4-D mask for
// GPT2LMHeadModel itself). An MLP
// of 0 units crashes HF's forward, so such a model gets one zero unit.
#include <string>

#include "runtime/export/export.hpp"
#include "runtime/model_output.hpp"
#include "runtime/safetensors.hpp"
#include "support/atomic_file.hpp"

namespace raspc {

extern const char* const kBidirectionalGpt2Source;  // runtime/export/raspc_gpt2.py, compiled in

namespace {

using nlohmann::json;

json hf_config(const Model& model) {
  const ModelConfig& c = model.config;
  json bos = model.bos_id >= 0 ? json(model.bos_id) : json(nullptr);
  json config{
      {"architectures", {"GPT2LMHeadModel"}},
      {"model_type", "gpt2"},
      {"vocab_size", c.vocab_size},
      {"n_positions", c.n_positions},
      {"n_ctx", c.n_positions},
      {"n_embd", c.n_embd},
      {"n_layer", c.n_layer},
      {"n_head", c.n_head},
      {"n_inner", c.n_inner},  // explicit: null would mean 4 x n_embd
      {"activation_function", c.activation == Activation::Gelu ? "gelu_new" : "relu"},  // gelu_new: tanh GELU
      {"resid_pdrop", 0.0},
      {"embd_pdrop", 0.0},
      {"attn_pdrop", 0.0},
      {"summary_first_dropout", 0.0},
      {"layer_norm_epsilon", 1e-5},
      {"initializer_range", 0.02},
      {"scale_attn_weights", true},
      {"scale_attn_by_inverse_layer_idx", false},
      {"reorder_and_upcast_attn", false},
      {"tie_word_embeddings", true},  // logits are ln_f(x) . wte^T
      {"use_cache", true},
      {"bos_token_id", bos},
      // No pad or end token: generate() masks out every input position holding the pad id, and
      // would mask BOS, which every head falls back on.
      {"eos_token_id", nullptr},
      {"pad_token_id", nullptr},
      {"dtype", "float32"},
      {"raspc", export_metadata(model)},
  };
  // transformers' GPT-2 masks causally unless given a 4-D mask: a bidirectional model is loaded
  // as raspc_gpt2.py's class, which defaults it (AutoModelForCausalLM, trust_remote_code=True).
  if (!c.causal) config["auto_map"] = {{"AutoModelForCausalLM", "raspc_gpt2.RaspcBidirectionalGPT2"}};
  return config;
}

json hf_generation_config(const Model& model) {
  json bos = model.bos_id >= 0 ? json(model.bos_id) : json(nullptr);
  return {{"bos_token_id", bos}, {"do_sample", false}};
}

std::string model_card(const Model& model) {
  const ModelConfig& c = model.config;
  const json meta = export_metadata(model);
  const bool numerical = meta["output"].value("encoding", "") == "numerical";
  const bool char_inputs = single_character_inputs(model);
  std::string example;
  for (int id : input_vocabulary(model)) {
    if (example.size() > 6) break;
    if (!example.empty() && !char_inputs) example += " ";
    example += model.vocab[size_t(id)];
  }
  std::string card = "---\nlibrary_name: transformers\ntags:\n- raspc\n- rasp\n- compiled-transformer\n---\n\n";
  card += "# A GPT-2 compiled by raspc\n\n";
  card += "This is an ordinary GPT-2 (`GPT2LMHeadModel`) whose weights were compiled from a RASP program by raspc and "
          "verified against raspc's reference interpreter";
  // The file's own metadata: a "compile" object may lack a field (json's const [] on a missing key
  // reads freed memory), so each is looked up.
  const json compile = meta.value("compile", json::object());
  if (compile.is_object() && compile.contains("inputs_checked") && compile.contains("mismatches"))
    card += " on " + compile["inputs_checked"].dump() + " inputs (" + compile["mismatches"].dump() + " mismatches)";
  else if (meta.contains("trainer"))
    card = "# A GPT-2 trained by raspc\n\nThis GPT-2 was trained by raspc's trainer on labels from a RASP program";
  card += ".\n\n";
  auto count = [](int n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  card += "- shape: " + count(c.n_layer, "layer") + ", " + count(c.n_head, "head") + ", n_embd " +
          std::to_string(c.n_embd) + ", MLP " + std::to_string(c.n_inner) + ", vocabulary " +
          std::to_string(c.vocab_size) + ", " + std::to_string(c.n_positions) + " positions (BOS included), " +
          (c.activation == Activation::Gelu ? "GELU" : "ReLU") + "\n";
  card += std::string("- mode: ") + (c.causal ? "causal: the output at each position depends only on the tokens up to it"
                                              : "**bidirectional**: every position attends to every position") + "\n";
  std::string vocab_list;
  for (const std::string& t : model.vocab) vocab_list += (vocab_list.empty() ? "`" : ", `") + t + "`";
  card += "- vocabulary: " + vocab_list + "\n\n";
  if (meta.contains("program"))
    card += "## The program\n\n```\n" + meta["program"].get<std::string>() + "```\n\n";
  card += "## Reading the output\n\n" + describe_output(model) + "\n\n";
  card += "`config.json`'s `raspc` entry (and `model.safetensors`'s metadata) carries the vocabulary, the BOS id, the "
          "output encoding and token ids, and a label for every residual dimension.\n\n";
  if (!c.causal)
    card += "**This model is bidirectional.** `GPT2LMHeadModel` applies a causal mask by default, which gives "
            "wrong answers here. Either load it as `AutoModelForCausalLM.from_pretrained(\"PATH\", "
            "trust_remote_code=True)`: `raspc_gpt2.py` in this folder is `GPT2LMHeadModel` with no mask as its default "
            "(every position sees every position; a 2-D padding mask still masks padding). Or pass an explicit "
            "all-zero 4-D attention mask of shape `(batch, 1, T, T)` (an additive mask: 0 means attend):\n\n";
  card += "```python\nimport torch\nfrom transformers import AutoTokenizer, GPT2LMHeadModel\n\n";
  card += "model = GPT2LMHeadModel.from_pretrained(\"PATH\")\ntokenizer = AutoTokenizer.from_pretrained(\"PATH\")\n";
  card += "ids = tokenizer(\"" + example + "\", return_tensors=\"pt\").input_ids  # BOS prepended\n";
  std::string call = "model(ids";
  if (!c.causal) {
    card += "T = ids.shape[1]\nmask = torch.zeros(1, 1, T, T)  # bidirectional: every position sees every position\n";
    call += ", attention_mask=mask";
  }
  if (numerical) {
    card += "captured = {}\nmodel.transformer.ln_f.register_forward_pre_hook(lambda m, a: captured.update(x=a[0]))\n";
    card += call + ")\ndim = model.config.raspc[\"output\"][\"dim\"]\n";
    card += "print([round(float(v), 4) for v in captured[\"x\"][0, 1:, dim]])\n```\n";
  } else {
    card += "logits = " + call + ").logits\n";
    if (meta["output"].contains("token_ids")) {
      card += "allowed = torch.tensor(model.config.raspc[\"output\"][\"token_ids\"])\n";
      card += "best = allowed[logits[0, 1:, allowed].argmax(-1)]\n";
    } else {
      card += "best = logits[0, 1:].argmax(-1)\n";
    }
    card += "print(tokenizer.convert_ids_to_tokens(best.tolist()))\n```\n";
  }
  card += "\nMade with raspc (`raspc export MODEL --format hf -o PATH`).\n";
  return card;
}

}  // namespace

void write_hf_export(const Model& input, const std::string& folder) {
  // transformers' GPT-2 takes n_layer 0 (a model of no blocks stays one) but no block without an MLP.
  const Model model = input.config.n_inner == 0 && input.config.n_layer > 0 ? with_mlp_width(input, 1) : input;
  write_file_atomically(join_path(folder, "model.safetensors"), serialize_model(model));
  write_file_atomically(join_path(folder, "config.json"), hf_config(model).dump(2) + "\n");
  write_file_atomically(join_path(folder, "generation_config.json"), hf_generation_config(model).dump(2) + "\n");
  write_file_atomically(join_path(folder, "tokenizer.json"), tokenizer_json(model).dump(2) + "\n");
  write_file_atomically(join_path(folder, "tokenizer_config.json"), tokenizer_config_json(model).dump(2) + "\n");
  write_file_atomically(join_path(folder, "README.md"), model_card(model));
  // A bidirectional model ships the class that defaults its mask (config.json's auto_map names it).
  if (!model.config.causal) write_file_atomically(join_path(folder, "raspc_gpt2.py"), kBidirectionalGpt2Source);
}

}  // namespace raspc
