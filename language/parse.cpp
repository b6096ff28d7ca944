#include "language/parse.hpp"

#include "language/lex.hpp"

namespace raspc {

namespace {

class Parser {
 public:
  explicit Parser(const std::shared_ptr<const SourceFile>& file) : file_(file), tokens_(lex(file)) {}

  std::unique_ptr<Module> module() {
    auto result = std::make_unique<Module>();
    result->file = file_;
    while (peek().kind != TokenKind::End) result->statements.push_back(statement(false));
    return result;
  }

 private:
  // Counts nesting while parsing one construct; too deep is an error, not a stack overflow.
  struct Nest {
    Parser& parser;
    Nest(Parser& p, const Span& where) : parser(p) {
      if (++parser.depth_ > kMaxNesting)
        fail_at(where, "the program nests deeper than " + std::to_string(kMaxNesting) +
                           " levels here; split the expression into named parts");
    }
    ~Nest() { --parser.depth_; }
  };

  // A left-associative chain `a + b + c ...` builds a tree as deep as it is long; it counts as
  // nesting too, since evaluating the tree recurses through it.
  void lengthen(int& chain) {
    if (depth_ + ++chain > kMaxNesting)
      fail_at(peek().span, "the program nests deeper than " + std::to_string(kMaxNesting) +
                               " levels here; split the expression into named parts");
  }

  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& advance() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool accept(TokenKind kind) {
    if (peek().kind != kind) return false;
    advance();
    return true;
  }
  const Token& expect(TokenKind kind, const std::string& context) {
    if (peek().kind != kind)
      fail_at(peek().span, "expected " + describe(kind) + " " + context + " but found " + describe(peek()));
    return advance();
  }

  // The closing bracket of `open`. The message names where `open` is, which costs a scan from the
  // file's start, so it is only made when the bracket is missing: made every time, a file of
  // thousands of parenthesised statements parsed in quadratic time.
  const Token& expect_closing(TokenKind kind, const char* what, const Span& open) {
    if (peek().kind == kind) return advance();
    return expect(kind, what + position(open));
  }

  // A missing `;` is the statement's fault, not the next line's: when the token found starts a
  // later line, the caret goes just after the statement's last token.
  void expect_semicolon(const std::string& context) {
    if (peek().kind == TokenKind::Semicolon) {
      advance();
      return;
    }
    const Token& found = peek();
    if (pos_ > 0) {
      const Span& last = tokens_[pos_ - 1].span;
      const uint32_t line = line_column(*found.span.file, found.span.begin).line;
      if (line_column(*last.file, last.end).line < line)
        fail_at(Span{last.file, last.end, last.end + 1}, "expected `;` " + context + " but found " + describe(found) +
                                                             (found.kind == TokenKind::End ? "" : " on line " + std::to_string(line)));
    }
    fail_at(found.span, "expected `;` " + context + " but found " + describe(found));
  }

  std::unique_ptr<Expr> make(ExprKind kind, const Span& span) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->span = span;
    return e;
  }

  // ---- statements ----

  std::unique_ptr<Stmt> statement(bool in_def) {
    Nest nest(*this, peek().span);
    auto s = std::make_unique<Stmt>();
    const Token& first = peek();
    s->span = first.span;
    switch (first.kind) {
      case TokenKind::Def: return definition();
      case TokenKind::For: return for_loop(in_def);
      case TokenKind::Load: {
        advance();
        const Token& name = expect(TokenKind::String, "after `load` (the file name, in double quotes)");
        s->kind = StmtKind::Load;
        s->name = name.text;
        s->name_span = name.span;
        s->span = first.span.to(name.span);
        expect_semicolon("after the `load` statement");
        return s;
      }
      case TokenKind::Return: {
        if (!in_def) fail_at(first.span, "`return` is only allowed as the last statement of a `def`");
        advance();
        s->kind = StmtKind::Return;
        s->exprs.push_back(expression());
        while (accept(TokenKind::Comma)) s->exprs.push_back(expression());
        s->span = first.span.to(s->exprs.back()->span);
        expect_semicolon("after the returned values");
        return s;
      }
      default: break;
    }
    std::vector<std::unique_ptr<Expr>> left;
    left.push_back(expression());
    while (accept(TokenKind::Comma)) left.push_back(expression());
    if (peek().kind == TokenKind::Assign) {
      advance();
      s->kind = StmtKind::Assign;
      for (auto& target : left) {
        if (target->kind != ExprKind::Name)
          fail_at(target->span, "only names can be assigned to, not this expression");
        s->names.push_back(target->text);
        s->name_spans.push_back(target->span);
      }
      s->exprs.push_back(expression());
      while (accept(TokenKind::Comma)) s->exprs.push_back(expression());
      s->span = left.front()->span.to(s->exprs.back()->span);
      expect_semicolon("after the assignment");
      return s;
    }
    if (left.size() > 1)
      fail_at(left[1]->span, "a list of expressions separated by `,` must be followed by `=` (an assignment)");
    s->kind = StmtKind::Expression;
    s->span = left.front()->span;
    s->exprs = std::move(left);
    expect_semicolon("after the expression");
    return s;
  }

  void names(Stmt& s, const std::string& context) {
    const Token& first = expect(TokenKind::Identifier, context);
    s.names.push_back(first.text);
    s.name_spans.push_back(first.span);
    while (accept(TokenKind::Comma)) {
      const Token& next = expect(TokenKind::Identifier, "after `,` in a list of names");
      s.names.push_back(next.text);
      s.name_spans.push_back(next.span);
    }
  }

  std::unique_ptr<Stmt> definition() {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::Def;
    const Token& def = advance();
    const Token& name = expect(TokenKind::Identifier, "after `def` (the function's name)");
    s->name = name.text;
    s->name_span = name.span;
    s->span = def.span.to(name.span);
    expect(TokenKind::LeftParen, "after the function's name");
    if (peek().kind != TokenKind::RightParen) names(*s, "as a parameter name");
    expect(TokenKind::RightParen, "after the parameters");
    expect(TokenKind::LeftBrace, "before the function's body");
    while (peek().kind != TokenKind::RightBrace) {
      if (peek().kind == TokenKind::End)
        fail_at(peek().span, "expected `}` to close the body of `" + s->name + "` but found the end of the file");
      if (!s->body.empty() && s->body.back()->kind == StmtKind::Return)
        fail_at(s->body.back()->span, "`return` must be the last statement of `" + s->name + "`");
      s->body.push_back(statement(true));
    }
    if (s->body.empty() || s->body.back()->kind != StmtKind::Return)
      fail_at(peek().span, "the function `" + s->name + "` must end with a `return` statement");
    advance();
    return s;
  }

  std::unique_ptr<Stmt> for_loop(bool in_def) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::For;
    const Token& keyword = advance();
    names(*s, "after `for` (the loop variable)");
    expect(TokenKind::In, "after the loop variable");
    s->exprs.push_back(expression());
    s->span = keyword.span.to(s->exprs.back()->span);
    expect(TokenKind::LeftBrace, "before the loop's body");
    while (peek().kind != TokenKind::RightBrace) {
      if (peek().kind == TokenKind::End)
        fail_at(peek().span, "expected `}` to close the `for` loop but found the end of the file");
      if (peek().kind == TokenKind::Return)
        fail_at(peek().span, "`return` cannot appear inside a `for` loop; it must be the last statement of a `def`");
      s->body.push_back(statement(in_def));
    }
    advance();
    return s;
  }

  // ---- expressions, loosest first ----

 public:
  std::unique_ptr<Expr> expression() {
    auto left = conditional();
    int chain = 0;
    while (peek().kind == TokenKind::In) {
      lengthen(chain);
      Span op = advance().span;
      auto right = conditional();
      auto e = make(ExprKind::In, left->span.to(right->span));
      e->operator_span = op;
      e->children.push_back(std::move(left));
      e->children.push_back(std::move(right));
      left = std::move(e);
    }
    return left;
  }

 private:
  std::unique_ptr<Expr> conditional() {
    auto left = logic();
    int chain = 0;
    while (peek().kind == TokenKind::If) {
      lengthen(chain);
      advance();
      auto condition = expression();
      expect(TokenKind::Else, "after the condition of `if`");
      auto otherwise = logic();
      auto e = make(ExprKind::IfElse, left->span.to(otherwise->span));
      e->children.push_back(std::move(left));
      e->children.push_back(std::move(condition));
      e->children.push_back(std::move(otherwise));
      left = std::move(e);
    }
    return left;
  }

  std::unique_ptr<Expr> binary(std::unique_ptr<Expr> left, BinaryOp op, const Span& op_span,
                               std::unique_ptr<Expr> right) {
    auto e = make(ExprKind::Binary, left->span.to(right->span));
    e->binary = op;
    e->operator_span = op_span;
    e->children.push_back(std::move(left));
    e->children.push_back(std::move(right));
    return e;
  }

  std::unique_ptr<Expr> logic() {
    auto left = comparison();
    int chain = 0;
    while (peek().kind == TokenKind::And || peek().kind == TokenKind::Or) {
      lengthen(chain);
      BinaryOp op = peek().kind == TokenKind::And ? BinaryOp::And : BinaryOp::Or;
      Span op_span = advance().span;
      left = binary(std::move(left), op, op_span, comparison());
    }
    return left;
  }

  std::unique_ptr<Expr> comparison() {
    auto left = additive();
    int chain = 0;
    for (;;) {
      BinaryOp op;
      switch (peek().kind) {
        case TokenKind::EqualEqual: op = BinaryOp::Eq; break;
        case TokenKind::Less: op = BinaryOp::Lt; break;
        case TokenKind::Greater: op = BinaryOp::Gt; break;
        case TokenKind::LessEqual: op = BinaryOp::Le; break;
        case TokenKind::GreaterEqual: op = BinaryOp::Ge; break;
        case TokenKind::NotEqual:
          fail_at(peek().span, "`!=` exists only as a select operator; write `not (a == b)` instead");
        default: return left;
      }
      lengthen(chain);
      Span op_span = advance().span;
      left = binary(std::move(left), op, op_span, additive());
    }
  }

  std::unique_ptr<Expr> additive() {
    auto left = remainder();
    int chain = 0;
    while (peek().kind == TokenKind::Plus || peek().kind == TokenKind::Minus) {
      lengthen(chain);
      BinaryOp op = peek().kind == TokenKind::Plus ? BinaryOp::Add : BinaryOp::Sub;
      Span op_span = advance().span;
      left = binary(std::move(left), op, op_span, remainder());
    }
    return left;
  }

  std::unique_ptr<Expr> remainder() {
    auto left = multiplicative();
    int chain = 0;
    while (peek().kind == TokenKind::Percent) {
      lengthen(chain);
      Span op_span = advance().span;
      left = binary(std::move(left), BinaryOp::Mod, op_span, multiplicative());
    }
    return left;
  }

  std::unique_ptr<Expr> multiplicative() {
    auto left = power();
    int chain = 0;
    while (peek().kind == TokenKind::Star || peek().kind == TokenKind::Slash) {
      lengthen(chain);
      BinaryOp op = peek().kind == TokenKind::Star ? BinaryOp::Mul : BinaryOp::Div;
      Span op_span = advance().span;
      left = binary(std::move(left), op, op_span, power());
    }
    return left;
  }

  std::unique_ptr<Expr> power() {
    auto left = unary();
    int chain = 0;
    while (peek().kind == TokenKind::Caret) {
      lengthen(chain);
      Span op_span = advance().span;
      left = binary(std::move(left), BinaryOp::Pow, op_span, unary());
    }
    return left;
  }

  std::unique_ptr<Expr> unary() {
    Nest nest(*this, peek().span);
    TokenKind kind = peek().kind;
    if (kind == TokenKind::Not || kind == TokenKind::Minus || kind == TokenKind::Plus) {
      Span op_span = advance().span;
      auto operand = unary();
      auto e = make(ExprKind::Unary, op_span.to(operand->span));
      e->unary = kind == TokenKind::Not ? UnaryOp::Not : (kind == TokenKind::Minus ? UnaryOp::Neg : UnaryOp::Pos);
      e->operator_span = op_span;
      e->children.push_back(std::move(operand));
      return e;
    }
    return postfix();
  }

  std::unique_ptr<Expr> postfix() {
    auto e = primary();
    int chain = 0;
    for (;;) {
      if (peek().kind == TokenKind::LeftBracket || peek().kind == TokenKind::LeftParen) lengthen(chain);
      if (peek().kind == TokenKind::LeftBracket) {
        advance();
        auto index = expression();
        const Token& close = expect(TokenKind::RightBracket, "after the index");
        auto indexed = make(ExprKind::Index, e->span.to(close.span));
        indexed->children.push_back(std::move(e));
        indexed->children.push_back(std::move(index));
        e = std::move(indexed);
      } else if (peek().kind == TokenKind::LeftParen) {
        advance();
        auto call = make(ExprKind::Call, e->span);
        call->children.push_back(std::move(e));
        if (peek().kind != TokenKind::RightParen) {
          call->children.push_back(expression());
          while (accept(TokenKind::Comma)) call->children.push_back(expression());
        }
        const Token& close = expect(TokenKind::RightParen, "after the call's arguments");
        call->span = call->span.to(close.span);
        e = std::move(call);
      } else {
        return e;
      }
    }
  }

  std::unique_ptr<Expr> primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::Number: {
        auto e = make(ExprKind::Number, t.span);
        e->number = t.number;
        advance();
        return e;
      }
      case TokenKind::String: {
        auto e = make(ExprKind::String, t.span);
        e->text = t.text;
        advance();
        return e;
      }
      case TokenKind::Identifier: {
        auto e = make(ExprKind::Name, t.span);
        e->text = t.text;
        advance();
        return e;
      }
      case TokenKind::LeftParen: {
        Span open = advance().span;
        auto inner = expression();
        expect_closing(TokenKind::RightParen, "to close the `(` at ", open);
        return inner;
      }
      case TokenKind::LeftBracket: return list();
      case TokenKind::LeftBrace: return dict();
      case TokenKind::Select: return select();
      default:
        fail_at(t.span, "expected an expression but found " + describe(t));
    }
  }

  std::string position(const Span& span) const {
    LineColumn lc = line_column(*span.file, span.begin);
    return std::to_string(lc.line) + ":" + std::to_string(lc.column);
  }

  void comprehension_tail(Expr& e) {
    advance();  // `for`
    const Token& first = expect(TokenKind::Identifier, "after `for` (the loop variable)");
    e.loop_names.push_back(first.text);
    e.loop_name_spans.push_back(first.span);
    while (accept(TokenKind::Comma)) {
      const Token& next = expect(TokenKind::Identifier, "after `,` in a list of names");
      e.loop_names.push_back(next.text);
      e.loop_name_spans.push_back(next.span);
    }
    expect(TokenKind::In, "after the loop variable");
    e.children.push_back(expression());
  }

  std::unique_ptr<Expr> list() {
    Span open = advance().span;
    auto e = make(ExprKind::List, open);
    if (peek().kind != TokenKind::RightBracket) {
      e->children.push_back(expression());
      if (peek().kind == TokenKind::For) {
        e->kind = ExprKind::ListComp;
        comprehension_tail(*e);
      } else {
        while (accept(TokenKind::Comma)) {
          if (peek().kind == TokenKind::RightBracket) break;
          e->children.push_back(expression());
        }
      }
    }
    const Token& close = expect_closing(TokenKind::RightBracket, "to close the list opened at ", open);
    e->span = open.to(close.span);
    return e;
  }

  std::unique_ptr<Expr> dict() {
    Span open = advance().span;
    auto e = make(ExprKind::Dict, open);
    if (peek().kind != TokenKind::RightBrace) {
      e->children.push_back(expression());
      expect(TokenKind::Colon, "after a dictionary key");
      e->children.push_back(expression());
      if (peek().kind == TokenKind::For) {
        e->kind = ExprKind::DictComp;
        comprehension_tail(*e);
      } else {
        while (accept(TokenKind::Comma)) {
          if (peek().kind == TokenKind::RightBrace) break;
          e->children.push_back(expression());
          expect(TokenKind::Colon, "after a dictionary key");
          e->children.push_back(expression());
        }
      }
    }
    const Token& close = expect_closing(TokenKind::RightBrace, "to close the dictionary opened at ", open);
    e->span = open.to(close.span);
    return e;
  }

  std::unique_ptr<Expr> select() {
    Span keyword = advance().span;
    auto e = make(ExprKind::Select, keyword);
    expect(TokenKind::LeftParen, "after `select`");
    e->children.push_back(expression());
    expect(TokenKind::Comma, "after the keys of `select`");
    e->children.push_back(expression());
    expect(TokenKind::Comma, "after the queries of `select`");
    const Token& op = peek();
    switch (op.kind) {
      case TokenKind::EqualEqual: e->comparison = Comparison::Eq; break;
      case TokenKind::NotEqual: e->comparison = Comparison::Ne; break;
      case TokenKind::Less: e->comparison = Comparison::Lt; break;
      case TokenKind::Greater: e->comparison = Comparison::Gt; break;
      case TokenKind::LessEqual: e->comparison = Comparison::Le; break;
      case TokenKind::GreaterEqual: e->comparison = Comparison::Ge; break;
      default:
        fail_at(op.span, "the third argument of `select` must be a comparison (== != < > <= >=), not " +
                             describe(op));
    }
    e->operator_span = op.span;
    advance();
    const Token& close = expect(TokenKind::RightParen, "after the comparison of `select`");
    e->span = keyword.to(close.span);
    return e;
  }

  std::shared_ptr<const SourceFile> file_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::unique_ptr<Module> parse_module(const std::shared_ptr<const SourceFile>& file) {
  return Parser(file).module();
}

}  // namespace raspc
