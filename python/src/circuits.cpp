// The ground truth of a compiled model (circuit/): its circuit, interventions with the
// interpreter's predictions, the check of them all, and scores of discovered circuits. Python's
// raspc.circuits and Model.circuit/patch/ablate/verify_interventions call these.
#include <pybind11/stl.h>

#include "circuit/circuit.hpp"
#include "circuit/interventions.hpp"
#include "circuit/score.hpp"
#include "circuit/verify_interventions.hpp"
#include "python/src/bindings.hpp"

namespace raspc::python {

namespace {

py::dict result_to_python(const InterventionResult& r) {
  py::dict d;
  d["description"] = r.description;
  d["clean"] = r.clean;
  d["model"] = r.model;
  d["predicted"] = r.predicted.empty() ? py::object(py::none()) : py::cast(r.predicted);
  d["no_prediction"] = r.no_prediction.empty() ? py::object(py::none()) : py::cast(r.no_prediction);
  d["agree"] = r.predicted.empty() ? py::object(py::none()) : py::cast(r.agree);
  d["changed"] = r.changed;
  return d;
}

py::object optional_number(const std::optional<double>& v) { return v ? py::object(py::float_(*v)) : py::object(py::none()); }

}  // namespace

void bind_circuits(py::module_& module) {
  module.def(
      "circuit",
      [](PyModel& m) {
        return translating_errors("FileError", [&] {
          const Circuit circuit = model_circuit(m.model);
          return py::make_tuple(json_to_python(circuit_json(circuit)), format_circuit(circuit));
        });
      },
      py::arg("model"));
  module.def(
      "patch",
      [](PyModel& m, const py::handle& tokens, const py::handle& source, const std::string& sop) {
        const std::vector<int> a = translating_errors("InputError", [&] { return model_input(m.model, tokens); });
        const std::vector<int> b = translating_errors("InputError", [&] { return model_input(m.model, source); });
        std::optional<Intervener> intervener;
        translating_errors("FileError", [&] { intervener.emplace(m.model); });
        return result_to_python(translating_errors("InputError", [&] {
          py::gil_scoped_release release;
          return intervener->patch(a, b, sop, "sop", "source");
        }));
      },
      py::arg("model"), py::arg("tokens"), py::arg("source"), py::arg("sop"));
  module.def(
      "ablate",
      [](PyModel& m, const py::handle& tokens, const std::string& node, const std::string& how, int mean_over,
         uint64_t seed) {
        const std::vector<int> a = translating_errors("InputError", [&] { return model_input(m.model, tokens); });
        const Ablation ablation = translating_errors("InputError", [&] { return parse_ablation(how, "how"); });
        if (mean_over < 1) raise_raspc_error("InputError", "mean_over: error: must be at least 1, not " + std::to_string(mean_over));
        std::optional<Intervener> intervener;
        translating_errors("FileError", [&] { intervener.emplace(m.model); });
        return result_to_python(translating_errors("InputError", [&] {
          py::gil_scoped_release release;
          return intervener->ablate(a, node, ablation, {}, mean_over, seed, "node");
        }));
      },
      py::arg("model"), py::arg("tokens"), py::arg("node"), py::arg("how"), py::arg("mean_over"), py::arg("seed"));
  module.def(
      "verify_interventions",
      [](PyModel& m, int pairs, int max_len, uint64_t seed) {
        if (pairs < 1) raise_raspc_error("InputError", "pairs: error: must be at least 1, not " + std::to_string(pairs));
        if (max_len < 0) raise_raspc_error("InputError", "max_len: error: must be positive, not " + std::to_string(max_len));
        InterventionCheckOptions options;
        options.pairs = pairs;
        options.max_length = max_len;
        options.seed = seed;
        return translating_errors("FileError", [&] {
          InterventionReport report;
          {
            py::gil_scoped_release release;
            report = verify_interventions(m.model, options);
          }
          return py::make_tuple(json_to_python(intervention_report_json(report)), format_intervention_report(report));
        });
      },
      py::arg("model"), py::arg("pairs"), py::arg("max_len"), py::arg("seed"));
  // found nodes, found edges as (from, to, via) with via "" for a pair, their scores or None.
  module.def(
      "score",
      [](PyModel& m, const std::vector<std::string>& nodes, const std::vector<std::tuple<std::string, std::string, std::string>>& edges,
         const std::optional<std::vector<double>>& scores) {
        const Circuit circuit = translating_errors("FileError", [&] { return model_circuit(m.model); });
        std::vector<std::pair<EdgeKey, double>> found;
        for (size_t i = 0; i < edges.size(); ++i)
          found.push_back({{std::get<0>(edges[i]), std::get<1>(edges[i]), std::get<2>(edges[i])}, scores ? scores->at(i) : 1.0});
        const CircuitScore s = translating_errors("InputError", [&] { return score_circuit(circuit, nodes, found, scores.has_value(), "found"); });
        py::dict d;
        d["node_precision"] = optional_number(s.node_precision);
        d["node_recall"] = optional_number(s.node_recall);
        d["edge_precision"] = optional_number(s.edge_precision);
        d["edge_recall"] = optional_number(s.edge_recall);
        d["roc_auc"] = optional_number(s.roc_auc);
        d["nodes_found"] = s.nodes_found;
        d["nodes_true"] = s.nodes_true;
        d["nodes_correct"] = s.nodes_correct;
        d["edges_found"] = s.edges_found;
        d["edges_true"] = s.edges_true;
        d["edges_correct"] = s.edges_correct;
        return d;
      },
      py::arg("model"), py::arg("nodes"), py::arg("edges"), py::arg("scores"));
  module.def(
      "full_graph_edges",
      [](PyModel& m) {
        const Circuit circuit = translating_errors("FileError", [&] { return model_circuit(m.model); });
        std::vector<std::tuple<std::string, std::string, std::string>> edges;
        for (const EdgeKey& e : full_graph_edges(circuit)) edges.emplace_back(e.from, e.to, e.via);
        return edges;
      },
      py::arg("model"));
  module.def(
      "edge_from_hooks",
      [](PyModel& m, const std::string& parent, int parent_head, const std::string& child, int child_head) {
        const Circuit circuit = translating_errors("FileError", [&] { return model_circuit(m.model); });
        const EdgeKey e = translating_errors("InputError", [&] { return edge_from_hooks(circuit, parent, parent_head, child, child_head); });
        return std::make_tuple(e.from, e.to, e.via);
      },
      py::arg("model"), py::arg("parent"), py::arg("parent_head"), py::arg("child"), py::arg("child_head"));
}

}  // namespace raspc::python
