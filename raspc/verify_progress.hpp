// The progress of a compile's verification on standard error: a bar with the time left when
// standard error is a terminal, a plain line every few seconds when it is piped (a log, CI).
#pragma once

#include <chrono>
#include <string>

namespace raspc {

class VerifyProgress {
 public:
  // `what` starts the bar and the lines: "verifying", "labelling"; `threads` (0: not said) ends them.
  explicit VerifyProgress(std::string what = "verifying", unsigned threads = 0);
  ~VerifyProgress();  // clears an unfinished bar
  // CompileOptions::on_verify_progress: `done` of `total` inputs verified, `work` the fraction of
  // the estimated time behind it. The clock starts at the first call (done == 0): the time left
  // is the verification's, not the compile's before it.
  void update(long done, long total, double work);

 private:
  std::string what_, on_threads_;  // " on 2 threads" or ""

  bool terminal_;
  bool bar_shown_ = false;
  double line_every_s_;  // piped: seconds between lines (RASPC_PROGRESS_INTERVAL, default 5)
  std::chrono::steady_clock::time_point start_, last_line_;
};

}  // namespace raspc
