// RASP's own accounting of a program's size (Weiss et al., section 3): an elementwise operation is
// free; a select/aggregate (and selector_width) adds a layer on top of its inputs; the heads of a
// layer are the distinct selectors used at that depth. A BOS position is assumed, as in the
// compiled models, so selector_width costs one layer like an aggregate.
#pragma once

#include <vector>

#include "language/program.hpp"

namespace raspc {

struct Analysis {
  int layers = 0;
  std::vector<int> heads_per_layer;  // size == layers
  int max_heads() const;
  std::vector<int> layer_of;  // by NodeId: the layer after which the node's value is available (0: before any)
};

Analysis analyse(const Program& program);

}  // namespace raspc
