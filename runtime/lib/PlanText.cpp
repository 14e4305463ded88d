// The text form of entries: printPlan / parsePlan (PlanText.h, docs/runtime.md "Plan text").
#include "tilec/runtime/PlanText.h"

#include "tilec/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace tilec::runtime {

namespace {

constexpr DType kAllDTypes[] = {DType::BF16, DType::F16, DType::F32, DType::F64, DType::I8,
                                DType::I32,  DType::I64, DType::U8,  DType::Bool};
// Longer expressions are rejected before Expr::parse, whose recursion depth follows the text.
constexpr std::size_t kMaxExprLength = 1024;
constexpr std::int64_t kMaxIntLiteral = (std::int64_t(1) << 31) - 1;

std::string braced(const Expr &expr) { return "{" + expr.toString() + "}"; }

void printEntry(std::string &out, const EntrySpec &entry) {
  out += "entry " + entry.name + "\n";
  for (const ParamSpec &param : entry.signature.params()) {
    std::string dims;
    for (std::size_t i = 0; i < param.dims.size(); ++i)
      dims += (i ? ", " : "") + param.dims[i].toString();
    out += fmt::format("param {} {} [{}] align {} {}\n", param.name, dtypeName(param.dtype), dims, param.alignment,
                       param.contiguous ? "contiguous" : "strided");
  }
  for (const PlanStep &step : entry.plan.steps()) {
    if (const auto *alloc = std::get_if<AllocStep>(&step)) {
      out += fmt::format("alloc {} {}{}\n", alloc->workspace, braced(alloc->bytes), alloc->zeroFill ? " zeroed" : "");
    } else if (const auto *launch = std::get_if<LaunchStep>(&step)) {
      out += fmt::format("launch {} cubin {} grid {} {} {} block {} {} {} smem {} args", launch->function,
                         launch->cubin, braced(launch->grid[0]), braced(launch->grid[1]), braced(launch->grid[2]),
                         launch->block[0], launch->block[1], launch->block[2], braced(launch->dynamicSharedBytes));
      for (const KernelArg &arg : launch->args) {
        switch (arg.kind) {
        case KernelArg::Kind::TensorData:
          out += fmt::format(" tensor {}", arg.index);
          break;
        case KernelArg::Kind::Workspace:
          out += fmt::format(" workspace {}", arg.index);
          break;
        case KernelArg::Kind::I32:
          out += " i32 " + braced(arg.value);
          break;
        case KernelArg::Kind::I64:
          out += " i64 " + braced(arg.value);
          break;
        }
      }
      out += "\n";
    } else if (const auto *free = std::get_if<FreeStep>(&step)) {
      out += fmt::format("free {}\n", free->workspace);
    }
  }
  out += "end\n";
}

// ---- parsing ----------------------------------------------------------------------------------------------------

struct Token {
  enum class Kind { Word, Punct, Expr } kind;
  std::string text; // Word: the word; Punct: the character; Expr: the text between the braces
  int column = 0;   // 1-based column of the token's first character (for Expr: of the text after '{')
};

struct Failure {
  int column;
  std::string message;
};

bool isIdentifier(const std::string &word) {
  if (word.empty() || !(std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_'))
    return false;
  return std::all_of(word.begin(), word.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Splits one line into words, single punctuation characters ([ ] ,) and {expressions}.
std::vector<Token> tokenize(std::string_view line) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    int column = static_cast<int>(i) + 1;
    if (c == '{') {
      std::size_t close = line.find('}', i + 1);
      if (close == std::string_view::npos)
        throw Failure{column, "'{' without a closing '}'"};
      tokens.push_back({Token::Kind::Expr, std::string(line.substr(i + 1, close - i - 1)), column + 1});
      i = close + 1;
      continue;
    }
    if (c == '}')
      throw Failure{column, "'}' without an opening '{'"};
    if (c == '[' || c == ']' || c == ',') {
      tokens.push_back({Token::Kind::Punct, std::string(1, c), column});
      ++i;
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      throw Failure{column, fmt::format("unexpected byte 0x{:02x}", static_cast<unsigned char>(c))};
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && line[i] != '{' &&
           line[i] != '}' && line[i] != '[' && line[i] != ']' && line[i] != ',' &&
           static_cast<unsigned char>(line[i]) >= 0x20 && static_cast<unsigned char>(line[i]) < 0x7f)
      ++i;
    tokens.push_back({Token::Kind::Word, std::string(line.substr(start, i - start)), column});
  }
  return tokens;
}

class LineReader {
public:
  LineReader(std::vector<Token> tokens, int endColumn) : tokens_(std::move(tokens)), endColumn_(endColumn) {}

  bool atEnd() const { return next_ == tokens_.size(); }
  int column() const { return atEnd() ? endColumn_ : tokens_[next_].column; }
  [[noreturn]] void fail(const std::string &message) const { throw Failure{column(), message}; }
  std::string found() const {
    if (atEnd())
      return "end of line";
    const Token &token = tokens_[next_];
    return token.kind == Token::Kind::Expr ? "{" + token.text + "}" : "'" + token.text + "'";
  }

  bool peekWord(const char *word) const {
    return !atEnd() && tokens_[next_].kind == Token::Kind::Word && tokens_[next_].text == word;
  }
  bool peekPunct(char c) const {
    return !atEnd() && tokens_[next_].kind == Token::Kind::Punct && tokens_[next_].text[0] == c;
  }
  void expectWord(const char *word) {
    if (!peekWord(word))
      fail(fmt::format("expected '{}', found {}", word, found()));
    ++next_;
  }
  void expectPunct(char c) {
    if (!peekPunct(c))
      fail(fmt::format("expected '{}', found {}", c, found()));
    ++next_;
  }
  const Token &word(const std::string &what) {
    if (atEnd() || tokens_[next_].kind != Token::Kind::Word)
      fail(fmt::format("expected {}, found {}", what, found()));
    return tokens_[next_++];
  }
  std::string identifier(const std::string &what) {
    const Token &token = word(what);
    if (!isIdentifier(token.text))
      throw Failure{token.column, fmt::format("expected {} (letters, digits, '_'), found '{}'", what, token.text)};
    return token.text;
  }
  std::int64_t integer(const std::string &what, std::int64_t lowest, std::int64_t highest) {
    const Token &token = word(what);
    std::int64_t value = 0;
    bool digits = !token.text.empty() && token.text.size() <= 12 &&
                  std::all_of(token.text.begin(), token.text.end(),
                              [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (!digits)
      throw Failure{token.column, fmt::format("expected {} (an integer), found '{}'", what, token.text)};
    for (char c : token.text)
      value = value * 10 + (c - '0');
    if (value < lowest || value > highest)
      throw Failure{token.column, fmt::format("{} is {}, outside {}..{}", what, value, lowest, highest)};
    return value;
  }
  bool peekExpression() const { return !atEnd() && tokens_[next_].kind == Token::Kind::Expr; }
  const Token &expression(const std::string &what) {
    if (atEnd() || tokens_[next_].kind != Token::Kind::Expr)
      fail(fmt::format("expected {} as {{expression}}, found {}", what, found()));
    return tokens_[next_++];
  }
  void expectEnd() {
    if (!atEnd())
      fail(fmt::format("unexpected {} at the end of the line", found()));
  }

private:
  std::vector<Token> tokens_;
  std::size_t next_ = 0;
  int endColumn_;
};

class PlanParser {
public:
  ParsedPlan parse(std::string_view text) {
    ParsedPlan result;
    int lineNumber = 0;
    std::size_t position = 0;
    bool sawHeader = false;
    try {
      while (position < text.size()) {
        std::size_t newline = text.find('\n', position);
        std::string_view line =
            text.substr(position, newline == std::string_view::npos ? std::string_view::npos : newline - position);
        position = newline == std::string_view::npos ? text.size() : newline + 1;
        ++lineNumber;
        line_ = lineNumber;
        std::size_t first = line.find_first_not_of(" \t\r");
        if (first == std::string_view::npos || line[first] == '#')
          continue;
        LineReader reader(tokenize(line), static_cast<int>(line.size()) + 1);
        if (!sawHeader) {
          reader.expectWord("tilec-plan");
          std::int64_t version = reader.integer("the format version", 0, kMaxIntLiteral);
          if (version != kPlanTextVersion)
            throw Failure{1 + static_cast<int>(first), fmt::format("plan text version {} is not supported (this "
                                                                   "runtime reads version {})",
                                                                   version, kPlanTextVersion)};
          reader.expectEnd();
          sawHeader = true;
          continue;
        }
        parseLine(reader, result);
      }
      ++lineNumber;
      line_ = lineNumber;
      if (!sawHeader)
        throw Failure{1, "empty plan text: expected 'tilec-plan 1'"};
      if (inEntry_)
        throw Failure{1, fmt::format("end of input inside entry '{}': expected 'end'", entry_.name)};
    } catch (const Failure &failure) {
      result.entries.clear();
      result.error = PlanTextError{line_, failure.column, failure.message};
    }
    return result;
  }

private:
  void parseLine(LineReader &reader, ParsedPlan &result) {
    if (!inEntry_) {
      reader.expectWord("entry");
      int column = reader.column();
      entry_ = EntrySpec();
      entry_.name = reader.identifier("an entry name");
      if (result.find(entry_.name))
        throw Failure{column, fmt::format("a second entry named '{}'", entry_.name)};
      reader.expectEnd();
      inEntry_ = true;
      params_.clear();
      dimNames_.clear();
      live_.clear();
      freed_.clear();
      sawStep_ = false;
      return;
    }
    if (reader.peekWord("param"))
      return parseParam(reader);
    if (reader.peekWord("end")) {
      int column = reader.column();
      reader.expectWord("end");
      reader.expectEnd();
      finishSignature(column);
      if (!live_.empty())
        throw Failure{column, fmt::format("entry '{}' ends with workspace {} never freed", entry_.name,
                                          *live_.begin())};
      result.entries.push_back(std::move(entry_));
      inEntry_ = false;
      return;
    }
    int column = reader.column();
    if (!(reader.peekWord("alloc") || reader.peekWord("launch") || reader.peekWord("free")))
      reader.fail(fmt::format("expected 'param', 'alloc', 'launch', 'free' or 'end', found {}", reader.found()));
    finishSignature(column);
    if (reader.peekWord("alloc"))
      parseAlloc(reader);
    else if (reader.peekWord("launch"))
      parseLaunch(reader);
    else
      parseFree(reader);
    reader.expectEnd();
  }

  void parseParam(LineReader &reader) {
    int column = reader.column();
    reader.expectWord("param");
    if (sawStep_)
      throw Failure{column, "'param' after the first step: parameters come first"};
    ParamSpec param;
    int nameColumn = reader.column();
    param.name = reader.identifier("a parameter name");
    for (const ParamSpec &other : params_)
      if (other.name == param.name)
        throw Failure{nameColumn, fmt::format("a second parameter named '{}'", param.name)};
    const Token &dtype = reader.word("a dtype");
    auto known = std::find_if(std::begin(kAllDTypes), std::end(kAllDTypes),
                              [&](DType d) { return dtype.text == dtypeName(d); });
    if (known == std::end(kAllDTypes))
      throw Failure{dtype.column, fmt::format("unknown dtype '{}' (known: bf16, f16, f32, f64, i8, i32, i64, u8, "
                                              "bool)",
                                              dtype.text)};
    param.dtype = *known;
    reader.expectPunct('[');
    while (!reader.peekPunct(']')) {
      if (!param.dims.empty())
        reader.expectPunct(',');
      if (param.dims.size() == static_cast<std::size_t>(TensorView::kMaxRank))
        reader.fail(fmt::format("parameter '{}' has more than {} dims", param.name, TensorView::kMaxRank));
      if (reader.peekWord("?")) {
        reader.expectWord("?");
        param.dims.push_back(DimSpec::any());
        continue;
      }
      if (reader.peekExpression()) {
        param.dims.push_back(DimSpec::derived(expression(reader, "a derived dim", /*checkNames=*/false)));
        continue;
      }
      int dimColumn = reader.column();
      const Token &dim = reader.word("a dim ('?', an extent, a name or a {derived expression})");
      if (std::isdigit(static_cast<unsigned char>(dim.text[0]))) {
        LineReader single({dim}, dim.column);
        param.dims.push_back(DimSpec(single.integer("a static extent", 0, kMaxIntLiteral)));
      } else if (isIdentifier(dim.text)) {
        param.dims.push_back(DimSpec(dim.text));
        if (std::find(dimNames_.begin(), dimNames_.end(), dim.text) == dimNames_.end())
          dimNames_.push_back(dim.text);
      } else {
        throw Failure{dimColumn, fmt::format("expected a dim ('?', an extent, a name or a {{derived expression}}), found '{}'", dim.text)};
      }
    }
    reader.expectPunct(']');
    reader.expectWord("align");
    int alignColumn = reader.column();
    param.alignment = static_cast<std::size_t>(reader.integer("the alignment", 1, 1 << 20));
    if ((param.alignment & (param.alignment - 1)) != 0)
      throw Failure{alignColumn, fmt::format("alignment {} is not a power of two", param.alignment)};
    if (reader.peekWord("contiguous"))
      reader.expectWord("contiguous");
    else if (reader.peekWord("strided")) {
      reader.expectWord("strided");
      param.contiguous = false;
    } else
      reader.fail(fmt::format("expected 'contiguous' or 'strided', found {}", reader.found()));
    reader.expectEnd();
    params_.push_back(std::move(param));
  }

  void finishSignature(int column) {
    if (sawStep_)
      return;
    sawStep_ = true;
    try {
      entry_.signature = Signature(params_);
    } catch (const Error &error) {
      throw Failure{column, error.what()};
    }
  }

  // `checkNames` off for derived dims, whose names may be declared by later parameters (Signature checks them).
  Expr expression(LineReader &reader, const std::string &what, bool checkNames = true) {
    const Token &token = reader.expression(what);
    if (token.text.size() > kMaxExprLength)
      throw Failure{token.column, fmt::format("{} is longer than {} characters", what, kMaxExprLength)};
    Expr expr;
    try {
      expr = Expr::parse(token.text);
    } catch (const PlanError &error) {
      // "cannot parse expression '...' at column N: what"
      std::string message = error.what();
      int column = token.column;
      std::size_t at = message.rfind(" at column ");
      if (at != std::string::npos) {
        std::size_t colon = message.find(": ", at);
        try {
          column += std::stoi(message.substr(at + 11)) - 1;
        } catch (const std::exception &) {
        }
        if (colon != std::string::npos)
          message = message.substr(colon + 2);
      }
      throw Failure{column, fmt::format("in {}: {}", what, message)};
    }
    for (const Expr::Token &t : expr.tokens()) {
      if (t.op == Expr::Op::Symbol && checkNames &&
          std::find(dimNames_.begin(), dimNames_.end(), t.symbol) == dimNames_.end()) {
        std::string names;
        for (const std::string &name : dimNames_)
          names += (names.empty() ? "" : ", ") + name;
        throw Failure{token.column, fmt::format("{} uses the dim name '{}', which no parameter declares{}", what,
                                                t.symbol, names.empty() ? "" : " (declared: " + names + ")")};
      }
      if (t.op == Expr::Op::Dim || t.op == Expr::Op::Stride) {
        if (t.arg < 0 || static_cast<std::size_t>(t.arg) >= params_.size())
          throw Failure{token.column, fmt::format("{} refers to argument #{}, but the entry has {}", what, t.arg,
                                                  params_.size())};
        const ParamSpec &param = params_[t.arg];
        if (t.axis < 0 || static_cast<std::size_t>(t.axis) >= param.dims.size())
          throw Failure{token.column, fmt::format("{} refers to axis {} of argument #{} '{}', which has rank {}", what,
                                                  t.axis, t.arg, param.name, param.dims.size())};
      }
    }
    return expr;
  }

  int liveWorkspace(LineReader &reader, const char *use) {
    int column = reader.column();
    int id = static_cast<int>(reader.integer("a workspace id", 0, kMaxIntLiteral));
    if (!live_.count(id))
      throw Failure{column, fmt::format("{} workspace {}, which is {}", use, id,
                                        freed_.count(id) ? "already freed" : "not allocated")};
    return id;
  }

  void parseAlloc(LineReader &reader) {
    reader.expectWord("alloc");
    int column = reader.column();
    int id = static_cast<int>(reader.integer("a workspace id", 0, kMaxIntLiteral));
    if (id != entry_.plan.workspaceCount())
      throw Failure{column, fmt::format("workspace ids are allocated in order: expected {}, found {}",
                                        entry_.plan.workspaceCount(), id)};
    Expr bytes = expression(reader, "the size in bytes");
    bool zeroed = false;
    if (reader.peekWord("zeroed")) {
      reader.expectWord("zeroed");
      zeroed = true;
    }
    entry_.plan.alloc(std::move(bytes), zeroed);
    live_.insert(id);
  }

  void parseLaunch(LineReader &reader) {
    reader.expectWord("launch");
    LaunchStep step;
    step.function = reader.identifier("a kernel name");
    reader.expectWord("cubin");
    step.cubin = static_cast<int>(reader.integer("the CUBIN index", 0, kMaxIntLiteral));
    reader.expectWord("grid");
    for (int i = 0; i < 3; ++i)
      step.grid[i] = expression(reader, fmt::format("grid.{}", "xyz"[i]));
    reader.expectWord("block");
    for (int i = 0; i < 3; ++i)
      step.block[i] = static_cast<unsigned>(reader.integer(fmt::format("block.{}", "xyz"[i]), 1, 1024));
    reader.expectWord("smem");
    step.dynamicSharedBytes = expression(reader, "the dynamic shared memory size");
    reader.expectWord("args");
    while (!reader.atEnd()) {
      if (reader.peekWord("tensor")) {
        reader.expectWord("tensor");
        int column = reader.column();
        int index = static_cast<int>(reader.integer("an argument index", 0, kMaxIntLiteral));
        if (static_cast<std::size_t>(index) >= params_.size())
          throw Failure{column, fmt::format("argument #{} does not exist: the entry has {}", index, params_.size())};
        step.args.push_back(KernelArg::tensor(index));
      } else if (reader.peekWord("workspace")) {
        reader.expectWord("workspace");
        step.args.push_back(KernelArg::workspace(liveWorkspace(reader, "launch uses")));
      } else if (reader.peekWord("i32")) {
        reader.expectWord("i32");
        step.args.push_back(KernelArg::i32(expression(reader, "an i32 argument")));
      } else if (reader.peekWord("i64")) {
        reader.expectWord("i64");
        step.args.push_back(KernelArg::i64(expression(reader, "an i64 argument")));
      } else {
        reader.fail(fmt::format("expected a kernel argument ('tensor', 'workspace', 'i32' or 'i64'), found {}",
                                reader.found()));
      }
    }
    entry_.plan.launch(std::move(step));
  }

  void parseFree(LineReader &reader) {
    reader.expectWord("free");
    int id = liveWorkspace(reader, "free of");
    live_.erase(id);
    freed_.insert(id);
    entry_.plan.free(id);
  }

  int line_ = 0;
  bool inEntry_ = false;
  bool sawStep_ = false;
  EntrySpec entry_;
  std::vector<ParamSpec> params_;
  std::vector<std::string> dimNames_;
  std::set<int> live_, freed_;
};

} // namespace

std::string printPlan(const EntrySpec &entry) { return printPlan(std::vector<EntrySpec>{entry}); }

std::string printPlan(const std::vector<EntrySpec> &entries) {
  std::string out = fmt::format("tilec-plan {}\n", kPlanTextVersion);
  for (const EntrySpec &entry : entries) {
    out += "\n";
    printEntry(out, entry);
  }
  return out;
}

std::string PlanTextError::toString() const { return fmt::format("{}:{}: {}", line, column, message); }

const EntrySpec *ParsedPlan::find(const std::string &name) const {
  for (const EntrySpec &entry : entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

ParsedPlan parsePlan(std::string_view text) { return PlanParser().parse(text); }

} // namespace tilec::runtime
