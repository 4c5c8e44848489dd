//! The recorder's configuration file (TOML); every key is described in
//! `docs/capture.md`.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use bvhkit::glam::{DMat3, DQuat, DVec3};
use bvhkit::{JointId, Skeleton};
use serde::Deserialize;

/// A configuration problem, naming the file and the key at fault.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    /// The configuration file, when the text came from one.
    pub path: Option<PathBuf>,
    /// The key at fault (`bind[2].joint`), empty for a syntax error.
    pub key: String,
    /// What is wrong, lowercase, without a final period.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}: ", p.display())?;
        }
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "`{}`: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

fn err(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError { path: None, key: key.into(), message: message.into() }
}

/// A TOML error on one line: `line L, column C: what` (the toml crate's own
/// text spans several lines, with the source line and a caret).
fn toml_error(text: &str, e: &toml::de::Error) -> ConfigError {
    let what = e.message().trim_end().replace('\n', "; ");
    let Some(span) = e.span() else { return err("", what) };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    err("", format!("line {line}, column {column}: {what}"))
}

/// How a sensor sits on its joint's bone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mount {
    /// The sensor's axes are the joint's axes.
    Identity,
    /// The sensor's orientation in its first sample is the joint's rest pose.
    Calibrate,
    /// The sensor's orientation relative to the joint (a unit quaternion,
    /// BVH axes): joint world = sensor world · mount⁻¹.
    Fixed(DQuat),
}

/// One `[[bind]]` entry, resolved against the skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    /// The sensor id, as it appears in the samples.
    pub sensor: String,
    /// The driven joint.
    pub joint: JointId,
    /// How the sensor is mounted.
    pub mount: Mount,
}

/// The sensor whose sample positions drive the root.
#[derive(Clone, Debug, PartialEq)]
pub struct RootPosition {
    /// The sensor id.
    pub sensor: String,
    /// Factor from the sensor's position unit to the skeleton's unit.
    pub scale: f64,
}

/// A validated configuration: the skeleton and how sensors drive it.
#[derive(Clone, Debug)]
pub struct Config {
    /// The skeleton file (its motion is ignored).
    pub skeleton_path: PathBuf,
    /// The skeleton, with its motion emptied.
    pub skeleton: Skeleton,
    /// Frames per second of the recording.
    pub frame_rate: f64,
    /// The rotation taking sensor axes to BVH axes: `v_bvh = M · v_sensor`.
    pub sensor_frame: DMat3,
    /// Every binding, `bind_all` expanded, in file order of the joints for
    /// the expanded ones.
    pub bindings: Vec<Binding>,
    /// Factor from sample positions to the skeleton's unit (for joints
    /// other than a `root_position` sensor's).
    pub position_scale: f64,
    /// The root's position sensor, if any.
    pub root_position: Option<RootPosition>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    skeleton: PathBuf,
    frame_rate: f64,
    #[serde(default)]
    sensor_frame: Option<toml::Value>,
    #[serde(default)]
    bind: Vec<RawBind>,
    #[serde(default)]
    bind_all: bool,
    #[serde(default)]
    position_scale: Option<f64>,
    #[serde(default)]
    root_position: Option<RawRootPosition>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBind {
    sensor: String,
    joint: String,
    #[serde(default)]
    mount: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRootPosition {
    sensor: String,
    #[serde(default)]
    scale: Option<f64>,
}

/// The highest `frame_rate` accepted. It bounds the frames a time gap can
/// produce (see `Recorder::MAX_GAP_SECONDS`).
pub const MAX_FRAME_RATE: f64 = 1000.0;

/// `z-up` (east-north-up devices): east → +X, up → +Y, north → -Z.
pub const Z_UP: DMat3 = DMat3::from_cols_array(&[1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0]);

fn number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Float(f) => Some(*f),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

fn sensor_frame(v: Option<&toml::Value>) -> Result<DMat3, ConfigError> {
    const KEY: &str = "sensor_frame";
    let Some(v) = v else { return Ok(DMat3::IDENTITY) };
    if let toml::Value::String(s) = v {
        return match s.as_str() {
            "y-up" => Ok(DMat3::IDENTITY),
            "z-up" => Ok(Z_UP),
            _ => {
                Err(err(KEY, format!("expected \"y-up\", \"z-up\" or a 3x3 matrix, found \"{s}\"")))
            }
        };
    }
    let bad =
        || err(KEY, "expected \"y-up\", \"z-up\" or a 3x3 matrix (three rows of three numbers)");
    let rows = v.as_array().ok_or_else(bad)?;
    if rows.len() != 3 {
        return Err(bad());
    }
    let mut m = [[0.0; 3]; 3];
    for (r, row) in rows.iter().enumerate() {
        let row = row.as_array().filter(|a| a.len() == 3).ok_or_else(bad)?;
        for (c, x) in row.iter().enumerate() {
            m[r][c] = number(x).filter(|x| x.is_finite()).ok_or_else(bad)?;
        }
    }
    // Rows as written: v_bvh = M · v_sensor.
    let mat = DMat3::from_cols_array_2d(&m).transpose();
    let ortho =
        (mat.transpose() * mat - DMat3::IDENTITY).to_cols_array().iter().all(|e| e.abs() < 1e-6);
    if !ortho || (mat.determinant() - 1.0).abs() > 1e-6 {
        return Err(err(KEY, "the matrix is not a rotation (orthonormal rows, determinant +1)"));
    }
    Ok(mat)
}

fn mount(key: &str, v: Option<&toml::Value>) -> Result<Mount, ConfigError> {
    let Some(v) = v else { return Ok(Mount::Identity) };
    if let toml::Value::String(s) = v {
        return match s.as_str() {
            "identity" => Ok(Mount::Identity),
            "calibrate" => Ok(Mount::Calibrate),
            _ => Err(err(
                key,
                format!("expected \"identity\", \"calibrate\" or [w, x, y, z], found \"{s}\""),
            )),
        };
    }
    let q = v
        .as_array()
        .filter(|a| a.len() == 4)
        .and_then(|a| a.iter().map(number).collect::<Option<Vec<f64>>>())
        .ok_or_else(|| {
            err(key, "expected \"identity\", \"calibrate\" or a quaternion [w, x, y, z]")
        })?;
    let quat = DQuat::from_xyzw(q[1], q[2], q[3], q[0]);
    let len = quat.length();
    if !len.is_finite() || (len - 1.0).abs() > 1e-3 {
        return Err(err(
            key,
            format!("the quaternion [w, x, y, z] = {q:?} has length {len}, expected 1"),
        ));
    }
    Ok(Mount::Fixed(quat.normalize()))
}

/// Whether a joint's rotation channels form a full three-axis order, which
/// a sensor can drive.
pub(crate) fn full_order(skeleton: &Skeleton, id: JointId) -> bool {
    skeleton.joint(id).rotation_order().is_some()
}

impl Config {
    /// Reads a configuration file and the skeleton it names (relative to
    /// the configuration file's folder).
    ///
    /// # Errors
    /// When the file cannot be read or is not a valid configuration.
    pub fn load(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let with_path = |mut e: ConfigError| {
            e.path = Some(path.to_path_buf());
            e
        };
        let text = std::fs::read_to_string(path).map_err(|e| with_path(err("", e.to_string())))?;
        let base = path.parent().unwrap_or(Path::new("."));
        Config::parse(&text, base).map_err(with_path)
    }

    /// Parses configuration text; a relative `skeleton` is taken relative
    /// to `base`.
    ///
    /// # Errors
    /// On a TOML syntax error, an unknown or mistyped key, a `frame_rate`
    /// not in (0, [`MAX_FRAME_RATE`]], a skeleton that
    /// cannot be read, an unknown joint, a joint bound twice, a joint whose
    /// rotation channels are not three distinct axes, or a bad quaternion
    /// or matrix.
    pub fn parse(text: &str, base: &Path) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        if !(raw.frame_rate.is_finite() && raw.frame_rate > 0.0) {
            return Err(err(
                "frame_rate",
                format!("expected a positive number, found {}", raw.frame_rate),
            ));
        }
        if raw.frame_rate > MAX_FRAME_RATE {
            return Err(err(
                "frame_rate",
                if raw.frame_rate < 1e15 {
                    format!("{} is above the maximum of {MAX_FRAME_RATE}", raw.frame_rate)
                } else {
                    format!("{:e} is above the maximum of {MAX_FRAME_RATE}", raw.frame_rate)
                },
            ));
        }
        let sensor_frame = sensor_frame(raw.sensor_frame.as_ref())?;
        let skeleton_path = base.join(&raw.skeleton);
        // Its motion is ignored, so a motion section lenient reading repairs
        // (a `Frames:` count that disagrees, a zero Frame Time) is no error.
        let (bvh, _) = bvhkit::ReadOptions::new()
            .lenient(true)
            .read_path(&skeleton_path)
            .map_err(|e| err("skeleton", e.to_string()))?;
        let (skeleton, _) = bvh.into_parts();
        let mut bindings = Vec::new();
        let mut bound: HashMap<JointId, usize> = HashMap::new();
        for (i, b) in raw.bind.iter().enumerate() {
            let key = format!("bind[{i}]");
            let id = skeleton
                .find(&b.joint)
                .filter(|&id| !skeleton.joint(id).is_end_site())
                .ok_or_else(|| {
                    err(format!("{key}.joint"), format!("unknown joint \"{}\"", b.joint))
                })?;
            if let Some(prev) = bound.insert(id, i) {
                return Err(err(
                    format!("{key}.joint"),
                    format!("joint \"{}\" is already bound by bind[{prev}]", b.joint),
                ));
            }
            if !full_order(&skeleton, id) {
                return Err(err(
                    format!("{key}.joint"),
                    format!(
                        "joint \"{}\" has rotation channels {:?}; a sensor drives three distinct axes",
                        b.joint,
                        skeleton.joint(id).rotation_axes().map(|a| a.letter()).collect::<String>()
                    ),
                ));
            }
            if b.sensor.is_empty() {
                return Err(err(format!("{key}.sensor"), "empty sensor id"));
            }
            bindings.push(Binding {
                sensor: b.sensor.clone(),
                joint: id,
                mount: mount(&format!("{key}.mount"), b.mount.as_ref())?,
            });
        }
        if raw.bind_all {
            for id in skeleton.ids() {
                let j = skeleton.joint(id);
                let drivable =
                    full_order(&skeleton, id) || j.channels().iter().any(|c| c.is_position());
                if j.is_end_site() || bound.contains_key(&id) || !drivable {
                    continue;
                }
                bindings.push(Binding {
                    sensor: j.name().to_string(),
                    joint: id,
                    mount: Mount::Identity,
                });
            }
        }
        let position_scale = raw.position_scale.unwrap_or(1.0);
        if !(position_scale.is_finite() && position_scale != 0.0) {
            return Err(err(
                "position_scale",
                format!("expected a finite non-zero number, found {position_scale}"),
            ));
        }
        let root_position = match raw.root_position {
            None => None,
            Some(r) => {
                let scale = r.scale.unwrap_or(1.0);
                if !(scale.is_finite() && scale != 0.0) {
                    return Err(err(
                        "root_position.scale",
                        format!("expected a finite non-zero number, found {scale}"),
                    ));
                }
                if r.sensor.is_empty() {
                    return Err(err("root_position.sensor", "empty sensor id"));
                }
                Some(RootPosition { sensor: r.sensor, scale })
            }
        };
        Ok(Config {
            skeleton_path,
            skeleton,
            frame_rate: raw.frame_rate,
            sensor_frame,
            bindings,
            position_scale,
            root_position,
        })
    }

    /// The configuration `bvh replay` uses without one, and that `bind_all`
    /// gives: every joint driven by the sensor named after it, identity
    /// mounts, Y-up, positions in the skeleton's unit.
    pub fn bind_all(skeleton: Skeleton, skeleton_path: PathBuf, frame_rate: f64) -> Config {
        let bindings = skeleton
            .ids()
            .filter(|&id| {
                let j = skeleton.joint(id);
                !j.is_end_site()
                    && (full_order(&skeleton, id) || j.channels().iter().any(|c| c.is_position()))
            })
            .map(|id| Binding {
                sensor: skeleton.joint(id).name().to_string(),
                joint: id,
                mount: Mount::Identity,
            })
            .collect();
        Config {
            skeleton_path,
            skeleton,
            frame_rate,
            sensor_frame: DMat3::IDENTITY,
            bindings,
            position_scale: 1.0,
            root_position: None,
        }
    }

    /// A sensor's quaternion (its axes) in BVH axes: `M · q · M⁻¹`.
    pub fn to_bvh_axes(&self, q: DQuat) -> DQuat {
        rotate_axes(DQuat::from_mat3(&self.sensor_frame), q)
    }

    /// The inverse of [`Config::to_bvh_axes`].
    pub fn to_sensor_axes(&self, q: DQuat) -> DQuat {
        let f = DQuat::from_mat3(&self.sensor_frame);
        (f.conjugate() * q * f).normalize()
    }

    /// A sample position (sensor axes and unit) in BVH axes and the
    /// skeleton's unit.
    pub fn position_to_bvh(&self, p: DVec3, scale: f64) -> DVec3 {
        self.sensor_frame * p * scale
    }
}

/// `f · q · f⁻¹`, normalised: a rotation `q` in axes turned by `f`. The one
/// place [`Config::to_bvh_axes`] and the recorder (which makes `f` once) share.
pub(crate) fn rotate_axes(f: DQuat, q: DQuat) -> DQuat {
    (f * q * f.conjugate()).normalize()
}
