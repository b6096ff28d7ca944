// Splitting work over threads the same way every time: `count` items (sequences of a batch) in
// `chunks` contiguous ranges, chunk k holding items [count*k/chunks, count*(k+1)/chunks). The
// ranges depend only on count and chunks, so a result that depends only on each item's own work is
// the same for every thread count, and one that sums over chunks is the same for a thread count.
#pragma once

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace raspc {

// Every core of the machine (at least 1): what a thread count of 0 stands for.
inline int available_cores() { return int(std::max(1u, std::thread::hardware_concurrency())); }

// work(k, begin, end) for each chunk k, chunk 0 on the calling thread and the others each on a
// thread of its own; returns when all are done. What a chunk throws (out of memory, say) is thrown
// again here, the first chunk's first: an exception leaving a thread would end the process.
template <class Work>
void for_each_chunk(int count, int chunks, const Work& work) {
  chunks = std::max(1, std::min(chunks, count));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(chunks));
  auto run = [&](int k) {
    try {
      work(k, int(long(count) * k / chunks), int(long(count) * (k + 1) / chunks));
    } catch (...) {
      errors[size_t(k)] = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  for (int k = 1; k < chunks; ++k) helpers.emplace_back(run, k);
  run(0);
  for (std::thread& helper : helpers) helper.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

}  // namespace raspc
