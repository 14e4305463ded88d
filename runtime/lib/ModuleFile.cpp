#include "tilec/runtime/ModuleFile.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/PlanText.h"
#include "tilec/runtime/Sha256.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace tilec::runtime {

namespace {

std::string checksum(std::string_view bytes) { return Sha256::hex(Sha256::of(bytes)); }

// Reads "<words>\n" at `pos`; throws naming the file when there is no complete line.
std::vector<std::string> headerLine(std::string_view bytes, std::size_t &pos, const std::string &name) {
  std::size_t end = bytes.find('\n', pos);
  if (end == std::string_view::npos || end - pos > 256)
    throw Error(fmt::format("{}: not a tilec module file, or truncated (no header line at byte {})", name, pos));
  std::istringstream line(std::string(bytes.substr(pos, end - pos)));
  pos = end + 1;
  std::vector<std::string> words;
  for (std::string w; line >> w;)
    words.push_back(w);
  return words;
}

std::size_t parseSize(const std::string &text, const std::string &name) {
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos)
    throw Error(fmt::format("{}: bad section size '{}'", name, text));
  return static_cast<std::size_t>(std::stoull(text));
}

std::string_view section(std::string_view bytes, std::size_t &pos, std::size_t size, const std::string &sum,
                         const std::string &what, const std::string &name) {
  if (pos + size + 1 > bytes.size() || bytes[pos + size] != '\n')
    throw Error(fmt::format("{}: truncated {} section ({} bytes announced at byte {})", name, what, size, pos));
  std::string_view data = bytes.substr(pos, size);
  pos += size + 1;
  if (checksum(data) != sum)
    throw Error(fmt::format("{}: the {} section is damaged (checksum mismatch)", name, what));
  return data;
}

} // namespace

std::string writeModuleFile(const ModuleFileContents &contents) {
  std::string out = fmt::format("tilec-module {}\n", kModuleFileVersion);
  for (const auto &cubin : contents.cubins) {
    std::string_view image(cubin->image.data(), cubin->image.size());
    out += fmt::format("cubin {} {} {}\n", cubin->arch, image.size(), checksum(image));
    out.append(image);
    out += '\n';
  }
  std::string plan = printPlan(contents.entries);
  out += fmt::format("plan {} {}\n", plan.size(), checksum(plan));
  out += plan;
  out += '\n';
  return out;
}

ModuleFileContents readModuleFile(std::string_view bytes, const std::string &name) {
  std::size_t pos = 0;
  std::vector<std::string> magic = headerLine(bytes, pos, name);
  if (magic.size() != 2 || magic[0] != "tilec-module")
    throw Error(fmt::format("{}: not a tilec module file (no 'tilec-module' header)", name));
  if (magic[1] != std::to_string(kModuleFileVersion))
    throw Error(fmt::format("{}: module file version {} is not supported (this runtime reads version {})", name,
                            magic[1], kModuleFileVersion));
  ModuleFileContents contents;
  while (true) {
    std::vector<std::string> head = headerLine(bytes, pos, name);
    if (head.size() == 4 && head[0] == "cubin") {
      std::string_view image = section(bytes, pos, parseSize(head[2], name), head[3],
                                       "CUBIN #" + std::to_string(contents.cubins.size()), name);
      auto cubin = std::make_shared<Cubin>();
      cubin->image.assign(image.begin(), image.end());
      cubin->arch = head[1];
      contents.cubins.push_back(std::move(cubin));
    } else if (head.size() == 3 && head[0] == "plan") {
      std::string_view text = section(bytes, pos, parseSize(head[1], name), head[2], "plan", name);
      ParsedPlan parsed = parsePlan(text);
      if (!parsed)
        throw Error(fmt::format("{}: plan section: {}", name, parsed.error->toString()));
      contents.entries = std::move(parsed.entries);
      if (pos != bytes.size())
        throw Error(fmt::format("{}: unexpected data after the plan section", name));
      return contents;
    } else {
      throw Error(fmt::format("{}: unknown section header at byte {}", name, pos));
    }
  }
}

std::shared_ptr<Module> loadModuleFile(const std::string &path, std::string driverLibrary) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(fmt::format("cannot open module file '{}'", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  ModuleFileContents contents = readModuleFile(bytes.str(), path);
  return std::make_shared<Module>(std::move(contents.cubins), std::move(contents.entries), std::move(driverLibrary));
}

} // namespace tilec::runtime
