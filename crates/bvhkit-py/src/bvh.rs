//! `bvhkit.Bvh`: a parsed file, its arrays, forward kinematics and writing.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use std::collections::HashMap;

use bvhkit::edit::scale::{ScaleMap, factor_to_height};
use bvhkit::edit::{
    self,
    axes::{Axes, AxesMap, SignedAxis, detect_up},
    map_frames,
};
use bvhkit::glam::{DAffine3, DVec3};
use bvhkit::rotation::{RotationOrder, RotationRepr, mat3_to_repr};
use bvhkit::units::UnitGuess;
use bvhkit::{Kinematics, PositionChannels, ReadOptions};
use numpy::ndarray::{Array, ArrayView2, Ix2};
use numpy::{IntoPyArray, PyArray, PyArray1, PyArray2, PyArrayDyn, PyArrayMethods};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PySlice, PySliceMethods};
use rayon::prelude::*;

use crate::errors::{self, BvhWarning, bad_arg, rotation_order, units};
pub(crate) use crate::errors::{position_channels, signed_axis};
use crate::mix::Clip;

/// A problem that lenient reading recovered from (`Bvh.warnings`).
#[pyclass(name = "ReadWarning", module = "bvhkit", frozen, get_all)]
#[derive(Clone)]
pub(crate) struct PyReadWarning {
    /// Line, from 1 (None when the problem has no place in the text).
    line: Option<u64>,
    /// Column in characters, from 1 (None with `line`).
    column: Option<u64>,
    /// What was wrong and what was done about it.
    message: String,
    /// The kind, for filtering: `FrameCount`, `FrameTime`, `MotionHeader`,
    /// `RowLayout`, `TruncatedFrame`, `Hierarchy`, `Encoding`.
    kind: String,
}

impl PyReadWarning {
    fn new(w: &bvhkit::Warning) -> PyReadWarning {
        PyReadWarning {
            line: w.position.map(|p| p.line),
            column: w.position.map(|p| p.column),
            message: w.message.clone(),
            kind: format!("{:?}", w.kind),
        }
    }
}

#[pymethods]
impl PyReadWarning {
    fn __str__(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{l}:{c}: {}", self.message),
            _ => self.message.clone(),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "ReadWarning(line={}, column={}, kind={:?}, message={:?})",
            opt(self.line),
            opt(self.column),
            self.kind,
            self.message
        )
    }

    /// `(line, column, message)`, so a warning unpacks like a tuple.
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        (self.line, self.column, self.message.clone())
            .into_pyobject(py)?
            .try_iter()
            .map(Bound::into_any)
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "None".to_string(), |v| v.to_string())
}

/// A parsed BVH file: skeleton, motion and the warnings of reading it.
///
/// Immutable: its arrays are read-only views or fresh arrays, so the
/// `motion` view can point into the values without copying them.
#[pyclass(name = "Bvh", module = "bvhkit", frozen)]
pub(crate) struct PyBvh {
    bvh: bvhkit::Bvh,
    warnings: Vec<bvhkit::Warning>,
    path: Option<PathBuf>,
    /// What a mix or retarget said about its work (`Bvh.report`).
    report: Option<String>,
}

/// Reads a file (lenient unless `strict`).
pub(crate) fn read_path(path: &Path, strict: bool) -> bvhkit::Result<PyBvh> {
    let (bvh, warnings) = ReadOptions::new().lenient(!strict).read_path(path)?;
    Ok(PyBvh { bvh, warnings, path: Some(path.to_path_buf()), report: None })
}

/// Parses a text held in memory (lenient unless `strict`).
pub(crate) fn parse_bytes(data: &[u8], strict: bool, path: Option<&Path>) -> bvhkit::Result<PyBvh> {
    let (bvh, warnings) = ReadOptions::new().lenient(!strict).parse(data)?;
    Ok(PyBvh { bvh, warnings, path: path.map(Path::to_path_buf), report: None })
}

fn rotation_repr(s: &str) -> PyResult<RotationRepr> {
    match s {
        "euler" => Ok(RotationRepr::Euler),
        "quat" => Ok(RotationRepr::Quat),
        "matrix" => Ok(RotationRepr::Matrix),
        "6d" => Ok(RotationRepr::SixD),
        "axis_angle" | "axis-angle" => Ok(RotationRepr::AxisAngle),
        _ => Err(bad_arg(format!(
            "repr must be 'quat', 'matrix', '6d', 'axis_angle' or 'euler', not {s:?}"
        ))),
    }
}

/// The frames `frames` selects, out of `n`: None (all), an int, a slice or
/// an iterable of ints; negative indices count from the end.
fn frame_indices(frames: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<usize>> {
    if let Ok(s) = frames.cast::<PySlice>() {
        let ix = s.indices(n as isize)?;
        let mut out = Vec::with_capacity(ix.slicelength);
        let mut i = ix.start;
        for _ in 0..ix.slicelength {
            out.push(i as usize);
            i += ix.step;
        }
        return Ok(out);
    }
    let one = |v: i64| -> PyResult<usize> {
        let i = if v < 0 { v + n as i64 } else { v };
        if i < 0 || i >= n as i64 {
            return Err(PyIndexError::new_err(format!("frame {v} is out of range for {n} frames")));
        }
        Ok(i as usize)
    };
    if let Ok(v) = frames.extract::<i64>() {
        return Ok(vec![one(v)?]);
    }
    let iter = frames.try_iter().map_err(|_| {
        PyTypeError::new_err("frames must be None, an int, a slice or a sequence of ints")
    })?;
    iter.map(|item| one(item?.extract::<i64>()?)).collect()
}

/// The `Bvh` a mix or retarget made, with its report.
pub(crate) fn made((bvh, report): (bvhkit::Bvh, String)) -> PyBvh {
    PyBvh::made(bvh, report)
}

impl PyBvh {
    /// A `Bvh` made by a mix or retarget, with its report.
    pub(crate) fn made(bvh: bvhkit::Bvh, report: String) -> PyBvh {
        PyBvh { bvh, warnings: Vec::new(), path: None, report: Some(report) }
    }

    /// The core's `Bvh`.
    pub(crate) fn inner(&self) -> &bvhkit::Bvh {
        &self.bvh
    }

    /// The clip and its path, for `mix.rs`.
    pub(crate) fn clip(&self) -> Clip<'_> {
        Clip { bvh: &self.bvh, path: self.path.as_deref() }
    }

    /// Number of joints, End Sites included.
    pub(crate) fn n_joints_rs(&self) -> usize {
        self.bvh.skeleton().len()
    }

    pub(crate) fn emit_warnings(&self, py: Python<'_>) -> PyResult<()> {
        let category = py.get_type::<BvhWarning>();
        let prefix = self.path.as_ref().map(|p| format!("{}:", p.display())).unwrap_or_default();
        for w in &self.warnings {
            let text = format!("{prefix}{w}").replace('\0', " ");
            let msg = CString::new(text).expect("NULs were replaced");
            PyErr::warn(py, category.as_any(), &msg, 1)?;
        }
        Ok(())
    }

    /// World positions of the selected frames (all when `sel` is None),
    /// frames × joints × 3, on all cores.
    pub(crate) fn positions_of(&self, mode: PositionChannels, sel: Option<&[usize]>) -> Vec<f64> {
        let fk = Kinematics::new(self.bvh.skeleton(), mode);
        let motion = self.bvh.motion();
        let n = fk.len();
        let frames = sel.map_or(motion.n_frames(), <[usize]>::len);
        let mut out = vec![0.0; frames * n * 3];
        if n == 0 {
            return out;
        }
        let pos: &mut [DVec3] = bytemuck::cast_slice_mut(&mut out);
        if sel.is_none() {
            // Every frame: eight frames at a time on SIMD lanes
            // (`positions_many`, the bits of `positions_with`), in pieces
            // of `PIECE` frames, one task each.
            const PIECE: usize = 256;
            let channels = motion.n_channels();
            let values = motion.values();
            pos.par_chunks_mut(n * PIECE).enumerate().for_each_init(
                || fk.lanes_scratch(),
                |lanes, (k, chunk)| {
                    let first = k * PIECE;
                    let count = chunk.len() / n;
                    let frames = &values[first * channels..(first + count) * channels];
                    fk.positions_many(frames, lanes, chunk);
                },
            );
            return out;
        }
        let chunks = pos.par_chunks_mut(n).enumerate().with_min_len(64);
        chunks.for_each_init(
            || fk.scratch(),
            |scratch, (k, chunk)| {
                let f = sel.map_or(k, |s| s[k]);
                fk.positions_with(motion.frame(f), scratch, chunk);
            },
        );
        out
    }

    fn array3<'py>(
        py: Python<'py>,
        values: Vec<f64>,
        shape: &[usize],
    ) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let a = Array::from_shape_vec(shape.to_vec(), values)
            .map_err(|e| bad_arg(format!("internal shape error: {e}")))?;
        Ok(a.into_pyarray(py))
    }
}

#[pymethods]
impl PyBvh {
    /// The file this was read from (None for `parse`).
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// Joint names in file order, End Sites included, as `bvh positions`
    /// names them (End Sites `<Parent>_End`).
    #[getter]
    fn joint_names(&self) -> Vec<String> {
        self.bvh.skeleton().display_names()
    }

    /// Parent index of every joint (-1 for roots), int64.
    #[getter]
    fn parents<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let v: Vec<i64> = self
            .bvh
            .skeleton()
            .joints()
            .iter()
            .map(|j| j.parent().map_or(-1, |p| p.index() as i64))
            .collect();
        v.into_pyarray(py)
    }

    /// Whether each joint is an End Site, bool.
    #[getter]
    fn end_sites<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        let v: Vec<bool> = self.bvh.skeleton().joints().iter().map(|j| j.is_end_site()).collect();
        v.into_pyarray(py)
    }

    /// `OFFSET` of every joint, joints × 3, float64.
    #[getter]
    fn offsets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let j = self.bvh.skeleton().joints();
        let v = j.iter().flat_map(|j| j.offset().to_array()).collect();
        PyBvh::array3(py, v, &[j.len(), 3])
    }

    /// Channel names of every joint (`[]` for End Sites), in file order.
    #[getter]
    fn channels(&self) -> Vec<Vec<&'static str>> {
        let joints = self.bvh.skeleton().joints();
        joints.iter().map(|j| j.channels().iter().map(|c| c.name()).collect()).collect()
    }

    /// The joint of every motion column, int64 (length `n_channels`).
    #[getter]
    fn channel_joints<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let joints = self.bvh.skeleton().joints();
        let v: Vec<i64> = joints
            .iter()
            .enumerate()
            .flat_map(|(i, j)| std::iter::repeat_n(i as i64, j.channels().len()))
            .collect();
        v.into_pyarray(py)
    }

    /// Seconds per frame, exactly as written.
    #[getter]
    fn frame_time(&self) -> f64 {
        self.bvh.motion().frame_time()
    }

    /// Frames per second (1 / frame_time).
    #[getter]
    fn fps(&self) -> f64 {
        self.bvh.motion().fps()
    }

    /// Number of frames.
    #[getter]
    fn n_frames(&self) -> usize {
        self.bvh.motion().n_frames()
    }

    /// Number of channels (motion columns).
    #[getter]
    fn n_channels(&self) -> usize {
        self.bvh.motion().n_channels()
    }

    /// Number of joints, End Sites included.
    #[getter]
    fn n_joints(&self) -> usize {
        self.bvh.skeleton().len()
    }

    /// The motion values, frames × channels, float64: a read-only view of
    /// the values without a copy, which keeps this object alive.
    #[getter]
    fn motion<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let this = slf.get();
        let m = this.bvh.motion();
        let view: ArrayView2<'_, f64> =
            ArrayView2::from_shape((m.n_frames(), m.n_channels()), m.values())
                .map_err(|e| bad_arg(format!("internal shape error: {e}")))?;
        // SAFETY: the array's base object is `slf`, which owns the values;
        // the class is frozen and never changes its `Bvh`, so the values
        // are neither freed nor moved while the array lives.
        #[allow(unsafe_code)]
        let array: Bound<'py, PyArray<f64, Ix2>> =
            unsafe { PyArray2::borrow_from_array(&view, slf.clone().into_any()) };
        // Read-only: the data belongs to an immutable object. Without
        // OWNDATA and with a non-array base, NumPy refuses to make it
        // writeable again.
        let readonly = array
            .try_readwrite()
            .map_err(|e| bad_arg(format!("internal borrow error: {e}")))?
            .make_nonwriteable();
        let out: Bound<'py, PyArray2<f64>> = (*readonly).clone();
        drop(readonly);
        Ok(out)
    }

    /// What the mix or retarget that made this said about its work (the
    /// notes `bvh concat`/`blend`/`layer`/`loop`/`retarget` print on
    /// standard error), lines joined by newlines; `None` for a `Bvh` read,
    /// parsed or edited.
    #[getter]
    fn report(&self) -> Option<String> {
        self.report.clone()
    }

    /// The warnings of lenient reading, in file order (empty when strict).
    #[getter]
    fn warnings(&self) -> Vec<PyReadWarning> {
        self.warnings.iter().map(PyReadWarning::new).collect()
    }

    /// World positions, frames × joints × 3, float64.
    #[pyo3(signature = (frames = None, position_channels = "replace"))]
    fn positions<'py>(
        &self,
        py: Python<'py>,
        frames: Option<&Bound<'py, PyAny>>,
        position_channels: &str,
    ) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let mode = self::position_channels(position_channels)?;
        let n = self.bvh.skeleton().len();
        let sel = frames.map(|f| frame_indices(f, self.bvh.motion().n_frames())).transpose()?;
        let single = frames.is_some_and(|f| f.extract::<i64>().is_ok());
        let values = py.detach(|| self.positions_of(mode, sel.as_deref()));
        let n_frames = values.len() / (3 * n).max(1);
        let n_frames =
            if n == 0 { sel.as_ref().map_or(self.n_frames(), Vec::len) } else { n_frames };
        if single {
            PyBvh::array3(py, values, &[n, 3])
        } else {
            PyBvh::array3(py, values, &[n_frames, n, 3])
        }
    }

    /// Joint rotations, frames × joints × width (frames × joints × 3 × 3
    /// for matrices), float64.
    #[pyo3(signature = (repr = "quat", space = "local", order = None, continuous = false))]
    fn rotations<'py>(
        &self,
        py: Python<'py>,
        repr: &str,
        space: &str,
        order: Option<&str>,
        continuous: bool,
    ) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let repr = rotation_repr(repr)?;
        let local = match space {
            "local" => true,
            "world" => false,
            _ => return Err(bad_arg(format!("space must be 'local' or 'world', not {space:?}"))),
        };
        let fixed = order
            .map(|o| {
                RotationOrder::from_name(o).ok_or_else(|| {
                    bad_arg(format!("{o:?} is not a rotation order (XYZ, XZY, YXZ, YZX, ZXY, ZYX)"))
                })
            })
            .transpose()?;
        let skel = self.bvh.skeleton();
        let motion = self.bvh.motion();
        let n = skel.len();
        let w = repr.width();
        let values = py.detach(|| {
            let fk = Kinematics::new(skel, PositionChannels::Replace);
            let orders: Vec<RotationOrder> = skel
                .joints()
                .iter()
                .map(|j| fixed.or(j.rotation_order()).unwrap_or(RotationOrder::ZXY))
                .collect();
            let mut out = vec![0.0; motion.n_frames() * n * w];
            let one = |f: usize, xf: &mut Vec<DAffine3>, out: &mut [f64], prev: Option<&[f64]>| {
                let frame = motion.frame(f);
                if local {
                    fk.local(frame, xf);
                } else {
                    fk.world(frame, xf);
                }
                for (i, j) in skel.joints().iter().enumerate() {
                    let exact = if local { j.euler_angles(frame, orders[i]) } else { None };
                    let previous = prev.map(|p| &p[i * w..(i + 1) * w]);
                    let slot = &mut out[i * w..(i + 1) * w];
                    mat3_to_repr(xf[i].matrix3, repr, orders[i], exact, previous, slot);
                }
            };
            if n == 0 {
                return out;
            }
            if continuous {
                let mut xf = vec![DAffine3::IDENTITY; n];
                for f in 0..motion.n_frames() {
                    let (done, rest) = out.split_at_mut(f * n * w);
                    let prev = (f > 0).then(|| &done[(f - 1) * n * w..]);
                    one(f, &mut xf, &mut rest[..n * w], prev);
                }
            } else {
                out.par_chunks_mut(n * w).enumerate().with_min_len(64).for_each_init(
                    || vec![DAffine3::IDENTITY; n],
                    |xf, (f, chunk)| one(f, xf, chunk, None),
                );
            }
            out
        });
        let f = motion.n_frames();
        if repr == RotationRepr::Matrix {
            PyBvh::array3(py, values, &[f, n, 3, 3])
        } else {
            PyBvh::array3(py, values, &[f, n, w])
        }
    }

    /// The Euler order `rotations(repr="euler", order=order)` uses for each
    /// joint: the joint's own, or ZXY for joints without three rotation
    /// channels, unless `order` is given.
    #[pyo3(signature = (order = None))]
    fn euler_orders(&self, order: Option<&str>) -> PyResult<Vec<&'static str>> {
        let fixed = order
            .map(|o| {
                RotationOrder::from_name(o)
                    .ok_or_else(|| bad_arg(format!("{o:?} is not a rotation order")))
            })
            .transpose()?;
        let joints = self.bvh.skeleton().joints();
        Ok(joints
            .iter()
            .map(|j| fixed.or(j.rotation_order()).unwrap_or(RotationOrder::ZXY).name())
            .collect())
    }

    /// The canonical BVH text (shortest round-trip numbers, LF).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| self.bvh.to_bytes()).map_err(|e| errors::to_py(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Writes the canonical text to `path` as every bvhkit output is
    /// written (`bvhkit-write`): never a half-written file, nothing left
    /// behind, links followed, devices and FIFOs written through, the mode
    /// of a new file from the umask and of an old one kept; a file with
    /// other hard links is refused unless `break_links`. `portable`: the
    /// text of [`PyBvh::portable`] (`--portable`).
    #[pyo3(signature = (path, break_links = false, portable = false))]
    fn write(
        &self,
        py: Python<'_>,
        path: PathBuf,
        break_links: bool,
        portable: bool,
    ) -> PyResult<()> {
        let outputs = bvhkit_write::Options::new()
            .break_links(break_links)
            .break_links_hint("pass break_links=True");
        let made;
        let bvh = if portable {
            made = py
                .detach(|| {
                    edit::portable::portable(
                        &self.bvh,
                        bvhkit::PositionChannels::Replace,
                        edit::portable::Scope::Full,
                    )
                })
                .map_err(|e| errors::to_py(py, e))?
                .0;
            &made
        } else {
            &self.bvh
        };
        py.detach(|| {
            outputs.write_atomic(&path, |w| bvh.write(w).map_err(errors::WriteError::Core))
        })
        .map_err(|e| errors::write_error(py, e, &path))
    }

    /// Position channels every reader reads the same way, world motion
    /// unchanged (`bvh edit --portable`): constant ones below a root folded
    /// into the OFFSET, the OFFSET zeroed under the others.
    #[pyo3(signature = (position_channels = "replace"))]
    fn portable(&self, py: Python<'_>, position_channels: &str) -> PyResult<PyBvh> {
        let mode = self::position_channels(position_channels)?;
        self.edited(py, |b| Ok(edit::portable::portable(b, mode, edit::portable::Scope::Full)?.0))
    }

    fn __len__(&self) -> usize {
        self.bvh.motion().n_frames()
    }

    fn __repr__(&self) -> String {
        let s = self.bvh.skeleton();
        let m = self.bvh.motion();
        let joints = s.joints().iter().filter(|j| !j.is_end_site()).count();
        let ends = s.len() - joints;
        let from = self
            .path
            .as_ref()
            .map(|p| format!(" {:?}", p.display().to_string()))
            .unwrap_or_default();
        format!(
            "<bvhkit.Bvh{from}: {joints} joints + {ends} end sites, {} channels, {} frames at {} fps>",
            m.n_channels(),
            m.n_frames(),
            m.fps()
        )
    }

    // Edits (`bvhkit::edit`): methods returning a new `Bvh`, converting only
    // arguments (each as `bvh edit` converts its flag); the rules stay in the
    // core. Work runs with the GIL released; errors are `ValueError`s with
    // the core's message.

    /// Frames ``start`` up to ``stop`` (excluded; ``None``: the end), clamped
    /// to the clip, as ``bvh edit --frames START..STOP``.
    #[pyo3(signature = (start = 0, stop = None))]
    fn frames(&self, py: Python<'_>, start: usize, stop: Option<usize>) -> PyResult<PyBvh> {
        let n = self.bvh.motion().n_frames();
        // A range past the end is refused as `bvh edit --frames` refuses it.
        bvhkit::edit::plan::FrameSpan::new(Some(start), stop)
            .check(n)
            .map_err(crate::errors::bad_arg)?;
        let start = start.min(n);
        let stop = stop.unwrap_or(n).clamp(start, n);
        self.edited(py, |b| Ok(edit::frames::range(b, start..stop)?))
    }

    /// Every ``n``th frame from the first (``Frame Time`` times ``n``), as
    /// ``bvh edit --every N``.
    fn every(&self, py: Python<'_>, n: usize) -> PyResult<PyBvh> {
        self.edited(py, |b| Ok(edit::frames::every(b, n)?))
    }

    /// The frames in reverse order, as ``bvh edit --reverse``.
    fn reverse(&self, py: Python<'_>) -> PyResult<PyBvh> {
        self.edited(py, |b| Ok(edit::frames::reverse(b)?))
    }

    /// Resampled to ``fps`` frames per second (rotations by quaternion
    /// SLERP, kept frames bit for bit), as ``bvh edit --fps N``.
    fn resample(&self, py: Python<'_>, fps: f64) -> PyResult<PyBvh> {
        self.edited(py, |b| Ok(edit::resample::to_fps(b, fps)?))
    }

    /// Every joint's rotation channels in one Euler ``order`` (``"XYZ"``...),
    /// as ``bvh edit --order ORDER``.
    fn reorder(&self, py: Python<'_>, order: &str) -> PyResult<PyBvh> {
        let order = rotation_order(order)?;
        self.edited(py, |b| {
            Ok(map_frames(b, &mut edit::order::OrderMap::all(b.skeleton(), order))?)
        })
    }

    /// Every joint to three rotation channels in ``order`` and position
    /// channels as ``positions`` says (``"root"``, ``"all"``, ``"keep"``,
    /// ``"none"``), as ``bvh edit --layout ORDER --layout-positions P``.
    /// A layout that drops position channels whose motion is lost (a
    /// world position moves by more than 1e-9 of the size) raises
    /// `ValueError` naming the joints, unless `drop_motion`
    /// (`--drop-motion`).
    #[pyo3(signature = (order, positions = "root", position_channels = "replace", drop_motion = false))]
    fn relayout(
        &self,
        py: Python<'_>,
        order: &str,
        positions: &str,
        position_channels: &str,
        drop_motion: bool,
    ) -> PyResult<PyBvh> {
        use edit::layout::LayoutMap;
        let order = rotation_order(order)?;
        let positions = errors::layout_positions(positions, "positions")?;
        let mode = self::position_channels(position_channels)?;
        let lost = std::sync::Mutex::new(None);
        let out = self.edited(py, |b| {
            let mut map = LayoutMap::new(b.skeleton(), order, positions, mode)?;
            let out = map_frames(b, &mut map)?;
            *lost.lock().unwrap_or_else(|e| e.into_inner()) = map.lost_motion();
            Ok(out)
        })?;
        match lost.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(what) if !drop_motion => Err(bad_arg(format!(
                "{what}; pass drop_motion=True to drop them anyway, or keep them with \
                 positions='keep' or 'all'"
            ))),
            _ => Ok(out),
        }
    }

    /// Converted to up axis ``up`` (``"x"``, ``"-y"``...) from ``source_up``
    /// (detected when ``None``; an error when it cannot be), each with its
    /// default forward axis: Blender's axis conversion, as ``bvh edit --up
    /// UP --source-up SOURCE``.
    #[pyo3(signature = (up = "y", source_up = None))]
    fn convert_up(&self, py: Python<'_>, up: &str, source_up: Option<&str>) -> PyResult<PyBvh> {
        let to = signed_axis(up)?;
        let from = source_up.map(signed_axis).transpose()?;
        self.edited(py, |b| {
            let from = match from {
                Some(a) => a,
                None => {
                    let found = detect_up(b);
                    found.axis.ok_or_else(|| {
                        EditError(format!("cannot detect the up axis: {found}; give source_up"))
                    })?
                }
            };
            let mut map = AxesMap::new(b.skeleton(), Axes::with_up(from), Axes::with_up(to));
            Ok(map_frames(b, &mut map)?)
        })
    }

    /// Every length multiplied by ``factor``, as ``bvh edit --scale F``.
    fn scale(&self, py: Python<'_>, factor: f64) -> PyResult<PyBvh> {
        edit::scale::check_given("scale factor", factor)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        self.edited(py, |b| Ok(map_frames(b, &mut ScaleMap::new(b.skeleton(), factor)?)?))
    }

    /// Lengths converted to ``units`` (``"m"``, ``"cm"``, ``"mm"``, ``"in"``,
    /// ``"cmu"``) from ``source_units`` (guessed from the figure's size when
    /// ``None``; an error when it cannot be), as ``bvh edit --units U``.
    #[pyo3(signature = (units, source_units = None, position_channels = "replace"))]
    fn to_units(
        &self,
        py: Python<'_>,
        units: &str,
        source_units: Option<&str>,
        position_channels: &str,
    ) -> PyResult<PyBvh> {
        let to = self::units(units)?;
        let from = source_units.map(self::units).transpose()?;
        let mode = self::position_channels(position_channels)?;
        self.edited(py, |b| {
            let from = from.unwrap_or_else(|| UnitGuess::of_bvh(b, mode).units);
            let factor = match (from.metres_per_unit(), to.metres_per_unit()) {
                (Some(a), Some(c)) => a / c,
                _ => {
                    return Err(EditError(
                        "the skeleton's unit cannot be guessed from its size; give source_units \
                         or use scale"
                            .into(),
                    ));
                }
            };
            Ok(map_frames(b, &mut ScaleMap::new(b.skeleton(), factor)?)?)
        })
    }

    /// Scaled so that the figure is ``height`` tall (in file units), as
    /// ``bvh edit --height H``.
    fn to_height(&self, py: Python<'_>, height: f64) -> PyResult<PyBvh> {
        edit::scale::check_given("height", height)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        self.edited(py, |b| {
            let f = factor_to_height(b, height)?;
            Ok(map_frames(b, &mut ScaleMap::new(b.skeleton(), f)?)?)
        })
    }

    /// Left and right swapped (pairs found by name, confirmed by the rest
    /// pose), as ``bvh edit --mirror``.
    fn mirror(&self, py: Python<'_>) -> PyResult<PyBvh> {
        self.edited(py, |b| {
            Ok(edit::mirror::Mirror::new(b, &edit::mirror::MirrorOptions::default())?.apply(b)?)
        })
    }

    /// Root motion removed on the ground plane (the figure walks in place),
    /// as ``bvh edit --in-place-root``. ``up``: the up axis (detected when
    /// ``None``, else Y).
    #[pyo3(signature = (up = None))]
    fn in_place_root(&self, py: Python<'_>, up: Option<&str>) -> PyResult<PyBvh> {
        let up = up.map(signed_axis).transpose()?;
        self.edited(py, |b| Ok(edit::root::in_place(b, up_for_root(b, up))?))
    }

    /// Moved so that the first frame's root stands over the origin, as
    /// ``bvh edit --root-to-origin``. ``up`` as in ``in_place_root``.
    #[pyo3(signature = (up = None))]
    fn root_to_origin(&self, py: Python<'_>, up: Option<&str>) -> PyResult<PyBvh> {
        let up = up.map(signed_axis).transpose()?;
        self.edited(py, |b| Ok(edit::root::to_origin(b, up_for_root(b, up))?))
    }

    /// The root motion moved onto a new ground-projected root joint
    /// ``name``, as ``bvh edit --extract-root NAME``. ``up`` as in
    /// ``in_place_root``.
    #[pyo3(signature = (name = "Root", up = None))]
    fn extract_root(&self, py: Python<'_>, name: &str, up: Option<&str>) -> PyResult<PyBvh> {
        let up = up.map(signed_axis).transpose()?;
        self.edited(py, |b| Ok(edit::root::extract(b, up_for_root(b, up), name)?))
    }

    /// Joints renamed by a mapping ``{old: new}``, as ``bvh edit --rename
    /// MAP``.
    fn rename(&self, py: Python<'_>, mapping: HashMap<String, String>) -> PyResult<PyBvh> {
        self.edited(py, |b| Ok(edit::joints::rename_map(b, &mapping)?))
    }

    /// Every joint name with ``old`` replaced by ``new``, as ``bvh edit
    /// --rename OLD=NEW``.
    fn rename_pattern(&self, py: Python<'_>, old: &str, new: &str) -> PyResult<PyBvh> {
        self.edited(py, |b| Ok(edit::joints::rename_pattern(b, old, new)?))
    }

    /// The named joints removed, their motion folded into their children,
    /// as ``bvh edit --remove-joints A,B``.
    #[pyo3(signature = (names, position_channels = "replace"))]
    fn remove_joints(
        &self,
        py: Python<'_>,
        names: Vec<String>,
        position_channels: &str,
    ) -> PyResult<PyBvh> {
        let mode = self::position_channels(position_channels)?;
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.edited(py, |b| Ok(edit::joints::remove_joints(b, &names, mode)?.0))
    }

    /// Every End Site removed, as ``bvh edit --strip-end-sites``.
    fn strip_end_sites(&self, py: Python<'_>) -> PyResult<PyBvh> {
        self.edited(py, |b| Ok(edit::joints::strip_end_sites(b)?))
    }

    /// An End Site added to every leaf joint without one, as ``bvh edit
    /// --add-end-sites``.
    fn add_end_sites(&self, py: Python<'_>) -> PyResult<PyBvh> {
        self.edited(py, |b| Ok(edit::joints::add_end_sites(b)?))
    }

    /// A new rest pose, the world positions kept: frame ``source`` (an int)
    /// or another file's skeleton (a ``Bvh``), as ``bvh edit --rest-pose
    /// FRAME|FILE``.
    #[pyo3(signature = (source, position_channels = "replace"))]
    fn rest_pose(
        &self,
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        position_channels: &str,
    ) -> PyResult<PyBvh> {
        let mode = self::position_channels(position_channels)?;
        if let Ok(other) = source.cast::<PyBvh>() {
            let other = other.get();
            return self
                .edited(py, |b| Ok(edit::rest::from_skeleton(b, other.bvh.skeleton(), mode)?.0));
        }
        let frame: usize = source
            .extract()
            .map_err(|_| PyTypeError::new_err("source must be a frame number (int) or a Bvh"))?;
        self.edited(py, |b| Ok(edit::rest::from_frame(b, frame, mode)?.0))
    }

    /// The motion-quality metrics and findings of this clip, as ``bvh lint
    /// --json`` gives them: a dict with ``units``, ``up_axis``, ``fps``,
    /// ``feet``, ``ground`` (m), ``metrics`` and ``findings``; see
    /// ``docs/quality.md``. ``units`` (``"m"``, ``"cm"``, ...) and ``up``
    /// override the guesses; ``feet`` names the foot joints; ``ground`` is
    /// ``"contacts"``, ``"lowest"`` or a height in metres; ``loop=True``
    /// measures the seam; ``thresholds`` sets any threshold of
    /// ``bvh lint`` by its option name with underscores (``spike_k=30``).
    #[pyo3(signature = (units = None, up = None, feet = None, ground = None, r#loop = false, position_channels = "replace", **thresholds))]
    #[allow(clippy::too_many_arguments)]
    fn lint<'py>(
        &self,
        py: Python<'py>,
        units: Option<&str>,
        up: Option<&str>,
        feet: Option<Vec<String>>,
        ground: Option<&Bound<'py, PyAny>>,
        r#loop: bool,
        position_channels: &str,
        thresholds: Option<&Bound<'py, pyo3::types::PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = crate::quality::options(
            units,
            up,
            feet,
            ground,
            r#loop,
            position_channels,
            thresholds,
            &self.bvh,
        )?;
        let report = py.detach(|| bvhkit::quality::lint(&self.bvh, &options));
        crate::quality::report_dict(py, &report)
    }

    /// Cleaned motion, as ``bvh clean``: ``spikes`` (``True`` for k = 40, or
    /// a k), ``butterworth`` (cut-off Hz, or ``(cutoff, order)``),
    /// ``savgol`` (``(window, polyorder)``), ``one_euro`` (``(min_cutoff,
    /// beta)`` or ``(min_cutoff, beta, d_cutoff)``), ``joints`` (the joints
    /// smoothed; default all), ``strength`` (per-joint smoothing strength:
    /// a dict or a sequence of ``(selector, factor)``, as ``--strength``),
    /// ``remove_drift``, ``ground`` (``True`` for a constant offset,
    /// ``"smooth"`` to follow the ground over time), ``lock_feet``
    /// (with ``feet`` and ``up`` as ``lint`` takes them; ``contacts``, the
    /// spans it locks instead of those lint finds: a path to a CSV file of
    /// ``joint,start,end`` lines, as ``--contacts FILE``, or a sequence of
    /// ``(joint, start, end)``, frames from 0, end included; ``flatten_feet``,
    /// with ``lock_feet``: each locked foot turned to its planted roll and
    /// pitch where its toe stays, as ``--flatten-feet``). The result's
    /// ``report`` is the summary ``bvh clean`` prints.
    #[pyo3(signature = (spikes = None, butterworth = None, savgol = None, one_euro = None, joints = None, remove_drift = false, ground = None, lock_feet = false, feet = None, up = None, strength = None, contacts = None, flatten_feet = false))]
    #[allow(clippy::too_many_arguments)]
    fn clean<'py>(
        &self,
        py: Python<'py>,
        spikes: Option<&Bound<'py, PyAny>>,
        butterworth: Option<&Bound<'py, PyAny>>,
        savgol: Option<(usize, usize)>,
        one_euro: Option<Vec<f64>>,
        joints: Option<Vec<String>>,
        remove_drift: bool,
        ground: Option<&Bound<'py, PyAny>>,
        lock_feet: bool,
        feet: Option<Vec<String>>,
        up: Option<&str>,
        strength: Option<&Bound<'py, PyAny>>,
        contacts: Option<&Bound<'py, PyAny>>,
        flatten_feet: bool,
    ) -> PyResult<PyBvh> {
        use bvhkit::clean::{Butterworth, ContactSpan, OneEuro, Options, SavGol};
        if flatten_feet && !lock_feet {
            return Err(bad_arg("flatten_feet needs lock_feet=True (the feet it flattens)"));
        }
        // A path (read and parsed as `--contacts FILE` is) or the spans.
        let contacts: Option<Vec<ContactSpan>> = match contacts {
            None => None,
            Some(_) if !lock_feet => {
                return Err(bad_arg("contacts needs lock_feet=True (the spans it locks)"));
            }
            Some(v) => Some(match v.extract::<PathBuf>() {
                Ok(path) => {
                    let text = std::fs::read_to_string(&path).map_err(|e| {
                        pyo3::exceptions::PyOSError::new_err((
                            e.raw_os_error().unwrap_or(0),
                            e.to_string(),
                            path.clone(),
                        ))
                    })?;
                    bvhkit::clean::parse_contacts(&text)
                        .map_err(|e| bad_arg(format!("{}: {e}", path.display())))?
                }
                Err(_) => v
                    .extract::<Vec<(String, usize, usize)>>()
                    .map_err(|_| {
                        PyTypeError::new_err(
                            "contacts must be a path to a CSV file or a sequence of (joint, start, end)",
                        )
                    })?
                    .into_iter()
                    .map(|(joint, start, end)| {
                        if end < start {
                            Err(bad_arg(format!(
                                "contacts: span of {joint:?} ends ({end}) before it starts ({start})"
                            )))
                        } else {
                            Ok(ContactSpan { joint, start, end })
                        }
                    })
                    .collect::<PyResult<_>>()?,
            }),
        };
        // A dict keeps its order; so does a sequence of pairs.
        let strength: Vec<(String, f64)> = match strength {
            None => Vec::new(),
            Some(v) => match v.cast::<pyo3::types::PyDict>() {
                Ok(d) => d
                    .iter()
                    .map(|(k, f)| Ok((k.extract::<String>()?, f.extract::<f64>()?)))
                    .collect::<PyResult<_>>(),
                Err(_) => v.extract::<Vec<(String, f64)>>(),
            }
            .map_err(|_| {
                PyTypeError::new_err(
                    "strength must be a dict or a sequence of (selector, factor) pairs",
                )
            })?,
        };
        let up = up.map(signed_axis).transpose()?;
        let (ground, ground_over_time) = match ground {
            None => (false, false),
            Some(g) => match (g.extract::<bool>(), g.extract::<String>()) {
                (Ok(b), _) => (b, false),
                (_, Ok(s)) if s == "smooth" => (true, true),
                _ => return Err(PyTypeError::new_err("ground must be True, False or \"smooth\"")),
            },
        };
        let spikes = match spikes {
            None => None,
            Some(v) => match v.extract::<bool>() {
                Ok(true) => Some(bvhkit::clean::DEFAULT_SPIKE_K),
                Ok(false) => None,
                Err(_) => Some(v.extract::<f64>().map_err(|_| {
                    PyTypeError::new_err("spikes must be True, False or a number k")
                })?),
            },
        };
        let butterworth = match butterworth {
            None => None,
            Some(v) => Some(match v.extract::<(f64, usize)>() {
                Ok((cutoff_hz, order)) => Butterworth { cutoff_hz, order },
                Err(_) => Butterworth {
                    cutoff_hz: v.extract::<f64>().map_err(|_| {
                        PyTypeError::new_err(
                            "butterworth must be a cut-off (Hz) or (cutoff, order)",
                        )
                    })?,
                    order: 4,
                },
            }),
        };
        let one_euro = match one_euro.as_deref() {
            None => None,
            Some(&[min_cutoff, beta]) => Some(OneEuro { min_cutoff, beta, d_cutoff: 1.0 }),
            Some(&[min_cutoff, beta, d_cutoff]) => Some(OneEuro { min_cutoff, beta, d_cutoff }),
            Some(_) => {
                return Err(bad_arg("one_euro must be (min_cutoff, beta[, d_cutoff])".to_string()));
            }
        };
        let options = Options {
            spikes,
            butterworth,
            savgol: savgol.map(|(window, poly)| SavGol { window, poly }),
            one_euro,
            joints,
            strength,
            remove_drift,
            ground,
            ground_over_time,
            lock_feet,
            flatten_feet,
            contacts,
            quality: bvhkit::quality::Options { up, feet, ..Default::default() },
        };
        let (bvh, report) = py
            .detach(|| bvhkit::clean::clean(&self.bvh, &options))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyBvh::made(bvh, report.to_string()))
    }

    // The blend family (`bvhkit::mix`) and retarget: methods returning a new
    // `Bvh` with a `report`; the argument conversion is in `mix.rs`.

    /// This clip then ``others``, each continuing from where the one before
    /// ends, as ``bvh concat``; see ``bvhkit.concat``.
    #[pyo3(signature = (*others, crossfade = None, search = None, linear = false, keep_position = false, up = None))]
    #[allow(clippy::too_many_arguments)]
    fn concat(
        &self,
        py: Python<'_>,
        others: Vec<PyRef<'_, PyBvh>>,
        crossfade: Option<&Bound<'_, PyAny>>,
        search: Option<&Bound<'_, PyAny>>,
        linear: bool,
        keep_position: bool,
        up: Option<&str>,
    ) -> PyResult<PyBvh> {
        let mut clips: Vec<Clip<'_>> = vec![self.clip()];
        clips.extend(others.iter().map(|c| c.clip()));
        crate::mix::concat_clips(py, &clips, crossfade, search, linear, keep_position, up).map(made)
    }

    /// This clip blended towards ``other`` pose by pose at ``weight``, as
    /// ``bvh blend A B --weight W --joints SUBTREE``.
    #[pyo3(signature = (other, weight, joints = None))]
    fn blend(
        &self,
        py: Python<'_>,
        other: PyRef<'_, PyBvh>,
        weight: &Bound<'_, PyAny>,
        joints: Option<String>,
    ) -> PyResult<PyBvh> {
        crate::mix::blend(py, self.clip(), other.clip(), weight, joints).map(made)
    }

    /// ``add``'s motion since its frame ``reference`` added on top of this
    /// clip, as ``bvh layer BASE ADD``.
    #[pyo3(signature = (add, weight = None, joints = None, reference = 0))]
    fn layer(
        &self,
        py: Python<'_>,
        add: PyRef<'_, PyBvh>,
        weight: Option<&Bound<'_, PyAny>>,
        joints: Option<String>,
        reference: usize,
    ) -> PyResult<PyBvh> {
        let one = 1.0f64.into_pyobject(py)?.into_any();
        crate::mix::layer(py, self.clip(), add.clip(), weight.unwrap_or(&one), joints, reference)
            .map(made)
    }

    /// This clip made to loop, its end crossfaded into its start, as ``bvh
    /// loop``.
    #[pyo3(signature = (crossfade = None, linear = false, travel = "keep", up = None, search = None))]
    fn r#loop(
        &self,
        py: Python<'_>,
        crossfade: Option<&Bound<'_, PyAny>>,
        linear: bool,
        travel: &str,
        up: Option<&str>,
        search: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyBvh> {
        crate::mix::make_loop_of(py, self.clip(), crossfade, search, linear, travel, up).map(made)
    }

    /// This motion on ``target``'s skeleton, as ``bvh retarget SRC --to
    /// TARGET``.
    #[pyo3(signature = (target, map = None, reference = None, source_reference = None, source_up = None, target_up = None, position_channels = "replace", joint_translations = false, lock_feet = true))]
    #[allow(clippy::too_many_arguments)]
    fn retarget(
        &self,
        py: Python<'_>,
        target: PyRef<'_, PyBvh>,
        map: Option<&Bound<'_, PyAny>>,
        reference: Option<&Bound<'_, PyAny>>,
        source_reference: Option<&Bound<'_, PyAny>>,
        source_up: Option<&str>,
        target_up: Option<&str>,
        position_channels: &str,
        joint_translations: bool,
        lock_feet: bool,
    ) -> PyResult<PyBvh> {
        let tpose = pyo3::types::PyString::new(py, "tpose").into_any();
        let args = crate::mix::RetargetArgs {
            map,
            reference: reference.unwrap_or(&tpose),
            source_reference,
            source_up,
            target_up,
            position_channels,
            joint_translations,
            lock_feet,
        };
        crate::mix::retarget_onto(py, self.clip(), target.clip(), &args).map(made)
    }
}

impl PyBvh {
    /// A new `Bvh` from `f` (run with the GIL released); its error is a
    /// `ValueError` with the core's message.
    fn edited(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&bvhkit::Bvh) -> Result<bvhkit::Bvh, EditError> + Send,
    ) -> PyResult<PyBvh> {
        let bvh = py.detach(|| f(&self.bvh)).map_err(|e| PyValueError::new_err(e.0))?;
        Ok(PyBvh { bvh, warnings: Vec::new(), path: None, report: None })
    }
}

/// An edit's error message (the core's, or the argument's).
struct EditError(String);

impl From<bvhkit::Error> for EditError {
    fn from(e: bvhkit::Error) -> EditError {
        EditError(e.to_string())
    }
}

/// The root-motion up axis: given, else detected, else Y (as `bvh edit`).
fn up_for_root(bvh: &bvhkit::Bvh, given: Option<SignedAxis>) -> SignedAxis {
    given.or_else(|| detect_up(bvh).axis).unwrap_or(SignedAxis::PosY)
}
