#include "tilec/runtime/Npy.h"

#include "tilec/runtime/Error.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string_view>

namespace tilec::runtime {

namespace {

// The .npy type string of each dtype as written; bf16 is widened to float32.
const char *descrOf(DType dtype) {
  switch (dtype) {
  case DType::BF16:
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::F64:
    return "<f8";
  case DType::I8:
    return "|i1";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::U8:
    return "|u1";
  case DType::Bool:
    return "|b1";
  }
  return "";
}

std::string_view trim(std::string_view text, std::string_view chars = " \t") {
  while (!text.empty() && chars.find(text.front()) != std::string_view::npos)
    text.remove_prefix(1);
  while (!text.empty() && chars.find(text.back()) != std::string_view::npos)
    text.remove_suffix(1);
  return text;
}

// The value of `key` in the header dict: 'descr': '<f4' -> "'<f4'", 'shape': (2, 3) -> "(2, 3)".
std::optional<std::string_view> field(std::string_view header, const std::string &key) {
  std::size_t at = header.find("'" + key + "'");
  if (at == std::string_view::npos)
    return std::nullopt;
  std::string_view rest = trim(header.substr(at + key.size() + 2));
  if (rest.empty() || rest.front() != ':')
    return std::nullopt;
  rest = trim(rest.substr(1));
  std::size_t end = !rest.empty() && rest.front() == '(' ? rest.find(')') : rest.find_first_of(",}");
  if (end == std::string_view::npos)
    return std::nullopt;
  return trim(rest.substr(0, end + (rest.front() == '(' ? 1 : 0)));
}

} // namespace

HostTensor readNpy(const std::string &path, DType want) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw Error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::string data;
  try {
    data.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  } catch (const std::exception &error) {
    throw Error(fmt::format("cannot read '{}': {}", path, error.what()));
  }
  if (file.bad())
    throw Error(fmt::format("cannot read '{}'", path));
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0)
    throw Error(fmt::format("'{}' is not a .npy file", path));
  unsigned major = static_cast<unsigned char>(data[6]);
  std::size_t headerLength = 0, headerStart = 0;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(data[8]) | (static_cast<unsigned char>(data[9]) << 8);
    headerStart = 10;
  } else if ((major == 2 || major == 3) && data.size() >= 12) {
    for (int i = 0; i < 4; ++i)
      headerLength |= std::size_t(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    throw Error(fmt::format("'{}': unsupported .npy version {}", path, major));
  }
  if (headerStart + headerLength > data.size())
    throw Error(fmt::format("'{}': truncated header", path));
  std::string_view header(data.data() + headerStart, headerLength);
  auto descr = field(header, "descr");
  auto fortran = field(header, "fortran_order");
  auto shapeText = field(header, "shape");
  if (!descr || !fortran || !shapeText)
    throw Error(fmt::format("'{}': malformed header", path));
  if (*fortran != "False")
    throw Error(fmt::format("'{}': Fortran-order arrays are not supported", path));
  std::string d(trim(*descr, "'\""));
  std::vector<std::int64_t> shape;
  std::string_view dims = trim(*shapeText, "() ");
  while (!dims.empty()) {
    std::size_t comma = dims.find(',');
    std::string_view item = trim(dims.substr(0, comma));
    dims = comma == std::string_view::npos ? std::string_view() : dims.substr(comma + 1);
    if (item.empty())
      continue;
    std::int64_t value = 0;
    for (char c : item) {
      if (c < '0' || c > '9' || value > (INT64_MAX - 9) / 10)
        throw Error(fmt::format("'{}': bad shape {}", path, *shapeText));
      value = value * 10 + (c - '0');
    }
    shape.push_back(value);
  }
  bool compatible = d == descrOf(want) || (d == "<b1" && want == DType::Bool) ||
                    (d == "<u1" && want == DType::U8) || (d == "<i1" && want == DType::I8);
  if (!compatible)
    throw Error(fmt::format("'{}' holds '{}' but the parameter is {}{}", path, d, dtypeName(want),
                            want == DType::BF16 ? " (bf16 reads float32 files)" : ""));
  std::size_t fileElement = want == DType::BF16 ? 4 : dtypeSize(want);
  std::size_t payload = data.size() - headerStart - headerLength;
  std::int64_t count = 1;
  for (std::int64_t extent : shape)
    if (__builtin_mul_overflow(count, extent, &count))
      throw Error(fmt::format("'{}': shape {} is too large", path, *shapeText));
  if (static_cast<std::uint64_t>(count) > payload / fileElement)
    throw Error(fmt::format("'{}': truncated data ({} bytes for {} elements)", path, payload, count));
  HostTensor tensor(want, shape);
  const char *bytes = data.data() + headerStart + headerLength;
  if (want == DType::BF16) {
    for (std::int64_t i = 0; i < count; ++i) {
      float f;
      std::memcpy(&f, bytes + 4 * i, 4);
      tensor.set(i, f);
    }
  } else {
    std::memcpy(tensor.bytes.data(), bytes, tensor.bytes.size());
  }
  return tensor;
}

void writeNpy(const std::string &path, const HostTensor &tensor) {
  std::string shape = "(";
  for (std::int64_t d : tensor.shape)
    shape += std::to_string(d) + ",";
  if (tensor.shape.size() > 1)
    shape.pop_back();
  shape += ")";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descrOf(tensor.dtype),
                                   shape);
  // Padded so that the data starts at a multiple of 64 bytes, as NumPy writes it.
  std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file)
    throw Error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  file << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff) << char((header.size() >> 8) & 0xff)
       << header;
  if (tensor.dtype == DType::BF16) {
    for (std::int64_t i = 0; i < tensor.numel(); ++i) {
      float f = static_cast<float>(tensor.get(i));
      file.write(reinterpret_cast<const char *>(&f), 4);
    }
  } else {
    file.write(reinterpret_cast<const char *>(tensor.bytes.data()), static_cast<std::streamsize>(tensor.bytes.size()));
  }
  file.close();
  if (!file)
    throw Error(fmt::format("cannot write '{}'", path));
}

} // namespace tilec::runtime
