// conceptwalk core: shared types and errors. Pure C++17, no Python.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

// Portable spellings of a cache prefetch hint (no effect on results) and "do not inline".
#if defined(_MSC_VER)
#include <intrin.h>
#define CW_NOINLINE __declspec(noinline)
#if defined(_M_X64) || defined(_M_IX86)
#include <xmmintrin.h>
#define CW_PREFETCH(p) _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0)
#else
#define CW_PREFETCH(p) ((void)(p))
#endif
#else
#define CW_NOINLINE __attribute__((noinline))
#define CW_PREFETCH(p) __builtin_prefetch(p)
#endif

namespace cw {

// Index of the highest set bit of x (x != 0).
inline int highest_bit(std::uint64_t x) {
#if defined(_MSC_VER)
  unsigned long i;
  _BitScanReverse64(&i, x);
  return static_cast<int>(i);
#else
  return 63 - __builtin_clzll(x);
#endif
}

using node_t = std::int32_t;    // node index (rank of the id in sorted order)
using offset_t = std::int64_t;  // offsets into adjacency arrays

// Thrown for any input the core refuses. Bindings map it to ValueError.
struct InvalidArgument : std::invalid_argument {
  explicit InvalidArgument(const std::string& what) : std::invalid_argument(what) {}
};

// Thrown for a node index outside [0, n) or hidden by the mask. Bindings map it to IndexError.
struct NodeOutOfRange : std::out_of_range {
  explicit NodeOutOfRange(const std::string& what) : std::out_of_range(what) {}
};

}  // namespace cw
