#pragma once
// Names the SIMT building blocks share (codegen/blocks_simt.cpp,
// blocks_simt_copies.cpp): vector types, operand names, the shared-memory
// element reference of a layout, unpacking a vector into registers, the k
// bound of a (stream_k) copy.

#include <string>

#include "codegen/emitter.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen::simt {

using compiler::Operand;
using compiler::SmemLayout;

inline const char* const kComp[4] = {"x", "y", "z", "w"};

// "float", "float2", "float4".
inline std::string vec_type(int v) {
  return v == 1 ? "float" : "float" + std::to_string(v);
}

inline const char* op_name(Operand op) {
  return op == Operand::A ? "A" : "B";
}
inline std::string lower_name(Operand op) {
  return op == Operand::A ? "a" : "b";
}

// sA[buf][row][col] for logical (r, c) of the operand's tile.
inline std::string smem_ref(const SmemLayout& l, const std::string& buf, const std::string& r,
                            const std::string& c) {
  std::string pr = l.transposed ? c : r, pc = l.transposed ? r : c;
  if (l.swizzle && l.mask > 0) {
    std::string x = "((" + pr + ") & " + std::to_string(l.mask) + ")";
    if (l.unit > 1) x += " * " + std::to_string(l.unit);
    pc = "(" + pc + ") ^ (" + x + ")";
  }
  std::string s = l.name;
  if (!buf.empty()) s += "[" + buf + "]";
  return s + "[" + pr + "][" + pc + "]";
}

// `dst[0] = v.x; dst[1] = v.y; …` for a vector `v` of width w.
inline std::string unpack(const std::string& dst, const std::string& first, const std::string& v,
                          int w) {
  if (w == 1) return dst + "[" + first + "] = " + v + ";";
  std::string s;
  for (int e = 0; e < w; ++e)
    s += (e ? " " : "") + dst + "[" + first + " + " + std::to_string(e) + "] = " + v + "." +
         kComp[e] + ";";
  return s;
}

// The k extent the copies are bounded by: K, or with stream_k the slice's
// (its k-tiles counted from gA and gB, which start at the slice's first k).
inline const char* k_bound(const compiler::KernelPlan& p) {
  return p.stream_k_tail ? "seg_k" : "K";
}

}  // namespace schedc::codegen::simt
