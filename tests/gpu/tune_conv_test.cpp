// schedc tune on spaces of convolution modules (tune/, docs/tuning.md,
// "Convolution spaces"): a convolution's key in the database beside a GEMM
// of the same sizes, the upgrade of a schema-1 file and merges from one, a
// newer file refused; the candidates compiled for their own and for given
// convolutions (NVRTC, no GPU), the kinds of column refused, the views; and
// on a GPU (SKIPPED without one) a planted wrong candidate never chosen, the
// best keyed by its convolution.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <sstream>

#include "cli/tune_views.h"
#include "compiler/analyze.h"
#include "dsl/diagnostics.h"
#include "gpu_test_util.h"
#include "runtime/conv_report.h"
#include "runtime/conv_run.h"
#include "runtime/device.h"
#include "tune/database.h"
#include "tune/tuner.h"

namespace schedc {
namespace {

namespace fs = std::filesystem;
using tune::Database;
using tune::Key;
using tune::Result;
using tune::Status;

// res5's 3x3 layer at batch 8, as the database keys it (its implicit GEMM: 392x512x4608).
const char* kRes5b8 = "8x7x7x512 filter 512x3x3 stride 1 pad 1 NHWC";

std::string fresh_conv_db(const std::string& name) {
  return testing::fresh_database("tune_conv", name);
}

Result conv_result(const std::string& conv, const std::string& schedule, double ms,
                   double pipeline_ms) {
  Result r;
  r.key = Key{"NVIDIA H200", "13.0", "s8", "NTN", 392, 512, 4608, conv};
  r.schedule = schedule;
  r.space = "conv_space.sched";
  r.choices = "{64x64}";
  r.status = Status::ok;
  r.model_rank = 1;
  r.median_ms = ms;
  r.cublas_ms = 0.007;
  r.pipeline_ms = pipeline_ms;
  r.tflops = 2.0 * 392 * 512 * 4608 / (ms * 1e9);
  r.host = "test";
  return r;
}

// Runs SQL on the file at `path` directly (the old schema's tables).
void exec_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string why = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << why;
}

// A file as schedc wrote it before convolutions had keys (schema 1), with
// one GEMM row.
void write_schema1(const std::string& path, const std::string& schedule, const std::string& at) {
  exec_sql(path,
           "CREATE TABLE results (device TEXT NOT NULL, driver TEXT NOT NULL, dtype TEXT NOT "
           "NULL, layout TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT "
           "NULL, schedule_id TEXT NOT NULL, schedule TEXT NOT NULL, space TEXT NOT NULL, "
           "choices TEXT NOT NULL, status TEXT NOT NULL, detail TEXT NOT NULL, model_rank "
           "INTEGER NOT NULL, median_ms REAL NOT NULL, cublas_ms REAL NOT NULL, tflops REAL NOT "
           "NULL, host TEXT NOT NULL, created TEXT NOT NULL, PRIMARY KEY (device, driver, dtype, "
           "layout, m, n, k, schedule_id));"
           "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);"
           "INSERT INTO meta VALUES ('schema', '1');"
           "INSERT INTO results VALUES ('NVIDIA H100 80GB HBM3', '13.0', 'f32', 'NNN', 4096, "
           "4096, 4096, 'id-" +
               schedule + "', '" + schedule +
               "', 'old.sched', '{1}', 'ok', '', 1, 3.0, 2.9, 45.8, 'old-host', '" + at + "');");
}

TEST(TuneConvDatabase, AConvolutionsKeyIsItsOwnBesideAGemmOfTheSameSizes) {
  Database db(fresh_conv_db("keys"));
  Result gemm = conv_result("", "tile 64x64x128\n", 0.005, 0);
  Result conv =
      conv_result(kRes5b8, "conv 8x7x7x512 filter 512x3x3 pad 1\ntile 64x64x128\n", 0.006, 0.010);
  Result other = conv_result("8x7x7x512 filter 512x3x3 stride 1 pad 1 NCHW32",
                             "conv nchw32\ntile 64x64x128\n", 0.004, 0.010);
  for (const Result& r : {gemm, conv, other}) db.record(r);
  EXPECT_EQ(db.list().size(), 3u);

  const std::optional<Result> g = db.best(gemm.key);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->schedule, "tile 64x64x128\n");  // not the faster NCHW32 convolution's
  EXPECT_EQ(g->key.conv, "");
  const std::optional<Result> c = db.best(conv.key);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->key.conv, kRes5b8);
  EXPECT_DOUBLE_EQ(c->pipeline_ms, 0.010);
  EXPECT_DOUBLE_EQ(c->x_of_pipeline(), 0.010 / 0.006);

  tune::Filter f;
  f.conv = kRes5b8;
  ASSERT_EQ(db.list(f).size(), 1u);
  EXPECT_EQ(db.list(f)[0].schedule, conv.schedule);
  f = {};
  f.m = 392;  // the implicit GEMM's sizes match all three
  EXPECT_EQ(db.list(f).size(), 3u);
}

TEST(TuneConvDatabase, ASchemaOneFileIsUpgradedInPlaceAndMergesIntoANewOne) {
  const std::string old_path = fresh_conv_db("schema1");
  write_schema1(old_path, "tile 128x128x8", "2026-11-20T00:00:00Z");
  {
    Database db(old_path);  // upgraded
    std::vector<Result> rows = db.list();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].key.conv, "");
    EXPECT_EQ(rows[0].key.m, 4096);
    EXPECT_EQ(rows[0].host, "old-host");
    EXPECT_DOUBLE_EQ(rows[0].median_ms, 3.0);
    EXPECT_DOUBLE_EQ(rows[0].cublas_ms, 2.9);
    EXPECT_DOUBLE_EQ(rows[0].pipeline_ms, 0);
    db.record(conv_result(kRes5b8, "tile 64x64x128\n", 0.006, 0.010));
    EXPECT_EQ(db.list().size(), 2u);
  }
  EXPECT_EQ(Database(old_path).list().size(), 2u);  // opened again: nothing to upgrade

  // A schema-1 file merged into a new one, read as it is (not upgraded).
  const std::string other_old = fresh_conv_db("schema1_other");
  write_schema1(other_old, "tile 64x64x8", "2026-11-21T00:00:00Z");
  Database mine(fresh_conv_db("merge_into"));
  EXPECT_EQ(mine.merge(other_old), 1);
  ASSERT_EQ(mine.list().size(), 1u);
  EXPECT_EQ(mine.list()[0].key.conv, "");
  EXPECT_EQ(mine.list()[0].schedule, "tile 64x64x8");
  EXPECT_EQ(mine.merge(other_old), 0);  // nothing newer the second time
}

// A results table with no meta table at all is read as schema 1's too.
TEST(TuneConvDatabase, AResultsTableWithoutItsVersionIsUpgradedAsSchemaOne) {
  const std::string path = fresh_conv_db("no_meta");
  write_schema1(path, "tile 32x32x8", "2026-11-19T00:00:00Z");
  exec_sql(path, "DROP TABLE meta;");
  Database db(path);
  ASSERT_EQ(db.list().size(), 1u);
  EXPECT_EQ(db.list()[0].key.conv, "");
  db.record(conv_result(kRes5b8, "tile 64x64x128\n", 0.006, 0.010));
  EXPECT_EQ(db.list().size(), 2u);
}

TEST(TuneConvDatabase, AFileOfANewerSchemaIsRefusedNamingIt) {
  const std::string path = fresh_conv_db("newer");
  { Database create(path); }
  exec_sql(path, "UPDATE meta SET value = '3' WHERE name = 'schema';");
  try {
    Database db(path);
    FAIL() << "opened a schema-3 file";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("written by a newer schedc"), std::string::npos) << what;
  }
}

const char* kConvSpace =
    "conv 8x14x14x256 filter 256x3x3 stride 1 pad 1\ndtype s8\ntile 64x{64,128}x128\n"
    "warp 64x64\nwgmma s8\ntma\nstages 4\nswizzle smem\nwarp_specialize\n";

runtime::NamedConv named(const std::string& text) {
  const dsl::SourceFile source = compiler::conv_option_source(text);
  compiler::Target target;
  compiler::target_for_arch("sm_90", target);
  dsl::Diagnostics diags(&source);
  std::optional<compiler::Conv2d> conv = compiler::parse_conv_option(source, target, diags);
  EXPECT_TRUE(conv.has_value()) << text;
  return {"", conv.value_or(compiler::Conv2d{}), false};
}

// Without a GPU: a convolution space compiles for its own convolution, and
// for given ones (each a column, keyed by its text and implicit GEMM).
TEST(TuneConvCompile, CandidatesCompileForTheSpacesConvolutionAndForGivenOnes) {
  compiler::Target target;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", target));
  tune::TuneOptions o;
  o.space_path = "conv.sched";
  o.space_text = kConvSpace;
  o.top = 2;
  o.jobs = 2;
  o.jit.cache_dir = (fs::path(testing::test_cache_dir()) / "tune_conv_compile").string();
  std::ostringstream err;
  tune::TuneReport r = tune::tune(target, o, err);
  EXPECT_EQ(err.str(), "");
  ASSERT_EQ(r.selected, 2);
  ASSERT_EQ(r.convs.size(), 1u);
  ASSERT_EQ(r.shapes.size(), 1u);
  EXPECT_EQ(r.shapes[0].m, 8 * 14 * 14);
  EXPECT_EQ(r.shapes[0].n, 256);
  EXPECT_EQ(r.shapes[0].k, 256 * 9);
  EXPECT_EQ(r.column_name(0), "8x14x14x256 filter 256x3x3 stride 1 pad 1 NHWC");
  for (const tune::Measured& m : r.results) {
    EXPECT_EQ(m.status, Status::ok) << m.detail;
    EXPECT_EQ(m.conv, "8x14x14x256 filter 256x3x3 stride 1 pad 1 NHWC");
  }

  // Two given convolutions (one ragged, with a layer name): two columns.
  o.convs = {named("8x7x7x512 filter 512x3x3 pad 1"),
             named("3x9x7x64 filter 40x3x3 stride 2 pad 1")};
  o.convs[1].name = "ragged";
  std::ostringstream err2;
  r = tune::tune(target, o, err2);
  EXPECT_EQ(err2.str(), "");
  ASSERT_EQ(r.results.size(), 4u);  // 2 candidates x 2 convolutions
  EXPECT_EQ(r.column_name(0), kRes5b8);
  EXPECT_EQ(r.column_name(1), "ragged");
  EXPECT_EQ(r.results[0].conv, kRes5b8);
  EXPECT_EQ(r.results[0].shape.m, 392);
  EXPECT_EQ(r.results[0].shape.k, 4608);
  EXPECT_EQ(r.results[1].conv, "3x9x7x64 filter 40x3x3 stride 2 pad 1 NHWC");
  EXPECT_EQ(r.results[1].column, 1u);
  EXPECT_EQ(r.results[1].shape.m, 3 * 5 * 4);
  for (const tune::Measured& m : r.results) EXPECT_EQ(m.status, Status::ok) << m.detail;

  std::ostringstream table;
  cli::print_tune_report(table, r);
  EXPECT_NE(table.str().find("rank  " + std::string(kRes5b8) + "  ragged"), std::string::npos)
      << table.str();
  EXPECT_EQ(table.str().find("best at"), std::string::npos) << table.str();  // none measured
}

TEST(TuneConvCompile, ShapesForAConvolutionSpaceAndConvolutionsForAGemmSpaceAreRefused) {
  compiler::Target target;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", target));
  tune::TuneOptions o;
  o.space_path = "conv.sched";
  o.space_text = kConvSpace;
  o.shapes = {compiler::Problem{256, 256, 256}};
  std::ostringstream err;
  EXPECT_EQ(tune::tune(target, o, err).selected, 0);
  EXPECT_NE(err.str().find("conv.sched: error: this space's candidates are convolutions"),
            std::string::npos)
      << err.str();

  o.space_path = "gemm.sched";
  o.space_text = "tile {64,128}x64x8\nthread 4x4\n";
  o.shapes.clear();
  o.convs = {named("1x7x7x512 filter 512x3x3 pad 1")};
  std::ostringstream err2;
  EXPECT_EQ(tune::tune(target, o, err2).selected, 0);
  EXPECT_NE(err2.str().find("gemm.sched: error: --conv: this space's candidates compute GEMMs"),
            std::string::npos)
      << err2.str();
}

TEST(TuneConvViews, ShowPrintsAConvolutionsKeyAndItsRatioToTheExplicitPipeline) {
  Database db(fresh_conv_db("views"));
  db.record(conv_result(kRes5b8, "tile 64x64x128\n", 0.006, 0.0105));
  db.record(conv_result("", "tile 64x64x128\n", 0.005, 0));
  std::ostringstream os;
  cli::print_results(os, db.list());
  const std::string text = os.str();
  EXPECT_NE(text.find("# NVIDIA H200, driver 13.0, s8 conv " + std::string(kRes5b8) +
                      " (GEMM 392x512x4608)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# NVIDIA H200, driver 13.0, s8 NTN 392x512x4608\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("x im2col+cuBLAS"), std::string::npos) << text;
  EXPECT_NE(text.find("  1.75  "), std::string::npos) << text;  // 0.0105 / 0.006
  std::ostringstream csv;
  cli::print_results_csv(csv, db.list());
  EXPECT_NE(csv.str().find(",conv,pipeline_ms,x_of_pipeline\n"), std::string::npos) << csv.str();
  EXPECT_NE(csv.str().find("," + std::string(kRes5b8) + ",0.010500,1.750\n"), std::string::npos)
      << csv.str();
}

// On a GPU: the model's best candidate is made to return at once (wrong);
// tune records it as wrong and picks another, validated bit for bit against
// im2col + cuBLAS and timed beside that pipeline, keyed by its convolution.
TEST(TuneConvGpu, APlantedWrongCandidateIsNeverSelectedAndTheBestIsKeyedByItsConvolution) {
  SCHEDC_REQUIRE_GPU(s);
  const std::string db_path = fresh_conv_db("planted");
  tune::TuneOptions o;
  o.space_path = "planted_conv.sched";
  o.space_text = kConvSpace;
  o.convs = {named("2x9x7x64 filter 64x3x3 pad 1")};
  o.gpus = {s->device().ordinal};
  o.database = db_path;
  o.graph_runs = 5;
  o.jit.cache_dir = testing::test_cache_dir();
  o.edit_kernel = testing::first_candidate_returns_at_once;
  std::ostringstream err;
  tune::TuneReport r = tune::tune(runtime::target_for_device(s->device()), o, err);
  ASSERT_EQ(r.selected, 2) << err.str();
  ASSERT_EQ(r.results.size(), 2u);
  EXPECT_EQ(r.results[0].model_rank, 1);
  EXPECT_EQ(r.results[0].status, Status::wrong) << r.results[0].detail;
  EXPECT_EQ(r.results[0].median_ms, 0);
  const std::optional<tune::Measured> best = r.best(0);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->model_rank, 2);
  EXPECT_GT(best->pipeline_ms, 0);
  EXPECT_GT(best->cublas_ms, 0);
  EXPECT_GT(best->x_of_pipeline(), 0);
  const std::string conv = "2x9x7x64 filter 64x3x3 stride 1 pad 1 NHWC";
  EXPECT_EQ(best->conv, conv);
  const Key k{
      s->device().name, runtime::driver_version(), "s8", best->layout, 2 * 9 * 7, 64, 64 * 9, conv};
  const std::optional<Result> stored = Database(db_path).best(k);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->model_rank, 2);
  EXPECT_DOUBLE_EQ(stored->pipeline_ms, best->pipeline_ms);
  Key gemm = k;
  gemm.conv = "";
  EXPECT_FALSE(Database(db_path).best(gemm).has_value());  // not a GEMM's result
  EXPECT_EQ(Database(db_path).list().size(), 2u);
}

}  // namespace
}  // namespace schedc
