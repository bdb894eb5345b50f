"""The exceptions of warpscope, and how a native error becomes one."""

from __future__ import annotations

import re
from typing import Optional

__all__ = ["Error", "InputError", "ArgumentError", "CompileError", "LaunchError"]


class Error(Exception):
    """A warpscope failure.

    ``str(e)`` and ``e.message`` are the message ``warpscope`` prints after ``error:`` on
    the command line. ``file``, ``line`` and ``column`` (1-based) name the source position
    the message names, where it names one (else ``None``; an nvcc error names no column).
    ``kind`` is ``"input"``, ``"compile"``, ``"launch"`` or ``"error"``.
    """

    kind = "error"

    def __init__(
        self,
        message: str,
        *,
        file: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column

    def __str__(self) -> str:
        return self.message


class InputError(Error, ValueError):
    """Bad input: an unknown kernel, parameter or compute capability, an argument or
    allocation that does not fit the kernel, a file that cannot be read."""

    kind = "input"


class ArgumentError(InputError, TypeError):
    """Arguments that do not fit the kernel's signature (too many, too few, the wrong
    kind): both an :class:`InputError` and a ``TypeError``."""


class CompileError(Error):
    """The kernel did not compile or parse: nvcc's or Triton's message verbatim, a syntax
    error of the source interpreter, malformed PTX, an unsupported construct or PTX
    instruction, no CUDA compiler where one is needed."""

    kind = "compile"


class LaunchError(Error):
    """The launch cannot run or failed while running: over a compute capability's limits,
    an access outside its allocation or misaligned, a runaway loop, the memory cap."""

    kind = "launch"


_CLASSES = {"input": InputError, "compile": CompileError, "launch": LaunchError}

# A source position in parentheses: `PTX line 130:5 (examples/harris.cu:26:5): ...`.
_PAREN = re.compile(r"\(([^()\s]+):(\d+):(\d+)\)")
# `FILE:LINE:COL:` at the start of a line: the source interpreter's and the PTX parser's.
_START = re.compile(r"^(?:error: )?([^\s:]+(?: \([^()]*\))?):(\d+):(\d+):", re.M)
# nvcc's `FILE(LINE): error: ...`.
_NVCC = re.compile(r"([^\s():]+)\((\d+)\): (?:catastrophic )?error")
# A Python traceback line or a Triton message: `File "x.py", line 12`.
_PYFILE = re.compile(r'File "([^"]+)", line (\d+)')
# `PTX line N:M` alone: a position in the analyzed PTX file.
_PTXLINE = re.compile(r"PTX line (\d+):(\d+)")


_CANNOT_READ = re.compile(r"^cannot read (?:--profile )?(.+?): ")


def locate(message: str, default_file: Optional[str] = None):
    """(file, line, column) that ``message`` names, each ``None`` where it names none."""
    m = _CANNOT_READ.search(message)
    if m:
        return m.group(1), None, None
    m = _PAREN.search(message)
    if m:
        return m.group(1), int(m.group(2)), int(m.group(3))
    m = _START.search(message)
    if m:
        f = re.sub(r" \([^()]*\)$", "", m.group(1))
        return f, int(m.group(2)), int(m.group(3))
    m = _NVCC.search(message)
    if m:
        return m.group(1), int(m.group(2)), None
    m = _PTXLINE.search(message)
    if m:
        return default_file, int(m.group(1)), int(m.group(2))
    m = _PYFILE.search(message)
    if m:
        return m.group(1), int(m.group(2)), None
    return None, None, None


def from_native(kind: str, message: str, default_file: Optional[str] = None) -> Error:
    """The exception for a native error of ``kind`` with the CLI's ``message``."""
    cls = _CLASSES.get(kind, Error)
    file, line, column = locate(message, default_file)
    return cls(message, file=file, line=line, column=column)
