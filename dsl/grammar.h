#pragma once
// The .sched grammar (PEGTL 3.2). One named rule per line; every directive
// keyword is followed by `if_must`, so a malformed directive fails at its own
// place with a message from the table at the bottom, instead of backtracking
// into a vague error. The grammar checks only the form of a directive (which
// arguments, in which order); values are checked by compiler::analyze, which
// can name the valid choices and suggest a spelling.
//
// dsl::parse runs `line` on each line of the file (so one bad line does not
// hide the errors of the next ones); `file` is the same language as one rule,
// for grammar analysis and tests.

#include <tao/pegtl.hpp>

namespace schedc::dsl::grammar {

namespace p = tao::pegtl;

// One rule per line, however long: clang-format would wrap them.
// clang-format off

// ---- lexical --------------------------------------------------------------
struct ws : p::star<p::blank> {};   // spaces and tabs, maybe none
struct sep : p::plus<p::blank> {};  // at least one space or tab
struct comment : p::seq<p::one<'#'>, p::until<p::at<p::eolf>>> {};
struct word : p::identifier {};  // f32, A, smem, m16n8k16, …
struct sign : p::one<'+', '-'> {};
// Signed, so that `stages -1` reaches analyze and gets "must be ≥ 2".
struct integer : p::seq<p::opt<sign>, p::plus<p::digit>> {};
struct extents : p::list<integer, p::one<'x'>> {};  // 128x128x8
struct fraction : p::seq<p::one<'.'>, p::star<p::digit>> {};
struct exponent : p::seq<p::one<'e', 'E'>, p::opt<sign>, p::plus<p::digit>> {};
struct mantissa : p::sor<p::seq<p::plus<p::digit>, p::opt<fraction>>, p::seq<p::one<'.'>, p::plus<p::digit>>> {};
struct real : p::seq<p::opt<sign>, mantissa, p::opt<exponent>> {};  // 1, 0.5, -2e-1

// ---- directive keywords (a keyword is not followed by a letter, digit or _) --
struct kw_shape : TAO_PEGTL_KEYWORD("shape") {};
struct kw_dtype : TAO_PEGTL_KEYWORD("dtype") {};
struct kw_block : TAO_PEGTL_KEYWORD("block") {};
struct kw_tile : TAO_PEGTL_KEYWORD("tile") {};
struct kw_thread : TAO_PEGTL_KEYWORD("thread") {};
struct kw_warp : TAO_PEGTL_KEYWORD("warp") {};
struct kw_vectorize : TAO_PEGTL_KEYWORD("vectorize") {};
struct kw_transpose : TAO_PEGTL_KEYWORD("transpose") {};
struct kw_pad : TAO_PEGTL_KEYWORD("pad") {};
struct kw_layout : TAO_PEGTL_KEYWORD("layout") {};
struct kw_batch : TAO_PEGTL_KEYWORD("batch") {};
struct kw_swizzle : TAO_PEGTL_KEYWORD("swizzle") {};
struct kw_double_buffer : TAO_PEGTL_KEYWORD("double_buffer") {};
struct kw_stages : TAO_PEGTL_KEYWORD("stages") {};
struct kw_tma : TAO_PEGTL_KEYWORD("tma") {};
struct kw_stream_k : TAO_PEGTL_KEYWORD("stream_k") {};
struct kw_split_k : TAO_PEGTL_KEYWORD("split_k") {};
struct kw_wmma : TAO_PEGTL_KEYWORD("wmma") {};
struct kw_mma : TAO_PEGTL_KEYWORD("mma") {};
struct kw_wgmma : TAO_PEGTL_KEYWORD("wgmma") {};
struct kw_warp_specialize : TAO_PEGTL_KEYWORD("warp_specialize") {};
struct kw_persistent : TAO_PEGTL_KEYWORD("persistent") {};
struct kw_halo : TAO_PEGTL_KEYWORD("halo") {};
struct kw_blocks_per_sm : TAO_PEGTL_KEYWORD("blocks_per_sm") {};
struct kw_tma_store : TAO_PEGTL_KEYWORD("tma_store") {};
struct kw_cluster : TAO_PEGTL_KEYWORD("cluster") {};
struct kw_epilogue : TAO_PEGTL_KEYWORD("epilogue") {};
struct kw_conv : TAO_PEGTL_KEYWORD("conv") {};

// ---- words inside directives ------------------------------------------------
struct kw_split : TAO_PEGTL_KEYWORD("split") {};
struct kw_swizzle_block : TAO_PEGTL_KEYWORD("block") {};
struct kw_alpha : TAO_PEGTL_KEYWORD("alpha") {};
struct kw_beta : TAO_PEGTL_KEYWORD("beta") {};
struct kw_filter : TAO_PEGTL_KEYWORD("filter") {};
struct kw_stride : TAO_PEGTL_KEYWORD("stride") {};
struct kw_dilation : TAO_PEGTL_KEYWORD("dilation") {};
struct kw_conv_pad : TAO_PEGTL_KEYWORD("pad") {};  // inside `conv` (not the `pad` directive)

// ---- arguments (each its own rule, so each has its own error message) -------
struct shape_extents : extents {};
struct dtype_name : word {};
struct block_extents : extents {};
struct tile_extents : extents {};
struct thread_extents : extents {};
struct split_extents : extents {};
struct warp_extents : extents {};
struct vector_width : integer {};
struct transpose_operand : word {};
struct pad_operand : word {};
struct pad_amount : integer {};
struct layout_operand : word {};
struct layout_order : word {};  // row, col
struct batch_count : integer {};
struct swizzle_group : integer {};
struct swizzle_kind : word {};
struct stage_count : integer {};
struct blocks_per_sm_count : integer {};
struct split_k_count : integer {};
struct wmma_type : word {};
struct wmma_extents : extents {};
struct mma_type : word {};
struct mma_shape : p::sor<word, extents> {};  // m16n8k16 (extents only to say how to write it)
struct mma_rounding : word {};
struct wgmma_type : word {};
struct wgmma_shape : p::sor<word, extents> {};  // m64n256k16 (extents only to say how to write it)  // truncate (tf32 only); `mma tf32 truncate` reads it as the shape
struct consumer_order : word {};  // cooperative, pingpong
struct halo_form : word {};       // only
struct cluster_extents : extents {};
struct alpha_value : real {};
struct beta_value : real {};
struct epilogue_word : word {};  // bias, relu
struct conv_input : extents {};     // NxHxWxC
struct conv_filter : extents {};    // KxRxS
struct conv_stride : extents {};    // S or SHxSW
struct conv_pad : extents {};       // P or PHxPW
struct conv_dilation : extents {};  // D or DHxDW
struct conv_layout : word {};       // nhwc

// ---- directives -------------------------------------------------------------
struct thread_split : p::seq<sep, p::if_must<kw_split, ws, split_extents>> {};
struct swizzle_args : p::sor<p::if_must<kw_swizzle_block, ws, swizzle_group>, swizzle_kind> {};
struct epilogue_item : p::sor<p::if_must<kw_alpha, ws, alpha_value>, p::if_must<kw_beta, ws, beta_value>, epilogue_word> {};
struct epilogue_items : p::list<epilogue_item, sep> {};

struct shape_directive : p::if_must<kw_shape, ws, shape_extents> {};
struct dtype_directive : p::if_must<kw_dtype, ws, dtype_name> {};
struct block_directive : p::if_must<kw_block, ws, block_extents> {};
struct tile_directive : p::if_must<kw_tile, ws, tile_extents> {};
struct thread_directive : p::if_must<kw_thread, ws, thread_extents, p::opt<thread_split>> {};
struct warp_directive : p::if_must<kw_warp, ws, warp_extents> {};
struct vectorize_directive : p::if_must<kw_vectorize, ws, vector_width> {};
struct transpose_directive : p::if_must<kw_transpose, ws, transpose_operand> {};
struct pad_directive : p::if_must<kw_pad, ws, pad_operand, ws, pad_amount> {};
struct layout_directive : p::if_must<kw_layout, ws, layout_operand, ws, layout_order> {};
struct batch_directive : p::if_must<kw_batch, ws, batch_count> {};
struct swizzle_directive : p::if_must<kw_swizzle, ws, swizzle_args> {};
struct double_buffer_directive : p::seq<kw_double_buffer> {};
struct stages_directive : p::if_must<kw_stages, ws, stage_count> {};
struct tma_directive : p::seq<kw_tma> {};
struct stream_k_directive : p::seq<kw_stream_k> {};
struct split_k_directive : p::if_must<kw_split_k, ws, split_k_count> {};
struct wmma_directive : p::if_must<kw_wmma, ws, wmma_type, p::opt<sep, wmma_extents>> {};
struct mma_directive : p::if_must<kw_mma, ws, mma_type, p::opt<sep, mma_shape>, p::opt<sep, mma_rounding>> {};
struct wgmma_directive : p::if_must<kw_wgmma, ws, wgmma_type, p::opt<sep, wgmma_shape>> {};
struct warp_specialize_directive : p::seq<kw_warp_specialize, p::opt<sep, consumer_order>> {};
struct persistent_directive : p::seq<kw_persistent> {};
struct halo_directive : p::seq<kw_halo, p::opt<sep, halo_form>> {};
struct blocks_per_sm_directive : p::if_must<kw_blocks_per_sm, ws, blocks_per_sm_count> {};
struct tma_store_directive : p::seq<kw_tma_store> {};
struct cluster_directive : p::if_must<kw_cluster, ws, cluster_extents> {};
struct epilogue_directive : p::if_must<kw_epilogue, ws, epilogue_items> {};
struct conv_item : p::sor<p::if_must<kw_stride, ws, conv_stride>, p::if_must<kw_conv_pad, ws, conv_pad>, p::if_must<kw_dilation, ws, conv_dilation>, conv_layout> {};
struct conv_directive : p::if_must<kw_conv, ws, conv_input, sep, p::must<kw_filter>, ws, conv_filter, p::star<sep, conv_item>> {};
// Any other word: the action reports it with a "did you mean".
struct unknown_directive : word {};

struct directive
    : p::sor<shape_directive, dtype_directive, block_directive, tile_directive, thread_directive,
             warp_directive, vectorize_directive, layout_directive, batch_directive, transpose_directive, pad_directive,
             swizzle_directive, double_buffer_directive, stages_directive, tma_store_directive, tma_directive, stream_k_directive, split_k_directive, wmma_directive,
             mma_directive, wgmma_directive, warp_specialize_directive, persistent_directive, blocks_per_sm_directive, cluster_directive, epilogue_directive, conv_directive, halo_directive, unknown_directive> {};

// ---- statements and lines ---------------------------------------------------
// A statement ends at ';', a comment or the end of the line.
struct statement_end : p::sor<p::one<';'>, p::at<p::one<'#'>>, p::at<p::eolf>> {};
struct directive_statement : p::seq<directive, ws, p::must<statement_end>> {};
struct empty_statement : p::one<';'> {};
struct statement : p::seq<ws, p::sor<directive_statement, empty_statement>> {};
struct line_content : p::seq<p::star<statement>, ws, p::opt<comment>> {};
// Reached only where no statement could start: a digit or a stray symbol.
struct end_of_line : p::eolf {};
struct line : p::seq<line_content, p::must<end_of_line>> {};
struct file : p::seq<line_content, p::star<p::eol, line_content>, p::must<end_of_line>> {};

// ---- error messages: one table ----------------------------------------------
template <typename Rule>
inline constexpr const char* error_message = nullptr;

template <> inline constexpr const char* error_message<shape_extents> = "expected the problem shape MxNxK after 'shape', e.g. 'shape 4096x4096x4096'";
template <> inline constexpr const char* error_message<dtype_name> = "expected an element type after 'dtype': f32, f16, bf16 or s8";
template <> inline constexpr const char* error_message<block_extents> = "expected the thread-block shape XxY after 'block', e.g. 'block 16x16'";
template <> inline constexpr const char* error_message<tile_extents> = "expected the block tile BMxBNxBK after 'tile', e.g. 'tile 128x128x8'";
template <> inline constexpr const char* error_message<thread_extents> = "expected the thread tile TMxTN after 'thread', e.g. 'thread 8x8'";
template <> inline constexpr const char* error_message<split_extents> = "expected the pieces PMxPN after 'split', e.g. 'split 2x2'";
template <> inline constexpr const char* error_message<warp_extents> = "expected the warp tile WMxWN after 'warp', e.g. 'warp 32x64'";
template <> inline constexpr const char* error_message<vector_width> = "expected the vector width after 'vectorize': 1, 2, 4 or 8";
template <> inline constexpr const char* error_message<transpose_operand> = "expected the operand after 'transpose': A or B";
template <> inline constexpr const char* error_message<pad_operand> = "expected the operand after 'pad': A or B, e.g. 'pad A 4'";
template <> inline constexpr const char* error_message<layout_operand> = "expected the matrix after 'layout': A, B or C, e.g. 'layout B col'";
template <> inline constexpr const char* error_message<layout_order> = "expected how the operand lies in memory after it: row (row-major) or col (column-major)";
template <> inline constexpr const char* error_message<batch_count> = "expected the number of GEMMs after 'batch', e.g. 'batch 64'";
template <> inline constexpr const char* error_message<pad_amount> = "expected the padding in elements after the operand, e.g. 'pad A 4'";
template <> inline constexpr const char* error_message<swizzle_args> = "expected 'smem' or 'block N' after 'swizzle'";
template <> inline constexpr const char* error_message<swizzle_group> = "expected the group size in tiles after 'swizzle block', e.g. 'swizzle block 8'";
template <> inline constexpr const char* error_message<cluster_extents> = "expected the cluster shape CMxCN after 'cluster', e.g. 'cluster 2x1'";
template <> inline constexpr const char* error_message<blocks_per_sm_count> = "expected how many blocks share an SM after 'blocks_per_sm', e.g. 'blocks_per_sm 2'";
template <> inline constexpr const char* error_message<split_k_count> = "expected the most slices a tile's k loop is cut into after 'split_k', e.g. 'split_k 4'";
template <> inline constexpr const char* error_message<stage_count> = "expected the number of pipeline stages after 'stages': 2 to 16";
template <> inline constexpr const char* error_message<wmma_type> = "expected the tensor-core type after 'wmma': tf32, f16 or bf16";
template <> inline constexpr const char* error_message<mma_type> = "expected the tensor-core type after 'mma': tf32, f16, bf16 or s8";
template <> inline constexpr const char* error_message<wgmma_type> = "expected the tensor-core type after 'wgmma': f16, bf16, tf32 or s8";
template <> inline constexpr const char* error_message<alpha_value> = "expected a number after 'alpha', e.g. 'alpha 0.5'";
template <> inline constexpr const char* error_message<beta_value> = "expected a number after 'beta', e.g. 'beta 1'";
template <> inline constexpr const char* error_message<conv_input> = "expected the input NxHxWxC after 'conv', e.g. 'conv 8x56x56x64 filter 64x3x3'";
template <> inline constexpr const char* error_message<kw_filter> = "expected 'filter KxRxS' after the input, e.g. 'conv 8x56x56x64 filter 64x3x3'";
template <> inline constexpr const char* error_message<conv_filter> = "expected the filters KxRxS after 'filter', e.g. 'filter 64x3x3'";
template <> inline constexpr const char* error_message<conv_stride> = "expected the stride S or SHxSW after 'stride', e.g. 'stride 2'";
template <> inline constexpr const char* error_message<conv_pad> = "expected the padding P or PHxPW after 'pad', e.g. 'pad 1'";
template <> inline constexpr const char* error_message<conv_dilation> = "expected the dilation D or DHxDW after 'dilation', e.g. 'dilation 2'";
template <> inline constexpr const char* error_message<epilogue_items> = "expected what the epilogue does after 'epilogue': alpha X, beta Y, bias, scale, relu, requantize";
template <> inline constexpr const char* error_message<statement_end> = "expected ';' or the end of the line after the directive";
template <> inline constexpr const char* error_message<end_of_line> = "expected a directive, e.g. 'tile 128x128x8'";
// clang-format on

// Only rules inside must<> raise; everywhere else a failure backtracks.
struct errors {
  template <typename Rule>
  static constexpr bool raise_on_failure = false;
  template <typename Rule>
  static constexpr const char* message = error_message<Rule>;
};
template <typename Rule>
using control = p::must_if<errors, p::normal, false>::control<Rule>;

}  // namespace schedc::dsl::grammar
