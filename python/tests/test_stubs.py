"""The type stubs list every call the package makes at import time."""

import re
from pathlib import Path

import tessera


def test_stub_lists_every_kind_and_call():
    text = Path(tessera.__file__).with_name("__init__.pyi").read_text()
    defined = set(re.findall(r"^def (\w+)\(", text, re.M))
    for k in tessera.kinds():
        assert {"min": "minimum", "max": "maximum"}.get(k, k) in defined, k
    for name in tessera.__all__:
        if callable(getattr(tessera, name)) and not isinstance(getattr(tessera, name), type):
            assert name in defined or name in ("TesseraError",), name
