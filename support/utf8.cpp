#include "support/utf8.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace raspc {

size_t utf8_length_at(std::string_view text, size_t at) {
  if (at >= text.size()) return 0;
  const uint8_t lead = uint8_t(text[at]);
  if (lead < 0x80) return 1;
  size_t length = 0;
  uint32_t code = 0;
  if ((lead & 0xe0) == 0xc0) length = 2, code = lead & 0x1f;
  else if ((lead & 0xf0) == 0xe0) length = 3, code = lead & 0x0f;
  else if ((lead & 0xf8) == 0xf0) length = 4, code = lead & 0x07;
  else return 0;
  if (at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    const uint8_t next = uint8_t(text[at + i]);
    if ((next & 0xc0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3f);
  }
  static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return length;
}

void require_utf8(const std::shared_ptr<const SourceFile>& file, size_t begin, size_t end) {
  const std::string& text = file->text;
  end = std::min(end, text.size());
  for (size_t i = begin; i < end;) {
    const size_t length = utf8_length_at(text, i);
    if (length == 0) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "\\x%02x", unsigned(uint8_t(text[i])));
      fail_at(Span{file, uint32_t(i), uint32_t(i + 1)},
              std::string("the byte ") + byte + " is not UTF-8 text; raspc reads programs and symbols as UTF-8");
    }
    i += length;
  }
}

}  // namespace raspc
