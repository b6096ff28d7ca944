"""The object raspc.tracr.compile_rasp_to_model returns: a raspc-compiled model behind the surface
of Tracr's ``AssembledTransformerModel``."""

import raspc


class TracrOutput:
    """What Tracr's ``AssembledTransformerModel.apply`` returns, as far as raspc has it:
    ``decoded`` (BOS first, then one value a position), and the raspc Forward underneath."""

    def __init__(self, decoded, forward):
        self.decoded = decoded
        self.forward = forward
        self.residuals = list(forward.residual) if forward.residual is not None else None


class TracrModel:
    """A raspc-compiled model behind Tracr's ``apply`` interface; ``.model`` is the raspc Model."""

    def __init__(self, model, program, compiler_bos, compiler_pad):
        self.model = model
        self.program = program
        self.compiler_bos = compiler_bos
        self.compiler_pad = compiler_pad

    def apply(self, tokens):
        tokens = list(tokens)
        if not tokens or tokens[0] != self.compiler_bos:
            raise raspc.InputError(f"tokens: error: the first token must be the BOS token {self.compiler_bos!r}, "
                                   "as in Tracr")
        codec = self.program._codec
        forward = self.model.forward([codec.to_raspc(t) for t in tokens[1:]], capture=True)
        return TracrOutput([self.compiler_bos] + forward.outputs, forward)
