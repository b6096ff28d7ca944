// The evaluator: the compile-time language, the Program shapes it builds for each desugaring,
// naming and output rules, and the standard library run through the interpreter.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/interpret.hpp"

using namespace raspc;

namespace {

std::shared_ptr<const SourceFile> source(const std::string& text, const std::string& name = "t.rasp") {
  auto file = std::make_shared<SourceFile>();
  file->name = name;
  file->text = text;
  return file;
}

Program program_of(const std::string& text, const std::string& output = "") {
  EvaluateOptions options;
  options.output_name = output;
  return evaluate_program(source(text), options);
}

std::string show(const std::vector<Value>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += to_display(values[i]);
  }
  return out + "]";
}

std::string run(const std::string& text, const std::string& input, Mode mode = Mode::Bidirectional) {
  Program program = program_of(text);
  Interpreter interpreter(program, mode);
  return show(interpreter.run(parse_input(input)));
}

const Node& output_node(const Program& p) { return p.node(p.output); }

}  // namespace

TEST_CASE("evaluate: the output is the last expression statement") {
  Program p = program_of("a = tokens; indices; b = tokens + 1;");
  CHECK(output_node(p).kind == NodeKind::Indices);
  CHECK(run("a = tokens; indices; b = indices + 1;", "abc") == "[0,1,2]");
  // Without an expression statement, the last s-op assigned.
  CHECK(run("a = indices * 2; b = 7; c = 3;", "abc") == "[0,2,4]");
  // An atom output is broadcast.
  CHECK(run("1 + 2;", "abc") == "[3,3,3]");
  // --output picks a named s-op.
  Program chosen = program_of("a = indices * 2; b = indices + 1; b;", "a");
  CHECK(chosen.output == chosen.find("a"));
}

TEST_CASE("evaluate: top-level names label s-ops, library names are not listed") {
  Program p = program_of("x = tokens; y = x == \"a\"; z = y; s = select(x, x, ==); def f(q) { inner = q + 1; return inner; } w = f(indices); y;");
  std::vector<std::string> names;
  for (const auto& [name, id] : p.named) names.push_back(name);
  CHECK(names == std::vector<std::string>{"x", "y", "z", "s", "w"});
  CHECK(p.node(p.find("x")).kind == NodeKind::Tokens);
  CHECK(p.node(p.find("x")).name == "tokens");  // the input keeps its own name
  CHECK(p.node(p.find("y")).name == "y");
  CHECK(p.find("z") == p.find("y"));
  CHECK(p.node(p.find("s")).kind == NodeKind::Select);
  CHECK(p.node(p.find("w")).name == "w");  // not "inner": names inside a def do not label
  CHECK(p.find("length") == -1);
  CHECK(p.label(p.find("y")) == "y");
  // A name rebound to an atom is no longer an s-op name.
  Program q = program_of("a = tokens; a = 3; tokens;");
  CHECK(q.find("a") == -1);
}

TEST_CASE("evaluate: names inside a user's def label the nodes no top-level name labels, with their ids") {
  Program p = program_of("def f(q) { inner = q + 1; kept = inner * 2; return kept; } w = f(indices); w;");
  const NodeId w = p.find("w");
  CHECK(p.label(w) == "w");  // the top-level name wins
  const NodeId inner = p.node(w).inputs[0];
  CHECK(p.label(inner) == "inner#" + std::to_string(inner));
  // Called twice, a def names two nodes alike; the ids tell them apart.
  Program twice = program_of("def f(q) { inner = q + 1; return inner * 2; } f(indices) + f(tokens == \"a\");");
  std::vector<std::string> labels;
  for (NodeId id = 0; id < NodeId(twice.nodes.size()); ++id)
    if (twice.node(id).local_name == "inner") labels.push_back(twice.label(id));
  REQUIRE(labels.size() == 2);
  CHECK(labels[0] != labels[1]);
  // The library's own names inside its defs label nothing.
  Program sorted = program_of("sort(tokens, tokens);");
  for (const Node& node : sorted.nodes) CHECK(node.local_name.empty());
}

TEST_CASE("evaluate: a message names a node as the source does: its name, else its expression and where") {
  Program p = program_of("def f(q) {\n  inner = q + 1;\n  return inner * 2;\n}\nw = f(indices);\n"
                         "s = sort(tokens, tokens);\naggregate(select(indices, indices, ==),\n          w);");
  CHECK(p.describe(p.find("w")) == "`w`");
  const NodeId inner = p.node(p.find("w")).inputs[0];
  CHECK(p.describe(inner) == "`inner` (`q + 1` at t.rasp:2:11)");
  // A node a library function made is its call in the program.
  const NodeId sorted_input = p.node(p.find("s")).inputs[0];
  CHECK(p.describe(sorted_input) == "`sort(tokens, tokens)` at t.rasp:6:5");
  // An unnamed expression over two lines reads as one, where it starts.
  CHECK(p.describe(p.output) == "`aggregate(select(indices, indices, ==), w)` at t.rasp:7:1");
  CHECK_FALSE(p.named_in_source(p.output));
  // A user's def is the program's: its expressions are where the def has them.
  CHECK(p.source_of(p.find("w")) == "`inner * 2` at t.rasp:3:10");
  // Long sources are cut.
  Program long_one = program_of("selector_width(select(tokens, tokens, ==) and select(indices, indices, <) and "
                                "select(indices, indices, >));");
  CHECK(long_one.describe(long_one.output) ==
        "`selector_width(select(tokens, tokens, ==) and select(indices...` at t.rasp:1:1");
}

TEST_CASE("evaluate: elementwise shapes, operands in source order, atoms as Constant nodes") {
  Program p = program_of("3 - indices;");
  const Node& sub = output_node(p);
  CHECK(sub.kind == NodeKind::Elementwise);
  CHECK(sub.op == ElementOp::Sub);
  REQUIRE(sub.inputs.size() == 2);
  CHECK(p.node(sub.inputs[0]).kind == NodeKind::Constant);
  CHECK(p.node(sub.inputs[0]).constant == Value::of_int(3));
  CHECK(p.node(sub.inputs[1]).kind == NodeKind::Indices);

  Program c = program_of("\"a\" if indices % 2 == 1 else tokens;");
  const Node& ifelse = output_node(c);
  CHECK(ifelse.op == ElementOp::IfElse);
  REQUIRE(ifelse.inputs.size() == 3);
  CHECK(c.node(ifelse.inputs[0]).constant == Value::of_string("a"));
  CHECK(c.node(ifelse.inputs[1]).op == ElementOp::Eq);
  CHECK(c.node(ifelse.inputs[2]).kind == NodeKind::Tokens);

  CHECK(output_node(program_of("not tokens;")).op == ElementOp::Not);
  CHECK(output_node(program_of("-indices;")).op == ElementOp::Neg);
  CHECK(output_node(program_of("round(indices / 2);")).op == ElementOp::Round);
  CHECK(output_node(program_of("indicator(tokens == \"a\");")).op == ElementOp::Indicator);
  CHECK(output_node(program_of("tokens and indices;")).op == ElementOp::And);
  // Atoms fold at compile time: no node but the broadcast constant.
  Program folded = program_of("x = 2 ^ 3 * 2; x;");
  CHECK(output_node(folded).kind == NodeKind::Constant);
  CHECK(output_node(folded).constant == Value::of_int(16));
}

TEST_CASE("evaluate: tables from lists, dicts and strings") {
  Program p = program_of("tokens in [\"a\", \"e\"];");
  const Node& in = output_node(p);
  CHECK(in.op == ElementOp::InTable);
  CHECK(in.table_keys == std::vector<Value>{Value::of_string("a"), Value::of_string("e")});
  CHECK(p.node(in.inputs[0]).kind == NodeKind::Tokens);

  Program d = program_of("{\"a\": 1, \"b\": 2}[tokens];");
  const Node& lookup = output_node(d);
  CHECK(lookup.op == ElementOp::LookupTable);
  CHECK(lookup.table_keys == std::vector<Value>{Value::of_string("a"), Value::of_string("b")});
  CHECK(lookup.table_values == std::vector<Value>{Value::of_int(1), Value::of_int(2)});

  Program l = program_of("[10, 20, 30][indices];");
  CHECK(output_node(l).table_keys == std::vector<Value>{Value::of_int(0), Value::of_int(1), Value::of_int(2)});
  CHECK(output_node(l).table_values == std::vector<Value>{Value::of_int(10), Value::of_int(20), Value::of_int(30)});

  Program s = program_of("\"xyz\"[indices];");
  CHECK(output_node(s).table_values ==
        std::vector<Value>{Value::of_string("x"), Value::of_string("y"), Value::of_string("z")});
  CHECK(run("\"xyz\"[indices];", "abc") == "[x,y,z]");
  CHECK(run("{\"a\": 1, \"b\": 2}[tokens] * 10;", "abba") == "[10,20,20,10]");
  CHECK(run("tokens in \"aeiou\";", "hello") == "[False,True,False,False,True]");
  CHECK(run("tokens in {\"h\": 0};", "hey") == "[True,False,False]");
}

TEST_CASE("evaluate: sop[i] and atom-in-sop are one attention step") {
  Program p = program_of("tokens[2];");
  const Node& agg = output_node(p);
  CHECK(agg.kind == NodeKind::Aggregate);
  CHECK(agg.default_value == Value::of_int(0));
  const Node& sel = p.node(agg.inputs[0]);
  CHECK(sel.kind == NodeKind::Select);
  CHECK(sel.comparison == Comparison::Eq);
  CHECK(p.node(sel.inputs[0]).kind == NodeKind::Indices);
  CHECK(p.node(sel.inputs[1]).constant == Value::of_int(2));
  CHECK(p.node(agg.inputs[1]).kind == NodeKind::Tokens);

  Program n = program_of("tokens[-1];");
  const Node& from_end = n.node(n.node(output_node(n).inputs[0]).inputs[1]);
  CHECK(from_end.op == ElementOp::Add);
  CHECK(n.node(from_end.inputs[0]).name == "length");
  CHECK(n.node(from_end.inputs[1]).constant == Value::of_int(-1));
  CHECK(run("tokens[-2];", "[4,7,10]") == "[7,7,7]");

  Program in = program_of("\"e\" in tokens;");
  const Node& eq = output_node(in);
  CHECK(eq.op == ElementOp::Eq);
  const Node& mean = in.node(eq.inputs[0]);
  CHECK(mean.kind == NodeKind::Aggregate);
  CHECK(in.node(mean.inputs[1]).constant == Value::of_int(1));
  const Node& find = in.node(mean.inputs[0]);
  CHECK(find.kind == NodeKind::Select);
  CHECK(in.node(find.inputs[0]).kind == NodeKind::Tokens);
  CHECK(in.node(find.inputs[1]).constant == Value::of_string("e"));
  CHECK(in.node(eq.inputs[1]).constant == Value::of_int(1));
  CHECK(run("\"x\" in tokens;", "hey") == "[False,False,False]");
  CHECK(run("\"e\" in tokens;", "hey", Mode::Causal) == "[False,True,True]");
}

TEST_CASE("evaluate: selector algebra and annotations") {
  Program p = program_of("a = select(tokens, tokens, ==); b = select(indices, indices, <); c = not (a and b) or a; selector_width(c);");
  const Node& sw = output_node(p);
  CHECK(sw.kind == NodeKind::SelectorWidth);
  const Node& orr = p.node(sw.inputs[0]);
  CHECK(orr.kind == NodeKind::SelectOr);
  CHECK(p.node(orr.inputs[0]).kind == NodeKind::SelectNot);
  CHECK(p.node(p.node(orr.inputs[0]).inputs[0]).kind == NodeKind::SelectAnd);
  CHECK(orr.inputs[1] == p.find("a"));

  Program annotated = program_of("x = numerical(aggregate(select(indices, indices, <=), indicator(tokens == \"a\"))); y = categorical(tokens); x;");
  CHECK(output_node(annotated).annotation == Encoding::Numerical);
  CHECK(annotated.node(annotated.find("y")).annotation == Encoding::Categorical);
}

TEST_CASE("evaluate: identical computations share one node") {
  Program p = program_of("a = select(tokens, tokens, ==); b = select(tokens, tokens, ==); c = tokens + 1; d = tokens + 1; c;");
  CHECK(p.find("a") == p.find("b"));
  CHECK(p.find("c") == p.find("d"));
  // Every input precedes its node.
  for (size_t id = 0; id < p.nodes.size(); ++id)
    for (NodeId in : p.nodes[id].inputs) CHECK(size_t(in) < id);
}

TEST_CASE("evaluate: compile-time values follow Python") {
  CHECK(run("True + 1;", "a") == "[2]");
  CHECK(run("7 / 2;", "a") == "[7/2]");
  CHECK(run("1.5 * 2;", "a") == "[3]");
  CHECK(run("-7 % 3;", "a") == "[2]");
  CHECK(run("len([1, 2, 3]) + len(\"ab\") + len({1: 2});", "a") == "[6]");
  CHECK(run("sum = 0; for x in range(5) { sum = sum + x; } sum;", "a") == "[10]");
  CHECK(run("range(2, 10, 3)[2];", "a") == "[8]");
  CHECK(run("range(5, 0, -2)[1];", "a") == "[3]");
  CHECK(run("l = [x * x for x in range(4)]; l[-1];", "a") == "[9]");
  CHECK(run("d = {x: x + 1 for x in [1, 2]}; d[2];", "a") == "[3]");
  CHECK(run("t = 0; for a, b in zip([1, 2], [10, 20]) { t = t + a * b; } t;", "a") == "[50]");
  CHECK(run("t = \"\"; for k in {\"x\": 1, \"y\": 2} { t = t + k; } t;", "a") == "[xy]");
  CHECK(run("\"abc\"[1];", "a") == "[b]");
  CHECK(run("2 in [1, 2];", "a") == "[True]");
  CHECK(run("\"bc\" in \"abcd\";", "a") == "[True]");
  CHECK(run("([1] + [2, 3])[2];", "a") == "[3]");
  CHECK(run("x = 1 if False else 2; x;", "a") == "[2]");
  CHECK(run("a, b = 1, 2; a, b = b, a; a * 10 + b;", "a") == "[21]");
  CHECK(run("2 ^ 3 ^ 2;", "a") == "[64]");
  CHECK(run("round(2.5) + round(3.5);", "a") == "[6]");
}

TEST_CASE("evaluate: def, several return values, nesting, closures and recursion") {
  CHECK(run("def f(x) { return x + 1, x * 2; } a, b = f(indices); a + b;", "abc") == "[1,4,7]");
  CHECK(run("def outer(x) { def inner(y) { return y * 10; } return inner(x) + 1; } outer(indices);", "ab") ==
        "[1,11]");
  CHECK(run("k = 5; def add_k(x) { return x + k; } add_k(indices);", "ab") == "[5,6]");
  CHECK(run("def fact(n) { return 1 if n == 0 else n * fact(n - 1); } fact(10);", "a") == "[3628800]");
  CHECK(run("def f() { return tokens; } f();", "ab") == "[a,b]");
  // Parameters and locals stay inside the function.
  CHECK(run("x = 1; def f(x) { y = x; return y; } f(2) + x;", "a") == "[3]");
}

TEST_CASE("evaluate: load brings in another file's public names") {
  namespace fs = std::filesystem;
  fs::path folder = fs::temp_directory_path() / ("raspc_load_test_" + std::to_string(::getpid()));
  fs::create_directories(folder);
  std::ofstream(folder / "lib.rasp") << "_hidden = 3;\ndef twice(x) { return x * 2; }\nshown = indices + _hidden;\n";
  std::ofstream(folder / "main.rasp") << "load \"lib\";\ntwice(shown);\n";
  std::ofstream(folder / "private.rasp") << "load \"lib\";\n_hidden;\n";
  Program p = evaluate_program(read_source_file((folder / "main.rasp").string()));
  Interpreter interpreter(p, Mode::Bidirectional);
  CHECK(show(interpreter.run(parse_input("ab"))) == "[6,8]");
  CHECK(p.find("shown") >= 0);
  try {
    evaluate_program(read_source_file((folder / "private.rasp").string()));
    FAIL("a private name was visible");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("undefined name `_hidden`") != std::string::npos);
  }
  std::ofstream(folder / "ping.rasp") << "load \"pong\";\n";
  std::ofstream(folder / "pong.rasp") << "x = 1;\nload \"ping\";\n";
  try {
    evaluate_program(read_source_file((folder / "ping.rasp").string()));
    FAIL("a cycle of loads was accepted");
  } catch (const UserError& e) {
    std::string message = e.what();
    CHECK(message.substr(0, message.find('\n')) ==
          (folder / "pong.rasp").string() +
              ":2:1: error: \"ping\" is already being loaded; files cannot load each other in a cycle");
  }
  fs::remove_all(folder);
}

TEST_CASE("evaluate: the standard library") {
  CHECK(run("length;", "hello") == "[5,5,5,5,5]");
  CHECK(run("length;", "hello", Mode::Causal) == "[1,2,3,4,5]");
  CHECK(run("selector_width(full_s);", "abc") == "[3,3,3]");
  CHECK(run("has_focus(select(tokens, \"l\", ==));", "hello") == "[True,True,True,True,True]");
  CHECK(run("count(tokens, \"l\");", "hello") == "[2,2,2,2,2]");
  CHECK(run("contains(tokens, \"z\");", "hello") == "[False,False,False,False,False]");
  CHECK(run("max(tokens, 2);", "[1,5,2]") == "[2,5,2]");
  CHECK(run("min(tokens, 2);", "[1,5,2]") == "[1,2,2]");
  CHECK(run("average(tokens);", "[1,2,4]") == "[7/3,7/3,7/3]");
  CHECK(run("load_from_location(tokens, 1);", "abc") == "[b,b,b]");
  CHECK(run("shift(tokens, 1, \"_\");", "hello") == "[_,h,e,l,l]");
  CHECK(run("mark_first_instance(tokens, \"l\");", "hello") == "[False,False,True,False,False]");
  CHECK(run("mark_last_instance(tokens, \"l\");", "hello") == "[False,False,False,True,False]");
  CHECK(run("aggregate(select_from_first(tokens, \"l\"), indices);", "hello") == "[2,2,2,2,2]");
  CHECK(run("aggregate(select_from_last(tokens, \"l\"), indices);", "hello") == "[3,3,3,3,3]");
  CHECK(run("sort(tokens, tokens);", "banana") == "[a,a,a,b,n,n]");
  CHECK(run("sort(indices, tokens);", "[2,1,2,1]") == "[1,3,0,2]");  // stable
  CHECK(run("sort(tokens, -tokens);", "[3,1,2,4]") == "[4,3,2,1]");
  CHECK(run("aggregate(select_next_identical(tokens), indices, -1);", "abab") == "[2,3,-1,-1]");
}

TEST_CASE("evaluate: nodes built inside library functions carry the user's call site") {
  Program p = program_of("x = 1;\ny = shift(tokens, 1, \"_\");\ny;");
  const Node& out = output_node(p);
  CHECK(out.kind == NodeKind::Aggregate);
  CHECK(out.default_value == Value::of_string("_"));
  LineColumn lc = line_column(*out.span.file, out.span.begin);
  CHECK(out.span.file->name == "t.rasp");
  CHECK(lc.line == 2);
  CHECK(lc.column == 5);
  // The select inside shift too: select(indices + n, indices, ==).
  const Node& sel = p.node(out.inputs[0]);
  CHECK(sel.kind == NodeKind::Select);
  CHECK(sel.span.file->name == "t.rasp");
  CHECK(p.node(sel.inputs[0]).op == ElementOp::Add);
  CHECK(p.node(sel.inputs[1]).kind == NodeKind::Indices);
}
