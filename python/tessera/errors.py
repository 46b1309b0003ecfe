"""The exceptions tessera raises.

Every refusal of the library is raised before anything is written (an ``out=``
array is left as it was). Each class derives from :class:`TesseraError` and
from the builtin exception a numpy user would expect, so ``except ValueError``
keeps working:

=====================  ==============  ==========================================
class                  also a          raised for
=====================  ==============  ==========================================
``ShapeError``         ``ValueError``  shapes that do not broadcast, axes out of
                                       range, bad layouts, ranks, lengths, sizes
                                       that overflow
``DTypeError``         ``TypeError``   a dtype a call does not take, operands of
                                       mismatched dtypes, a numpy dtype with no
                                       tessera counterpart
``ArgumentError``      ``ValueError``  an unknown kind, tier, reduction or norm,
                                       a map program that does not parse or type
``AllocationError``    ``MemoryError`` scratch or results that cannot be allocated
``TierError``          ``RuntimeError`` a tier this CPU cannot run
``InternalError``      ``RuntimeError`` a bug inside tessera (a Rust panic, caught
                                       at the boundary: please report it)
=====================  ==============  ==========================================
"""

__all__ = [
    "TesseraError",
    "ShapeError",
    "DTypeError",
    "ArgumentError",
    "AllocationError",
    "TierError",
    "InternalError",
]


class TesseraError(Exception):
    """Base class of every error tessera raises."""


class ShapeError(TesseraError, ValueError):
    """Shapes, axes, layouts, ranks or lengths a call refuses."""


class DTypeError(TesseraError, TypeError):
    """A dtype a call does not take, or operands of mismatched dtypes."""


class ArgumentError(TesseraError, ValueError):
    """An unknown name (kind, tier, reduction, norm) or a bad program or keyword."""


class AllocationError(TesseraError, MemoryError):
    """Memory for results or scratch that cannot be allocated."""


class TierError(TesseraError, RuntimeError):
    """A tier that exists but that this CPU cannot run."""


class InternalError(TesseraError, RuntimeError):
    """A bug in tessera: a panic caught at the boundary instead of crashing."""
