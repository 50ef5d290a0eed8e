#pragma once
// The tuning database (docs/tuning.md): an SQLite file of measured
// candidates, keyed by device, driver, dtype, layout and shape, that
// `schedc tune` writes, `schedc tune --show/--csv/--plot` reads and
// `schedc run --tuned` asks for the best known schedule of a shape.
//
// One row per (key, schedule): measuring the same schedule again replaces
// its row. GEMMs and convolutions share the table; a convolution's key
// names it (Key::conv). Several processes may write the same file at once (WAL journal,
// a busy timeout), and one database merges into another (`--merge`), so
// runs on several hosts can be pooled.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedc::tune {

// What a result is measured for: a GEMM of M x N x K, or a convolution
// (`conv` its runtime::conv_string, M x N x K its implicit GEMM's).
struct Key {
  std::string device;          // "NVIDIA H100 80GB HBM3"
  std::string driver;          // "13.0" (cudaDriverGetVersion)
  std::string dtype;           // "f32" | "f16" | "bf16" | "s8"
  std::string layout = "NNN";  // A's, B's, C's: N row-major, T column-major
  int64_t m = 0, n = 0, k = 0;
  // "" for a GEMM; "8x7x7x512 filter 512x3x3 stride 1 pad 1 NHWC" for a convolution.
  std::string conv;

  bool operator==(const Key&) const = default;
};

enum class Status { ok, wrong, failed };
const char* to_string(Status s);
std::optional<Status> status_from(const std::string& s);

struct Result {
  Key key;
  std::string schedule;  // the candidate's full text: runnable as a .sched file
  std::string space;     // the space file it came from ("" if none)
  std::string choices;   // its choice in each set ("{256}, {128}, …")
  Status status = Status::failed;
  std::string detail;    // why it is wrong or failed ("" when ok)
  int model_rank = 0;    // 1 = the static model's best
  double median_ms = 0;  // schedc's kernel (0 unless ok)
  double cublas_ms = 0;  // cuBLAS in the same run (a convolution's: its GEMM alone, A given)
  // A convolution's explicit im2col + cuBLAS pipeline in the same run (0 for a GEMM).
  double pipeline_ms = 0;
  double tflops = 0;    // TFLOP/s, or TOPS for s8
  std::string host;     // where it was measured
  std::string created;  // UTC, ISO 8601; set by record() when empty

  double percent_of_cublas() const { return median_ms > 0 ? 100.0 * cublas_ms / median_ms : 0; }
  // How many times the explicit pipeline's time the kernel takes less (0: none).
  double x_of_pipeline() const { return median_ms > 0 ? pipeline_ms / median_ms : 0; }
};

// Which rows list() returns: empty strings and zero sizes match anything.
struct Filter {
  std::string device, dtype, layout;
  int64_t m = 0, n = 0, k = 0;
  std::string conv;
};

class Database {
 public:
  // Opens (creating it and its schema if needed) the database at `path`. A
  // file of schema 1 (before convolutions had keys) is upgraded in place to
  // schema 2: its rows keep their values, each a GEMM's (conv ""). Throws
  // std::runtime_error naming the file and SQLite's words, or saying that a
  // newer schedc wrote it.
  explicit Database(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::string& path() const { return path_; }

  // Inserts `r`, replacing the row of the same key and schedule.
  void record(const Result& r);
  // The fastest correct result for exactly `key`, if any.
  std::optional<Result> best(const Key& key) const;
  // Rows matching `f`, grouped by key and fastest first within a key.
  std::vector<Result> list(const Filter& f = {}) const;
  // Copies every row of the database at `other` into this one (a row of the
  // same key and schedule is replaced when the other's is newer). Returns
  // the rows copied.
  int64_t merge(const std::string& other);

 private:
  std::string path_;
  struct Handle;
  std::unique_ptr<Handle> db_;
};

// $SCHEDC_TUNE_DB, else tune.sqlite in the kernel cache's folder
// (runtime/kernel_cache.h); "" when neither can be found.
std::string default_database_path();

// A schedule's text in the database's form: comment-only and blank lines
// dropped, each line's trailing spaces removed, so that the same candidate
// from two spaces is one row.
std::string normalized_schedule(const std::string& text);

}  // namespace schedc::tune
