// The verify pass: the model against the interpreter, on every input up to a length while the
// count stays within options.exhaustive_limit, and on options.samples inputs of each longer length:
// each symbol repeated, then random ones. A categorical output must be the argmax of the logits
// over the whole vocabulary (the margin is the correct logit minus the best other one); a
// numerical output must be within kNumericTolerance of the exact value.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <random>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <Eigen/Core>

#include "compiler/ir.hpp"
#include "runtime/verification_backend.hpp"
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

// What one batch found; batches are checked in parallel and their tallies added up in input order,
// so the report (the first mismatch included) does not depend on the number of threads.
struct Tally {
  long checked = 0, mismatches = 0, undefined = 0;
  double min_margin = INFINITY, worst_error = 0;
  std::string first_mismatch, first_undefined;
  std::string first_departure;  // the s-op where the first mismatch's residual stream departs
};

struct Checker {
  const Program& source;   // as written: the interpreter runs it
  const Program& program;  // as compiled
  const Inference& inference;
  const Schedule& schedule;
  const Allocation& allocation;
  const Model& model;
  const CompileOptions& options;
  Interpreter interpreter;
  std::unique_ptr<Backend> backend;
  bool numerical;
  std::vector<int> symbol_token;  // by vocabulary index

  // `memos`: the first thread's checker's, shared (none: the first thread's own, or CUDA).
  Checker(const Program& source, const Program& p, const Inference& i, const Schedule& s, const Allocation& a,
          const Model& m, const CompileOptions& o, std::shared_ptr<VerificationMemos> memos = nullptr)
      : source(source), program(p), inference(i), schedule(s), allocation(a), model(m), options(o),
        interpreter(source, o.mode),
        // The forward over the model's nonzero blocks only: the same logits up to float rounding
        // (see runtime/verification_backend.hpp).
        backend(o.device == Device::Cpu ? std::make_unique<VerificationBackend>(m, std::move(memos))
                                        : make_backend(m, o.device)) {
    numerical = inference.info[size_t(program.output)].encoding == Encoding::Numerical;
    for (const Value& v : options.vocab) symbol_token.push_back(model.token_id(to_display(v)));
  }

  // Checks one batch of inputs (same length).
  void check(const std::vector<std::vector<int>>& inputs, Tally& tally) {
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
        ++tally.undefined;
        if (tally.first_undefined.empty()) {
          std::string message = e.what();
          tally.first_undefined = describe_input(input) + ": " + message.substr(0, message.find('\n'));
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
    fo.capture_last_resid = numerical;
    ForwardResult result = backend->forward(batch, fo);
    const int output_dim = numerical ? model.metadata["output"]["dim"].get<int>() : -1;
    for (size_t j = 0; j < batch.size(); ++j) {
      size_t b = index[j];
      ++tally.checked;
      int wrong_position = -1;
      for (size_t t = 0; t < inputs[b].size(); ++t) {
        const Value& v = expected[b][t];
        if (numerical) {
          const double y = result.last_resid_at(int(j), int(t + 1))[output_dim];
          const double error = std::fabs(y - number_of(v));
          tally.worst_error = std::max(tally.worst_error, error);
          if (!(error <= kNumericTolerance * std::max(1.0, std::fabs(number_of(v)))) && wrong_position < 0)
            wrong_position = int(t);
          continue;
        }
        const float* logits = result.logits_at(int(j), int(t + 1));
        const int target = token_of(v);
        // The target is the argmax (the first of equal maxima) when it is above every logit
        // before it and at least every one after it; vectorised maxima, where a loop over
        // the argmax's index was a quarter of verification at length 64.
        const float before = target > 0 ? Eigen::Map<const Eigen::ArrayXf>(logits, target).maxCoeff() : -INFINITY;
        const float after = target >= 0 && target + 1 < result.vocab
                                ? Eigen::Map<const Eigen::ArrayXf>(logits + target + 1, result.vocab - target - 1).maxCoeff()
                                : -INFINITY;
        if (target < 0 || !(logits[target] > before && logits[target] >= after)) {
          if (wrong_position < 0) wrong_position = int(t);
          continue;
        }
        tally.min_margin = std::min(tally.min_margin, double(logits[target]) - double(std::max(before, after)));
      }
      if (wrong_position < 0) continue;
      ++tally.mismatches;
      if (tally.first_mismatch.empty()) {
        std::vector<std::string> got(inputs[b].size()), want(inputs[b].size());
        for (size_t t = 0; t < inputs[b].size(); ++t) {
          want[t] = to_display(expected[b][t]);
          if (numerical) {
            std::ostringstream text;
            text << result.last_resid_at(int(j), int(t + 1))[output_dim];
            got[t] = text.str();
          } else {
            const float* logits = result.logits_at(int(j), int(t + 1));
            got[t] = model.vocab[size_t(std::max_element(logits, logits + result.vocab) - logits)];
          }
        }
        std::vector<Value> input;
        for (int s : inputs[b]) input.push_back(options.vocab[size_t(s)]);
        tally.first_mismatch = "input " + describe_input(input) + ": expected " + describe_outputs(want) +
                                ", the model gives " + describe_outputs(got) + " (first at position " +
                                std::to_string(wrong_position) + ")" +
                                departure(input, batch[j], tally.first_departure);
      }
    }
  }

  // The token of an output value (-1 if the model has none), by the value's kind and exact
  // payload: printing it and looking the text up was a tenth of verification.
  int token_of(const Value& v) {
    auto found = token_cache.find(v);
    if (found != token_cache.end()) return found->second;
    return token_cache.emplace(v, model.token_id(to_display(v))).first->second;
  }
  struct SameValue {
    bool operator()(const Value& a, const Value& b) const { return a.kind == b.kind && a == b; }
  };
  std::unordered_map<Value, int, ValueHash, SameValue> token_cache;

  // Where the residual stream first departs from the interpreter's trace, described; the s-op's
  // name goes to `label`.
  std::string departure(const std::vector<Value>& input, const std::vector<int>& ids, std::string& label) {
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
          const std::vector<Value>& values = inference.info[size_t(id)].values;
          const Value& decoded = values[best];
          // Compare dimensions, not values: the output's values that print alike share one.
          int want_dim = -1;
          for (size_t k = 0; k < values.size(); ++k)
            if (!value_less(values[k], v) && !value_less(v, values[k])) want_dim = dims[k];
          same = dims[best] == want_dim && std::fabs(x[dims[best]] - 1.0) < 0.1;
          got = to_display(decoded) + " (" + std::to_string(x[dims[best]]) + ")";
        }
        if (!same) {
          label = program.label(id);
          return "; the residual stream first departs at " + program.describe(id) + ", position " + std::to_string(t) +
                 ": the interpreter has " + to_display(v) + ", the residual holds " + got;
        }
      }
    }
    return "";
  }
};

// Checks batches on every core, one Checker (interpreter and backend) per thread.
class Pool {
 public:
  Pool(const Program& source, const Program& p, const Inference& i, const Schedule& s, const Allocation& a,
       const Model& m, const CompileOptions& o, CompileReport& r)
      : report_(r), on_progress_(o.on_verify_progress) {
    checkers_.push_back(std::make_unique<Checker>(source, p, i, s, a, m, o));
    // One CUDA device runs one batch at a time; the CPU forward is single-threaded (Eigen without
    // OpenMP), so a thread per core each running whole batches uses them all: 1.8 times as fast
    // on 2 cores for sort and reverse at length 64.
    threads_ = verification_threads(o);
    // The threads share the first one's memos: a row any thread computed is a lookup for all.
    if (auto* forward = dynamic_cast<VerificationBackend*>(checkers_[0]->backend.get()); forward && threads_ > 1)
      memos_ = forward->share_memos();
  }
  bool numerical() const { return checkers_[0]->numerical; }
  // The inputs to check, what each length costs (estimate_verification, on the verification
  // forward of the first checker), reported as the verification's start.
  void start(const Model& model, const CompileOptions& options) {
    std::unique_ptr<VerificationBackend> own;  // a CUDA backend has no cost model of its own
    const VerificationBackend* forward = dynamic_cast<const VerificationBackend*>(checkers_[0]->backend.get());
    if (!forward) forward = (own = std::make_unique<VerificationBackend>(model)).get();
    VerificationEstimate cost = estimate_verification(*forward, options);
    total_ = long(cost.inputs);
    total_seconds_ = cost.seconds;
    seconds_by_length_ = std::move(cost.seconds_by_length);
    if (on_progress_) on_progress_(0, total_, 0.0);
  }

  // Queues one batch (inputs of one length); checks the queue once it holds a round's worth:
  // 16 batches a thread, since every thread waits at the end of a round for the slowest batch (at 4
  // a thread, 2 threads took 0.61-0.74 of one thread's wall time on 10 of the 19 programs at
  // length 16; bench/RESULTS.md, "Verification on every core"). A round is also when the
  // progress (and Python's Ctrl-C) is seen: 32 batches of at most 8192 tokens.
  void add(std::vector<std::vector<int>> batch) {
    queue_.push_back(std::move(batch));
    if (queue_.size() >= kBatchesPerThread * threads_) flush();
  }

  void flush() {
    if (queue_.empty()) return;
    std::vector<Tally> tallies(queue_.size());
    const unsigned threads = std::min<unsigned>(threads_, unsigned(queue_.size()));
    if (checkers_.size() < threads) checkers_.resize(threads);
    if (memos_) {
      size_t rows = 0;  // every token of the round, BOS included
      for (const auto& batch : queue_) rows += batch.size() * (batch.front().size() + 1);
      memos_->prepare(rows);
    }
    std::atomic<size_t> next{0};
    std::vector<std::exception_ptr> errors(threads);
    auto work = [&](unsigned k) {
      try {
        // A thread's checker is made on that thread at its first round (its verification forward
        // plans every block of the model), not one after another before the round starts.
        if (!checkers_[k]) {
          const Checker& first = *checkers_[0];
          checkers_[k] = std::make_unique<Checker>(first.source, first.program, first.inference, first.schedule,
                                                   first.allocation, first.model, first.options, memos_);
        }
        for (size_t b; (b = next++) < queue_.size();) checkers_[k]->check(queue_[b], tallies[b]);
      } catch (...) {
        errors[k] = std::current_exception();
        next = queue_.size();
      }
    };
    std::vector<std::thread> pool;
    for (unsigned k = 1; k < threads; ++k) pool.emplace_back(work, k);
    work(0);
    for (std::thread& t : pool) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    for (size_t b = 0; b < queue_.size(); ++b) {
      const Tally& t = tallies[b];
      CompileReport& r = report_;
      r.inputs_checked += t.checked;
      r.checked_by_length[queue_[b].front().size()] += t.checked;
      r.mismatches += t.mismatches;
      r.undefined_inputs += t.undefined;
      r.worst_numerical_error = std::max(r.worst_numerical_error, t.worst_error);
      min_margin_ = std::min(min_margin_, t.min_margin);
      if (r.first_mismatch.empty()) r.first_mismatch = t.first_mismatch, r.first_departure = t.first_departure;
      if (r.first_undefined.empty()) r.first_undefined = t.first_undefined;
    }
    if (min_margin_ < INFINITY) report_.min_logit_margin = min_margin_;
    for (const auto& batch : queue_) {
      done_ += long(batch.size());
      done_seconds_ += double(batch.size()) * seconds_by_length_.at(batch.front().size());
    }
    queue_.clear();
    if (on_progress_)
      on_progress_(done_, total_, done_ >= total_ ? 1.0 : std::min(1.0, done_seconds_ / std::max(total_seconds_, 1e-30)));
  }

 private:
  CompileReport& report_;
  std::function<void(long, long, double)> on_progress_;
  long done_ = 0, total_ = 0;
  std::vector<double> seconds_by_length_;
  double done_seconds_ = 0, total_seconds_ = 0;
  static constexpr unsigned kBatchesPerThread = 16;
  unsigned threads_ = 1;
  std::vector<std::unique_ptr<Checker>> checkers_;
  std::shared_ptr<VerificationMemos> memos_;  // the threads' (none on one thread, or on CUDA)
  std::vector<std::vector<std::vector<int>>> queue_;
  double min_margin_ = INFINITY;
};

}  // namespace

VerificationLengths verification_lengths(const CompileOptions& options) {
  VerificationLengths lengths;
  lengths.verified_len = std::min(options.verify_len > 0 ? options.verify_len : options.max_len, options.max_len);
  lengths.vocab_size = double(options.vocab.size());
  lengths.samples = options.samples;
  double total = 0;
  for (int n = 1; n <= lengths.verified_len; ++n) {
    total += std::pow(lengths.vocab_size, n);
    if (total > double(options.exhaustive_limit)) break;
    lengths.exhaustive_len = n;
  }
  return lengths;
}

void verify(const Program& source, const Program& program, const Inference& inference, const Schedule& schedule,
            const Allocation& allocation, const Model& model, const CompileOptions& options,
            CompileReport& report) {
  auto start = std::chrono::steady_clock::now();
  Pool pool(source, program, inference, schedule, allocation, model, options, report);
  const int V = int(options.vocab.size());
  const VerificationLengths lengths = verification_lengths(options);
  const int L = lengths.verified_len, exhaustive_len = lengths.exhaustive_len;
  report.verified_len = L;
  report.numerical_output = pool.numerical();
  report.checked_by_length.assign(size_t(L) + 1, 0);
  // A forward's cost and memory grow with its tokens, not its inputs: about 8k tokens (128 inputs
  // of length 64) cost the same per token as 1024 inputs did, and keep a 4352-wide MLP's
  // activations near 300 MB where 1024 inputs of length 64 took 2.3 GB.
  constexpr size_t kBatchTokens = 8192;
  std::mt19937_64 rng(options.seed);
  pool.start(model, options);
  for (int n = 1; n <= exhaustive_len; ++n) {
    const size_t batch_size = std::max<size_t>(1, kBatchTokens / size_t(n + 1));
    std::vector<int> digits(size_t(n), 0);
    std::vector<std::vector<int>> batch;
    for (;;) {
      batch.push_back(digits);
      if (batch.size() == batch_size) pool.add(std::move(batch)), batch.clear();
      int i = 0;
      for (; i < n; ++i) {
        if (++digits[size_t(i)] < V) break;
        digits[size_t(i)] = 0;
      }
      if (i == n) break;
    }
    if (!batch.empty()) pool.add(std::move(batch));
  }
  report.exhaustive = exhaustive_len == L;
  report.exhaustive_len = exhaustive_len;
  report.samples_per_length = report.exhaustive ? 0 : options.samples;
  // options.samples inputs at every longer length, so the longest lengths, where a margin is
  // thinnest, get as many as the shortest. The first are each symbol repeated: the extremes of a
  // count or a mean (hist's closest counts, n against n - 1, come from these alone: random inputs
  // of length 16 over four symbols printed a margin of 90 where these give 40), which random
  // draws almost never reach. The random draws are made for them too, so the rest are the same
  // inputs whatever the vocabulary's size.
  std::uniform_int_distribution<int> symbol(0, V - 1);
  for (int n = exhaustive_len + 1; n <= L && options.samples > 0; ++n) {
    const size_t batch_size = std::max<size_t>(1, kBatchTokens / size_t(n + 1));
    std::vector<std::vector<int>> batch;
    for (long s = 0; s < options.samples; ++s) {
      std::vector<int> input(static_cast<size_t>(n));
      for (int& x : input) x = symbol(rng);
      if (s < V) std::fill(input.begin(), input.end(), int(s));
      batch.push_back(std::move(input));
      if (batch.size() == batch_size) pool.add(std::move(batch)), batch.clear();
    }
    if (!batch.empty()) pool.add(std::move(batch));
  }
  pool.flush();
  report.verify_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace raspc::compiler
