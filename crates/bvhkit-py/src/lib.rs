//! The native module of the Python package `bvhkit` (`bvhkit._native`).
//!
//! A thin wrapper: every rule (reading, warnings, forward kinematics,
//! rotation conversions, writing) is the core's (`bvhkit`); this crate only
//! converts arguments and results between Python and Rust, releases the GIL
//! around the work and hands out NumPy arrays. The Python-facing
//! documentation is in `python/bvhkit/__init__.pyi`.
//!
//! Built by maturin (`pip install ./crates/bvhkit-py`), which sets
//! `PYO3_BUILD_EXTENSION_MODULE` so the module does not link libpython; a
//! plain `cargo build`/`cargo test` of the workspace builds it as an
//! ordinary library.
//!
//! # Implementation notes
//!
//! pyo3 + the `numpy` crate, built by maturin into one abi3 wheel (CPython 3.10
//! or newer): `pip install ./crates/bvhkit-py`.
//!
//! `src/lib.rs` holds the module functions (`read`, `parse`, `read_many`),
//! `src/bvh.rs` the `Bvh` and `ReadWarning` classes, `src/errors.rs` the
//! exceptions (`ParseError(ValueError)` with `path`/`line`/`column`; I/O errors
//! become `OSError(errno, message, filename)`, which Python turns into
//! `FileNotFoundError` and the like; `Bvh.write`'s through
//! `bvhkit_write::os_error_code`, a refused hard-linked target an `OSError` of
//! `EMLINK`), `src/many.rs` `read_many` (rayon over files, a pool of `threads`
//! when asked), `src/mix.rs` the argument conversion of the blend family and
//! retarget (`Bvh.concat`/`blend`/`layer`/`loop`/`retarget`, `bvhkit.concat`;
//! each argument as the matching `bvh` command converts its flag, so both write
//! the same bytes; reports become `Bvh.report` and, for resampled or converted
//! clips, a `BvhWarning`; the methods themselves are in `bvh.rs`'s one
//! `#[pymethods]` block).
//!
//! `python/bvhkit/` re-exports the native module `bvhkit._native` and carries
//! the type stubs (`__init__.pyi`, the documentation editors show; a test runs
//! their examples) and `py.typed`.
//!
//! Work runs with the GIL released; arrays are fresh NumPy arrays except
//! `Bvh.motion`, a read-only view of the values whose base object is the `Bvh`
//! (one `unsafe` call, `PyArray::borrow_from_array`; the class is frozen, so
//! the values never move or change).
//!
//! No `extension-module` feature: pyo3 0.30 takes `PYO3_BUILD_EXTENSION_MODULE`
//! from maturin, so `cargo test --workspace --all-features` links as usual; the
//! crate is not in `default-members` and has no Rust tests (the tests are
//! pytest, `crates/bvhkit-py/tests/`, run by `scripts/test.sh` in a venv under
//! `target/py-venv`; their conftest and the dataset tests' share
//! `crates/bvhkit-testdata/python/bvhkit_pytest.py`: corpus lookup, the `bvh`
//! binary fixture, visible skips).
//!
//! Edits (`bvhkit::edit`) are methods of `Bvh` returning a new `Bvh`
//! (`src/bvh.rs`, `PyBvh::edited`: the core's function with the GIL released,
//! its error a `ValueError` with the core's message); they convert arguments as
//! `bvh edit` converts its flags, and `tests/test_edit.py` compares each one's
//! `to_bytes()` with `bvh edit`'s output on corpus files.

use std::path::PathBuf;

use pyo3::prelude::*;

mod bvh;
mod edit_file;
mod errors;
mod many;
mod mix;
mod quality;

use crate::bvh::{PyBvh, PyReadWarning};
use crate::errors::{BvhWarning, ParseError};

/// Reads a BVH file and returns a `Bvh`.
///
/// Lenient by default: problems real files have are repaired and listed in
/// `Bvh.warnings`; `strict=True` raises `ParseError` (a `ValueError` with
/// `path`, `line`, `column`) on the first. `warn=True` also emits every
/// warning through `warnings.warn` (category `BvhWarning`). Missing files
/// raise `FileNotFoundError` (and other `OSError` subclasses).
///
/// Example:
///
///     >>> bvh = bvhkit.read("samples/walk.bvh")
///     >>> bvh.positions().shape
///     (60, 24, 3)
#[pyfunction]
#[pyo3(signature = (path, strict = false, warn = false))]
fn read(py: Python<'_>, path: PathBuf, strict: bool, warn: bool) -> PyResult<PyBvh> {
    let result = py.detach(|| bvh::read_path(&path, strict));
    let bvh = result.map_err(|e| errors::to_py(py, e))?;
    if warn {
        bvh.emit_warnings(py)?;
    }
    Ok(bvh)
}

/// Parses a BVH text (`bytes` or `str`) held in memory; see `read`.
///
/// Example:
///
///     >>> bvhkit.parse(open("samples/walk.bvh", "rb").read()).n_frames
///     60
#[pyfunction]
#[pyo3(signature = (data, strict = false, warn = false))]
fn parse(py: Python<'_>, data: &Bound<'_, PyAny>, strict: bool, warn: bool) -> PyResult<PyBvh> {
    use pyo3::types::{PyByteArray, PyBytes, PyString};
    let result = if let Ok(b) = data.cast::<PyBytes>() {
        let bytes = b.as_bytes();
        py.detach(|| bvh::parse_bytes(bytes, strict, None))
    } else if let Ok(s) = data.cast::<PyString>() {
        let text = s.to_cow()?;
        let bytes = text.as_bytes();
        py.detach(|| bvh::parse_bytes(bytes, strict, None))
    } else if let Ok(b) = data.cast::<PyByteArray>() {
        // A bytearray can change under us: parse a copy.
        let bytes = b.to_vec();
        py.detach(|| bvh::parse_bytes(&bytes, strict, None))
    } else {
        let type_name = data.get_type().name()?;
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "parse() takes bytes or str, not {type_name}"
        )));
    };
    let bvh = result.map_err(|e| errors::to_py(py, e))?;
    if warn {
        bvh.emit_warnings(py)?;
    }
    Ok(bvh)
}

/// Reads many files on all cores (a pool of `threads` when given) with the
/// GIL released; results in input order.
///
/// Each result is a `Bvh`, or `(Bvh, positions)` with `positions=True`.
/// `errors="raise"` (default) raises the error of the first failing file in
/// input order once all are read; `errors="return"` puts the exception
/// object in that file's place.
///
/// Example:
///
///     >>> for bvh, pos in bvhkit.read_many(["samples/walk.bvh"], positions=True):
///     ...     print(bvh.n_frames, pos.shape)
///     60 (60, 24, 3)
#[pyfunction]
#[pyo3(signature = (paths, threads = None, positions = false, strict = false, errors = "raise", position_channels = "replace"))]
fn read_many(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    threads: Option<usize>,
    positions: bool,
    strict: bool,
    errors: &str,
    position_channels: &str,
) -> PyResult<Vec<Py<PyAny>>> {
    let return_errors = match errors {
        "raise" => false,
        "return" => true,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "errors must be 'raise' or 'return', not {other:?}"
            )));
        }
    };
    let mode = bvh::position_channels(position_channels)?;
    many::read_many(py, paths, threads, positions.then_some(mode), strict, return_errors)
}

/// Clips of one skeleton one after another, each continuing from where the
/// one before ends (moved on the ground and turned about the up axis
/// unless `keep_position`), as `bvh concat`. `crossfade`: an int (frames),
/// a float (seconds) or the command line's text (`"12"`, `"0.4s"`).
///
/// Example:
///
///     >>> walk = bvhkit.read("samples/walk.bvh")
///     >>> bvhkit.concat([walk, walk.reverse()], crossfade="0.2s").n_frames
///     104
#[pyfunction]
#[pyo3(signature = (clips, crossfade = None, search = None, linear = false, keep_position = false, up = None))]
fn concat(
    py: Python<'_>,
    clips: Vec<PyRef<'_, PyBvh>>,
    crossfade: Option<&Bound<'_, PyAny>>,
    search: Option<&Bound<'_, PyAny>>,
    linear: bool,
    keep_position: bool,
    up: Option<&str>,
) -> PyResult<PyBvh> {
    let clips: Vec<mix::Clip<'_>> = clips.iter().map(|c| c.clip()).collect();
    mix::concat_clips(py, &clips, crossfade, search, linear, keep_position, up).map(bvh::made)
}

/// How far clip ``b`` is from clip ``a``, as ``bvh diff A B --json``: a
/// dict with ``mpjpe``, ``mpjpe_root``, ``pa_mpjpe`` (m), ``rotation_deg``,
/// ``joints`` (per pair), ``per_frame`` (a NumPy array, m), ``worst_frames``
/// and ``notes``. ``map``: ``None`` (by name), ``"auto"`` (the retarget name
/// families), a map file's path or a dict ``{a_joint: b_joint}``; ``units``
/// sets both clips' unit (each is guessed otherwise).
///
/// Example:
///
///     >>> walk = bvhkit.read("samples/walk.bvh")
///     >>> bvhkit.diff(walk, walk)["mpjpe"]
///     0.0
#[pyfunction]
#[pyo3(signature = (a, b, map = None, units = None, position_channels = "replace", worst = 10))]
fn diff<'py>(
    py: Python<'py>,
    a: PyRef<'py, PyBvh>,
    b: PyRef<'py, PyBvh>,
    map: Option<&Bound<'py, PyAny>>,
    units: Option<&str>,
    position_channels: &str,
    worst: usize,
) -> PyResult<Bound<'py, PyAny>> {
    quality::diff(py, &a, &b, map, units, position_channels, worst)
}

/// The native module; `bvhkit/__init__.py` re-exports it.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(read_many, m)?)?;
    m.add_function(wrap_pyfunction!(concat, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(edit_file::edit_file, m)?)?;
    m.add_class::<PyBvh>()?;
    m.add_class::<PyReadWarning>()?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("BvhWarning", py.get_type::<BvhWarning>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
