// The calling thread's CPU time, which every bench reports beside (or instead of) wall time: on a
// shared machine it is what the work cost one core, whatever else ran.
#pragma once

#include <ctime>

namespace raspc::bench {

inline double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

}  // namespace raspc::bench
