#pragma once
// A model of shared-memory bank conflicts, used by `schedc explain` and by
// plan tests. Shared memory has 32 banks of 4 bytes. A warp request in which
// each thread accesses W bytes is served in phases:
//   W <= 4 : one phase of 32 threads
//   W == 8 : two phases of 16 threads (half-warps)
//   W == 16: four phases of 8 threads (quarter-warps; also one ldmatrix
//            8x8 matrix, whose 8 row addresses are given by 8 threads)
// A phase needs as many wavefronts as the largest number of distinct 4-byte
// words that fall into any one bank; threads reading the same word share it
// (broadcast). A conflict-free request needs one wavefront per phase.

#include <array>
#include <cstdint>
#include <vector>

namespace schedc::compiler {

struct WarpRequest {
  int width_bytes = 4;                // per thread: 4, 8 or 16 (1, 2 round up to one word)
  std::array<int64_t, 32> byte_addr;  // per lane; -1 = lane inactive
  WarpRequest() { byte_addr.fill(-1); }
};

struct BankCost {
  int wavefronts = 0;        // what the model predicts
  int ideal_wavefronts = 0;  // one per phase with an active thread
  // wavefronts / ideal; 1.0 = conflict-free, 2.0 = two-way conflict, …
  double degree() const { return ideal_wavefronts ? double(wavefronts) / ideal_wavefronts : 1.0; }
};

BankCost bank_cost(const WarpRequest& request);

// Sum over several requests (e.g. every warp request of one copy).
BankCost total_bank_cost(const std::vector<WarpRequest>& requests);

}  // namespace schedc::compiler
