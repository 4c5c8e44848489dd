//! glTF 2.0 export of BVH motion.
//!
//! [`export`] turns a parsed [`Bvh`] into a glTF document ([`gltf_json::Root`])
//! and its binary buffer: one node per joint (End Sites as leaf nodes, named
//! as [`Skeleton::display_names`](bvhkit::Skeleton::display_names) names
//! them), rest translations from the `OFFSET`s, one scene root per `ROOT`,
//! one animation with a LINEAR rotation sampler per joint with rotation
//! channels and a translation sampler per joint with position channels, and
//! optionally a skin with one box per bone so that any viewer shows the
//! figure moving. [`Export::to_glb`] and [`Export::to_gltf`] give the bytes
//! of a `.glb` or a `.gltf` file; [`plan`] and [`Plan::write_glb`] write the
//! same `.glb` as its frames are computed, without the whole buffer in
//! memory. The mapping is described in `docs/gltf.md`.
//!
//! Rotations are the core's: each joint's local rotation matrix from
//! [`Kinematics::local`](bvhkit::Kinematics::local), turned into a unit quaternion, with its sign
//! flipped whenever that keeps it in the same hemisphere as the previous
//! frame's (so LINEAR interpolation takes the short way).
//!
//! ```
//! use bvhkit::Bvh;
//! use bvhkit_gltf::{ExportOptions, export};
//!
//! let bvh = Bvh::parse(
//!     "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n \
//!      End Site\n {\n  OFFSET 0 10 0\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.5\n0 90 0 0 0 0\n1 90 0 90 0 0\n",
//! )?;
//! let out = export(&bvh, &ExportOptions::default())?;
//! assert_eq!(out.root.nodes.len(), 2 + 1); // Hips, its End Site, the mesh node
//! let glb = out.to_glb()?;
//! assert_eq!(&glb[..4], b"glTF");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Implementation notes
//!
//! GlTF 2.0 export, in its own crate so the core stays lean (`gltf-json` for
//! the document model). `plan(&Bvh, &ExportOptions) -> Plan` makes the
//! document and buffer 0's bytes around the animation's (nothing in the
//! document depends on a frame's value: the only `min`/`max` are the key
//! times' and the rest-pose boxes'); `Plan::write_glb` computes the frames
//! as it writes them into a seekable writer (`bvh export -o x.glb`: the
//! whole buffer is never in memory), `Plan::into_export` into memory, and
//! `export(&Bvh, &ExportOptions) -> Export` (document + buffer 0; `to_glb`,
//! `to_gltf` with an embedded or side buffer) is the two. Node `i` is
//! joint `i`, rotations and translations per frame come from
//! `Kinematics::local` (no Euler rule of its own; `anim.rs`: the frames
//! computed in pieces of 512 on rayon's pool and handed over in frame order,
//! a run of bytes per track each, the quaternions made sign-continuous as
//! they are handed over, so the bytes are those of one frame after the
//! other), quaternions sign-continuous, units from `bvhkit::units`,
//! the up axis detected (`bvhkit::export::Up`, `edit::axes::detect_up`) and converted to Y up by
//! `AxesMap` before anything else (`ExportOptions::up`). `tests/node.rs` runs
//! `tests/js/check.mjs` (glTF-Validator and three.js GLTFLoader, npm packages
//! pinned by its lock file, installed by `scripts/test.sh`) over every corpus
//! export, and draws four corpus exports with three.js in headless Chromium
//! (`tests/js/view.html`, WebGL on SwiftShader) to check the screenshots. The
//! mapping is in `docs/gltf.md`.
#![deny(missing_docs)]

mod anim;

use std::collections::BTreeMap;
use std::fmt;

use bvhkit::edit::axes::{Axes, AxesMap, SignedAxis, UpAxis};
use bvhkit::glam::DVec3;
use bvhkit::units::{UnitGuess, Units};
use bvhkit::{Bvh, PositionChannels, Skeleton};
use gltf_json as json;
use json::validation::{Checked::Valid, USize64};

/// The options of [`export`] are the ones every export shares
/// ([`bvhkit::export::Options`]): position channels, unit conversion (every
/// length multiplied by the metres per file unit; an unknown guessed unit
/// scaled to a human size of 1.7 m, `Scale::Factor(1.0)` keeping the
/// file's numbers), the up axis converted to glTF's Y up ([`AxesMap`],
/// Blender's axis conversion; the file's axes kept under [`Up::Keep`] and
/// when none is detected), a skin with one box per bone weighted to its
/// joint, and the name of the animation and scene.
pub use bvhkit::export::Options as ExportOptions;
/// The unit and up-axis choices ([`bvhkit::export`]).
pub use bvhkit::export::{Scale, Up};

/// What unit and axis conversion was applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// Metres per file unit: every length was multiplied by this.
    pub factor: f64,
    /// The unit guessed from the skeleton's size (also reported with `--scale`).
    pub guess: UnitGuess,
    /// Whether the factor came from the guess (`false`: given by the caller).
    pub guessed: bool,
    /// The source's up axis, converted from to Y up (`+Y`: nothing to
    /// convert); `None` when the file's axes were kept as they are.
    pub source_up: Option<SignedAxis>,
    /// The detection, under [`Up::Detect`].
    pub detected: Option<UpAxis>,
}

impl fmt::Display for Applied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.guessed {
            write!(f, "units guessed {}, scaled by {} to metres", self.guess.label(), self.factor)?;
        } else {
            write!(f, "scaled by {} (given; guess was {})", self.factor, self.guess.label())?;
        }
        match (self.source_up, &self.detected) {
            (Some(SignedAxis::PosY), Some(d)) => write!(f, "; up axis detected {d}, kept"),
            (Some(a), Some(d)) => write!(f, "; up axis detected {d}, converted from {a} to Y up"),
            (None, Some(d)) => write!(f, "; up axis {d}: the file's axes kept"),
            (Some(SignedAxis::PosY), None) => f.write_str("; up axis y given, kept"),
            (Some(a), None) => write!(f, "; up axis {a} given, converted to Y up"),
            (None, None) => f.write_str("; the file's axes kept"),
        }
    }
}

/// Why a file cannot be exported.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The frame time is not a positive finite number while there are
    /// several frames, or its frames' times are not finite and increasing
    /// as 32-bit floats (glTF key times must increase).
    FrameTime(f64),
    /// A value is not finite once converted to 32-bit floats.
    NotFinite {
        /// The joint's display name.
        joint: String,
        /// The frame (`None`: the rest pose).
        frame: Option<usize>,
    },
    /// The scale factor is not a positive finite number.
    Scale(f64),
    /// Serialising the document failed.
    Json(String),
    /// The buffer is larger than glTF allows (4 GiB in a `.glb`).
    TooLarge(usize),
    /// The axis conversion failed (the core's message).
    Axes(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::FrameTime(t) => {
                write!(
                    f,
                    "frame time {t:?} s cannot give glTF key times: they are 32-bit floats that must be finite and increase (a positive frame time, every frame's time below 3.4e38 s and apart from the next at 32-bit precision)"
                )
            }
            Error::NotFinite { joint, frame: Some(i) } => {
                write!(f, "joint {joint}, frame {i}: a value is not finite as a 32-bit float")
            }
            Error::NotFinite { joint, frame: None } => {
                write!(f, "joint {joint}: its OFFSET is not finite as a 32-bit float")
            }
            Error::Scale(s) => write!(f, "scale {s} is not a positive number"),
            Error::Json(e) => write!(f, "writing the glTF JSON: {e}"),
            Error::TooLarge(n) => write!(f, "buffer of {n} bytes is too large for glTF"),
            Error::Axes(e) => write!(f, "converting the up axis: {e}"),
        }
    }
}

impl std::error::Error for Error {}

/// Why [`Export::write_glb`] failed.
#[derive(Debug)]
pub enum GlbError {
    /// The document cannot be a `.glb` (nothing was written).
    Export(Error),
    /// Writing failed.
    Io(std::io::Error),
}

impl fmt::Display for GlbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GlbError::Export(e) => e.fmt(f),
            GlbError::Io(e) => write!(f, "writing the .glb: {e}"),
        }
    }
}

impl std::error::Error for GlbError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GlbError::Export(e) => Some(e),
            GlbError::Io(e) => Some(e),
        }
    }
}

impl From<Error> for GlbError {
    fn from(e: Error) -> GlbError {
        GlbError::Export(e)
    }
}

impl From<std::io::Error> for GlbError {
    fn from(e: std::io::Error) -> GlbError {
        GlbError::Io(e)
    }
}

/// A glTF document and its binary buffer (buffer 0).
#[derive(Clone, Debug)]
pub struct Export {
    /// The document. Its buffer 0 has no `uri`; [`Export::to_glb`] and
    /// [`Export::to_gltf`] fill it in as needed.
    pub root: json::Root,
    /// The bytes of buffer 0 (a multiple of 4 long).
    pub buffer: Vec<u8>,
    /// The unit and axis conversion applied.
    pub applied: Applied,
    /// Node index of every joint, in skeleton order.
    pub joint_nodes: Vec<u32>,
}

/// Where a `.gltf` file's buffer goes.
#[derive(Clone, Debug)]
pub enum BufferUri {
    /// Inline, as a `data:application/octet-stream;base64,` URI.
    Embedded,
    /// A side file (relative URI, e.g. `walk.bin`) that the caller writes
    /// with [`Export::buffer`].
    File(String),
}

impl Export {
    /// The bytes of a binary glTF (`.glb`) file ([`Export::write_glb`]
    /// into memory).
    ///
    /// # Errors
    /// [`Error::Json`] when serialising fails, [`Error::TooLarge`] beyond 4 GiB.
    pub fn to_glb(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(self.buffer.len() + 64 * 1024);
        self.write_glb(&mut out).map_err(|e| match e {
            GlbError::Export(e) => e,
            GlbError::Io(e) => Error::Json(e.to_string()),
        })?;
        Ok(out)
    }

    /// Writes a binary glTF (`.glb`) file to `w`: the header, the JSON
    /// chunk and the buffer, which is written as it is (not copied first).
    ///
    /// # Errors
    /// [`GlbError::Export`] ([`Error::Json`], [`Error::TooLarge`]) before
    /// anything is written, [`GlbError::Io`] when writing fails.
    pub fn write_glb(&self, w: &mut dyn std::io::Write) -> Result<(), GlbError> {
        let head = glb_head(&self.root, self.buffer.len())?;
        w.write_all(&head)?;
        w.write_all(&self.buffer)?;
        Ok(())
    }

    /// The text of a JSON glTF (`.gltf`) file with the buffer embedded or
    /// referring to a side file.
    ///
    /// # Errors
    /// [`Error::Json`] when serialising fails.
    pub fn to_gltf(&self, uri: &BufferUri) -> Result<String, Error> {
        let mut root = self.root.clone();
        root.buffers[0].uri = Some(match uri {
            BufferUri::Embedded => {
                format!("data:application/octet-stream;base64,{}", base64(&self.buffer))
            }
            BufferUri::File(name) => name.clone(),
        });
        root.to_string_pretty().map_err(|e| Error::Json(e.to_string()))
    }
}

/// A `.glb` file up to its binary chunk's bytes: the header, the JSON
/// chunk (the document without buffer 0's `uri`) and the binary chunk's
/// header, for a buffer of `buffer_len` bytes.
fn glb_head(root: &json::Root, buffer_len: usize) -> Result<Vec<u8>, Error> {
    let mut root = root.clone();
    root.buffers[0].uri = None;
    let mut text = root.to_vec().map_err(|e| Error::Json(e.to_string()))?;
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let total = 12 + 8 + text.len() + 8 + buffer_len;
    let total32 = u32::try_from(total).map_err(|_| Error::TooLarge(total))?;
    let mut head = Vec::with_capacity(28 + text.len());
    head.extend_from_slice(b"glTF");
    head.extend_from_slice(&2u32.to_le_bytes());
    head.extend_from_slice(&total32.to_le_bytes());
    head.extend_from_slice(&(text.len() as u32).to_le_bytes());
    head.extend_from_slice(b"JSON");
    head.extend_from_slice(&text);
    head.extend_from_slice(&(buffer_len as u32).to_le_bytes());
    head.extend_from_slice(b"BIN\0");
    Ok(head)
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        s.push(A[(n >> 18) as usize & 63] as char);
        s.push(A[(n >> 12) as usize & 63] as char);
        s.push(if c.len() > 1 { A[(n >> 6) as usize & 63] as char } else { '=' });
        s.push(if c.len() > 2 { A[n as usize & 63] as char } else { '=' });
    }
    s
}

/// Appends little-endian f32s and u32s to the buffer, views and accessors.
/// The animation's bytes are not held: `gap` bytes, computed as they are
/// written ([`Plan`]), lie between `before` and `buffer`.
struct Builder {
    root: json::Root,
    before: Vec<u8>,
    gap: usize,
    buffer: Vec<u8>,
}

impl Builder {
    /// The length of buffer 0 so far.
    fn end(&self) -> usize {
        self.before.len() + self.gap + self.buffer.len()
    }

    /// Leaves `len` bytes from the end (a multiple of 4) to the animation.
    fn leave_gap(&mut self, len: usize) {
        debug_assert!(self.gap == 0 && self.end().is_multiple_of(4));
        self.before = std::mem::take(&mut self.buffer);
        self.gap = len;
    }

    fn view(
        &mut self,
        bytes: &[u8],
        target: Option<json::buffer::Target>,
    ) -> json::Index<json::buffer::View> {
        self.align();
        let offset = self.end();
        self.buffer.extend_from_slice(bytes);
        self.view_at(offset, bytes.len(), target)
    }

    /// Pads the buffer to a multiple of 4 bytes.
    fn align(&mut self) {
        while !self.end().is_multiple_of(4) {
            self.buffer.push(0);
        }
    }

    /// A view of `len` bytes already in the buffer at `offset`.
    fn view_at(
        &mut self,
        offset: usize,
        len: usize,
        target: Option<json::buffer::Target>,
    ) -> json::Index<json::buffer::View> {
        self.root.push(json::buffer::View {
            buffer: json::Index::new(0),
            byte_length: USize64(len as u64),
            byte_offset: Some(USize64(offset as u64)),
            byte_stride: None,
            name: None,
            target: target.map(Valid),
            extensions: None,
            extras: None,
        })
    }

    /// An f32 accessor of `n` components per element; `bounds` adds min/max.
    fn floats(
        &mut self,
        values: &[f32],
        type_: json::accessor::Type,
        bounds: bool,
        target: Option<json::buffer::Target>,
    ) -> json::Index<json::Accessor> {
        let n = type_.multiplicity();
        self.align();
        let offset = self.end();
        self.buffer.reserve(4 * values.len());
        for v in values {
            self.buffer.extend_from_slice(&v.to_le_bytes());
        }
        let view = self.view_at(offset, 4 * values.len(), target);
        self.float_accessor(view, values.len() / n, type_, bounds.then(|| bounds_of(values, n)))
    }

    /// An f32 accessor over a whole view.
    fn float_accessor(
        &mut self,
        view: json::Index<json::buffer::View>,
        count: usize,
        type_: json::accessor::Type,
        bounds: Option<(serde_json::Value, serde_json::Value)>,
    ) -> json::Index<json::Accessor> {
        let (min, max) = match bounds {
            Some((lo, hi)) => (Some(lo), Some(hi)),
            None => (None, None),
        };
        self.root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: None,
            count: USize64(count as u64),
            component_type: Valid(json::accessor::GenericComponentType(
                json::accessor::ComponentType::F32,
            )),
            type_: Valid(type_),
            min,
            max,
            name: None,
            normalized: false,
            sparse: None,
            extensions: None,
            extras: None,
        })
    }

    fn ints(
        &mut self,
        bytes: &[u8],
        count: usize,
        component: json::accessor::ComponentType,
        type_: json::accessor::Type,
        target: json::buffer::Target,
    ) -> json::Index<json::Accessor> {
        let view = self.view(bytes, Some(target));
        self.root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: None,
            count: USize64(count as u64),
            component_type: Valid(json::accessor::GenericComponentType(component)),
            type_: Valid(type_),
            min: None,
            max: None,
            name: None,
            normalized: false,
            sparse: None,
            extensions: None,
            extras: None,
        })
    }
}

/// Per-component `min` and `max` of elements of `n` floats, as JSON.
fn bounds_of(values: &[f32], n: usize) -> (serde_json::Value, serde_json::Value) {
    let mut lo = vec![f32::INFINITY; n];
    let mut hi = vec![f32::NEG_INFINITY; n];
    for e in values.chunks_exact(n) {
        for k in 0..n {
            lo[k] = lo[k].min(e[k]);
            hi[k] = hi[k].max(e[k]);
        }
    }
    (serde_json::json!(lo), serde_json::json!(hi))
}

fn finite32(v: DVec3, joint: &str, frame: Option<usize>) -> Result<[f32; 3], Error> {
    let a = [v.x as f32, v.y as f32, v.z as f32];
    if a.iter().all(|x| x.is_finite()) {
        Ok(a)
    } else {
        Err(Error::NotFinite { joint: joint.to_string(), frame })
    }
}

/// Exports `bvh` as a glTF document and buffer: see the crate docs
/// ([`plan`], then [`Plan::into_export`]).
///
/// # Errors
/// [`Error::FrameTime`] for a non-positive frame time with several frames,
/// [`Error::NotFinite`] for values beyond `f32`, [`Error::Scale`] for a bad
/// scale factor, [`Error::Axes`] when the axis conversion fails.
pub fn export(bvh: &Bvh, options: &ExportOptions) -> Result<Export, Error> {
    plan(bvh, options)?.into_export()
}

/// An export with everything but the animation's frames made: the
/// document (its accessors' `min` and `max` are those of the key times and
/// of the rest-pose boxes, which need no frame), and buffer 0's bytes
/// before and after the animation's. [`Plan::write_glb`] computes the
/// frames as it writes them; [`Plan::into_export`] into memory. Both give
/// the same bytes on any number of threads.
pub struct Plan<'a> {
    root: json::Root,
    before: Vec<u8>,
    gap: usize,
    after: Vec<u8>,
    anim: Option<anim::Anim>,
    source: &'a Bvh,
    /// The source converted to Y up, when it was.
    converted: Option<Bvh>,
    applied: Applied,
    joint_nodes: Vec<u32>,
}

impl Plan<'_> {
    /// The document (buffer 0 without a `uri`).
    pub fn root(&self) -> &json::Root {
        &self.root
    }

    /// The unit and axis conversion applied.
    pub fn applied(&self) -> &Applied {
        &self.applied
    }

    /// The length of buffer 0 in bytes.
    pub fn buffer_len(&self) -> usize {
        self.before.len() + self.gap + self.after.len()
    }

    /// The motion exported (the source's, converted to Y up when it was).
    fn motion(&self) -> &bvhkit::Motion {
        self.converted.as_ref().unwrap_or(self.source).motion()
    }

    /// The export in memory: the frames computed into buffer 0.
    ///
    /// # Errors
    /// [`Error::NotFinite`] for a frame's value beyond `f32` (the first in
    /// frame order).
    pub fn into_export(self) -> Result<Export, Error> {
        let mut buffer = Vec::with_capacity(self.buffer_len());
        buffer.extend_from_slice(&self.before);
        buffer.resize(self.before.len() + self.gap, 0);
        if let Some(a) = &self.anim {
            let mut sink = |at: usize, bytes: &[u8]| {
                buffer[at..at + bytes.len()].copy_from_slice(bytes);
                Ok(())
            };
            a.stream(self.motion(), &mut sink).map_err(|e| match e {
                GlbError::Export(e) => e,
                GlbError::Io(e) => unreachable!("copying into memory failed: {e}"),
            })?;
        }
        buffer.extend_from_slice(&self.after);
        Ok(Export { root: self.root, buffer, applied: self.applied, joint_nodes: self.joint_nodes })
    }

    /// Writes the `.glb` file into `w` from its current position on,
    /// computing the animation's frames on rayon's pool as it goes and
    /// writing each piece of frames (512) as soon as the pieces before it
    /// are written: the whole buffer is never in memory. Buffer 0 keeps
    /// each track whole, so a piece lands in every track: `w` is sought to
    /// each track's part (a regular file; [`Export::write_glb`] writes
    /// anywhere). The bytes are [`Export::to_glb`]'s.
    ///
    /// # Errors
    /// [`GlbError::Export`]: [`Error::Json`] and [`Error::TooLarge`] before
    /// anything is written, [`Error::NotFinite`] for a frame's value beyond
    /// `f32` (part of the file is then written); [`GlbError::Io`] when
    /// writing fails.
    pub fn write_glb<W: std::io::Write + std::io::Seek + Send>(
        &self,
        w: &mut W,
    ) -> Result<(), GlbError> {
        use std::io::SeekFrom;
        let head = glb_head(&self.root, self.buffer_len())?;
        let bin = w.stream_position()? + head.len() as u64;
        w.write_all(&head)?;
        w.write_all(&self.before)?;
        if let Some(a) = &self.anim {
            let mut sink = |at: usize, bytes: &[u8]| {
                w.seek(SeekFrom::Start(bin + at as u64))?;
                w.write_all(bytes)
            };
            a.stream(self.motion(), &mut sink)?;
        }
        w.seek(SeekFrom::Start(bin + (self.before.len() + self.gap) as u64))?;
        w.write_all(&self.after)?;
        Ok(())
    }
}

/// Plans the export of `bvh` ([`export`]): checks and converts everything
/// but the frames' values.
///
/// # Errors
/// As [`export`], but values of frames beyond `f32` are found when the
/// frames are computed ([`Plan::write_glb`], [`Plan::into_export`]).
pub fn plan<'a>(source: &'a Bvh, options: &ExportOptions) -> Result<Plan<'a>, Error> {
    let bvh = source;
    let (source_up, detected) = options.up.resolve(bvh);
    let converted = match source_up {
        Some(from) if from != SignedAxis::PosY => {
            // The conversion of `bvh edit --up y --source-up FROM`.
            let mut map =
                AxesMap::new(bvh.skeleton(), Axes::with_up(from), Axes::with_up(SignedAxis::PosY));
            Some(bvhkit::edit::map_frames(bvh, &mut map).map_err(|e| Error::Axes(e.to_string()))?)
        }
        _ => None,
    };
    let bvh = converted.as_ref().unwrap_or(bvh);
    let skeleton = bvh.skeleton();
    let motion = bvh.motion();
    let n_joints = skeleton.len();
    let n_frames = motion.n_frames();
    let frame_time = motion.frame_time();
    if n_frames > 1 && !(frame_time.is_finite() && frame_time > 0.0) {
        return Err(Error::FrameTime(frame_time));
    }
    let unit = options.scale.resolve(bvh, options.position_channels).map_err(Error::Scale)?;
    let (factor, guess, guessed) = (unit.factor, unit.guess, unit.guessed);
    let applied = Applied { factor, guess, guessed, source_up, detected };
    let names = skeleton.display_names();
    let name = options.animation_name();

    let mut b =
        Builder { root: json::Root::default(), before: Vec::new(), gap: 0, buffer: Vec::new() };
    b.root.asset.generator = Some(format!("bvhkit-gltf {}", env!("CARGO_PKG_VERSION")));

    b.root.extras = Some(
        serde_json::value::to_raw_value(&serde_json::json!({
            "bvhkit": {
                "metres_per_unit": factor,
                "scale_guessed": guessed,
                "source_units": if guess.units == Units::Unknown { None } else { Some(guess.units.symbol()) },
                "source_size": guess.size,
                "position_channels": match options.position_channels {
                    PositionChannels::Replace => "replace",
                    PositionChannels::Add => "add",
                },
                "source_up_axis": source_up.map(SignedAxis::name),
                "up": match (options.up, source_up) {
                    (Up::Keep, _) => "kept",
                    (Up::Detect, None) => "not detected, kept",
                    (Up::Detect, Some(SignedAxis::PosY)) => "detected y, kept",
                    (Up::Detect, Some(_)) => "detected, converted to y",
                    (Up::From(SignedAxis::PosY), _) => "given y, kept",
                    (Up::From(_), _) => "given, converted to y",
                },
            }
        }))
        .map_err(|e| Error::Json(e.to_string()))?,
    );
    b.root.push(json::Buffer {
        byte_length: USize64(0),
        name: None,
        uri: None,
        extensions: None,
        extras: None,
    });

    // Nodes: joint i is node i.
    let mut children: Vec<Vec<json::Index<json::Node>>> = vec![Vec::new(); n_joints];
    for id in skeleton.ids() {
        if let Some(p) = skeleton.parent(id) {
            children[p.index()].push(json::Index::new(id.index() as u32));
        }
    }
    for (id, kids) in skeleton.ids().zip(children) {
        let j = skeleton.joint(id);
        let t = finite32(j.offset() * factor, &names[id.index()], None)?;
        b.root.push(json::Node {
            name: Some(names[id.index()].clone()),
            translation: Some(t),
            children: if kids.is_empty() { None } else { Some(kids) },
            ..Default::default()
        });
    }
    let joint_nodes: Vec<u32> = (0..n_joints as u32).collect();
    let mut scene_nodes: Vec<json::Index<json::Node>> =
        skeleton.roots().map(|r| json::Index::new(r.index() as u32)).collect();

    // Animation.
    let anim = if n_frames > 0 {
        Some(animate(&mut b, bvh, options.position_channels, factor, &names, &name)?)
    } else {
        None
    };

    // Skin and mesh, one per ROOT tree.
    if options.mesh {
        let roots: Vec<_> = skeleton.roots().collect();
        for r in roots {
            if let Some(node) = skin_mesh(&mut b, skeleton, r, factor, &names) {
                scene_nodes.push(node);
            }
        }
    }

    let scene = b.root.push(json::Scene {
        name: Some(name),
        nodes: scene_nodes,
        extensions: None,
        extras: None,
    });
    b.root.scene = Some(scene);
    b.align();
    b.root.buffers[0].byte_length = USize64(b.end() as u64);
    Ok(Plan {
        root: b.root,
        before: b.before,
        gap: b.gap,
        after: b.buffer,
        anim,
        source,
        converted,
        applied,
        joint_nodes,
    })
}

/// The animation: the key times' accessor, a view and accessor per track
/// (its bytes left to [`anim::Anim`], which computes them when they are
/// written), the animation's channels and samplers.
fn animate(
    b: &mut Builder,
    bvh: &Bvh,
    mode: PositionChannels,
    factor: f64,
    names: &[String],
    name: &str,
) -> Result<anim::Anim, Error> {
    let skeleton = bvh.skeleton();
    let motion = bvh.motion();
    let n_frames = motion.n_frames();
    let times: Vec<f32> = (0..n_frames).map(|i| (i as f64 * motion.frame_time()) as f32).collect();
    // A Frame Time of 1e300 gives infinite times, one of 1e-300 equal ones.
    if times.iter().any(|t| !t.is_finite()) || times.windows(2).any(|w| w[1] <= w[0]) {
        return Err(Error::FrameTime(motion.frame_time()));
    }
    let input = b.floats(&times, json::accessor::Type::Scalar, true, None);
    // Every track's place in the buffer, joint by joint (translation, then
    // rotation).
    b.align();
    let start = b.end();
    let (anim, end) = anim::Anim::plan(skeleton, mode, factor, names, n_frames, start);
    b.leave_gap(end - start);
    let mut channels = json::Animation {
        name: Some(name.to_string()),
        channels: Vec::new(),
        samplers: Vec::new(),
        extensions: None,
        extras: None,
    };
    for t in &anim.tracks {
        let (ty, path) = if t.stride == 12 {
            (json::accessor::Type::Vec3, json::animation::Property::Translation)
        } else {
            (json::accessor::Type::Vec4, json::animation::Property::Rotation)
        };
        let view = b.view_at(t.start, t.stride * n_frames, None);
        let output = b.float_accessor(view, n_frames, ty, None);
        let sampler = json::Index::new(channels.samplers.len() as u32);
        channels.samplers.push(json::animation::Sampler {
            input,
            interpolation: Valid(json::animation::Interpolation::Linear),
            output,
            extensions: None,
            extras: None,
        });
        channels.channels.push(json::animation::Channel {
            sampler,
            target: json::animation::Target {
                node: json::Index::new(t.joint as u32),
                path: Valid(path),
                extensions: None,
                extras: None,
            },
            extensions: None,
            extras: None,
        });
    }
    if !channels.channels.is_empty() {
        b.root.push(channels);
    }
    Ok(anim)
}

/// One box per bone of the tree under `root` (from each joint to each of
/// its children, weighted to the joint), skinned to the tree's joints.
/// Returns the mesh node, or `None` when the tree has no bone of length.
fn skin_mesh(
    b: &mut Builder,
    skeleton: &Skeleton,
    root: bvhkit::JointId,
    factor: f64,
    names: &[String],
) -> Option<json::Index<json::Node>> {
    let first = root.index();
    let end = skeleton.subtree_end(root);
    let count = end - first;
    if count > usize::from(u16::MAX) {
        return None;
    }
    // Rest pose: node translations only, rotations identity.
    let mut rest = vec![DVec3::ZERO; end];
    for i in first..end {
        let id = bvhkit::JointId::new(i);
        let o = skeleton.joint(id).offset() * factor;
        rest[i] = match skeleton.parent(id) {
            Some(p) => rest[p.index()] + o,
            None => o,
        };
    }
    let size = {
        let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
        for p in &rest[first..end] {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        (hi - lo).max_element()
    };
    let mut pos: Vec<f32> = Vec::new();
    let mut nor: Vec<f32> = Vec::new();
    let mut joints: Vec<u8> = Vec::new();
    let mut idx: Vec<u8> = Vec::new();
    let mut n_vertices = 0u32;
    for i in first + 1..end {
        let id = bvhkit::JointId::new(i);
        let Some(p) = skeleton.parent(id) else { continue };
        let (a, c) = (rest[p.index()], rest[i]);
        let d = c - a;
        let len = d.length();
        if len.is_nan() || len <= 1e-6 * size.max(1e-12) || !len.is_finite() {
            continue;
        }
        let w = (0.12 * len).clamp(0.01 * size, 0.05 * size).max(1e-6);
        let axis = d / len;
        let u = axis.any_orthonormal_vector();
        let v = axis.cross(u);
        let corner = |s: f64, t: f64, k: f64| a + axis * (len * k) + u * (w * s) + v * (w * t);
        // Six faces as (normal, four corners counter-clockwise seen from outside).
        let faces: [(DVec3, [DVec3; 4]); 6] = [
            (u, [corner(1., -1., 0.), corner(1., 1., 0.), corner(1., 1., 1.), corner(1., -1., 1.)]),
            (
                -u,
                [
                    corner(-1., -1., 0.),
                    corner(-1., -1., 1.),
                    corner(-1., 1., 1.),
                    corner(-1., 1., 0.),
                ],
            ),
            (v, [corner(-1., 1., 0.), corner(-1., 1., 1.), corner(1., 1., 1.), corner(1., 1., 0.)]),
            (
                -v,
                [
                    corner(-1., -1., 0.),
                    corner(1., -1., 0.),
                    corner(1., -1., 1.),
                    corner(-1., -1., 1.),
                ],
            ),
            (
                axis,
                [
                    corner(-1., -1., 1.),
                    corner(1., -1., 1.),
                    corner(1., 1., 1.),
                    corner(-1., 1., 1.),
                ],
            ),
            (
                -axis,
                [
                    corner(-1., -1., 0.),
                    corner(-1., 1., 0.),
                    corner(1., 1., 0.),
                    corner(1., -1., 0.),
                ],
            ),
        ];
        let joint = (p.index() - first) as u16;
        for (normal, quad) in faces {
            for q in quad {
                pos.extend_from_slice(&[q.x as f32, q.y as f32, q.z as f32]);
                let nn = normal.as_vec3().normalize();
                nor.extend_from_slice(&[nn.x, nn.y, nn.z]);
                for k in [joint, 0, 0, 0] {
                    joints.extend_from_slice(&k.to_le_bytes());
                }
            }
            for k in [0, 1, 2, 0, 2, 3] {
                idx.extend_from_slice(&(n_vertices + k).to_le_bytes());
            }
            n_vertices += 4;
        }
    }
    if n_vertices == 0 || !pos.iter().all(|x| x.is_finite()) {
        return None;
    }
    let nv = n_vertices as usize;
    let mut weights: Vec<f32> = Vec::with_capacity(4 * nv);
    for _ in 0..nv {
        weights.extend_from_slice(&[1.0, 0.0, 0.0, 0.0]);
    }
    use json::accessor::{ComponentType as C, Type as T};
    use json::buffer::Target::{ArrayBuffer, ElementArrayBuffer};
    let position = b.floats(&pos, T::Vec3, true, Some(ArrayBuffer));
    let normal = b.floats(&nor, T::Vec3, false, Some(ArrayBuffer));
    let joints_acc = b.ints(&joints, nv, C::U16, T::Vec4, ArrayBuffer);
    let weights_acc = b.floats(&weights, T::Vec4, false, Some(ArrayBuffer));
    let indices = b.ints(&idx, idx.len() / 4, C::U32, T::Scalar, ElementArrayBuffer);
    let mut ibm: Vec<f32> = Vec::with_capacity(16 * count);
    for p in &rest[first..end] {
        let m = bvhkit::glam::DMat4::from_translation(-*p).to_cols_array();
        ibm.extend(m.iter().map(|&x| x as f32));
    }
    let ibm = b.floats(&ibm, T::Mat4, false, None);
    let mut attributes = BTreeMap::new();
    attributes.insert(Valid(json::mesh::Semantic::Positions), position);
    attributes.insert(Valid(json::mesh::Semantic::Normals), normal);
    attributes.insert(Valid(json::mesh::Semantic::Joints(0)), joints_acc);
    attributes.insert(Valid(json::mesh::Semantic::Weights(0)), weights_acc);
    let mesh = b.root.push(json::Mesh {
        name: Some(format!("{} bones", names[first])),
        primitives: vec![json::mesh::Primitive {
            attributes,
            indices: Some(indices),
            material: None,
            mode: Valid(json::mesh::Mode::Triangles),
            targets: None,
            extensions: None,
            extras: None,
        }],
        weights: None,
        extensions: None,
        extras: None,
    });
    let skin = b.root.push(json::Skin {
        name: Some(names[first].clone()),
        inverse_bind_matrices: Some(ibm),
        joints: (first..end).map(|i| json::Index::new(i as u32)).collect(),
        skeleton: Some(json::Index::new(first as u32)),
        extensions: None,
        extras: None,
    });
    Some(b.root.push(json::Node {
        name: Some(format!("{} mesh", names[first])),
        mesh: Some(mesh),
        skin: Some(skin),
        ..Default::default()
    }))
}
