#include <catch2/catch.hpp>

#include "support/utf8.hpp"

using namespace raspc;

TEST_CASE("utf8_length_at takes well-formed code points and nothing else") {
  CHECK(utf8_length_at("a", 0) == 1);
  CHECK(utf8_length_at("\xc3\xa9", 0) == 2);          // é
  CHECK(utf8_length_at("\xe2\x82\xac", 0) == 3);      // €
  CHECK(utf8_length_at("\xf0\x9f\x98\x80", 0) == 4);  // an emoji
  CHECK(utf8_length_at("\xa9", 0) == 0);              // a stray continuation byte
  CHECK(utf8_length_at("\xc3", 0) == 0);              // cut short
  CHECK(utf8_length_at("\xc0\xaf", 0) == 0);          // overlong '/'
  CHECK(utf8_length_at("\xed\xa0\x80", 0) == 0);      // a surrogate
  CHECK(utf8_length_at("\xf4\x90\x80\x80", 0) == 0);  // past U+10FFFF
  CHECK(utf8_length_at("\xff", 0) == 0);
  CHECK(utf8_length_at("ab", 2) == 0);
}
