// Statements, calls, `load`, the built-in functions, and the standard library's setup.
#include "language/evaluate.hpp"

#include <algorithm>
#include <filesystem>

#include "language/evaluate_internal.hpp"
#include "language/parse.hpp"
#include "support/edit_distance.hpp"

namespace raspc {

extern const char* const kStdlibSource;

namespace {

std::string arguments(size_t n) { return std::to_string(n) + (n == 1 ? " argument" : " arguments"); }

}  // namespace

Evaluator::Evaluator(Program& program) : program_(program) {}

void Evaluator::load_library() {
  library_ = new_env(nullptr);
  auto builtin = [&](const char* name, Builtin b) {
    CValue c;
    c.kind = CValue::Kind::Builtin;
    c.builtin = b;
    library_->vars[name] = c;
  };
  Node tokens;
  tokens.kind = NodeKind::Tokens;
  tokens.name = "tokens";
  Node indices;
  indices.kind = NodeKind::Indices;
  indices.name = "indices";
  library_->vars["tokens"] = CValue::of_node(add_node(tokens), false);
  library_->vars["indices"] = CValue::of_node(add_node(indices), false);
  library_->vars["True"] = CValue::of_atom(Value::of_bool(true));
  library_->vars["False"] = CValue::of_atom(Value::of_bool(false));
  builtin("aggregate", Builtin::Aggregate);
  builtin("selector_width", Builtin::SelectorWidth);
  builtin("range", Builtin::Range);
  builtin("zip", Builtin::Zip);
  builtin("len", Builtin::Len);
  builtin("round", Builtin::Round);
  builtin("indicator", Builtin::Indicator);
  builtin("categorical", Builtin::Categorical);
  builtin("numerical", Builtin::Numerical);

  auto file = std::make_shared<SourceFile>();
  file->name = kLibraryFileName;
  file->text = kStdlibSource;
  modules_.push_back(parse_module(file));
  in_library_ = true;
  exec_block(modules_.back()->statements, Context{library_, false});
  in_library_ = false;
  for (auto& [name, value] : library_->vars)
    if ((value.is_sop() || value.is_selector()) && program_.nodes[size_t(value.node)].name.empty())
      program_.nodes[size_t(value.node)].name = name;
}

void Evaluator::check_bindable(const std::string& name, const Span& span) {
  if (!in_library_ && library_->vars.count(name))
    fail(span, "`" + name + "` is a name of the standard library and cannot be reassigned; choose another name");
}

void Evaluator::bind(const std::string& name, const Span& span, const CValue& value, const Context& ctx) {
  check_bindable(name, span);
  auto [slot, inserted] = ctx.env->vars.insert_or_assign(name, value);
  (void)slot;
  if (inserted) ctx.env->order.push_back(name);
  if (!ctx.main_top_level) return;
  auto& named = program_.named;
  auto listed = std::find_if(named.begin(), named.end(), [&](const auto& entry) { return entry.first == name; });
  if (value.is_sop() || value.is_selector()) {
    Node& node = program_.nodes[size_t(value.node)];
    if (node.name.empty()) node.name = name;
    if (listed != named.end()) listed->second = value.node;
    else named.emplace_back(name, value.node);
    if (value.is_sop()) last_assigned_ = value.node;
  } else if (listed != named.end()) {
    named.erase(listed);
  }
}

void Evaluator::exec_block(const std::vector<std::unique_ptr<Stmt>>& body, const Context& ctx) {
  for (const auto& s : body) exec(*s, ctx);
}

void Evaluator::exec(const Stmt& s, const Context& ctx) {
  if (ctx.main_top_level) top_statement_ = s.span;
  switch (s.kind) {
    case StmtKind::Expression: {
      CValue v = eval(*s.exprs[0], ctx.env);
      if (ctx.main_top_level) last_expression_ = {v, s.exprs[0]->span};
      return;
    }
    case StmtKind::Assign: {
      std::vector<CValue> values;
      for (const auto& e : s.exprs) values.push_back(eval(*e, ctx.env));
      if (values.size() == 1 && s.names.size() > 1) {
        // `a, b = f(x)` unpacks a function's several return values (a list).
        if (values[0].kind != CValue::Kind::List)
          fail(s.exprs[0]->span, "cannot unpack " + describe(values[0]) + " into " + std::to_string(s.names.size()) +
                                     " names; give one value per name");
        values = *values[0].list;
      }
      if (values.size() != s.names.size())
        fail(s.span, "this assignment has " + std::to_string(s.names.size()) + (s.names.size() == 1 ? " name" : " names") +
                         " but " + std::to_string(values.size()) + (values.size() == 1 ? " value" : " values"));
      for (size_t i = 0; i < values.size(); ++i) {
        bind(s.names[i], s.name_spans[i], values[i], ctx);
        // Inside a user's def (not the library's), the name labels the node until a top-level one does.
        const CValue& v = values[i];
        if (!ctx.main_top_level && !in_library_ && (v.is_sop() || v.is_selector())) {
          Node& node = program_.nodes[size_t(v.node)];
          if (node.local_name.empty()) node.local_name = s.names[i];
        }
      }
      return;
    }
    case StmtKind::Def: {
      functions_.push_back(std::make_unique<Function>(Function{&s, ctx.env, in_library_}));
      CValue f;
      f.kind = CValue::Kind::Function;
      f.function = functions_.back().get();
      bind(s.name, s.name_span, f, ctx);
      return;
    }
    case StmtKind::Return: fail(s.span, "`return` is only allowed as the last statement of a `def`");
    case StmtKind::For: {
      std::vector<CValue> items = iterate(eval(*s.exprs[0], ctx.env), s.exprs[0]->span);
      for (const CValue& item : items) {
        bind_loop_names(s.names, s.name_spans, item, s.exprs[0]->span, ctx);
        exec_block(s.body, ctx);
      }
      return;
    }
    case StmtKind::Load: load_file(s, ctx); return;
  }
}

std::vector<CValue> Evaluator::iterate(const CValue& iterable, const Span& span) {
  switch (iterable.kind) {
    case CValue::Kind::List: return *iterable.list;
    case CValue::Kind::Dict: {
      std::vector<CValue> keys;
      for (const Value& k : iterable.dict->keys) keys.push_back(CValue::of_atom(k));
      return keys;
    }
    case CValue::Kind::Atom:
      if (iterable.atom.is_string()) {
        std::vector<CValue> chars;
        for (char c : iterable.atom.string()) chars.push_back(CValue::of_atom(Value::of_string(std::string(1, c))));
        return chars;
      }
      break;
    default: break;
  }
  fail(span, "cannot iterate over " + describe(iterable) + "; a loop needs a list, a dictionary or a string");
}

void Evaluator::bind_loop_names(const std::vector<std::string>& names, const std::vector<Span>& spans,
                                const CValue& item, const Span& item_span, const Context& ctx) {
  if (names.size() == 1) return bind(names[0], spans[0], item, ctx);
  if (item.kind != CValue::Kind::List || item.list->size() != names.size())
    fail(item_span, "each item must be a list of " + std::to_string(names.size()) + " values to unpack into " +
                        std::to_string(names.size()) + " loop variables, but one is " + describe(item) +
                        (item.kind == CValue::Kind::List ? " of length " + std::to_string(item.list->size()) : ""));
  for (size_t i = 0; i < names.size(); ++i) bind(names[i], spans[i], (*item.list)[i], ctx);
}

void Evaluator::load_file(const Stmt& s, const Context& ctx) {
  namespace fs = std::filesystem;
  fs::path folder = fs::path(s.span.file->name).parent_path();
  fs::path path = folder / (s.name + ".rasp");
  std::error_code error;
  if (!fs::is_regular_file(path, error))
    fail(s.span, "cannot load \"" + s.name + "\": there is no file " + path.string());
  std::string key = fs::weakly_canonical(path, error).string();
  if (std::find(loading_.begin(), loading_.end(), key) != loading_.end())
    fail(s.span, "\"" + s.name + "\" is already being loaded; files cannot load each other in a cycle");
  Env* module_env;
  auto cached = loaded_.find(key);
  if (cached != loaded_.end()) {
    module_env = cached->second;
  } else {
    modules_.push_back(parse_module(read_source_file(path.string())));
    module_env = new_env(library_);
    loading_.push_back(key);
    exec_block(modules_.back()->statements, Context{module_env, false});
    loading_.pop_back();
    loaded_[key] = module_env;
  }
  for (const std::string& name : module_env->order)
    if (name.empty() || name[0] != '_') bind(name, s.span, module_env->vars.at(name), ctx);
}

void Evaluator::undefined_name(const std::string& name, const Span& span, const Env* env) {
  // The closest name by edit distance; ties go to the innermost scope, then alphabetical order.
  std::string best;
  size_t best_distance = std::max<size_t>(1, std::min<size_t>(2, name.size() / 3)) + 1;
  for (const Env* e = env; e; e = e->parent) {
    std::string level_best;
    size_t level_distance = best_distance;
    for (const auto& [candidate, value] : e->vars) {
      (void)value;
      size_t d = edit_distance(name, candidate);
      if (d < level_distance || (d == level_distance && !level_best.empty() && candidate < level_best)) {
        level_distance = d;
        level_best = candidate;
      }
    }
    if (!level_best.empty() && level_distance < best_distance) {
      best = level_best;
      best_distance = level_distance;
    }
  }
  if (!best.empty()) fail(span, "undefined name `" + name + "`; did you mean `" + best + "`?");
  fail(span, "undefined name `" + name + "`");
}

CValue Evaluator::call(const Expr& e, Env* env) {
  const Expr& callee_expr = *e.children[0];
  CValue callee = eval(callee_expr, env);
  std::vector<CValue> args;
  for (size_t i = 1; i < e.children.size(); ++i) args.push_back(eval(*e.children[i], env));
  if (callee.kind == CValue::Kind::Function) return call_function(*callee.function, e, args);
  if (callee.kind == CValue::Kind::Builtin) return call_builtin(callee.builtin, e, args);
  if (callee_expr.kind == ExprKind::Name)
    fail(callee_expr.span, "cannot call `" + callee_expr.text + "`: it is " + describe(callee) + ", not a function");
  fail(callee_expr.span, "cannot call this expression: it is " + describe(callee) + ", not a function");
}

CValue Evaluator::call_function(const Function& f, const Expr& call_expr, std::vector<CValue>& args) {
  const Stmt& def = *f.def;
  if (args.size() != def.names.size())
    fail(call_expr.span, "`" + def.name + "` takes " + arguments(def.names.size()) + " but was given " +
                             std::to_string(args.size()));
  if (call_depth_ >= kMaxCallDepth)
    fail(call_expr.span, "the call of `" + def.name + "` nests deeper than " + std::to_string(kMaxCallDepth) +
                             " calls; does its recursion lack a base case?");
  // Restores the caller's state however the call ends.
  struct Frame {
    Evaluator& ev;
    bool in_library;
    std::optional<Span> call_span;
    std::string function;
    std::string current;
    Span current_call;
    ~Frame() {
      --ev.call_depth_;
      ev.current_function_ = current;
      ev.current_call_ = current_call;
      ev.in_library_ = in_library;
      ev.library_call_span_ = call_span;
      ev.library_function_ = function;
    }
  } frame{*this, in_library_, library_call_span_, library_function_, current_function_, current_call_};
  ++call_depth_;
  current_function_ = def.name;
  current_call_ = call_expr.span;
  if (f.library && !library_call_span_) {
    library_call_span_ = call_expr.span;
    library_function_ = def.name;
  }
  in_library_ = f.library;
  Context ctx{new_env(f.closure), false};
  for (size_t i = 0; i < args.size(); ++i) bind(def.names[i], def.name_spans[i], args[i], ctx);
  for (size_t i = 0; i + 1 < def.body.size(); ++i) exec(*def.body[i], ctx);
  const Stmt& ret = *def.body.back();
  if (ret.exprs.size() == 1) return eval(*ret.exprs[0], ctx.env);
  CList values;
  for (const auto& e : ret.exprs) values.push_back(eval(*e, ctx.env));
  return CValue::of_list(std::move(values));
}

CValue Evaluator::call_builtin(Builtin b, const Expr& call_expr, std::vector<CValue>& args) {
  static const char* const kNames[] = {"aggregate", "selector_width", "range",       "zip",      "len",
                                       "round",     "indicator",      "categorical", "numerical"};
  const std::string name = kNames[int(b)];
  auto arg_span = [&](size_t i) -> const Span& { return call_expr.children[i + 1]->span; };
  auto expect_count = [&](size_t low, size_t high) {
    if (args.size() >= low && args.size() <= high) return;
    std::string count = low == high ? arguments(low)
                                    : std::to_string(low) + (high == low + 1 ? " or " : " to ") + arguments(high);
    fail(call_expr.span, "`" + name + "` takes " + count + " but was given " + std::to_string(args.size()));
  };
  auto integer = [&](size_t i) -> int64_t {
    const CValue& v = args[i];
    int64_t small = 0;
    if (v.is_atom() && v.atom.is_number() && v.atom.number.to_int64(small)) return small;
    if (v.is_atom() && v.atom.is_bool()) return v.atom.boolean;
    fail(arg_span(i), "`" + name + "` needs integer arguments, not " +
                          (v.is_atom() ? to_source(v.atom) : describe(v)));
  };
  switch (b) {
    case Builtin::Aggregate: {
      expect_count(2, 3);
      if (!args[0].is_selector())
        fail(arg_span(0), "the first argument of `aggregate` must be a selector, not " + describe(args[0]));
      Node n;
      n.kind = NodeKind::Aggregate;
      n.span = node_span(call_expr.span);
      n.inputs = {args[0].node, as_sop(args[1], arg_span(1), "the value of `aggregate`")};
      n.default_value = args.size() == 3 ? atom_of(args[2], arg_span(2), "the default of `aggregate`") : Value::of_int(0);
      return CValue::of_node(add_node(std::move(n)), false);
    }
    case Builtin::SelectorWidth: {
      expect_count(1, 1);
      if (!args[0].is_selector())
        fail(arg_span(0), "the argument of `selector_width` must be a selector, not " + describe(args[0]));
      Node n;
      n.kind = NodeKind::SelectorWidth;
      n.span = node_span(call_expr.span);
      n.inputs = {args[0].node};
      return CValue::of_node(add_node(std::move(n)), false);
    }
    case Builtin::Range: {
      expect_count(1, 3);
      int64_t start = 0, stop, step = 1;
      if (args.size() == 1) {
        stop = integer(0);
      } else {
        start = integer(0);
        stop = integer(1);
        if (args.size() == 3) step = integer(2);
      }
      if (step == 0) fail(arg_span(2), "the step of `range` cannot be zero");
      __int128 count = step > 0 ? (__int128(stop) - start + step - 1) / step : (__int128(start) - stop - step - 1) / -step;
      if (count > 1000000) fail(call_expr.span, "this range has more than a million elements");
      CList items;
      for (__int128 i = 0; i < count; ++i) items.push_back(CValue::of_atom(Value::of_int(int64_t(start + i * step))));
      return CValue::of_list(std::move(items));
    }
    case Builtin::Zip: {
      if (args.empty()) fail(call_expr.span, "`zip` takes at least 1 argument but was given 0");
      size_t shortest = SIZE_MAX;
      for (size_t i = 0; i < args.size(); ++i) {
        if (args[i].kind != CValue::Kind::List) fail(arg_span(i), "`zip` takes lists, not " + describe(args[i]));
        shortest = std::min(shortest, args[i].list->size());
      }
      CList rows;
      for (size_t r = 0; r < shortest; ++r) {
        CList row;
        for (const CValue& a : args) row.push_back((*a.list)[r]);
        rows.push_back(CValue::of_list(std::move(row)));
      }
      return CValue::of_list(std::move(rows));
    }
    case Builtin::Len: {
      expect_count(1, 1);
      const CValue& v = args[0];
      if (v.kind == CValue::Kind::List) return CValue::of_atom(Value::of_int(int64_t(v.list->size())));
      if (v.kind == CValue::Kind::Dict) return CValue::of_atom(Value::of_int(int64_t(v.dict->keys.size())));
      if (v.is_atom() && v.atom.is_string()) return CValue::of_atom(Value::of_int(int64_t(v.atom.string().size())));
      if (v.is_sop()) fail(arg_span(0), "`len` takes a list, a dictionary or a string; for an s-op's length use `length`");
      fail(arg_span(0), "`len` takes a list, a dictionary or a string, not " + describe(v));
    }
    case Builtin::Round:
    case Builtin::Indicator: {
      expect_count(1, 1);
      ElementOp op = b == Builtin::Round ? ElementOp::Round : ElementOp::Indicator;
      if (args[0].is_atom()) return CValue::of_atom(fold(op, call_expr.span, {args[0].atom}));
      if (args[0].is_sop()) return CValue::of_node(elementwise(op, call_expr.span, {args[0].node}), false);
      fail(arg_span(0), "`" + name + "` takes an s-op or an atom, not " + describe(args[0]));
    }
    case Builtin::Categorical:
    case Builtin::Numerical: {
      expect_count(1, 1);
      if (args[0].is_atom()) return args[0];
      if (!args[0].is_sop()) fail(arg_span(0), "`" + name + "` takes an s-op, not " + describe(args[0]));
      Encoding wanted = b == Builtin::Categorical ? Encoding::Categorical : Encoding::Numerical;
      Node& node = program_.nodes[size_t(args[0].node)];
      if (node.annotation != Encoding::Unspecified && node.annotation != wanted)
        fail(call_expr.span, "this s-op is already annotated " +
                                 std::string(wanted == Encoding::Categorical ? "numerical" : "categorical") +
                                 "; an s-op has one encoding");
      node.annotation = wanted;
      return args[0];
    }
  }
  return CValue();
}

void Evaluator::run_main(const std::shared_ptr<const SourceFile>& source, const EvaluateOptions& options) {
  load_library();
  // The main file counts as being loaded, so a file that loads it back is a cycle.
  std::error_code error;
  loading_.push_back(std::filesystem::weakly_canonical(source->name, error).string());
  modules_.push_back(parse_module(source));
  exec_block(modules_.back()->statements, Context{new_env(library_), true});
  if (!options.output_name.empty()) {
    program_.output = program_.find(options.output_name);
    if (program_.output < 0 || program_.node(program_.output).is_selector()) {
      std::string known;
      for (const auto& [name, id] : program_.named)
        if (!program_.node(id).is_selector()) known += (known.empty() ? "" : ", ") + name;
      fail_file("--output", "the program has no top-level s-op named `" + options.output_name + "`" +
                                (known.empty() ? "" : " (its named s-ops: " + known + ")"));
    }
    return;
  }
  if (last_expression_) {
    const auto& [value, span] = *last_expression_;
    if (value.is_sop()) program_.output = value.node;
    else if (value.is_atom()) program_.output = constant(value.atom, span);
    else fail(span, "the program's output must be an s-op, but its last expression is " + describe(value));
    return;
  }
  if (last_assigned_ >= 0) {
    program_.output = last_assigned_;
    return;
  }
  fail_file(source->name, "the program has no output; end it with an expression statement such as `tokens;`");
}

Program evaluate_program(std::shared_ptr<const SourceFile> source, const EvaluateOptions& options) {
  Program program;
  Evaluator evaluator(program);
  evaluator.run_main(source, options);
  return program;
}

}  // namespace raspc
