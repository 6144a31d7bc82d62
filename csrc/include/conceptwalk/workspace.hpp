// Per-thread scratch memory reused across queries. Every array is kept "clean" between queries
// (zeros, or -1 for distances): a query resets only the entries it touched, so no query allocates
// or clears O(n) memory once the workspace has grown to the graph's size.
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/common.hpp"
#include "conceptwalk/csr_graph.hpp"

namespace cw {

// Per-node state of the push (and of resource allocation), one 32-byte slot so that a visit to a
// neighbour reads and writes a single cache line. Clean state: r = p = 0, flags = 0 (thr and deg
// are only meaningful while flags has the touched bit; they are set on first touch).
struct alignas(32) PushNode {
  double r = 0.0;           // residual (push) / unused (RA)
  double p = 0.0;           // estimate (push) / score (RA)
  double thr = 0.0;         // eps * deg: the push threshold of this node for the current eps
  std::int32_t deg = 0;     // degree in the caller's visible subgraph (push) / shared count (RA)
  std::uint32_t flags = 0;  // bit 0 touched, bit 1 queued, bit 2 scratch (certify / RA exclude)
};
static_assert(sizeof(PushNode) == 32, "PushNode must stay one half cache line");

struct Workspace {
  // Per-node arrays are read at random: large ones get huge pages (see RawVector).
  RawVector<PushNode> node;                       // clean: r = p = 0, flags = 0
  RawVector<std::int32_t> ia, ib;                 // -1 when clean (distances, counters)
  RawVector<std::uint8_t> flag;                   // 0 when clean
  std::vector<node_t> touched, queue, next, tmp;  // scratch lists, emptied per query
  // The push's own touched list and FIFO ring (same capacity, a power of two, grown on demand;
  // contents are meaningless between queries).
  std::vector<node_t> push_touched, push_ring;

  // Grows the per-node arrays `parts` names (kWorkspaceNodes: node; kWorkspaceMarks: ia, ib and
  // flag) to at least n entries. Each part is grown only by the algorithms that read it, so a
  // walk over 2.5M nodes does not first write the push's 80 MB of node slots (nor a push the
  // walk's marks): what a thread's first query pays, and what its workspace holds.
  void ensure(node_t n, unsigned parts) {
    const std::size_t need = static_cast<std::size_t>(n);
    if ((parts & kWorkspaceNodes) && node.size() < need) node.resize(need);
    if ((parts & kWorkspaceMarks) && ia.size() < need) {
      ia.resize(need, -1);
      ib.resize(need, -1);
      flag.resize(need, 0);
    }
    if (push_touched.empty()) {
      push_touched.resize(1024);
      push_ring.resize(1024);
    }
  }
  static constexpr unsigned kWorkspaceNodes = 1;
  static constexpr unsigned kWorkspaceMarks = 2;
};

// The calling thread's workspace, with the per-node arrays `parts` names grown to at least n
// entries (the others may be smaller: an algorithm reads only the parts it asked for).
Workspace& thread_workspace(node_t n, unsigned parts);

}  // namespace cw
