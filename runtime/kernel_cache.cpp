#include "runtime/kernel_cache.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

namespace schedc::runtime {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'S', 'C', 'H', 'E', 'D', 'C', 'K', '1'};
constexpr size_t kKeyLen = 32;
// magic, key, log size, cubin size, checksum
constexpr size_t kHeaderSize = sizeof(kMagic) + kKeyLen + 3 * sizeof(uint64_t);

uint64_t mix(uint64_t x) {  // splitmix64 finalizer: spreads FNV's weak low bits
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string hex(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = digits[v & 15];
  return s;
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}
uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | uint8_t(p[i]);
  return v;
}

// Writes `data` to `path` through a unique temporary file in the same folder.
bool write_atomically(const fs::path& path, const std::string& data, std::string& why) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    why = "cannot create " + path.parent_path().string() + ": " + ec.message();
    return false;
  }
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  fs::path tmp = path.string() + ".tmp." + std::to_string(getpid()) + "." +
                 std::to_string(counter++) + "." + std::to_string(rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), std::streamsize(data.size()));
    out.flush();
    if (!out) {
      why = "cannot write " + tmp.string();
      out.close();
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, path, ec);  // atomic within one file system
  if (ec) {
    why = "cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message();
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

}  // namespace

uint64_t fnv1a64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string default_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (std::string d = env("SCHEDC_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/schedc";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/schedc";
  return "";
}

std::string cache_key(const std::string& source, std::vector<std::string> options,
                      const std::string& nvrtc_version, const std::string& arch) {
  std::sort(options.begin(), options.end());
  // Length-prefixed fields, so no two different inputs serialize alike.
  std::string material;
  auto field = [&](const std::string& s) {
    put_u64(material, s.size());
    material += s;
  };
  field("schedc-cache-v1");
  field(source);
  for (const std::string& o : options) field(o);
  field("nvrtc " + nvrtc_version);
  field(arch);
  uint64_t a = mix(fnv1a64(material.data(), material.size()));
  uint64_t b = mix(fnv1a64(material.data(), material.size(), 0x84222325cbf29ce4ull) ^ a);
  return hex(a) + hex(b);
}

std::string cache_stem(const std::string& key, const std::string& arch,
                       const std::string& nvrtc_version) {
  std::string sm = arch;
  sm.erase(std::remove(sm.begin(), sm.end(), '_'), sm.end());  // sm_90 -> sm90
  return "gemm_" + key.substr(0, 12) + "_" + sm + "_nvrtc" + nvrtc_version;
}

KernelCache::Lookup KernelCache::load(const std::string& key, const std::string& stem, Entry& out,
                                      std::string& why) const {
  std::ifstream in(path(stem), std::ios::binary);
  if (!in) return Lookup::miss;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < kHeaderSize) {
    why = "truncated (" + std::to_string(data.size()) + " bytes, header alone is " +
          std::to_string(kHeaderSize) + ")";
    return Lookup::corrupt;
  }
  const char* p = data.data();
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) {
    why = "not a schedc cache file (bad magic)";
    return Lookup::corrupt;
  }
  p += sizeof kMagic;
  if (std::string(p, kKeyLen) != key) {
    why = "holds another key (hash prefix collision)";
    return Lookup::corrupt;
  }
  p += kKeyLen;
  uint64_t log_size = get_u64(p), cubin_size = get_u64(p + 8), sum = get_u64(p + 16);
  if (log_size > data.size() || cubin_size > data.size() ||
      kHeaderSize + log_size + cubin_size != data.size()) {
    why = "truncated or padded (" + std::to_string(data.size()) + " bytes, header says " +
          std::to_string(kHeaderSize + log_size + cubin_size) + ")";
    return Lookup::corrupt;
  }
  const char* body = data.data() + kHeaderSize;
  if (fnv1a64(body, log_size + cubin_size) != sum) {
    why = "checksum mismatch";
    return Lookup::corrupt;
  }
  if (cubin_size == 0) {
    why = "empty CUBIN";
    return Lookup::corrupt;
  }
  out.log.assign(body, log_size);
  out.cubin.assign(body + log_size, body + log_size + cubin_size);
  return Lookup::hit;
}

bool KernelCache::store(const std::string& key, const std::string& stem, const Entry& entry,
                        std::string& why) const {
  std::string data(kMagic, sizeof kMagic);
  data += key;
  put_u64(data, entry.log.size());
  put_u64(data, entry.cubin.size());
  std::string body = entry.log;
  body.append(entry.cubin.begin(), entry.cubin.end());
  put_u64(data, fnv1a64(body.data(), body.size()));
  data += body;
  return write_atomically(path(stem), data, why);
}

bool KernelCache::store_source(const std::string& stem, const std::string& source,
                               std::string& why) const {
  return write_atomically(fs::path(dir_) / (stem + ".cu"), source, why);
}

}  // namespace schedc::runtime
