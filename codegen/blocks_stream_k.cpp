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

// Partial-sum loads in flight per slice while a tile's sums are added up:
// all of them at once would need as many registers again as rC.
constexpr int kSumChunk = 8;

// rC's element number `e` (an expression) of the flattened register tile.
std::string acc(const std::string& e) {
  return "rC[(" + e + ") / TN][(" + e + ") % TN]";
}

}  // namespace

std::string stream_k_params() {
  return "int sk_whole_tiles, int sk_slices, int sk_lead_k_tiles, float* __restrict__ "
         "sk_partials, int* __restrict__ sk_counters";
}

void emit_stream_k_helpers(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  e.comment(format("stream_k %s: each tile past sk_whole_tiles (the last, partial wave) is cut",
                   origin_note(s, s.stream_k_at).c_str()));
  e.comment("along k into sk_slices slices: slice 0 (the lead) is its first sk_lead_k_tiles");
  e.comment("k-tiles, the other slices share the rest equally (compiler/stream_k.h).");
  e.open_scope(
      "__device__ __forceinline__ int stream_k_slice_begin(int slice, int k_tiles, int lead, int "
      "slices)");
  e.line("if (slice == 0) return 0;");
  e.line("return lead + int((long long)(slice - 1) * (k_tiles - lead) / (slices - 1));");
  e.close_scope();
  e.line();
}

void emit_stream_k_slice(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  e.comment(format("stream_k %s: one slice of one tile past sk_whole_tiles (the main entry",
                   origin_note(s, s.stream_k_at).c_str()));
  e.comment("computed those before them whole). Blocks go slice by slice, all leads first:");
  e.comment("the longest start first, and blocks side by side read A and B at the same k.");
  e.line("const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;");
  e.line("const int k_tiles = (K + BK - 1) / BK;  // per tile");
  e.line("const int shared_tiles = tiles_m * tiles_n - sk_whole_tiles;");
  e.line("const int slice = blockIdx.x / shared_tiles, shared_tile = blockIdx.x % shared_tiles;");
  e.line("const int tile = sk_whole_tiles + shared_tile;");
  e.line("const int k_first = stream_k_slice_begin(slice, k_tiles, sk_lead_k_tiles, sk_slices);");
  e.line(
      "const int k_last = stream_k_slice_begin(slice + 1, k_tiles, sk_lead_k_tiles, sk_slices);");
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

void emit_stream_k_tail_end(Emitter& e, const KernelPlan& p) {
  if (p.target.sm >= 90) {
    e.comment("The tail may have started before the main grid ended (launch_dependents there):");
    e.comment("it ends after it, so what the stream does next (the timing's stop event, the next");
    e.comment("launch) follows both grids.");
    e.line("asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");");
  }
  e.close_scope(p.name);
}

void emit_stream_k_fixup(Emitter& e, const KernelPlan& p) {
  const int v = partial_vec(p);
  const std::string vt = v == 4 ? "float4" : "float";
  const std::string count = v == 4 ? "TM * TN / 4" : "TM * TN";
  e.comment("stream_k: every slice publishes its partial sums in its own slot (its block's");
  e.comment("number) and counts its arrival; the last of the tile's slices to arrive adds them");
  e.comment("up in slice order (the same sum whoever arrives last), resets the count and writes");
  e.comment("C. Nobody waits.");
  e.line("__shared__ int sk_arrival;  // this block's place among the tile's arrivals");
  e.comment(format("partial sums as %s: element number v * THREADS + tid, coalesced", vt.c_str()));
  e.line(format("%s* mine = reinterpret_cast<%s*>(sk_partials + (size_t)blockIdx.x * (BM * BN));",
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
  e.line("const bool write_c = sk_arrival == sk_slices - 1;  // the last to arrive");
  e.open_scope("if (write_c)");
  e.line("__threadfence();  // the other slices' partial sums are visible");
  e.line("#pragma unroll");
  e.line("for (int i = 0; i < TM; ++i)");
  e.line("  #pragma unroll");
  e.line("  for (int j = 0; j < TN; ++j) rC[i][j] = 0.0f;");
  e.comment(format("%d %s loads in flight per slice, not all %s: registers", kSumChunk, vt.c_str(),
                   count.c_str()));
  e.line("#pragma unroll");
  e.open_scope(format("for (int v0 = 0; v0 < %s; v0 += %d)", count.c_str(), kSumChunk));
  e.open_scope("for (int q = 0; q < sk_slices; ++q)");
  e.line(
      format("const %s* part = reinterpret_cast<const %s*>(sk_partials + (size_t)(q * "
             "shared_tiles + shared_tile) * (BM * BN));",
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
}

}  // namespace schedc::codegen
