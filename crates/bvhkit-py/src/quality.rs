//! `Bvh.lint` and `bvhkit.diff`: the motion-quality metrics
//! (`bvhkit::quality`) as dicts shaped like `bvh lint --json` and
//! `bvh diff --json`.

use bvhkit::quality::{self, DiffOptions, Ground, Options, Report};
use bvhkit::retarget::map::JointMap;
use bvhkit::units::Units;
use numpy::IntoPyArray;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::bvh::PyBvh;
use crate::errors::bad_arg;
use crate::errors::{position_channels, signed_axis};

fn units(s: Option<&str>) -> PyResult<Option<f64>> {
    s.map(|s| {
        Units::from_name(s)
            .and_then(Units::metres_per_unit)
            .ok_or_else(|| bad_arg(format!("{s:?} is not a unit (m, cm, mm, in, cmu)")))
    })
    .transpose()
}

/// The options of `Bvh.lint`, thresholds by `bvh lint`'s option names.
#[allow(clippy::too_many_arguments)]
pub(crate) fn options(
    units: Option<&str>,
    up: Option<&str>,
    feet: Option<Vec<String>>,
    ground: Option<&Bound<'_, PyAny>>,
    seam: bool,
    mode: &str,
    thresholds: Option<&Bound<'_, PyDict>>,
    bvh: &bvhkit::Bvh,
) -> PyResult<Options> {
    let mut o = Options {
        metres_per_unit: self::units(units)?,
        up: up.map(signed_axis).transpose()?,
        position_channels: position_channels(mode)?,
        seam,
        ..Options::default()
    };
    if let Some(feet) = &feet
        && let Some(missing) = feet.iter().find(|f| bvh.skeleton().find(f).is_none())
    {
        return Err(bad_arg(format!("feet: no joint named {missing:?}")));
    }
    o.feet = feet;
    o.ground = match ground {
        None => Ground::Contacts,
        Some(g) => match g.extract::<f64>() {
            Ok(h) if h.abs() <= quality::GROUND_MAX_M => Ground::Height(h),
            Ok(h) => {
                return Err(bad_arg(format!(
                    "ground must be a height of at most {:e} m either side of 0, not {h:e}",
                    quality::GROUND_MAX_M
                )));
            }
            Err(_) => match g.extract::<String>().as_deref() {
                Ok("contacts") => Ground::Contacts,
                Ok("lowest") => Ground::Lowest,
                _ => {
                    return Err(bad_arg(
                        "ground must be \"contacts\", \"lowest\" or a height in metres",
                    ));
                }
            },
        },
    };
    if let Some(t) = thresholds {
        for (k, v) in t.iter() {
            let key: String = k.extract()?;
            let v: f64 =
                v.extract().map_err(|_| PyTypeError::new_err(format!("{key} must be a number")))?;
            if !(v.is_finite() && v > 0.0) {
                return Err(bad_arg(format!("{key} must be a finite number above 0, not {v:e}")));
            }
            if key == "gimbal" && v >= quality::GIMBAL_MAX_DEG {
                return Err(bad_arg(format!(
                    "gimbal must be below {} degrees (a middle angle is never farther from ±90°), not {v}",
                    quality::GIMBAL_MAX_DEG
                )));
            }
            let slot = match key.as_str() {
                "contact_height" => &mut o.contact_height,
                "contact_speed" => &mut o.contact_speed,
                "skate_height" => &mut o.skate_height,
                "skate_speed" => &mut o.skate_speed,
                "skate_seconds" => &mut o.skate_seconds,
                "kimodo_speed" => &mut o.kimodo_speed,
                "spike_k" => &mut o.spike_k,
                "spike_min" => &mut o.spike_min,
                "pop_factor" => &mut o.pop_factor,
                "pop_min" => &mut o.pop_min,
                "euler_jump" => &mut o.euler_jump_deg,
                "gimbal" => &mut o.gimbal_deg,
                "stretch" => &mut o.stretch,
                "far" => &mut o.far_factor,
                "penetration" => &mut o.penetration,
                "float_height" => &mut o.float_height,
                "float_seconds" => &mut o.float_seconds,
                "frozen_seconds" => &mut o.frozen_seconds,
                "seam_factor" => &mut o.seam_factor,
                _ => return Err(bad_arg(format!("lint() has no threshold named {key:?}"))),
            };
            *slot = v;
        }
    }
    Ok(o)
}

fn opt(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

/// The report as `bvh lint --json` writes it (without `file`).
pub(crate) fn report_dict<'py>(py: Python<'py>, r: &Report) -> PyResult<Bound<'py, PyAny>> {
    let d = PyDict::new(py);
    d.set_item("units", r.units.symbol())?;
    d.set_item("metres_per_unit", r.metres_per_unit)?;
    d.set_item("up_axis", r.up.name())?;
    d.set_item("up_detected", r.up_detected)?;
    d.set_item("fps", r.fps)?;
    d.set_item("frames", r.frames)?;
    d.set_item("size", opt(Some(r.size)))?;
    let feet = PyList::empty(py);
    for f in &r.feet {
        let fd = PyDict::new(py);
        fd.set_item("name", &f.name)?;
        fd.set_item("joints", r.names(&f.points))?;
        fd.set_item("skate_joint", &r.joint_names[f.skate_point])?;
        fd.set_item("toe_joint", &r.joint_names[f.toe_point])?;
        feet.append(fd)?;
    }
    d.set_item("feet", feet)?;
    d.set_item("ground", opt(Some(r.ground)))?;
    let m = PyDict::new(py);
    for (k, v) in r.metrics.entries() {
        m.set_item(k, opt(v))?;
    }
    d.set_item("metrics", m)?;
    let findings = PyList::empty(py);
    for f in &r.findings {
        let fd = PyDict::new(py);
        fd.set_item("kind", f.kind.name())?;
        fd.set_item("frames", [f.frames.0, f.frames.1])?;
        fd.set_item("joints", r.names(&f.joints))?;
        fd.set_item("value", opt(Some(f.value)))?;
        fd.set_item("message", &f.message)?;
        findings.append(fd)?;
    }
    d.set_item("findings", findings)?;
    d.set_item("notes", &r.notes)?;
    Ok(d.into_any())
}

/// `bvhkit.diff(a, b, ...)`.
pub(crate) fn diff<'py>(
    py: Python<'py>,
    a: &PyBvh,
    b: &PyBvh,
    map: Option<&Bound<'py, PyAny>>,
    units: Option<&str>,
    mode: &str,
    worst: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let (ba, bb) = (a.inner(), b.inner());
    let pairs = match map {
        None => None,
        Some(m) if m.is_none() => None,
        Some(m) => {
            let map = if let Ok(d) = m.cast::<PyDict>() {
                let pairs: Vec<(String, String)> = d.items().extract().map_err(|_| {
                    PyTypeError::new_err(
                        "a map dict must map joint names of a (str) to joint names of b (str)",
                    )
                })?;
                JointMap::from_pairs(
                    pairs.iter().map(|(x, y)| (x.as_str(), y.as_str())),
                    ba.skeleton(),
                    bb.skeleton(),
                )
                .map_err(|e| bad_arg(e.message()))?
            } else if m.extract::<String>().is_ok_and(|s| s == "auto") {
                JointMap::auto(ba.skeleton(), bb.skeleton())
            } else if let Ok(path) = m.extract::<std::path::PathBuf>() {
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    crate::errors::to_py(py, bvhkit::Error::from(e).with_path(&path))
                })?;
                JointMap::parse(&text, ba.skeleton(), bb.skeleton())
                    .map_err(|e| bad_arg(format!("{}: {}", path.display(), e.message())))?
            } else {
                return Err(PyTypeError::new_err(
                    "map must be None, \"auto\", a map file's path or a dict {a_joint: b_joint}",
                ));
            };
            Some(map.pairs().iter().map(|p| (p.source, p.target)).collect())
        }
    };
    let options = DiffOptions {
        metres_per_unit: self::units(units)?,
        position_channels: position_channels(mode)?,
        pairs,
        worst,
    };
    let d = py.detach(|| quality::diff(ba, bb, &options)).map_err(|e| bad_arg(e.message()))?;
    let out = PyDict::new(py);
    out.set_item("frames", d.frames)?;
    out.set_item("fps", d.fps)?;
    out.set_item("pairs", d.joints.len())?;
    out.set_item("mpjpe", d.mpjpe)?;
    out.set_item("mpjpe_root", d.mpjpe_root)?;
    out.set_item("pa_mpjpe", d.pa_mpjpe)?;
    out.set_item("rotation_deg", d.rotation_deg)?;
    let joints = PyList::empty(py);
    for j in &d.joints {
        let jd = PyDict::new(py);
        jd.set_item("a", &j.a)?;
        jd.set_item("b", &j.b)?;
        jd.set_item("mpjpe", j.mpjpe)?;
        jd.set_item("rotation_deg", j.rotation_deg)?;
        joints.append(jd)?;
    }
    out.set_item("joints", joints)?;
    out.set_item("per_frame", d.per_frame.clone().into_pyarray(py))?;
    out.set_item("worst_frames", d.worst_frames.clone())?;
    out.set_item(
        "worst_joints",
        d.worst_joints.iter().map(|&j| d.joints[j].a.clone()).collect::<Vec<_>>(),
    )?;
    out.set_item("notes", &d.notes)?;
    Ok(out.into_any())
}
