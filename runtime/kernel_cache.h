#pragma once
// The on-disk kernel cache (docs/runtime.md). One file per compiled kernel,
// named for people (gemm_<hash12>_sm90_nvrtc13.0.cubin), keyed by a 128-bit
// hash of the source, the sorted NVRTC options, the NVRTC version and the
// architecture. A file holds a header (magic, full key, sizes, checksum), the
// ptxas log and the CUBIN; one that is truncated or corrupt is reported and
// never loaded. Writes go to a temporary file renamed into place, so
// concurrent schedc processes never see half a file.

#include <cstdint>
#include <string>
#include <vector>

namespace schedc::runtime {

// $SCHEDC_CACHE_DIR, else $XDG_CACHE_HOME/schedc, else $HOME/.cache/schedc;
// "" when none of these variables is set.
std::string default_cache_dir();

// 32 hex digits. Options are sorted first, so their order does not matter.
std::string cache_key(const std::string& source, std::vector<std::string> options,
                      const std::string& nvrtc_version, const std::string& arch);

// "gemm_<first 12 of key>_sm90_nvrtc13.0"
std::string cache_stem(const std::string& key, const std::string& arch,
                       const std::string& nvrtc_version);

// 64-bit FNV-1a; the entry checksum.
uint64_t fnv1a64(const void* data, size_t size, uint64_t seed = 0xcbf29ce484222325ull);

class KernelCache {
 public:
  struct Entry {
    std::string log;  // ptxas -v log, so a cache hit still knows registers and spills
    std::vector<char> cubin;
  };
  enum class Lookup { hit, miss, corrupt };

  explicit KernelCache(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  std::string path(const std::string& stem) const { return dir_ + "/" + stem + ".cubin"; }

  // hit: `out` filled. corrupt: `why` says what is wrong (the caller warns
  // and rebuilds; store() then replaces the file).
  Lookup load(const std::string& key, const std::string& stem, Entry& out, std::string& why) const;

  // Atomic write (temp + rename). Returns false with `why` set on an I/O
  // failure; a cache that cannot be written is not fatal.
  bool store(const std::string& key, const std::string& stem, const Entry& entry,
             std::string& why) const;

  // Writes `source` as <stem>.cu beside the entry (SCHEDC_KEEP_SOURCE=1).
  bool store_source(const std::string& stem, const std::string& source, std::string& why) const;

 private:
  std::string dir_;
};

}  // namespace schedc::runtime
