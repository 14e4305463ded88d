// A program with one defect of each kind the sanitizer configuration must catch, built only there (TILEC_SANITIZE).
// scripts/sanitize.sh runs each and requires it to fail with the matching report: the proof that the gate is live
// (a build that silently lost its -fsanitize flags, or options that turn reports off, would let these pass).
//
//   tilec-sanitizer-canary use-after-free | signed-overflow | leak
#include <climits>
#include <cstdio>
#include <cstring>

static int *volatile sink;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s use-after-free | signed-overflow | leak\n", argv[0]);
    return 2;
  }
  if (!std::strcmp(argv[1], "use-after-free")) {
    int *p = new int[4]{1, 2, 3, 4};
    sink = p;
    delete[] p;
    return sink[argc]; // heap-use-after-free
  }
  if (!std::strcmp(argv[1], "signed-overflow")) {
    volatile int big = INT_MAX;
    int sum = big + argc; // signed integer overflow
    return sum == 0;
  }
  if (!std::strcmp(argv[1], "leak")) {
    sink = new int[64];
    sink = nullptr; // the only pointer is gone
    return 0;
  }
  std::fprintf(stderr, "unknown defect '%s'\n", argv[1]);
  return 2;
}
