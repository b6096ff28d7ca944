// The evaluator's own types: compile-time values and scopes. Internal to language/evaluate*.cpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "language/ast.hpp"
#include "language/evaluate.hpp"

namespace raspc {

struct Env;
struct Function;
struct CValue;
using CList = std::vector<CValue>;

// Functions implemented in C++ rather than in stdlib.rasp: the primitives and Python's helpers.
enum class Builtin : uint8_t { Aggregate, SelectorWidth, Range, Zip, Len, Round, Indicator, Categorical, Numerical };

struct CDict {
  std::vector<Value> keys;  // insertion order, as in Python
  std::vector<CValue> values;
  // d[key] = value: a new key goes last, an existing one keeps its place (Python's rule).
  void set(const Value& key, const CValue& value);
  // The value of `key`, or null. Both by hash: a 200,000-entry comprehension stays linear.
  const CValue* find(const Value& key) const;

 private:
  std::unordered_map<Value, size_t, ValueHash> position_;
};

// A compile-time value: an atom, a list or dict of values, a function, or a node of the Program.
struct CValue {
  enum class Kind : uint8_t { Atom, List, Dict, Function, Builtin, SOp, Selector };
  Kind kind = Kind::Atom;
  Value atom;
  std::shared_ptr<const CList> list;
  std::shared_ptr<const CDict> dict;
  const Function* function = nullptr;
  Builtin builtin = Builtin::Aggregate;
  NodeId node = -1;

  static CValue of_atom(const Value& v) {
    CValue c;
    c.atom = v;
    return c;
  }
  static CValue of_node(NodeId id, bool selector) {
    CValue c;
    c.kind = selector ? Kind::Selector : Kind::SOp;
    c.node = id;
    return c;
  }
  static CValue of_list(CList items) {
    CValue c;
    c.kind = Kind::List;
    c.list = std::make_shared<const CList>(std::move(items));
    return c;
  }
  bool is_atom() const { return kind == Kind::Atom; }
  bool is_sop() const { return kind == Kind::SOp; }
  bool is_selector() const { return kind == Kind::Selector; }
};

struct Function {
  const Stmt* def = nullptr;
  Env* closure = nullptr;
  bool library = false;
};

struct Env {
  Env* parent = nullptr;
  std::unordered_map<std::string, CValue> vars;
  std::vector<std::string> order;  // names in the order first bound (for `load`)
  const CValue* find(const std::string& name) const {
    for (const Env* e = this; e; e = e->parent) {
      auto it = e->vars.find(name);
      if (it != e->vars.end()) return &it->second;
    }
    return nullptr;
  }
};

// Calls of `def` functions nest at most this deep; deeper is reported as runaway recursion.
constexpr int kMaxCallDepth = 100;
// Expressions being evaluated nest at most this deep, counting through calls: each level costs
// up to ~1 KB of stack, so this keeps the evaluator within 3 MB of an 8 MB thread stack.
constexpr int kMaxEvalDepth = 3000;
// A program's compile-time work is bounded: nested range loops or comprehensions that would run
// (or fill the memory) for ever stop at this many expression evaluations, loop iterations
// included, with an error at the top-level statement that exceeds it. The largest program of
// programs/ needs well under 1% of it.
constexpr long kMaxEvaluationSteps = 5'000'000;
// The operations (s-op and selector nodes) a program may build; the compiler's passes grow faster
// than linearly with them, and real programs have a few hundred at most.
constexpr int kMaxProgramNodes = 10'000;

class Evaluator {
 public:
  explicit Evaluator(Program& program);
  void run_main(const std::shared_ptr<const SourceFile>& source, const EvaluateOptions& options);

 private:
  // Where statements run: the scope, and whether this is the main file's top level (whose
  // bindings name s-ops and whose last expression is the output).
  struct Context {
    Env* env = nullptr;
    bool main_top_level = false;
  };

  // evaluate.cpp: statements, calls, load, builtins
  void load_library();
  void exec(const Stmt& s, const Context& ctx);
  void exec_block(const std::vector<std::unique_ptr<Stmt>>& body, const Context& ctx);
  void bind(const std::string& name, const Span& span, const CValue& value, const Context& ctx);
  void check_bindable(const std::string& name, const Span& span);
  void load_file(const Stmt& s, const Context& ctx);
  CValue call(const Expr& e, Env* env);
  CValue call_function(const Function& f, const Expr& call_expr, std::vector<CValue>& args);
  CValue call_builtin(Builtin b, const Expr& call_expr, std::vector<CValue>& args);
  [[noreturn]] void undefined_name(const std::string& name, const Span& span, const Env* env);
  std::vector<CValue> iterate(const CValue& iterable, const Span& span);
  void bind_loop_names(const std::vector<std::string>& names, const std::vector<Span>& spans,
                       const CValue& item, const Span& item_span, const Context& ctx);

  // evaluate_ops.cpp: expressions and the Program nodes they build
 public:
  CValue eval(const Expr& e, Env* env);
  CValue eval_unguarded(const Expr& e, Env* env);
  [[noreturn]] void fail(const Span& span, const std::string& message) const;
  // Counts `steps` of compile-time work against kMaxEvaluationSteps; past it, refuses the statement.
  void charge(size_t steps, const Span& span);

 private:
  CValue unary(const Expr& e, Env* env);
  CValue binary(const Expr& e, Env* env);
  CValue if_else(const Expr& e, Env* env);
  CValue membership(const Expr& e, Env* env);
  CValue index(const Expr& e, Env* env);
  CValue select(const Expr& e, Env* env);
  CValue comprehension(const Expr& e, Env* env);
  Value fold(ElementOp op, const Span& span, std::vector<Value> inputs) const;
  NodeId as_sop(const CValue& v, const Span& span, const char* role);
  NodeId add_node(Node node);
  NodeId constant(const Value& v, const Span& span);
  NodeId elementwise(ElementOp op, const Span& span, std::vector<NodeId> inputs);
  Span node_span(const Span& span) const { return library_call_span_ ? *library_call_span_ : span; }
  Value atom_of(const CValue& v, const Span& span, const char* role) const;
  std::string describe(const CValue& v) const;

  Program& program_;
  std::vector<std::unique_ptr<Module>> modules_;
  std::vector<std::unique_ptr<Env>> envs_;
  std::vector<std::unique_ptr<Function>> functions_;
  Env* library_ = nullptr;
  bool in_library_ = false;                  // executing stdlib.rasp (at load or in a call)
  std::optional<Span> library_call_span_;    // the user's call of the library function running now
  std::string library_function_;
  int call_depth_ = 0;
  int eval_depth_ = 0;
  long steps_ = 0;       // expressions evaluated so far, against kMaxEvaluationSteps
  Span top_statement_;   // the main file's top-level statement running now, for the limit's error
  std::string current_function_;  // the innermost `def` being called, for depth errors
  Span current_call_;             // and where it was called
  std::unordered_map<std::string, NodeId> node_index_;  // identical nodes are built once
  std::unordered_map<std::string, Env*> loaded_;        // file path -> its top-level scope
  std::vector<std::string> loading_;                     // files being loaded, for cycles
  // Candidates for the output: the last expression statement, the last s-op assigned.
  std::optional<std::pair<CValue, Span>> last_expression_;
  NodeId last_assigned_ = -1;

  Env* new_env(Env* parent) {
    envs_.push_back(std::make_unique<Env>());
    envs_.back()->parent = parent;
    return envs_.back().get();
  }
};

}  // namespace raspc
