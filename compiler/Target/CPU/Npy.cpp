#include "tilec/Target/CPU/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

namespace tilec::cpu {

static llvm::Error error(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

static const char *descrOf(DType d) {
  switch (d) {
  case DType::BF16: return "<f4"; // widened: numpy has no bf16
  case DType::F16: return "<f2";
  case DType::F32: return "<f4";
  case DType::I32: return "<i4";
  case DType::Bool: return "|b1";
  }
  return "";
}

/// The value of `key` in the header dict, e.g. 'descr': '<f4' -> "'<f4'".
static std::optional<llvm::StringRef> field(llvm::StringRef header,
                                            llvm::StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest = header.drop_front(at + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  size_t end = rest.starts_with("(") ? rest.find(')') + 1 : rest.find_first_of(",}");
  if (end == llvm::StringRef::npos)
    return std::nullopt;
  return rest.take_front(end).trim();
}

llvm::Expected<HostTensor> readNpy(const std::string &path, DType want) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return error("cannot read '" + path + "': " + buffer.getError().message());
  llvm::StringRef data = (*buffer)->getBuffer();
  if (!data.starts_with("\x93NUMPY") || data.size() < 10)
    return error("'" + path + "' is not a .npy file");
  unsigned major = static_cast<unsigned char>(data[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(data[8]) |
                (static_cast<unsigned char>(data[9]) << 8);
    headerStart = 10;
  } else if ((major == 2 || major == 3) && data.size() >= 12) {
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= size_t(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return error("'" + path + "': unsupported .npy version " + llvm::Twine(major));
  }
  if (headerStart + headerLen > data.size())
    return error("'" + path + "': truncated header");
  llvm::StringRef header = data.substr(headerStart, headerLen);
  auto descr = field(header, "descr");
  auto fortran = field(header, "fortran_order");
  auto shapeText = field(header, "shape");
  if (!descr || !fortran || !shapeText)
    return error("'" + path + "': malformed header");
  if (*fortran != "False")
    return error("'" + path + "': Fortran-order arrays are not supported");
  llvm::StringRef d = descr->trim("'\"");
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  shapeText->trim("() ").split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef p : parts) {
    int64_t v;
    if (p.trim().getAsInteger(10, v) || v < 0)
      return error("'" + path + "': bad shape " + *shapeText);
    shape.push_back(v);
  }
  size_t fileElem = d == "<f4" || d == "<i4" ? 4 : d == "<f2" ? 2
                    : (d == "|b1" || d == "|u1") ? 1 : 0;
  if (!fileElem)
    return error("'" + path + "': unsupported dtype '" + d + "'");
  bool compatible = llvm::StringRef(descrOf(want)) == d ||
                    (want == DType::BF16 && d == "<f4");
  if (!compatible)
    return error("'" + path + "' holds '" + d + "' but the parameter is " +
                 dtypeName(want));
  HostTensor t(want, shape);
  llvm::StringRef payload = data.drop_front(headerStart + headerLen);
  if (payload.size() < size_t(t.numel()) * fileElem)
    return error("'" + path + "': truncated data (" +
                 llvm::Twine(payload.size()) + " bytes for " +
                 llvm::Twine(t.numel()) + " elements)");
  if (want == DType::BF16) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      float f;
      std::memcpy(&f, payload.data() + 4 * i, 4);
      t.set(i, f);
    }
  } else {
    std::memcpy(t.bytes.data(), payload.data(), t.bytes.size());
  }
  return t;
}

llvm::Error writeNpy(const std::string &path, const HostTensor &t) {
  std::string shape = "(";
  for (int64_t d : t.shape)
    shape += std::to_string(d) + ",";
  if (t.shape.size() > 1)
    shape.pop_back();
  shape += ")";
  std::string header = "{'descr': '" + std::string(descrOf(t.dtype)) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return error("cannot write '" + path + "': " + ec.message());
  os << "\x93NUMPY" << char(1) << char(0);
  os << char(header.size() & 0xff) << char((header.size() >> 8) & 0xff);
  os << header;
  if (t.dtype == DType::BF16) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      float f = static_cast<float>(t.get(i));
      os.write(reinterpret_cast<const char *>(&f), 4);
    }
  } else {
    os.write(reinterpret_cast<const char *>(t.bytes.data()), t.bytes.size());
  }
  if (os.has_error())
    return error("cannot write '" + path + "'");
  return llvm::Error::success();
}

} // namespace tilec::cpu
