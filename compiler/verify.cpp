// Pass 7, verify: the model against the interpreter, on every input up to a length while the
// count stays within options.exhaustive_limit, and on options.samples random inputs of the longer
// lengths. A categorical output must be the argmax of the logits over the whole vocabulary (the
// margin is the correct logit minus the best other one); a numerical output must be within
// kNumericTolerance of the exact value.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <sstream>

#include "compiler/ir.hpp"
#include "runtime/model_output.hpp"

namespace raspc::compiler {
namespace {

// How close a numerical output must be to the exact rational (the reason is beside the constant).
constexpr double kNumericTolerance = kNumericalOutputTolerance;

std::string describe_input(const std::vector<Value>& input) {
  bool chars = true;
  for (const Value& v : input)
    if (!v.is_string() || v.string().size() != 1) chars = false;
  std::string s;
  if (chars) {
    for (const Value& v : input) s += v.string();
    return "\"" + s + "\"";
  }
  for (size_t i = 0; i < input.size(); ++i) s += (i ? "," : "") + to_display(input[i]);
  return "[" + s + "]";
}

std::string describe_outputs(const std::vector<std::string>& values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) s += (i ? "," : "") + values[i];
  return "[" + s + "]";
}

double number_of(const Value& v) { return v.is_bool() ? (v.boolean ? 1.0 : 0.0) : v.number.to_double(); }

struct Checker {
  const Program& program;
  const Inference& inference;
  const Schedule& schedule;
  const Allocation& allocation;
  const Model& model;
  const CompileOptions& options;
  CompileReport& report;
  Interpreter interpreter;
  std::unique_ptr<Backend> backend;
  bool numerical;
  std::vector<int> symbol_token;  // by vocabulary index

  Checker(const Program& p, const Inference& i, const Schedule& s, const Allocation& a, const Model& m,
          const CompileOptions& o, CompileReport& r)
      : program(p), inference(i), schedule(s), allocation(a), model(m), options(o), report(r),
        interpreter(p, o.mode), backend(make_backend(m, o.device)) {
    numerical = inference.info[size_t(program.output)].encoding == Encoding::Numerical;
    for (const Value& v : options.vocab) symbol_token.push_back(model.token_id(to_display(v)));
  }

  // Checks one batch of inputs (same length).
  void check(const std::vector<std::vector<int>>& inputs) {
    std::vector<std::vector<Value>> expected(inputs.size());
    std::vector<uint8_t> defined(inputs.size(), 1);
    std::vector<std::vector<int>> batch;
    std::vector<size_t> index;
    for (size_t b = 0; b < inputs.size(); ++b) {
      std::vector<Value> input;
      for (int s : inputs[b]) input.push_back(options.vocab[size_t(s)]);
      try {
        expected[b] = interpreter.run(input);
      } catch (const UserError& e) {
        ++report.undefined_inputs;
        if (report.first_undefined.empty()) {
          std::string message = e.what();
          report.first_undefined = describe_input(input) + ": " + message.substr(0, message.find('\n'));
        }
        defined[b] = 0;
        continue;
      }
      std::vector<int> ids{model.bos_id};
      for (int s : inputs[b]) ids.push_back(symbol_token[size_t(s)]);
      batch.push_back(std::move(ids));
      index.push_back(b);
    }
    if (batch.empty()) return;
    ForwardOptions fo;
    fo.capture_residual = numerical;
    ForwardResult result = backend->forward(batch, fo);
    for (size_t j = 0; j < batch.size(); ++j) {
      size_t b = index[j];
      ++report.inputs_checked;
      bool wrong = false;
      int wrong_position = -1;
      std::vector<std::string> got(inputs[b].size()), want(inputs[b].size());
      for (size_t t = 0; t < inputs[b].size(); ++t) {
        const Value& v = expected[b][t];
        want[t] = to_display(v);
        if (numerical) {
          double y = result.residual_at(int(j), 2 * model.config.n_layer, int(t + 1))
                         [model.metadata["output"]["dim"].get<int>()];
          std::ostringstream text;
          text << y;
          got[t] = text.str();
          double error = std::fabs(y - number_of(v));
          report.worst_numerical_error = std::max(report.worst_numerical_error, error);
          if (!(error <= kNumericTolerance * std::max(1.0, std::fabs(number_of(v))))) {
            if (!wrong) wrong_position = int(t);
            wrong = true;
          }
        } else {
          const float* logits = result.logits_at(int(j), int(t + 1));
          int best = 0;
          for (int k = 1; k < result.vocab; ++k)
            if (logits[k] > logits[best]) best = k;
          got[t] = model.vocab[size_t(best)];
          int target = model.token_id(want[t]);
          if (target < 0 || best != target) {
            if (!wrong) wrong_position = int(t);
            wrong = true;
            continue;
          }
          float other = -INFINITY;
          for (int k = 0; k < result.vocab; ++k)
            if (k != target) other = std::max(other, logits[k]);
          double margin = double(logits[target]) - double(other);
          if (report.inputs_checked == 1 && t == 0) report.min_logit_margin = margin;
          report.min_logit_margin = std::min(report.min_logit_margin, margin);
        }
      }
      if (!wrong) continue;
      ++report.mismatches;
      if (report.first_mismatch.empty()) {
        std::vector<Value> input;
        for (int s : inputs[b]) input.push_back(options.vocab[size_t(s)]);
        report.first_mismatch = "input " + describe_input(input) + ": expected " + describe_outputs(want) +
                                ", the model gives " + describe_outputs(got) + " (first at position " +
                                std::to_string(wrong_position) + ")" + departure(input, batch[j]);
      }
    }
  }

  // Where the residual stream first departs from the interpreter's trace.
  std::string departure(const std::vector<Value>& input, const std::vector<int>& ids) {
    Trace trace;
    Interpreter traced(program, options.mode);
    traced.run(input, &trace);
    ForwardOptions fo;
    fo.capture_residual = true;
    ForwardResult result = backend->forward({ids}, fo);
    std::vector<NodeId> order;
    for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id)
      if (inference.info[size_t(id)].needed && (allocation.onehot.count(id) || allocation.numeric.count(id)))
        order.push_back(id);
    std::stable_sort(order.begin(), order.end(),
                     [&](NodeId a, NodeId b) { return schedule.ready[size_t(a)] < schedule.ready[size_t(b)]; });
    for (NodeId id : order) {
      if (size_t(id) >= trace.sop.size() || trace.sop[size_t(id)].empty()) continue;
      int stage = std::min(schedule.ready[size_t(id)], 2 * model.config.n_layer);
      for (size_t t = 0; t < input.size(); ++t) {
        const float* x = result.residual_at(0, stage, int(t + 1));
        const Value& v = trace.sop[size_t(id)][t];
        std::string got;
        bool same;
        if (allocation.numeric.count(id)) {
          double y = x[allocation.numeric.at(id)];
          same = std::fabs(y - number_of(v)) <= kNumericTolerance * std::max(1.0, std::fabs(number_of(v)));
          std::ostringstream text;
          text << y;
          got = text.str();
        } else {
          const std::vector<int>& dims = allocation.onehot.at(id);
          size_t best = 0;
          for (size_t k = 1; k < dims.size(); ++k)
            if (x[dims[k]] > x[dims[best]]) best = k;
          const Value& decoded = inference.info[size_t(id)].values[best];
          same = !value_less(decoded, v) && !value_less(v, decoded) && std::fabs(x[dims[best]] - 1.0) < 0.1;
          got = to_display(decoded) + " (" + std::to_string(x[dims[best]]) + ")";
        }
        if (!same)
          return "; the residual stream first departs at " + program.label(id) + ", position " + std::to_string(t) +
                 ": the interpreter has " + to_display(v) + ", the residual holds " + got;
      }
    }
    return "";
  }
};

}  // namespace

void verify(const Program& program, const Inference& inference, const Schedule& schedule,
            const Allocation& allocation, const Model& model, const CompileOptions& options,
            CompileReport& report) {
  auto start = std::chrono::steady_clock::now();
  Checker checker(program, inference, schedule, allocation, model, options, report);
  const int V = int(options.vocab.size());
  const int L = std::min(options.verify_len > 0 ? options.verify_len : options.max_len, options.max_len);
  report.verified_len = L;
  report.numerical_output = checker.numerical;
  constexpr size_t kBatch = 1024;
  std::mt19937_64 rng(options.seed);
  double total = 0;
  int exhaustive_len = 0;
  for (int n = 1; n <= L; ++n) {
    total += std::pow(double(V), n);
    if (total > double(options.exhaustive_limit)) break;
    exhaustive_len = n;
  }
  for (int n = 1; n <= exhaustive_len; ++n) {
    std::vector<int> digits(size_t(n), 0);
    std::vector<std::vector<int>> batch;
    for (;;) {
      batch.push_back(digits);
      if (batch.size() == kBatch) checker.check(batch), batch.clear();
      int i = 0;
      for (; i < n; ++i) {
        if (++digits[size_t(i)] < V) break;
        digits[size_t(i)] = 0;
      }
      if (i == n) break;
    }
    if (!batch.empty()) checker.check(batch);
  }
  report.exhaustive = exhaustive_len == L;
  if (exhaustive_len < L && options.samples > 0) {
    // Random inputs, the lengths beyond the exhaustive ones taking equal shares.
    int lengths = L - exhaustive_len;
    std::uniform_int_distribution<int> symbol(0, V - 1);
    for (int k = 0; k < lengths; ++k) {
      int n = exhaustive_len + 1 + k;
      long count = options.samples / lengths + (k < options.samples % lengths ? 1 : 0);
      std::vector<std::vector<int>> batch;
      for (long s = 0; s < count; ++s) {
        std::vector<int> input(static_cast<size_t>(n));
        for (int& x : input) x = symbol(rng);
        batch.push_back(std::move(input));
        if (batch.size() == kBatch) checker.check(batch), batch.clear();
      }
      if (!batch.empty()) checker.check(batch);
    }
  }
  report.verify_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace raspc::compiler
