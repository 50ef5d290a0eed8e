// compiler::analyze's tensor-core rules (see compiler/analyze.cpp for the
// passes): the instruction of `wmma` / `mma` / `wgmma` and its shapes, what
// `tma` needs, what the tensor-core copies and layouts exclude, warp and
// warpgroup tiles, wgmma's register bound, and the directives that shape the
// Hopper kernel (`warp_specialize`, `persistent`, `tma_store`).
#include "compiler/analyzer.h"
#include "compiler/wgmma_plan.h"

namespace schedc::compiler::analysis {

void Analyzer::read_mma(const Directive& d) {
  const std::string& k = d.keyword;
  if (mma_dir_) {
    auto& e = error(d.span, mma_dir_->keyword == k
                                ? "duplicate '" + k + "'; each directive may be given once"
                                : "'" + mma_dir_->keyword + "' and '" + k +
                                      "' exclude each other: choose one tensor-core API");
    e.notes.push_back({mma_dir_->span, mma_dir_->keyword == k
                                           ? "first given here"
                                           : "'" + mma_dir_->keyword + "' given here"});
    return;
  }
  mma_dir_ = &d;
  MmaSpec m;
  m.api = k == "wmma" ? MmaApi::wmma : k == "wgmma" ? MmaApi::wgmma : MmaApi::mma_sync;
  s_.mma_at = at(d);
  if (!mma_type(d.args[0], m.type)) {
    s_.mma = m;  // keep "tensor cores in use" for the presence rules
    return;
  }
  bool tf32 = m.type == MmaType::tf32;
  std::string type = to_string(m.type);
  if (m.type == MmaType::s8 && m.api == MmaApi::wmma) {
    bad_value(d.args[0].span,
              "'wmma s8' is not offered: int8 runs on 'mma s8' (mma.sync m16n8k32, sm_80) or "
              "Hopper's 'wgmma s8' (sm_90)");
    s_.mma = m;
    return;
  }
  if (m.api == MmaApi::wgmma) {
    read_wgmma_shape(d, m);
  } else if (m.api == MmaApi::wmma) {
    m.m = 16, m.n = 16, m.k = tf32 ? 8 : 16;
    // WMMA's 32x8x16 (f16/bf16) is not offered: its B fragments start every
    // 8 columns (16 bytes) of the shared B tile, and load_matrix_sync needs
    // 32-byte aligned pointers.
    std::vector<std::string> valid = tf32 ? std::vector<std::string>{"16x16x8"}
                                          : std::vector<std::string>{"16x16x16", "8x32x16"};
    if (d.args.size() == 2) {
      const Arg& sh = d.args[1];
      std::string want = dims_text({sh.values[0], sh.values[1], sh.values[2]});
      if (!tf32 && !sh.overflow && want == "32x8x16") {
        bad_value(sh.span, "wmma " + type +
                               " 32x8x16 is not supported: its B fragments start every 8 "
                               "columns (16 bytes) of shared memory and WMMA loads need "
                               "32-byte aligned pointers (valid: " +
                               join(valid) + ")");
      } else if (sh.overflow || std::find(valid.begin(), valid.end(), want) == valid.end()) {
        bad_value(sh.span,
                  "wmma " + type + " has no shape " + sh.text + " (valid: " + join(valid) + ")");
      } else {
        m.m = int(sh.values[0]), m.n = int(sh.values[1]), m.k = int(sh.values[2]);
      }
    }
  } else {
    // s8: m16n8k32 (its fragments hold the bytes of f16's m16n8k16), or
    // m8n8k16, Turing's shape: the same m16n8k32 fragments, each step four
    // m8n8k16 instructions (a quarter of the work an instruction).
    const bool s8 = m.type == MmaType::s8;
    m.m = 16, m.n = 8, m.k = tf32 ? 8 : s8 ? 32 : 16;
    std::vector<std::string> valid = tf32 ? std::vector<std::string>{"m16n8k8", "m16n8k4"}
                                     : s8 ? std::vector<std::string>{"m16n8k32", "m8n8k16"}
                                          : std::vector<std::string>{"m16n8k16", "m16n8k8"};
    // `mma tf32 truncate`: the grammar reads the word after the type as
    // the shape; the rounding is only ever the word after the shape.
    if (d.args.size() >= 2 && d.args[1].kind == Arg::Kind::word && d.args[1].text == "truncate") {
      read_tf32_rounding(d.args[1], m);  // f16/bf16: "applies to tf32 only"
      if (tf32) {
        // `mma tf32 truncate m16n8k4`: suggest the shape written after it.
        bool shape_after = d.args.size() == 3 &&
                           std::find(valid.begin(), valid.end(), d.args[2].text) != valid.end();
        bad_value(d.args[1].span,
                  "'truncate' comes after the instruction shape: write the shape first, "
                  "e.g. 'mma tf32 " +
                      (shape_after ? d.args[2].text : valid[0]) + " truncate'");
      }
      s_.mma = m;
      return;
    }
    if (d.args.size() == 3) read_tf32_rounding(d.args[2], m);
    if (d.args.size() >= 2) {
      const Arg& sh = d.args[1];
      if (sh.kind != Arg::Kind::word) {
        bad_value(sh.span, "an mma instruction shape is written m16n8kK, e.g. '" + valid[0] +
                               "', not " + sh.text);
      } else if (std::find(valid.begin(), valid.end(), sh.text) == valid.end()) {
        std::string msg = "mma " + type + " has no shape '" +
                          (sh.text.size() > 40 ? sh.text.substr(0, 40) + "..." : sh.text) + "'";
        std::string guess = dsl::closest_spelling(sh.text, valid);
        if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
        bad_value(sh.span, msg + " (valid: " + join(valid) + ")");
      } else if (sh.text == "m8n8k16") {
        m.s8_m8n8k16 = true;  // the step stays m16n8k32
      } else {
        m.k = sh.text == "m16n8k32"   ? 32
              : sh.text == "m16n8k16" ? 16
              : sh.text == "m16n8k8"  ? 8
                                      : 4;
      }
    }
  }
  s_.mma = m;
}

void Analyzer::read_wgmma_shape(const Directive& d, MmaSpec& m) {
  m.m = 64;
  m.k = m.type == MmaType::tf32 ? 8 : m.type == MmaType::s8 ? 32 : 16;
  m.n = 0;
  if (d.args.size() < 2) return;
  const Arg& sh = d.args[1];
  const std::string example = "m64n256k" + std::to_string(m.k);
  int64_t mm = 0, nn = 0, kk = 0;
  char tail = 0;
  if (sh.kind != Arg::Kind::word ||
      std::sscanf(sh.text.c_str(), "m%" SCNd64 "n%" SCNd64 "k%" SCNd64 "%c", &mm, &nn, &kk,
                  &tail) != 3) {
    bad_value(sh.span, "a wgmma instruction shape is written m64nNkK, e.g. '" + example +
                           "', not '" +
                           (sh.text.size() > 40 ? sh.text.substr(0, 40) + "..." : sh.text) + "'");
    return;
  }
  std::string type = to_string(m.type);
  if (mm != 64)
    bad_value(sh.span, "wgmma computes 64 rows per warpgroup: M must be 64, got " +
                           std::to_string(mm) + " (e.g. '" + example + "')");
  else if (kk != m.k)
    bad_value(sh.span, "wgmma " + type + " has K " + std::to_string(m.k) + " (32 bytes), got " +
                           std::to_string(kk) + " (e.g. '" + example + "')");
  else if (nn < 8 || nn > 256 || nn % 8 != 0)
    bad_value(sh.span, "wgmma N must be a multiple of 8 from 8 to 256, got " + std::to_string(nn));
  else if (!wgmma_n_valid(m.type, int(nn)))
    bad_value(sh.span,
              "wgmma s8 has N 8, 16, 24 or a multiple of 16 up to 256, got " + std::to_string(nn));
  else
    m.n = int(nn);
}

void Analyzer::read_tf32_rounding(const Arg& w, MmaSpec& m) {
  if (w.text != "truncate") {
    std::string msg = "unknown rounding '" +
                      (w.text.size() > 40 ? w.text.substr(0, 40) + "..." : w.text) +
                      "' after the mma shape";
    std::string guess = dsl::closest_spelling(w.text, {"truncate"});
    if (!guess.empty()) msg += "; did you mean '" + guess + "'?";
    bad_value(w.span, msg + " (expected truncate, for tf32 only; the default rounds to nearest)");
    return;
  }
  if (m.type != MmaType::tf32) {
    bad_value(w.span, m.type == MmaType::s8
                          ? "truncate applies to tf32 only: s8 inputs are integers, multiplied "
                            "exactly"
                          : "truncate applies to tf32 only: f16/bf16 inputs are already in the "
                            "multiplier's type");
    return;
  }
  m.tf32_rounding = Tf32Rounding::truncate;
  m.tf32_rounding_at = Origin{w.span, true};
}

void Analyzer::hopper_presence_rules() {
  const std::pair<const char*, const char*> needs[] = {
      {"tma_store",
       "the Hopper kernel is the one whose epilogue stages C in shared memory for TMA"},
      {"persistent", "the Hopper kernel is the one whose blocks walk the C tiles"},
      {"warp_specialize",
       "it splits the block into a TMA producer warpgroup and wgmma consumer warpgroups"},
      {"cluster", "the Hopper kernel's producer multicasts the shared operand's TMA copies"},
      {"split_k",
       "the Hopper kernel's slices meet in a thread-block cluster's distributed shared memory"}};
  for (const auto& [key, why] : needs) {
    const Directive* d = given(key);
    if (!d || s_.uses_wgmma()) continue;
    auto& e = error(d->keyword_span, "'" + std::string(key) + "' needs 'wgmma': " + why);
    if (mma_dir_) e.notes.push_back({mma_dir_->span, "'" + mma_dir_->keyword + "' given here"});
  }
  // Only a warp-specialized kernel fixes its registers at launch; any other
  // kernel's occupancy follows from what ptxas gives it.
  if (const Directive* d = given("blocks_per_sm"); d && !s_.warp_specialize)
    error(d->keyword_span,
          "'blocks_per_sm' needs 'warp_specialize': a warp-specialized wgmma kernel holds its "
          "registers from launch (setmaxnreg), so it is compiled for a number of blocks an SM; "
          "other kernels' occupancy follows from their registers and shared memory (`schedc "
          "check` prints it)");
  // The cluster's CTAs walk their tiles in step (the persistent scheduler)
  // or take a tile each of a pair along M (split_k's clusters: the pair's
  // CTAs of each slice share B), and the producer warpgroup issues the
  // multicast copies.
  if (const Directive* d = given("cluster");
      d && s_.uses_wgmma() && s_.cluster_m * s_.cluster_n > 1) {
    if (!given("warp_specialize"))
      error(d->keyword_span,
            "'cluster' needs 'warp_specialize': a producer warpgroup multicasts the shared "
            "operand");
    if (!given("persistent") && !given("split_k"))
      error(d->keyword_span,
            "'cluster' needs 'persistent' or 'split_k': the cluster's two CTAs walk "
            "neighbouring tiles in step (persistent), or each slice's CTAs of two neighbouring "
            "tiles along M share B (split_k's clusters, with 'cluster 2x1')");
    if (given("split_k") && !given("persistent")) cluster_split_k_rules(*d);
  }
  // 2x1 multicasts B, 1x2 A, in two halves: of whole 128-byte column panels
  // (the operand m- or n-major) or of whole 8-row swizzle atoms (k-major).
  if (const Directive* d = given("cluster");
      d && s_.cluster_m * s_.cluster_n == 2 && s_.tile && s_.uses_wgmma()) {
    const bool shares_b = s_.cluster_m == 2;
    const WgmmaForm form = wgmma_form(s_.mma->type, s_.a_col, s_.b_col);
    const bool mn_major = shares_b ? form.b_mn_major : form.a_mn_major;
    const int64_t extent = shares_b ? s_.tile->n : s_.tile->m;
    const int unit = mn_major ? 2 * (128 / size_of(s_.dtype)) : 16;
    if (extent % unit != 0) {
      const std::string op = shares_b ? "B" : "A", dim = shares_b ? "BN" : "BM";
      auto& e = error(d->args[0].span, "'cluster " + std::string(shares_b ? "2x1" : "1x2") +
                                           "' multicasts " + op + " in two halves of whole " +
                                           (mn_major ? "128-byte panels" : "8-row swizzle atoms") +
                                           ": " + dim + " must be a multiple of " +
                                           std::to_string(unit) + " for " + to_string(s_.dtype) +
                                           " (" + dim + " is " + std::to_string(extent) + ")");
      note(e, tile_note(), "block tile set here");
    }
  }
  // The two consumers alternate over the tiles one block walks: without
  // `persistent` a block has one tile, and the second consumer nothing.
  if (s_.pingpong && !given("persistent"))
    error(given("warp_specialize")->args[0].span,
          "'warp_specialize pingpong' needs 'persistent': its two consumer warpgroups take "
          "turns over the tiles a persistent block walks (add 'persistent')");
}

// `cluster 2x1` with `split_k` (no persistent walk): the launch's cluster is
// the split's slices of two tiles along M, each CTA multicasting half of
// its slice's B into the pair (compiler/wgmma_plan.h, paired).
void Analyzer::cluster_split_k_rules(const Directive& d) {
  if (s_.cluster_n == 2)
    error(d.args[0].span,
          "'cluster 1x2' is not implemented with 'split_k' yet: split_k's clusters pair two "
          "tiles along M, which share B ('cluster 2x1')");
  if (s_.swizzle_block > 1) {
    auto& e =
        error(d.keyword_span,
              "'cluster' with 'split_k' is not implemented with 'swizzle block' yet: the "
              "pair is two tiles of one column of the row-major grid (blockIdx.y 2p, 2p + 1)");
    note(e, s_.swizzle_block_at, "swizzle block set here");
  }
  if (s_.split_k > kMaxSplitK / 2)
    error(d.keyword_span, "'cluster 2x1' with 'split_k " + std::to_string(s_.split_k) +
                              "' makes clusters of " + std::to_string(2 * s_.split_k) +
                              " CTAs, more than a portable cluster's " +
                              std::to_string(kMaxSplitK) + ": use at most 'split_k " +
                              std::to_string(kMaxSplitK / 2) + "' with it");
}

void Analyzer::tma_presence_rules() {
  const Directive* d = given("tma");
  if (!d && s_.uses_wgmma()) {
    error(mma_dir_->keyword_span,
          "'wgmma' needs 'tma': it reads both operands from shared memory in the 128-byte "
          "swizzle that TMA writes (add 'tma', 'stages N' and 'swizzle smem')");
    return;
  }
  if (!d) return;
  if (!mma_dir_ || mma_dir_->keyword == "wmma") {
    auto& e = error(d->keyword_span,
                    "'tma' needs 'mma' or 'wgmma': it fills their shared-memory pipeline (wmma "
                    "and the SIMT kernels copy with cp.async or plain loads)");
    if (mma_dir_) e.notes.push_back({mma_dir_->span, "'wmma' given here"});
    return;
  }
  if (!given("stages")) {
    auto& e = error(d->keyword_span,
                    "'tma' needs 'stages N': TMA copies fill the stages of a multi-stage "
                    "pipeline");
    if (const Directive* db = given("double_buffer"))
      e.notes.push_back({db->span, "'double_buffer' given here: write 'stages 2' instead"});
  }
  if (!given("swizzle smem") && !swizzle_broken_)
    error(d->keyword_span,
          "'tma' needs 'swizzle smem': TMA writes the 128-byte XOR swizzle that the fragment "
          "loads read");
}

void Analyzer::tma_tile_rules(const BlockTile& t) {
  const Directive* d = given("tma");
  if (!d || !s_.mma || s_.mma->api == MmaApi::wmma) return;
  const int elem = size_of(s_.dtype);
  auto tile_error = [&](const std::string& m) {
    auto& e = error(d->keyword_span, m);
    note(e, tile_note(), "block tile set here");
  };
  // Each operand's stage as it lies in memory: k contiguous (A row-major, B
  // column-major) is one box of BK-element rows, 128 bytes (wgmma: BK / P
  // such boxes, 128-byte panels of k side by side); m or n contiguous is
  // 128-byte column panels of BK rows. wgmma reads a tf32 A transposed first
  // (compiler/wgmma_plan.h, wgmma_form) and always whole 128-byte rows of k;
  // on mma a column-major A with a row-major B leaves BK free.
  const bool wgmma = s_.mma->api == MmaApi::wgmma;
  const WgmmaForm form = wgmma_form(s_.mma->type, s_.a_col, s_.b_col);
  const bool a_mn = wgmma ? form.a_mn_major : s_.a_col;
  const bool b_mn = wgmma ? form.b_mn_major : !s_.b_col;
  const bool bk_free = !wgmma && a_mn && b_mn;
  const std::string panel = std::to_string(128 / elem), dtype = to_string(s_.dtype);
  const std::string bk_is = " (BK is " + std::to_string(t.k) + ")";
  const std::string k_major_boxes =
      !a_mn ? "'tma' loads A as (BM, BK) boxes of 128-byte rows"
            : "'tma' loads a column-major B as one (BN, BK) box of 128-byte rows";
  if (wgmma && (t.k * elem) % 128 != 0)
    tile_error((!a_mn || !b_mn ? k_major_boxes + ", a box a 128-byte panel of k"
                               : std::string("'tma' loads A and B as column panels of BK rows, "
                                             "and wgmma reads 128-byte rows of k")) +
               ": BK must be a multiple of " + panel + " for " + dtype + bk_is);
  else if (!wgmma && !bk_free && t.k * elem != 128)
    tile_error(k_major_boxes + ": BK must be " + panel + " for " + dtype + bk_is);
  if (wgmma && (a_mn || b_mn) && t.k > 256)
    tile_error(std::string("'tma' loads ") + (a_mn ? "a column-major A" : "a row-major B") +
               " as column panels of BK rows, and a TMA box has at most 256 rows" + bk_is);
  if (a_mn && (t.m * elem) % 128 != 0)
    tile_error("'tma' loads a column-major A as (BK, " + panel +
               ") column panels of 128 bytes: BM must be a multiple of " + panel + " for " + dtype +
               " (BM is " + std::to_string(t.m) + ")");
  if (b_mn && (t.n * elem) % 128 != 0)
    tile_error("'tma' loads B as (BK, " + panel +
               ") column panels of 128 bytes: BN must be a multiple of " + panel + " for " + dtype +
               " (BN is " + std::to_string(t.n) + ")");
  if (!a_mn && t.m > 256)
    tile_error("'tma' loads A as one (BM, BK) box, and a TMA box has at most 256 rows (BM is " +
               std::to_string(t.m) + ")");
  if (!b_mn && t.n > 256)
    tile_error(
        "'tma' loads a column-major B as one (BN, BK) box, and a TMA box has at most 256 rows "
        "(BN is " +
        std::to_string(t.n) + ")");
  // Both operands panels of BK rows: at most 256 (a box) and a multiple of 8
  // (1024-byte panels, the swizzle's period).
  if (bk_free && (t.k % 8 != 0 || t.k > 256))
    tile_error(
        "'tma' loads a column-major A and a row-major B as column panels of BK rows: BK "
        "must be a multiple of 8 (1024-byte panels) and at most 256, a box's row limit" +
        bk_is);
}

void Analyzer::tensor_core_rules() {
  if (!mma_dir_) return;
  const std::string& api = mma_dir_->keyword;
  // (Every tensor-core path reads A and B and writes C in either layout.)
  for (const char* k : {"transpose A", "transpose B"})
    if (const Directive* d = given(k)) {
      auto& e = error(d->span, "'" + std::string(k) + "' does not apply with '" + api +
                                   "': the tensor-core copies move 16-byte chunks of rows "
                                   "with cp.async, which cannot transpose an operand");
      e.notes.push_back({mma_dir_->span, "'" + api + "' given here"});
    }
  // WMMA loads need 32-byte aligned pointers; a column-major A's 8-row
  // fragments of 8x32x16 start every 16 bytes along its shared rows of m.
  if (api == "wmma" && s_.a_col && s_.mma && s_.mma->m == 8)
    if (const Directive* d = given("layout A")) {
      auto& e =
          error(d->span, "'layout A col' with 'wmma " + std::string(to_string(s_.mma->type)) +
                             " 8x32x16' is not supported: the stage of a column-major A is k rows "
                             "of m, where its 8-row fragments start every 16 bytes, and WMMA loads "
                             "need 32-byte aligned pointers (use 16x16x16)");
      e.notes.push_back({mma_dir_->span, "'wmma' given here"});
    }
  if (api == "wmma")
    if (const Directive* d = given("swizzle smem")) {
      auto& e = error(d->span,
                      "'swizzle smem' and 'wmma' exclude each other: WMMA loads fragments from "
                      "a plain strided shared layout (use 'pad' against bank conflicts, or "
                      "'mma', which reads a swizzled layout with ldmatrix)");
      e.notes.push_back({mma_dir_->span, "'wmma' given here"});
    }
  // Padded rows stay whole 16-byte chunks (cp.async destinations, ldmatrix
  // rows, WMMA strides).
  const int elem = size_of(s_.dtype);
  if (api == "wgmma")
    for (const char* k : {"pad A", "pad B"})
      if (const Directive* d = given(k)) {
        auto& e = error(d->span, "'" + std::string(k) +
                                     "' does not apply with 'wgmma': its operands stay in the "
                                     "128-byte swizzle TMA writes, which has no padding");
        e.notes.push_back({mma_dir_->span, "'wgmma' given here"});
      }
  for (Operand op : {Operand::A, Operand::B}) {
    const char* k = op == Operand::A ? "pad A" : "pad B";
    const int pad = op == Operand::A ? s_.pad_a : s_.pad_b;
    const Directive* d = given(k);
    if (!d || !values_ok_ || (pad * elem) % 16 == 0) continue;
    std::ostringstream m;
    m << k << " " << pad << " of " << to_string(s_.dtype) << " is " << pad * elem
      << " bytes; with '" << api << "' each padded shared row must stay 16-byte aligned, so pad x "
      << elem << " bytes must be a multiple of 16 (pad " << (op == Operand::A ? "A " : "B ")
      << 16 / elem << ", " << 32 / elem << ", ...)";
    auto& e = error(d->args[1].span, m.str());
    e.notes.push_back({mma_dir_->span, "'" + api + "' given here"});
    note(e, dtype_note(), "dtype set here");
  }
}

bool Analyzer::tensor_core_tiles(const BlockTile& t) {
  if (!s_.warp || !given("warp") || !values_ok_ok_for_type()) return false;
  const WarpTile& w = *s_.warp;
  const MmaSpec& m = *s_.mma;
  if (m.api == MmaApi::wgmma) return true;  // wgmma_tiles
  std::string wt = dims_text({w.m, w.n}), bt = dims_text({t.m, t.n});
  std::string inst =
      mma_dir_->keyword + " " + to_string(m.type) + " " +
      (m.api == MmaApi::wmma ? dims_text({m.m, m.n, m.k}) : "m16n8k" + std::to_string(m.k));
  bool ok = divides(w.m, t.m, warp_arg_, "warp tile " + wt + " does not divide block tile " + bt,
                    tile_note(), "block tile set here") &&
            divides(w.n, t.n, warp_arg_, "warp tile " + wt + " does not divide block tile " + bt,
                    tile_note(), "block tile set here");
  ok = divides(m.m, w.m, warp_arg_,
               "warp tile " + wt + " is not a whole number of '" + inst + "' tiles (WM " +
                   std::to_string(w.m) + " % " + std::to_string(m.m) + " != 0)",
               s_.mma_at, "instruction chosen here") &&
       divides(m.n, w.n, warp_arg_,
               "warp tile " + wt + " is not a whole number of '" + inst + "' tiles (WN " +
                   std::to_string(w.n) + " % " + std::to_string(m.n) + " != 0)",
               s_.mma_at, "instruction chosen here") &&
       ok;
  ok = divides(m.k, t.k, tile_arg_,
               "tile BK " + std::to_string(t.k) + " is not a multiple of the k " +
                   std::to_string(m.k) + " of '" + inst + "'",
               s_.mma_at, "instruction chosen here") &&
       ok;
  return ok;
}

bool Analyzer::warpgroup_tile_divides(const BlockTile& t) {
  const WarpTile& w = *s_.warp;
  const std::string wt = dims_text({w.m, w.n}), bt = dims_text({t.m, t.n});
  return divides(w.m, t.m, warp_arg_, "warpgroup tile " + wt + " does not divide block tile " + bt,
                 tile_note(), "block tile set here") &&
         divides(w.n, t.n, warp_arg_, "warpgroup tile " + wt + " does not divide block tile " + bt,
                 tile_note(), "block tile set here");
}

bool Analyzer::wgmma_tiles(const BlockTile& t) {
  // tf32 with a row-major B computes C transposed (wgmma_tf32_tiles); with
  // B column-major its tiles follow f16's rules (compiler/wgmma_plan.h).
  const WgmmaForm form = wgmma_form(s_.mma->type, s_.a_col, s_.b_col);
  if (form.swapped) return wgmma_tf32_tiles(t);
  const WarpTile& w = *s_.warp;
  MmaSpec& m = *s_.mma;
  const std::string wt = dims_text({w.m, w.n});
  const int panel = 128 / size_of(s_.dtype);
  bool ok = warpgroup_tile_divides(t);
  ok = divides(64, w.m, warp_arg_,
               "warpgroup tile " + wt +
                   ": wgmma computes 64 rows per instruction, so WM must "
                   "be a multiple of 64 (WM is " +
                   std::to_string(w.m) + ")",
               s_.mma_at, "wgmma chosen here") &&
       ok;
  // A row-major B (n-major) is read in whole 128-byte column panels; a
  // column-major B (k-major) in 8-row groups, as A.
  if (form.b_mn_major)
    ok = divides(panel, w.n, warp_arg_,
                 "warpgroup tile " + wt + ": wgmma reads B in 128-byte column panels of " +
                     std::to_string(panel) + " " + to_string(s_.dtype) +
                     ", so WN must be a multiple of " + std::to_string(panel) + " (WN is " +
                     std::to_string(w.n) + ")",
                 s_.mma_at, "wgmma chosen here") &&
         ok;
  if (!form.b_mn_major)
    ok = divides(8, w.n, warp_arg_,
                 "warpgroup tile " + wt +
                     ": wgmma's N is a multiple of 8, so WN must be a multiple of 8 (WN is " +
                     std::to_string(w.n) + ")",
                 s_.mma_at, "wgmma chosen here") &&
         ok;
  if (!ok) return false;
  if (m.n == 0) m.n = w.n <= 256 ? w.n : 256;  // the widest instruction that tiles WN
  if (!wgmma_n_valid(m.type, m.n)) {
    error(warp_arg_, "warpgroup tile " + wt + ": wgmma s8 has N 8, 16, 24 or a multiple of 16, " +
                         "so WN must be one of them or a multiple of 256 (WN is " +
                         std::to_string(w.n) + ")");
    return false;
  }
  std::string inst = "wgmma " + std::string(to_string(m.type)) + " m64n" + std::to_string(m.n) +
                     "k" + std::to_string(m.k);
  ok = divides(m.n, w.n, warp_arg_,
               "warpgroup tile " + wt + " is not a whole number of '" + inst + "' tiles (WN " +
                   std::to_string(w.n) + " % " + std::to_string(m.n) + " != 0)",
               s_.mma_at, "instruction chosen here") &&
       divides(m.k, t.k, tile_arg_,
               "tile BK " + std::to_string(t.k) + " is not a multiple of the k " +
                   std::to_string(m.k) + " of '" + inst + "'",
               s_.mma_at, "instruction chosen here");
  if (ok && m.type == MmaType::s8 && given("tma_store") && s_.c_col) {
    auto& e = error(given("tma_store")->keyword_span,
                    "'tma_store' with 'wgmma s8' and 'layout C col' is not implemented yet: the "
                    "s8 epilogue stages its int32 C row-major, a few panels at a time");
    e.notes.push_back({s_.mma_at.span, "'wgmma s8' given here"});
    return false;
  }
  if (ok && m.type == MmaType::tf32 && given("tma_store")) {
    auto& e = error(given("tma_store")->keyword_span,
                    "'tma_store' with 'wgmma tf32' is not implemented yet: the epilogue stages C "
                    "with 16-bit stmatrix stores; the tf32 kernel stores its f32 accumulators "
                    "straight to C");
    e.notes.push_back({s_.mma_at.span, "'wgmma tf32' given here"});
    return false;
  }
  if (ok && form.b_mn_major && m.n % panel != 0) {
    // The descriptor of an n-major B addresses whole 128-byte panels.
    error(s_.mma_at.span, "'" + inst +
                              "' reads B in 128-byte column panels: N must be a "
                              "multiple of " +
                              std::to_string(panel) + " for " + to_string(s_.dtype));
    return false;
  }
  return ok;
}

// tf32 reads both shared operands k-major, and B (row-major, n contiguous) is
// not: the kernel computes C^T = B^T A^T, B^T from registers (any layout),
// A as wgmma's k-major B. The instruction's 64 rows run along C's N, its N
// along C's M: the warpgroup tile WMxWN is WN/64 instructions by WM/N.
bool Analyzer::wgmma_tf32_tiles(const BlockTile& t) {
  const WarpTile& w = *s_.warp;
  MmaSpec& m = *s_.mma;
  const std::string wt = dims_text({w.m, w.n});
  bool ok = warpgroup_tile_divides(t);
  ok = divides(64, w.n, warp_arg_,
               "warpgroup tile " + wt +
                   ": wgmma tf32 computes C transposed, 64 columns of C per instruction, so WN "
                   "must be a multiple of 64 (WN is " +
                   std::to_string(w.n) + ")",
               s_.mma_at, "wgmma chosen here") &&
       ok;
  ok = divides(8, w.m, warp_arg_,
               "warpgroup tile " + wt +
                   ": wgmma tf32 runs its N along C's rows in steps of 8, so WM must be a "
                   "multiple of 8 (WM is " +
                   std::to_string(w.m) + ")",
               s_.mma_at, "wgmma chosen here") &&
       ok;
  if (!ok) return false;
  if (m.n == 0) m.n = w.m <= 256 ? w.m : 256;
  std::string inst = "wgmma tf32 m64n" + std::to_string(m.n) + "k8";
  ok = divides(m.n, w.m, warp_arg_,
               "warpgroup tile " + wt + " is not a whole number of '" + inst +
                   "' tiles: its N runs along C's rows (WM " + std::to_string(w.m) + " % " +
                   std::to_string(m.n) + " != 0)",
               s_.mma_at, "instruction chosen here") &&
       ok;
  if (ok && given("tma_store")) {
    auto& e = error(given("tma_store")->keyword_span,
                    "'tma_store' with 'wgmma tf32' is not implemented yet: the tf32 kernel "
                    "computes C transposed and stores its f32 accumulators straight to C");
    e.notes.push_back({s_.mma_at.span, "'wgmma tf32' given here"});
    return false;
  }
  return ok;
}

bool Analyzer::pingpong_tile_rule(const BlockTile& t) {
  const WarpTile& w = *s_.warp;
  if (!s_.pingpong || (w.m == t.m && w.n == t.n)) return true;
  auto& e = error(warp_arg_,
                  "'warp_specialize pingpong' gives each consumer warpgroup whole "
                  "block tiles: the warpgroup tile must be the block tile " +
                      dims_text({t.m, t.n}) + " (it is " + dims_text({w.m, w.n}) + ")");
  note(e, tile_note(), "block tile set here");
  return false;
}

void Analyzer::wgmma_registers_rule() {
  const WarpTile& w = *s_.warp;
  const int64_t threads = threads_per_block(s_);
  if (threads <= 0) return;
  const int64_t acc = int64_t(w.m) * w.n / 128;
  // tf32: B^T fragments of two k-steps, 4 registers per 64 columns each.
  // tf32: B^T's (row-major B) or A's (A and B column-major) fragments of two
  // k-steps, 4 registers per 64 rows of that operand each.
  const WgmmaForm form = wgmma_form(s_.mma->type, s_.a_col, s_.b_col);
  const int64_t frag = form.swapped ? 8 * (w.n / 64) : form.a_in_registers ? 8 * (w.m / 64) : 0;
  const int blocks = s_.warp_specialize ? s_.blocks_per_sm : 1;
  int64_t cap = target_.registers_per_thread(int(threads) * blocks);
  // conv: the producer keeps more registers (its rows' window origins), the
  // consumers share what is left (compiler/lower_wgmma.cpp).
  if (s_.conv && s_.warp_specialize && s_.tile) {
    const int64_t consumers = (threads - 128) / 128;
    const int64_t left = target_.register_pool(int(threads), blocks) -
                         128 * wgmma_conv_producer_regs(s_.tile->m, s_.tile->k * size_of(s_.dtype));
    if (consumers > 0) cap = std::min<int64_t>(cap, left / (128 * consumers) / 8 * 8);
  }
  if (acc + frag + 26 <= cap) return;
  auto& e = error(
      warp_arg_,
      "warpgroup tile " + dims_text({w.m, w.n}) + " gives each consumer thread " +
          std::to_string(acc) + " accumulator registers (+ " +
          (frag ? std::to_string(frag) + " for tf32 fragments and " : "") +
          "about 26 for addresses), but a block of " + std::to_string(threads) + " threads gets " +
          std::to_string(cap) + " registers per thread" +
          (blocks > 1 ? " with " + std::to_string(blocks) + " blocks an SM" : std::string()) +
          "; use fewer or smaller warpgroup tiles" + (blocks > 1 ? " or fewer blocks_per_sm" : ""));
  note(e, s_.blocks_per_sm_at, "blocks_per_sm set here");
}

}  // namespace schedc::compiler::analysis
