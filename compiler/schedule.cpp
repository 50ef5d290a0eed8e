#include "compiler/schedule.h"

#include <charconv>
#include <sstream>

namespace schedc::compiler {

const char* to_string(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::s8: return "s8";
  }
  return "?";
}

std::optional<DType> dtype_from_string(const std::string& name) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::s8})
    if (name == to_string(t)) return t;
  return std::nullopt;
}

const char* to_string(MmaType t) {
  switch (t) {
    case MmaType::tf32: return "tf32";
    case MmaType::f16: return "f16";
    case MmaType::bf16: return "bf16";
    case MmaType::s8: return "s8";
  }
  return "?";
}

const char* to_string(Tf32Rounding r) {
  return r == Tf32Rounding::truncate ? "truncate" : "nearest";
}

int size_of(DType t) {
  return t == DType::f32 ? 4 : t == DType::s8 ? 1 : 2;
}

int c_size_of(DType t) {
  return t == DType::s8 ? 4 : size_of(t);
}

int c_size_of(const Schedule& s) {
  return s.dtype == DType::s8 && s.epilogue.requantize ? 1 : c_size_of(s.dtype);
}

namespace {

// Shortest text that reads back as the same float (0.5, 1, -0.2).
std::string real_text(float x) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

}  // namespace

std::string to_sched_text(const Schedule& s) {
  std::ostringstream o;
  if (s.conv)  // the GEMM's shape and B's layout follow from it
    o << "conv " << conv_text(*s.conv) << "\n";
  else
    o << "shape " << s.shape.m << "x" << s.shape.n << "x" << s.shape.k << "\n";
  o << "dtype " << to_string(s.dtype) << "\n";
  if (s.a_col) o << "layout A col\n";  // row-major, the default, goes unsaid
  if (s.b_col && !s.conv) o << "layout B col\n";
  if (s.c_col) o << "layout C col\n";
  if (s.batch > 0) o << "batch " << s.batch << "\n";
  if (s.is_naive()) {
    o << "# no tile: naive kernel, one thread per C element\n";
    o << "block " << s.block_x << "x" << s.block_y << "\n";
  } else {
    const BlockTile& t = *s.tile;
    o << "tile " << t.m << "x" << t.n << "x" << t.k << "\n";
    if (s.uses_tensor_cores())
      o << "# thread: none (tensor cores compute warp tiles)\n";
    else
      o << "thread " << s.thread.m << "x" << s.thread.n << " split " << s.thread.split_m << "x"
        << s.thread.split_n << "\n";
    if (s.warp)
      o << "warp " << s.warp->m << "x" << s.warp->n << "\n";
    else
      o << "# warp: none\n";
    o << "vectorize " << s.vectorize << "\n";
    o << (s.transpose_a ? "" : "# ") << "transpose A" << (s.transpose_a ? "" : ": no") << "\n";
    o << (s.transpose_b ? "" : "# ") << "transpose B" << (s.transpose_b ? "" : ": no") << "\n";
    if (s.swizzle_smem) {
      o << "swizzle smem\n";
    } else {
      o << "# swizzle smem: no\n";
      o << "pad A " << s.pad_a << "\n";
      o << "pad B " << s.pad_b << "\n";
    }
    o << "swizzle block " << s.swizzle_block << "\n";
    if (s.stream_k) o << "stream_k\n";
    if (s.double_buffer)
      o << "double_buffer\n";
    else if (s.stages > 1)
      o << "stages " << s.stages << "\n";
    else
      o << "# double_buffer: no\n# stages: 1 (no cp.async pipeline)\n";
    if (s.tma) o << "tma\n";
    if (s.warp_specialize) o << (s.pingpong ? "warp_specialize pingpong\n" : "warp_specialize\n");
    if (s.persistent) o << "persistent\n";
    if (s.halo) o << (s.halo_only ? "halo only\n" : "halo\n");
    if (s.blocks_per_sm > 1) o << "blocks_per_sm " << s.blocks_per_sm << "\n";
    if (s.tma_store) o << "tma_store\n";
    if (s.cluster_m * s.cluster_n > 1) o << "cluster " << s.cluster_m << "x" << s.cluster_n << "\n";
    if (s.split_k > 1) o << "split_k " << s.split_k << "\n";
    if (s.mma) {
      const MmaSpec& m = *s.mma;
      if (m.api == MmaApi::wmma)
        o << "wmma " << to_string(m.type) << " " << m.m << "x" << m.n << "x" << m.k << "\n";
      else if (m.api == MmaApi::wgmma)
        o << "wgmma " << to_string(m.type)
          << (m.n ? " m" + std::to_string(m.m) + "n" + std::to_string(m.n) + "k" +
                        std::to_string(m.k)
                  : std::string())
          << "\n";
      else
        o << "mma " << to_string(m.type)
          << (m.s8_m8n8k16 ? std::string(" m8n8k16")
                           : " m" + std::to_string(m.m) + "n" + std::to_string(m.n) + "k" +
                                 std::to_string(m.k))
          << (m.tf32_rounding == Tf32Rounding::truncate ? " truncate" : "") << "\n";
    } else {
      o << "# tensor cores: none (SIMT, f32 FMA)\n";
    }
  }
  const Epilogue& e = s.epilogue;
  o << "epilogue alpha " << real_text(e.alpha) << " beta " << real_text(e.beta)
    << (e.bias ? " bias" : "") << (e.scale ? " scale" : "") << (e.relu ? " relu" : "")
    << (e.requantize ? " requantize" : "") << "\n";
  return o.str();
}

}  // namespace schedc::compiler
