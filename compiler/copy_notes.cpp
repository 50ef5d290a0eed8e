#include "compiler/copy_notes.h"

namespace schedc::compiler {

namespace {

// `units` copies (vectors or chunks) over `threads` threads, `iters` rounds.
std::string note(const char* op, int units, const std::string& unit, int threads, int iters) {
  const int last = units - (iters - 1) * threads;  // copies in the last round
  std::string s = std::string(op) + ": " + std::to_string(units) + " " + unit + " over " +
                  std::to_string(threads) + " threads";
  if (iters == 1) return s + ": " + thread_range(last, threads - 1) + " skip the copy";
  return s + ", " + std::to_string(iters) + " rounds: " + thread_range(last, threads - 1) +
         " skip the last";
}

std::string simt_note(const char* op, const TileCopy& c) {
  std::string unit =
      "vectors of " + std::to_string(c.vec) + (c.vec == 1 ? " element" : " elements");
  return note(op, c.vectors(), unit, c.threads, c.iters);
}

std::string chunk_note(const char* op, const CopyMap& c) {
  return note(op, c.chunks, "16-byte chunks", c.threads, c.iters);
}

}  // namespace

std::string thread_range(int first, int last) {
  if (first == last) return "thread " + std::to_string(first);
  return "threads " + std::to_string(first) + "-" + std::to_string(last);
}

std::vector<std::string> uneven_copy_notes(const KernelPlan& p) {
  std::vector<std::string> out;
  if (p.kind == KernelKind::tiled) {
    if (p.copy_a.uneven()) out.push_back(simt_note("A", p.copy_a));
    if (p.copy_b.uneven()) out.push_back(simt_note("B", p.copy_b));
  } else if (p.kind == KernelKind::mma && p.mma && !p.mma->tma) {
    if (p.mma->copy_a.needs_guard()) out.push_back(chunk_note("A", p.mma->copy_a));
    if (p.mma->copy_b.needs_guard()) out.push_back(chunk_note("B", p.mma->copy_b));
  }
  return out;
}

}  // namespace schedc::compiler
