// The lower pass: every head and MLP as dense matrices over the residual dimensions, block by
// block, with the embeddings and the LayerNorm gains.
//
// The BOS position is handled by computation, not by convention: BOS attends only to itself, so
// its residual stream is the same for every input and is simulated here, block by block, in
// double precision. Each head then gets two terms that pin down what BOS contributes (its score
// as a key, its value) exactly, whatever the earlier blocks wrote at BOS.
#include <algorithm>
#include <cmath>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {

bool prints_as_symbol(const Value& v, const CompileOptions& options) {
  const std::string text = to_display(v);
  for (const Value& symbol : options.vocab)
    if (to_display(symbol) == text) return true;
  return false;
}

bool some_value_prints_as_symbol(const std::vector<Value>& values, const CompileOptions& options) {
  return std::any_of(values.begin(), values.end(), [&](const Value& v) { return prints_as_symbol(v, options); });
}

void set_paired_lnf_gains(const LowerContext& ctx, const std::vector<int>& plus, const std::vector<int>& minus,
                          double gain, Lowered& out) {
  out.lnf_gains.assign(size_t(ctx.width), 0.0);
  for (int dim : plus) out.lnf_gains[size_t(dim)] = gain;
  for (int dim : minus) out.lnf_gains[size_t(dim)] = -gain;
}

bool LowerContext::is_output_token(const Value& v) const {
  return info(program.output).encoding == Encoding::Categorical && prints_as_symbol(v, options);
}

CategoricalView LowerContext::categorical_view(NodeId id) const {
  const Node& node = program.node(id);
  CategoricalView view;
  view.values = info(id).values;
  if (node.kind == NodeKind::Constant) {
    view.values = {node.constant};
    view.read = {unit(allocation.one)};
    return view;
  }
  if (node.kind == NodeKind::Tokens) {
    const std::vector<int>& dims = allocation.tokens.at(id);
    for (int d : dims) view.read.push_back(unit(d, 1.0 / kTokenAmplitude));
    return view;
  }
  auto onehot = allocation.onehot.find(id);
  if (onehot != allocation.onehot.end()) {
    for (size_t i = 0; i < view.values.size(); ++i) {
      Functional f = unit(onehot->second[i]);
      // The output's dimensions also receive the token embedding's entry for shared symbols.
      if (id == program.output && is_output_token(view.values[i])) {
        const auto& tokens = allocation.tokens;
        for (const auto& [tokens_id, dims] : tokens) {
          const std::vector<Value>& symbols = info(tokens_id).values;
          for (size_t s = 0; s < symbols.size(); ++s)
            if (to_display(symbols[s]) == to_display(view.values[i])) f.push_back({dims[s], -1.0});
        }
      }
      view.read.push_back(std::move(f));
    }
    return view;
  }
  if (node.kind == NodeKind::Elementwise) {
    std::vector<NodeId> support = support_of(program, id, &inference.cut);
    if (support.size() != 1) fail_at(node.span, "internal: an unmaterialised map of several s-ops was read");
    CategoricalView source = categorical_view(support[0]);
    view.read.assign(view.values.size(), {});
    for (size_t u = 0; u < source.values.size(); ++u) {
      Value v;
      if (!evaluate_fused(program, id, support, {source.values[u]}, v)) continue;
      for (size_t i = 0; i < view.values.size(); ++i)
        if (!value_less(view.values[i], v) && !value_less(v, view.values[i]))
          for (const auto& entry : source.read[u]) view.read[i].push_back(entry);
    }
    return view;
  }
  fail_at(node.span, "internal: this s-op has no one-hot in the residual stream");
}

Functional LowerContext::numeric_view(NodeId id) const {
  auto numeric = allocation.numeric.find(id);
  if (numeric != allocation.numeric.end()) return unit(numeric->second);
  CategoricalView view = categorical_view(id);
  Functional f;
  for (size_t i = 0; i < view.values.size(); ++i) {
    const Value& v = view.values[i];
    double number;
    if (v.is_number()) number = v.number.to_double();
    else if (v.is_bool()) number = v.boolean ? 1 : 0;
    else
      fail_at(program.node(id).span, "a mean needs numbers, but this s-op can hold " + to_source(v) +
                                         "; aggregate numbers, or select a single key");
    for (const auto& [dim, w] : view.read[i]) f.push_back({dim, w * number});
  }
  return f;
}

std::vector<double> LowerContext::number_group(double v) const {
  const PositionNumbers& numbers = inference.numbers;
  double u = (v - numbers.centre) / numbers.extent;
  double y = std::sqrt(std::max(0.0, 3.0 - u * u - u * u * u * u));
  return {u, -u, u * u, -u * u, y, -y};
}

Functional LowerContext::number_value(NodeId source) const {
  const PositionNumbers& numbers = inference.numbers;
  const std::vector<int>& dims = allocation.number.at(source);
  // The length group holds the last index, length - 1.
  double offset = numbers.of(source) == NumberRole::LastIndex ? 1.0 : 0.0;
  return {{dims[0], numbers.extent}, {allocation.one, numbers.centre + offset}};
}

Functional LowerContext::centred_square(NodeId source) const {
  const PositionNumbers& numbers = inference.numbers;
  return {{allocation.number.at(source)[2], numbers.extent * numbers.extent}};
}

NodeId LowerContext::indices_number() const {
  for (const auto& [id, dims] : allocation.number)
    if (inference.numbers.of(id) == NumberRole::Indices) return id;
  return -1;
}

Functional LowerContext::affine_value(const AffineForm& form, NodeId length) const {
  Functional f{{allocation.one, double(form.constant)}};
  if (form.indices != 0)
    for (const auto& [dim, w] : number_value(indices_number())) f.push_back({dim, w * double(form.indices)});
  if (form.length != 0)
    for (const auto& [dim, w] : number_value(length)) f.push_back({dim, w * double(form.length)});
  return f;
}

void LowerContext::put_column(Matrix& m, int col, const Functional& f, double scale) const {
  double total = 0;
  for (const auto& [dim, w] : f) {
    // A functional counts `one` as 1; the dimension may hold another constant.
    double weight = dim == allocation.one ? w * scale / allocation.one_value : w * scale;
    m.at(dim, col) += weight;
    total += weight;
  }
  if (allocation.zero >= 0) m.at(allocation.zero, col) -= total;
}

std::vector<double> layer_norm(const std::vector<double>& x, double gain, bool enabled) {
  if (!enabled) return x;
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= double(x.size());
  for (double v : x) var += (v - mean) * (v - mean);
  var /= double(x.size());
  double inv = gain / std::sqrt(var + 1e-5);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) * inv;
  return y;
}

std::vector<double> read_through(const Matrix& m, const std::vector<double>& y) {
  std::vector<double> out(size_t(m.cols), 0.0);
  for (int r = 0; r < m.rows; ++r) {
    if (y[size_t(r)] == 0) continue;
    for (int c = 0; c < m.cols; ++c) out[size_t(c)] += y[size_t(r)] * m.at(r, c);
  }
  return out;
}

double gelu(double z) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * z * (1.0 + std::tanh(k * (z + 0.044715 * z * z * z)));
}

namespace {

// The nominal sum and sum of squares of the residual at a normal position at time t (every
// categorical s-op written by then one-hot, every numerical one 0).
std::pair<double, double> nominal_moments(const LowerContext& ctx, int t) {
  const double one = ctx.allocation.one >= 0 ? ctx.allocation.one_value : 0.0;
  // A token row's entries of kTokenAmplitude: its one-hot and, where it has one, its second (allocate.cpp).
  const double entries = ctx.allocation.token_row_entries;
  double sum = one + entries * kTokenAmplitude, square = one * one + entries * kTokenAmplitude * kTokenAmplitude;
  if (ctx.allocation.anchor >= 0) sum += kAnchor, square += kAnchor * kAnchor;
  if (!ctx.allocation.log_position.empty()) square += 2.0;  // u^2 + u^2 + y^2 + y^2, in the embedding
  if (!ctx.allocation.digit_high.empty()) sum += 2.0, square += 2.0;  // a position's two digits' one-hots
  if (ctx.allocation.scratch_constant >= 0) sum += 1.0, square += 1.0;  // a tied count's constant, in the embedding
  // A number group adds 0 to the sum and 6 to the sum of squares once written.
  for (const auto& [id, dims] : ctx.allocation.number) {
    // indices' in the embedding, length's by its head, a width's (or a map's) by its MLP.
    int written = ctx.program.node(id).kind == NodeKind::Indices ? 0
                  : ctx.inference.numbers.of(id) == NumberRole::LastIndex ? 2 * ctx.schedule.block_of[id] - 1
                                                                         : 2 * ctx.schedule.block_of[id];
    if (written <= t) square += 6.0;
  }
  for (const auto& [id, dims] : ctx.allocation.onehot) {
    const Node& node = ctx.program.node(id);
    int written = node.kind == NodeKind::Indices ? 0
                  : node.kind == NodeKind::Aggregate ? 2 * ctx.schedule.block_of[id] - 1
                                                     : 2 * ctx.schedule.block_of[id];
    if (written <= t) sum += 1, square += 1;
  }
  return {sum, square};
}

double nominal_sigma(const LowerContext& ctx, std::pair<double, double> moments) {
  double c = ctx.width, mean = moments.first / c;
  // The nominal moments assume every token row's two entries; a residual of the numerical output's
  // one dimension has neither, and its variance must not come out negative.
  return std::sqrt(std::max(0.0, moments.second / c - mean * mean) + 1e-5);
}

}  // namespace

double selection_match_score(int max_len) { return 2.0 * (std::log(double(max_len) + 1.0) + 16.0); }

int padded_width(const LowerContext& ctx) {
  // Every head's Q/K and V dimensions fit in d_head, and n_head * d_head = n_embd.
  int n_head = 1, d_needed = 1;
  for (const auto& heads : ctx.schedule.heads) {
    n_head = std::max(n_head, int(heads.size()));
    for (NodeId h : heads) {
      auto [dqk, dv] = head_dimensions(ctx, h);
      d_needed = std::max({d_needed, dqk, dv});
    }
  }
  return n_head * std::max(d_needed, (ctx.allocation.width() + n_head - 1) / n_head);
}

void build_vocabulary(const Program& program, const Inference& inference, const CompileOptions& options,
                      Lowered& out) {
  // BOS, the input symbols, then output values that are not input symbols.
  out.vocab.push_back("<bos>");
  for (const Value& v : options.vocab) {
    out.input_ids.push_back(int(out.vocab.size()));
    out.vocab.push_back(to_display(v));
  }
  const NodeId output = program.output;
  if (inference.info[size_t(output)].encoding != Encoding::Categorical) return;
  for (const Value& v : inference.info[size_t(output)].values) {
    std::string text = to_display(v);
    auto it = std::find(out.vocab.begin() + 1, out.vocab.end(), text);
    if (it == out.vocab.end()) {
      out.output_token_of_value.push_back(int(out.vocab.size()));
      out.vocab.push_back(text);
    } else {
      out.output_token_of_value.push_back(int(it - out.vocab.begin()));
    }
  }
}

Lowered lower(const Program& program, const Inference& inference, const Schedule& schedule,
              const Allocation& allocation, const CompileOptions& options) {
  LowerContext ctx{program, inference, schedule, allocation, options};
  ctx.match_score = selection_match_score(options.max_len);
  Lowered out;
  ctx.width = padded_width(ctx);
  out.width = ctx.width;

  build_vocabulary(program, inference, options, out);
  const NodeId output = program.output;
  const bool categorical_output = inference.info[size_t(output)].encoding == Encoding::Categorical;

  // Embeddings. Every token row has Allocation::token_row_entries entries of kTokenAmplitude: two,
  // its input one-hot (or BOS) and, for a symbol the output can take, the output dimension, else
  // `pad`; or, where no input row has an output dimension (allocate.cpp's token_rows), its one-hot
  // alone. Equal rows sums make ln_f's mean shift the same for every logit (without LayerNorm there
  // is no mean to shift, and no `pad`), and the input one-hot's small size keeps an input token's
  // logit well below the output's.
  const double e = kTokenAmplitude;
  out.wte.assign(out.vocab.size(), {});
  // (Bookkeeping dimensions a model does not read are absent, -1: allocate.cpp. Their entries go.)
  auto present = [](std::vector<std::pair<int, double>> row) {
    row.erase(std::remove_if(row.begin(), row.end(), [](const auto& entry) { return entry.first < 0; }), row.end());
    return row;
  };
  // BOS's row sums to as much as every other. Where there is `pad` (always with two entries a row:
  // allocate.cpp), `bos` and `pad`, or `pad` twice; else in `bos` (the heads read BOS as it is:
  // lower_head.cpp) or, in a model without heads, in `zero` (nothing reads BOS's stream; `zero` is 0
  // at every other position, so the BOS token's logit there is what `pad` gave it), or nothing
  // (neither: no LayerNorm).
  if (allocation.pad >= 0)
    out.wte[0] = present({{allocation.bos >= 0 ? allocation.bos : allocation.pad, e}, {allocation.pad, e}});
  else
    out.wte[0] = present({{allocation.bos >= 0 ? allocation.bos : allocation.zero, allocation.token_row_entries * e}});
  // An output value that is no input symbol: its row's other entry, a dimension nothing writes
  // (none where the rows have one entry each).
  const int no_input = allocation.pad >= 0 ? allocation.pad : allocation.token_row_entries == 2 ? allocation.zero : -1;
  const std::vector<int>* output_dims = nullptr;
  if (categorical_output && allocation.onehot.count(output)) output_dims = &allocation.onehot.at(output);
  auto output_dim_of = [&](const std::string& text) -> int {
    if (!output_dims) return -1;
    const std::vector<Value>& values = inference.info[size_t(output)].values;
    for (size_t i = 0; i < values.size(); ++i)
      if (to_display(values[i]) == text) return (*output_dims)[i];
    return -1;
  };
  for (size_t t = 1; t < out.vocab.size(); ++t) {
    std::vector<std::pair<int, double>> row;
    bool input = t <= options.vocab.size();
    if (input) {
      for (const auto& [tokens_id, dims] : allocation.tokens) {
        const std::vector<Value>& symbols = inference.info[size_t(tokens_id)].values;
        for (size_t s = 0; s < symbols.size(); ++s)
          if (to_display(symbols[s]) == out.vocab[t]) row.push_back({dims[s], e});
      }
      if (row.empty()) row.push_back({allocation.pad, e});  // a program that never reads tokens
    } else {
      row.push_back({no_input, e});  // an output-only value: never an input
    }
    int od = output_dim_of(out.vocab[t]);
    // An output read as a number has no one-hot: its tokens' rows are written below.
    row.push_back({od >= 0 ? od : allocation.pad, e});
    out.wte[t] = present(row);
  }
  out.wpe.assign(size_t(options.max_len + 1), {});
  NodeId indices = -1;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id)
    if (inference.info[size_t(id)].needed && program.node(id).kind == NodeKind::Indices) indices = id;
  for (int p = 0; p <= options.max_len; ++p) {
    auto& row = out.wpe[size_t(p)];
    if (allocation.one >= 0) row.push_back({allocation.one, allocation.one_value});
    if (allocation.anchor >= 0) row.push_back({allocation.anchor, kAnchor});
    if (allocation.scratch_constant >= 0) row.push_back({allocation.scratch_constant, 1.0});
    if (p >= 1 && indices >= 0 && allocation.onehot.count(indices))
      row.push_back({allocation.onehot.at(indices)[size_t(p - 1)], 1.0});
    if (indices >= 0 && allocation.number.count(indices)) {
      // BOS holds the centre value: its group reads 0 as a key, whatever the selector.
      std::vector<double> group = ctx.number_group(p >= 1 ? double(p - 1) : inference.numbers.centre);
      for (size_t j = 0; j < group.size(); ++j) row.push_back({allocation.number.at(indices)[j], group[j]});
    }
    if (!allocation.log_position.empty()) {
      const std::vector<double> group = allocation.log_position_group(p - 1);
      for (size_t j = 0; j < group.size(); ++j) row.push_back({allocation.log_position[j], group[j]});
    }
  }

  write_position_digits(ctx, out);
  if (schedule.embedded) write_embedded_map(ctx, *schedule.embedded, out);
  if (inference.numbers.of(output) == NumberRole::WidthNumber) write_number_output(ctx, out);
  if (schedule.output_from_scratch)
    write_scratch_output(ctx, nominal_sigma(ctx, nominal_moments(ctx, 2 * schedule.blocks)), out);

  // The budget: the model's parameters with n MLP units in its widest block are base + n * slope
  // (the width, the blocks, the vocabulary and the positions are known now); its MLP units are
  // counted against --max-parameters as they are built, and the one that passes it is refused.
  const ModelSize size = model_size(ctx.width, schedule.blocks, int(out.vocab.size()), options.max_len);
  UnitCount count;
  count.most_units = size.most_units(options.max_parameters);

  // Blocks, simulating BOS as we go.
  std::vector<double> bos(size_t(ctx.width), 0.0);
  for (const auto& [dim, w] : out.wte[0]) bos[size_t(dim)] += w;
  for (const auto& [dim, w] : out.wpe[0]) bos[size_t(dim)] += w;
  const bool ln = options.layer_norm;
  for (int b = 1; b <= schedule.blocks; ++b) {
    LoweredBlock block;
    block.ln1_gain = ln ? nominal_sigma(ctx, nominal_moments(ctx, 2 * b - 2)) : 1.0;
    block.heads = lower_heads(ctx, schedule.heads[size_t(b - 1)], bos, block.ln1_gain);
    std::vector<double> y = layer_norm(bos, block.ln1_gain, ln);
    for (const LoweredHead& head : block.heads) {
      std::vector<double> v = read_through(head.wv, y);
      for (int j = 0; j < head.wo.rows; ++j)
        for (int c = 0; c < ctx.width; ++c) bos[size_t(c)] += v[size_t(j)] * head.wo.at(j, c);
    }
    auto moments = nominal_moments(ctx, 2 * b - 1);
    block.ln2_gain = ln ? nominal_sigma(ctx, moments) : 1.0;
    count.block = b - 1;
    try {
      lower_mlp(ctx, schedule.mlps[size_t(b - 1)], moments.first, moments.second, block.ln2_gain, block,
                out.min_mlp_margin, count);
    } catch (const BudgetPassed&) {
      refuse_over_budget(program, allocation, size, count, options);
    }
    y = layer_norm(bos, block.ln2_gain, ln);
    std::vector<double> h = read_through(block.fc, y);
    for (size_t i = 0; i < h.size(); ++i) {
      double z = h[i] + block.fc_bias[i];
      h[i] = options.activation == Activation::Gelu ? gelu(z) : std::max(0.0, z);
    }
    for (size_t i = 0; i < h.size(); ++i)
      for (int c = 0; c < ctx.width; ++c) bos[size_t(c)] += h[i] * block.proj.at(int(i), c);
    for (int c = 0; c < ctx.width; ++c) bos[size_t(c)] += block.proj_bias[size_t(c)];
    out.blocks.push_back(std::move(block));
  }
  // ln_f: the correct output's logit exceeds every other by about 50 * (1 - 2e).
  out.lnf_gain = ln ? nominal_sigma(ctx, nominal_moments(ctx, 2 * schedule.blocks)) * 50.0 / e : 1.0;
  return out;
}

}  // namespace raspc::compiler
