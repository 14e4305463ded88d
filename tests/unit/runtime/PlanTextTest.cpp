// The text form of entries (PlanText.h): print/parse round trips, and every malformed input reported with its line
// and column, never a crash or an exception.
#include "tilec/runtime/Error.h"
#include "tilec/runtime/PlanText.h"

#include <catch2/catch.hpp>

#include <random>

using namespace tilec::runtime;

namespace {

EntrySpec sampleEntry() {
  EntrySpec entry;
  entry.name = "attn_bwd";
  ParamSpec lse{"lse", DType::F32, {"batch", "heads", "seq"}, 4, true};
  ParamSpec strided{"x", DType::I64, {DimSpec::any(), 7}, 8, false};
  entry.signature = Signature({{"dQ", DType::BF16, {"batch", "seq", "heads", 128}},
                               {"dK", DType::BF16, {"batch", "seq", DimSpec::derived(Expr::parse("floordiv(heads, 2)")), 128}},
                               lse, strided,
                               {"flag", DType::Bool, {}}});
  int ws = entry.plan.alloc(Expr::dim(0, 0) * Expr::dim(0, 1) * Expr::dim(0, 2) * 512);
  entry.plan.launch({0, "to_f32", {Expr::dim(0, 2) * Expr::dim(0, 1) * Expr::dim(0, 0), 1, 1}, {128, 1, 1}, 0,
                     {KernelArg::tensor(0), KernelArg::workspace(ws)}});
  int partial = entry.plan.alloc(Expr(2) * Expr::symbol("batch") * Expr::symbol("seq") * Expr::dim(1, 2) * 512,
                                 /*zeroFill=*/true);
  entry.plan.launch({1, "main", {Expr::parse("heads"), ceildiv(Expr::symbol("seq"), 64), Expr::dim(0, 0)},
                     {256, 2, 1}, Expr::parse("max(96 * 1024, seq * 4)"),
                     {KernelArg::tensor(2), KernelArg::workspace(ws), KernelArg::workspace(partial),
                      KernelArg::i32(Expr::parse("mod(-7, seq) - floordiv(seq, 3)")),
                      KernelArg::i64(Expr::stride(3, 0))}});
  entry.plan.free(ws);
  entry.plan.launch({0, "sum", {min(Expr::dim(1, 1), 5), 1, 1}, {64, 1, 1}, 0,
                     {KernelArg::workspace(partial), KernelArg::tensor(1)}});
  entry.plan.free(partial);
  return entry;
}

// A canonical description of an entry, for comparing entries.
std::string describe(const EntrySpec &entry) {
  std::string s = entry.name + "\n";
  for (const ParamSpec &p : entry.signature.params())
    s += p.toString() + "\n";
  for (const PlanStep &step : entry.plan.steps()) {
    if (auto *a = std::get_if<AllocStep>(&step))
      s += "alloc " + std::to_string(a->workspace) + " " + a->bytes.toString() + (a->zeroFill ? " z" : "") + "\n";
    else if (auto *l = std::get_if<LaunchStep>(&step)) {
      s += "launch " + std::to_string(l->cubin) + " " + l->function;
      for (const Expr &g : l->grid)
        s += " " + g.toString();
      for (unsigned b : l->block)
        s += " " + std::to_string(b);
      s += " smem " + l->dynamicSharedBytes.toString();
      for (const KernelArg &arg : l->args)
        s += " " + std::to_string(int(arg.kind)) + ":" + std::to_string(arg.index) + ":" + arg.value.toString();
      s += "\n";
    } else if (auto *f = std::get_if<FreeStep>(&step))
      s += "free " + std::to_string(f->workspace) + "\n";
  }
  return s;
}

const std::string kHeader = "tilec-plan 1\n";
const std::string kParams = "entry e\n"
                            "param a bf16 [n, 64] align 16 contiguous\n"
                            "param b f32 [?] align 4 strided\n";

// Parses text that must fail and returns "line:column: message".
std::string errorOf(const std::string &text) {
  ParsedPlan parsed = parsePlan(text);
  INFO(text);
  REQUIRE_FALSE(parsed);
  CHECK(parsed.entries.empty());
  return parsed.error->toString();
}

} // namespace

TEST_CASE("plan text round-trips an entry exactly", "[plantext]") {
  EntrySpec entry = sampleEntry();
  std::string text = printPlan(entry);
  ParsedPlan parsed = parsePlan(text);
  INFO(text);
  if (!parsed)
    FAIL(parsed.error->toString());
  REQUIRE(parsed.entries.size() == 1);
  CHECK(describe(parsed.entries[0]) == describe(entry));
  CHECK(printPlan(parsed.entries[0]) == text); // printing is stable
  CHECK(parsed.entries[0].plan.workspaceCount() == 2);

  // The parsed entry is a valid module entry, and evaluates like the original.
  auto cubin = std::make_shared<const Cubin>(Cubin{{'x'}, "sm_90a", "", {}});
  Module module({cubin, cubin}, parsed.entries);
  alignas(256) static char memory[64];
  std::vector<TensorView> args = {TensorView(memory, DType::BF16, {2, 100, 4, 128}),
                                  TensorView(memory, DType::BF16, {2, 100, 2, 128}),
                                  TensorView(memory, DType::F32, {2, 4, 100}),
                                  TensorView(memory, DType::I64, {3, 7}),
                                  TensorView(memory, DType::Bool, {})};
  auto steps = module.entry("attn_bwd").resolve(args.data(), args.size());
  REQUIRE(steps.size() == 7);
  CHECK(steps[0].bytes == 2 * 100 * 4 * 512);
  CHECK(steps[1].grid == std::array<std::int64_t, 3>{800, 1, 1});
  CHECK(steps[2].zeroFill);
  CHECK(steps[2].bytes == 2 * 2 * 100 * 2 * 512);
  CHECK(steps[3].grid == std::array<std::int64_t, 3>{4, 2, 2});
  CHECK(steps[3].dynamicSharedBytes == 96 * 1024);
}

TEST_CASE("plan text holds several entries, comments and blank lines", "[plantext]") {
  EntrySpec a = sampleEntry();
  EntrySpec b;
  b.name = "empty";
  std::string text = printPlan(std::vector<EntrySpec>{a, b});
  ParsedPlan parsed = parsePlan("# generated\n\n" + text + "\n   # trailing comment\n");
  if (!parsed)
    FAIL(parsed.error->toString());
  REQUIRE(parsed.entries.size() == 2);
  CHECK(parsed.find("empty") != nullptr);
  CHECK(parsed.find("empty")->signature.params().empty());
  CHECK(parsed.find("nope") == nullptr);
  CHECK(describe(parsed.entries[0]) == describe(a));
  // CRLF line ends and tabs read the same.
  std::string crlf;
  for (char c : text)
    crlf += c == '\n' ? std::string("\r\n") : c == ' ' ? std::string("\t") : std::string(1, c);
  ParsedPlan fromCrlf = parsePlan(crlf);
  if (!fromCrlf)
    FAIL(fromCrlf.error->toString());
  CHECK(printPlan(fromCrlf.entries) == text);
}

TEST_CASE("plan text reports every malformed input with line and column", "[plantext]") {
  // Header.
  CHECK(errorOf("") == "1:1: empty plan text: expected 'tilec-plan 1'");
  CHECK(errorOf("# only a comment\n") == "2:1: empty plan text: expected 'tilec-plan 1'");
  CHECK(errorOf("entry e\n") == "1:1: expected 'tilec-plan', found 'entry'");
  CHECK(errorOf("tilec-plan 2\n") ==
        "1:1: plan text version 2 is not supported (this runtime reads version 1)");
  CHECK(errorOf("tilec-plan\n") == "1:11: expected the format version, found end of line");
  CHECK(errorOf("tilec-plan 1 x\n") == "1:14: unexpected 'x' at the end of the line");
  // Entries.
  CHECK(errorOf(kHeader + "param a bf16 [] align 16 contiguous\n") == "2:1: expected 'entry', found 'param'");
  CHECK(errorOf(kHeader + "entry\n") == "2:6: expected an entry name, found end of line");
  CHECK(errorOf(kHeader + "entry 9e\n") == "2:7: expected an entry name (letters, digits, '_'), found '9e'");
  CHECK(errorOf(kHeader + "entry e\n") == "3:1: end of input inside entry 'e': expected 'end'");
  CHECK(errorOf(kHeader + "entry e\nend\nentry e\nend\n") == "4:7: a second entry named 'e'");
  CHECK(errorOf(kHeader + "entry e\nbogus\nend\n") ==
        "3:1: expected 'param', 'alloc', 'launch', 'free' or 'end', found 'bogus'");
  CHECK(errorOf(kHeader + "entry e\nend now\n") == "3:5: unexpected 'now' at the end of the line");
  // Parameters.
  CHECK(errorOf(kHeader + "entry e\nparam a bf17 [] align 16 contiguous\nend\n") ==
        "3:9: unknown dtype 'bf17' (known: bf16, f16, f32, f64, i8, i32, i64, u8, bool)");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [n 64] align 16 contiguous\nend\n") ==
        "3:17: expected ',', found '64'");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [n, ] align 16 contiguous\nend\n") ==
        "3:18: expected a dim ('?', an extent, a name or a {derived expression}), found ']'");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [n, 6x] align 16 contiguous\nend\n") ==
        "3:18: expected a static extent (an integer), found '6x'");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [n-1] align 16 contiguous\nend\n") ==
        "3:15: expected a dim ('?', an extent, a name or a {derived expression}), found 'n-1'");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [99999999999] align 16 contiguous\nend\n") ==
        "3:15: a static extent is 99999999999, outside 0..2147483647");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [1,2,3,4,5,6,7,8,9] align 16 contiguous\nend\n") ==
        "3:31: parameter 'a' has more than 8 dims");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [n align 16 contiguous\nend\n") ==
        "3:17: expected ',', found 'align'");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [] align 12 contiguous\nend\n") ==
        "3:23: alignment 12 is not a power of two");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [] align 0 contiguous\nend\n") ==
        "3:23: the alignment is 0, outside 1..1048576");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [] align 16\nend\n") ==
        "3:25: expected 'contiguous' or 'strided', found end of line");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [] contiguous\nend\n") ==
        "3:17: expected 'align', found 'contiguous'");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 []\nparam a f32 [] align 4 contiguous\nend\n") ==
        "3:16: expected 'align', found end of line");
  CHECK(errorOf(kHeader + "entry e\nparam a bf16 [] align 4 contiguous\nparam a f32 [] align 4 contiguous\nend\n") ==
        "4:7: a second parameter named 'a'");
  CHECK(errorOf(kHeader + kParams + "free 0\nparam c f32 [] align 4 contiguous\nend\n") ==
        "5:6: free of workspace 0, which is not allocated");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {4}\nfree 0\nparam c f32 [] align 4 contiguous\nend\n") ==
        "7:1: 'param' after the first step: parameters come first");
  // Lexical problems.
  CHECK(errorOf(kHeader + kParams + "alloc 0 {4\nend\n") == "5:9: '{' without a closing '}'");
  CHECK(errorOf(kHeader + kParams + "alloc 0 4}\nend\n") == "5:10: '}' without an opening '{'");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {4} \x01\nend\n") == "5:13: unexpected byte 0x01");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {4} \xc3\xa9\nend\n") == "5:13: unexpected byte 0xc3");
  // Allocations and frees.
  CHECK(errorOf(kHeader + kParams + "alloc 1 {4}\nend\n") ==
        "5:7: workspace ids are allocated in order: expected 0, found 1");
  CHECK(errorOf(kHeader + kParams + "alloc 0 4\nend\n") ==
        "5:9: expected the size in bytes as {expression}, found '4'");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {4} zero\nend\n") == "5:13: unexpected 'zero' at the end of the line");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {4}\nend\n") == "6:1: entry 'e' ends with workspace 0 never freed");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {4}\nfree 0\nfree 0\nend\n") ==
        "7:6: free of workspace 0, which is already freed");
  CHECK(errorOf(kHeader + kParams + "free x\nend\n") == "5:6: expected a workspace id (an integer), found 'x'");
  // Expressions.
  CHECK(errorOf(kHeader + kParams + "alloc 0 {4 * }\nfree 0\nend\n") ==
        "5:14: in the size in bytes: unexpected end");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {dim(0, 1) + foo(1, 2)}\nfree 0\nend\n") ==
        "5:22: in the size in bytes: unknown function 'foo' (known: floordiv, ceildiv, mod, min, max, dim, stride)");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {m * 4}\nfree 0\nend\n") ==
        "5:10: the size in bytes uses the dim name 'm', which no parameter declares (declared: n)");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {dim(2, 0)}\nfree 0\nend\n") ==
        "5:10: the size in bytes refers to argument #2, but the entry has 2");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {stride(1, 1)}\nfree 0\nend\n") ==
        "5:10: the size in bytes refers to axis 1 of argument #1 'b', which has rank 1");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {99999999999999999999}\nfree 0\nend\n") ==
        "5:10: in the size in bytes: integer out of range");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {" + std::string(2000, '(') + "}\nfree 0\nend\n") ==
        "5:10: the size in bytes is longer than 1024 characters");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {" + std::string(500, '(') + "1" + std::string(499, ')') +
                "}\nfree 0\nend\n") == "5:42: in the size in bytes: nested deeper than 32");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {" + std::string(1000, '-') + "}\nfree 0\nend\n") ==
        "5:42: in the size in bytes: nested deeper than 32");
  // Launches.
  const std::string launch = "launch k cubin 0 grid {1} {1} {1} block 1 1 1 smem {0} args";
  CHECK(parsePlan(kHeader + kParams + launch + "\nend\n"));
  CHECK(errorOf(kHeader + kParams + "launch k\nend\n") == "5:9: expected 'cubin', found end of line");
  CHECK(errorOf(kHeader + kParams + "launch k-1 cubin 0\nend\n") ==
        "5:8: expected a kernel name (letters, digits, '_'), found 'k-1'");
  CHECK(errorOf(kHeader + kParams + "launch k cubin 0 grid {1} {1} block 1 1 1 smem {0} args\nend\n") ==
        "5:31: expected grid.z as {expression}, found 'block'");
  CHECK(errorOf(kHeader + kParams + "launch k cubin 0 grid {1} {1} {1} block 0 1 1 smem {0} args\nend\n") ==
        "5:41: block.x is 0, outside 1..1024");
  CHECK(errorOf(kHeader + kParams + "launch k cubin 0 grid {1} {1} {1} block 1 1 2000 smem {0} args\nend\n") ==
        "5:45: block.z is 2000, outside 1..1024");
  CHECK(errorOf(kHeader + kParams + "launch k cubin 0 grid {1} {1} {1} block 1 1 1 args\nend\n") ==
        "5:47: expected 'smem', found 'args'");
  CHECK(errorOf(kHeader + kParams + "launch k cubin 0 grid {1} {1} {1} block 1 1 1 smem {0}\nend\n") ==
        "5:55: expected 'args', found end of line");
  CHECK(errorOf(kHeader + kParams + launch + " tensor 2\nend\n") ==
        "5:68: argument #2 does not exist: the entry has 2");
  CHECK(errorOf(kHeader + kParams + launch + " tensor\nend\n") ==
        "5:67: expected an argument index, found end of line");
  CHECK(errorOf(kHeader + kParams + launch + " workspace 0\nend\n") ==
        "5:71: launch uses workspace 0, which is not allocated");
  CHECK(errorOf(kHeader + kParams + "alloc 0 {4}\nfree 0\n" + launch + " workspace 0\nend\n") ==
        "7:71: launch uses workspace 0, which is already freed");
  CHECK(errorOf(kHeader + kParams + launch + " i32 5\nend\n") ==
        "5:65: expected an i32 argument as {expression}, found '5'");
  CHECK(errorOf(kHeader + kParams + launch + " i64 {n +}\nend\n") ==
        "5:69: in an i64 argument: unexpected end");
  CHECK(errorOf(kHeader + kParams + launch + " f32 {1}\nend\n") ==
        "5:61: expected a kernel argument ('tensor', 'workspace', 'i32' or 'i64'), found 'f32'");
  CHECK(errorOf(kHeader + kParams + launch + " tensor 0 ,\nend\n") ==
        "5:70: expected a kernel argument ('tensor', 'workspace', 'i32' or 'i64'), found ','");
}

TEST_CASE("plan text survives arbitrary mutations of a valid plan", "[plantext]") {
  const std::string text = printPlan(sampleEntry());
  std::mt19937 rng(12345);
  const std::string alphabet = "{}[], \n#?-0123456789azAZ_()*+";
  int parsedOk = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string mutated = text;
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !mutated.empty(); ++e) {
      std::size_t at = rng() % mutated.size();
      switch (rng() % 4) {
      case 0: mutated.erase(at, 1 + rng() % 8); break;
      case 1: mutated.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      case 2: mutated[at] = static_cast<char>(rng() % 256); break;
      default: mutated = mutated.substr(0, at); break;
      }
    }
    ParsedPlan parsed;
    REQUIRE_NOTHROW(parsed = parsePlan(mutated));
    if (parsed) {
      ++parsedOk;
      // Whatever parses prints and re-parses to the same entries.
      ParsedPlan again = parsePlan(printPlan(parsed.entries));
      REQUIRE(again);
      CHECK(printPlan(again.entries) == printPlan(parsed.entries));
    } else {
      CHECK(parsed.error->line >= 1);
      CHECK(parsed.error->column >= 1);
      CHECK_FALSE(parsed.error->message.empty());
    }
  }
  CHECK(parsedOk < 3000);
}

TEST_CASE("plan text reads derived dims and checks their names", "[plantext]") {
  ParsedPlan parsed = parsePlan(kHeader + "entry e\nparam q bf16 [h, 64] align 16 contiguous\n"
                                          "param k bf16 [{floordiv(h, 4)}, 64] align 16 contiguous\nend\n");
  if (!parsed)
    FAIL(parsed.error->toString());
  CHECK(parsed.entries[0].signature.params()[1].dims[0].kind == DimSpec::Kind::Derived);
  CHECK(errorOf(kHeader + "entry e\nparam k bf16 [{floordiv(h, 4)}] align 16 contiguous\nend\n") ==
        "4:1: parameter 'k': derived dim '{floordiv(h, 4)}' uses a name that no parameter declares");
  CHECK(errorOf(kHeader + "entry e\nparam k bf16 [{h +}] align 16 contiguous\nend\n") ==
        "3:19: in a derived dim: unexpected end");
  // A name declared by a later parameter is fine (the front end binds names at their first bare occurrence).
  CHECK(parsePlan(kHeader + "entry e\nparam p f32 [{2 * s + 1}] align 4 contiguous\n"
                            "param q f32 [s] align 4 contiguous\nend\n"));
}
