// Per-thread scratch memory reused across queries. Every array is kept "clean" between queries
// (zeros, or -1 for distances): a query resets only the entries it touched, so no query allocates
// or clears O(n) memory once the workspace has grown to the graph's size.
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/common.hpp"

namespace cw {

struct Workspace {
  std::vector<double> p, r;              // zeros when clean
  std::vector<std::int32_t> ia, ib;      // -1 when clean (distances, counters)
  std::vector<std::int32_t> ic, id;      // -1 when clean
  std::vector<std::uint8_t> flag;        // 0 when clean
  std::vector<node_t> touched, queue, next, tmp;  // scratch lists, emptied per query

  void ensure(node_t n) {
    const std::size_t need = static_cast<std::size_t>(n);
    if (p.size() < need) {
      p.resize(need, 0.0);
      r.resize(need, 0.0);
      ia.resize(need, -1);
      ib.resize(need, -1);
      ic.resize(need, -1);
      id.resize(need, -1);
      flag.resize(need, 0);
    }
  }
};

// The calling thread's workspace, grown to at least n entries.
Workspace& thread_workspace(node_t n);

}  // namespace cw
