// Run many independent queries across threads; each thread uses its own workspace.
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace cw {

// Calls fn(i) for i in [0, count) on `threads` threads (<= 1: the calling thread). Work is handed
// out one index at a time, so results (written by fn into slot i) are independent of scheduling.
template <class Fn>
void parallel_for(std::int64_t count, int threads, Fn&& fn) {
  if (threads <= 1 || count <= 1) {
    for (std::int64_t i = 0; i < count; ++i) fn(i);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  auto worker = [&]() {
    for (;;) {
      const std::int64_t i = next.fetch_add(1);
      if (i >= count || failed.load()) return;
      try {
        fn(i);
      } catch (...) {
        if (!failed.exchange(true)) error = std::current_exception();
        return;
      }
    }
  };
  const int nt = static_cast<int>(std::min<std::int64_t>(threads, count));
  std::vector<std::thread> pool;
  try {
    pool.reserve(static_cast<std::size_t>(nt - 1));
    for (int t = 1; t < nt; ++t) pool.emplace_back(worker);
  } catch (...) {
    // Not every thread could start (resource limits): the ones that did, and this one, still
    // take all the work. (Letting the exception escape would destroy joinable threads.)
  }
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace cw
