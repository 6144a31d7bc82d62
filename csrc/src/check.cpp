#include "conceptwalk/check.hpp"

#include <string>

namespace cw {

void check_node(const GraphRef& g, const Visibility& vis, node_t u, const char* what) {
  if (u < 0 || u >= g.num_nodes())
    throw NodeOutOfRange(std::string(what) + " index " + std::to_string(u) + " outside [0, " +
                         std::to_string(g.num_nodes()) + ")");
  if (!CSRGraph::visible(u, vis))
    throw NodeOutOfRange(std::string(what) + " index " + std::to_string(u) + " is not visible");
}

void check_nodes(const GraphRef& g, const Visibility& vis, std::int64_t count, const node_t* nodes,
                 const char* what) {
  for (std::int64_t i = 0; i < count; ++i) check_node(g, vis, nodes[i], what);
}

void check_in_range(const GraphRef& g, std::int64_t count, const node_t* nodes, const char* what) {
  for (std::int64_t i = 0; i < count; ++i) {
    const node_t u = nodes[i];
    if (u < 0 || u >= g.num_nodes())
      throw NodeOutOfRange(std::string(what) + " index " + std::to_string(u) + " outside [0, " +
                           std::to_string(g.num_nodes()) + ")");
  }
}

std::int64_t check_ptr(const std::int64_t* ptr, std::int64_t size, std::int64_t total, const char* name) {
  if (size < 1) throw InvalidArgument(std::string(name) + " must have at least one entry");
  const std::int64_t q = size - 1;
  if (ptr[0] != 0 || ptr[q] != total)
    throw InvalidArgument(std::string(name) + " must start at 0 and end at " + std::to_string(total));
  for (std::int64_t i = 0; i < q; ++i)
    if (ptr[i + 1] < ptr[i]) throw InvalidArgument(std::string(name) + " must be non-decreasing");
  return q;
}

void check_min_shared(std::int64_t min_shared) {
  if (min_shared < 1) throw InvalidArgument("min_shared must be >= 1, got " + std::to_string(min_shared));
}

}  // namespace cw
