// The one node and argument check of the core: every entry point (PPR, context, resource
// allocation, paths, hops, their batches) validates its node indices and query offsets here, so
// the rules and the messages cannot drift apart. Pure C++17, no Python.
#pragma once
#include <cstdint>

#include "conceptwalk/csr_graph.hpp"
#include "conceptwalk/live_graph.hpp"

namespace cw {

// Throws NodeOutOfRange "<what> index <u> outside [0, n)" or "<what> index <u> is not visible".
void check_node(const GraphRef& g, const Visibility& vis, node_t u, const char* what);

// check_node for each of count nodes.
void check_nodes(const GraphRef& g, const Visibility& vis, std::int64_t count, const node_t* nodes,
                 const char* what);

// Range only (hidden nodes allowed): "<what> index <u> outside [0, n)".
void check_in_range(const GraphRef& g, std::int64_t count, const node_t* nodes, const char* what);

// A CSR-style query pointer of q + 1 offsets into an array of length total: starts at 0, ends at
// total, non-decreasing. Returns q. Throws InvalidArgument naming `name`.
std::int64_t check_ptr(const std::int64_t* ptr, std::int64_t size, std::int64_t total, const char* name);

// Resource allocation's min_shared: >= 1.
void check_min_shared(std::int64_t min_shared);

}  // namespace cw
