"""Write tessera/__init__.pyi: the typed signatures of the package's calls.

The elementwise functions are made at import time from the kind catalogue,
so their stubs are written from it too: run this after a kind is added
(tests/test_stubs.py fails until the stub lists every kind).

    python tools/write_stubs.py
"""

from pathlib import Path

import tessera

HEAD = '''"""Type stubs of the tessera package (written by tools/write_stubs.py)."""

from typing import Any, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from . import errors as errors, fft as fft, formats as formats, linalg as linalg
from .errors import TesseraError as TesseraError

ArrayLike = npt.ArrayLike
DTypeLike = Union[str, npt.DTypeLike]
Axis = Union[None, int, Sequence[int]]

__version__: str

def dtypes() -> list[str]: ...
def kinds() -> list[str]: ...
def tiers() -> dict[str, Any]: ...
def tessera_dtype(dtype: DTypeLike) -> str: ...
def numpy_dtype(name: str) -> np.dtype[Any]: ...
def apply(kind: str, *args: ArrayLike, out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def cast(x: ArrayLike, dtype: DTypeLike, mode: str = ..., out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...

class MapPlan:
    def __init__(self, text: str, dtypes: Sequence[DTypeLike]) -> None: ...
    @property
    def input_dtypes(self) -> list[str]: ...
    @property
    def output_dtypes(self) -> list[str]: ...
    def __call__(self, *operands: ArrayLike, out: Any = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> Any: ...

def map(text: str, *operands: ArrayLike, out: Any = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> Any: ...
def reduce(op: str, x: ArrayLike, axis: Axis = ..., keepdims: bool = ..., dtype: Optional[DTypeLike] = ..., out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> Any: ...
'''

REDUCTIONS = ["sum", "prod", "max", "min", "logsumexp", "mean", "var", "std"]
SCANS = ["cumsum", "cumprod", "cummax", "cummin"]

TAIL = '''def argmax(x: ArrayLike, axis: Axis = ..., keepdims: bool = ..., out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> Any: ...
def argmin(x: ArrayLike, axis: Axis = ..., keepdims: bool = ..., out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> Any: ...
def scan(op: str, x: ArrayLike, axis: Optional[int] = ..., dtype: Optional[DTypeLike] = ..., out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def contract(spec: str, a: ArrayLike, b: ArrayLike, acc: Optional[DTypeLike] = ..., dtype: Optional[DTypeLike] = ..., out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def matmul(a: ArrayLike, b: ArrayLike, acc: Optional[DTypeLike] = ..., dtype: Optional[DTypeLike] = ..., out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def sort(x: ArrayLike, axis: Optional[int] = ..., descending: bool = ..., total_order: bool = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def argsort(x: ArrayLike, axis: Optional[int] = ..., descending: bool = ..., total_order: bool = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def unique(x: ArrayLike, return_index: bool = ..., return_inverse: bool = ..., return_counts: bool = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> Any: ...
def gather(x: ArrayLike, positions: ArrayLike, axis: int, out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def take_along_axis(x: ArrayLike, positions: ArrayLike, axis: int, out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def scatter(x: ArrayLike, positions: ArrayLike, updates: ArrayLike, axis: int, combine: str = ..., out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def random(shape: Union[int, Sequence[int]], dtype: DTypeLike = ..., seed: int = ..., out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def quantize(x: ArrayLike, scale: Any, zero_point: Any = ..., dtype: DTypeLike = ..., axis: Optional[int] = ..., out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def dequantize(q: ArrayLike, scale: Any, zero_point: Any = ..., dtype: DTypeLike = ..., axis: Optional[int] = ..., out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...
def attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, scale: Optional[float] = ..., causal: bool = ..., offset: int = ..., window: Optional[int] = ..., program: Optional[str] = ..., loads: Sequence[ArrayLike] = ..., lengths: Optional[ArrayLike] = ..., acc: Optional[DTypeLike] = ..., dtype: Optional[DTypeLike] = ..., return_lse: bool = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> Any: ...
'''


def main() -> None:
    lines = [HEAD]
    for r in REDUCTIONS:
        lines.append(
            f"def {r}(x: ArrayLike, axis: Axis = ..., keepdims: bool = ..., dtype: Optional[DTypeLike] = ..., "
            "out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> Any: ...\n"
        )
    for s in SCANS:
        lines.append(
            f"def {s}(x: ArrayLike, axis: Optional[int] = ..., dtype: Optional[DTypeLike] = ..., "
            "out: Optional[np.ndarray] = ..., threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...\n"
        )
    lines.append(TAIL)
    lines.append("\n# The elementwise kinds (one per kind of the catalogue) and numpy's names for some.\n")
    names = sorted(tessera._RENAMED.get(k, k) for k in tessera._KINDS)
    names += sorted(tessera._NUMPY_NAMES)
    for name in names:
        lines.append(
            f"def {name}(*args: ArrayLike, out: Optional[np.ndarray] = ..., "
            "threads: Optional[int] = ..., tier: Optional[str] = ...) -> np.ndarray: ...\n"
        )
    path = Path(tessera.__file__).with_name("__init__.pyi")
    path.write_text("".join(lines))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
