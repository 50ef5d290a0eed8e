#include "codegen/blocks_stream_k.h"

#include "codegen/blocks_common.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::Schedule;

namespace {

// The partial sums move as float4 when the register tile's element count
// allows it (rC flattened row by row), else float by float.
int partial_vec(const KernelPlan& p) {
  return (p.threads.tm * p.threads.tn) % 4 == 0 ? 4 : 1;
}

// Partial-sum loads in flight per unit while a tile's sums are added up: all
// of them at once would need as many registers again as rC.
constexpr int kSumChunk = 8;

// rC's element number `e` (an expression) of the flattened register tile.
std::string acc(const std::string& e) {
  return "rC[(" + e + ") / TN][(" + e + ") % TN]";
}

std::string segment_args() {
  return "M, N, K, A, lda, B, ldb, C, ldc, alpha, beta, bias, sk_whole_tiles, sk_units, "
         "sk_partials, sk_counters, tile, k_first, k_last";
}

std::string segment_params(const KernelPlan& p) {
  return abi_params(p) + ", " + stream_k_params() + ", int tile, int k_first, int k_last";
}

}  // namespace

std::string stream_k_params() {
  return "int sk_whole_tiles, int sk_units, float* __restrict__ sk_partials, int* __restrict__ "
         "sk_counters";
}

void emit_stream_k_helpers(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  e.comment(format("stream_k %s: the k-tiles of the tiles past sk_whole_tiles (the last, partial",
                   origin_note(s, s.stream_k_at).c_str()));
  e.comment("wave) are numbered tile by tile and cut into sk_units equal ranges: unit u computes");
  e.comment(
      "k-tiles [stream_k_begin(u), stream_k_begin(u + 1)) of those `total` (compiler/stream_k.h).");
  e.open_scope("__device__ __forceinline__ int stream_k_begin(int unit, int total, int units)");
  e.line("return int((long long)unit * total / units);");
  e.close_scope();
  e.comment("The unit whose range holds shared k-tile `it`.");
  e.open_scope("__device__ __forceinline__ int stream_k_unit_of(int it, int total, int units)");
  e.line("return int((((long long)it + 1) * units - 1) / total);");
  e.close_scope();
  e.comment("Where unit u publishes its partial sums of the tile whose first shared k-tile is");
  e.comment("tile_it: slot 2u when the unit starts inside that tile, else 2u + 1 (the unit's last");
  e.comment("tile). A unit shares at most those two tiles; those between them it computes whole.");
  e.open_scope(
      "__device__ __forceinline__ float* stream_k_slot(float* partials, int unit, int tile_it, "
      "int total, int units, int tile_elems)");
  e.line("const int slot = 2 * unit + (stream_k_begin(unit, total, units) < tile_it ? 1 : 0);");
  e.line("return partials + (size_t)slot * tile_elems;");
  e.close_scope();
  e.line();
}

std::string stream_k_segment_name(const KernelPlan& p) {
  return p.name + "_segment";
}

void emit_stream_k_segment_open(Emitter& e, const KernelPlan& p) {
  e.comment("stream_k: one segment of a unit's work, k-tiles [k_first, k_last) of C tile `tile`.");
  e.comment("A function of its own (not inlined): inlined into the units' loop below, ptxas");
  e.comment("compiled sgemm_best's k loop 37 instructions longer.");
  e.open_scope("__device__ __noinline__ void " + stream_k_segment_name(p) + "(" +
               segment_params(p) + ")");
}

void emit_stream_k_segment_context(Emitter& e, const KernelPlan& p) {
  (void)p;
  e.line("const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;");
  e.line("const int k_tiles = (K + BK - 1) / BK;  // per tile");
  e.line(
      "const int seg_k = min(K, k_last * BK) - k_first * BK;  // from gA's and gB's first k, "
      "below");
}

void emit_stream_k_launch_tail(Emitter& e, const KernelPlan& p) {
  if (p.target.sm < 90) return;
  e.comment("stream_k: the tail entry may start as soon as every block of this grid has started");
  e.comment(
      "(programmatic dependent launch, sm_90): it computes other tiles, so it waits for none.");
  e.line("asm volatile(\"griddepcontrol.launch_dependents;\");");
}

void emit_stream_k_kernel_body(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  e.comment(format("stream_k %s: the tiles past sk_whole_tiles (the main entry computed those",
                   origin_note(s, s.stream_k_at).c_str()));
  e.comment("before them whole) share their k-tiles, numbered tile by tile, among the sk_units");
  e.comment("blocks of this grid: unit u computes [stream_k_begin(u), stream_k_begin(u + 1)), in");
  e.comment("segments, one per tile it touches (at most two with the runtime's split: a unit gets");
  e.comment("at most half a tile's k-tiles).");
  e.line("const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;");
  e.line("const int k_tiles = (K + BK - 1) / BK;  // per tile");
  e.line("const int shared_k_tiles = (tiles_m * tiles_n - sk_whole_tiles) * k_tiles;");
  e.line("const int unit = blockIdx.x;");
  e.line("const int it_end = stream_k_begin(unit + 1, shared_k_tiles, sk_units);");
  e.open_scope("for (int it = stream_k_begin(unit, shared_k_tiles, sk_units); it < it_end;)");
  e.line("const int tile = sk_whole_tiles + it / k_tiles, k_first = it % k_tiles;");
  e.line("const int k_last = min(k_tiles, k_first + (it_end - it));");
  e.line(stream_k_segment_name(p) + "(" + segment_args() + ");");
  e.line("it += k_last - k_first;");
  e.line("__syncthreads();  // everyone is done with shared memory before the next segment");
  e.close_scope();
  if (p.target.sm >= 90) {
    e.comment("The tail may have started before the main grid ended (launch_dependents there):");
    e.comment("it ends after it, so what the stream does next (the timing's stop event, the next");
    e.comment("launch) follows both grids.");
    e.line("asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");");
  }
}

void emit_stream_k_fixup(Emitter& e, const KernelPlan& p) {
  const int v = partial_vec(p);
  const std::string vt = v == 4 ? "float4" : "float";
  const std::string count = v == 4 ? "TM * TN / 4" : "TM * TN";
  e.comment("stream_k: a segment that is part of a tile publishes its partial sums and counts");
  e.comment("its arrival; the last of the tile's units to arrive adds them all up in unit order");
  e.comment("(the same sum whoever arrives last), resets the count and writes C. Nobody waits.");
  e.line("__shared__ int sk_arrival;  // this block's place among the tile's arrivals");
  e.line("bool write_c = true;");
  e.open_scope("if (k_last - k_first < k_tiles)");
  e.line("const int shared_k_tiles = (tiles_m * tiles_n - sk_whole_tiles) * k_tiles;");
  e.line("const int unit = blockIdx.x;");
  e.line("const int shared_tile = tile - sk_whole_tiles;");
  e.line("const int tile_it = shared_tile * k_tiles;  // the tile's first shared k-tile");
  e.line("const int first_unit = stream_k_unit_of(tile_it, shared_k_tiles, sk_units);");
  e.line(
      "const int last_unit = stream_k_unit_of(tile_it + k_tiles - 1, shared_k_tiles, sk_units);");
  e.comment(format("partial sums as %s: element number v * THREADS + tid, coalesced", vt.c_str()));
  e.line(
      format("%s* mine = reinterpret_cast<%s*>(stream_k_slot(sk_partials, unit, tile_it, "
             "shared_k_tiles, sk_units, BM * BN));",
             vt.c_str(), vt.c_str()));
  e.line("#pragma unroll");
  if (v == 4)
    e.line(
        format("for (int v = 0; v < %s; ++v) __stcg(&mine[v * THREADS + tid], make_float4(%s, "
               "%s, %s, %s));",
               count.c_str(), acc("4 * v").c_str(), acc("4 * v + 1").c_str(),
               acc("4 * v + 2").c_str(), acc("4 * v + 3").c_str()));
  else
    e.line(format("for (int v = 0; v < %s; ++v) __stcg(&mine[v * THREADS + tid], %s);",
                  count.c_str(), acc("v").c_str()));
  e.line("__threadfence();  // the partial sums reach the device before the arrival counts");
  e.line("__syncthreads();");
  e.line("if (tid == 0) sk_arrival = atomicAdd(&sk_counters[shared_tile], 1);");
  e.line("__syncthreads();");
  e.line("write_c = sk_arrival == last_unit - first_unit;  // the last to arrive");
  e.open_scope("if (write_c)");
  e.line("__threadfence();  // the other units' partial sums are visible");
  e.line("#pragma unroll");
  e.line("for (int i = 0; i < TM; ++i)");
  e.line("  #pragma unroll");
  e.line("  for (int j = 0; j < TN; ++j) rC[i][j] = 0.0f;");
  e.comment(format("%d %s loads in flight per unit, not all %s: registers", kSumChunk, vt.c_str(),
                   count.c_str()));
  e.line("#pragma unroll");
  e.open_scope(format("for (int v0 = 0; v0 < %s; v0 += %d)", count.c_str(), kSumChunk));
  e.open_scope("for (int u = first_unit; u <= last_unit; ++u)");
  e.line(
      format("const %s* part = reinterpret_cast<const %s*>(stream_k_slot(sk_partials, u, "
             "tile_it, shared_k_tiles, sk_units, BM * BN));",
             vt.c_str(), vt.c_str()));
  e.line("#pragma unroll");
  e.open_scope(format("for (int v = v0; v < v0 + %d && v < %s; ++v)", kSumChunk, count.c_str()));
  e.line(format("const %s x = __ldcg(&part[v * THREADS + tid]);", vt.c_str()));
  if (v == 4)
    e.line(format("%s += x.x; %s += x.y; %s += x.z; %s += x.w;", acc("4 * v").c_str(),
                  acc("4 * v + 1").c_str(), acc("4 * v + 2").c_str(), acc("4 * v + 3").c_str()));
  else
    e.line(acc("v") + " += x;");
  e.close_scope();
  e.close_scope();
  e.close_scope();
  e.line("if (tid == 0) sk_counters[shared_tile] = 0;  // all arrived: zero for the next launch");
  e.close_scope();
  e.close_scope();
}

}  // namespace schedc::codegen
