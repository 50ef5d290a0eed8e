// The tf32 rounding of the `mma tf32` path (codegen/blocks_mma.cpp,
// f32_to_tf32), checked on the CPU against an independent model of cvt.rna:
// every f32 bit pattern's high half with the low-half patterns where rounding
// decides (ties, carries into the exponent and sign), plus random ones.
//
// The tensor core reads only the 19 high bits of each operand (sign, 8 exponent,
// 10 mantissa) — measured on an H100 with bench/probe_tf32_rounding.cu — so the
// kernel's value is tf32_of(f32_to_tf32(x)).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>

#include "codegen/blocks_mma.h"
#include "codegen/emitter.h"

namespace schedc {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// f32_to_tf32 as emitted, in host C++ (same expression; EmittedHelper below
// pins the emitted text).
uint32_t emitted_nearest(uint32_t u) {
  const uint32_t up = std::max(u + 0x1000u, u);
  return uint32_t(std::max(int32_t(up), int32_t(u)));
}

// What the tensor core reads.
float tensor_core_value(uint32_t bits) {
  return from_bits(bits & 0xffffe000u);
}

// cvt.rna.tf32.f32 modelled with doubles: round to 11 significant bits (10
// below the leading one), ties away from zero; the quantum never drops below
// the subnormal one, 2^-136; overflow goes to infinity.
double rna_model(float x) {
  if (std::isinf(x) || x == 0.0f) return x;
  int e = 0;
  std::frexp(double(x), &e);  // |x| = m * 2^e, m in [0.5, 1)
  const double quantum = std::ldexp(1.0, std::max(e - 11, -136));
  const double q = std::fabs(double(x)) / quantum;
  double r = std::floor(q);
  if (q - r >= 0.5) r += 1.0;
  const double v = std::copysign(r * quantum, double(x));
  return std::fabs(v) >= std::ldexp(1.0, 128) ? std::copysign(INFINITY, double(x)) : v;
}

// Checks one pattern; returns an empty string when right.
std::string check(uint32_t u) {
  const float x = from_bits(u);
  const float got = tensor_core_value(emitted_nearest(u));
  std::ostringstream why;
  if (std::isnan(x)) {
    // A NaN stays a NaN, except one whose payload is only in the 12 bits the
    // tensor core ignores below the rounding bit: that one reads as infinity,
    // as it would unconverted (documented in docs/tensor_cores.md).
    const bool low_payload = (u & 0x007fffffu) < 0x1000u;
    if (low_payload ? !std::isinf(got) : !std::isnan(got))
      why << std::hex << "NaN 0x" << u << " -> 0x" << emitted_nearest(u);
    return why.str();
  }
  const double want = rna_model(x);
  if (double(got) != want || std::signbit(got) != std::signbit(want))
    why << std::hex << "0x" << u << " -> 0x" << emitted_nearest(u) << std::dec << " (" << got
        << "), cvt.rna gives " << want;
  return why.str();
}

TEST(Tf32Rounding, MatchesCvtRnaOnEveryHighHalfWithDecidingLowHalves) {
  const uint32_t lows[] = {0x0000, 0x0001, 0x0800, 0x0fff, 0x1000, 0x1001, 0x17ff,
                           0x1800, 0x1fff, 0x2000, 0x2fff, 0x3000, 0x3001, 0x7fff,
                           0x8000, 0xefff, 0xf000, 0xf001, 0xffff};
  int failures = 0;
  for (uint32_t hi = 0; hi <= 0xffffu; ++hi)
    for (uint32_t lo : lows) {
      const std::string why = check(hi << 16 | lo);
      if (!why.empty() && ++failures <= 5) ADD_FAILURE() << why;
    }
  EXPECT_EQ(failures, 0);
}

TEST(Tf32Rounding, MatchesCvtRnaOnRandomPatterns) {
  std::mt19937 rng(20261122);
  int failures = 0;
  for (int i = 0; i < 2000000; ++i) {
    const std::string why = check(uint32_t(rng()));
    if (!why.empty() && ++failures <= 5) ADD_FAILURE() << why;
  }
  EXPECT_EQ(failures, 0);
}

TEST(Tf32Rounding, TiesGoAwayFromZeroAndCarriesReachTheExponent) {
  EXPECT_EQ(tensor_core_value(emitted_nearest(0x3f801000u)), from_bits(0x3f802000u));  // 1 + 2^-11
  EXPECT_EQ(tensor_core_value(emitted_nearest(0xbf801000u)), from_bits(0xbf802000u));
  EXPECT_EQ(tensor_core_value(emitted_nearest(0x3f800fffu)), 1.0f);
  EXPECT_EQ(tensor_core_value(emitted_nearest(0x3ffff000u)),
            2.0f);  // 2 - 2^-12: the carry reaches the exponent
  EXPECT_TRUE(std::isinf(tensor_core_value(emitted_nearest(0x7f7ff000u))));  // overflow
  EXPECT_TRUE(std::isinf(tensor_core_value(emitted_nearest(0x7f800000u))));
  EXPECT_TRUE(std::isnan(tensor_core_value(emitted_nearest(0x7fffffffu))));  // CUDA's NaN
  EXPECT_TRUE(std::isnan(tensor_core_value(emitted_nearest(0xffffffffu))));
  EXPECT_TRUE(std::isnan(tensor_core_value(emitted_nearest(0x7fc00000u))));
}

std::string emitted_helper(compiler::Tf32Rounding r) {
  codegen::Emitter e;
  codegen::emit_tf32_convert_helper(e, r);
  return e.str();
}

TEST(Tf32Rounding, EmittedHelperIsTheModelledExpression) {
  EXPECT_NE(emitted_helper(compiler::Tf32Rounding::nearest)
                .find("return (unsigned)max((int)max(u + 0x1000u, u), (int)u);"),
            std::string::npos);
  EXPECT_NE(emitted_helper(compiler::Tf32Rounding::truncate).find("return __float_as_uint(x);"),
            std::string::npos);
}

}  // namespace
}  // namespace schedc
