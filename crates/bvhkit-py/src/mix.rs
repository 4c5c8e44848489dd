//! The blend family (`bvhkit::mix`) and `bvhkit::retarget` for the `Bvh`
//! methods `concat`, `blend`, `layer`, `loop`, `retarget` and the module
//! function `bvhkit.concat`.
//!
//! Only arguments are converted here (each as the matching `bvh` command
//! converts its flag: `bvh concat`, `blend`, `layer`, `loop`, `retarget`),
//! so Python and the command line give the same file; the rules are the
//! core's. The work runs with the GIL released. A core error becomes a
//! `ValueError` with the core's message; what the core reports (the CLI's
//! notes on standard error) becomes the result's `report` text, and a clip
//! resampled or converted into the first clip's channel layout also emits
//! a `BvhWarning`.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use bvhkit::edit::axes::SignedAxis;
use bvhkit::mix::blend::{BlendOptions, blend_named};
use bvhkit::mix::concat::{ConcatOptions, concat};
use bvhkit::mix::layer::{LayerOptions, layer_named};
use bvhkit::mix::looping::{LoopOptions, Travel, make_loop};
use bvhkit::mix::weights::{Curve, Weight};
use bvhkit::mix::{Prepared, Span};
use bvhkit::retarget::map::JointMap;
use bvhkit::retarget::{self, Reference};
use numpy::PyReadonlyArray1;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyString};

use crate::errors::{BvhWarning, bad_arg, position_channels, signed_axis};

/// A clip given to a function here: the core's `Bvh` and the file it was
/// read from (`bvh.rs` makes one of a `Bvh` object, and the result back
/// into one: this module does not depend on the class).
#[derive(Clone, Copy)]
pub(crate) struct Clip<'a> {
    pub(crate) bvh: &'a bvhkit::Bvh,
    pub(crate) path: Option<&'a Path>,
}

/// A clip's name in messages: its path as given, else `default`.
fn clip_name(b: Clip<'_>, default: &str) -> String {
    b.path.map_or_else(|| default.to_string(), |p| p.display().to_string())
}

/// `bvh concat --crossfade`/`bvh loop --crossfade`: an int is frames, a
/// float seconds, a str the command line's text (`"12"`, `"0.4s"`).
fn span(v: &Bound<'_, PyAny>) -> PyResult<Span> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "crossfade must be an int (frames), a float (seconds) or a str, not bool",
        ));
    }
    if v.is_instance_of::<PyInt>() {
        let n: i64 = v.extract()?;
        return usize::try_from(n)
            .map(Span::Frames)
            .map_err(|_| bad_arg(format!("crossfade must be 0 frames or more, found {n}")));
    }
    if v.is_instance_of::<PyFloat>() {
        let s: f64 = v.extract()?;
        if !(s.is_finite() && s >= 0.0) {
            return Err(bad_arg(format!("crossfade must be 0 seconds or more, found {s}")));
        }
        return Ok(Span::Seconds(s));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return s.to_cow()?.parse::<Span>().map_err(|e| bad_arg(e.to_string()));
    }
    Err(PyTypeError::new_err(format!(
        "crossfade must be an int (frames), a float (seconds) or a str (\"12\", \"0.4s\"), not {}",
        v.get_type().name()?
    )))
}

/// A weight: a number (constant), the command line's text (`"0..1"`,
/// `"0..1:smooth"`, `"0:0,0.5:1,1:0"`), or a 1-D sequence of one weight per
/// output frame. Returns the weight and, for a sequence, its length (the
/// caller checks it against the output's frames).
fn weight(v: &Bound<'_, PyAny>) -> PyResult<(Weight, Option<usize>)> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "weight must be a number, a str or a 1-D array, not bool",
        ));
    }
    let w = if let Ok(s) = v.cast::<PyString>() {
        let w: Weight = s.to_cow()?.parse().map_err(|e: bvhkit::Error| bad_arg(e.to_string()))?;
        (w, None)
    } else if v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyInt>() {
        (Weight::Constant(v.extract()?), None)
    } else {
        let not_weight = || {
            PyTypeError::new_err(
                "weight must be a number, a str (0.3, 0..1, 0..1:smooth, 0:0,0.5:1,1:0) or a \
                 1-D array of one weight per output frame",
            )
        };
        let np = v.py().import("numpy")?;
        let kwargs = PyDict::new(v.py());
        kwargs.set_item("dtype", "float64")?;
        let a = np.call_method("asarray", (v,), Some(&kwargs)).map_err(|_| not_weight())?;
        let ndim: usize = a.getattr("ndim")?.extract()?;
        if ndim == 0 {
            (Weight::Constant(a.extract::<f64>()?), None)
        } else {
            let a: PyReadonlyArray1<'_, f64> = a.extract().map_err(|_| {
                bad_arg(format!("a weight array must be 1-D (one weight per frame), not {ndim}-D"))
            })?;
            let values = a.as_array().to_vec();
            (Weight::per_frame(&values), Some(values.len()))
        }
    };
    w.0.validate().map_err(|e| bad_arg(e.to_string()))?;
    Ok(w)
}

/// An error when a per-frame weight's length is not the output's.
fn check_weight_len(given: Option<usize>, frames: usize) -> PyResult<()> {
    match given {
        Some(n) if n != frames => Err(bad_arg(format!(
            "the weight array has {n} values; the output has {frames} frames (one weight per \
             output frame)"
        ))),
        _ => Ok(()),
    }
}

fn curve(linear: bool) -> Curve {
    if linear { Curve::Linear } else { Curve::Smoothstep }
}

fn up(v: Option<&str>) -> PyResult<Option<SignedAxis>> {
    v.map(signed_axis).transpose()
}

/// `bvh retarget --reference`: `"tpose"`, `"rest"` or a frame number.
fn reference(v: &Bound<'_, PyAny>) -> PyResult<Reference> {
    if let Ok(s) = v.cast::<PyString>() {
        return s.to_cow()?.parse().map_err(|e: bvhkit::Error| bad_arg(e.message()));
    }
    if !v.is_instance_of::<pyo3::types::PyBool>()
        && let Ok(n) = v.extract::<usize>()
    {
        return Ok(Reference::Frame(n));
    }
    Err(bad_arg("reference must be 'tpose', 'rest' or a frame number (an int from 0)"))
}

/// A `BvhWarning` for a clip that was resampled or converted first.
fn warn_prepared(py: Python<'_>, name: &str, p: &Prepared) -> PyResult<()> {
    let text = p.to_string();
    if text.is_empty() {
        return Ok(());
    }
    let msg = CString::new(format!("{name}: {text}").replace('\0', " ")).expect("NULs replaced");
    PyErr::warn(py, py.get_type::<BvhWarning>().as_any(), &msg, 2)
}

fn core_err(e: bvhkit::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `bvh concat CLIP... --crossfade N --linear --keep-position --up AXIS`.
pub(crate) fn concat_clips(
    py: Python<'_>,
    clips: &[Clip<'_>],
    crossfade: Option<&Bound<'_, PyAny>>,
    search: Option<&Bound<'_, PyAny>>,
    linear: bool,
    keep_position: bool,
    up_axis: Option<&str>,
) -> PyResult<(bvhkit::Bvh, String)> {
    let opts = ConcatOptions {
        crossfade: crossfade.map(span).transpose()?.unwrap_or_default(),
        search: search.map(span).transpose()?.unwrap_or(ConcatOptions::default().search),
        curve: curve(linear),
        keep_position,
        up: up(up_axis)?,
        // The command's defaults: the heading from the travel.
        ..ConcatOptions::default()
    };
    let names: Vec<String> =
        clips.iter().enumerate().map(|(i, &c)| clip_name(c, &format!("clip {i}"))).collect();
    let named: Vec<(&str, &bvhkit::Bvh)> =
        names.iter().map(String::as_str).zip(clips.iter().map(|c| c.bvh)).collect();
    let (out, report) = py.detach(|| concat(&named, &opts)).map_err(core_err)?;
    for s in &report.seams {
        warn_prepared(py, &s.name, &s.prepared)?;
    }
    Ok((out, report.to_string()))
}

/// `bvh blend A B --weight W --joints SUBTREE`.
pub(crate) fn blend(
    py: Python<'_>,
    a: Clip<'_>,
    b: Clip<'_>,
    w: &Bound<'_, PyAny>,
    joints: Option<String>,
) -> PyResult<(bvhkit::Bvh, String)> {
    let (weight, len) = weight(w)?;
    let (an, bn) = (clip_name(a, "the first clip"), clip_name(b, "the second clip"));
    let opts = BlendOptions { weight, joints };
    let (out, report) =
        py.detach(|| blend_named(a.bvh, &an, b.bvh, &bn, &opts)).map_err(core_err)?;
    check_weight_len(len, report.frames)?;
    warn_prepared(py, &bn, &report.prepared)?;
    Ok((out, report.to_string()))
}

/// `bvh layer BASE ADD --weight W --joints SUBTREE --reference FRAME`.
pub(crate) fn layer(
    py: Python<'_>,
    base: Clip<'_>,
    add: Clip<'_>,
    w: &Bound<'_, PyAny>,
    joints: Option<String>,
    reference: usize,
) -> PyResult<(bvhkit::Bvh, String)> {
    let (weight, len) = weight(w)?;
    let (bn, an) = (clip_name(base, "the base"), clip_name(add, "the layer"));
    let opts = LayerOptions { weight, joints, reference };
    let (out, report) =
        py.detach(|| layer_named(base.bvh, &bn, add.bvh, &an, &opts)).map_err(core_err)?;
    check_weight_len(len, report.frames)?;
    warn_prepared(py, &an, &report.prepared)?;
    Ok((out, report.to_string()))
}

/// `bvh loop IN --crossfade N --search S --linear --in-place --up AXIS`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn make_loop_of(
    py: Python<'_>,
    clip: Clip<'_>,
    crossfade: Option<&Bound<'_, PyAny>>,
    search: Option<&Bound<'_, PyAny>>,
    linear: bool,
    travel: &str,
    up_axis: Option<&str>,
) -> PyResult<(bvhkit::Bvh, String)> {
    let travel = match travel {
        "keep" => Travel::Keep,
        "remove" => Travel::Remove,
        other => {
            return Err(bad_arg(format!("travel must be 'keep' or 'remove', not {other:?}")));
        }
    };
    let defaults = LoopOptions::default();
    let opts = LoopOptions {
        crossfade: crossfade.map(span).transpose()?.unwrap_or(defaults.crossfade),
        curve: curve(linear),
        search: search.map(span).transpose()?.unwrap_or(defaults.search),
        travel,
        up: up(up_axis)?,
    };
    let name = clip_name(clip, "the clip");
    let (out, report) = py
        .detach(|| make_loop(clip.bvh, &opts))
        .map_err(|e| PyValueError::new_err(format!("{name}: {e}")))?;
    Ok((out, report.to_string()))
}

/// Arguments of `Bvh.retarget` (those of `bvh retarget`).
pub(crate) struct RetargetArgs<'a, 'py> {
    pub(crate) map: Option<&'a Bound<'py, PyAny>>,
    pub(crate) reference: &'a Bound<'py, PyAny>,
    pub(crate) source_reference: Option<&'a Bound<'py, PyAny>>,
    pub(crate) source_up: Option<&'a str>,
    pub(crate) target_up: Option<&'a str>,
    pub(crate) position_channels: &'a str,
    pub(crate) joint_translations: bool,
    pub(crate) lock_feet: bool,
}

/// The explicit map: None, a map file's path, or a dict `{source: target}`.
enum MapArg {
    /// The file and its text.
    File(PathBuf, String),
    Pairs(Vec<(String, String)>),
}

/// `bvh retarget SRC --to TARGET --map FILE --reference R ...`.
pub(crate) fn retarget_onto(
    py: Python<'_>,
    source: Clip<'_>,
    target: Clip<'_>,
    args: &RetargetArgs<'_, '_>,
) -> PyResult<(bvhkit::Bvh, String)> {
    let map = match args.map {
        None => None,
        Some(m) if m.is_none() => None,
        Some(m) => Some(if let Ok(d) = m.cast::<PyDict>() {
            MapArg::Pairs(d.items().extract().map_err(|_| {
                PyTypeError::new_err(
                    "a map dict must map source joint names (str) to target joint names (str)",
                )
            })?)
        } else if let Ok(path) = m.extract::<PathBuf>() {
            let text = py
                .detach(|| std::fs::read_to_string(&path))
                .map_err(|e| crate::errors::to_py(py, bvhkit::Error::from(e).with_path(&path)))?;
            MapArg::File(path, text)
        } else {
            return Err(PyTypeError::new_err(format!(
                "map must be None, a path to a map file or a dict {{source: target}}, not {}",
                m.get_type().name()?
            )));
        }),
    };
    let reference = reference(args.reference)?;
    let source_reference = args.source_reference.map(self::reference).transpose()?;
    let (source_up, target_up) = (up(args.source_up)?, up(args.target_up)?);
    let mode = position_channels(args.position_channels)?;
    let (sn, tn) = (clip_name(source, "the source"), clip_name(target, "the target"));
    let (src, tgt) = (source.bvh, target.bvh);
    let (joint_translations, lock_feet) = (args.joint_translations, args.lock_feet);
    let result = py.detach(|| -> Result<_, String> {
        let map = match &map {
            None => None,
            Some(MapArg::File(path, text)) => Some(
                JointMap::parse(text, src.skeleton(), tgt.skeleton())
                    .map_err(|e| format!("{}: {}", path.display(), e.message()))?,
            ),
            Some(MapArg::Pairs(pairs)) => Some(
                JointMap::from_pairs(
                    pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())),
                    src.skeleton(),
                    tgt.skeleton(),
                )
                .map_err(|e| e.message())?,
            ),
        };
        let options = retarget::Options {
            map,
            reference,
            source_reference,
            source_up,
            target_up,
            mode,
            joint_translations,
            lock_feet,
        };
        // As `bvh retarget`: constant position channels below the root
        // that repeat the OFFSET are not written.
        retarget::retarget(src, tgt, &options)
            .and_then(|(out, report)| {
                let scope = bvhkit::edit::portable::Scope::Repeats;
                Ok((bvhkit::edit::portable::portable(&out, mode, scope)?.0, report))
            })
            .map_err(|e| format!("{sn} onto {tn}: {}", e.message()))
    });
    let (out, report) = result.map_err(PyValueError::new_err)?;
    // As `bvh retarget` prints them: the summary, what the map leaves out,
    // then what the lock did.
    let mut lines = report.summary(&sn, &tn);
    lines.extend(report.notes.iter().map(|n| format!("bvh: note: {n}")));
    if let Some(done) = &report.locked {
        lines.push(format!("bvh: feet locked over {} contact span(s)", done.spans.len()));
        lines.extend(done.notes.iter().map(|n| format!("bvh: note: {n}")));
    }
    Ok((out, lines.join("\n")))
}
