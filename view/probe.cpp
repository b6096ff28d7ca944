#include "view/probe.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>

#include "language/interpret.hpp"
#include "runtime/model_output.hpp"
#include "runtime/residual_trace.hpp"
#include "view/heatmap.hpp"
#include "circuit/program_check.hpp"

namespace raspc {

namespace {

// One s-op's values on every sampled position, as class numbers (the value's text numbered as seen).
struct Labels {
  std::string sop;
  NodeId id = -1;
  std::map<std::string, int> classes;
  std::vector<int> of;  // by sampled position
};

// Fits on the training rows of X (N, C) and scores on the others: the share of held-out rows whose
// argmax of X w equals their class.
double probe_accuracy(const Eigen::MatrixXd& X, const std::vector<int>& y, const std::vector<bool>& training, int classes) {
  const Eigen::Index N = X.rows(), C = X.cols();
  Eigen::Index n_train = 0;
  for (bool t : training) n_train += t;
  // Standardised on the training rows, so the ridge term weighs every dimension alike (a compiled
  // model's anchor of 400 beside one-hots of 0.1, a trained model's dimensions of one size).
  Eigen::RowVectorXd mean = Eigen::RowVectorXd::Zero(C), scale = Eigen::RowVectorXd::Zero(C);
  for (Eigen::Index r = 0; r < N; ++r)
    if (training[size_t(r)]) mean += X.row(r);
  mean /= double(n_train);
  for (Eigen::Index r = 0; r < N; ++r)
    if (training[size_t(r)]) scale += (X.row(r) - mean).array().square().matrix();
  scale = (scale / double(n_train)).array().sqrt().max(1e-9).matrix();
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(C + 1, C + 1), B = Eigen::MatrixXd::Zero(C + 1, classes);
  Eigen::VectorXd row(C + 1);
  auto features = [&](Eigen::Index r) {
    row.head(C) = ((X.row(r) - mean).array() / scale.array()).matrix().transpose();
    row(C) = 1.0;
  };
  for (Eigen::Index r = 0; r < N; ++r) {
    if (!training[size_t(r)]) continue;
    features(r);
    A.selfadjointView<Eigen::Lower>().rankUpdate(row);
    B.col(y[size_t(r)]) += row;
  }
  A.triangularView<Eigen::StrictlyUpper>() = A.transpose();
  A.diagonal().head(C).array() += 1e-3 * double(n_train);  // ridge: a dimension that is constant stays 0
  const Eigen::MatrixXd W = A.ldlt().solve(B);  // (C+1, classes)
  Eigen::Index right = 0, scored = 0;
  for (Eigen::Index r = 0; r < N; ++r) {
    if (training[size_t(r)]) continue;
    features(r);
    Eigen::Index best = 0;
    (row.transpose() * W).maxCoeff(&best);
    right += best == y[size_t(r)];
    ++scored;
  }
  return scored ? double(right) / double(scored) : 0.0;
}

}  // namespace

std::vector<SopProbe> probe_sops(const Model& model, Backend& backend, const ProbeSettings& settings) {
  const std::unique_ptr<Program> program = model_program(model);
  if (!program) return {};
  std::vector<Labels> labels;
  for (const auto& [name, id] : program->named)
    if (!program->node(id).is_selector()) labels.push_back({name, id, {}, {}});
  if (labels.empty()) return {};
  const std::vector<int> vocabulary = input_vocabulary(model);
  const int max_len = model.config.n_positions - (model.bos_id >= 0 ? 1 : 0);
  if (vocabulary.empty() || max_len < 1) return {};
  Interpreter interpreter(*program, model_mode(model));
  std::mt19937_64 random(settings.seed);
  // Every position of every defined input: its residual at each stage, and which half it is in.
  const int stages = 2 * model.config.n_layer + 1, C = model.config.n_embd;
  std::vector<Eigen::MatrixXd> residual(static_cast<size_t>(stages));
  std::vector<std::vector<float>> rows(static_cast<size_t>(stages));  // by stage: (positions, C) row-major
  std::vector<bool> training;
  int kept = 0;
  for (int s = 0; s < settings.sequences; ++s) {
    const int length = 1 + int(random() % uint64_t(max_len));
    std::vector<int> ids;
    std::vector<std::string> tokens;
    for (int t = 0; t < length; ++t) {
      ids.push_back(vocabulary[random() % vocabulary.size()]);
      tokens.push_back(model.vocab[size_t(ids.back())]);
    }
    Trace values;
    try {
      interpreter.run(interpreter_input(model, tokens), &values);
    } catch (const UndefinedOnInput&) {
      continue;  // no value to read off
    }
    for (Labels& l : labels)
      for (const Value& v : values.sop[size_t(l.id)])
        l.of.push_back(l.classes.emplace(to_display(v), int(l.classes.size())).first->second);
    const std::vector<int> sequence = with_bos(model, ids);
    ForwardOptions options;
    options.capture_residual = true;
    const ForwardResult result = backend.forward({sequence}, options);
    const int first = int(sequence.size()) - length;
    for (int stage = 0; stage < stages; ++stage)
      for (int t = first; t < int(sequence.size()); ++t) {
        const float* x = result.residual_at(0, stage, t);
        rows[size_t(stage)].insert(rows[size_t(stage)].end(), x, x + C);
      }
    training.insert(training.end(), size_t(length), kept++ % 2 == 0);
  }
  const Eigen::Index N = Eigen::Index(training.size());
  if (kept < 2) return {};
  for (int stage = 0; stage < stages; ++stage)
    residual[size_t(stage)] =
        Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(rows[size_t(stage)].data(), N, C)
            .cast<double>();
  std::vector<SopProbe> probes;
  for (const Labels& l : labels) {
    SopProbe probe{l.sop, l.classes.size(), 0, {}, 0.0};
    // The baseline: the most frequent training value, scored on the held-out positions.
    std::vector<size_t> count(l.classes.size(), 0);
    for (size_t r = 0; r < training.size(); ++r)
      if (training[r]) ++count[size_t(l.of[r])];
    const int majority = int(std::max_element(count.begin(), count.end()) - count.begin());
    size_t held = 0, right = 0;
    for (size_t r = 0; r < training.size(); ++r)
      if (!training[r]) ++held, right += l.of[r] == majority;
    probe.baseline = held ? double(right) / double(held) : 0.0;
    for (int stage = 0; stage < stages; ++stage) {
      probe.accuracy.push_back(probe_accuracy(residual[size_t(stage)], l.of, training, int(l.classes.size())));
      if (probe.accuracy.back() > probe.accuracy[size_t(probe.best_stage)]) probe.best_stage = stage;
    }
    probes.push_back(std::move(probe));
  }
  return probes;
}

std::string probes_html(const std::vector<SopProbe>& probes) {
  auto percent = [](double share) {
    char text[16];
    std::snprintf(text, sizeof text, "%.1f%%", 100.0 * share);
    return std::string(text);
  };
  std::string html =
      "<p class=\"where\">For each s-op the program names: a linear probe (ridge regression onto its value's one-hot, "
      "argmax) fitted on the residual stream of half of 400 random inputs at every position, scored on the other "
      "half. The baseline is always guessing the most frequent value. A probe far above its baseline at a stage "
      "says the value can be read there; one at the baseline, that the model does not hold it linearly.</p>"
      "<table class=\"probes\"><tr><th>s-op</th><th>values</th><th>baseline</th>";
  const size_t stages = probes.empty() ? 0 : probes[0].accuracy.size();
  for (size_t s = 0; s < stages; ++s) html += "<th><code>" + html_escape(stage_name(int(s), int(stages - 1) / 2)) + "</code></th>";
  html += "</tr>";
  for (const SopProbe& p : probes) {
    html += "<tr data-sop=\"" + html_escape(p.sop) + "\"><th>" + html_escape(p.sop) + "</th><td>" +
            std::to_string(p.values) + "</td><td>" + percent(p.baseline) + "</td>";
    for (size_t s = 0; s < p.accuracy.size(); ++s)
      html += std::string("<td") + (int(s) == p.best_stage ? " class=\"best\"" : "") + ">" + percent(p.accuracy[s]) + "</td>";
    html += "</tr>";
  }
  return html + "</table>";
}

}  // namespace raspc
