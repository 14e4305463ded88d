#!/usr/bin/env python3
"""Checks that the documentation stays readable by someone outside the team (ctest `docs.process-words`).

1. Process words: no text file under README.md, docs/ and the source folders names a numbered work round (the word
   "session" and a number, or an "s<N>-" prefix), an issue by number ("issue" and a number), or a section of a design
   document that is not in the repository ("DESIGN" or "DESIGN.md" and a section sign): a reader outside the team
   cannot resolve any of them. PROCESS_WORDS is the pattern; a genuine use goes into ALLOW, with its reason.
2. Data under docs/: at most MAX_DATA_FILES files that are not Markdown (images, CSVs, logs, ...), each mentioned by
   its file name in some Markdown file of the repository: no data or image that no page cites.
3. Paths: every repository path that README.md or a page under docs/ mentions (`scripts/gpu-steps.sh`,
   `docs/performance-data/...`, a relative Markdown link) exists.

  python3 scripts/check-docs.py [REPO_ROOT]      exit 0: all pass; 1: a finding (each printed); 2: usage

Binary files are not read for (1): a compressed image can hold any byte sequence. Needs Python 3 only.
"""
import os
import re
import subprocess
import sys

# The folders (and files) whose text is checked for process words.
WORD_ROOTS = ("README.md", "docs", "compiler", "dialect", "runtime", "kernels", "tools", "scripts", "python", "tests",
              "examples", ".ci", "CMakeLists.txt", "pyproject.toml")
PROCESS_WORDS = re.compile(r"sessions? [0-9]|\bs[0-9]{1,2}\b-|issue [0-9]+|DESIGN(\.md)? ?\u00a7", re.IGNORECASE)
# Genuine uses: (path relative to the repository root, a substring of the matching line, why it is fine).
ALLOW = [
]
MAX_DATA_FILES = 30
SKIP_DIRS = {".git", "__pycache__", "node_modules"}
# Repository paths as pages mention them: a known top-level folder, then path characters.
PATH = re.compile(r"(?<![\w./-])((?:docs|scripts|tools|kernels|tests|compiler|runtime|dialect|python|examples|\.ci)"
                  r"/[\w.+-]+(?:/[\w.+-]+)*)")
DOCS_RELATIVE = re.compile(r"(?<![\w./-])((?:performance-data)/[\w.+-]+)")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def walk(root, rel):
    top = os.path.join(root, rel)
    if os.path.isfile(top):
        yield rel
        return
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield os.path.relpath(os.path.join(dirpath, name), root)


def text_of(root, rel):
    """The file's text, or None for a binary file (a NUL byte, or not UTF-8)."""
    with open(os.path.join(root, rel), "rb") as f:
        data = f.read()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def markdown_files(root):
    """Every Markdown file of the repository: git's tracked and untracked-but-not-ignored ones where git knows the
    tree, else every .md under the root outside build folders."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "*.md"], capture_output=True,
                             text=True, check=True).stdout.split("\n")
        files = [f for f in out if f and os.path.isfile(os.path.join(root, f))]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(("build", "bundle", "out"))]
        found += [os.path.relpath(os.path.join(dirpath, n), root) for n in filenames if n.endswith(".md")]
    return found


def check_words(root):
    findings = []
    for top in WORD_ROOTS:
        if not os.path.exists(os.path.join(root, top)):
            continue
        for rel in walk(root, top):
            text = text_of(root, rel)
            if text is None:
                continue
            for number, line in enumerate(text.splitlines(), 1):
                match = PROCESS_WORDS.search(line)
                if match and not any(rel == path and part in line for path, part, _ in ALLOW):
                    findings.append(f"{rel}:{number}: process word '{match.group(0)}': {line.strip()[:120]}")
    return findings


def check_data(root, pages):
    findings = []
    data = [rel for rel in walk(root, "docs") if not rel.endswith(".md")]
    if len(data) > MAX_DATA_FILES:
        findings.append(f"docs/: {len(data)} files that are not Markdown, more than {MAX_DATA_FILES}")
    cited = "\n".join(pages.values())
    for rel in data:
        if os.path.basename(rel) not in cited:
            findings.append(f"{rel}: no Markdown file mentions it by name (cite it from a page, or git rm it)")
    return findings


def check_paths(root, pages):
    findings = []
    for rel, text in sorted(pages.items()):
        if not (rel == "README.md" or rel.startswith("docs/")):
            continue
        here = os.path.dirname(rel)
        for number, line in enumerate(text.splitlines(), 1):
            candidates = [(m, (root,)) for m in PATH.finditer(line)]
            candidates += [(m, (os.path.join(root, here),)) for m in DOCS_RELATIVE.finditer(line)]
            candidates += [(m, (os.path.join(root, here), root)) for m in LINK.finditer(line)
                           if not re.match(r"[a-z]+:", m.group(1))]
            for match, bases in candidates:
                path = match.group(1).rstrip(".,;:")
                after = line[match.end(1):match.end(1) + 1]
                if any(c in path for c in "*<>{}$") or after in ("*", "<", "{", "$") or path.endswith(("-", "_")):
                    continue  # a pattern or a placeholder (`tests/gpu/data/*.plan`, `h100-<kernel>.csv`), not one file
                if not any(os.path.exists(os.path.join(base, path)) for base in bases):
                    findings.append(f"{rel}:{number}: '{path}' does not exist")
    return findings


def main():
    if len(sys.argv) > 2:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1] if len(sys.argv) == 2 else os.path.join(os.path.dirname(__file__), ".."))
    pages = {rel: text_of(root, rel) or "" for rel in markdown_files(root)}
    findings = check_words(root) + check_data(root, pages) + check_paths(root, pages)
    for line in findings:
        print(line)
    data = sum(1 for rel in walk(root, "docs") if not rel.endswith(".md"))
    print(f"check-docs: {len(findings)} findings; {data} data files under docs/ (at most {MAX_DATA_FILES}), "
          f"{len(pages)} Markdown files")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
