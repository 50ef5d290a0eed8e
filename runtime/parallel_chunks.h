#pragma once
// Host loops over large matrices (validation's compare of a 4096x4096 C)
// split into fixed chunks run on the host's cores. The chunks do not depend
// on the core count, so a caller that merges per-chunk results in chunk
// order gets the same answer on every machine.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace schedc::runtime {

// Calls fn(chunk, begin, end) for chunk = 0 .. ceil(n / chunk_len) - 1 over
// [0, n), on up to hardware_concurrency threads (the calling one among
// them). Small inputs (one chunk) run on the calling thread alone. The first
// exception a chunk throws is rethrown after every thread has stopped.
inline void parallel_chunks(int64_t n, int64_t chunk_len,
                            const std::function<void(size_t, int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  chunk_len = std::max<int64_t>(1, chunk_len);
  const size_t chunks = size_t((n + chunk_len - 1) / chunk_len);
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (size_t c; !failed && (c = next.fetch_add(1)) < chunks;) {
      try {
        const int64_t begin = int64_t(c) * chunk_len;
        fn(c, begin, std::min(n, begin + chunk_len));
      } catch (...) {
        if (!failed.exchange(true)) error = std::current_exception();
      }
    }
  };
  const size_t threads =
      std::min<size_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace schedc::runtime
