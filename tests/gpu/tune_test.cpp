// schedc tune (tune/, docs/tuning.md) on GEMM spaces (convolution spaces:
// tune_conv_test.cpp): the database round trip, its
// concurrent writers (processes) and merges, the rank correlation, the CSV
// view; the candidates of a small space compiled in parallel (NVRTC, no GPU);
// and on a GPU (SKIPPED without one) a planted wrong candidate, made the
// fastest by returning at once, recorded as wrong and never chosen.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/tune_views.h"
#include "gpu_test_util.h"
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

std::string fresh_db(const std::string& name) {
  return testing::fresh_database("tune", name);
}

Key key(int64_t m = 4096) {
  return Key{"NVIDIA H100 80GB HBM3", "13.0", "f32", "NNN", m, m, m, ""};
}

Result result(const std::string& schedule, Status status, double ms, int rank = 1) {
  Result r;
  r.key = key();
  r.schedule = schedule;
  r.space = "space.sched";
  r.choices = "{128}, {8x8}";
  r.status = status;
  r.detail = status == Status::ok ? "" : "1 element differs";
  r.model_rank = rank;
  r.median_ms = status == Status::ok ? ms : 0;
  r.cublas_ms = 2.0;
  r.tflops = status == Status::ok ? 2.0 * 4096.0 * 4096 * 4096 / (ms * 1e9) : 0;
  r.host = "test";
  return r;
}

TEST(TuneDatabase, RoundTripKeepsEveryFieldAndBestSkipsWrongResults) {
  Database db(fresh_db("round_trip"));
  db.record(result("tile 128x128x8\nthread 8x8\n", Status::ok, 3.0, 2));
  db.record(result("tile 64x64x8\nthread 4x4\n", Status::wrong, 0, 1));  // "faster": wrong
  db.record(result("tile 256x128x8\nthread 16x8\n", Status::ok, 2.5, 3));
  const std::vector<Result> rows = db.list();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].schedule, "tile 256x128x8\nthread 16x8\n");  // fastest correct first
  EXPECT_EQ(rows[0].status, Status::ok);
  EXPECT_EQ(rows[0].model_rank, 3);
  EXPECT_DOUBLE_EQ(rows[0].median_ms, 2.5);
  EXPECT_DOUBLE_EQ(rows[0].cublas_ms, 2.0);
  EXPECT_EQ(rows[0].choices, "{128}, {8x8}");
  EXPECT_EQ(rows[0].key.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(rows[0].key.m, 4096);
  EXPECT_FALSE(rows[0].created.empty());
  EXPECT_EQ(rows[2].status, Status::wrong);
  EXPECT_EQ(rows[2].detail, "1 element differs");

  std::optional<Result> best = db.best(key());
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->schedule, "tile 256x128x8\nthread 16x8\n");
  EXPECT_FALSE(db.best(key(1024)).has_value());
  Key other = key();
  other.driver = "12.8";
  EXPECT_FALSE(db.best(other).has_value());  // the key is exact
}

TEST(TuneDatabase, TheSameScheduleMeasuredAgainReplacesItsRow) {
  Database db(fresh_db("replace"));
  db.record(result("tile 128x128x8\nthread 8x8\n", Status::ok, 3.0));
  // The same schedule, written with a comment and trailing spaces: one row.
  db.record(result("# again\ntile 128x128x8   \n\nthread 8x8\n", Status::ok, 2.0));
  const std::vector<Result> rows = db.list();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].median_ms, 2.0);
  EXPECT_EQ(tune::normalized_schedule("# c\n  tile 1x1x1 \t\n\n"), "  tile 1x1x1\n");
}

TEST(TuneDatabase, ListFiltersByDtypeAndShape) {
  Database db(fresh_db("filter"));
  Result a = result("tile 128x128x8\n", Status::ok, 3.0);
  Result b = a;
  b.key.dtype = "f16";
  Result c = a;
  c.key = key(1024);
  for (const Result& r : {a, b, c}) db.record(r);
  tune::Filter f;
  f.dtype = "f16";
  EXPECT_EQ(db.list(f).size(), 1u);
  f = {};
  f.m = f.n = f.k = 1024;
  ASSERT_EQ(db.list(f).size(), 1u);
  EXPECT_EQ(db.list(f)[0].key.m, 1024);
  EXPECT_EQ(db.list().size(), 3u);
}

// Four processes write 40 rows each into one file at once: every row lands
// (SQLite's locking and the busy timeout; no "database is locked").
TEST(TuneDatabase, ConcurrentWritersFromSeveralProcessesAllLand) {
  const std::string path = fresh_db("concurrent");
  { Database create(path); }
  constexpr int kProcs = 4, kRows = 40;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      try {
        Database db(path);
        for (int i = 0; i < kRows; ++i)
          db.record(result("tile 128x128x8\n# " + std::to_string(p) + "\nthread " +
                               std::to_string(p) + "x" + std::to_string(i) + "\n",
                           Status::ok, 1.0 + i));
      } catch (...) {
        rc = 1;
      }
      _exit(rc);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed";
  }
  EXPECT_EQ(Database(path).list().size(), size_t(kProcs * kRows));
}

TEST(TuneDatabase, MergeCopiesNewRowsAndKeepsTheNewerOfTwo) {
  Database mine(fresh_db("merge_mine"));
  const std::string theirs_path = fresh_db("merge_theirs");
  Database theirs(theirs_path);
  Result shared = result("tile 128x128x8\n", Status::ok, 3.0);
  shared.created = "2026-11-01T00:00:00Z";
  mine.record(shared);
  Result newer = shared;
  newer.median_ms = 2.0;
  newer.created = "2026-11-02T00:00:00Z";
  newer.host = "other-host";
  theirs.record(newer);
  theirs.record(result("tile 64x64x8\n", Status::ok, 4.0));
  EXPECT_EQ(mine.merge(theirs_path), 2);
  const std::vector<Result> rows = mine.list();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].host, "other-host");
  EXPECT_DOUBLE_EQ(rows[0].median_ms, 2.0);
  EXPECT_EQ(mine.merge(theirs_path), 0);  // nothing newer the second time
  EXPECT_THROW(mine.merge("/nonexistent/dir/x.sqlite"), std::runtime_error);
  // A missing file in an existing folder: an error, and no file is created
  // at its path.
  const std::string missing = fresh_db("merge_missing");
  EXPECT_THROW(mine.merge(missing), std::runtime_error);
  EXPECT_FALSE(fs::exists(missing));
}

TEST(TuneDatabase, ANonDatabaseFileIsAnErrorNamingIt) {
  const std::string path = fresh_db("not_a_db");
  {
    std::ofstream out(path);
    out << "this is not SQLite, but long enough to look like a header of one.......\n";
  }
  try {
    Database db(path);
    FAIL() << "opened a text file as a database";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(TuneRank, SpearmanOfSameReversedAndShuffledOrders) {
  EXPECT_DOUBLE_EQ(tune::spearman({1, 2, 3, 4}, {1, 2, 3, 4}), 1.0);
  EXPECT_DOUBLE_EQ(tune::spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // d = (0, 1, -1, 0): rho = 1 - 6 * 2 / (4 * 15) = 0.8
  EXPECT_DOUBLE_EQ(tune::spearman({1, 2, 3, 4}, {1, 3, 2, 4}), 0.8);
}

TEST(TuneViews, CsvQuotesFieldsWithCommasQuotesAndNewlines) {
  Result r = result("tile 128x128x8\nthread 8x8\n", Status::wrong, 0);
  r.detail = "C[1][2] = \"nan\"";
  std::ostringstream os;
  cli::print_results_csv(os, {r});
  const std::string csv = os.str();
  EXPECT_NE(csv.find(",\"{128}, {8x8}\","), std::string::npos) << csv;
  EXPECT_NE(csv.find(",\"C[1][2] = \"\"nan\"\"\","), std::string::npos) << csv;
  EXPECT_NE(csv.find(",\"tile 128x128x8\nthread 8x8\n\","), std::string::npos) << csv;
}

TEST(TuneViews, ShowPrintsOneTablePerKeyFastestFirst) {
  Database db(fresh_db("show"));
  db.record(result("tile 128x128x8\n", Status::ok, 3.0, 2));
  db.record(result("tile 64x64x8\n", Status::wrong, 0, 1));
  Result other = result("tile 256x128x8\n", Status::ok, 1.0, 1);
  other.key.dtype = "f16";
  db.record(other);
  std::ostringstream os;
  cli::print_results(os, db.list());
  const std::string text = os.str();
  const size_t f16 = text.find("# NVIDIA H100 80GB HBM3, driver 13.0, f16 NNN 4096x4096x4096\n");
  const size_t f32 = text.find("# NVIDIA H100 80GB HBM3, driver 13.0, f32 NNN 4096x4096x4096\n");
  ASSERT_NE(f16, std::string::npos) << text;
  ASSERT_NE(f32, std::string::npos) << text;
  const size_t ok = text.find("  ok  ", f32), wrong = text.find("  wrong  ", f32);
  ASSERT_NE(ok, std::string::npos) << text;
  ASSERT_NE(wrong, std::string::npos) << text;
  EXPECT_LT(ok, wrong) << text;  // the correct result before the wrong one
  EXPECT_NE(text.find("1 element differs"), std::string::npos) << text;
}

const char* kSmallSpace =
    "tile {64,128}x64x8\n"
    "thread {4x4,8x8}\n"
    "vectorize 4\n";

// The first 3 of the model's 4 candidates compiled on 2 threads, nothing
// measured: each has its figures, in the model's order, and its entries land
// in the kernel cache (a later measurement finds them there).
TEST(TuneCompile, CandidatesCompileInParallelIntoTheCacheInModelOrder) {
  fs::path cache = fs::path(testing::test_cache_dir()) / "tune_compile";
  fs::remove_all(cache);
  compiler::Target target;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", target));
  tune::TuneOptions o;
  o.space_path = "small.sched";
  o.space_text = kSmallSpace;
  o.shapes = {compiler::Problem{256, 256, 256}, compiler::Problem{127, 129, 65}};
  o.top = 3;
  o.jobs = 2;
  o.jit.cache_dir = cache.string();
  int calls = 0;
  o.progress = [&](const tune::Progress& p) {
    ++calls;
    EXPECT_EQ(p.candidates, 3);
    EXPECT_EQ(p.measured, 0);
  };
  std::ostringstream err;
  tune::TuneReport r = tune::tune(target, o, err);
  EXPECT_EQ(err.str(), "");
  EXPECT_EQ(r.walk.candidates, 4);
  EXPECT_EQ(r.selected, 3);
  EXPECT_EQ(r.jobs, 2);
  EXPECT_EQ(calls, 3);
  ASSERT_EQ(r.results.size(), 6u);  // 3 candidates x 2 shapes
  for (size_t i = 0; i < r.results.size(); ++i) {
    const tune::Measured& m = r.results[i];
    EXPECT_EQ(m.model_rank, int(i / 2) + 1);
    EXPECT_EQ(m.status, Status::ok) << m.detail;
    EXPECT_FALSE(m.measured);
    EXPECT_GT(m.compile_ms, 0);
  }
  // 127x129x65 (lda 65) needs the fallback: main + fallback per candidate.
  size_t cubins = 0;
  for (const auto& e : fs::directory_iterator(cache)) cubins += e.path().extension() == ".cubin";
  EXPECT_EQ(cubins, 6u);
  EXPECT_FALSE(r.best(0).has_value());  // nothing measured, nothing chosen
}

TEST(TuneCompile, APlainScheduleOrAnEmptySpaceIsRefusedWithAReason) {
  compiler::Target target;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", target));
  tune::TuneOptions o;
  o.space_path = "plain.sched";
  o.space_text = "tile 64x64x8\nthread 4x4\n";
  o.shapes = {compiler::Problem{64, 64, 64}};
  std::ostringstream err;
  EXPECT_EQ(tune::tune(target, o, err).selected, 0);
  EXPECT_NE(err.str().find("holds no {a,b} set"), std::string::npos) << err.str();
  o.space_text = "tile 64x64x8\nthread {5x4,7x4}\n";  // analysis drops both
  err.str("");
  EXPECT_EQ(tune::tune(target, o, err).selected, 0);
  EXPECT_NE(err.str().find("drops every one of the 2 candidates"), std::string::npos) << err.str();
}

// On a GPU: the model's best candidate is made to return at once (the
// fastest kernel there is, and wrong); tune records it as wrong and picks
// another, in the report and in the database.
TEST(TuneGpu, APlantedWrongCandidateIsNeverSelected) {
  SCHEDC_REQUIRE_GPU(s);
  const std::string db_path = fresh_db("planted");
  tune::TuneOptions o;
  o.space_path = "planted.sched";
  o.space_text = kSmallSpace;
  o.shapes = {compiler::Problem{512, 512, 512}};
  o.gpus = {s->device().ordinal};
  o.database = db_path;
  o.jit.cache_dir = testing::test_cache_dir();
  o.edit_kernel = testing::first_candidate_returns_at_once;
  std::ostringstream err;
  tune::TuneReport r = tune::tune(runtime::target_for_device(s->device()), o, err);
  ASSERT_EQ(r.selected, 4) << err.str();
  ASSERT_EQ(r.results.size(), 4u);
  EXPECT_EQ(r.results[0].model_rank, 1);
  EXPECT_EQ(r.results[0].status, Status::wrong) << r.results[0].detail;
  const std::optional<tune::Measured> best = r.best(0);
  ASSERT_TRUE(best.has_value());
  EXPECT_NE(best->model_rank, 1);
  EXPECT_EQ(best->status, Status::ok);
  Key k{s->device().name, runtime::driver_version(), "f32", "NNN", 512, 512, 512, ""};
  std::optional<Result> stored = Database(db_path).best(k);
  ASSERT_TRUE(stored.has_value());
  EXPECT_NE(stored->model_rank, 1);
  EXPECT_EQ(Database(db_path).list().size(), 4u);
}

}  // namespace
}  // namespace schedc
