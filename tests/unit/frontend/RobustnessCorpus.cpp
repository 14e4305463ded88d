// The robustness corpus: see RobustnessCorpus.h. Mutations come from a
// fixed-seed PRNG, so a failing case name always names the same input.
#include "RobustnessCorpus.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#ifndef TILEC_SOURCE_DIR
#error "TILEC_SOURCE_DIR must name the source tree (set by CMake)"
#endif

namespace tilec::robustness {

const std::vector<Kernel> &kernels() {
  static const std::vector<Kernel> all = [] {
    std::vector<Kernel> out;
    std::string root = std::string(TILEC_SOURCE_DIR) + "/kernels";
    std::error_code ec;
    for (llvm::sys::fs::recursive_directory_iterator it(root, ec), end;
         it != end && !ec; it.increment(ec)) {
      if (llvm::sys::path::extension(it->path()) != ".tile")
        continue;
      auto buffer = llvm::MemoryBuffer::getFile(it->path());
      if (!buffer)
        continue;
      out.push_back({llvm::sys::path::filename(it->path()).str(),
                     (*buffer)->getBuffer().str()});
    }
    std::sort(out.begin(), out.end(),
              [](const Kernel &a, const Kernel &b) { return a.name < b.name; });
    return out;
  }();
  return all;
}

//===----------------------------------------------------------------------===//
// Helpers shared by the generators
//===----------------------------------------------------------------------===//

namespace detail {

int perKernel(int n) {
  size_t k = std::max<size_t>(kernels().size(), 1);
  return k <= 3 ? n : std::max<int>(n / 4, static_cast<int>(n * 3 / k));
}

std::vector<std::string> splitLines(const std::string &s) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(s.substr(start));
      break;
    }
    lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

std::string joinLines(const std::vector<std::string> &lines) {
  std::string out;
  for (auto &l : lines)
    out += l + "\n";
  return out;
}

std::string repeat(llvm::StringRef s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i)
    out += s;
  return out;
}

/// A one-kernel file whose body is `body` (lines indented by 4).
std::string tinyKernel(const std::string &body, const std::string &name) {
  return "kernel " + name + "<n: int = 64>(A: f32[n], B: f32[rows, n])\n"
         "  grid(cdiv(rows, 32)) threads(128) as (b):\n" + body;
}

} // namespace detail

using namespace detail;

//===----------------------------------------------------------------------===//
// Mutations of the real kernels
//===----------------------------------------------------------------------===//

std::vector<Case> pristine() {
  std::vector<Case> out;
  for (auto &k : kernels())
    out.push_back({"pristine/" + k.name, k.source});
  return out;
}

std::vector<Case> truncations() {
  std::vector<Case> out;
  for (auto &k : kernels()) {
    // Every truncation point on a stride (about 1000 per kernel: every byte
    // of a small one), plus one byte short of the end.
    size_t stride = std::max<size_t>(1, k.source.size() / perKernel(1000));
    for (size_t n = 0; n < k.source.size(); n += stride)
      out.push_back({"truncate/" + k.name + "@" + std::to_string(n),
                     k.source.substr(0, n)});
    size_t last = k.source.size() - 1;
    out.push_back({"truncate/" + k.name + "@" + std::to_string(last),
                   k.source.substr(0, last)});
  }
  return out;
}

std::vector<Case> byteMutations() {
  std::vector<Case> out;
  // Bytes to insert: the language's own punctuation and layout, plus bytes
  // that are not source text at all.
  static const std::vector<std::string> inserts = {
      "(", ")", "[", "]", ":", ":+", ",", "=", "<", ">", "?", "+", "-", "*",
      "/", "%", "#", "\n", " ", "    ", "\t", "\r", "\\", "\\\n", "!", ".",
      "e", "0", "9", "_", "if ", "not ", "kernel ", "for ", "else:",
      std::string(1, '\0'), "\xff", "\x80", "\xc3"};
  const size_t nInserts = inserts.size();
  Rng rng(0x7113C0DEull);
  for (auto &k : kernels()) {
    const std::string &src = k.source;
    for (int i = 0; i < perKernel(400); ++i) {
      std::string s = src;
      size_t pos = rng.below(s.size());
      s[pos] = static_cast<char>(s[pos] ^ (1u << rng.below(8)));
      out.push_back({"flip/" + k.name + "@" + std::to_string(pos), s});
    }
    for (int i = 0; i < perKernel(150); ++i) {
      std::string s = src;
      size_t pos = rng.below(s.size());
      s[pos] = static_cast<char>(rng.below(256));
      out.push_back({"replace/" + k.name + "@" + std::to_string(pos), s});
    }
    for (int i = 0; i < perKernel(250); ++i) {
      std::string s = src;
      size_t pos = rng.below(s.size());
      size_t len = 1 + rng.below(8);
      s.erase(pos, len);
      out.push_back({"delete/" + k.name + "@" + std::to_string(pos) + "+" +
                         std::to_string(len),
                     s});
    }
    for (int i = 0; i < perKernel(250); ++i) {
      std::string s = src;
      size_t pos = rng.below(s.size() + 1);
      size_t which = rng.below(nInserts);
      s.insert(pos, inserts[which]);
      out.push_back({"insert/" + k.name + "@" + std::to_string(pos) + "#" +
                         std::to_string(which),
                     s});
    }
    // Several of the above at once.
    for (int i = 0; i < perKernel(150); ++i) {
      std::string s = src;
      size_t edits = 2 + rng.below(6);
      for (size_t e = 0; e < edits && !s.empty(); ++e) {
        size_t pos = rng.below(s.size());
        switch (rng.below(3)) {
        case 0: s[pos] = static_cast<char>(s[pos] ^ (1u << rng.below(8))); break;
        case 1: s.erase(pos, 1 + rng.below(8)); break;
        default: s.insert(pos, inserts[rng.below(nInserts)]); break;
        }
      }
      out.push_back({"stacked/" + k.name + "#" + std::to_string(i), s});
    }
  }
  return out;
}

std::vector<Case> lineMutations() {
  std::vector<Case> out;
  Rng rng(0x11AE5ull);
  for (auto &k : kernels()) {
    std::vector<std::string> lines = splitLines(k.source);
    const size_t n = lines.size();
    // Every line deleted, one at a time.
    for (size_t i = 0; i < n; ++i) {
      auto l = lines;
      l.erase(l.begin() + i);
      out.push_back({"delete-line/" + k.name + ":" + std::to_string(i + 1),
                     joinLines(l)});
    }
    // Runs of deleted lines.
    for (int t = 0; t < perKernel(40); ++t) {
      auto l = lines;
      size_t i = rng.below(n), len = 2 + rng.below(6);
      l.erase(l.begin() + i, l.begin() + std::min(n, i + len));
      out.push_back({"delete-lines/" + k.name + ":" + std::to_string(i + 1) +
                         "+" + std::to_string(len),
                     joinLines(l)});
    }
    for (int t = 0; t < perKernel(80); ++t) {
      auto l = lines;
      size_t i = rng.below(n);
      l.insert(l.begin() + i, lines[i]);
      out.push_back({"dup-line/" + k.name + ":" + std::to_string(i + 1),
                     joinLines(l)});
    }
    for (int t = 0; t < perKernel(80); ++t) {
      auto l = lines;
      size_t i = rng.below(n), j = rng.below(n);
      std::swap(l[i], l[j]);
      out.push_back({"swap-lines/" + k.name + ":" + std::to_string(i + 1) +
                         "<->" + std::to_string(j + 1),
                     joinLines(l)});
    }
    // Indentation: add or remove spaces, or indent with a tab.
    for (int t = 0; t < perKernel(150); ++t) {
      auto l = lines;
      size_t i = rng.below(n);
      std::string how;
      switch (rng.below(4)) {
      case 0: {
        size_t add = 1 + rng.below(8);
        l[i].insert(0, std::string(add, ' '));
        how = "+" + std::to_string(add);
        break;
      }
      case 1: {
        size_t lead = l[i].find_first_not_of(' ');
        if (lead == std::string::npos)
          lead = l[i].size();
        size_t remove = std::min(lead, 1 + rng.below(8));
        l[i].erase(0, remove);
        how = "-" + std::to_string(remove);
        break;
      }
      case 2:
        l[i].insert(0, "\t");
        how = "tab";
        break;
      default: {
        // Re-indent a whole run of lines by the same amount.
        size_t len = 2 + rng.below(10), add = 1 + rng.below(4);
        for (size_t j = i; j < std::min(n, i + len); ++j)
          l[j].insert(0, std::string(add, ' '));
        how = "run" + std::to_string(len) + "+" + std::to_string(add);
        break;
      }
      }
      out.push_back(
          {"indent/" + k.name + ":" + std::to_string(i + 1) + how,
           joinLines(l)});
    }
  }
  return out;
}

} // namespace tilec::robustness
