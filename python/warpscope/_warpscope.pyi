"""Type stubs of the native module (python/src/lib.rs). Use the ``warpscope`` package's
functions: these are its private half."""

from typing import List, Optional

__version__: str

class NativeError(Exception):
    """``args``: (kind, message); kind is "input", "compile", "launch" or "error"."""

class Analysis:
    def json(self) -> str:
        """The JSON text `warpscope analyze --format json` prints (final newline)."""
    def csv(self) -> str:
        """The CSV of `warpscope analyze --format csv`."""
    def table(self, width: Optional[int] = None, color: bool = False) -> str:
        """The text table, fitted to ``width`` columns (None: unlimited)."""

class Explanation:
    def text(self, color: bool = False) -> str: ...
    def svg(self) -> str: ...
    def html(self) -> str: ...
    def json(self) -> str: ...

def analyze(spec_json: str) -> Analysis:
    """Analyzes the launch a JSON description gives (fields as the CLI's flags)."""

def explain(
    spec_json: str,
    line: Optional[int] = None,
    column: Optional[int] = None,
    site: Optional[int] = None,
    warp: Optional[int] = None,
) -> Explanation: ...

def parse_ccs(list: str) -> List[str]:
    """The compute capabilities a --cc list names, as "major.minor"."""

def _panic_for_test() -> None:
    """Panics in Rust; raises NativeError("error", ...) (the panic is caught)."""
