#include "raspc/verify_progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/number_text.hpp"

namespace raspc {

namespace {

// 75 -> "1:15"
std::string minutes_seconds(double seconds) {
  const long s = long(seconds + 0.5);
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  return text;
}

}  // namespace

VerifyProgress::VerifyProgress(std::string what, unsigned threads)
    : what_(std::move(what)),
      on_threads_(threads ? " on " + std::to_string(threads) + (threads == 1 ? " thread" : " threads") : ""),
      terminal_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()), last_line_(start_) {
  // The interval is a setting for logs (and for the tests, which set 0 to see every round).
  const char* every = std::getenv("RASPC_PROGRESS_INTERVAL");
  char* end = nullptr;
  const double parsed = every ? std::strtod(every, &end) : 0;
  line_every_s_ = every && end != every && parsed >= 0 ? parsed : 5.0;
}

VerifyProgress::~VerifyProgress() {
  if (bar_shown_) std::fprintf(stderr, "\r\033[K");
}

void VerifyProgress::update(long done, long total, double work) {
  const auto now = std::chrono::steady_clock::now();
  if (done == 0) {
    start_ = last_line_ = now;
    return;
  }
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // By the estimated work, not the count: the short inputs come first and cost least.
  const double fraction = total > 0 ? std::clamp(work, 1e-9, 1.0) : 1.0;
  const std::string left = minutes_seconds(elapsed * (1 - fraction) / fraction);
  if (terminal_) {
    if (done >= total) {
      if (bar_shown_) std::fprintf(stderr, "\r\033[K");
      bar_shown_ = false;
      return;
    }
    const int width = 30, filled = int(fraction * width);
    std::fprintf(stderr, "\r%s [%s%s] %3d%%  %s of %s inputs%s  %s left ", what_.c_str(),
                 std::string(size_t(filled), '#').c_str(), std::string(size_t(width - filled), '.').c_str(),
                 int(100 * fraction), with_commas(double(done)).c_str(), with_commas(double(total)).c_str(),
                 on_threads_.c_str(), left.c_str());
    std::fflush(stderr);
    bar_shown_ = true;
    return;
  }
  if (done >= total || std::chrono::duration<double>(now - last_line_).count() < line_every_s_) return;
  last_line_ = now;
  std::fprintf(stderr, "%s: %s of %s inputs%s (%d%%), %s elapsed, about %s left\n", what_.c_str(),
               with_commas(double(done)).c_str(), with_commas(double(total)).c_str(), on_threads_.c_str(),
               int(100 * fraction), minutes_seconds(elapsed).c_str(), left.c_str());
  std::fflush(stderr);
}

}  // namespace raspc
