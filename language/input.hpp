// Input sequences and vocabularies as a user writes them on the command line.
#pragma once

#include <string>
#include <vector>

#include "language/value.hpp"

namespace raspc {

// "hello" (or hello) is a sequence of one-character (one code point) string tokens; "[3,1,2,4]" is a sequence of
// ints. `origin` names the argument in errors ("--input"), which point at the offending
// character with a caret. With `vocabulary`, a token outside it is a UserError. An empty sequence,
// or a list mixing ints and strings, is a UserError.
std::vector<Value> parse_input(const std::string& text, const std::string& origin = "--input",
                               const std::vector<Value>* vocabulary = nullptr);

// Token names a vocabulary cannot hold: the beginning-of-sequence token of compiled ("<bos>") and
// trained ("BOS") models. A vocabulary naming one would verify a model other than the one meant.
bool is_reserved_token(const std::string& token);

// "ehlo", "a b c", "1 2 3" (ints, as on a `# vocab:` line) or "[1,2,3]": the distinct symbols, in
// the order written (a symbol of "ehlo" is a UTF-8 code point). Text that is not UTF-8, and a
// reserved token, are UserErrors.
std::vector<Value> parse_vocabulary(const std::string& text, const std::string& origin = "--vocab");

}  // namespace raspc
