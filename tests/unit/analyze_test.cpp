// compiler::analyze and static_resources: defaults, every rule with its
// message and place, the resource arithmetic, and the canonical text.
#include "compiler/analyze.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/lower.h"
#include "dsl/parse.h"

using namespace schedc;
using compiler::Schedule;
using compiler::Target;

namespace {

Target sm90() {
  Target t;
  EXPECT_TRUE(compiler::target_for_arch("sm_90", t));
  return t;
}

struct Result {
  std::optional<Schedule> schedule;
  std::vector<dsl::Diagnostic> diags;
  std::string printed;
};

Result check(const std::string& text, const Target& target = sm90()) {
  dsl::SourceFile f("t.sched", text);
  dsl::Diagnostics d(&f);
  Result r;
  std::optional<dsl::Ast> ast = dsl::parse(f, d);
  if (ast) r.schedule = compiler::analyze(*ast, "t.sched", target, d);
  r.diags = d.all();
  std::ostringstream os;
  d.print(os);
  r.printed = os.str();
  return r;
}

// The one error `text` must produce: its message contains `fragment`, at line:col.
void expect_error(const std::string& text, const std::string& fragment, uint32_t line, uint32_t col,
                  const Target& target = sm90()) {
  Result r = check(text, target);
  EXPECT_FALSE(r.schedule) << text;
  ASSERT_EQ(r.diags.size(), 1u) << text << "\n" << r.printed;
  EXPECT_NE(r.diags[0].message.find(fragment), std::string::npos) << text << "\n" << r.printed;
  EXPECT_EQ(r.diags[0].span.line, line) << r.printed;
  EXPECT_EQ(r.diags[0].span.col, col) << r.printed;
}

const char* kSgemmTile = "tile 128x128x8\nthread 8x8\n";

}  // namespace

TEST(Analyze, NaiveDefaults) {
  Result r = check("block 16x16\n");
  ASSERT_TRUE(r.schedule) << r.printed;
  const Schedule& s = *r.schedule;
  EXPECT_TRUE(s.is_naive());
  EXPECT_EQ(s.shape.m, 4096);
  EXPECT_EQ(s.dtype, compiler::DType::f32);
  EXPECT_FALSE(s.dtype_at.from_source);
  EXPECT_TRUE(s.block_at.from_source);
  EXPECT_EQ(s.block_at.span.line, 1u);
  EXPECT_EQ(s.epilogue.alpha, 1.0f);
  EXPECT_EQ(s.epilogue.beta, 0.0f);
  EXPECT_EQ(s.stages, 1);
  EXPECT_EQ(s.swizzle_block, 1);
  EXPECT_EQ(s.file, "t.sched");
}

TEST(Analyze, SimtScheduleFields) {
  Result r = check(
      "shape 100x200x300\ntile 128x128x8\nthread 8x8 split 2x2\nwarp 32x64\nvectorize 4\n"
      "transpose A\npad B 4\nswizzle block 8\ndouble_buffer\nepilogue beta 1 alpha 0.5 relu\n");
  ASSERT_TRUE(r.schedule) << r.printed;
  const Schedule& s = *r.schedule;
  EXPECT_EQ(s.shape.n, 200);
  ASSERT_TRUE(s.tile);
  EXPECT_EQ(s.tile->k, 8);
  EXPECT_EQ(s.thread.split_m, 2);
  ASSERT_TRUE(s.warp);
  EXPECT_EQ(s.warp->n, 64);
  EXPECT_EQ(s.vectorize, 4);
  EXPECT_TRUE(s.transpose_a);
  EXPECT_FALSE(s.transpose_b);
  EXPECT_EQ(s.pad_b, 4);
  EXPECT_EQ(s.pad_a, 0);
  EXPECT_EQ(s.swizzle_block, 8);
  EXPECT_TRUE(s.double_buffer);
  EXPECT_FLOAT_EQ(s.epilogue.alpha, 0.5f);
  EXPECT_FLOAT_EQ(s.epilogue.beta, 1.0f);
  EXPECT_TRUE(s.epilogue.relu);
  EXPECT_FALSE(s.epilogue.bias);
  EXPECT_FALSE(s.uses_tensor_cores());
}

TEST(Analyze, TensorCoreDefaultShapes) {
  struct Case {
    const char* text;
    compiler::MmaApi api;
    int m, n, k;
  };
  const Case cases[] = {
      {"wmma tf32", compiler::MmaApi::wmma, 16, 16, 8},
      {"dtype f16\nwmma f16", compiler::MmaApi::wmma, 16, 16, 16},
      {"dtype bf16\nwmma bf16 8x32x16", compiler::MmaApi::wmma, 8, 32, 16},
      {"mma tf32", compiler::MmaApi::mma_sync, 16, 8, 8},
      {"mma tf32 m16n8k4", compiler::MmaApi::mma_sync, 16, 8, 4},
      {"dtype f16\nmma f16", compiler::MmaApi::mma_sync, 16, 8, 16},
      {"dtype bf16\nmma bf16 m16n8k8", compiler::MmaApi::mma_sync, 16, 8, 8},
  };
  for (const Case& c : cases) {
    Result r = check(std::string("tile 128x128x32\nwarp 64x64\n") + c.text + "\n");
    ASSERT_TRUE(r.schedule) << c.text << "\n" << r.printed;
    ASSERT_TRUE(r.schedule->mma);
    EXPECT_EQ(r.schedule->mma->api, c.api) << c.text;
    EXPECT_EQ(r.schedule->mma->m, c.m) << c.text;
    EXPECT_EQ(r.schedule->mma->n, c.n) << c.text;
    EXPECT_EQ(r.schedule->mma->k, c.k) << c.text;
  }
}

// `mma tf32 … truncate`: sets MmaSpec::tf32_rounding and its place; nearest
// otherwise; an error with f16/bf16, for any other word, and before the shape.
TEST(Analyze, Tf32Rounding) {
  const std::string tf32 = "tile 128x128x32\nwarp 64x64\n";
  for (const char* mma : {"mma tf32", "mma tf32 m16n8k4", "wmma tf32"}) {
    Result r = check(tf32 + mma + "\n");
    ASSERT_TRUE(r.schedule && r.schedule->mma) << mma << r.printed;
    EXPECT_EQ(r.schedule->mma->tf32_rounding, compiler::Tf32Rounding::nearest) << mma;
    EXPECT_FALSE(r.schedule->mma->tf32_rounding_at.from_source) << mma;
  }
  for (const char* shape : {"m16n8k8", "m16n8k4"}) {
    Result r = check(tf32 + "mma tf32 " + shape + " truncate\n");
    ASSERT_TRUE(r.schedule && r.schedule->mma) << shape << r.printed;
    const compiler::MmaSpec& m = *r.schedule->mma;
    EXPECT_EQ(m.tf32_rounding, compiler::Tf32Rounding::truncate);
    EXPECT_EQ(m.k, shape == std::string("m16n8k8") ? 8 : 4);
    EXPECT_TRUE(m.tf32_rounding_at.from_source);
    EXPECT_EQ(m.tf32_rounding_at.span.line, 3u);
    EXPECT_EQ(m.tf32_rounding_at.span.col, 18u);
    EXPECT_EQ(m.tf32_rounding_at.span.length, 8u);
    EXPECT_NE(
        compiler::to_sched_text(*r.schedule).find("mma tf32 " + std::string(shape) + " truncate\n"),
        std::string::npos);
  }

  const std::string f16 = "dtype f16\n" + tf32, bf16 = "dtype bf16\n" + tf32;
  const char* only_tf32 =
      "truncate applies to tf32 only: f16/bf16 inputs are already in the multiplier's type";
  expect_error(f16 + "mma f16 m16n8k16 truncate\n", only_tf32, 4, 18);
  expect_error(bf16 + "mma bf16 m16n8k8 truncate\n", only_tf32, 4, 18);
  expect_error(f16 + "mma f16 truncate\n", only_tf32, 4, 9);  // no shape: the type decides

  expect_error(tf32 + "mma tf32 m16n8k8 truncat\n",
               "unknown rounding 'truncat' after the mma shape; did you mean 'truncate'? "
               "(expected truncate, for tf32 only; the default rounds to nearest)",
               3, 18);
  expect_error(tf32 + "mma tf32 m16n8k8 TRUNCATE\n", "did you mean 'truncate'?", 3, 18);
  Result nearest = check(tf32 + "mma tf32 m16n8k4 nearest\n");
  ASSERT_EQ(nearest.diags.size(), 1u) << nearest.printed;
  EXPECT_EQ(nearest.diags[0].message,
            "unknown rounding 'nearest' after the mma shape (expected truncate, for tf32 only; "
            "the default rounds to nearest)");
  // A bad shape and a bad rounding: both reported.
  Result both = check(tf32 + "mma tf32 m16n8k16 rna\n");
  EXPECT_FALSE(both.schedule);
  EXPECT_EQ(both.diags.size(), 2u) << both.printed;

  expect_error(tf32 + "mma tf32 truncate\n",
               "'truncate' comes after the instruction shape: write the shape first, e.g. "
               "'mma tf32 m16n8k8 truncate'",
               3, 10);
  expect_error(tf32 + "mma tf32 truncate m16n8k4\n", "e.g. 'mma tf32 m16n8k4 truncate'", 3, 10);
}

TEST(Analyze, ValueRules) {
  expect_error("tile 0x8x8\n", "tile BM must be at least 1, got 0", 1, 6);
  expect_error("shape 8x8x2147483648\n", "K must be at most 2147483647", 1, 11);
  expect_error("dtype f23\n", "did you mean 'f32'?", 1, 7);
  expect_error(std::string(kSgemmTile) + "vectorize 6\n", "power of two", 3, 11);
  expect_error(std::string(kSgemmTile) + "stages 1\n", "stages must be at least 2", 3, 8);
  expect_error(std::string(kSgemmTile) + "pad A -1\n", "padding must be at least 0", 3, 7);
  expect_error(std::string(kSgemmTile) + "transpose a\n", "did you mean 'A'?", 3, 11);
  expect_error(std::string(kSgemmTile) + "swizzle block 0\n", "at least 1", 3, 15);
  expect_error("epilogue beta 1e39\n", "does not fit in a float", 1, 15);
  expect_error("epilogue relu rleu\n", "did you mean 'relu'?", 1, 15);
  expect_error("tile 128x128x32\nwarp 64x64\nwmma tf32 16x16x16\n", "valid: 16x16x8", 3, 11);
  expect_error("tile 128x128x32\nwarp 64x64\nmma tf32 m16n8k16\n", "no shape 'm16n8k16'", 3, 10);
}

TEST(Analyze, DuplicatesNameBothPlaces) {
  Result r = check(std::string(kSgemmTile) + "transpose B\ntranspose A\ntranspose B\n");
  ASSERT_EQ(r.diags.size(), 1u) << r.printed;
  EXPECT_EQ(r.diags[0].message, "duplicate 'transpose B'; each directive may be given once");
  EXPECT_EQ(r.diags[0].span.line, 5u);
  ASSERT_EQ(r.diags[0].notes.size(), 1u);
  EXPECT_EQ(r.diags[0].notes[0].span.line, 3u);
  EXPECT_EQ(r.diags[0].notes[0].message, "first given here");
  // pad A and pad B are separate settings.
  EXPECT_TRUE(check(std::string(kSgemmTile) + "pad A 1\npad B 2\n").schedule);
}

TEST(Analyze, ExclusionsNameBothPlaces) {
  Result r = check(std::string(kSgemmTile) + "stages 2\ndouble_buffer\n");
  ASSERT_EQ(r.diags.size(), 1u) << r.printed;
  EXPECT_NE(r.diags[0].message.find("'double_buffer' and 'stages' exclude each other"),
            std::string::npos);
  EXPECT_EQ(r.diags[0].span.line, 4u);  // the later one
  ASSERT_EQ(r.diags[0].notes.size(), 1u);
  EXPECT_EQ(r.diags[0].notes[0].span.line, 3u);

  expect_error("block 16x16\ntile 32x32x8\nthread 1x4\n", "'block' and 'tile' exclude", 2, 1);
  expect_error(std::string(kSgemmTile) + "pad A 2\nswizzle smem\n", "'pad A' and 'swizzle smem'", 4,
               1);
  expect_error("tile 128x128x32\nwarp 64x64\nmma tf32\nwmma tf32\n", "exclude each other", 4, 1);
  expect_error("tile 128x128x32\nwarp 64x64\nmma tf32\nthread 2x2\n",
               "'thread' does not apply with 'mma'", 4, 1);
}

TEST(Analyze, DirectivesThatNeedTile) {
  for (const char* d :
       {"thread 2x2", "warp 8x4", "vectorize 2", "transpose A", "pad B 1", "swizzle smem",
        "swizzle block 2", "double_buffer", "stages 2", "stream_k"}) {
    Result r = check(std::string(d) + "\n");
    ASSERT_EQ(r.diags.size(), 1u) << d << "\n" << r.printed;
    EXPECT_NE(r.diags[0].message.find("needs 'tile'"), std::string::npos) << r.printed;
    EXPECT_EQ(r.diags[0].span.col, 1u);
  }
  expect_error("wmma tf32\n", "'wmma' needs 'tile' and 'warp'", 1, 1);
  expect_error("tile 128x128x32\nmma tf32\n", "'mma' needs 'warp WMxWN'", 2, 1);
}

// `stream_k`: a flag with its place; once; SIMT and wgmma only (the wmma
// and mma.sync kernels do not take its workspace yet), with a note at the
// wmma/mma directive; with wgmma, not with `cluster`.
TEST(Analyze, StreamK) {
  Result plain = check(kSgemmTile);
  ASSERT_TRUE(plain.schedule) << plain.printed;
  EXPECT_FALSE(plain.schedule->stream_k);
  EXPECT_FALSE(plain.schedule->stream_k_at.from_source);
  EXPECT_EQ(compiler::to_sched_text(*plain.schedule).find("stream_k"), std::string::npos);

  Result r = check(std::string(kSgemmTile) + "double_buffer; stream_k  # last\n");
  ASSERT_TRUE(r.schedule) << r.printed;
  const Schedule& s = *r.schedule;
  EXPECT_TRUE(s.stream_k);
  EXPECT_TRUE(s.stream_k_at.from_source);
  EXPECT_EQ(s.stream_k_at.span.line, 3u);
  EXPECT_EQ(s.stream_k_at.span.col, 16u);
  EXPECT_EQ(s.stream_k_at.span.length, 8u);
  EXPECT_TRUE(s.double_buffer);  // the other directives are untouched
  EXPECT_NE(compiler::to_sched_text(s).find("\nstream_k\n"), std::string::npos);

  Result dup = check(std::string(kSgemmTile) + "stream_k\nvectorize 2\nstream_k\n");
  ASSERT_EQ(dup.diags.size(), 1u) << dup.printed;
  EXPECT_EQ(dup.diags[0].message, "duplicate 'stream_k'; each directive may be given once");
  EXPECT_EQ(dup.diags[0].span.line, 5u);
  ASSERT_EQ(dup.diags[0].notes.size(), 1u);
  EXPECT_EQ(dup.diags[0].notes[0].span.line, 3u);

  for (const char* mma : {"mma tf32", "wmma tf32"}) {
    Result tc = check(std::string("tile 128x128x32\nwarp 64x64\n") + mma + "\nstream_k\n");
    EXPECT_FALSE(tc.schedule) << mma;
    ASSERT_EQ(tc.diags.size(), 1u) << mma << "\n" << tc.printed;
    const std::string api = std::string(mma).substr(0, std::string(mma).find(' '));
    EXPECT_EQ(tc.diags[0].message, "'stream_k' is not implemented with '" + api +
                                       "' yet: only the SIMT (f32 FMA) and 'wgmma' kernels "
                                       "split their k loop");
    EXPECT_EQ(tc.diags[0].span.line, 4u);
    EXPECT_EQ(tc.diags[0].span.col, 1u);
    ASSERT_EQ(tc.diags[0].notes.size(), 1u);
    EXPECT_EQ(tc.diags[0].notes[0].span.line, 3u);
    EXPECT_EQ(tc.diags[0].notes[0].message, "'" + api + "' given here");
  }

  const std::string hopper =
      "dtype f16\ntile 128x256x64\nwarp 64x256\nwgmma f16\ntma\nstages 3\nswizzle smem\n"
      "warp_specialize\npersistent\n";
  Result wg = check(hopper + "stream_k\n", sm90());
  ASSERT_TRUE(wg.schedule) << wg.printed;
  EXPECT_TRUE(wg.schedule->stream_k);
  Result cl = check(hopper + "cluster 2x1\nstream_k\n", sm90());
  EXPECT_FALSE(cl.schedule);
  ASSERT_EQ(cl.diags.size(), 1u) << cl.printed;
  EXPECT_EQ(cl.diags[0].message,
            "'stream_k' is not implemented with 'cluster' yet: the stream_k tail's blocks each "
            "compute one slice of one tile alone");
  EXPECT_EQ(cl.diags[0].span.line, 11u);
  ASSERT_EQ(cl.diags[0].notes.size(), 1u);
  EXPECT_EQ(cl.diags[0].notes[0].span.line, 10u);
}

TEST(Analyze, TypesAndTargets) {
  expect_error("dtype f16\n", "needs 'wmma' or 'mma'", 1, 7);
  expect_error("dtype bf16\ntile 128x128x32\nwarp 64x64\nwmma f16\n",
               "'wmma f16' does not match dtype bf16; use 'wmma bf16'", 4, 6);
  expect_error("tile 128x128x32\nwarp 64x64\nmma bf16\n", "dtype f32 (the default)", 3, 5);

  // Every known target is sm_80+; the rule still holds for an older one.
  Target turing = sm90();
  turing.sm = 75;
  expect_error("tile 128x128x32\nwarp 64x64\nwmma tf32\n", "needs sm_80 or newer", 3, 6, turing);
  expect_error(std::string(kSgemmTile) + "stages 2\n", "'stages' (cp.async) needs sm_80", 3, 1,
               turing);
  EXPECT_TRUE(check("dtype f16\ntile 128x128x32\nwarp 64x64\nmma f16 m16n8k8\n", turing).schedule);
  expect_error("dtype f16\ntile 128x128x32\nwarp 64x64\nmma f16\n", "needs sm_80", 4, 5, turing);
}

TEST(Analyze, SimtDivisibilityAndThreads) {
  expect_error("tile 100x128x8\nthread 8x8\n", "thread tile 8x8 does not divide block tile 100x128",
               2, 8);
  expect_error("tile 128x128x8\nthread 8x8 split 1x3\n", "TN % PN", 2, 18);
  expect_error("tile 128x128x8\nthread 8x8\nwarp 48x64\n", "warp tile 48x64 does not divide", 3, 6);
  expect_error("tile 128x128x8\nthread 8x8\nwarp 32x32\n", "holds 16 thread tiles", 3, 6);
}

TEST(Analyze, ThreadLimits) {
  EXPECT_TRUE(check("tile 128x128x8\nthread 4x4\n").schedule);  // 1024 threads
  expect_error("tile 128x128x8\nthread 4x2\n", "2048 threads", 2, 8);
  expect_error("tile 48x48x8\nthread 4x4\n", "144 threads", 2, 8);
  // With the default 1x1 thread tile the place is the tile itself.
  expect_error("tile 64x64x8\n", "4096 threads", 1, 6);
  expect_error("block 33x2\n", "66 threads, not a multiple of the warp size 32", 1, 7);
  expect_error("block 64x32\n", "2048 threads, more than the 1024", 1, 7);
  // Tensor cores: 32 threads per warp tile.
  expect_error("tile 256x256x32\nwarp 16x16\nwmma tf32\n", "8192 threads", 2, 6);
}

TEST(Analyze, TensorCoreDivisibility) {
  expect_error("tile 128x128x32\nwarp 48x64\nwmma tf32\n", "does not divide block tile", 2, 6);
  expect_error("tile 96x128x32\nwarp 24x64\nwmma tf32\n", "WM 24 % 16", 2, 6);
  expect_error("dtype f16\ntile 128x128x8\nwarp 64x64\nmma f16\n", "tile BK 8", 2, 6);
  EXPECT_TRUE(check("dtype f16\ntile 128x128x8\nwarp 64x64\nmma f16 m16n8k8\n").schedule);
}

TEST(Analyze, VectorAndCopyRules) {
  expect_error(std::string(kSgemmTile) + "vectorize 8\n", "32 bytes", 3, 11);
  expect_error("tile 128x128x6\nthread 8x8\nvectorize 4\n", "does not divide tile BK 6", 3, 11);
  expect_error("tile 128x128x8\nthread 8x8 split 2x4\nvectorize 4\n", "TN/PN = 2", 3, 11);
  // Copies the threads do not divide are legal (the last round is guarded):
  // 64*8/4 = 128 vectors of A for 256 threads; 8*64/2 = 256 vectors of B for
  // 512 threads; 64*4 = 256 elements of A and B for 1024 threads.
  EXPECT_TRUE(check("tile 64x64x8\nthread 4x4\nvectorize 4\n").schedule);
  EXPECT_TRUE(check("tile 128x64x8\nthread 4x4\nvectorize 2\n").schedule);
  EXPECT_TRUE(check("tile 64x64x4\nthread 2x2\n").schedule);
  EXPECT_TRUE(check("tile 64x64x8\nthread 4x4\nvectorize 2\n").schedule);
  EXPECT_TRUE(check("dtype f16\ntile 16x256x16\nwarp 16x32\nmma f16\nstages 3\n").schedule);
  // The tensor-core copies are 16-byte chunks whatever `vectorize` says, so
  // `stages` needs no vector width there (the SIMT rule, N*elem >= 4 bytes
  // for cp.async, cannot fail while the SIMT path is f32 only).
  EXPECT_TRUE(check("dtype f16\ntile 128x128x32\nwarp 64x64\nmma f16\nstages 2\n").schedule);
  EXPECT_TRUE(check("dtype bf16\ntile 128x128x32\nwarp 64x64\nwmma bf16\nstages 3\n").schedule);
  EXPECT_TRUE(
      check("dtype f16\ntile 128x128x32\nwarp 64x64\nmma f16\nstages 2\nvectorize 2\n").schedule);
}

// What the tensor-core lowering cannot do is rejected by analysis, with the
// error at the offending directive and a note at the tensor-core one.
TEST(Analyze, TensorCoreLoweringRules) {
  const std::string f16 = "dtype f16\ntile 128x128x32\nwarp 64x64\n";
  const std::string tf32 = "tile 128x128x32\nwarp 64x32\n";
  // transpose: a 16-byte cp.async cannot transpose.
  expect_error(f16 + "mma f16\ntranspose A\n", "'transpose A' does not apply with 'mma'", 5, 1);
  expect_error(tf32 + "transpose B\nwmma tf32\n", "'transpose B' does not apply with 'wmma'", 3, 1);
  Result r = check(f16 + "mma f16\ntranspose A\ntranspose B\n");
  ASSERT_EQ(r.diags.size(), 2u) << r.printed;
  ASSERT_EQ(r.diags[0].notes.size(), 1u);
  EXPECT_EQ(r.diags[0].notes[0].span.line, 4u);
  // pad: rows stay 16-byte aligned (pad * elem % 16 == 0).
  expect_error(f16 + "mma f16\npad A 3\n", "pad A 3 of f16 is 6 bytes", 5, 7);
  expect_error(f16 + "wmma f16\npad B 4\n", "pad B 4 of f16 is 8 bytes", 5, 7);
  expect_error(tf32 + "wmma tf32\npad B 2\n", "pad x 4 bytes must be a multiple of 16", 4, 7);
  EXPECT_TRUE(check(f16 + "mma f16\npad A 8\npad B 16\n").schedule);
  EXPECT_TRUE(check(tf32 + "wmma tf32\npad A 4\npad B 12\n").schedule);
  EXPECT_TRUE(check(f16 + "mma f16\npad A 0\n").schedule);
  // SIMT padding is free.
  EXPECT_TRUE(check(std::string(kSgemmTile) + "pad A 3\n").schedule);
  // swizzle smem: ldmatrix reads it (mma), WMMA cannot.
  r = check(f16 + "wmma f16\nswizzle smem\n");
  ASSERT_EQ(r.diags.size(), 1u) << r.printed;
  EXPECT_NE(r.diags[0].message.find("'swizzle smem' and 'wmma' exclude each other"),
            std::string::npos);
  EXPECT_EQ(r.diags[0].span.line, 5u);
  ASSERT_EQ(r.diags[0].notes.size(), 1u);
  EXPECT_EQ(r.diags[0].notes[0].span.line, 4u);
  EXPECT_TRUE(check(f16 + "mma f16\nswizzle smem\n").schedule);
  // wmma 32x8x16: B fragment pointers only 16-byte aligned.
  expect_error(f16 + "wmma f16 32x8x16\n", "32x8x16 is not supported", 4, 10);
  expect_error("dtype bf16\ntile 64x64x32\nwarp 32x32\nwmma bf16 32x8x16\n",
               "(valid: 16x16x16 or 8x32x16)", 4, 11);
  EXPECT_TRUE(check(f16 + "wmma f16 8x32x16\n").schedule);
}

TEST(Analyze, SharedMemoryLimitWithNotes) {
  Result r = check("tile 128x128x64\nthread 8x8\nvectorize 4\nstages 4\npad A 4\n");
  // (128*68 + 64*128) * 4 bytes = 67584 per buffer, 4 buffers = 270336.
  ASSERT_EQ(r.diags.size(), 1u) << r.printed;
  EXPECT_NE(r.diags[0].message.find("needs 270336 bytes"), std::string::npos) << r.printed;
  EXPECT_NE(r.diags[0].message.find("232448"), std::string::npos);
  EXPECT_EQ(r.diags[0].span.col, 6u);
  ASSERT_EQ(r.diags[0].notes.size(), 2u);
  EXPECT_EQ(r.diags[0].notes[0].message, "stages set here");
  EXPECT_EQ(r.diags[0].notes[1].message, "pad A set here");
  // The same schedule with 3 stages fits sm_90 (202752) but not sm_80 (166912).
  std::string three = "tile 128x128x64\nthread 8x8\nvectorize 4\nstages 3\npad A 4\n";
  EXPECT_TRUE(check(three).schedule);
  Target a100;
  ASSERT_TRUE(compiler::target_for_arch("sm_80", a100));
  expect_error(three, "202752 bytes", 1, 6, a100);
}

TEST(Analyze, ReportsSeveralErrorsInOneRun) {
  Result r = check("tile 100x128x8\nthread 8x8\ndouble_buffer\nstages 2\ndtype f16\nvectorize 3\n");
  EXPECT_FALSE(r.schedule);
  // stages/double_buffer, dtype f16 without tensor cores, vectorize 3. The
  // bad vector width stops the arithmetic rules, so no divisibility error.
  EXPECT_EQ(r.diags.size(), 3u) << r.printed;
}

TEST(Analyze, TmaDoesNotRepeatAMisspelledSwizzle) {
  Result r = check(
      "dtype f16\ntile 128x256x64\nwarp 64x64\nmma f16 m16n8k16\nstages 3\nswizzle smme\ntma\n");
  EXPECT_FALSE(r.schedule);
  // Only "unknown swizzle 'smme'", not also "'tma' needs 'swizzle smem'".
  ASSERT_EQ(r.diags.size(), 1u) << r.printed;
  EXPECT_NE(r.diags[0].message.find("unknown swizzle"), std::string::npos) << r.printed;
}

TEST(Resources, Arithmetic) {
  Target t = sm90();
  Result r = check("tile 128x64x16\nthread 8x4\ntranspose A\npad A 4\npad B 2\ndouble_buffer\n");
  ASSERT_TRUE(r.schedule) << r.printed;
  compiler::Resources res = compiler::static_resources(*r.schedule, t);
  EXPECT_EQ(res.threads_per_block, 16 * 16);
  EXPECT_EQ(res.a_tile_bytes, 16 * (128 + 4) * 4);  // transposed: BK rows of BM + pad
  EXPECT_EQ(res.b_tile_bytes, 16 * (64 + 2) * 4);
  EXPECT_EQ(res.buffers, 2);
  EXPECT_EQ(res.smem_bytes, 2 * (16 * 132 + 16 * 66) * 4);
  EXPECT_EQ(res.blocks_per_sm, 8);
  EXPECT_STREQ(res.limited_by, "threads");

  Result b = check("dtype f16\ntile 64x64x32\nwarp 32x32\nwmma f16\nstages 3\nvectorize 8\n");
  ASSERT_TRUE(b.schedule) << b.printed;
  res = compiler::static_resources(*b.schedule, t);
  EXPECT_EQ(res.threads_per_block, 128);
  EXPECT_EQ(res.b_tile_bytes, 32 * 64 * 2);  // BK rows of BN, f16
  EXPECT_EQ(res.epilogue_bytes, 4 * 1024);   // smaller than the pipeline
  EXPECT_EQ(res.smem_bytes, 3 * (64 * 32 + 64 * 32) * 2);
  EXPECT_EQ(res.blocks_per_sm, t.smem_per_sm / 24576);  // 9, threads would allow 16
  EXPECT_STREQ(res.limited_by, "shared memory");

  Result big = check("tile 128x128x32\nthread 8x8\nvectorize 4\nstages 3\n");
  ASSERT_TRUE(big.schedule) << big.printed;
  res = compiler::static_resources(*big.schedule, t);
  EXPECT_EQ(res.smem_bytes, 3 * (128 * 32 * 2) * 4);  // 98304
  EXPECT_EQ(res.blocks_per_sm, t.smem_per_sm / 98304);
  EXPECT_STREQ(res.limited_by, "shared memory");

  // wmma: the epilogue's 16x16 f32 scratch per warp can exceed the pipeline.
  Result w = check("tile 32x32x8\nwarp 16x16\nwmma tf32\n");
  ASSERT_TRUE(w.schedule) << w.printed;
  res = compiler::static_resources(*w.schedule, t);
  EXPECT_EQ(res.a_tile_bytes + res.b_tile_bytes, (32 * 8 + 8 * 32) * 4);  // 2048
  EXPECT_EQ(res.epilogue_bytes, 4 * 1024);
  EXPECT_EQ(res.smem_bytes, 4096);
  Result mma = check("tile 32x32x8\nwarp 16x16\nmma tf32\n");  // no scratch
  ASSERT_TRUE(mma.schedule) << mma.printed;
  EXPECT_EQ(compiler::static_resources(*mma.schedule, t).smem_bytes, 2048);

  Result naive = check("block 32x1\n");
  res = compiler::static_resources(*naive.schedule, t);
  EXPECT_EQ(res.smem_bytes, 0);
  EXPECT_EQ(res.blocks_per_sm, t.max_blocks_per_sm);
  EXPECT_STREQ(res.limited_by, "blocks per SM");
}

// A warp-specialized wgmma kernel (setmaxnreg, __launch_bounds__(threads, 1))
// holds the register file from launch: one block an SM, whatever its shared
// memory allows (ptxas: 168 registers x 384 threads). Without
// warp_specialize ptxas picks the registers: not bounded here.
TEST(Resources, SetmaxnregKernelsHoldTheRegisterFile) {
  Target t = sm90();
  const std::string body =
      "dtype s8\nlayout B col\ntile 128x64x128\nwarp 64x64\nwgmma s8\ntma\n"
      "stages 3\nswizzle smem\n";
  Result ws = check(body + "warp_specialize\n");
  ASSERT_TRUE(ws.schedule) << ws.printed;
  compiler::Resources res = compiler::static_resources(*ws.schedule, t);
  EXPECT_EQ(res.threads_per_block, 384);
  EXPECT_GE(t.smem_per_sm / res.smem_bytes, 3);  // shared memory alone would allow 3
  EXPECT_EQ(res.blocks_per_sm, 1);
  EXPECT_STREQ(res.limited_by, "registers: setmaxnreg");

  Result one = check(body);  // no producer warpgroup, no setmaxnreg
  ASSERT_TRUE(one.schedule) << one.printed;
  res = compiler::static_resources(*one.schedule, t);
  EXPECT_GE(res.blocks_per_sm, 2);
  EXPECT_STRNE(res.limited_by, "registers: setmaxnreg");
}

// The canonical text is a schedule that analyzes to itself.
TEST(Analyze, CanonicalTextRoundTrips) {
  std::vector<std::string> texts = {
      "block 8x4\nepilogue bias\n",
      "shape 7x9x11\ntile 128x128x8\nthread 8x8 split 2x2\nwarp 32x64\nvectorize 4\n"
      "transpose A\ntranspose B\npad A 4\nswizzle block 3\ndouble_buffer\n"
      "epilogue alpha -0.25 beta 3 relu bias\n",
      "dtype f16\ntile 128x256x32\nwarp 64x64\nmma f16 m16n8k8\nvectorize 8\nstages 3\nswizzle "
      "smem\n",
      "tile 128x128x32\nwarp 64x32\nwmma tf32\nstages 2\nvectorize 4\n",
      "tile 128x128x32\nwarp 64x64\nmma tf32 m16n8k4 truncate\nstages 3\nswizzle smem\n",
      "tile 64x64x8\nthread 4x4\nstream_k\nswizzle block 2\nstages 2\n",
  };
  namespace fs = std::filesystem;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SCHEDC_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".sched") {
      std::ifstream in(e.path());
      texts.push_back(std::string(std::istreambuf_iterator<char>(in), {}));
    }
  for (const std::string& text : texts) {
    Result r = check(text);
    ASSERT_TRUE(r.schedule) << text << r.printed;
    std::string canon = compiler::to_sched_text(*r.schedule);
    Result again = check(canon);
    ASSERT_TRUE(again.schedule) << canon << again.printed;
    EXPECT_EQ(compiler::to_sched_text(*again.schedule), canon);
    compiler::Resources a = compiler::static_resources(*r.schedule, sm90());
    compiler::Resources b = compiler::static_resources(*again.schedule, sm90());
    EXPECT_EQ(a.smem_bytes, b.smem_bytes);
    EXPECT_EQ(a.threads_per_block, b.threads_per_block);
  }
}

// static_resources and the lowering size shared memory the same way
// (plan.smem_bytes == static_resources.smem_bytes): every example, and a
// sweep of tensor-core schedules (wmma and mma, every type, pipelines, pads,
// small tiles where the wmma epilogue's scratch is the larger), on sm_90 and
// sm_80. Each accepted schedule must also lower without an internal error.
TEST(Resources, SharedBytesAgreeWithLowering) {
  Target sm80, s90 = sm90();
  ASSERT_TRUE(compiler::target_for_arch("sm_80", sm80));
  auto agree = [&](const std::string& text, const Target& t) {
    Result r = check(text, t);
    if (!r.schedule) return false;
    compiler::KernelPlan p = compiler::lower(*r.schedule, t);
    EXPECT_EQ(p.smem_bytes, compiler::static_resources(*r.schedule, t).smem_bytes)
        << t.arch_name() << "\n"
        << text;
    return true;
  };
  namespace fs = std::filesystem;
  int examples = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SCHEDC_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".sched") {
      std::ifstream in(e.path());
      std::string text(std::istreambuf_iterator<char>(in), {});
      EXPECT_TRUE(agree(text, s90)) << e.path();
      agree(text, sm80);  // an example may not fit sm_80
      ++examples;
    }
  EXPECT_GE(examples, 10);

  struct Api {
    const char* dtype;
    const char* directive;
    int elem;
  };
  const Api apis[] = {
      {"f32", "wmma tf32", 4},       {"f32", "mma tf32", 4},         {"f32", "mma tf32 m16n8k4", 4},
      {"f16", "wmma f16", 2},        {"f16", "wmma f16 8x32x16", 2}, {"f16", "mma f16", 2},
      {"f16", "mma f16 m16n8k8", 2}, {"bf16", "wmma bf16", 2},       {"bf16", "mma bf16", 2},
  };
  const int tiles[][3] = {{32, 32, 16},   {64, 64, 32},   {128, 128, 32},
                          {128, 256, 32}, {256, 128, 64}, {32, 128, 16}};
  const int warps[][2] = {{16, 16}, {32, 32}, {64, 32}, {64, 64}, {16, 32}};
  const char* pipelines[] = {"", "double_buffer\n", "stages 2\n", "stages 3\n", "stages 4\n"};
  int accepted = 0, scratch_wins = 0;
  for (const Api& a : apis)
    for (const auto& tl : tiles)
      for (const auto& w : warps)
        for (const char* pipe : pipelines)
          for (int layout = 0; layout < 3; ++layout) {
            std::ostringstream o;
            o << "dtype " << a.dtype << "\n"
              << a.directive << "\ntile " << tl[0] << "x" << tl[1] << "x" << tl[2] << "\nwarp "
              << w[0] << "x" << w[1] << "\n"
              << pipe;
            if (layout == 1) o << "pad A " << 16 / a.elem << "\npad B " << 32 / a.elem << "\n";
            if (layout == 2) o << "swizzle smem\n";
            bool is_wmma = std::string(a.directive).rfind("wmma", 0) == 0;
            for (const Target* t : {&s90, &sm80}) {
              if (!agree(o.str(), *t)) continue;
              ++accepted;
              Result r = check(o.str(), *t);
              compiler::Resources res = compiler::static_resources(*r.schedule, *t);
              if (is_wmma && res.epilogue_bytes == res.smem_bytes) ++scratch_wins;
            }
          }
  EXPECT_GE(accepted, 500);
  EXPECT_GE(scratch_wins, 1);
}
