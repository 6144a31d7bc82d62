// conceptwalk core: shared types and errors. Pure C++17, no Python.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace cw {

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
