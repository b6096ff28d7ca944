"""raspc's exceptions. Each carries the diagnostic the command line prints for the same mistake:
``file:line:col: error: one sentence``, the source line and a caret (or ``name: error: ...`` for a
whole file, a flag or an argument)."""

import re

_LOCATED = re.compile(r"^(?P<path>.*?):(?P<line>\d+):(?P<column>\d+): error: ")
_NAMED = re.compile(r"^(?P<path>[^\n]*?): error: ")


class RaspcError(Exception):
    """Base of raspc's errors. ``str(error)`` is the CLI's diagnostic text; ``.path``, ``.line``
    and ``.column`` say where it points (``None`` where it names no place)."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message
        self.path = self.line = self.column = None
        located = _LOCATED.match(message)
        if located:
            self.path = located["path"]
            self.line = int(located["line"])
            self.column = int(located["column"])
        else:
            named = _NAMED.match(message)
            if named:
                self.path = named["path"]

    def __str__(self):
        return self.message.rstrip("\n")


class CompileError(RaspcError):
    """A program raspc refuses: a syntax or evaluation error, a construct the compiler cannot
    lower, or a compiled model that failed its verification. For the last, ``.departure`` names
    the s-op where the model's residual stream first departs from the interpreter (None where
    only the output's read differs, and for every other refusal)."""

    departure = None


class InputError(RaspcError, ValueError):
    """An input sequence, vocabulary or argument that does not fit the program or model."""


class FileError(RaspcError, OSError):
    """A model file that is missing, unreadable or malformed, or cannot be written."""


class UndefinedError(RaspcError):
    """The program itself is undefined on this input (a mean over strings, a missing key, ...);
    ``.position`` is the position where it is."""

    def __init__(self, message, position=None):
        super().__init__(message)
        self.position = position


class RaspcWarning(UserWarning):
    """What the command line prints as a warning: a compile of a program undefined on most of the
    inputs verification drew (the model was verified on the others only)."""
