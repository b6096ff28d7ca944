// Text a user gives raspc (programs, --vocab, --input, model vocabularies) is UTF-8: a symbol is
// a code point, never a byte, and bytes that are not UTF-8 are refused where they are.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "support/diagnostics.hpp"

namespace raspc {

// The length (1 to 4) of the UTF-8 code point starting at text[at], or 0 when the bytes there are
// not one: a stray continuation byte, an overlong form, a surrogate, a value past U+10FFFF, or a
// sequence cut short.
size_t utf8_length_at(std::string_view text, size_t at);

// Refuses text that is not UTF-8 with a UserError pointing at the first bad byte of `file`,
// from byte `begin` to `end` (the whole file by default).
void require_utf8(const std::shared_ptr<const SourceFile>& file, size_t begin = 0, size_t end = std::string::npos);

}  // namespace raspc
