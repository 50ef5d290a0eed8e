#include "compiler/explain.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "compiler/copy_notes.h"

namespace schedc::compiler {

namespace {

constexpr int kWavefrontBytes = 128;  // 32 banks x 4 bytes

Occupancy occupancy_of(const KernelPlan& p, int registers) {
  const Target& t = p.target;
  // Not compiled: a warp-specialized wgmma kernel's registers are known all
  // the same (registers_fixed_at_launch).
  if (registers <= 0 && registers_fixed_at_launch(p.schedule))
    registers = t.registers_per_thread(p.block_threads * p.schedule.blocks_per_sm);
  Occupancy o;
  o.threads = p.block_threads;
  o.registers = registers;
  o.smem_bytes = p.smem_bytes;
  const int warps = (p.block_threads + t.warp_size - 1) / t.warp_size;
  struct Limit {
    int blocks;
    const char* what;
  };
  std::vector<Limit> limits = {
      {t.max_threads_per_sm / (warps * t.warp_size), "threads per SM"},
      {t.max_blocks_per_sm, "blocks per SM"},
  };
  if (p.smem_bytes > 0)
    limits.push_back({t.smem_per_sm / (p.smem_bytes + t.smem_reserved_per_block), "shared memory"});
  if (registers > 0) {
    int per_warp =
        (registers * t.warp_size + t.reg_alloc_unit - 1) / t.reg_alloc_unit * t.reg_alloc_unit;
    limits.push_back({t.regs_per_sm / (per_warp * warps), "registers"});
  }
  Limit lowest =
      *std::min_element(limits.begin(), limits.end(),
                        [](const Limit& a, const Limit& b) { return a.blocks < b.blocks; });
  o.blocks_per_sm = std::max(lowest.blocks, 0);
  o.limited_by = lowest.what;
  o.warps_per_sm = o.blocks_per_sm * warps;
  o.occupancy = double(o.warps_per_sm) / double(t.max_threads_per_sm / t.warp_size);
  return o;
}

long long sectors_of(const WarpRequest& r) {
  std::set<long long> sectors;
  for (int64_t a : r.byte_addr)
    if (a >= 0)
      for (int64_t b = a; b < a + r.width_bytes; b += 4) sectors.insert(b / 32);
  return (long long)sectors.size();
}

long long bytes_of(const WarpRequest& r) {
  long long n = 0;
  for (int64_t a : r.byte_addr)
    if (a >= 0) n += r.width_bytes;
  return n;
}

// Collects warp requests: lane addresses are filled thread by thread, and a
// request is closed at each warp boundary.
class RequestSet {
 public:
  RequestSet(int threads, int width) : threads_(threads), width_(width) {}
  // addr_of(thread) -> byte address, or -1 for an inactive thread.
  template <class F>
  void add(F addr_of) {
    for (int w = 0; w * 32 < threads_; ++w) {
      WarpRequest r;
      r.width_bytes = width_;
      bool any = false;
      for (int lane = 0; lane < 32 && w * 32 + lane < threads_; ++lane) {
        r.byte_addr[size_t(lane)] = addr_of(w * 32 + lane);
        any = any || r.byte_addr[size_t(lane)] >= 0;
      }
      if (any) requests_.push_back(r);  // a warp with no active lane issues nothing
    }
  }
  const std::vector<WarpRequest>& requests() const { return requests_; }

 private:
  int threads_, width_;
  std::vector<WarpRequest> requests_;
};

void add_shared(Explanation& e, const std::string& what, const RequestSet& set) {
  if (set.requests().empty()) return;
  SharedAccess s;
  s.what = what;
  s.width_bytes = set.requests().front().width_bytes;
  s.requests = int(set.requests().size());
  s.cost = total_bank_cost(set.requests());
  e.shared.push_back(s);
}

void add_global(Explanation& e, const std::string& what, const RequestSet& set) {
  if (set.requests().empty()) return;
  GlobalAccess g;
  g.what = what;
  g.width_bytes = set.requests().front().width_bytes;
  g.requests = int(set.requests().size());
  for (const WarpRequest& r : set.requests()) {
    g.bytes += bytes_of(r);
    g.sectors += sectors_of(r);
  }
  e.global.push_back(g);
}

// ---- SIMT ----

void simt_copy(Explanation& e, const KernelPlan& p, const TileCopy& c, const SmemLayout& s,
               int64_t ld, const char* op) {
  const int es = elem_bytes(p.dtype);
  RequestSet global(c.threads, c.vec * es);
  for (int i = 0; i < c.iters; ++i)
    global.add([&](int t) {
      if (!c.active(t, i)) return int64_t(-1);
      auto [r, col] = c.coord(t, i);
      return int64_t(r) * ld * es + int64_t(col) * es;
    });
  const char* path = p.pipeline == Pipeline::cp_async ? "global -> shared" : "global -> registers";
  add_global(e,
             std::string("load ") + op + " (" + path + ", " + std::to_string(c.vec) + " per load)",
             global);
  const int stores = c.vec / c.smem_vec;
  RequestSet shared(c.threads, c.smem_vec * es);
  for (int i = 0; i < c.iters; ++i)
    for (int st = 0; st < stores; ++st)
      shared.add([&](int t) {
        if (!c.active(t, i)) return int64_t(-1);
        auto [r, col] = c.coord(t, i);
        auto [lr, lc] = c.logical(r, col + st * c.smem_vec);
        return int64_t(s.offset(lr, lc)) * es;
      });
  add_shared(e, "store " + s.name + " (copy of " + op + ")", shared);
}

void simt_fragments(Explanation& e, const KernelPlan& p) {
  const int es = elem_bytes(p.dtype);
  const ThreadMap& m = p.threads;
  RequestSet a(p.block_threads, p.frag.vec_a * es), b(p.block_threads, p.frag.vec_b * es);
  for (int k = 0; k < p.block_k; ++k) {
    for (int i = 0; i < m.tm; i += p.frag.vec_a)
      a.add([&](int t) { return int64_t(p.smem_a.offset(m.row(t, i), k)) * es; });
    for (int j = 0; j < m.tn; j += p.frag.vec_b)
      b.add([&](int t) { return int64_t(p.smem_b.offset(k, m.col(t, j))) * es; });
  }
  add_shared(
      e, "load " + p.smem_a.name + " (A fragments, " + std::to_string(p.frag.vec_a) + " per load)",
      a);
  add_shared(
      e, "load " + p.smem_b.name + " (B fragments, " + std::to_string(p.frag.vec_b) + " per load)",
      b);
}

void simt_c_store(Explanation& e, const KernelPlan& p, int64_t ldc) {
  const int es = elem_bytes(p.dtype);
  const ThreadMap& m = p.threads;
  const int v = std::max(p.epilogue.vec, 1);
  const bool col = p.schedule.c_col;  // layout C col: (m, n) at n * ldc + m, column by column
  RequestSet c(p.block_threads, v * es);
  for (int i = 0; i < m.tm; ++i)
    for (int j = 0; j < m.tn; j += v)
      c.add([&](int t) {
        const int64_t r = m.row(t, i), n = m.col(t, j);
        return (col ? n * ldc + r : r * ldc + n) * es;
      });
  add_global(e, "store C (" + std::to_string(v) + " per store)", c);
}

void naive_accesses(Explanation& e, const KernelPlan& p, const Shape& shape) {
  const int es = elem_bytes(p.dtype);
  const int threads = p.block_x * p.block_y;
  auto m_of = [&](int t) { return t / p.block_x; };
  auto n_of = [&](int t) { return t % p.block_x; };
  const compiler::Schedule& s = p.schedule;
  RequestSet a(threads, es), b(threads, es), c(threads, es);
  // A warp's addresses at one k, in each matrix's layout (packed).
  a.add([&](int t) { return int64_t(m_of(t)) * (s.a_col ? 1 : shape.k) * es; });
  b.add([&](int t) { return int64_t(n_of(t)) * (s.b_col ? shape.k : 1) * es; });
  c.add([&](int t) {
    return (s.c_col ? int64_t(n_of(t)) * shape.m + m_of(t) : int64_t(m_of(t)) * shape.n + n_of(t)) *
           es;
  });
  add_global(e, "load A (each k)", a);
  add_global(e, "load B (each k)", b);
  add_global(e, "store C", c);
}

// ---- tensor cores (mma.sync / WMMA) ----

// The note of an int8 kernel (`who`: "mma s8", "wgmma s8") that reads both
// operands k-major, on the operands the runtime transposes first; `how`
// ends it.
std::string transposed_operands_note(const char* who, bool a, bool b, const char* how) {
  return std::string(who) + " reads both operands k-major (A row-major, B column-major): " +
         (a && b ? "A and B are"
          : a    ? "A is"
                 : "B is") +
         " transposed into scratch " + how;
}

void mma_accesses(Explanation& e, const KernelPlan& p, const Shape& shape) {
  const MmaPlan& m = *p.mma;
  const int es = m.elem_bytes;
  struct Op {
    const CopyMap& copy;
    const SmemTile& tile;
    int64_t ld;
    const char* name;
  };
  // The copies walk each stage's rows, which are rows in memory (of K for a
  // row-major A, of M for a column-major one; of N or K for B).
  const int64_t a_ld = m.a_col ? shape.m : shape.k, b_ld = m.b_col ? shape.k : shape.n;
  for (const Op& op : {Op{m.copy_a, m.a, a_ld, "A"}, Op{m.copy_b, m.b, b_ld, "B"}}) {
    RequestSet global(p.block_threads, 16), shared(p.block_threads, 16);
    for (int i = 0; i < op.copy.iters; ++i) {
      global.add([&](int t) {
        int r, c;
        return op.copy.chunk(t, i, r, c) ? (int64_t(r) * op.ld + c) * es : int64_t(-1);
      });
      shared.add([&](int t) {
        int r, c;
        return op.copy.chunk(t, i, r, c) ? int64_t(op.tile.offset(r, c)) * es : int64_t(-1);
      });
    }
    add_global(e, std::string("load ") + op.name + " (cp.async, 16 bytes)", global);
    add_shared(e, std::string("store s") + op.name + " (cp.async, 16 bytes)", shared);
  }
  if (m.api != MmaApi::mma_sync) {
    e.notes.push_back(
        "WMMA loads its fragments itself (wmma::load_matrix_sync, layout "
        "unspecified): its shared reads are not modeled");
    return;
  }
  if (m.s8_m8n8k16)
    e.notes.push_back(
        "mma s8 m8n8k16: the fragments and shared reads are m16n8k32's; each such step is four "
        "m8n8k16 instructions (rows g and g + 8, k 0-15 and 16-31), a quarter of the work an "
        "instruction");
  const int warps = m.warps_m * m.warps_n, v = m.a.chunk_elems();
  std::vector<WarpRequest> a_reqs, b_reqs;
  int b_width = 16;
  for (int w = 0; w < warps; ++w) {
    const int wr = m.warp_row(w) * m.warp_m, wc = m.warp_col(w) * m.warp_n;
    for (int kk = 0; kk < m.k_steps; ++kk) {
      for (int mi = 0; mi < m.frags_m; ++mi) {
        if (!m.ldmatrix_a) {  // column-major tf32 A: a 4-byte load per register
          for (int i = 0; i < m.regs_a; ++i) {
            WarpRequest r;
            r.width_bytes = 4;
            for (int lane = 0; lane < 32; ++lane) {
              int fm, fk;
              mma_tf32_a_coord(lane, i, fm, fk);
              r.byte_addr[size_t(lane)] =
                  int64_t(m.a_offset(wr + mi * 16 + fm, kk * m.inst_k + fk)) * es;
            }
            a_reqs.push_back(r);
          }
          continue;
        }
        WarpRequest r;
        r.width_bytes = 16;
        for (int lane = 0; lane < 8 * m.regs_a; ++lane) {
          int fm, fk;
          ldmatrix_a_lane(m.a_col, lane, m.regs_a, v, fm, fk);
          r.byte_addr[size_t(lane)] =
              int64_t(m.a_offset(wr + mi * 16 + fm, kk * m.inst_k + fk)) * es;
        }
        a_reqs.push_back(r);
      }
      if (m.ldmatrix_b) {
        const int per = m.b_frags_per_ldmatrix, kb = m.regs_b, count = per * kb;
        for (int ni = 0; ni < m.frags_n; ni += per) {
          WarpRequest r;
          r.width_bytes = 16;
          for (int lane = 0; lane < 8 * count; ++lane) {
            int fk, fn;
            ldmatrix_b_lane(m.b_col, lane, count, kb, v, fk, fn);
            r.byte_addr[size_t(lane)] =
                int64_t(m.b_offset(kk * m.inst_k + fk, wc + ni * 8 + fn)) * es;
          }
          b_reqs.push_back(r);
        }
      } else {
        const int bv = std::max(m.b_vec, 1);
        b_width = 4 * bv;
        for (int ni = 0; ni < m.frags_n; ni += bv)
          for (int i = 0; i < m.regs_b; ++i) {
            WarpRequest r;
            r.width_bytes = b_width;
            for (int lane = 0; lane < 32; ++lane) {
              int k, n;
              mma_tf32_b_coord(lane, i, k, n);
              const int nc = m.b_chunk_permuted ? tf32_b_lane_chunk(n) : n;
              r.byte_addr[size_t(lane)] =
                  int64_t(m.b.offset(kk * m.inst_k + k, wc + ni * 8 + bv * nc)) * es;
            }
            b_reqs.push_back(r);
          }
      }
    }
  }
  auto add = [&](const std::string& what, const std::vector<WarpRequest>& reqs) {
    if (reqs.empty()) return;
    SharedAccess s;
    s.what = what;
    s.width_bytes = reqs.front().width_bytes;
    s.requests = int(reqs.size());
    s.cost = total_bank_cost(reqs);
    e.shared.push_back(s);
  };
  add(m.ldmatrix_a ? "ldmatrix.x" + std::to_string(m.regs_a) +
                         (m.ldmatrix_a_trans ? ".trans" : "") + " sA (A fragments)"
                   : std::string("load sA (tf32 A fragments, 4 bytes)"),
      a_reqs);
  add(!m.ldmatrix_b        ? "load sB (tf32 B fragments, " + std::to_string(b_width) + " bytes)"
      : m.ldmatrix_b_trans ? std::string("ldmatrix.trans sB (B fragments)")
                           : std::string("ldmatrix sB (B fragments, col-major)"),
      b_reqs);
  e.notes.push_back("ldmatrix: each 8x8 matrix is one phase of 8 row addresses (16 bytes each)");
  if (m.a_transposed || m.b_transposed)
    e.notes.push_back(transposed_operands_note(
        "mma s8", m.a_transposed, m.b_transposed,
        "by the runtime first (the _transpose entry, timed with the kernel, not modeled here); "
        "the accesses above read the scratch"));
}

// ---- wgmma ----

// Threads touch A and B in shared memory only for tf32's B^T fragments: TMA
// (or, for a convolution's A, the producer's cp.async) writes the stages and
// wgmma reads them by descriptor, both in the 128-byte swizzle, so no bank
// model applies and the shared roofline is left out.
void wgmma_notes(Explanation& e, const WgmmaPlan& w, const Schedule& schedule) {
  const bool halo = schedule.halo;
  if (w.conv) {
    // A convolution's A: its input, by TMA's im2col mode or the producer's
    // threads (docs/convolution.md), each chunk where the swizzle puts it.
    const std::string threads =
        "the producer's 128 threads (16-byte cp.async through the offset table)";
    e.notes.push_back(
        "wgmma conv: TMA writes the filters (B) into shared memory, A by " +
        (w.conv->nchw32 ? threads
         : schedule.halo_only
             ? std::string("the tile's input copied once as zero-padded phase images by TMA "
                           "(`halo only`: into A's shared memory, the file's convolution's "
                           "phase images; a launch whose images need more is refused)")
         : halo ? "the tile's input copied once as zero-padded phase images by TMA (`halo`, each "
                  "k-tile's A a window of it) where the launch finds it fits, else by TMA's im2col "
                  "mode where the convolution allows it, else by " +
                      threads
                : "TMA's im2col mode where the convolution allows it, else by " + threads) +
        ", each 16-byte chunk where the 128-byte swizzle puts it; wgmma reads both by descriptor "
        "and no consumer thread accesses them, so no bank model applies (the shared-memory "
        "roofline is left out)");
  } else {
    e.notes.push_back(
        w.swapped
            ? "wgmma tf32 computes C^T = B^T A^T: TMA writes A and B into shared memory, wgmma "
              "reads A by descriptor, and each thread loads its B^T fragment (4 floats per 64 "
              "columns per k-step, 2-way bank conflicts in the 128-byte swizzle) into registers; "
              "the shared-memory roofline is left out"
            : "wgmma: TMA writes A and B into shared memory and wgmma reads them by descriptor, "
              "both in the 128-byte swizzle; no thread accesses them, so no bank model applies "
              "(the shared-memory roofline is left out)");
  }
  if (w.type == MmaType::s8 && (w.a_transposed || w.b_transposed))
    e.notes.push_back(transposed_operands_note(
        "wgmma s8", w.a_transposed, w.b_transposed,
        "before each launch (one read and one write, coalesced through shared memory), then the "
        "k-major kernel runs"));
  else if (w.a_transposed)
    e.notes.push_back(
        "wgmma tf32 with A column-major and B row-major: A is transposed into row-major scratch "
        "before each launch (one read and one write of A, coalesced through shared memory), "
        "then the row-major kernel runs");
  else if (w.a.mn_major || !w.b.mn_major)  // a layout other than row-major A and B
    e.notes.push_back(
        std::string("wgmma layouts: TMA reads every operand along its contiguous side, whole "
                    "128-byte rows (full sectors) in any layout; A is ") +
        (w.a.mn_major ? "m-major (column-major in memory)" : "k-major") + ", B " +
        (w.b.mn_major ? "n-major" : "k-major (column-major in memory)") +
        " in shared memory, as wgmma's transpose flags say");
  std::string epilogue =
      w.swapped ? (w.c_col ? "f32 stores straight from the accumulators, in column-major C's "
                             "order (a warp's store: 8 columns of 32 bytes)"
                           : "f32 stores straight from the accumulators (a warp's store: 4 rows "
                             "of 32 bytes)")
      : w.tma_store && w.c_elem_bytes == 4
          ? "int32 C staged in shared memory " + std::to_string(w.c_chunk_panels) +
                " 32-column panel(s) at a time (" + std::to_string(w.c_chunks()) +
                " chunk(s) a tile, each stored by TMA boxes before the next is staged) when C, "
                "ldc and N are 16-byte multiples, else 8-byte pair stores straight from the "
                "accumulators"
      : w.tma_store
          ? std::string(w.c_col ? "C staged m-major in shared memory (stmatrix .trans"
                                : "C staged in shared memory (stmatrix") +
                " where the tile is inside C and beta is 0) and stored by TMA boxes when C, ldc "
                "and C's rows are 16-byte multiples, else copied out by the warps 128 contiguous "
                "bytes at a time"
      : w.c_col ? "element stores straight from the accumulators into column-major C (a warp's "
                  "store: 8 rows m of 16 bytes in each of 4 columns; 50% of each sector used)"
      : w.direct_sixteens()
          ? "16-byte stores of 16 adjacent int8 columns (the four lanes of a row exchange their "
            "quads) where a tile's columns lie inside C or N is a multiple of 16, with 16-byte "
            "aligned rows (past M or N skipped store by store), else 4-byte stores of "
            "four (lanes 2q and 2q + 1 swap a pair) with 4-byte aligned rows, else 2-byte pair "
            "stores, straight from the accumulators"
      : w.direct_quads()
          ? std::to_string(4 * w.c_elem_bytes) +
                "-byte stores of four adjacent columns (lanes 2q and 2q + 1 swap a pair) where a "
                "tile's columns lie inside C or N is a multiple of 4, with aligned rows (past M "
                "or N skipped store by store), else " +
                std::to_string(2 * w.c_elem_bytes) +
                "-byte pair stores, straight from the accumulators" +
                (w.plain_quads(schedule.epilogue)
                     ? std::string("; with alpha 1 and beta 0 the quads' own copy of the loop "
                                   "stores the accumulators as they are (a convolution's "
                                   "epilogue is latency on its critical path)")
                     : std::string())
          : std::to_string(2 * w.c_elem_bytes) + "-byte pair stores straight from the accumulators";
  e.notes.push_back("wgmma epilogue: " + epilogue);
  if (w.pingpong)
    e.notes.push_back(
        "pingpong: two consumer warpgroups take whole tiles in turn; one's epilogue runs under "
        "the other's wgmma");
  if (w.cluster_size() > 1)
    e.notes.push_back(
        std::string("cluster: two CTAs share ") + (w.shares_b() ? "B" : "A") +
        " by TMA multicast, so the L2 delivers it once per pair" +
        (w.paired() ? " (split_k's clusters: each slice's CTAs of two tiles along M)" : ""));
}

// ---- roofline ----

Roofline roofline_of(const KernelPlan& p, const Explanation& e) {
  const Target& t = p.target;
  Roofline r;
  r.dram_tbps = t.dram_tbps;
  r.smem_tbps = t.smem_tbps();
  const int es = elem_bytes(p.dtype);
  double bm = p.kind == KernelKind::naive ? p.block_y : p.block_m;
  double bn = p.kind == KernelKind::naive ? p.block_x : p.block_n;
  double bk = p.kind == KernelKind::naive ? 1 : p.block_k;
  // Each k-step a block multiplies a bm x bk and a bk x bn tile: 2 bm bn bk
  // FLOPs for (bm + bn) bk elements read from global memory.
  r.intensity_global = 2.0 * bm * bn / ((bm + bn) * es);
  if (p.wgmma) {
    const bool tf32 = p.wgmma->type == MmaType::tf32, s8 = p.wgmma->type == MmaType::s8;
    r.peak_tflops = tf32 ? t.tf32_tflops : s8 ? t.s8_tops : t.f16_tflops;
    r.unit = tf32 ? "tensor cores (tf32, wgmma)"
             : s8 ? "tensor cores (s8, wgmma; TOPS)"
                  : "tensor cores (f16/bf16, wgmma)";
  } else if (p.mma) {
    bool tf32 = p.mma->type == MmaType::tf32;
    r.peak_tflops = tf32 ? t.tf32_tflops : t.f16_tflops;
    r.unit = tf32 ? "tensor cores (tf32)" : "tensor cores (f16/bf16)";
  } else {
    r.peak_tflops = t.fp32_tflops;
    r.unit = "FFMA (f32)";
  }
  long long wavefronts = 0;
  for (const SharedAccess& s : e.shared) wavefronts += s.cost.wavefronts;
  double flops_per_step = 2.0 * bm * bn * bk;
  r.intensity_shared = wavefronts ? flops_per_step / double(wavefronts * kWavefrontBytes) : 0;

  r.bound_tflops = r.peak_tflops;
  r.bound_by = std::string("compute: ") + r.unit + " peak";
  double dram_bound = r.intensity_global * r.dram_tbps;
  if (dram_bound < r.bound_tflops) {
    r.bound_tflops = dram_bound;
    r.bound_by = "global memory bandwidth (no reuse through L2 assumed)";
  }
  if (r.intensity_shared > 0) {
    double smem_bound = r.intensity_shared * r.smem_tbps;
    if (smem_bound < r.bound_tflops) {
      r.bound_tflops = smem_bound;
      r.bound_by = "shared-memory bandwidth (predicted wavefronts)";
    }
  }
  return r;
}

// Explanation::registers_estimate and its limit; a note when they predict
// spills.
void simt_registers(Explanation& e, const KernelPlan& p) {
  constexpr int kAddressing = 24;
  const ThreadMap& t = p.threads;
  const int fragments = (t.tm + t.tn) * (p.frag_double_buffer ? 2 : 1);
  e.registers_estimate = t.tm * t.tn + fragments + kAddressing;
  e.registers_limit = p.target.registers_per_thread(p.block_threads);
  if (!e.spill_predicted()) return;
  e.notes.push_back("registers: about " + std::to_string(e.registers_estimate) +
                    " a thread estimated (" + std::to_string(t.tm * t.tn) + " accumulators, " +
                    std::to_string(fragments) + " fragment registers, ~" +
                    std::to_string(kAddressing) + " for addresses), over the " +
                    std::to_string(e.registers_limit) + " a thread can have at " +
                    std::to_string(p.block_threads) +
                    " threads a block: expect ptxas to spill (a smaller thread tile or block "
                    "tile avoids it)");
}

}  // namespace

Explanation explain(const KernelPlan& plan, int registers, const Shape& shape) {
  Explanation e;
  e.occupancy = occupancy_of(plan, registers);
  if (plan.kind == KernelKind::naive) {
    naive_accesses(e, plan, shape);
    e.notes.push_back(
        "naive kernel: no shared memory; every k reads A and B from global "
        "memory (L1/L2 serve the reuse)");
  } else if (plan.mma) {
    mma_accesses(e, plan, shape);
  } else if (plan.wgmma) {
    wgmma_notes(e, *plan.wgmma, plan.schedule);
    if (plan.split_k > 1) {
      const int64_t tiles = ((shape.m + plan.block_m - 1) / plan.block_m) *
                            ((shape.n + plan.block_n - 1) / plan.block_n);
      const int64_t k_tiles = (shape.k + plan.block_k - 1) / plan.block_k;
      e.notes.push_back(
          "split_k " + std::to_string(plan.split_k) + ": each of the " + std::to_string(tiles) +
          " C tiles gets a cluster of up to " +
          std::to_string(std::min<int64_t>(plan.split_k, k_tiles)) + " CTAs, each a share of its " +
          std::to_string(k_tiles) +
          " k-tiles, summed through distributed shared memory; the launch takes fewer "
          "where the clusters would not all run at once (`schedc run --verbose` prints the split)");
    }
  } else {
    // Each operand's leading dimension in its layout (packed).
    simt_copy(e, plan, plan.copy_a, plan.smem_a, plan.schedule.a_col ? shape.m : shape.k, "A");
    simt_copy(e, plan, plan.copy_b, plan.smem_b, plan.schedule.b_col ? shape.k : shape.n, "B");
    simt_fragments(e, plan);
    simt_c_store(e, plan, plan.schedule.c_col ? shape.m : shape.n);
    simt_registers(e, plan);
  }
  e.roofline = roofline_of(plan, e);
  for (const std::string& n : uneven_copy_notes(plan))
    e.notes.push_back("uneven copy, " + n + " (a guard in the copy loop)");
  if (registers < 0)
    e.notes.push_back("registers unknown (NVRTC did not report them): occupancy ignores them");
  return e;
}

}  // namespace schedc::compiler
