#include "tune/database.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <stdexcept>

#include "runtime/kernel_cache.h"

namespace schedc::tune {

namespace {

// The one table. A row is a (key, schedule) pair; `schedule_id` is the
// normalized text's 128-bit hash (runtime's cache key function), so the
// unique index stays small. Schema 2 added `conv` (to the key) and
// `pipeline_ms`; Database's constructor upgrades a schema-1 file.
constexpr int kSchemaVersion = 2;
constexpr const char* kCreateResults = R"sql(
CREATE TABLE results (
  device TEXT NOT NULL, driver TEXT NOT NULL, dtype TEXT NOT NULL, layout TEXT NOT NULL,
  conv TEXT NOT NULL DEFAULT '',
  m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,
  schedule_id TEXT NOT NULL, schedule TEXT NOT NULL,
  space TEXT NOT NULL, choices TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'wrong', 'failed')),
  detail TEXT NOT NULL, model_rank INTEGER NOT NULL,
  median_ms REAL NOT NULL, cublas_ms REAL NOT NULL, pipeline_ms REAL NOT NULL DEFAULT 0,
  tflops REAL NOT NULL, host TEXT NOT NULL, created TEXT NOT NULL,
  PRIMARY KEY (device, driver, dtype, layout, conv, m, n, k, schedule_id)
);
)sql";

constexpr const char* kColumns =
    "device, driver, dtype, layout, conv, m, n, k, schedule_id, schedule, space, choices, "
    "status, detail, model_rank, median_ms, cublas_ms, pipeline_ms, tflops, host, created";
// The same values read from a schema-1 table (no conv, no pipeline_ms).
constexpr const char* kSchema1Columns =
    "device, driver, dtype, layout, '', m, n, k, schedule_id, schedule, space, choices, "
    "status, detail, model_rank, median_ms, cublas_ms, 0, tflops, host, created";

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string schedule_id(const std::string& normalized) {
  return runtime::cache_key(normalized, {}, "", "");
}

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Statement() { sqlite3_finalize(st_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& v) {
    sqlite3_bind_text(st_, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, int64_t v) {
    sqlite3_bind_int64(st_, i, v);
    return *this;
  }
  Statement& bind(int i, double v) {
    sqlite3_bind_double(st_, i, v);
    return *this;
  }
  // True while there is a row; throws on an error.
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("step");
    return false;
  }
  std::string text(int i) const {
    const unsigned char* p = sqlite3_column_text(st_, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  int64_t integer(int i) const { return sqlite3_column_int64(st_, i); }
  double real(int i) const { return sqlite3_column_double(st_, i); }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::runtime_error("tuning database " + path_ + ": " + what + ": " + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* st_ = nullptr;
};

Result row_of(const Statement& s) {
  Result r;
  r.key = Key{s.text(0),    s.text(1),    s.text(2),    s.text(3),
              s.integer(5), s.integer(6), s.integer(7), s.text(4)};
  r.schedule = s.text(9);
  r.space = s.text(10);
  r.choices = s.text(11);
  r.status = status_from(s.text(12)).value_or(Status::failed);
  r.detail = s.text(13);
  r.model_rank = int(s.integer(14));
  r.median_ms = s.real(15);
  r.cublas_ms = s.real(16);
  r.pipeline_ms = s.real(17);
  r.tflops = s.real(18);
  r.host = s.text(19);
  r.created = s.text(20);
  return r;
}

// The schema version of the database `schema` ("main" or an attached
// name): 0 when it has no results table; a results table without a version
// in `meta` is schema 1's.
int schema_version(sqlite3* db, const std::string& schema, const std::string& path) {
  auto has_table = [&](const char* name) {
    Statement t(db, "SELECT 1 FROM " + schema + ".sqlite_master WHERE type = 'table' AND name = ?1",
                path);
    t.bind(1, std::string(name));
    return t.step();
  };
  if (!has_table("results")) return 0;
  if (!has_table("meta")) return 1;
  Statement v(db, "SELECT value FROM " + schema + ".meta WHERE name = 'schema'", path);
  return v.step() ? std::max(1, std::atoi(v.text(0).c_str())) : 1;
}

}  // namespace

const char* to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::wrong: return "wrong";
    case Status::failed: return "failed";
  }
  return "failed";
}

std::optional<Status> status_from(const std::string& s) {
  if (s == "ok") return Status::ok;
  if (s == "wrong") return Status::wrong;
  if (s == "failed") return Status::failed;
  return std::nullopt;
}

struct Database::Handle {
  sqlite3* db = nullptr;
  ~Handle() { sqlite3_close(db); }
};

Database::Database(const std::string& path) : path_(path), db_(std::make_unique<Handle>()) {
  if (sqlite3_open_v2(path.c_str(), &db_->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK)
    throw std::runtime_error("tuning database " + path + ": cannot open: " +
                             (db_->db ? sqlite3_errmsg(db_->db) : "out of memory"));
  // Writers from other processes wait for each other instead of failing.
  sqlite3_busy_timeout(db_->db, 30000);
  auto exec = [&](const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_->db, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return;
    std::string why = err ? err : "unknown error";
    sqlite3_free(err);
    throw std::runtime_error("tuning database " + path + ": " + why);
  };
  exec("PRAGMA journal_mode=WAL;");
  // Created or upgraded by one process at a time: the version is read under
  // the write lock, so a second opener finds the first's work done.
  exec("BEGIN IMMEDIATE;");
  try {
    const int version = schema_version(db_->db, "main", path);
    if (version > kSchemaVersion)
      throw std::runtime_error("tuning database " + path + ": schema " + std::to_string(version) +
                               ", written by a newer schedc (this one reads 1 and " +
                               std::to_string(kSchemaVersion) + ")");
    if (version == 0) {
      exec(kCreateResults);
    } else if (version == 1) {
      exec("ALTER TABLE results RENAME TO results_v1;");
      exec(kCreateResults);
      exec(std::string("INSERT INTO results (") + kColumns + ") SELECT " + kSchema1Columns +
           " FROM results_v1;");
      exec("DROP TABLE results_v1;");
    }
    exec("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);");
    exec("INSERT OR REPLACE INTO meta VALUES ('schema', '" + std::to_string(kSchemaVersion) +
         "');");
    exec("COMMIT;");
  } catch (...) {
    sqlite3_exec(db_->db, "ROLLBACK;", nullptr, nullptr, nullptr);
    throw;
  }
}

Database::~Database() = default;

void Database::record(const Result& r) {
  const std::string text = normalized_schedule(r.schedule);
  Statement s(db_->db,
              std::string("INSERT OR REPLACE INTO results (") + kColumns +
                  ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                  "?16, ?17, ?18, ?19, ?20, ?21)",
              path_);
  s.bind(1, r.key.device).bind(2, r.key.driver).bind(3, r.key.dtype).bind(4, r.key.layout);
  s.bind(5, r.key.conv).bind(6, r.key.m).bind(7, r.key.n).bind(8, r.key.k);
  s.bind(9, schedule_id(text)).bind(10, text).bind(11, r.space).bind(12, r.choices);
  s.bind(13, std::string(to_string(r.status))).bind(14, r.detail).bind(15, int64_t(r.model_rank));
  s.bind(16, r.median_ms).bind(17, r.cublas_ms).bind(18, r.pipeline_ms).bind(19, r.tflops);
  s.bind(20, r.host).bind(21, r.created.empty() ? utc_now() : r.created);
  s.step();
}

std::optional<Result> Database::best(const Key& key) const {
  Statement s(db_->db,
              std::string("SELECT ") + kColumns +
                  " FROM results WHERE device = ?1 AND driver = ?2 AND dtype = ?3 AND layout = ?4 "
                  "AND m = ?5 AND n = ?6 AND k = ?7 AND conv = ?8 AND status = 'ok' "
                  "ORDER BY median_ms LIMIT 1",
              path_);
  s.bind(1, key.device).bind(2, key.driver).bind(3, key.dtype).bind(4, key.layout);
  s.bind(5, key.m).bind(6, key.n).bind(7, key.k).bind(8, key.conv);
  if (!s.step()) return std::nullopt;
  return row_of(s);
}

std::vector<Result> Database::list(const Filter& f) const {
  Statement s(db_->db,
              std::string("SELECT ") + kColumns +
                  " FROM results WHERE (?1 = '' OR device = ?1) AND (?2 = '' OR dtype = ?2) AND "
                  "(?3 = '' OR layout = ?3) AND (?4 = 0 OR m = ?4) AND (?5 = 0 OR n = ?5) AND "
                  "(?6 = 0 OR k = ?6) AND (?7 = '' OR conv = ?7) ORDER BY device, driver, dtype, "
                  "layout, conv, m, n, k, status != 'ok', median_ms, created",
              path_);
  s.bind(1, f.device).bind(2, f.dtype).bind(3, f.layout).bind(4, f.m).bind(5, f.n).bind(6, f.k);
  s.bind(7, f.conv);
  std::vector<Result> out;
  while (s.step()) out.push_back(row_of(s));
  return out;
}

int64_t Database::merge(const std::string& other) {
  // The other file must exist and be a tuning database: a missing, foreign
  // or older file is an error naming it, never an empty merge (nor a new
  // empty file at its path).
  {
    sqlite3* o = nullptr;
    const bool opened =
        sqlite3_open_v2(other.c_str(), &o, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK;
    bool has_table = false;
    if (opened) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(
              o, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'results'", -1, &st,
              nullptr) == SQLITE_OK)
        has_table = sqlite3_step(st) == SQLITE_ROW;
      sqlite3_finalize(st);
    }
    const std::string why =
        opened ? (has_table ? "" : "not a schedc tuning database")
               : std::string("cannot open: ") + (o ? sqlite3_errmsg(o) : "out of memory");
    sqlite3_close(o);
    if (!why.empty()) throw std::runtime_error("tuning database " + other + ": " + why);
  }
  Statement attach(db_->db, "ATTACH DATABASE ?1 AS other", path_);
  attach.bind(1, other);
  attach.step();
  int64_t copied = 0;
  try {
    // The other file is read as it is: a schema-1 file's rows are GEMMs'.
    const int version = schema_version(db_->db, "other", path_);
    if (version > kSchemaVersion)
      throw std::runtime_error("tuning database " + other + ": schema " + std::to_string(version) +
                               ", written by a newer schedc");
    const bool v1 = version == 1;
    Statement copy(db_->db,
                   std::string("INSERT OR REPLACE INTO results (") + kColumns + ") SELECT " +
                       (v1 ? kSchema1Columns : kColumns) +
                       " FROM other.results AS o WHERE NOT EXISTS (SELECT 1 FROM results AS r "
                       "WHERE r.device = o.device AND r.driver = o.driver AND r.dtype = o.dtype "
                       "AND r.layout = o.layout AND r.conv = " +
                       (v1 ? "''" : "o.conv") +
                       " AND r.m = o.m AND r.n = o.n AND r.k = o.k AND "
                       "r.schedule_id = o.schedule_id AND r.created >= o.created)",
                   path_);
    copy.step();
    copied = sqlite3_changes(db_->db);
  } catch (...) {
    sqlite3_exec(db_->db, "DETACH DATABASE other", nullptr, nullptr, nullptr);
    throw;
  }
  sqlite3_exec(db_->db, "DETACH DATABASE other", nullptr, nullptr, nullptr);
  return copied;
}

std::string default_database_path() {
  if (const char* p = std::getenv("SCHEDC_TUNE_DB"); p && *p) return p;
  const std::string dir = runtime::default_cache_dir();
  return dir.empty() ? "" : dir + "/tune.sqlite";
}

std::string normalized_schedule(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    out += line + "\n";
  }
  return out;
}

}  // namespace schedc::tune
