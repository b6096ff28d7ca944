// The hand-set (aab)* transformer of the post "I made a transformer by hand (no training!)"
// (vgel.me): a GPT-2 with 5 positions, the tokens a=0 and b=1, 8 residual dimensions, one layer with
// one head, no LayerNorm, no MLP, tied unembedding, causal.
//
// Residual dimensions: 0-4 position one-hot, 5-6 token one-hot (a, b), 7 scratch. The head's query
// is 1024 on the current and the previous position, its key the position one-hot, so it averages
// the last two tokens; its value is +1 for a and -1 for b, written to the scratch dimension. The
// projection turns that average x into 1024 - 1024 x on the `a` dimension and 1024 x on `b`:
// "aa" (x = 1) predicts b, anything with a b in it (x <= 0) predicts a.
#pragma once

#include <string>

#include "runtime/forward.hpp"
#include "runtime/model.hpp"

namespace raspc {

Model make_handset_aab();

// The post's test: on "aab" * 10, predict each token at index 2..28 from the up to 5 tokens before
// it (the first two have no pattern to follow yet; the post stops one short of the end).
struct AabScore {
  int correct = 0;
  int total = 0;
};
AabScore score_handset_aab(Backend& backend, const Model& model);

}  // namespace raspc
