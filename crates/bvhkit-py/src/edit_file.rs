//! `bvhkit.edit_file(src, dst, **steps)`: an edit streamed from a file to a
//! file through the core's [`bvhkit::edit::run::Edit`] (the same run as
//! `bvh edit`: streamed in constant memory for the clip's values where the
//! steps allow it, a look at frames first where one must, the whole clip
//! when one needs it or the stream gives up), written as every bvhkit
//! output is (`bvhkit-write`: never half-written, hard links refused
//! unless `break_links`).
//!
//! The keyword steps are named as `Bvh`'s edit methods and take the same
//! values; they apply in the order given (Python keeps keyword order).

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use bvhkit::edit::plan::FrameSpan;
use bvhkit::edit::run::{Edit, EditError, Note, Output, Rename, RestSource, Settings, Step};
use bvhkit_write::{AtomicFile, Dest, WriteBehind};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::bvh::PyBvh;
use crate::errors::{
    self, WriteError, bad_arg, position_channels, rotation_order, signed_axis, units,
};

/// Streams the edit `steps` of the BVH file `src` into `dst`; returns the
/// notes `bvh edit` would print.
#[pyfunction]
#[pyo3(signature = (src, dst, *, strict = false, source_up = None, source_units = None, layout_positions = "root", position_channels = "replace", drop_motion = false, portable = false, break_links = false, **steps))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn edit_file(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    strict: bool,
    source_up: Option<&str>,
    source_units: Option<&str>,
    layout_positions: &str,
    position_channels: &str,
    drop_motion: bool,
    portable: bool,
    break_links: bool,
    steps: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<String>> {
    let settings = Settings {
        source_up: source_up.map(signed_axis).transpose()?,
        source_units: source_units.map(units).transpose()?,
        layout_positions: errors::layout_positions(layout_positions, "layout_positions")?,
        drop_motion,
        portable,
        position_channels: self::position_channels(position_channels)?,
        lenient: !strict,
    };
    let mut list = Vec::new();
    if let Some(steps) = steps {
        for (name, value) in steps.iter() {
            let name: String = name.extract()?;
            if let Some(step) = step(&name, &value)? {
                list.push(step);
            }
        }
    }
    if bvhkit_write::same_file(&src, &dst) {
        return Err(bad_arg(format!(
            "{}: dst is src; edit_file never writes over its input",
            dst.display()
        )));
    }
    let edit = Edit::new(list, settings);
    let options = bvhkit_write::Options::new()
        .break_links(break_links)
        .break_links_hint("pass break_links=True");
    let mut out = FileOutput { path: &dst, options, atomic: None };
    let result = py.detach(|| {
        let bytes = std::fs::read(&src).map_err(|e| EditError::Read(e.into()))?;
        edit.run_bytes(&bytes, &mut out)
    });
    let shown = src.display().to_string();
    match result {
        Ok(notes) => Ok(notes
            .into_iter()
            .map(|n| match n {
                Note::Warning(w) => match w.position {
                    Some(p) => format!("{shown}:{}:{}: {}", p.line, p.column, w.message),
                    None => format!("{shown}: {}", w.message),
                },
                Note::Said(s) => format!("{shown}: {s}"),
            })
            .collect()),
        Err(e) => Err(match e {
            EditError::Read(e) => errors::to_py(py, e.with_path(&src)),
            EditError::Input(m) => PyValueError::new_err(format!("{shown}: {m}")),
            EditError::Step(e) => errors::to_py(py, e),
            EditError::Other(m) => PyValueError::new_err(m),
            EditError::Write(e) => errors::write_error(py, WriteError::Io(e), &dst),
            EditError::Output(e) => errors::write_error(py, e, &dst),
            EditError::GaveUp => PyRuntimeError::new_err("the edit gave up"),
        }),
    }
}

/// The step of keyword `name` with `value` (`None` for a flag step given
/// `False`).
fn step(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Option<Step>> {
    let flag = |s: Step| -> PyResult<Option<Step>> { Ok(value.extract::<bool>()?.then_some(s)) };
    Ok(Some(match name {
        "frames" => {
            let (start, stop): (usize, Option<usize>) = value.extract()?;
            Step::Frames(FrameSpan::new(Some(start), stop))
        }
        "every" => {
            let n: usize = value.extract()?;
            if n == 0 {
                return Err(bad_arg("every must be at least 1"));
            }
            Step::Every(n)
        }
        "reverse" => return flag(Step::Reverse),
        "resample" => Step::Fps(positive("resample", value.extract()?)?),
        "reorder" => Step::Order(rotation_order(&value.extract::<String>()?)?),
        "relayout" => Step::Layout(rotation_order(&value.extract::<String>()?)?),
        "convert_up" => Step::Up(signed_axis(&value.extract::<String>()?)?),
        "scale" => Step::Scale(positive("scale", value.extract()?)?),
        "to_units" => Step::Units(units(&value.extract::<String>()?)?),
        "to_height" => Step::Height(positive("to_height", value.extract()?)?),
        "mirror" => return flag(Step::Mirror),
        "in_place_root" => return flag(Step::InPlaceRoot),
        "root_to_origin" => return flag(Step::RootToOrigin),
        "extract_root" => Step::ExtractRoot(value.extract()?),
        "rename" => Step::Rename(Rename::Map(value.extract()?)),
        "rename_pattern" => {
            let (from, to): (String, String) = value.extract()?;
            Step::Rename(Rename::Pattern { from, to })
        }
        "remove_joints" => Step::RemoveJoints(value.extract()?),
        "strip_end_sites" => return flag(Step::StripEndSites),
        "add_end_sites" => return flag(Step::AddEndSites),
        "rest_pose" => Step::RestPose(match value.extract::<usize>() {
            Ok(frame) => RestSource::Frame(frame),
            Err(_) => {
                let other = value.cast::<PyBvh>().map_err(|_| {
                    PyTypeError::new_err("rest_pose must be a frame number or a Bvh")
                })?;
                RestSource::Skeleton(other.get().inner().skeleton().clone())
            }
        }),
        _ => return Err(PyTypeError::new_err(format!("edit_file() got an unknown step {name:?}"))),
    }))
}

fn positive(what: &str, v: f64) -> PyResult<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(bad_arg(format!("{what} must be positive, not {v}")))
    }
}

/// `dst`, written as `bvh edit` writes its output: a regular file in
/// place (the frames after room for the header, the header last, or both
/// copied into a new temporary file when its size came out otherwise),
/// anything else from an anonymous temporary file.
struct FileOutput<'a> {
    path: &'a Path,
    options: bvhkit_write::Options<'a>,
    atomic: Option<AtomicFile>,
}

impl Output for FileOutput<'_> {
    type Body = WriteBehind;
    type Error = WriteError;

    fn begin(&mut self, room: &[u8]) -> Result<WriteBehind, WriteError> {
        self.atomic = None;
        match self.options.destination(self.path)? {
            Dest::Replace(target) => {
                let atomic = AtomicFile::create(&target)?;
                let mut body = atomic.write_behind()?;
                body.seek(SeekFrom::Start(room.len() as u64))?;
                self.atomic = Some(atomic);
                Ok(body)
            }
            _ => Ok(WriteBehind::new(tempfile::tempfile()?)),
        }
    }

    fn finish(&mut self, body: WriteBehind, room: &[u8], header: &[u8]) -> Result<(), WriteError> {
        let mut file = body.into_inner();
        let atomic = self.atomic.take();
        let frames_at = if atomic.is_some() { room.len() as u64 } else { 0 };
        match atomic {
            Some(atomic) if header.len() == room.len() => {
                file.rewind()?;
                file.write_all(header)?;
                drop(file);
                atomic.commit()?;
            }
            _ => {
                file.seek(SeekFrom::Start(frames_at))?;
                self.options.write_atomic_with_body(self.path, header, &mut file)?;
            }
        }
        Ok(())
    }

    fn whole(&mut self, bvh: &bvhkit::Bvh) -> Result<(), WriteError> {
        self.atomic = None;
        self.options.write_atomic(self.path, |w| bvh.write(w).map_err(WriteError::Core))
    }
}
