#include "runtime/launch.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "compiler/lower_wgmma.h"
#include "runtime/conv_args.h"
#include "runtime/conv_launch.h"
#include "runtime/error.h"
#include "runtime/host_data.h"
#include "runtime/tma_map.h"
#include "runtime/validate.h"

namespace schedc::runtime {

namespace {

// Bytes per element of A and B for a kernel's dtype, and of its C (s8: int8
// operands, int32 C, or int8 when requantized).
int operand_bytes(const std::string& dtype) {
  return elem_size(elem_type(dtype));
}
int c_bytes(const codegen::GeneratedKernel& k) {
  return elem_size(output_type(k.dtype, k.c_dtype));
}

// Why main's preconditions fail here, or "" when they hold.
std::string precondition_failure(const codegen::KernelEntry& e, const compiler::Problem& p,
                                 const void* a, const void* b, const void* c) {
  // The stream is made only on a failure: every launch passes here.
  auto say = [](auto&&... parts) {
    std::ostringstream why;
    (why << ... << parts);
    return why.str();
  };
  if (e.align_bytes > 1) {
    const std::pair<const char*, const void*> ptrs[] = {{"A", a}, {"B", b}, {"C", c}};
    for (int i = 0; i < 3; ++i)
      if (auto [name, ptr] = ptrs[i];
          e.aligned[i] && reinterpret_cast<uintptr_t>(ptr) % e.align_bytes != 0) {
        return say(name, " is not ", e.align_bytes, "-byte aligned");
      }
  }
  if (e.ld_multiple > 1) {
    const std::pair<const char*, int64_t> lds[] = {
        {"lda", p.a_ld()}, {"ldb", p.b_ld()}, {"ldc", p.c_ld()}};
    for (int i = 0; i < 3; ++i)
      if (auto [name, ld] = lds[i]; e.aligned[i] && ld % e.ld_multiple != 0) {
        return say(name, " = ", ld, " is not a multiple of ", e.ld_multiple);
      }
  }
  if (e.ld_multiple > 1 && p.batch > 1) {
    // Every GEMM of the batch starts as aligned as the first.
    const std::pair<const char*, int64_t> strides[] = {
        {"stride_a", p.a_stride()}, {"stride_b", p.b_stride()}, {"stride_c", p.c_stride()}};
    for (int i = 0; i < 3; ++i)
      if (auto [name, stride] = strides[i]; e.aligned[i] && stride % e.ld_multiple != 0) {
        return say("the batch's ", name, " = ", stride, " is not a multiple of ", e.ld_multiple);
      }
  }
  if (e.n_multiple > 1 && p.n % e.n_multiple != 0) {
    return say("N = ", p.n, " is not a multiple of ", e.n_multiple);
  }
  return "";
}

}  // namespace

EntryChoice choose_entry(const codegen::GeneratedKernel& kernel, const compiler::Problem& p,
                         const void* a, const void* b, const void* c) {
  if (p.batch > 1 && !kernel.batched)
    throw Error(Error::Kind::cuda, "a batch of " + std::to_string(p.batch) +
                                       " GEMMs, but the kernel computes one (its schedule has "
                                       "no 'batch' directive)");
  // Whether TMA can read an operand where it lies: its pointer, its leading
  // dimension and (a batch) its stride aligned as main needs.
  const codegen::KernelEntry& main = kernel.main;
  auto breaks = [&](const void* ptr, int64_t ld, int64_t stride) {
    return (main.align_bytes > 1 && reinterpret_cast<uintptr_t>(ptr) % main.align_bytes != 0) ||
           (main.ld_multiple > 1 &&
            (ld % main.ld_multiple != 0 || (p.batch > 1 && stride % main.ld_multiple != 0)));
  };
  EntryChoice choice;
  if (kernel.has_transpose()) {
    // A (B) goes to k-major scratch every launch; the other as the repack
    // rule says (wgmma), or (mma s8, which has a fallback and no repack) main
    // where the other operands meet its preconditions, else the fallback.
    const codegen::KernelEntry& e = kernel.main;
    choice.entry = &e;
    choice.name = e.name;
    choice.transpose_a = kernel.transposes_a;
    choice.transpose_b = kernel.transposes_b;
    const std::string transposed = std::string(choice.transpose_a && choice.transpose_b
                                                   ? "A (column-major) and B (row-major) transposed"
                                               : choice.transpose_a ? "A (column-major) transposed"
                                                                    : "B (row-major) transposed") +
                                   " into k-major scratch first (" + kernel.transpose +
                                   ", timed with it)";
    if (kernel.has_fallback()) {
      // (main's preconditions leave the transposed operands out: codegen/emit_mma.cpp)
      const std::string failure = precondition_failure(e, p, a, b, c);
      if (!failure.empty()) {
        choice.entry = &kernel.fallback;
        choice.name = kernel.fallback.name;
        choice.fallback = true;
      }
      choice.why = transposed + (failure.empty() ? "" : "; " + failure);
      return choice;
    }
    choice.repack_a = !choice.transpose_a && breaks(a, p.a_ld(), p.a_stride());
    choice.repack_b = !choice.transpose_b && breaks(b, p.b_ld(), p.b_stride());
    choice.why = transposed + (choice.repack_a || choice.repack_b
                                   ? std::string("; ") + (choice.repack_a ? "A" : "B") +
                                         " repacked into aligned scratch (" + kernel.repack + ")"
                                   : "");
    return choice;
  }
  std::string failure = precondition_failure(kernel.main, p, a, b, c);
  if (failure.empty()) {
    choice.entry = &kernel.main;
    choice.name = kernel.main.name;
    choice.why =
        kernel.main.align_bytes > 1 || kernel.main.ld_multiple > 1 || kernel.main.n_multiple > 1
            ? "alignment preconditions hold"
            : "no alignment preconditions";
    return choice;
  }
  if (kernel.has_repack()) {
    // TMA needs A and B 16-byte aligned with leading dimensions (and batch
    // strides) in 16-byte multiples; an operand that is not is copied into
    // aligned scratch first.
    choice.entry = &kernel.main;
    choice.name = kernel.main.name;
    choice.repack_a = breaks(a, p.a_ld(), p.a_stride());
    choice.repack_b = breaks(b, p.b_ld(), p.b_stride());
    choice.why = failure + ": " +
                 (choice.repack_a && choice.repack_b ? "A and B"
                  : choice.repack_a                  ? "A"
                                                     : "B") +
                 " repacked into aligned scratch first (" + kernel.repack + ", timed with it)";
    return choice;
  }
  if (!kernel.has_fallback())
    throw Error(Error::Kind::cuda, "internal error: the main kernel " + kernel.main.name +
                                       " cannot run here (" + failure +
                                       ") and the generated module has no fallback entry "
                                       "(a schedc code generator bug)");
  choice.entry = &kernel.fallback;
  choice.name = kernel.fallback.name;
  choice.fallback = true;
  choice.why = failure;
  return choice;
}

std::vector<std::string> entries_for(const codegen::GeneratedKernel& kernel,
                                     const compiler::Problem& p) {
  if (!kernel.entry_guards) return kernel.entry_names();
  const void* aligned = reinterpret_cast<const void*>(uintptr_t(256));  // cudaMalloc's alignment
  return entries_for(kernel, choose_entry(kernel, p, aligned, aligned, aligned));
}

std::vector<std::string> entries_for(const codegen::GeneratedKernel& kernel,
                                     const std::vector<compiler::Problem>& problems) {
  std::vector<std::string> names;
  for (const compiler::Problem& p : problems)
    for (const std::string& e : entries_for(kernel, p))
      if (std::find(names.begin(), names.end(), e) == names.end()) names.push_back(e);
  return names;
}

std::vector<std::string> main_entries(const codegen::GeneratedKernel& kernel) {
  EntryChoice main;
  main.entry = &kernel.main;
  main.name = kernel.main.name;
  return entries_for(kernel, main);
}

std::vector<std::string> entries_for(const codegen::GeneratedKernel& kernel,
                                     const EntryChoice& choice) {
  std::vector<std::string> names = {choice.name};
  if (choice.entry && choice.entry->stream_k) names.push_back(choice.entry->stream_k_tail);
  if (choice.repack_a || choice.repack_b) names.push_back(kernel.repack);
  if (choice.transpose_a || choice.transpose_b) names.push_back(kernel.transpose);
  return names;
}

namespace {

// k-tiles of one C tile: the k loop's trip count.
int64_t k_tiles_of(const codegen::KernelEntry& e, const compiler::Problem& p) {
  return (p.k + e.tile_k - 1) / e.tile_k;
}

// Makes `buf` hold at least `need` bytes (its contents lost when it grows);
// with `zero`, a new buffer starts zeroed.
void grow_device_buffer(void*& buf, size_t& have, size_t need, bool zero, const char* what) {
  if (need <= have) return;
  if (buf) cudaFree(buf);
  buf = nullptr;
  have = 0;
  check_cuda(cudaMalloc(&buf, need), (std::string("cudaMalloc (") + what + ")").c_str());
  if (zero)
    check_cuda(cudaMemset(buf, 0, need), (std::string("cudaMemset (") + what + ")").c_str());
  have = need;
}

// Blocks of `fn` (launched as entry `e`) that fit on one SM at once. Should
// the occupancy query fail, 1: a stream_k split or a persistent grid sized
// from it stays correct, only less even.
int query_blocks_per_sm(void* fn, const codegen::KernelEntry& e) {
  int n = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, reinterpret_cast<const void*>(fn),
                                                    int(e.block.x * e.block.y * e.block.z),
                                                    e.dynamic_smem) != cudaSuccess ||
      n < 1) {
    cudaGetLastError();
    n = 1;
  }
  return n;
}

// Clusters of `fn` (launched as entry `e`, `size` blocks a cluster) that fit
// on the device at once; should the query fail, what the blocks per SM
// allow. `at_launch`: the launch sets the cluster size (split_k), else the
// kernel's __cluster_dims__ does.
int64_t max_active_clusters(void* fn, const codegen::KernelEntry& e, int64_t size, int64_t sms,
                            bool at_launch) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(unsigned(size * sms), 1, 1);
  config.blockDim = dim3(e.block.x, e.block.y, e.block.z);
  config.dynamicSmemBytes = e.dynamic_smem;
  cudaLaunchAttribute cluster = {};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = unsigned(size);
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  if (at_launch) {
    config.attrs = &cluster;
    config.numAttrs = 1;
  }
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, reinterpret_cast<const void*>(fn), &config) !=
          cudaSuccess ||
      n < 1) {
    cudaGetLastError();
    return std::max<int64_t>(1, int64_t(query_blocks_per_sm(fn, e)) * sms / size);
  }
  return n;
}

// A whole number of at least `least` in the environment variable `name`;
// unset, empty or anything else: -1.
int64_t env_count(const char* name, int64_t least) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  return (*end == '\0' && n >= least) ? int64_t(n) : -1;
}

// SCHEDC_STREAM_K_MAX_SLICES=N caps the slices a stream_k split cuts a tile
// into (docs/runtime.md): for measuring the policy's choices. Unset, empty or
// not a positive number: no cap.
int64_t stream_k_max_slices() {
  return std::max<int64_t>(0, env_count("SCHEDC_STREAM_K_MAX_SLICES", 1));
}

// The entry's slice cost, or SCHEDC_STREAM_K_SLICE_COST=N (N >= 1), and its
// sum cost, or SCHEDC_STREAM_K_SUM_COST=N (N >= 0) (docs/runtime.md): for
// measuring the policy's model.
int64_t stream_k_slice_cost(const codegen::KernelEntry& e) {
  const int64_t n = env_count("SCHEDC_STREAM_K_SLICE_COST", 1);
  return n >= 0 ? n : int64_t(e.stream_k_slice_cost);
}
int64_t stream_k_sum_cost(const codegen::KernelEntry& e) {
  const int64_t n = env_count("SCHEDC_STREAM_K_SUM_COST", 0);
  return n >= 0 ? n : int64_t(e.stream_k_sum_cost);
}

}  // namespace

uint32_t Module::split_slices(const EntryChoice& choice, const compiler::Problem& p) const {
  const codegen::KernelEntry& e = *choice.entry;
  if (e.split_k < 2) return 1;
  const std::string& name = checked_name(choice.entry);
  const codegen::Dim3 tiles = e.grid(p.m, p.n);
  const int64_t all = int64_t(tiles.x) * tiles.y * p.batch;
  if (2 * all > int64_t(blocks_per_sm(name, e)) * num_sms_) return 1;  // no room for two a tile
  // paired: a cluster is the slices of two tiles (at most 8 blocks: the analyzer's split_k 4)
  const int64_t pair = e.paired() ? 2 : 1;
  for (int64_t s = std::min<int64_t>(e.split_k, k_tiles_of(e, p)); s >= 2; --s)
    if (all / pair <= clusters_that_fit(name, e, uint32_t(s * pair))) return uint32_t(s);
  return 1;
}

int64_t Module::clusters_that_fit(const std::string& name, const codegen::KernelEntry& e,
                                  uint32_t size) const {
  void* kernel = handle(name);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::map<uint32_t, int64_t>& known = kernels_.at(name).clusters;
    if (auto it = known.find(size); it != known.end()) return it->second;
  }
  const int64_t fit = max_active_clusters(kernel, e, size, num_sms_, true);
  std::lock_guard<std::mutex> lock(mutex_);
  kernels_.at(name).clusters[size] = fit;
  return fit;
}

int Module::conv_a_copies(const EntryChoice& choice, const compiler::Problem& p,
                          const ConvArgs& conv, std::string* why) const {
  const codegen::KernelEntry& e = *choice.entry;
  const int copies = conv_im2col_copies(e, conv, why);
  if (copies < 2) return copies;
  const codegen::Dim3 g = grid_for(choice, p);
  return conv_copies_in_one_wave(copies, int64_t(g.x) * g.y * g.z,
                                 int64_t(blocks_per_sm(checked_name(choice.entry), e)) * num_sms_,
                                 conv.c, why);
}

std::optional<compiler::HaloGeometry> Module::conv_halo(const EntryChoice& choice,
                                                        const compiler::Problem& p,
                                                        const ConvArgs& conv,
                                                        std::string* why) const {
  const codegen::KernelEntry& e = *choice.entry;
  const int elem = operand_bytes(kernel_.dtype);
  // The tiles, and so the grid and its slices, come before the shared memory.
  const std::optional<compiler::HaloGeometry> g = conv_halo_plan(e, conv, elem, 0, why);
  if (!g) return std::nullopt;
  compiler::Problem grid_p = p;
  grid_p.m = g->tiles * int64_t(e.tile_m);
  return conv_halo_plan(e, conv, elem, split_slices(choice, grid_p), why);
}

int Module::blocks_per_sm(const std::string& name, const codegen::KernelEntry& e) const {
  void* kernel = handle(name);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (int n = kernels_.at(name).blocks_per_sm; n > 0) return n;
  }
  const int n = query_blocks_per_sm(kernel, e);
  std::lock_guard<std::mutex> lock(mutex_);
  kernels_.at(name).blocks_per_sm = n;
  return n;
}

compiler::StreamKSplit Module::stream_k_split(const EntryChoice& choice,
                                              const compiler::Problem& p) const {
  const codegen::KernelEntry& e = *choice.entry;
  const codegen::Dim3 tiles = e.grid(p.m, p.n);
  const int64_t k_tiles = k_tiles_of(e, p);
  // Slots: the blocks that run at once on the whole device, of the entry or
  // of its tail, whichever has fewer (the tail may need more registers).
  checked_name(choice.entry);  // an entry of this module
  // A batch's GEMMs run side by side, each split alike: each on its share.
  const int64_t slots = std::max<int64_t>(
      1,
      int64_t(std::min(blocks_per_sm(e.name, e), blocks_per_sm(e.stream_k_tail, e.tail_launch()))) *
          num_sms_ / p.batch);
  return compiler::split_stream_k(int64_t(tiles.x) * tiles.y, k_tiles, slots, stream_k_max_slices(),
                                  stream_k_slice_cost(e), stream_k_sum_cost(e));
}

codegen::Dim3 Module::grid_for(const EntryChoice& choice, const compiler::Problem& p) const {
  const codegen::KernelEntry& e = *choice.entry;
  codegen::Dim3 g = e.grid(p.m, p.n);
  const int64_t cluster = int64_t(e.cluster_m) * e.cluster_n;
  if (e.persistent && cluster > 1) {
    // An even grid: two blocks per super-tile, at most as many clusters as fit.
    const int64_t tiles_m = (p.m + e.tile_m - 1) / e.tile_m,
                  tiles_n = (p.n + e.tile_n - 1) / e.tile_n;
    const int64_t supers =
        ((tiles_m + e.cluster_m - 1) / e.cluster_m) * ((tiles_n + e.cluster_n - 1) / e.cluster_n);
    // A batch's GEMMs (grid z) share the clusters that fit.
    const int64_t fit =
        max_active_clusters(handle(checked_name(choice.entry)), e, cluster, num_sms_, false) /
        p.batch;
    g.x = uint32_t(cluster * std::max<int64_t>(1, std::min(supers, fit)));
  } else if (e.persistent) {
    return persistent_grid(choice, g.x, p.batch);
  }
  g.x *= split_slices(choice, p);  // the tile's cluster along x
  g.z = uint32_t(p.batch);
  return g;
}

codegen::Dim3 Module::persistent_grid(const EntryChoice& choice, int64_t tiles,
                                      int64_t batch) const {
  const codegen::KernelEntry& e = *choice.entry;
  checked_name(choice.entry);  // an entry of this module
  const int64_t slots = int64_t(blocks_per_sm(e.name, e)) * num_sms_;
  // An entry that walks the batch: one 1-D walk over every GEMM's tiles.
  if (e.walks_batch) return codegen::Dim3{uint32_t(std::min<int64_t>(tiles * batch, slots)), 1, 1};
  return codegen::Dim3{uint32_t(std::min<int64_t>(tiles, std::max<int64_t>(1, slots / batch))), 1,
                       uint32_t(batch)};
}

std::string Module::launch_note(const EntryChoice& choice, const compiler::Problem& p) const {
  const codegen::KernelEntry& e = *choice.entry;
  const codegen::Dim3 tiles = e.grid(p.m, p.n);
  std::ostringstream o;
  if (p.batch > 1)
    o << (e.walks_batch
              ? "one walk over the tiles of " + std::to_string(p.batch) + " GEMMs, GEMM by GEMM: "
              : "each of " + std::to_string(p.batch) + " GEMMs (grid z): ");
  if (e.persistent && !e.stream_k) {
    const codegen::Dim3 g = grid_for(choice, p);
    o << "persistent grid of " << g.x << " blocks (" << num_sms_ << " SMs x "
      << blocks_per_sm(e.name, e) << ") over " << tiles.x << " C tiles";
    if (e.cluster_m * e.cluster_n > 1)
      o << ", clusters of " << e.cluster_m << "x" << e.cluster_n << " tiles (" << g.x / 2
        << " clusters)";
    return o.str();
  }
  if (e.split_k > 1) {
    const uint32_t slices = split_slices(choice, p);
    const int64_t k_tiles = k_tiles_of(e, p);
    o << "grid " << tiles.x * slices << "x" << tiles.y << ": ";
    const std::string pairs =
        e.paired() ? ", in clusters of " + std::to_string(slices) +
                         "x2: each slice's CTAs of two tiles along M share B (cluster 2x1)"
                   : "";
    if (slices == 1) {
      o << "one block per C tile (split_k " << e.split_k
        << ": with two CTAs a tile not all of them would run at once, or one k-tile)" << pairs;
      return o.str();
    }
    o << "a cluster of " << slices << " CTAs per C tile (split_k " << e.split_k << "), each "
      << k_tiles / slices
      << (k_tiles % slices ? "-" + std::to_string(k_tiles / slices + 1) : std::string())
      << " of its " << k_tiles << " k-tiles, summed through distributed shared memory" << pairs;
    return o.str();
  }
  if (!e.stream_k) {
    o << "grid " << tiles.x << "x" << tiles.y << ", one block per C tile";
    return o.str();
  }
  const compiler::StreamKSplit split = stream_k_split(choice, p);
  const int64_t all = int64_t(tiles.x) * tiles.y, k_tiles = k_tiles_of(e, p);
  o << "stream_k on " << num_sms_ << " SMs (in the split's model a slice costs "
    << stream_k_slice_cost(e) << " k-tiles more";
  if (const int64_t sum = stream_k_sum_cost(e); sum > 0) o << ", and " << sum << " to sum";
  o << "): ";
  if (!split.splits()) {
    o << e.name << " on all " << all << " tiles, one block each (no partial wave worth splitting)";
    return o.str();
  }
  if (split.whole_tiles > 0) {
    o << e.name << " on " << split.whole_tiles << " tiles whole";
    if (e.persistent)
      o << " (a persistent grid of " << persistent_grid(choice, split.whole_tiles, p.batch).x
        << " blocks)";
    o << ", then ";
  }
  const int64_t trail = k_tiles - split.lead_k_tiles;
  o << e.stream_k_tail << " on the other " << split.shared_tiles << " (" << k_tiles
    << " k-tiles each), cut in " << split.slices << " slices: " << split.units()
    << " blocks, a lead of " << split.lead_k_tiles << " k-tiles and " << split.slices - 1
    << " of about " << (trail + (split.slices - 1) / 2) / (split.slices - 1) << " per tile";
  return o.str();
}

const std::string& Module::checked_name(const codegen::KernelEntry* entry) const {
  // The choice may have been made on another copy of the kernel: match by name.
  if (entry && (entry->name == kernel_.main.name ||
                (kernel_.has_fallback() && entry->name == kernel_.fallback.name)))
    return entry->name;
  throw Error(Error::Kind::cuda, "internal error: launch of an entry this module does not hold");
}

void Module::ensure_stream_k_workspace(const codegen::KernelEntry& e,
                                       const compiler::StreamKSplit& split, int64_t batch) const {
  // A batched tail's GEMM z uses slots z * units .. (z + 1) * units - 1 of
  // both (codegen/blocks_common.cpp, emit_batch_offsets).
  const size_t partials = size_t(split.units() * batch) * e.tile_m * e.tile_n * sizeof(float);
  const size_t counters =
      size_t(kernel_.batched ? split.units() * batch : std::max<int64_t>(split.shared_tiles, 1)) *
      sizeof(int);
  grow_device_buffer(sk_partials_, sk_partials_bytes_, partials, false, "stream_k partial sums");
  grow_device_buffer(sk_counters_, sk_counters_bytes_, counters, true, "stream_k tile counters");
}

void Module::copy_per_gemm(int which, const char* what, const std::string& entry,
                           codegen::Dim3 grid, codegen::Dim3 block, const void* src, int64_t rows,
                           int64_t cols, int64_t ld, int64_t stride, int64_t batch,
                           int64_t dst_rows, int64_t dst_ld, void* stream) const {
  const int elem = operand_bytes(kernel_.dtype);
  grow_device_buffer(scratch_[which], scratch_bytes_[which],
                     size_t(batch * dst_rows * dst_ld * elem), false, what);
  codegen::KernelEntry e;
  e.block = block;
  // One launch per GEMM of a batch (the entry copies one matrix): the copies
  // serve operands TMA cannot read where they lie, which are not the fast path.
  for (int64_t z = 0; z < batch; ++z) {
    const void* from = static_cast<const char*>(src) + z * stride * elem;
    void* dst = static_cast<char*>(scratch_[which]) + z * dst_rows * dst_ld * elem;
    int r = int(rows), c = int(cols), l = int(ld), d = int(dst_ld);
    void* params[] = {&from, &r, &c, &l, &dst, &d};
    launch_kernel(launchable(entry), entry, grid, e, params, stream, false);
  }
}

int64_t Module::repack(int which, const void* src, int64_t rows, int64_t cols, int64_t ld,
                       int64_t stride, int64_t batch, void* stream) const {
  const int elem = operand_bytes(kernel_.dtype);
  const int64_t dst_ld = compiler::wgmma_repack_ld(cols, elem);
  const int64_t chunks = rows * (dst_ld * elem / 16);  // 16-byte chunks, 256 a block
  copy_per_gemm(which, which == 0 ? "repack scratch of A" : "repack scratch of B", kernel_.repack,
                codegen::Dim3{uint32_t((chunks + 255) / 256), 1, 1}, codegen::Dim3{256, 1, 1}, src,
                rows, cols, ld, stride, batch, rows, dst_ld, stream);
  return dst_ld;
}

int64_t Module::transpose(int which, const void* src, int64_t rows, int64_t cols, int64_t ld,
                          int64_t stride, int64_t batch, void* stream) const {
  const int elem = operand_bytes(kernel_.dtype);
  const int64_t dst_ld = compiler::wgmma_repack_ld(rows, elem);
  // 32 x 32 tiles of the source, 32 x 8 threads each.
  copy_per_gemm(which, which == 0 ? "transposed scratch of A" : "transposed scratch of B",
                kernel_.transpose,
                codegen::Dim3{uint32_t((cols + 31) / 32), uint32_t((dst_ld + 31) / 32), 1},
                codegen::Dim3{32, 8, 1}, src, rows, cols, ld, stride, batch, cols, dst_ld, stream);
  return dst_ld;
}

void Module::launch(const EntryChoice& choice, const compiler::Problem& p, const GemmArgs& args,
                    void* stream) const {
  const codegen::KernelEntry& e = *choice.entry;
  check_conv_launch(kernel_, choice, p, args);
  const LaunchableEntry fn = launchable(checked_name(choice.entry));
  // A `halo` entry that takes this convolution's input once a tile
  // (runtime/conv_launch.h): its grid and M count the halo tiles' rows, some
  // of them junk that the epilogue does not store (grid_p).
  std::string no_halo;
  const std::optional<compiler::HaloGeometry> halo =
      args.conv && e.uses_tma() ? conv_halo(choice, p, *args.conv, &no_halo) : std::nullopt;
  if (!halo && e.halo_only) throw Error(Error::Kind::refused, halo_only_refusal(e, no_halo));
  compiler::Problem grid_p = p;
  if (halo) grid_p.m = halo->tiles * int64_t(e.tile_m);
  int m = int(grid_p.m), n = int(p.n), k = int(p.k);
  int lda = int(p.a_ld()), ldb = int(p.b_ld()), ldc = int(p.c_ld());
  // An NCHW32 convolution's output is no matrix: its entries take P·Q, the
  // pixels of an output plane, as ldc (codegen/generated_kernel.h).
  if (kernel_.conv == "nchw32") ldc = args.conv->p * args.conv->q;
  // A batch's strides; one GEMM's are its matrices' extents (never read by
  // the kernel, but a 3-D tensor map takes them all the same).
  const bool batch = p.batch > 1;
  long long stride_a = batch ? p.a_stride() : p.a_rows() * p.a_ld();
  long long stride_b = batch ? p.b_stride() : p.b_rows() * p.b_ld();
  long long stride_c = batch ? p.c_stride() : p.c_rows() * p.c_ld();
  const void* a = args.a;
  const void* b = args.b;
  // The row and column counts of A and B as main reads them: a transposed
  // operand (K rows of M or N where it lies) is read k-major from its
  // scratch, M or N rows of K.
  int64_t a_rows = p.a_rows(), a_row_len = p.a_row_len();
  int64_t b_rows = p.b_rows(), b_row_len = p.b_row_len();
  auto transposed = [&](int which, const void*& ptr, int& ld, long long& stride, int64_t& rows,
                        int64_t& row_len, int64_t mn) {
    ld = int(transpose(which, ptr, p.k, mn, ld, stride, p.batch, stream));
    ptr = scratch_[which];
    rows = mn, row_len = p.k;
    stride = mn * ld;
  };
  if (choice.transpose_a) transposed(0, a, lda, stride_a, a_rows, a_row_len, p.m);
  if (choice.transpose_b) transposed(1, b, ldb, stride_b, b_rows, b_row_len, p.n);
  if (choice.repack_a) {
    lda = int(repack(0, a, p.a_rows(), p.a_row_len(), p.a_ld(), stride_a, p.batch, stream));
    a = scratch_[0];
    stride_a = p.a_rows() * lda;
  }
  if (choice.repack_b) {
    ldb = int(repack(1, b, p.b_rows(), p.b_row_len(), p.b_ld(), stride_b, p.batch, stream));
    b = scratch_[1];
    stride_b = p.b_rows() * ldb;
  }
  // The grid after the copies into scratch: those reach the GPU first, and
  // the occupancy queries behind a persistent grid or a stream_k split
  // overlap them rather than delay them.
  const codegen::Dim3 g = grid_for(choice, grid_p);
  if (g.x > 2147483647u || g.y > 65535 || g.z > 65535 || g.x == 0 || g.y == 0)
    throw Error(Error::Kind::cuda, "grid " + std::to_string(g.x) + "x" + std::to_string(g.y) + "x" +
                                       std::to_string(g.z) + " for " + e.name +
                                       " is outside CUDA's limits");
  void* c = args.c;
  float alpha = args.alpha, beta = args.beta;
  // The s8 epilogue scales the exact s32 sums by int(alpha) and int(beta)
  // (codegen/blocks_common.cpp): a fraction would be dropped silently. Every
  // run, benchmark and library call passes here (the CLI checks first, to
  // exit 2 before looking for a device).
  if (std::string why = integer_scalars_error(kernel_, alpha, beta); !why.empty())
    throw Error(Error::Kind::cuda, why);
  const float* bias = args.bias;
  const float* scale = args.scale;
  if (kernel_.channel_scale && !scale)
    throw Error(Error::Kind::cuda,
                "the kernel's epilogue takes per-channel scales ('epilogue ... scale'): pass N "
                "floats as scale (it is null)");
  // The fixed ABI: (M, N, K, A, lda, B, ldb, C, ldc, alpha, beta, bias), the
  // per-channel scales where the module takes them, the batch strides of a
  // batched module, then the tensor maps of A and B (and C) for a TMA entry:
  // 3-D, over the batch, in a batched module.
  const int64_t map_batch = kernel_.batched ? p.batch : 0;
  TmaMap map_a{}, map_b{}, map_c{};
  // A convolution's A is its input: the producer's threads copy it (its map
  // stays zeros, unread) unless TMA's im2col mode can load it (the map in
  // that mode, and conv.im2col = its copies a k-tile: codegen/generated_kernel.h).
  ConvArgs conv_args;
  if (args.conv) {
    conv_args = *args.conv;
    conv_args.im2col = 0;
  }
  if (e.uses_tma()) {
    if (!args.conv) {
      map_a = maps_.tiled(kernel_.dtype, a, a_rows, a_row_len, lda, e.tma_a, map_batch, stride_a);
    } else if (halo) {
      const int elem = operand_bytes(kernel_.dtype);
      map_a = maps_.halo(kernel_.dtype, a, halo_box(conv_args, *halo, elem));
      set_conv_halo(conv_args, *halo, elem);
    } else if (const int copies = conv_a_copies(choice, p, conv_args); copies > 0) {
      codegen::TmaBox box = e.tma_a;  // BM pixels x BK / copies channels
      box.box_cols /= uint32_t(copies);
      map_a = maps_.im2col(kernel_.dtype, a, im2col_geometry(conv_args), box);
      conv_args.im2col = copies;
    }
    map_b = maps_.tiled(kernel_.dtype, b, b_rows, b_row_len, ldb, e.tma_b, map_batch, stride_b);
  }
  const int elem = c_bytes(kernel_);
  // The kernel stores C by TMA under the same condition (codegen/blocks_wgmma.cpp).
  if (e.tma_c.box_rows > 0 && reinterpret_cast<uintptr_t>(c) % 16 == 0 && (ldc * elem) % 16 == 0 &&
      (p.c_row_len() * elem) % 16 == 0 && (!kernel_.batched || (stride_c * elem) % 16 == 0))
    map_c = maps_.tiled(to_string(output_type(kernel_.dtype, kernel_.c_dtype)), c, p.c_rows(),
                        p.c_row_len(), ldc, e.tma_c, map_batch, stride_c);
  // A TMA entry with stream_k takes its tile count after the maps
  // (codegen/generated_kernel.h); other kernels ignore the extra parameter.
  const compiler::StreamKSplit split =
      e.stream_k ? stream_k_split(choice, p) : compiler::StreamKSplit{};
  int sk_whole_tiles = int(split.whole_tiles);  // all of them when the split splits none
  std::vector<void*> params = {&m, &n, &k, &a, &lda, &b, &ldb, &c, &ldc, &alpha, &beta, &bias};
  if (kernel_.channel_scale) params.push_back(&scale);
  int batch_count = int(p.batch);
  if (kernel_.batched) params.insert(params.end(), {&stride_a, &stride_b, &stride_c, &batch_count});
  const size_t common = params.size();  // what the stream_k tail takes before its own
  params.insert(params.end(), {&map_a, &map_b, &map_c, &sk_whole_tiles});
  // A convolution module's entries take the ConvArgs right after the
  // parameters they declare (runtime/conv_launch.h).
  void* conv = args.conv ? &conv_args : nullptr;
  if (conv) {
    params.resize(common + entry_extra_params(e));
    params.push_back(conv);
  }
  const bool early = e.dependent_launch && launch_early(cc_major_);
  if (!e.stream_k) {
    // split_k: grid_for widened x by the tile's cluster
    const uint32_t slices = e.split_k > 1 ? g.x / e.grid(grid_p.m, p.n).x : 1;
    launch_kernel(fn, e.name, g, e, params.data(), stream, early, slices, e.paired() ? 2 : 1);
    return;
  }
  // stream_k: the whole tiles on the entry, then the shared ones on its tail;
  // each GEMM of a batch alike (grid z).
  const uint32_t gemms = uint32_t(p.batch);
  if (split.whole_tiles > 0) {
    const codegen::Dim3 main_grid = e.persistent
                                        ? persistent_grid(choice, split.whole_tiles, p.batch)
                                        : codegen::Dim3{uint32_t(split.whole_tiles), 1, gemms};
    launch_kernel(fn, e.name, main_grid, e, params.data(), stream, early);
  }
  if (!split.splits()) return;
  ensure_stream_k_workspace(e, split, p.batch);
  int sk_slices = int(split.slices), sk_lead_k_tiles = int(split.lead_k_tiles);
  void* sk_partials = sk_partials_;
  void* sk_counters = sk_counters_;
  std::vector<void*> sk_params(params.begin(), params.begin() + common);
  if (e.uses_tma()) sk_params.insert(sk_params.end(), {&map_a, &map_b, &map_c});
  sk_params.insert(sk_params.end(),
                   {&sk_whole_tiles, &sk_slices, &sk_lead_k_tiles, &sk_partials, &sk_counters});
  if (conv) sk_params.push_back(conv);
  launch_kernel(launchable(e.stream_k_tail), e.stream_k_tail,
                codegen::Dim3{uint32_t(split.units()), 1, gemms}, e.tail_launch(), sk_params.data(),
                stream, split.whole_tiles > 0 && cc_major_ >= 9);
}

}  // namespace schedc::runtime
