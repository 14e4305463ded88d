"""The exceptions tilec raises."""


class TilecError(RuntimeError):
    """Any tilec failure: a missing tool or library, a failed run or launch."""


class CompileError(TilecError):
    """The compiler rejected the source. The message is the compiler's diagnostics, `file:line:col: error: ...`."""

    def __init__(self, diagnostics: str):
        super().__init__(diagnostics.rstrip())
        self.diagnostics = diagnostics


class ArgumentError(TilecError, ValueError):
    """Arguments that do not fit an entry's signature; raised before anything is launched. The message names the
    parameter."""
