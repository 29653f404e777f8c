"""Reading pickled data files without running their code (the TriCL benchmark files).

A pickle is a small program: its ``GLOBAL`` / ``STACK_GLOBAL`` / ``INST`` / ``OBJ`` / ``EXT``
opcodes fetch any importable object by name (dotted names reach through module attributes, e.g.
``numpy.lib.format`` + ``os.system``), ``REDUCE`` calls it and ``BUILD`` sets attributes on
whatever is on the stack (a class included). Allowing whole modules (``numpy.*``) therefore allows
code execution. :class:`DataUnpickler`

* resolves only the exact ``(module, name)`` pairs of :func:`allowed_globals` — what numpy arrays
  and scalars, scipy sparse CSR/CSC/COO matrices and builtin containers need, under the names
  numpy 1.x/2.x and older/newer scipy write — to objects it looks up itself (it never imports a
  module named by the file); any other global raises :class:`UnsafePickleError` naming it;
* lets ``BUILD`` set state only on numpy arrays/dtypes and sparse-matrix *instances*, never on a
  class or function (which would patch it for the whole process);
* wraps the generic helpers old protocols need, ``copyreg._reconstructor`` (protocol 0/1
  objects: the sparse classes only) and ``_codecs.encode`` (protocol <= 2 bytes: latin-1 only);
  persistent ids are refused.

It is the pure-Python unpickler (``pickle._Unpickler``), whose opcode table can be checked;
data pickles hold few opcodes (arrays are single byte strings), so its speed does not matter.
"""

from __future__ import annotations

import codecs
import collections
import copyreg
import io
import pickle
import reprlib
import struct
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

__all__ = ["DataUnpickler", "UnsafePickleError", "allowed_globals", "load_data_pickle"]

# protocol 0-2 pickles written by Python 2 name these modules; Python 3's unpickler maps them
_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}
_BUILTINS = ("bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int", "list")
_BUILTINS += ("object", "set", "slice", "str", "tuple")
_SPARSE_FORMATS = ("csr", "csc", "coo")


class UnsafePickleError(pickle.UnpicklingError):
    """A data pickle names a global outside the allow-list (it could run code when loaded)."""


@cache
def _sparse_classes() -> dict[str, type]:
    import scipy.sparse

    out = {}
    for fmt in _SPARSE_FORMATS:
        for kind in ("matrix", "array"):
            if hasattr(scipy.sparse, f"{fmt}_{kind}"):
                out[f"{fmt}_{kind}"] = getattr(scipy.sparse, f"{fmt}_{kind}")
    return out


def _checked_reconstructor(cls: Any, base: Any, state: Any) -> Any:
    """``copyreg._reconstructor`` (protocol 0/1 objects) for the allowed sparse classes only."""
    if base is not object or cls not in _sparse_classes().values():
        raise UnsafePickleError(
            f"refusing copyreg._reconstructor({cls!r}, {base!r}): a data pickle may only "
            "rebuild scipy sparse csr/csc/coo matrices this way."
        )
    return copyreg._reconstructor(cls, base, state)


def _latin1_encode(text: Any, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    """``_codecs.encode`` as protocol <= 2 pickles use it for bytes: a str in latin-1 only."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1") or errors != "strict":
        raise UnsafePickleError(
            f"refusing _codecs.encode(..., {encoding!r}, {errors!r}): a data pickle may only "
            "encode bytes as latin-1."
        )
    return codecs.encode(text, "latin1")


@cache
def allowed_globals() -> dict[tuple[str, str], Any]:
    """Every ``(module, name)`` a data pickle may name, and the object it stands for.

    Numpy's private reconstruction helpers are taken from numpy's own ``__reduce__`` output, so
    the table does not depend on where this numpy version keeps them; both the numpy 1.x
    (``numpy.core``) and 2.x (``numpy._core``) spellings map to them.
    """
    import numpy as np

    reconstruct = np.zeros(1).__reduce__()[0]  # ndarray: _reconstruct(ndarray, (0,), b"b")
    scalar = np.float64(0).__reduce__()[0]  # numpy scalars: scalar(dtype, raw bytes)
    frombuffer = np.zeros(1).__reduce_ex__(5)[0]  # protocol 5 ndarray: _frombuffer(buf, ...)
    table: dict[tuple[str, str], Any] = {
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
        ("_codecs", "encode"): _latin1_encode,  # bytes in protocol <= 2: encode(str, "latin1")
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("collections", "defaultdict"): collections.defaultdict,
        ("copyreg", "_reconstructor"): _checked_reconstructor,
    }
    for core in ("numpy.core", "numpy._core"):
        table[(f"{core}.multiarray", "_reconstruct")] = reconstruct
        table[(f"{core}.multiarray", "scalar")] = scalar
        table[(f"{core}.numeric", "_frombuffer")] = frombuffer
    for name in _BUILTINS:
        table[("builtins", name)] = getattr(__import__("builtins"), name)
    for name, cls in _sparse_classes().items():
        fmt, kind = name.split("_")
        modules = {cls.__module__, "scipy.sparse", f"scipy.sparse._{fmt}"}
        modules.add(f"scipy.sparse.{fmt}" if kind == "matrix" else "scipy.sparse._arrays")
        for module in modules:
            table[(module, name)] = cls
    return table


def _buildable(inst: Any) -> bool:
    """Whether ``BUILD`` may set the state of ``inst``: an array, a dtype or a sparse matrix."""
    import numpy as np

    return isinstance(inst, np.ndarray | np.dtype) or type(inst) in _sparse_classes().values()


class DataUnpickler(pickle._Unpickler):
    """An unpickler that rebuilds data only: exact globals from :func:`allowed_globals`.

    Parameters
    ----------
    file
        A binary file object.
    source
        How errors name the file (its path).

    Examples
    --------
    >>> import io, pickle
    >>> import numpy as np
    >>> DataUnpickler(io.BytesIO(pickle.dumps({"e0": np.arange(3)}))).load()["e0"].tolist()
    [0, 1, 2]
    >>> try:
    ...     DataUnpickler(io.BytesIO(pickle.dumps(eval)), "x.pickle").load()
    ... except UnsafePickleError as err:
    ...     print(err)
    x.pickle: refusing builtins.eval — a data pickle may only rebuild numpy arrays ...
    """

    def __init__(self, file: Any, source: str = "data pickle") -> None:
        super().__init__(file)
        self.source = source

    def find_class(self, module: str, name: str) -> Any:
        module = _PY2_MODULES.get(module, module)
        try:
            return allowed_globals()[(module, name)]
        except KeyError:
            raise UnsafePickleError(
                f"{self.source}: refusing {module}.{name} — a data pickle may only rebuild numpy "
                "arrays and scalars, scipy sparse csr/csc/coo matrices and builtin containers; "
                "a pickle that names anything else could run code when loaded."
            ) from None

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickleError(
            f"{self.source}: refusing a persistent id ({pid!r}) in a data file."
        )

    def load_build(self) -> None:
        target = self.stack[-2]  # the stack holds (..., object, state)
        if not _buildable(target):
            raise UnsafePickleError(
                f"{self.source}: refusing to set the state of {reprlib.repr(target)} (BUILD) — a "
                "data pickle "
                "may only fill numpy arrays and scipy sparse matrices."
            )
        super().load_build()

    dispatch: ClassVar[dict[int, Any]] = dict(pickle._Unpickler.dispatch)
    dispatch[pickle.BUILD[0]] = load_build


def load_data_pickle(path: str | Path) -> Any:
    """The object pickled in ``path``, rebuilt by :class:`DataUnpickler` (no code runs).

    Raises
    ------
    UnsafePickleError
        The file names a global outside the allow-list (a ``pickle.UnpicklingError``).
    pickle.UnpicklingError
        The file is not a well-formed pickle of allowed objects (the message names the file).
    """
    path = Path(path)
    try:
        return DataUnpickler(io.BytesIO(path.read_bytes()), str(path)).load()
    except UnsafePickleError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
            IndexError, KeyError, OverflowError, struct.error) as err:  # fmt: skip
        raise pickle.UnpicklingError(
            f"{path}: not a readable data pickle ({type(err).__name__}: {err})."
        ) from err
