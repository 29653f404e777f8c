"""TriCL's pickle layout: legitimate files load, crafted ones never run code (issue 40, item 1).

Every malicious pickle below would run its payload under ``pickle.load``: each one's payload
creates a marker file, and each test checks that loading is refused with a message naming what
was refused and that the marker was never written.
"""

import collections
import copyreg
import pickle

import numpy as np
import pytest
import scipy.sparse

from icml26.hyperdepth import load_tricl_format

EDGES = {"e0": [0, 1, 1], "e1": [2, 3], "e2": [3, 0]}  # a repeated member, as in TriCL files


def write(root, name, features, hypergraph=EDGES, labels=(0, 0, 1, 1), protocol=None):
    """A TriCL dataset folder; an entry given as bytes is written as is (a hand-made pickle)."""
    folder = root / name
    folder.mkdir()
    for stem, obj in (("features", features), ("hypergraph", hypergraph), ("labels", labels)):
        data = obj if isinstance(obj, bytes) else pickle.dumps(obj, protocol=protocol)
        (folder / f"{stem}.pickle").write_bytes(data)
    return folder


def short_str(text: str) -> bytes:
    """SHORT_BINUNICODE: push ``text``."""
    raw = text.encode()
    return b"\x8c" + bytes([len(raw)]) + raw


def call_global(module: str, name: str, arg: str) -> bytes:
    """A protocol-4 pickle: STACK_GLOBAL module/name, then REDUCE with one str argument."""
    return b"\x80\x04" + short_str(module) + short_str(name) + b"\x93" + short_str(arg) + b"\x85R."


# ---------------------------------------------------------------------------- legitimate files


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "dense"])
def test_tricl_format_loads_every_feature_kind_at_every_protocol(tmp_path, kind, protocol):
    eye = np.eye(4, dtype=np.float32)
    features = eye if kind == "dense" else getattr(scipy.sparse, f"{kind}_matrix")(eye)
    write(tmp_path, "toy", features, protocol=protocol)
    data = load_tricl_format(tmp_path, "toy")
    assert data.hypergraph.hyperedges == ((0, 1), (2, 3), (3, 0))
    np.testing.assert_array_equal(data.x, np.eye(4))
    np.testing.assert_array_equal(data.y, [0, 0, 1, 1])


def test_tricl_format_accepts_numpy_members_defaultdicts_and_label_arrays(tmp_path):
    edges = collections.defaultdict(list)
    edges[0] += [np.int64(0), np.int64(2)]
    edges[1] += [np.int32(1), np.int32(3), np.int32(3)]
    features = scipy.sparse.csr_array(np.arange(8, dtype=np.float64).reshape(4, 2))
    write(tmp_path, "toy", features, edges, np.array([[2], [1], [2], [0]]), protocol=2)
    data = load_tricl_format(tmp_path, "toy")
    assert data.hypergraph.hyperedges == ((0, 2), (1, 3))
    np.testing.assert_array_equal(data.x, np.arange(8).reshape(4, 2))
    np.testing.assert_array_equal(data.y, [2, 1, 2, 0])


def test_tricl_format_reads_pickles_numpy_1_wrote(tmp_path):
    # numpy 1.x names its helpers numpy.core.*; numpy 2.x numpy._core.* (protocol 2 text names)
    old = pickle.dumps(np.eye(4), protocol=2).replace(b"numpy._core", b"numpy.core")
    assert b"numpy.core.multiarray" in old
    write(tmp_path, "toy", old)
    np.testing.assert_array_equal(load_tricl_format(tmp_path, "toy").x, np.eye(4))


# ---------------------------------------------------------------------------- malicious files


class Payload:
    """Pickles as ``func(*args)``: what a crafted file's ``__reduce__`` makes ``pickle`` call."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def marker_command(marker) -> str:
    return f"touch {marker}"


def refused(tmp_path, features, match, **files):
    marker = tmp_path / "PWNED"
    write(tmp_path, "evil", features, **files)
    with pytest.raises(pickle.UnpicklingError, match=match):
        load_tricl_format(tmp_path, "evil")
    assert not marker.exists(), "the payload ran"


def test_a_numpy_module_cannot_reach_os_system_through_a_dotted_name(tmp_path):
    # the defect of issue 40: 'numpy.*' was allowed, and numpy.lib.format imports os
    payload = call_global("numpy.lib.format", "os.system", marker_command(tmp_path / "PWNED"))
    refused(tmp_path, payload, r"features\.pickle: refusing numpy\.lib\.format\.os\.system")


def test_numpy_testing_utils_and_its_exec_route_are_refused(tmp_path):
    code = f"open({str(tmp_path / 'PWNED')!r}, 'w').close()"
    for module, name in (
        ("numpy.testing._private.utils", "os.system"),
        ("numpy.testing._private.utils", "exec"),
        ("numpy", "load"),  # np.load(allow_pickle=True) would unpickle without restriction
    ):
        folder = tmp_path / name.replace(".", "_")
        folder.mkdir()
        payload = call_global(module, name, code)
        write(folder, "evil", payload)
        with pytest.raises(pickle.UnpicklingError, match=f"refusing {module}.{name}"):
            load_tricl_format(folder, "evil")
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_builtins_exec_and_os_system_from_a_custom_reduce_are_refused(tmp_path, protocol):
    import os

    code = f"open({str(tmp_path / 'PWNED')!r}, 'w').close()"
    features = pickle.dumps(Payload(exec, code), protocol=protocol)
    refused(tmp_path, features, r"refusing builtins\.exec")
    labels = pickle.dumps(Payload(os.system, marker_command(tmp_path / "PWNED")), protocol)
    other = tmp_path / "labels_case"
    other.mkdir()
    write(other, "evil", np.eye(4), labels=labels)
    with pytest.raises(pickle.UnpicklingError, match=r"labels\.pickle: refusing (posix|os|nt)"):
        load_tricl_format(other, "evil")
    assert not (tmp_path / "PWNED").exists()


def test_a_payload_nested_inside_legitimate_data_is_refused(tmp_path):
    code = f"open({str(tmp_path / 'PWNED')!r}, 'w').close()"
    edges = {"e0": [0, 1], "e1": [2, Payload(eval, code)]}  # deep inside a dict of lists
    refused(tmp_path, np.eye(4), r"hypergraph\.pickle: refusing builtins\.eval", hypergraph=edges)


def test_build_cannot_patch_an_allowed_class(tmp_path):
    # GLOBAL csr_matrix, then BUILD {"toarray": ...}: would set an attribute on the class itself
    module = scipy.sparse.csr_matrix.__module__
    payload = (
        b"\x80\x04" + short_str(module) + short_str("csr_matrix") + b"\x93"
        + b"}" + short_str("toarray") + b"N" + b"sb."
    )  # fmt: skip
    before = scipy.sparse.csr_matrix.toarray
    refused(tmp_path, payload, r"refusing to set the state of .*csr_matrix.* \(BUILD\)")
    assert scipy.sparse.csr_matrix.toarray is before


def test_the_generic_helpers_of_old_protocols_are_narrowed(tmp_path):
    # copyreg._reconstructor may only build the sparse classes; _codecs.encode only latin-1
    reconstruct = pickle.dumps(Payload(copyreg._reconstructor, collections.OrderedDict, dict, {}))
    refused(tmp_path, reconstruct, r"refusing copyreg\._reconstructor")
    folder = tmp_path / "codec"
    folder.mkdir()
    import codecs

    write(folder, "evil", pickle.dumps(Payload(codecs.encode, "x", "rot13"), protocol=2))
    with pytest.raises(pickle.UnpicklingError, match=r"refusing _codecs\.encode"):
        load_tricl_format(folder, "evil")


def test_a_sparse_matrix_with_out_of_range_indices_is_refused_before_densifying(tmp_path):
    m = scipy.sparse.csr_matrix(np.eye(4))
    m.indices = np.array([0, 1, 2, 1_000_000], dtype=m.indices.dtype)  # column 10^6 of 4
    write(tmp_path, "bad", m)
    with pytest.raises(ValueError, match=r"features\.pickle is not a valid csr matrix"):
        load_tricl_format(tmp_path, "bad")


@pytest.mark.parametrize(
    ("files", "error", "match"),
    [
        ({"features": {"x": 1}}, TypeError, r"features\.pickle must hold a numpy array"),
        ({"hypergraph": [[0, 1]]}, TypeError, r"hypergraph\.pickle must hold a dict"),
        ({"hypergraph": {"e": ["0", 1]}}, TypeError, r"member that is not an integer"),
        ({"labels": [0.5, 0, 1, 1]}, ValueError, r"labels\.pickle must hold integer labels"),
        ({"labels": "0011"}, TypeError, r"labels\.pickle must hold a list or array"),
        ({"features": b"\x80\x04\x95"}, pickle.UnpicklingError, r"not a readable data pickle"),
    ],
)
def test_files_with_the_wrong_content_name_the_file(tmp_path, files, error, match):
    content = {"features": np.eye(4), "hypergraph": EDGES, "labels": [0, 0, 1, 1], **files}
    write(tmp_path, "bad", content["features"], content["hypergraph"], content["labels"])
    with pytest.raises(error, match=match):
        load_tricl_format(tmp_path, "bad")
