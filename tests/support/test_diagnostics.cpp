#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/diagnostics.hpp"

using namespace raspc;

static std::shared_ptr<const SourceFile> file_of(std::string name, std::string text) {
  auto f = std::make_shared<SourceFile>();
  f->name = std::move(name);
  f->text = std::move(text);
  return f;
}

TEST_CASE("format_error names file, line and column and underlines the span") {
  auto f = file_of("prog.rasp", "x = 1;\ny = select(tokens, tokens, +);\n");
  Span s{f, 30, 31};  // the '+'
  CHECK(format_error(s, "select needs a comparison such as == or <") ==
        "prog.rasp:2:24: error: select needs a comparison such as == or <\n"
        "  y = select(tokens, tokens, +);\n"
        "                         ^\n");
  Span wide{f, 11, 17};  // "select"
  CHECK(format_error(wide, "m") ==
        "prog.rasp:2:5: error: m\n"
        "  y = select(tokens, tokens, +);\n"
        "      ^~~~~~\n");
}

TEST_CASE("format_error at the start of a line and at the end of the text") {
  auto f = file_of("p", "a\nb");
  CHECK(format_error(Span{f, 2, 3}, "m") == "p:2:1: error: m\n  b\n  ^\n");
  CHECK(format_error(Span{f, 3, 3}, "m") == "p:2:2: error: m\n  b\n   ^\n");
  CHECK(format_error(Span{f, 0, 1}, "m") == "p:1:1: error: m\n  a\n  ^\n");
}

TEST_CASE("a span running past its line is underlined to the end of the line only") {
  auto f = file_of("p", "abc\ndef\n");
  CHECK(format_error(Span{f, 1, 6}, "m") == "p:1:2: error: m\n  abc\n   ^~\n");
}

TEST_CASE("format_error keeps tabs so the caret lines up") {
  auto f = file_of("p", "\tx = y;");
  CHECK(format_error(Span{f, 5, 6}, "m") == "p:1:6: error: m\n  \tx = y;\n  \t    ^\n");
}

TEST_CASE("errors without a location, and errors about a whole file") {
  CHECK(format_error(Span{}, "no program given") == "error: no program given\n");
  try {
    fail_file("model.safetensors", "the file is truncated");
    FAIL("fail_file returned");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()) == "model.safetensors: error: the file is truncated\n");
  }
  CHECK_THROWS_WITH(read_source_file("/nonexistent/x.rasp"),
                    "/nonexistent/x.rasp: error: cannot open the file (does it exist, and is it readable?)\n");
}

TEST_CASE("format_error clips a long line to about 120 columns around the caret") {
  std::string line = std::string(50000, 'a') + "@" + std::string(50000, 'b');
  auto f = file_of("long.rasp", line + "\n");
  std::string error = format_error(Span{f, 50000, 50001}, "unexpected character `@`");
  CHECK(error == "long.rasp:1:50001: error: unexpected character `@`\n"
                 "  ..." + std::string(40, 'a') + "@" + std::string(79, 'b') + "...\n"
                 "     " + std::string(40, ' ') + "^\n");
  // Near the start nothing is cut before the caret; the underline stops at the cut.
  error = format_error(Span{f, 2, 50000}, "m");
  CHECK(error == "long.rasp:1:3: error: m\n  " + std::string(120, 'a') + "...\n    ^" + std::string(117, '~') + "\n");
  // Only the bytes near the caret are read, from a code point's first byte ("é" is 2 bytes).
  std::string accents;
  for (int i = 0; i < 1000; ++i) accents += "\xc3\xa9";
  auto h = file_of("u", accents);
  std::string before, after;
  for (int i = 0; i < 40; ++i) before += "\xc3\xa9";
  for (int i = 0; i < 80; ++i) after += "\xc3\xa9";
  CHECK(format_error(Span{h, 1000, 1004}, "m") == "u:1:501: error: m\n  ..." + before + after + "...\n     " +
                                                     std::string(40, ' ') + "^~\n");
  // A short line is quoted whole.
  auto g = file_of("s", std::string(120, 'x'));
  CHECK(format_error(Span{g, 119, 120}, "m") == "s:1:120: error: m\n  " + std::string(120, 'x') + "\n  " +
                                                    std::string(119, ' ') + "^\n");
}

TEST_CASE("format_error shows CRLF lines without their CR, and escapes control bytes in the message") {
  auto f = file_of("crlf.rasp", "x = 1;\r\ny = @;\r\n");
  CHECK(format_error(Span{f, 12, 13}, "m") == "crlf.rasp:2:5: error: m\n  y = @;\n      ^\n");
  CHECK(format_error(Span{f, 0, 1}, std::string("token \"a\0b\"", 11)) ==
        "crlf.rasp:1:1: error: token \"a\\x00b\"\n  x = 1;\n  ^\n");
  // Bytes that are not UTF-8 (a corrupted file's header quoted in a message) are escaped, in
  // located and named errors alike, so every message is text; UTF-8 passes whole.
  CHECK(format_error(Span{f, 0, 1}, "key \"\xff\xc3\xa9\"") == "crlf.rasp:1:1: error: key \"\\xff\xc3\xa9\"\n  x = 1;\n  ^\n");
  CHECK_THROWS_WITH(fail_file("m\xfe.safetensors", "holds \"\xff\""),
                    "m\\xfe.safetensors: error: holds \"\\xff\"\n");
}

TEST_CASE("read_source_file drops a byte order mark and reads a lone CR as a line end") {
  const std::string dir = "/tmp/raspc_diagnostics_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/bom.rasp", std::ios::binary) << "\xef\xbb\xbfx = 1;\r\n";
  CHECK(read_source_file(dir + "/bom.rasp")->text == "x = 1;\r\n");
  std::ofstream(dir + "/cr.rasp", std::ios::binary) << "# comment\rx = 1;\rx;\r";
  CHECK(read_source_file(dir + "/cr.rasp")->text == "# comment\nx = 1;\nx;\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("naming_errors names the origin of an error that names none, and leaves located ones alone") {
  CHECK_THROWS_WITH(naming_errors("--device", [] { fail_at(Span{}, "no GPU"); }), "--device: error: no GPU\n");
  CHECK_THROWS_WITH(naming_errors("--device", [] { fail_file("m.safetensors", "bad"); }), "m.safetensors: error: bad\n");
  CHECK(naming_errors("x", [] { return 3; }) == 3);
}
