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
//! of a `.glb` or a `.gltf` file. The mapping is described in `docs/gltf.md`.
//!
//! Rotations are the core's: each joint's local rotation matrix from
//! [`Kinematics::local`], turned into a unit quaternion, with its sign
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
//! the document model). `export(&Bvh, &ExportOptions) -> Export` (document +
//! buffer 0; `to_glb`, `to_gltf` with an embedded or side buffer): node `i` is
//! joint `i`, rotations and translations per frame come from
//! `Kinematics::local` (no Euler rule of its own; the frames computed in pieces
//! of 512 on rayon's pool, each writing its part of every track, then a pass
//! per rotation track makes the quaternions sign-continuous in frame order from
//! each frame's side of the one before, so the bytes are those of one frame
//! after the other), quaternions sign-continuous, units from `bvhkit::units`,
//! the up axis detected (`bvhkit::export::Up`, `edit::axes::detect_up`) and converted to Y up by
//! `AxesMap` before anything else (`ExportOptions::up`). `tests/node.rs` runs
//! `tests/js/check.mjs` (glTF-Validator and three.js GLTFLoader, npm packages
//! pinned by its lock file, installed by `scripts/test.sh`) over every corpus
//! export, and draws four corpus exports with three.js in headless Chromium
//! (`tests/js/view.html`, WebGL on SwiftShader) to check the screenshots. The
//! mapping is in `docs/gltf.md`.
#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::fmt;

use bvhkit::edit::axes::{Axes, AxesMap, SignedAxis, UpAxis};
use bvhkit::glam::{DAffine3, DQuat, DVec3};
use bvhkit::units::{UnitGuess, Units};
use bvhkit::{Bvh, Kinematics, PositionChannels, Skeleton};
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
        let mut root = self.root.clone();
        root.buffers[0].uri = None;
        let mut text = root.to_vec().map_err(|e| Error::Json(e.to_string()))?;
        while !text.len().is_multiple_of(4) {
            text.push(b' ');
        }
        let total = 12 + 8 + text.len() + 8 + self.buffer.len();
        let total32 = u32::try_from(total).map_err(|_| Error::TooLarge(total))?;
        let mut head = Vec::with_capacity(20);
        head.extend_from_slice(b"glTF");
        head.extend_from_slice(&2u32.to_le_bytes());
        head.extend_from_slice(&total32.to_le_bytes());
        head.extend_from_slice(&(text.len() as u32).to_le_bytes());
        head.extend_from_slice(b"JSON");
        w.write_all(&head)?;
        w.write_all(&text)?;
        let mut bin = Vec::with_capacity(8);
        bin.extend_from_slice(&(self.buffer.len() as u32).to_le_bytes());
        bin.extend_from_slice(b"BIN\0");
        w.write_all(&bin)?;
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
struct Builder {
    root: json::Root,
    buffer: Vec<u8>,
}

impl Builder {
    fn view(
        &mut self,
        bytes: &[u8],
        target: Option<json::buffer::Target>,
    ) -> json::Index<json::buffer::View> {
        self.align();
        let offset = self.buffer.len();
        self.buffer.extend_from_slice(bytes);
        self.view_at(offset, bytes.len(), target)
    }

    /// Pads the buffer to a multiple of 4 bytes.
    fn align(&mut self) {
        while !self.buffer.len().is_multiple_of(4) {
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
        let offset = self.buffer.len();
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

/// The bytes of each track of `buffer`, tracks given as (start, bytes per
/// frame) in buffer order, `n_frames` frames each.
fn track_bytes<'a>(
    buffer: &'a mut [u8],
    tracks: &[(usize, usize)],
    n_frames: usize,
) -> Vec<&'a mut [u8]> {
    let mut rest = buffer;
    let mut at = 0;
    let mut out = Vec::with_capacity(tracks.len());
    for &(start, stride) in tracks {
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - at);
        let (track, tail) = tail.split_at_mut(stride * n_frames);
        rest = tail;
        at = start + stride * n_frames;
        out.push(track);
    }
    out
}

/// Frames per piece of the animation computed on rayon's pool.
const PIECE_FRAMES: usize = 512;

/// Writes `values` little-endian at the start of `out`.
fn put(out: &mut [u8], values: &[f32]) {
    for (o, v) in out.chunks_exact_mut(4).zip(values) {
        o.copy_from_slice(&v.to_le_bytes());
    }
}

fn finite32(v: DVec3, joint: &str, frame: Option<usize>) -> Result<[f32; 3], Error> {
    let a = [v.x as f32, v.y as f32, v.z as f32];
    if a.iter().all(|x| x.is_finite()) {
        Ok(a)
    } else {
        Err(Error::NotFinite { joint: joint.to_string(), frame })
    }
}

/// Exports `bvh` as a glTF document and buffer: see the crate docs.
///
/// # Errors
/// [`Error::FrameTime`] for a non-positive frame time with several frames,
/// [`Error::NotFinite`] for values beyond `f32`, [`Error::Scale`] for a bad
/// scale factor, [`Error::Axes`] when the axis conversion fails.
pub fn export(bvh: &Bvh, options: &ExportOptions) -> Result<Export, Error> {
    let (source_up, detected) = options.up.resolve(bvh);
    let converted;
    let bvh = match source_up {
        Some(from) if from != SignedAxis::PosY => {
            // The conversion of `bvh edit --up y --source-up FROM`.
            let mut map =
                AxesMap::new(bvh.skeleton(), Axes::with_up(from), Axes::with_up(SignedAxis::PosY));
            converted =
                bvhkit::edit::map_frames(bvh, &mut map).map_err(|e| Error::Axes(e.to_string()))?;
            &converted
        }
        _ => bvh,
    };
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

    let mut b = Builder { root: json::Root::default(), buffer: Vec::new() };
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
    if n_frames > 0 {
        animate(&mut b, bvh, options.position_channels, factor, &names, &name)?;
    }

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
    while !b.buffer.len().is_multiple_of(4) {
        b.buffer.push(0);
    }
    b.root.buffers[0].byte_length = USize64(b.buffer.len() as u64);
    Ok(Export { root: b.root, buffer: b.buffer, applied, joint_nodes })
}

fn animate(
    b: &mut Builder,
    bvh: &Bvh,
    mode: PositionChannels,
    factor: f64,
    names: &[String],
    name: &str,
) -> Result<(), Error> {
    let skeleton = bvh.skeleton();
    let motion = bvh.motion();
    let n = skeleton.len();
    let n_frames = motion.n_frames();
    let fk = Kinematics::new(skeleton, mode);
    let times: Vec<f32> = (0..n_frames).map(|i| (i as f64 * motion.frame_time()) as f32).collect();
    // A Frame Time of 1e300 gives infinite times, one of 1e-300 equal ones.
    if times.iter().any(|t| !t.is_finite()) || times.windows(2).any(|w| w[1] <= w[0]) {
        return Err(Error::FrameTime(motion.frame_time()));
    }
    let input = b.floats(&times, json::accessor::Type::Scalar, true, None);

    let rotated: Vec<bool> =
        skeleton.joints().iter().map(|j| j.rotation_axes().next().is_some()).collect();
    let translated: Vec<bool> =
        skeleton.joints().iter().map(|j| j.channels().iter().any(|c| c.is_position())).collect();
    // Every track's place in the buffer, joint by joint (translation, then
    // rotation): the frames are written straight there, no copy.
    b.align();
    let (mut tra_at, mut rot_at) = (vec![0; n], vec![0; n]);
    let mut end = b.buffer.len();
    for i in 0..n {
        if translated[i] {
            tra_at[i] = end;
            end += 12 * n_frames;
        }
        if rotated[i] {
            rot_at[i] = end;
            end += 16 * n_frames;
        }
    }
    b.buffer.resize(end, 0);
    // The frames are computed in pieces on rayon's pool, each piece writing
    // its frames of every track (the tracks are joint by joint, so a
    // piece's part of a track is one run of bytes), with each rotation's
    // quaternion as it comes and, per joint and frame, on which side of
    // the frame before's it lies (the sign of their dot product). A pass
    // over each rotation track then makes the quaternions sign-continuous
    // in frame order, as one frame after the other would (`q` is turned
    // to `-q` when its dot product with the quaternion written before it
    // is negative; negating is exact, in f64 and in f32 alike).
    // (start, bytes per frame) of every track, in buffer order.
    let tracks: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| {
            let t = translated[i].then_some((tra_at[i], 12));
            let r = rotated[i].then_some((rot_at[i], 16));
            t.into_iter().chain(r)
        })
        .collect();
    let pieces = n_frames.div_ceil(PIECE_FRAMES);
    let mut parts: Vec<Vec<&mut [u8]>> = (0..pieces).map(|_| Vec::new()).collect();
    for (track, &(_, stride)) in
        track_bytes(&mut b.buffer, &tracks, n_frames).into_iter().zip(&tracks)
    {
        for (k, chunk) in track.chunks_mut(stride * PIECE_FRAMES).enumerate() {
            parts[k].push(chunk);
        }
    }
    let n_rot = rotated.iter().filter(|r| **r).count();
    // Per piece: the sides (+1, -1, 0 for a zero or NaN dot product), frame
    // by frame, rotated joint by rotated joint; and the first joint and
    // frame that is not finite.
    let computed: Vec<(Vec<i8>, Option<Error>)> = {
        use rayon::prelude::*;
        parts
            .into_par_iter()
            .enumerate()
            .map(|(k, mut out)| {
                let first = k * PIECE_FRAMES;
                let last = (first + PIECE_FRAMES).min(n_frames);
                let mut sides = Vec::with_capacity((last - first) * n_rot);
                let mut scratch = fk.scratch();
                let mut local = vec![DAffine3::IDENTITY; n];
                let mut prev = vec![DQuat::IDENTITY; n];
                // The frame before the piece, for the sides of its first.
                if first > 0 {
                    fk.local_with(motion.frame(first - 1), &mut scratch, &mut local);
                    for i in (0..n).filter(|&i| rotated[i]) {
                        prev[i] = DQuat::from_mat3(&local[i].matrix3).normalize();
                    }
                }
                for f in first..last {
                    fk.local_with(motion.frame(f), &mut scratch, &mut local);
                    let mut track = out.iter_mut();
                    for i in 0..n {
                        let (t, r) =
                            (translated[i].then(|| track.next()), rotated[i].then(|| track.next()));
                        if let Some(Some(slot)) = r {
                            let q = DQuat::from_mat3(&local[i].matrix3).normalize();
                            let d = q.dot(prev[i]);
                            sides.push(if f == 0 {
                                1
                            } else if d < 0.0 {
                                -1
                            } else if d > 0.0 {
                                1
                            } else {
                                0
                            });
                            prev[i] = q;
                            let a = [q.x as f32, q.y as f32, q.z as f32, q.w as f32];
                            if !a.iter().all(|x| x.is_finite()) {
                                return (
                                    sides,
                                    Some(Error::NotFinite {
                                        joint: names[i].clone(),
                                        frame: Some(f),
                                    }),
                                );
                            }
                            put(&mut slot[16 * (f - first)..], &a);
                        }
                        if let Some(Some(slot)) = t {
                            match finite32(local[i].translation * factor, &names[i], Some(f)) {
                                Ok(v) => put(&mut slot[12 * (f - first)..], &v),
                                Err(e) => return (sides, Some(e)),
                            }
                        }
                    }
                }
                (sides, None)
            })
            .collect()
    };
    // The first failure in frame order.
    let mut all_sides = Vec::with_capacity(n_frames * n_rot);
    for (sides, failed) in computed {
        if let Some(e) = failed {
            return Err(e);
        }
        all_sides.extend_from_slice(&sides);
    }
    // Sign continuity, each rotation track on its own.
    {
        use rayon::prelude::*;
        let rot_tracks: Vec<(usize, usize)> = tracks.into_iter().filter(|t| t.1 == 16).collect();
        let rot_bytes = track_bytes(&mut b.buffer, &rot_tracks, n_frames);
        rot_bytes.into_par_iter().enumerate().for_each(|(r, track)| {
            let mut sign = 1i8;
            for (f, q) in track.chunks_exact_mut(16).enumerate() {
                let side = all_sides[f * n_rot + r];
                // Turned when its dot product with the one written before
                // (this side times that one's sign) is negative.
                sign = if side * sign < 0 { -1 } else { 1 };
                if sign < 0 {
                    for x in q.chunks_exact_mut(4) {
                        x[3] ^= 0x80;
                    }
                }
            }
        });
    }
    let mut anim = json::Animation {
        name: Some(name.to_string()),
        channels: Vec::new(),
        samplers: Vec::new(),
        extensions: None,
        extras: None,
    };
    let mut add = |b: &mut Builder, node: usize, at: usize, ty: json::accessor::Type, path| {
        let view = b.view_at(at, 4 * ty.multiplicity() * n_frames, None);
        let output = b.float_accessor(view, n_frames, ty, None);
        let sampler = json::Index::new(anim.samplers.len() as u32);
        anim.samplers.push(json::animation::Sampler {
            input,
            interpolation: Valid(json::animation::Interpolation::Linear),
            output,
            extensions: None,
            extras: None,
        });
        anim.channels.push(json::animation::Channel {
            sampler,
            target: json::animation::Target {
                node: json::Index::new(node as u32),
                path: Valid(path),
                extensions: None,
                extras: None,
            },
            extensions: None,
            extras: None,
        });
    };
    for i in 0..n {
        if translated[i] {
            add(
                b,
                i,
                tra_at[i],
                json::accessor::Type::Vec3,
                json::animation::Property::Translation,
            );
        }
        if rotated[i] {
            add(b, i, rot_at[i], json::accessor::Type::Vec4, json::animation::Property::Rotation);
        }
    }
    if !anim.channels.is_empty() {
        b.root.push(anim);
    }
    Ok(())
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
