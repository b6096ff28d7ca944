// Floating-point operations of the GPT-2 forward, from the config alone.
//
// One FLOP is one add, multiply, compare, divide, exp, tanh or sqrt; a matmul (m,k).(k,n) is
// 2 m n k. For one token that attends to `context` keys (itself included), with C = n_embd,
// H = n_head, I = n_inner, V = vocab_size, L = n_layer, n = context:
//
//   embedding            C                    (token + position)
//   per layer:
//     ln_1, ln_2         8C + 5 each          (only with layer_norm; ln_2 only with an MLP)
//     c_attn             2 C 3C + 3C
//     attention          4 C n + 6 H n + H    (scores 2 d_head + 1 per key and head, softmax
//                                              5 per key + 1 per head, weighted values 2 d_head)
//     c_proj + residual  2 C C + C + C
//     MLP (I > 0)        2 C I + I  +  a I  +  2 I C + C  +  C      (a = 9 for GELU, 1 for ReLU)
//   ln_f                 8C + 5               (only with layer_norm)
//   unembedding          2 C V
//
// The CPU forward's ops return the operations they perform under the same conventions
// (runtime/cpu_backend.hpp); a test checks that the two counts agree.
#pragma once

#include "runtime/model.hpp"

namespace raspc {

// The FLOPs of one token that attends to `context` keys (1 <= context <= n_positions).
double flops_per_token(const ModelConfig& config, int context);

// The FLOPs of a whole forward over one sequence of `length` tokens: in a causal model token t
// attends to t + 1 keys, in a bidirectional one every token attends to all `length`.
double forward_flops(const ModelConfig& config, int length);

}  // namespace raspc
