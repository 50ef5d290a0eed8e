#include "dsl/space.h"

#include <climits>

namespace schedc::dsl {

namespace {

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t')) --b;
  return s.substr(a, b - a);
}

}  // namespace

int64_t Space::size() const {
  int64_t n = 1;
  for (const SpaceSet& s : sets) {
    const int64_t k = int64_t(s.choices.size());
    if (n > INT64_MAX / k) return INT64_MAX;
    n *= k;
  }
  return n;
}

std::vector<int> Space::choices_of(int64_t index) const {
  std::vector<int> out(sets.size(), 0);
  for (size_t i = sets.size(); i-- > 0;) {
    const int64_t k = int64_t(sets[i].choices.size());
    out[i] = int(index % k);
    index /= k;
  }
  return out;
}

std::string Space::candidate_text(const std::string& text, int64_t index) const {
  const std::vector<int> c = choices_of(index);
  std::string out;
  size_t at = 0;
  for (size_t i = 0; i < sets.size(); ++i) {
    out.append(text, at, sets[i].span.offset - at);
    out += sets[i].choices[size_t(c[i])];
    at = sets[i].span.offset + sets[i].span.length;
  }
  out.append(text, at, std::string::npos);
  return out;
}

std::string Space::describe(int64_t index) const {
  const std::vector<int> c = choices_of(index);
  std::string out;
  for (size_t i = 0; i < sets.size(); ++i) {
    const std::string& v = sets[i].choices[size_t(c[i])];
    out += (i ? ", " : "") + std::string("{") + (v.empty() ? "-" : v) + "}";
  }
  return out;
}

Space find_space(const SourceFile& file, Diagnostics& diags) {
  const std::string& t = file.text();
  Space space;
  // Bytes that are not ASCII text are dsl::parse's to report, at their place.
  for (unsigned char ch : t)
    if (ch >= 0x80 || (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') || ch == 0x7F)
      return space;
  bool bad = false;
  size_t open = std::string::npos;  // the '{' of the set being read
  std::vector<std::string> choices;
  std::string current;
  for (size_t i = 0; i < t.size(); ++i) {
    const char ch = t[i];
    if (ch == '#' && open == std::string::npos) {  // a comment: to the end of the line
      while (i < t.size() && t[i] != '\n') ++i;
      continue;
    }
    if (ch == '{') {
      if (open != std::string::npos) {
        diags.error(file.span_at(uint32_t(i), 1), "a set inside a set: sets do not nest");
        bad = true;
        continue;
      }
      open = i;
      choices.clear();
      current.clear();
    } else if (ch == '}') {
      if (open == std::string::npos) {
        diags.error(file.span_at(uint32_t(i), 1), "'}' without its '{'");
        bad = true;
        continue;
      }
      choices.push_back(trim(current));
      const SourceSpan span = file.span_at(uint32_t(open), uint32_t(i + 1 - open));
      bool any = false;
      for (const std::string& c : choices) any = any || !c.empty();
      if (choices.size() < 2) {
        diags.error(span, "a set needs at least two alternatives, separated by ','");
        bad = true;
      } else if (!any) {
        diags.error(span, "every alternative of the set is empty");
        bad = true;
      } else if (choices.size() > kMaxSetChoices) {
        diags.error(span, "a set of " + std::to_string(choices.size()) + " alternatives; at most " +
                              std::to_string(kMaxSetChoices));
        bad = true;
      } else {
        space.sets.push_back({span, choices});
      }
      open = std::string::npos;
    } else if (open != std::string::npos) {
      if (ch == '\n' || ch == ';') {
        diags.error(file.span_at(uint32_t(open), 1),
                    "'{' is not closed on its line (a set stands for part of one directive or "
                    "for a whole one, not for several)");
        bad = true;
        open = std::string::npos;
      } else if (ch == ',') {
        choices.push_back(trim(current));
        current.clear();
      } else {
        current += ch;
      }
    }
  }
  if (open != std::string::npos) {
    diags.error(file.span_at(uint32_t(open), 1), "'{' is not closed");
    bad = true;
  }
  if (bad) space.sets.clear();
  return space;
}

}  // namespace schedc::dsl
