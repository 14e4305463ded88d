// The robustness corpus, part 2: synthesized inputs (deep nesting, huge
// numbers, non-UTF-8 bytes, degenerate files, very long lines, many kernels
// in one file). Part 1, mutations of the real kernels, is RobustnessCorpus.cpp.
#include "RobustnessCorpus.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace tilec::robustness {

using namespace detail;

std::vector<Case> deepNesting() {
  const size_t N = 10000;
  std::vector<Case> out;
  out.push_back({"deep/parens-10k", tinyKernel("    x = " + repeat("(", N) +
                                               "1" + repeat(")", N) + "\n")});
  out.push_back({"deep/parens-10k-unclosed",
                 tinyKernel("    x = " + repeat("(", N) + "1\n")});
  out.push_back({"deep/brackets-10k",
                 tinyKernel("    x = " + repeat("A[", N) + "0" +
                            repeat("]", N) + "\n")});
  out.push_back({"deep/not-10k", tinyKernel("    c = " + repeat("not ", N) +
                                            "true\n")});
  out.push_back({"deep/minus-10k",
                 tinyKernel("    x = " + repeat("-", N) + "1\n")});
  out.push_back({"deep/unary-plus-100k",
                 tinyKernel("    x = " + repeat("+", 100000) + "1\n")});
  out.push_back({"deep/ternary-10k",
                 tinyKernel("    x = " + repeat("b < 1 ? 1 : ", N) + "0\n")});
  out.push_back({"deep/calls-10k", tinyKernel("    x = " + repeat("abs(", N) +
                                              "1.0" + repeat(")", N) + "\n")});
  // 10k nested if blocks, one space deeper each (50 MB of indentation would
  // be too much at four).
  {
    std::string body = "    c = b < 1\n";
    for (size_t i = 0; i < N; ++i)
      body += std::string(4 + i, ' ') + "if c:\n";
    body += std::string(4 + N, ' ') + "pass\n";
    out.push_back({"deep/if-10k", tinyKernel(body)});
  }
  // 10k nested for loops, likewise.
  {
    std::string body;
    for (size_t i = 0; i < N; ++i)
      body += std::string(4 + i, ' ') + "for i" + std::to_string(i) +
              " in range(0, 2):\n";
    body += std::string(4 + N, ' ') + "pass\n";
    out.push_back({"deep/for-10k", tinyKernel(body)});
  }
  // Deep, but within the parser's nesting limit: must compile or diagnose.
  out.push_back({"deep/parens-150", tinyKernel("    x = " + repeat("(", 150) +
                                               "1" + repeat(")", 150) + "\n")});
  {
    std::string body = "    c = b < 1\n";
    for (size_t i = 0; i < 150; ++i)
      body += std::string(4 + 2 * i, ' ') + "if c:\n";
    body += std::string(4 + 300, ' ') + "pass\n";
    out.push_back({"deep/if-150", tinyKernel(body)});
  }
  // A long elif chain: flat in the source, nested in the AST.
  {
    std::string body = "    c = b < 1\n    if c:\n        pass\n";
    body += repeat("    elif c:\n        pass\n", N);
    out.push_back({"deep/elif-chain-10k", tinyKernel(body)});
  }
  {
    std::string body = "    c = b < 1\n    if c:\n        pass\n";
    body += repeat("    elif c:\n        pass\n", 150000) + "    x = )\n";
    out.push_back({"deep/elif-chain-150k-then-error", tinyKernel(body)});
  }
  {
    std::string body = "    c = b < 1\n    if c:\n        pass\n";
    body += repeat("    elif c:\n        pass\n", 500);
    out.push_back({"deep/elif-chain-500", tinyKernel(body)});
  }
  // Many unmatched dedents and indents.
  out.push_back({"deep/dedent-storm",
                 tinyKernel(repeat("            x = 1\n    y = 2\n", 2000))});
  return out;
}

std::vector<Case> hugeNumbers() {
  static const char *const literals[] = {
      "99999999999999999999",
      "1e999",
      "-1e999",
      "1e-999",
      "9223372036854775808", // 2**63
      "2**63",               // not an operator: a syntax error
      "9223372036854775807", // 2**63 - 1
      "-9223372036854775808",
      "18446744073709551616", // 2**64
      "340282366920938463463374607431768211456",
      "1.7976931348623157e308",
      "0.0000000000000000000000000000000000000000000000001",
      "00000000000000000000000000000000000000000000000001",
      "1e",
      "1e+",
      "1.e5",
      ".5",
      "1..2",
      "0x10",
      "1_000",
      "4294967296",
      "2147483648",
      "0",
      "-1",
  };
  std::vector<Case> out;
  // In the middle of the real kernels: every number literal of each kernel,
  // replaced in turn (up to 12 per kernel) by each huge literal.
  for (auto &k : kernels()) {
    std::vector<size_t> starts;
    const std::string &s = k.source;
    for (size_t i = 0; i < s.size(); ++i) {
      bool startsNumber = isdigit(static_cast<unsigned char>(s[i])) &&
                          (i == 0 || !(isalnum(static_cast<unsigned char>(
                                           s[i - 1])) ||
                                       s[i - 1] == '_' || s[i - 1] == '.'));
      // Skip numbers in comments.
      size_t lineStart = s.rfind('\n', i);
      lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
      if (startsNumber && s.find('#', lineStart) >= i)
        starts.push_back(i);
    }
    size_t step = std::max<size_t>(1, starts.size() / 12);
    for (size_t j = 0; j < starts.size(); j += step) {
      size_t b = starts[j], e = b;
      while (e < s.size() && (isalnum(static_cast<unsigned char>(s[e])) ||
                              s[e] == '.'))
        ++e;
      for (const char *lit : literals) {
        std::string m = s;
        m.replace(b, e - b, lit);
        out.push_back({"huge/" + k.name + "@" + std::to_string(b) + "=" + lit,
                       m});
      }
    }
  }
  // In every position a constant can take.
  for (const char *lit : literals) {
    std::string L = lit;
    out.push_back({"huge/default=" + L,
                   "kernel k<n: int = " + L + ", f: float = " + L +
                       ">(A: f32[n])\n  grid(1) threads(32) as (b):\n"
                       "    pass\n"});
    out.push_back({"huge/dim=" + L,
                   "kernel k(A: f32[" + L + ", " + L +
                       "])\n  grid(1) threads(32) as (b):\n    pass\n"});
    out.push_back({"huge/grid=" + L,
                   "kernel k(A: f32[4])\n  grid(" + L + ", " + L +
                       ") threads(32) as (b, c):\n    pass\n"});
    out.push_back({"huge/threads=" + L,
                   "kernel k(A: f32[4])\n  grid(1) threads(" + L +
                       ") as (b):\n    pass\n"});
    out.push_back({"huge/tile=" + L,
                   tinyKernel("    t = shared<f32>[" + L + ", " + L +
                              "]\n    f = fragment<f32>[" + L +
                              "]\n    fill(f, " + L + ")\n")});
    out.push_back({"huge/loop=" + L,
                   tinyKernel("    f = fragment<f32>[64]\n"
                              "    for i in range(0, " + L + "):\n"
                              "        x = i * " + L + "\n"
                              "    for i in pipelined(" + L + ", " + L +
                              ", stages=" + L + "):\n        pass\n"
                              "    for i in parallel(" + L + "):\n"
                              "        f[i] = " + L + "\n")});
    out.push_back({"huge/index=" + L,
                   tinyKernel("    f = fragment<f32>[64]\n"
                              "    copy(A[" + L + " :+ 64], f)\n"
                              "    copy(B[b * " + L + " :+ 32, :], f)\n"
                              "    x = A[" + L + "]\n")});
    out.push_back({"huge/arith=" + L,
                   tinyKernel("    x = " + L + " * " + L + " + " + L +
                              "\n    y = " + L + " / (" + L + " - " + L +
                              ")\n    z = " + L + " % " + L +
                              "\n    w = exp2(" + L + ") + log2(" + L +
                              ") + sqrt(" + L + ") + rsqrt(" + L +
                              ")\n    v = int(" + L + ") + float(" + L +
                              ")\n    u = cdiv(" + L + ", 3) + min(" + L +
                              ", 1) + max(" + L + ", 2)\n")});
  }
  // Overflow at the edges of int64 arithmetic.
  const std::string minI64 = "(-9223372036854775807 - 1)";
  out.push_back({"huge/int64-min-div-minus-one",
                 tinyKernel("    x = " + minI64 + " / -1\n")});
  out.push_back({"huge/int64-min-rem-minus-one",
                 tinyKernel("    x = " + minI64 + " % -1\n")});
  out.push_back({"huge/int64-min-negated",
                 tinyKernel("    x = -" + minI64 + "\n")});
  out.push_back({"huge/int64-max-plus-one",
                 tinyKernel("    x = 9223372036854775807 + 1\n")});
  out.push_back({"huge/int64-mul-overflow",
                 tinyKernel("    x = 4294967296 * 4294967296\n")});
  out.push_back({"huge/cdiv-int64-min-by-minus-one",
                 tinyKernel("    x = cdiv(" + minI64 + ", -1)\n")});
  out.push_back({"huge/cdiv-by-zero", tinyKernel("    x = cdiv(5, 0)\n")});
  out.push_back({"huge/div-by-zero", tinyKernel("    x = 5 / 0\n    y = 5 % 0\n"
                                                "    z = 5.0 / 0.0\n")});
  out.push_back({"huge/grid-affine-overflow",
                 "kernel k(A: f32[n])\n  grid(n * 9223372036854775807 + "
                 "9223372036854775807, cdiv(n, 9223372036854775807)) "
                 "threads(32) as (b, c):\n    pass\n"});
  out.push_back({"huge/dim-affine-overflow",
                 "kernel k(A: f32[n], B: f32[n * 9223372036854775807 * 2])\n"
                 "  grid(1) threads(32) as (b):\n    pass\n"});
  out.push_back({"huge/int-of-inf", tinyKernel("    x = int(1e308 * 10.0)\n"
                                               "    y = int(-inf)\n")});
  out.push_back({"huge/const-override",
                 "kernel k<n: int = 9223372036854775807>(A: f32[n * 2])\n"
                 "  grid(n + 1) threads(32) as (b):\n    pass\n"});
  return out;
}

std::vector<Case> nonUtf8() {
  static const char *const blobs[] = {
      "\xff\xfe",         // UTF-16 BOM
      "\xef\xbb\xbf",     // UTF-8 BOM
      "\x80",             // lone continuation byte
      "\xbf\xbf\xbf",     // continuation bytes
      "\xc3",             // truncated two-byte sequence
      "\xc0\xaf",         // overlong '/'
      "\xed\xa0\x80",     // UTF-16 surrogate
      "\xf4\x90\x80\x80", // above U+10FFFF
      "\xe2\x80\x8b",     // zero-width space (valid UTF-8, not source)
      "\xc3\xa9",         // é
      "\x01\x02\x1b[0m",  // control bytes and an escape sequence
      "\x7f",
      "\f",
      "\v",
  };
  std::vector<Case> out;
  Rng rng(0x0DDB17E5ull);
  for (auto &k : kernels()) {
    for (int i = 0; i < perKernel(100); ++i) {
      std::string s = k.source;
      size_t pos = rng.below(s.size() + 1);
      size_t which = rng.below(sizeof(blobs) / sizeof(blobs[0]));
      s.insert(pos, blobs[which]);
      out.push_back({"utf8/" + k.name + "@" + std::to_string(pos) + "#" +
                         std::to_string(which),
                     s});
    }
    for (int i = 0; i < perKernel(20); ++i) {
      std::string s = k.source;
      size_t pos = rng.below(s.size() + 1);
      s.insert(pos, std::string(1 + rng.below(3), '\0'));
      out.push_back({"nul/" + k.name + "@" + std::to_string(pos), s});
    }
    // At the very start (a BOM), in an identifier, in a comment.
    out.push_back({"utf8/" + k.name + "/bom", "\xef\xbb\xbf" + k.source});
    out.push_back({"utf8/" + k.name + "/utf16-bom", "\xff\xfe" + k.source});
    // The same file as UTF-16LE: a NUL after every byte.
    std::string utf16 = "\xff\xfe";
    for (char c : k.source) {
      utf16 += c;
      utf16 += '\0';
    }
    out.push_back({"utf8/" + k.name + "/as-utf16le", utf16});
  }
  out.push_back({"utf8/identifier", tinyKernel("    caf\xc3\xa9 = 1\n")});
  out.push_back({"utf8/comment",
                 tinyKernel("    # caf\xc3\xa9 \xff\xfe \x80\n    pass\n")});
  out.push_back({"utf8/nul-only", std::string(64, '\0')});
  out.push_back({"utf8/ff-only", std::string(4096, '\xff')});
  out.push_back({"utf8/nul-in-kernel-name",
                 "kernel k" + std::string(1, '\0') +
                     "x(A: f32[4])\n  grid(1) threads(32) as (b):\n    pass\n"});
  // Random bytes, and random bytes from the source's own alphabet.
  for (int i = 0; i < 30; ++i) {
    std::string s(64 + rng.below(2048), '\0');
    for (char &c : s)
      c = static_cast<char>(rng.below(256));
    out.push_back({"random/bytes#" + std::to_string(i), s});
  }
  static const char alphabet[] = "kernel grid threads as for in if else elif "
                                 "not and or ()[]<>:,=+-*/%?#\n\n    \t0123456789.e";
  for (int i = 0; i < 30; ++i) {
    std::string s(64 + rng.below(2048), ' ');
    for (char &c : s)
      c = alphabet[rng.below(sizeof(alphabet) - 1)];
    out.push_back({"random/alphabet#" + std::to_string(i), s});
  }
  return out;
}

std::vector<Case> degenerate() {
  std::vector<Case> out;
  out.push_back({"degenerate/empty", ""});
  out.push_back({"degenerate/space", " "});
  out.push_back({"degenerate/newlines", std::string(1000, '\n')});
  out.push_back({"degenerate/whitespace", repeat(" \t \r\n", 500)});
  out.push_back({"degenerate/crlf-only", repeat("\r\n", 500)});
  out.push_back({"degenerate/cr-only", repeat("\r", 500)});
  out.push_back({"degenerate/comments-only", repeat("# nothing here\n", 200)});
  out.push_back({"degenerate/backslash", "\\"});
  out.push_back({"degenerate/continuations", repeat("\\\n", 1000)});
  out.push_back({"degenerate/kernel", "kernel"});
  out.push_back({"degenerate/kernel-name", "kernel k"});
  out.push_back({"degenerate/kernel-angle", "kernel k<"});
  out.push_back({"degenerate/kernel-angle-open-file",
                 "kernel k<n: int = 1\n\n\n"});
  out.push_back({"degenerate/kernel-no-body",
                 "kernel k(A: f32[4])\n  grid(1) threads(32) as (b):\n"});
  out.push_back({"degenerate/kernel-empty-body",
                 "kernel k(A: f32[4]) grid(1) threads(32) as (b):\n\n"});
  out.push_back({"degenerate/no-params",
                 "kernel k() grid(1) threads(32) as (b):\n    pass\n"});
  out.push_back({"degenerate/unclosed-paren-eof", "kernel k(" + repeat("\n", 50)});
  out.push_back({"degenerate/only-dedents", "    x\n  y\n z\nw\n"});
  for (auto &k : kernels()) {
    std::string crlf;
    for (char c : k.source) {
      if (c == '\n')
        crlf += '\r';
      crlf += c;
    }
    out.push_back({"degenerate/" + k.name + "/crlf", crlf});
    std::string cr = k.source;
    std::replace(cr.begin(), cr.end(), '\n', '\r');
    out.push_back({"degenerate/" + k.name + "/cr", cr});
    std::string noNewline = k.source;
    while (!noNewline.empty() && noNewline.back() == '\n')
      noNewline.pop_back();
    out.push_back({"degenerate/" + k.name + "/no-final-newline", noNewline});
    std::string tabs;
    for (auto &l : splitLines(k.source)) {
      size_t lead = l.find_first_not_of(' ');
      if (lead == std::string::npos)
        lead = l.size();
      tabs += std::string(lead / 4, '\t') + l.substr(lead) + "\n";
    }
    out.push_back({"degenerate/" + k.name + "/tabs", tabs});
    out.push_back({"degenerate/" + k.name + "/one-line",
                   [&] {
                     std::string s = k.source;
                     std::replace(s.begin(), s.end(), '\n', ' ');
                     return s;
                   }()});
  }
  return out;
}

std::vector<Case> longLines() {
  std::vector<Case> out;
  out.push_back({"long/comment-1mb",
                 "# " + std::string(1 << 20, 'x') + "\n" + kernels()[0].source});
  out.push_back({"long/identifier-100k",
                 tinyKernel("    " + std::string(100000, 'a') + " = 1\n")});
  out.push_back({"long/kernel-name-100k",
                 "kernel " + std::string(100000, 'k') +
                     "(A: f32[4])\n  grid(1) threads(32) as (b):\n    pass\n"});
  out.push_back({"long/number-100k",
                 tinyKernel("    x = " + std::string(100000, '9') + "\n")});
  out.push_back({"long/float-100k",
                 tinyKernel("    x = 0." + std::string(100000, '1') + "\n")});
  out.push_back({"long/spaces-then-code",
                 tinyKernel(std::string(100000, ' ') + "x = 1\n")});
  out.push_back({"long/trailing-spaces",
                 tinyKernel("    x = 1" + std::string(100000, ' ') + "\n")});
  out.push_back({"long/binary-chain-1000",
                 tinyKernel("    x = " + repeat("1 + ", 1000) + "1\n")});
  out.push_back({"long/binary-chain-20k",
                 tinyKernel("    x = " + repeat("1+", 20000) + "1\n")});
  out.push_back({"long/binary-chain-600k-then-error",
                 tinyKernel("    x = " + repeat("1+", 600000) + "1 )\n")});
  out.push_back({"long/and-chain-20k",
                 tinyKernel("    c = " + repeat("true and ", 20000) + "true\n")});
  out.push_back({"long/dynamic-chain-1000",
                 tinyKernel("    x = " + repeat("b * 2 + ", 1000) + "b\n")});
  out.push_back({"long/call-args-50k",
                 tinyKernel("    x = min(" + repeat("1, ", 50000) + "1)\n")});
  out.push_back({"long/subscripts-10k",
                 tinyKernel("    x = A[" + repeat("0, ", 10000) + "0]\n")});
  out.push_back({"long/tile-dims-1000",
                 tinyKernel("    t = fragment<f32>[" + repeat("2, ", 1000) +
                            "2]\n")});
  out.push_back({"long/tensor-dims-1000",
                 "kernel k(A: f32[" + repeat("d, ", 1000) +
                     "d])\n  grid(1) threads(32) as (b):\n    pass\n"});
  out.push_back({"long/tensor-params-2000", [] {
                   std::string s = "kernel k(";
                   for (int i = 0; i < 2000; ++i)
                     s += "A" + std::to_string(i) + ": f32[n], ";
                   return s + "B: f32[n])\n  grid(1) threads(32) as (b):\n"
                              "    pass\n";
                 }()});
  out.push_back({"long/constants-2000", [] {
                   std::string s = "kernel k<";
                   for (int i = 0; i < 2000; ++i)
                     s += "c" + std::to_string(i) + ": int = " +
                          std::to_string(i) + ", ";
                   return s + "z: int = 0>(A: f32[4])\n"
                              "  grid(1) threads(32) as (b):\n    pass\n";
                 }()});
  out.push_back({"long/block-indices-1000",
                 "kernel k(A: f32[4])\n  grid(1) threads(32) as (" +
                     repeat("b, ", 1000) + "b):\n    pass\n"});
  out.push_back({"long/statements-20k",
                 tinyKernel(repeat("    x = b + 1\n", 20000))});
  out.push_back({"long/errors-20k", tinyKernel(repeat("    x = )\n", 20000))});
  return out;
}

std::vector<Case> manyKernels() {
  std::vector<Case> out;
  {
    std::string s;
    for (int i = 0; i < 1000; ++i)
      s += "kernel k" + std::to_string(i) +
           "(A: f32[n])\n  grid(n) threads(32) as (b):\n    pass\n";
    out.push_back({"many/tiny-1000", s});
  }
  {
    std::string s;
    for (int i = 0; i < 1000; ++i)
      s += "kernel k(A: f32[n])\n  grid(n) threads(32) as (b):\n    pass\n";
    out.push_back({"many/same-name-1000", s});
  }
  {
    // The real kernels, renamed, many times over.
    std::string s;
    for (int i = 0; i < 8; ++i)
      for (auto &k : kernels()) {
        std::string src = k.source;
        size_t pos = 0;
        while ((pos = src.find("kernel ", pos)) != std::string::npos) {
          size_t nameEnd = src.find_first_of("<(", pos);
          src.insert(nameEnd, "_" + std::to_string(i));
          pos = nameEnd;
        }
        s += src + "\n";
      }
    out.push_back({"many/real-x8", s});
  }
  {
    std::string s;
    for (int i = 0; i < 500; ++i)
      s += "kernel k" + std::to_string(i) + "(A: f32[n]\n";
    out.push_back({"many/broken-headers-500", s});
  }
  {
    // Every kernel broken in the same way: errors are capped, not endless.
    std::string s;
    for (int i = 0; i < 500; ++i)
      s += "kernel k" + std::to_string(i) +
           "(A: f32[n])\n  grid(n) threads(32) as (b):\n    x = nope\n";
    out.push_back({"many/name-errors-500", s});
  }
  return out;
}

} // namespace tilec::robustness
