#pragma once
// The host side of one validation (GpuSession::run): the inputs as sent, C as
// sent (C0 or the NaN poison) and cuBLAS's reference. They depend on the
// problem, the element types, the reference mode, the epilogue and the seed,
// never on the kernel, so a session that validates many kernels on one problem
// (schedc tune, schedc bench) draws and computes them once: at 4096^3 that is
// most of a validation's time.
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/host_data.h"
#include "runtime/validate.h"

namespace schedc::runtime {

struct HostCase {
  std::vector<char> a, b;       // operands, encoded, as stored (layout, ld)
  std::vector<float> bias;      // n, or empty
  std::vector<float> scale;     // n per-channel scales (`epilogue ... scale`), or empty
  std::vector<char> sent;       // C before the run, encoded
  std::vector<float> expected;  // the reference, m x n packed, in the output type
  // An s32 output's reference (dtype s8), exact (`expected` is empty then).
  std::vector<int32_t> expected_s32;
  RefMode ref = RefMode::f32_pedantic;  // the reference computed: s8_via_f64 where int8 failed
  GemmInputs inputs;                    // as drawn (kept only where .npy files are saved)
  size_t bytes() const {
    return a.size() + b.size() + sent.size() +
           4 * (bias.size() + scale.size() + expected.size() + expected_s32.size()) +
           4 * (inputs.a.size() + inputs.b.size() + inputs.c0.size() + inputs.bias.size() +
                inputs.scale.size());
  }
};

// The most recently used cases up to `max_bytes` in all (the oldest go first;
// a case larger than the whole budget is not kept). Thread-safe.
class HostCaseCache {
 public:
  explicit HostCaseCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  std::shared_ptr<const HostCase> find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = cases_.begin(); it != cases_.end(); ++it)
      if (it->first == key) {
        cases_.splice(cases_.begin(), cases_, it);  // most recent first
        return cases_.front().second;
      }
    return nullptr;
  }

  void insert(const std::string& key, std::shared_ptr<const HostCase> c) {
    const size_t n = c->bytes();
    if (n > max_bytes_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    while (!cases_.empty() && bytes_ + n > max_bytes_) {
      bytes_ -= cases_.back().second->bytes();
      cases_.pop_back();
    }
    cases_.emplace_front(key, std::move(c));
    bytes_ += n;
  }

  size_t bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return cases_.size();
  }

 private:
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::list<std::pair<std::string, std::shared_ptr<const HostCase>>> cases_;
  mutable std::mutex mutex_;
};

}  // namespace schedc::runtime
