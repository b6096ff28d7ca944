// Models: compiling a program (compiler/compile.hpp), loading and saving files
// (runtime/safetensors.hpp), running them on the CPU or CUDA backend (runtime/forward.hpp) and
// showing their parameters as numpy views of Model::storage.
#include <algorithm>
#include <filesystem>
#include <mutex>
#include <optional>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "compiler/compile.hpp"
#include "language/input.hpp"
#include "python/src/bindings.hpp"
#include "runtime/export/export.hpp"
#include "runtime/inspect.hpp"
#include "runtime/model_output.hpp"
#include "runtime/residual_trace.hpp"
#include "runtime/safetensors.hpp"
#include "support/atomic_file.hpp"
#include "view/html_view.hpp"

namespace raspc::python {

namespace {

// The compiler's report, the same object `raspc compile --json` prints (compiler/compile.hpp's
// report_json; a loaded model has the part its file stores).
py::dict report_to_python(const CompileReport& r) { return json_to_python(report_json(r)); }

}  // namespace

py::object json_to_python(const nlohmann::json& json) {
  return py::module_::import("json").attr("loads")(json.dump());
}

std::vector<int> model_input(const Model& model, const py::handle& tokens) {
  if (py::isinstance<py::str>(tokens)) return parse_model_input(model, tokens.cast<std::string>(), "tokens");
  if (!py::isinstance<py::list>(tokens) && !py::isinstance<py::tuple>(tokens))
    fail_file("tokens", std::string("must be a string or a list of tokens, not ") + Py_TYPE(tokens.ptr())->tp_name);
  std::vector<std::string> texts;
  for (const py::handle item : tokens) {
    Value value;
    try {
      value = from_python(item, "");
    } catch (const py::builtin_exception& error) {
      fail_file("tokens", error.what());
    } catch (py::error_already_set& error) {
      fail_file("tokens", error.what());
    }
    texts.push_back(to_display(value));
  }
  return model_input_tokens(model, texts, "tokens");
}

namespace {

// A float array that owns a copy of `values` (forward results are small and short-lived).
py::array_t<float> owned_array(std::vector<float>&& values, std::vector<py::ssize_t> shape) {
  auto* owner = new std::vector<float>(std::move(values));
  py::capsule free_owner(owner, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  return py::array_t<float>(shape, owner->data(), free_owner);
}

// The s-ops a captured residual stream (2L+1, T, C) holds at every stage, decoded as `run --trace`
// and `view` decode them (runtime/residual_trace): by stage, by s-op shown name, the display text at every
// position ("" before the s-op's stage, "?" where its one-hot has no clear winner); and the first
// real position. Decoded only when asked for (Forward.decode_residual), not with every forward.
py::tuple decode_stream(const PyModel& self, const py::array_t<float, py::array::c_style | py::array::forcecast>& residual,
                        const std::vector<int>& ids) {
  const ModelConfig& c = self.model.config;
  const int stages = 2 * c.n_layer + 1, T = int(ids.size());
  if (residual.ndim() != 3 || residual.shape(0) != stages || residual.shape(1) != T || residual.shape(2) != c.n_embd)
    raise_raspc_error("InputError", "residual: error: must be the forward's stream, of shape (" +
                                        std::to_string(stages) + ", " + std::to_string(T) + ", " +
                                        std::to_string(c.n_embd) + ")");
  ForwardResult result;
  result.batch = 1;
  result.time = T;
  result.n_embd = c.n_embd;
  result.n_layer = c.n_layer;
  result.residual.assign(residual.data(), residual.data() + residual.size());
  const ResidualTrace trace = naming_errors("model", [&] { return decode_residual(self.model, result, 0, ids); });
  py::list by_stage;
  for (const auto& stage : trace.decoded) {
    py::dict sops;
    // Every row `run --trace` prints, a width's scratch value ("hist (scratch)") among them.
    for (size_t k = 0; k < trace.placement.sops.size(); ++k) sops[py::str(trace.placement.sops[k].shown)] = stage[k];
    by_stage.append(sops);
  }
  return py::make_tuple(by_stage, trace.first);
}

py::dict forward(PyModel& self, const py::handle& tokens, bool capture, const std::string& device_name) {
  std::vector<int> ids = with_bos(self.model, model_input(self.model, tokens));
  ForwardOptions options = output_forward_options(self.model);
  options.capture_residual = options.capture_residual || capture;
  options.capture_attention = capture;
  options.capture_scores = capture && device_name == "cpu";
  options.capture_final = capture;
  Device device = parse_device(device_name);
  ForwardResult result;
  PositionOutputs outputs;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    result = self.backend_for(device).forward({ids}, options);
    outputs = read_outputs_locating(self.backend_for(device), self.model, result, 0, ids);
  }
  const py::ssize_t T = result.time, V = result.vocab, C = result.n_embd, L = result.n_layer, H = result.n_head;
  py::dict d;
  std::vector<std::string> token_strings;
  for (int id : ids) token_strings.push_back(self.model.vocab[size_t(id)]);
  d["tokens"] = token_strings;
  d["outputs"] = outputs.values;
  d["margins"] = outputs.margins;
  d["logits"] = owned_array(std::move(result.logits), {T, V});
  d["ids"] = ids;
  if (capture) {
    d["residual"] = owned_array(std::move(result.residual), {2 * L + 1, T, C});
    d["attention"] = owned_array(std::move(result.attention), {L, H, T, T});
    // Captured on the CPU only; a model of no blocks has (0, H, T, T) of them, not None.
    if (options.capture_scores) d["scores"] = owned_array(std::move(result.scores), {L, H, T, T});
    d["final"] = owned_array(std::move(result.final), {T, C});
  }
  return d;
}

// Ctrl-C during a compile: the verification's progress callback runs Python's signal handlers (a
// notebook's interrupt button sends SIGINT too) and unwinds the compile when one raises. It also
// calls the caller's progress function (done, total), whose exception unwinds the compile alike.
struct Interrupted {};
void report_progress(PyObject* progress, long done, long total) {
  py::gil_scoped_acquire acquire;
  if (PyErr_CheckSignals() != 0) throw Interrupted{};
  if (!progress) return;
  try {
    py::handle callback(progress);
    callback(done, total);
  } catch (py::error_already_set& error) {
    error.restore();  // the Python error stays set until compile() rethrows it, with the GIL held
    throw Interrupted{};
  }
}

// The compiler calls this with the GIL released.
void print_to_python_stdout(const std::string& text) {
  py::gil_scoped_acquire acquire;
  py::module_::import("sys").attr("stdout").attr("write")(text);
}

// Bad arguments are InputErrors (as bad flags are on the command line); what the compiler says
// about the program is a CompileError.
CompileOptions compile_options(const PyProgram& program, const py::handle& vocab, int max_len, bool causal,
                               bool layer_norm, const std::string& activation, bool verify, int verify_len,
                               long samples, uint64_t seed, const std::string& device,
                               const std::string& dump_after, bool explain, const py::object& progress,
                               int threads) {
  CompileOptions options;
  if (threads < 0 || threads > kMaxThreads)
    fail_file("threads", "must be from 0 (every core) to " + std::to_string(kMaxThreads) + ", not " +
                             std::to_string(threads));
  options.threads = threads;
  if (!progress.is_none() && !PyCallable_Check(progress.ptr()))
    fail_file("progress", std::string("must be a function of (done, total) or None, not ") + Py_TYPE(progress.ptr())->tp_name);
  if (!py::isinstance<py::list>(vocab) && !py::isinstance<py::tuple>(vocab) && !py::isinstance<py::set>(vocab) &&
      !py::isinstance<py::frozenset>(vocab))
    fail_file("vocab", std::string("must be a list of tokens or a string, not ") + Py_TYPE(vocab.ptr())->tp_name);
  for (const py::handle item : vocab) {
    try {
      options.vocab.push_back(from_python(item, ""));
    } catch (const py::builtin_exception& error) {
      fail_file("vocab", error.what());
    }
  }
  if (options.vocab.empty()) fail_file(program.source->name, "no vocabulary: give vocab=, or a `# vocab: ...` line at the top of the program");
  for (const Value& token : options.vocab)
    if (token.is_string() && is_reserved_token(token.string()))
      fail_file("vocab", "\"" + token.string() + "\" is the name of a model's beginning-of-sequence token, so it cannot "
                         "be an input symbol");
  check_compile_limits(max_len, verify_len, samples, {"max_len", "verify_len", "samples"});
  options.max_len = max_len;
  options.mode = causal ? Mode::Causal : Mode::Bidirectional;
  options.layer_norm = layer_norm;
  if (activation == "gelu") options.activation = Activation::Gelu;
  else if (activation == "relu") options.activation = Activation::Relu;
  else fail_file("activation", "must be gelu or relu, not \"" + activation + "\"");
  options.verify = verify;
  options.verify_len = verify_len;
  options.samples = samples;
  options.seed = seed;
  options.device = parse_device(device);
  options.source_text = program.source->text;
  if (!dump_after.empty()) {
    check_pass_name(dump_after, "dump_after");
    options.dump_after = dump_after;
    // Printed as soon as it exists, as the CLI does: a later pass may refuse the program.
    options.on_dump = print_to_python_stdout;
  }
  options.explain = explain;
  if (explain) options.on_explanation = print_to_python_stdout;
  // A borrowed pointer: the caller's argument outlives the compile, and copying the options (each
  // verification thread has its own) must not touch Python reference counts without the GIL.
  PyObject* callback = progress.is_none() ? nullptr : progress.ptr();
  options.on_verify_progress = [callback](long done, long total, double) { report_progress(callback, done, total); };
  return options;
}

// A raspc.RaspcWarning with the CLI's warning text, pointing at the caller's line.
void warn(const PyProgram& program, const std::string& warning) {
  const py::object category = py::module_::import("raspc.errors").attr("RaspcWarning");
  const std::string message = program.source->name + ": warning: " + warning;
  if (PyErr_WarnEx(category.ptr(), message.c_str(), 2) != 0) throw py::error_already_set();  // warnings as errors
}

std::shared_ptr<PyModel> compile(const PyProgram& program, const CompileOptions& options) {
  if (const std::string warning = causal_header_warning(program.header.causal, options.mode); !warning.empty())
    warn(program, warning + " (causal=True)");
  CompileResult result;
  try {
    py::gil_scoped_release release;
    result = compile_program(program.program, options);
  } catch (const Interrupted&) {
    throw py::error_already_set();  // the KeyboardInterrupt (or what the handler raised), with the GIL back
  }
  const CompileReport& r = result.report;
  if (r.mismatches > 0) {
    try {
      fail_file(program.source->name, "verification found " + std::to_string(r.mismatches) +
                                          " mismatching inputs, so no model was made; the first: " + r.first_mismatch);
    } catch (const UserError& e) {
      // The s-op where the model first departs from the interpreter, for code that acts on it
      // (raspc.tracr compiles a Tracr aggregate as a mean where copying it departs).
      py::object error = py::module_::import("raspc.errors").attr("CompileError")(std::string(e.what()));
      if (!r.first_departure.empty()) error.attr("departure") = r.first_departure;
      PyErr_SetObject(error.get_type().ptr(), error.ptr());
      throw py::error_already_set();
    }
  }
  // As the CLI warns: a program undefined on most inputs was verified on the few others only.
  if (const std::string warning = mostly_undefined_warning(r); !warning.empty()) warn(program, warning);
  auto model = std::make_shared<PyModel>();
  model->model = std::move(result.model);
  model->report = result.report;
  std::error_code error;
  if (program.source && std::filesystem::is_regular_file(program.source->name, error))
    model->sources.push_back(program.source->name);
  return model;
}

}  // namespace

void bind_models(py::module_& module) {
  // How close a numerical output must be to the exact value, relative to max(1, |value|).
  module.attr("numerical_output_tolerance") = kNumericalOutputTolerance;
  module.attr("max_compile_length") = kMaxCompileLength;
  module.attr("max_samples") = kMaxSamples;
  py::class_<PyModel, std::shared_ptr<PyModel>>(module, "Model")
      .def_property_readonly("config", [](const PyModel& m) { return json_to_python(config_to_json(m.model.config)); })
      .def_property_readonly("vocab", [](const PyModel& m) { return m.model.vocab; })
      .def_property_readonly("bos_id", [](const PyModel& m) { return m.model.bos_id; })
      .def_property_readonly("input_ids", [](const PyModel& m) { return m.model.input_ids; })
      .def_property_readonly("residual_labels", [](const PyModel& m) { return m.model.residual_labels; })
      .def_property_readonly("report",
                             [](const PyModel& m) -> py::object {
                               if (m.report) return report_to_python(*m.report);
                               if (m.model.metadata.contains("compile")) return json_to_python(m.model.metadata["compile"]);
                               return py::none();
                             })
      .def_property_readonly("metadata", [](const PyModel& m) { return json_to_python(m.model.metadata); })
      .def_property_readonly("weights",
                             [](py::object self) {
                               const PyModel& m = self.cast<const PyModel&>();
                               py::dict weights;
                               for (const ParameterSpec& spec : parameter_specs(m.model.config)) {
                                 std::vector<py::ssize_t> shape(spec.shape.begin(), spec.shape.end());
                                 // A view: the array's base is the model, which lives as long as it.
                                 py::array_t<float> view(shape, m.model.storage.data() + spec.offset, self);
                                 // Read-only: a backend may hold its own copy of the parameters.
                                 view.attr("flags").attr("writeable") = false;
                                 weights[py::str(spec.name)] = view;
                               }
                               return weights;
                             })
      .def("forward",
           [](PyModel& m, const py::object& tokens, bool capture, const std::string& device) {
             return translating_errors("InputError", [&] { return forward(m, tokens, capture, device); });
           },
           py::arg("tokens"), py::arg("capture"), py::arg("device"))
      // The residual stages' names, as `run --trace` and `view` name them (runtime/residual_trace).
      .def("stage_names", [](const PyModel& m) { return stage_names(m.model.config.n_layer); })
      .def("decode_stream",
           [](const PyModel& m, const py::handle& residual, const py::handle& token_ids) {
             // The forward's own token ids; anything else is refused, not indexed with.
             // A list or tuple of ints only: pybind's own conversion takes any sequence, and asking a
             // 0-d numpy array its length raises a TypeError of its own (found by fuzz_python).
             std::vector<int> ids;
             bool ints = py::isinstance<py::list>(token_ids) || py::isinstance<py::tuple>(token_ids);
             if (ints)
               for (const py::handle& id : token_ids) {
                 if (!py::isinstance<py::int_>(id) || py::isinstance<py::bool_>(id)) {
                   ints = false;
                   break;
                 }
                 const long long value = PyLong_AsLongLong(id.ptr());
                 if (value == -1 && PyErr_Occurred()) PyErr_Clear();  // beyond long long: out of range too
                 if (value < 0 || value >= m.model.config.vocab_size)
                   raise_raspc_error("InputError", "ids: error: " + std::string(py::repr(id)) +
                                                       " is no token id of this model (0 to " +
                                                       std::to_string(m.model.config.vocab_size - 1) + ")");
                 ids.push_back(int(value));
               }
             if (!ints) raise_raspc_error("InputError", "ids: error: must be the forward's token ids, a list of ints");
             // What can fail past the shape check is the file's placement metadata.
             const auto array = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(residual);
             if (!array) {
               PyErr_Clear();  // ensure's own conversion error: ours says what is wanted
               raise_raspc_error("InputError", "residual: error: must be the forward's stream, a float array");
             }
             return translating_errors("FileError", [&] { return decode_stream(m, array, ids); });
           },
           py::arg("residual"), py::arg("ids"))
      .def("save",
           [](const PyModel& m, const std::string& path) {
             translating_errors("FileError", [&] {
               py::gil_scoped_release release;
               check_output_path(path, "path", m.sources);
               save_model(m.model, path);
             });
           },
           py::arg("path"))
      .def("export",
           [](const PyModel& m, const std::string& path, const std::string& format) {
             ExportFormat parsed = translating_errors("InputError", [&] { return parse_export_format(format, "format"); });
             translating_errors("FileError", [&] {
               py::gil_scoped_release release;
               export_model(m.model, parsed, path, m.sources, "path");
             });
           },
           py::arg("path"), py::arg("format"))
      // The page `raspc view` writes for this input (view/html_view.hpp): one function serves both.
      .def("view",
           [](PyModel& m, const py::handle& tokens, const std::string& title) {
             const std::vector<int> ids =
                 translating_errors("InputError", [&] { return with_bos(m.model, model_input(m.model, tokens)); });
             return translating_errors("FileError", [&] {
               py::gil_scoped_release release;
               std::lock_guard<std::mutex> lock(m.mutex);
               return view_page(m.model, m.backend_for(Device::Cpu), ids, title);
             });
           },
           py::arg("tokens"), py::arg("title"))
      .def("summary_html", [](const PyModel& m, const std::string& title) { return summary_html(m.model, title); },
           py::arg("title"))
      // View.save: the page written as every file raspc writes is (a temporary name, then
      // renamed), never over the files the model came from.
      .def("write_page",
           [](const PyModel& m, const std::string& path, const std::string& page) {
             translating_errors("FileError", [&] {
               check_output_path(path, "path", m.sources);
               write_file_atomically(path, page);
             });
           },
           py::arg("path"), py::arg("page"))
      .def("describe", [](const PyModel& m) { return describe_model(m.model); })
      .def(
          "format_tensor",
          [](const PyModel& m, const std::string& name) {
            return translating_errors("InputError", [&] { return format_tensor(m.model, name); });
          },
          py::arg("name"));

  module.def(
      "load",
      [](const std::string& path) {
        return translating_errors("FileError", [&] {
          auto model = std::make_shared<PyModel>();
          py::gil_scoped_release release;
          model->model = load_model(path);
          model->sources.push_back(path);
          return model;
        });
      },
      py::arg("path"));
  module.def(
      "compile",
      [](const PyProgram& program, const py::object& vocab, int max_len, bool causal, bool layer_norm,
         const std::string& activation, bool verify, int verify_len, long samples, uint64_t seed,
         const std::string& device, const std::string& dump_after, bool explain, const py::object& progress,
         int threads) {
        CompileOptions options = translating_errors("InputError", [&] {
          return compile_options(program, vocab, max_len, causal, layer_norm, activation, verify, verify_len, samples,
                                 seed, device, dump_after, explain, progress, threads);
        });
        return translating_errors("CompileError", [&] { return compile(program, options); });
      },
      py::arg("program"), py::arg("vocab"), py::arg("max_len"), py::arg("causal"), py::arg("layer_norm"),
      py::arg("activation"), py::arg("verify"), py::arg("verify_len"), py::arg("samples"), py::arg("seed"),
      py::arg("device"), py::arg("dump_after"), py::arg("explain"), py::arg("progress"), py::arg("threads") = 0);
}

}  // namespace raspc::python
