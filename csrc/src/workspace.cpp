#include "conceptwalk/workspace.hpp"

namespace cw {

Workspace& thread_workspace(node_t n, unsigned parts) {
  thread_local Workspace ws;
  ws.ensure(n, parts);
  return ws;
}

}  // namespace cw
