#include "conceptwalk/workspace.hpp"

namespace cw {

Workspace& thread_workspace(node_t n) {
  thread_local Workspace ws;
  ws.ensure(n);
  return ws;
}

}  // namespace cw
