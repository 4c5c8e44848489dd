//! Python exceptions for the core's errors and warnings.

use pyo3::exceptions::{PyOSError, PyUserWarning, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    bvhkit,
    ParseError,
    PyValueError,
    "A BVH text that does not parse (or a value out of its domain).\n\n\
     Attributes: ``path`` (str or None), ``line`` and ``column`` (int or None, from 1); \
     the message is ``path:line:column: message``."
);

pyo3::create_exception!(
    bvhkit,
    BvhWarning,
    PyUserWarning,
    "The category of the warnings ``read(..., warn=True)`` emits through ``warnings.warn``."
);

/// The Python exception for a core error: `OSError` (its errno subclass,
/// such as `FileNotFoundError`, with `filename`) for I/O, else `ParseError`
/// with `path`, `line`, `column`.
pub(crate) fn to_py(py: Python<'_>, e: bvhkit::Error) -> PyErr {
    let path = e.path().map(|p| p.display().to_string());
    if let bvhkit::ErrorKind::Io(io) = e.kind() {
        // OSError(errno, strerror, filename) becomes the errno's subclass.
        return match (io.raw_os_error(), &path) {
            (Some(errno), Some(p)) => PyOSError::new_err((errno, os_message(io), p.clone())),
            (Some(errno), None) => PyOSError::new_err((errno, os_message(io))),
            // No errno: pyo3 picks the subclass from the error kind.
            _ => PyErr::from(std::io::Error::new(io.kind(), e.to_string())),
        };
    }
    let err = ParseError::new_err(e.to_string());
    let value = err.value(py);
    let pos = e.position();
    let set = || -> PyResult<()> {
        value.setattr("path", path)?;
        value.setattr("line", pos.map(|p| p.line))?;
        value.setattr("column", pos.map(|p| p.column))?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(failed) => failed,
    }
}

/// Why `Bvh.write` failed: the core's writer (a value it cannot write, or
/// the I/O under it) or the output file (`bvhkit-write`).
pub(crate) enum WriteError {
    Core(bvhkit::Error),
    Io(std::io::Error),
}

impl From<std::io::Error> for WriteError {
    fn from(e: std::io::Error) -> WriteError {
        WriteError::Io(e)
    }
}

/// The Python exception of a failed `Bvh.write(path)`: `OSError(errno,
/// message, path)` (its errno's subclass) for I/O and refusals, whose
/// message is the OS's, with what failed where `bvhkit-write` says it, or
/// the refusal's; `ParseError` for a value the writer cannot write.
pub(crate) fn write_error(py: Python<'_>, e: WriteError, path: &std::path::Path) -> PyErr {
    let io = match e {
        WriteError::Io(io) => io,
        WriteError::Core(e) => match e.kind() {
            bvhkit::ErrorKind::Io(io) => match io.raw_os_error() {
                Some(errno) => std::io::Error::from_raw_os_error(errno),
                None => std::io::Error::new(io.kind(), e.to_string()),
            },
            _ => return to_py(py, e),
        },
    };
    let file = path.display().to_string();
    let Some(errno) = bvhkit_write::os_error_code(&io) else {
        // No number (not Linux): pyo3 picks the subclass from the kind.
        return PyErr::from(io);
    };
    let message = if io.raw_os_error().is_some() {
        os_message(&io)
    } else {
        // What failed and the OS message (`creating a temporary file in DIR:
        // No such file or directory`), or a refusal, which names the path
        // first: the exception shows the path last.
        let text = io.to_string().replace(&format!(" (os error {errno})"), "");
        text.strip_prefix(&format!("{file}: ")).map_or(text.clone(), str::to_string)
    };
    PyOSError::new_err((errno, message, file))
}

/// The OS message of an I/O error without Rust's " (os error N)" suffix.
fn os_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The exception object of `err`, for `read_many(..., errors="return")`.
pub(crate) fn into_value(py: Python<'_>, err: PyErr) -> Py<PyAny> {
    err.into_value(py).into_any()
}

/// `ValueError` for a bad argument.
pub(crate) fn bad_arg(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

/// `"replace"` or `"add"`.
pub(crate) fn position_channels(s: &str) -> PyResult<bvhkit::PositionChannels> {
    match s {
        "replace" => Ok(bvhkit::PositionChannels::Replace),
        "add" => Ok(bvhkit::PositionChannels::Add),
        _ => Err(bad_arg(format!("position_channels must be 'replace' or 'add', not {s:?}"))),
    }
}

/// An axis by name (`x`, `-z`, ...), as the command line's `--up`.
pub(crate) fn signed_axis(s: &str) -> PyResult<bvhkit::edit::axes::SignedAxis> {
    bvhkit::edit::axes::SignedAxis::from_name(s)
        .ok_or_else(|| bad_arg(format!("{s:?} is not an axis (x, y, z, -x, -y, -z)")))
}

/// A rotation order by name (`"ZXY"`, any case), as `--order`.
pub(crate) fn rotation_order(s: &str) -> PyResult<bvhkit::rotation::RotationOrder> {
    bvhkit::rotation::RotationOrder::from_name(s).ok_or_else(|| {
        bad_arg(format!("order must be one of XYZ, XZY, YXZ, YZX, ZXY, ZYX, not {s:?}"))
    })
}

/// A unit by symbol or first word of its name (as `bvh edit --units`).
pub(crate) fn units(s: &str) -> PyResult<bvhkit::units::Units> {
    bvhkit::units::Units::from_name(s)
        .ok_or_else(|| bad_arg(format!("{s:?} is not a unit (m, cm, mm, in, cmu)")))
}

/// Which joints keep position channels after a layout change (`"root"`,
/// `"all"`, `"keep"` or `"none"`, as `--layout-positions`); `arg` names the
/// argument in the error.
pub(crate) fn layout_positions(s: &str, arg: &str) -> PyResult<bvhkit::edit::layout::Positions> {
    use bvhkit::edit::layout::Positions;
    match s {
        "root" => Ok(Positions::Root),
        "all" => Ok(Positions::All),
        "keep" => Ok(Positions::Keep),
        "none" => Ok(Positions::None),
        _ => Err(bad_arg(format!("{arg} must be 'root', 'all', 'keep' or 'none', not {s:?}"))),
    }
}
