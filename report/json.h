#pragma once
// The one JSON writer of every `--json` output (check, run, bench, explain,
// ablate): nlohmann::json (Debian's nlohmann-json3-dev, header-only), so
// escaping is done in one well-kept place. Members keep the order they are
// written in (ordered_json), which is the order a person reads.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace schedc::report {

using Json = nlohmann::ordered_json;

// Compact text, one line. Bytes that are not UTF-8 (a file name in another
// encoding) become U+FFFD, so the output is always valid JSON; valid UTF-8
// (e.g. a file name with 'é') is written as it is.
inline std::string json_text(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A double as JSON: null for NaN and infinities (nlohmann writes null for
// them too; saying so here keeps the rule in sight).
inline Json json_number(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

// A float (alpha, beta) as the shortest decimal that reads back to it, so
// 0.1f is written 0.1, not 0.10000000149011612.
inline Json json_real(float v) {
  if (!std::isfinite(v)) return nullptr;
  char buf[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, double(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return std::strtod(buf, nullptr);
}

}  // namespace schedc::report
