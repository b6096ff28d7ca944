"""The size issue's smallest example, in both compilers: Tracr's `Map(lambda x: x % 7 == 0, tokens)`
over the numbers 0..99 at max_seq_len 9, causal, compiled by Tracr and by raspc (through
raspc.tracr, the same program object). Prints each model's shape and parameter count.

    RASPC_INTEROP_VENV/bin/python bench/tracr_map_size.py BUILD/python
"""

import sys

sys.path.insert(1, sys.argv[1])

import numpy as np  # noqa: E402
from tracr.compiler import compiling  # noqa: E402
from tracr.rasp import rasp  # noqa: E402

import raspc.tracr  # noqa: E402

program = rasp.categorical(rasp.Map(lambda x: x % 7 == 0, rasp.tokens))
vocab, max_seq_len = set(range(100)), 9
tracr_model = compiling.compile_rasp_to_model(program, vocab=vocab, max_seq_len=max_seq_len,
                                              compiler_bos="BOS", causal=True)
tracr_parameters = sum(int(np.prod(p.shape)) for params in tracr_model.params.values() for p in params.values())
tracr_residual = tracr_model.params["token_embed"]["embeddings"].shape[1]
print(f"Tracr: {tracr_parameters:,} parameters, residual {tracr_residual}")
compiled = raspc.tracr.compile_rasp_to_model(program, vocab=vocab, max_seq_len=max_seq_len, causal=True,
                                             compiler_bos="BOS")
config = compiled.model.config
print(f"raspc: {compiled.model.report['parameters']:,} parameters, {config['n_layer']} layers, "
      f"n_embd {config['n_embd']}")
