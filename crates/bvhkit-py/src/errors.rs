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
