//! `bvh positions` and `bvh rotations`: per-joint, per-frame arrays, streamed
//! frame by frame so memory stays constant whatever the file length. Several
//! inputs (or `-o OUTDIR/`) give one output per input under the folder, made
//! in parallel.
//!
//! # Implementation notes
//!
//! `positions` and `rotations`, streamed through `FrameReader` (`--up auto`
//! from a mapped file into a regular file detects the up axis on the sampled
//! frames read from their own lines, `export::sampled_up` over
//! `sample::Sample`, and the real pass checks them (`sample::SampleCheck`: the
//! sampled frames bit for bit, the frame count, a reading that reached the
//! end); when it fails the output, dropped before its commit, is never put in
//! place and the exact path runs: a first pass that keeps only the sampled
//! frames, `export::detect_up_of` over `clip::detect_up_in_one_pass`, which
//! `bvh edit`'s lookahead shares, also taken at once for standard output, FIFOs
//! and devices (an output that cannot be taken back) and for a `--frames` range
//! that ends before `Frames:`; standard input and pipes are read into memory
//! for it first, and a file holding another frame count than `Frames:` says is
//! parsed whole; a regular file scanned in place from its mapping, standard
//! input and pipes read; parsed a window at a time (two halves on the pool; the
//! mapping is not populated up front, so its pages are mapped by the threads
//! that scan them while earlier frames are computed) by `io::read_batches`
//! while forward kinematics with batched sines runs on the batch before, both
//! on the pool, `positions_many`/`positions_with`/`world_with`/`local_with`,
//! and a writing thread writes the batch before, its buffer sent back to be
//! filled again) into CSV, JSON or NPY sinks (NPY patches its frame count at
//! the end, in the output file itself (through `io::WriteBehind`; the sidecar
//! is written first and its writeback started, `io::write_unsynced` (which
//! `write_atomic` also goes through), so that the array's sync commits both
//! files' new blocks in one journal transaction and the sidecar's own sync has
//! only its bytes to wait for, `Output::stage`; then both are put in place, the
//! array first) or, for a FIFO or device, in an anonymous temporary file copied
//! out at the end, and writes the JSON sidecar `OUT.npy.json`); several inputs
//! go to one file each under `-o OUTDIR/` through `par_map`.

use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use bvhkit::edit::FrameMap;
use bvhkit::edit::axes::UpAxis;
use bvhkit::glam::{DAffine3, DVec3};
use bvhkit::rotation::{RotationOrder, RotationRepr, mat3_to_repr};
use bvhkit::{Kinematics, ReadOptions, Skeleton};
use bvhkit_render::units::UnitGuess;
use clap::ValueEnum;

use crate::PosMode;
use crate::io::{Dest, Input, Output, Streamed, WriteBehind, located_warning};
use crate::range::FrameRange;
use crate::sample::{GaveUp, Sample, SampleCheck};

/// The long help of `bvh positions` (`bvh positions --help`).
pub(crate) const POSITIONS_ABOUT: &str = "\
World positions of every joint (CSV, JSON or NPY), streamed frame by frame.

Forward kinematics as the format defines it (rotation channels multiplied \
in the order listed, position channels replacing the OFFSET components they \
name unless --position-channels add), computed one frame at a time so \
memory stays constant however long the file. The format comes from the \
extension of -o (.csv, .json, .npy; any other extension is an error, so \
nothing is written under a misleading name) or from --format; without -o, \
CSV goes to standard output. NPY is a [frames, joints, 3] array with a JSON \
sidecar, OUT.npy.json: joint names, parent indices (-1 for roots), offsets, \
frame time, axes and the unit guess. The output may not be the input. \
Several files (or folders, walked for *.bvh) need -o OUTDIR/: one output \
per input, named after it with the folder structure kept, --format choosing \
the format (CSV by default), made in parallel (-j). --frames \
takes A..B (B excluded), A..=B, A.., ..B or N, counted from 0.

Example: bvh positions walk.bvh --frames 0..100 --joints Hips,Head -o hips_head.npy";

/// The long help of `bvh rotations` (`bvh rotations --help`).
pub(crate) const ROTATIONS_ABOUT: &str = "\
Local or world rotations of every joint (CSV, JSON or NPY), streamed frame by frame.

--space local gives each joint's rotation relative to its parent, world \
relative to the world; --repr picks Euler angles in degrees (in each \
joint's own channel order, or --order for all), unit quaternions x y z w, \
row-major 3x3 matrices, the 6D representation (the matrix's first two \
columns) or axis-angle vectors in radians. Local Euler angles in a joint's \
own order are the file's values, exactly; --continuous makes Euler angles \
and quaternion signs continuous from frame to frame instead (the same \
rotations, without 360° jumps or sign flips). Outputs, formats and \
--frames work as for `bvh positions`.

Example: bvh rotations walk.bvh --space world --repr 6d -o rot.npy";

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// One row per joint per frame: `frame,joint,<components>`.
    Csv,
    /// One JSON object with joint names and a frames × joints × components array.
    Json,
    /// A NumPy array [frames, joints, components] plus a JSON sidecar (`OUT.npy.json`: joints, parents, offsets, frame time, units).
    Npy,
}

/// NPY element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Dtype {
    /// 32-bit floats (what ML pipelines usually want).
    F32,
    /// 64-bit floats (exact).
    F64,
}

#[derive(Debug, clap::Args)]
pub(crate) struct Common {
    /// BVH files; directories are walked for *.bvh; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Output file for one input (default: standard output; NPY needs a file), or a folder
    /// (`OUTDIR/` or an existing folder; required for several inputs) that gets one output per
    /// input, named after it, the walked folders' structure kept.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Output format (default: from the extension of OUT, else csv).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Frames to export: `A..B` (B excluded), `A..=B`, `A..`, `..B` or `N`; 0-based.
    #[arg(long, value_name = "RANGE")]
    frames: Option<FrameRange>,
    /// Only these joints (names as `bvh info` shows them, comma-separated); End Sites are `<Parent>_End`.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    joints: Vec<String>,
    /// How position channels combine with OFFSET.
    #[arg(long, value_enum, default_value = "replace")]
    position_channels: PosMode,
    /// NPY element type.
    #[arg(long, value_enum, default_value = "f32")]
    dtype: Dtype,
    /// Refuse files with problems instead of reading them leniently.
    #[arg(long)]
    strict: bool,
    /// Convert the output to Y up from this up axis (x, y, z, -x, -y, -z, as `bvh edit --up y
    /// --source-up AXIS`), or `auto` to detect it (on frames spread over the clip: from a file into a
    /// file, read from their own lines and checked as the file is read, else in a first pass over
    /// the file; standard input is read into memory); default `keep`: the file's own numbers.
    #[arg(long, value_name = "AXIS", default_value = "keep", allow_hyphen_values = true, value_parser = crate::clip::parse_up)]
    up: crate::clip::Up,
    /// Number of files processed at once (default: all cores).
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct PositionsArgs {
    #[command(flatten)]
    common: Common,
}

/// Rotation spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Space {
    /// Relative to the parent joint.
    Local,
    /// Relative to the world.
    World,
}

/// Rotation representations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Repr {
    /// Euler angles in degrees, in the joint's own channel order (or --order).
    Euler,
    /// Unit quaternion `x, y, z, w`.
    Quat,
    /// 3x3 matrix, row-major `m00 m01 m02 m10 ... m22`, acting on column vectors.
    Matrix,
    /// The first two columns of the matrix (Zhou et al. 2019): `c0x c0y c0z c1x c1y c1z`.
    #[value(name = "6d")]
    SixD,
    /// Rotation vector (axis times angle, radians): the exponential map.
    AxisAngle,
}

impl From<Repr> for RotationRepr {
    fn from(r: Repr) -> RotationRepr {
        match r {
            Repr::Euler => RotationRepr::Euler,
            Repr::Quat => RotationRepr::Quat,
            Repr::Matrix => RotationRepr::Matrix,
            Repr::SixD => RotationRepr::SixD,
            Repr::AxisAngle => RotationRepr::AxisAngle,
        }
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct RotationsArgs {
    #[command(flatten)]
    common: Common,
    /// Local (relative to the parent) or world rotations.
    #[arg(long, value_enum, default_value = "local")]
    space: Space,
    /// Representation.
    #[arg(long, value_enum, default_value = "quat")]
    repr: Repr,
    /// Euler order for every joint (XYZ, ZXY, ...; default: each joint's own channel order, ZXY for joints without three rotation channels).
    #[arg(long, value_name = "ORDER", value_parser = parse_order)]
    order: Option<RotationOrder>,
    /// Keep Euler angles and quaternion signs continuous from frame to frame (no ±180°/360° or
    /// sign flips). Without it, local Euler angles in a joint's own order are the file's values.
    #[arg(long)]
    continuous: bool,
}

fn parse_order(s: &str) -> Result<RotationOrder, String> {
    RotationOrder::from_name(s)
        .ok_or_else(|| format!("'{s}' is not a rotation order (XYZ, XZY, YXZ, YZX, ZXY, ZYX)"))
}

/// Where exported frames go (on a writing thread of their own).
trait Sink: Send {
    fn frame(&mut self, index: usize, values: &[f64]) -> Result<()>;
    /// Frames `first..first + n`, their values one after the other.
    fn frames(&mut self, first: usize, n: usize, values: &[f64]) -> Result<()> {
        let w = values.len() / n.max(1);
        for k in 0..n {
            self.frame(first + k, &values[k * w..(k + 1) * w])?;
        }
        Ok(())
    }
    /// The skeleton's unit guess, known once the first frame is read.
    fn units(&mut self, _guess: UnitGuess) {}
    fn finish(self: Box<Self>) -> Result<()>;
}

struct Layout {
    joints: Vec<String>,
    /// Extra per-joint label column (the Euler order), if any.
    labels: Option<Vec<String>>,
    components: Vec<&'static str>,
    frame_time: f64,
}

/// What the NPY sidecar says beyond the layout.
struct Meta {
    /// The command's settings, as `"key": value` entries.
    settings: Vec<(&'static str, serde_json::Value)>,
    /// Each exported joint's parent, as an index into the exported joints
    /// (its nearest exported ancestor), -1 for none.
    parents: Vec<i64>,
    offsets: Vec<[f64; 3]>,
    source: String,
    first_frame: usize,
}

impl Meta {
    fn new(skeleton: &Skeleton, sel: &[usize], input: &Input, first_frame: usize) -> Meta {
        let at: HashMap<usize, i64> = sel.iter().enumerate().map(|(k, &i)| (i, k as i64)).collect();
        let parents = sel
            .iter()
            .map(|&i| {
                let mut p = skeleton.joints()[i].parent();
                while let Some(id) = p {
                    if let Some(&k) = at.get(&id.index()) {
                        return k;
                    }
                    p = skeleton.joints()[id.index()].parent();
                }
                -1
            })
            .collect();
        let offsets = sel.iter().map(|&i| skeleton.joints()[i].offset().to_array()).collect();
        Meta { settings: Vec::new(), parents, offsets, source: input.display(), first_frame }
    }
}

struct CsvSink<W: Write> {
    w: W,
    layout: Layout,
    buf: Vec<u8>,
}

fn push_num(buf: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        let mut b = ryu::Buffer::new();
        let s = b.format_finite(v);
        buf.extend_from_slice(s.strip_suffix(".0").unwrap_or(s).as_bytes());
    } else {
        buf.extend_from_slice(b"nan");
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl<W: Write> CsvSink<W> {
    fn new(mut w: W, layout: Layout) -> Result<Self> {
        write!(w, "frame,joint")?;
        if layout.labels.is_some() {
            write!(w, ",order")?;
        }
        for c in &layout.components {
            write!(w, ",{c}")?;
        }
        writeln!(w)?;
        let layout =
            Layout { joints: layout.joints.iter().map(|j| csv_field(j)).collect(), ..layout };
        Ok(CsvSink { w, layout, buf: Vec::with_capacity(1 << 16) })
    }
}

impl<W: Done> Sink for CsvSink<W> {
    fn frame(&mut self, index: usize, values: &[f64]) -> Result<()> {
        let k = self.layout.components.len();
        for (j, name) in self.layout.joints.iter().enumerate() {
            self.buf.extend_from_slice(index.to_string().as_bytes());
            self.buf.push(b',');
            self.buf.extend_from_slice(name.as_bytes());
            if let Some(l) = &self.layout.labels {
                self.buf.push(b',');
                self.buf.extend_from_slice(l[j].as_bytes());
            }
            for &v in &values[j * k..(j + 1) * k] {
                self.buf.push(b',');
                push_num(&mut self.buf, v);
            }
            self.buf.push(b'\n');
        }
        if self.buf.len() > 60_000 {
            self.w.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.w.write_all(&self.buf)?;
        let CsvSink { w, .. } = *self;
        w.done()
    }
}

struct JsonSink<W: Write> {
    w: W,
    k: usize,
    first: bool,
}

impl<W: Write> JsonSink<W> {
    fn new(mut w: W, layout: Layout, first_frame: usize) -> Result<Self> {
        let names = serde_json::to_string(&layout.joints)?;
        write!(w, "{{\"joints\":{}", crate::text::escape_json(&names))?;
        if let Some(l) = &layout.labels {
            write!(w, ",\"orders\":{}", serde_json::to_string(l)?)?;
        }
        write!(
            w,
            ",\"components\":{},\"frame_time\":{},\"first_frame\":{first_frame},\"frames\":[",
            serde_json::to_string(&layout.components)?,
            serde_json::to_string(&layout.frame_time)?
        )?;
        Ok(JsonSink { w, k: layout.components.len(), first: true })
    }
}

impl<W: Done> Sink for JsonSink<W> {
    fn frame(&mut self, _index: usize, values: &[f64]) -> Result<()> {
        let mut buf = Vec::with_capacity(values.len() * 12);
        if !self.first {
            buf.push(b',');
        }
        self.first = false;
        buf.push(b'[');
        for (j, chunk) in values.chunks(self.k).enumerate() {
            if j > 0 {
                buf.push(b',');
            }
            buf.push(b'[');
            for (i, &v) in chunk.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                if v.is_finite() { push_num(&mut buf, v) } else { buf.extend_from_slice(b"null") }
            }
            buf.push(b']');
        }
        buf.push(b']');
        self.w.write_all(&buf)?;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        writeln!(self.w, "]}}")?;
        let JsonSink { w, .. } = *self;
        w.done()
    }
}

/// A writer that can be completed: flushed and, for a regular file, put in
/// place of its target.
trait Done: Write + Send {
    fn done(self) -> Result<()>;
}

impl Done for BufWriter<Output> {
    fn done(self) -> Result<()> {
        Ok(self.into_inner().map_err(|e| e.into_error())?.finish()?)
    }
}

/// NPY v1.0 with the frame count patched in at the end (the stream's length
/// is not trusted from `Frames:`), written into the output file itself when
/// it is a regular file being replaced, else into an anonymous temporary file
/// that is copied out at the end (a FIFO or device cannot seek); plus the
/// JSON sidecar (see [`sidecar_path`]) next to a regular file.
struct NpySink {
    out: Output,
    w: BufWriter<WriteBehind>,
    /// Where the array goes when it is a regular file (the sidecar goes beside it).
    path: Option<PathBuf>,
    dtype: Dtype,
    joints: usize,
    k: usize,
    frames: usize,
    header_len: usize,
    /// Frames converted to little-endian bytes (the first `filled`),
    /// written out about a megabyte at a time.
    bytes: Vec<u8>,
    filled: usize,
    /// The sidecar's fields, completed at the end.
    sidecar: serde_json::Map<String, serde_json::Value>,
}

/// How many bytes of frames [`NpySink`] gathers before writing them.
const NPY_WRITE: usize = 1 << 20;

fn npy_header(dtype: Dtype, frames: usize, joints: usize, k: usize) -> Vec<u8> {
    let descr = match dtype {
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
    };
    // The frame count has room for 20 digits, so the header never changes size.
    bvhkit_dataset::npy::header(descr, &[frames, joints, k])
}

/// The NPY array's sidecar: `walk.npy` → `walk.npy.json` (not `walk.json`,
/// which is what `-o walk.json` would write).
pub(crate) fn sidecar_path(npy: &Path) -> PathBuf {
    let mut s = npy.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

impl NpySink {
    fn new(out_path: &Path, layout: &Layout, meta: Meta, dtype: Dtype) -> Result<Self> {
        let path = match crate::io::destination(out_path)? {
            Dest::Replace(p) => Some(p),
            _ => None,
        };
        let mut out = crate::io::open_output(out_path)?;
        // A regular file's writeback starts as the array is written, so the
        // sync before it is put in place waits for the last megabytes only.
        let file = match out.atomic_file() {
            Some(a) => a.write_behind()?,
            None => WriteBehind::new(tempfile::tempfile().context("creating a temporary file")?),
        };
        let mut w = BufWriter::with_capacity(1 << 16, file);
        let header = npy_header(dtype, 0, layout.joints.len(), layout.components.len());
        w.write_all(&header)?;
        let mut sidecar = serde_json::Map::new();
        let mut put = |k: &str, v: serde_json::Value| {
            sidecar.insert(k.to_string(), v);
        };
        use serde_json::json;
        put("array", json!(path.as_deref().and_then(Path::file_name).map(|n| n.to_string_lossy())));
        put("source", json!(meta.source));
        for (k, v) in meta.settings {
            put(k, v);
        }
        put("dtype", json!(if dtype == Dtype::F32 { "float32" } else { "float64" }));
        put("axes", json!(["frame", "joint", "component"]));
        put("components", json!(layout.components));
        put("joints", json!(layout.joints));
        if let Some(l) = &layout.labels {
            put("orders", json!(l));
        }
        put("parents", json!(meta.parents));
        put("offsets", json!(meta.offsets));
        put("frame_time", json!(layout.frame_time));
        put("first_frame", json!(meta.first_frame));
        Ok(NpySink {
            out,
            w,
            path,
            dtype,
            joints: layout.joints.len(),
            k: layout.components.len(),
            frames: 0,
            header_len: header.len(),
            // Zeroed once (a fresh mapping), then overwritten.
            bytes: vec![0; 2 * NPY_WRITE],
            filled: 0,
            sidecar,
        })
    }
}

impl NpySink {
    /// Appends `values` as little-endian bytes of the element type, writing
    /// out about a megabyte at a time.
    fn push(&mut self, values: &[f64]) -> Result<()> {
        // Pieces that fit the write buffer's spare room.
        let per = NPY_WRITE / 8;
        for values in values.chunks(per) {
            let at = self.filled;
            match self.dtype {
                Dtype::F32 => {
                    self.filled += 4 * values.len();
                    for (b, &v) in self.bytes[at..self.filled].chunks_exact_mut(4).zip(values) {
                        b.copy_from_slice(&(v as f32).to_le_bytes());
                    }
                }
                Dtype::F64 => {
                    self.filled += 8 * values.len();
                    for (b, &v) in self.bytes[at..self.filled].chunks_exact_mut(8).zip(values) {
                        b.copy_from_slice(&v.to_le_bytes());
                    }
                }
            }
            if self.filled >= NPY_WRITE {
                self.w.write_all(&self.bytes[..self.filled])?;
                self.filled = 0;
            }
        }
        Ok(())
    }
}

impl Sink for NpySink {
    fn frame(&mut self, _index: usize, values: &[f64]) -> Result<()> {
        self.push(values)?;
        self.frames += 1;
        Ok(())
    }

    fn frames(&mut self, _first: usize, n: usize, values: &[f64]) -> Result<()> {
        self.push(values)?;
        self.frames += n;
        Ok(())
    }

    fn units(&mut self, g: UnitGuess) {
        self.sidecar.insert(
            "units".to_string(),
            serde_json::json!({
                "guess": g.units.to_string(),
                "metres_per_unit": g.units.metres_per_unit(),
                "size": if g.size.is_finite() { Some(g.size) } else { None },
                "how": "the median size of the frames read (the rest pose when there are none), assuming a person: the guess bvh render makes",
            }),
        );
    }

    fn finish(self: Box<Self>) -> Result<()> {
        let NpySink {
            mut out,
            mut w,
            path,
            dtype,
            joints,
            k,
            frames,
            header_len,
            bytes,
            filled,
            mut sidecar,
        } = *self;
        w.write_all(&bytes[..filled])?;
        let header = npy_header(dtype, frames, joints, k);
        debug_assert_eq!(header.len(), header_len);
        w.seek(SeekFrom::Start(0))?;
        w.write_all(&header)?;
        w.flush()?;
        let mut file = w.into_inner().map_err(|e| e.into_error())?.into_inner();
        if out.atomic_file().is_none() {
            // Not a regular file: copy the finished array out.
            file.seek(SeekFrom::Start(0))?;
            std::io::copy(&mut file, &mut out)?;
        }
        drop(file);
        sidecar.insert("shape".to_string(), serde_json::json!([frames, joints, k]));
        let text = serde_json::to_string_pretty(&serde_json::Value::Object(sidecar))?;
        // The sidecar is written first and its writeback started, so that
        // the array's sync commits the new blocks of both files in one
        // journal transaction (the sidecar's own sync then finds its blocks
        // committed and waits for its few bytes alone); then both are put in
        // place, the array first.
        let side = path
            .as_deref()
            .map(|p| crate::io::write_unsynced(&sidecar_path(p), |w| Ok(writeln!(w, "{text}")?)))
            .transpose()?;
        let array = out.stage()?;
        let side = side.map(crate::io::Output::stage).transpose()?.flatten();
        array.map_or(Ok(()), crate::io::Staged::publish)?;
        side.map_or(Ok(()), crate::io::Staged::publish)?;
        Ok(())
    }
}

/// The output extensions `bvh positions` and `bvh rotations` write.
const ACCEPTED: &str = ".csv, .json, .npy";

/// The format: `--format`, else from the extension of `out` (none, or
/// standard output: CSV). Any other extension is an error naming the
/// accepted ones, so `-o x.parquet` never writes CSV under that name.
fn pick_format(c: &Common, out: Option<&Path>, command: &str) -> Result<Format> {
    if let Some(f) = c.format {
        return Ok(f);
    }
    let Some(out) = out.filter(|o| o.as_os_str() != "-") else {
        return Ok(Format::Csv);
    };
    let Some(ext) = out.extension() else { return Ok(Format::Csv) };
    let ext = ext.to_string_lossy().to_ascii_lowercase();
    Ok(match ext.as_str() {
        "csv" => Format::Csv,
        "json" => Format::Json,
        "npy" => Format::Npy,
        "parquet" | "npz" | "glb" | "gltf" => bail!(
            "`.{ext}` is not an output of `bvh {command}`; accepted: {ACCEPTED} (or --format); \
             `bvh export` writes .glb and .gltf (.parquet and .npz are planned for it)"
        ),
        _ => bail!(
            "`.{}` is not an output of `bvh {command}`; accepted: {ACCEPTED} (or --format)",
            crate::text::escape(&ext)
        ),
    })
}

/// Opens the sink for `out` (standard output when `None`).
fn open_sink(
    c: &Common,
    out: Option<&Path>,
    format: Format,
    layout: Layout,
    meta: Meta,
) -> Result<Box<dyn Sink>> {
    let out = out.unwrap_or(Path::new("-"));
    if format == Format::Npy {
        if out.as_os_str() == "-" {
            bail!("--format npy needs an output file (-o OUT.npy)");
        }
        return Ok(Box::new(NpySink::new(out, &layout, meta, c.dtype)?));
    }
    let w = BufWriter::with_capacity(1 << 16, crate::io::open_output(out)?);
    Ok(match format {
        Format::Csv => Box::new(CsvSink::new(w, layout)?),
        _ => Box::new(JsonSink::new(w, layout, meta.first_frame)?),
    })
}

/// The joints to export, by display name, in file order.
fn select(skeleton: &Skeleton, wanted: &[String]) -> Result<(Vec<usize>, Vec<String>)> {
    let names = skeleton.display_names();
    if wanted.is_empty() {
        return Ok(((0..names.len()).collect(), names));
    }
    let mut idx = Vec::new();
    for w in wanted {
        match names.iter().position(|n| n == w) {
            Some(i) => idx.push(i),
            None => bail!("no joint named '{w}'; the joints are: {}", names.join(", ")),
        }
    }
    idx.sort_unstable();
    idx.dedup();
    let sel = idx.iter().map(|&i| names[i].clone()).collect();
    Ok((idx, sel))
}

/// Streams `input` frame by frame into `out` (standard output when `None`),
/// computing each frame in range with the [`FrameWork`] that `make_work`
/// builds for the skeleton and the selected joints; returns the warnings to
/// print.
fn stream<W: FrameWork>(
    c: &Common,
    input: &Input,
    out: Option<&Path>,
    command: &str,
    settings: Vec<(&'static str, serde_json::Value)>,
    make_layout: impl Fn(&Skeleton, &[usize], Vec<String>, f64) -> Layout,
    make_work: impl Fn(&Skeleton, &[usize]) -> W,
) -> Result<Vec<String>> {
    let inputs = std::slice::from_ref(input);
    if let Some(out) = out {
        crate::io::refuse_overwriting_input(out, inputs)?;
    }
    let format = pick_format(c, out, command)?;
    if let Some(out) = out
        && format == Format::Npy
    {
        crate::io::refuse_overwriting_input(&sidecar_path(out), inputs)?;
    }
    let mut opts = ReadOptions::new();
    opts.lenient(!c.strict);
    let located = |e: bvhkit::Error| anyhow::anyhow!(crate::io::located(input, &e));
    // A regular file is scanned in place (mapped, or read whole when
    // small); standard input and pipes are read a chunk at a time.
    let mut source = input.open_stream()?;
    // `--up auto` detects the up axis on frames spread over the clip. Into
    // a regular file, from a mapped one, they are read from their lines
    // alone and the export checks them as it reads every frame
    // ([`sampled_up`]); where it cannot confirm them ([`UNCONFIRMED`]), its
    // output is not put in place and the exact path below runs.
    if c.up == crate::clip::Up::Auto
        && let Streamed::Bytes(bytes) = &source
        && let Some(out) = out
        && let Some((run, rdr)) = sampled_up(c, &opts, bytes, input, out, format)?
    {
        // UNCONFIRMED, or failed: the exact path decides (and gives its
        // own error, in its own order: a bad frame before an unknown
        // `--joints` name).
        if let Ok(lines) = run.frames(rdr, settings.clone(), &make_layout, &make_work) {
            return Ok(lines);
        }
    }
    // Otherwise in a first pass that keeps only those frames
    // ([`detect_up_of`]); standard input and pipes, which cannot be read
    // twice, are read into memory first.
    let mut notes = Vec::new();
    let from = if c.up == crate::clip::Up::Auto {
        let bytes = match source {
            Streamed::Bytes(bytes) => bytes,
            Streamed::Reader(_) => input.read()?,
        };
        let found = detect_up_of(&opts, &bytes).map_err(located)?;
        source = Streamed::Bytes(bytes);
        let (from, note) = crate::clip::detected_source_up(found, &input.display());
        notes.extend(note);
        from
    } else {
        crate::clip::source_up_given(c.up)
    };
    let run = Run { c, input, out, format, from, notes, check: None };
    match source {
        Streamed::Bytes(bytes) => {
            let rdr = opts.frame_reader_slice(&bytes).map_err(located)?;
            run.frames(rdr, settings, make_layout, make_work)
        }
        Streamed::Reader(r) => {
            let rdr = opts.frame_reader(BufReader::with_capacity(1 << 16, r)).map_err(located)?;
            run.frames(rdr, settings, make_layout, make_work)
        }
    }
}

/// The export of `--up auto` from the mapped file `bytes` into the file
/// `out`, and the reader of its frames: the up axis detected on the frames
/// [`bvhkit::edit::axes::sampled_frames`] names, read from their own lines
/// ([`Sample::of_clip`]), with the [`SampleCheck`] its pass must confirm
/// before the output is put in place ([`UNCONFIRMED`] otherwise). `None`
/// where the exact path must decide at once: an output that cannot be
/// taken back (standard output, a FIFO, a device), a frame range that stops
/// the reading before the frames `Frames:` declares (their count would be
/// unknown), or lines that are visibly not the frames.
fn sampled_up<'a, 'b>(
    c: &'a Common,
    opts: &ReadOptions,
    bytes: &'b [u8],
    input: &'a Input,
    out: &'a Path,
    format: Format,
) -> Result<Option<(Run<'a>, bvhkit::FrameReader<bvhkit::SliceSource<'b>>)>> {
    // Refused destinations (a folder, a file with other links) are the
    // exact path's errors.
    if !crate::io::destination(out).is_ok_and(|d| matches!(d, Dest::Replace(_))) {
        return Ok(None);
    }
    let located = |e: bvhkit::Error| anyhow::anyhow!(crate::io::located(input, &e));
    let rdr = opts.frame_reader_slice(bytes).map_err(located)?;
    let declared = rdr.frames_declared();
    // The real pass stops once the range is past (`Run::frames`).
    if c.frames.is_some_and(|r| r.past(crate::clip::frame_count(declared))) {
        return Ok(None);
    }
    let skeleton = rdr.skeleton();
    let Some(sample) = Sample::of_clip(opts, bytes, input, skeleton.n_channels(), declared)? else {
        return Ok(None);
    };
    let (from, note) = crate::clip::detected_source_up(sample.up(skeleton), &input.display());
    let notes = note.into_iter().collect();
    let check = Some(sample.check(()));
    Ok(Some((Run { c, input, out: Some(out), format, from, notes, check }, rdr)))
}

/// Why an export of `--up auto` on sampled frames ([`sampled_up`]) was not
/// put in place: the frames its pass read were not those the sample read
/// from their lines, or not as many as `Frames:` declares, or the pass did
/// not reach the end; the exact path decides.
const UNCONFIRMED: GaveUp = GaveUp("the frames sampled for the up axis were not the file's");

/// [`bvhkit::edit::axes::detect_up`] of the text `bytes`, in one pass that
/// keeps only the sampled frames; the whole clip is parsed only when the
/// file holds another frame count than `Frames:` says.
fn detect_up_of(opts: &ReadOptions, bytes: &[u8]) -> Result<UpAxis, bvhkit::Error> {
    let mut rdr = opts.frame_reader_slice(bytes)?;
    let skeleton = rdr.skeleton().clone();
    let expected = crate::clip::frame_count(rdr.frames_declared());
    let mut frame = vec![0.0; skeleton.n_channels()];
    let found = crate::clip::detect_up_in_one_pass(&skeleton, expected, |each| {
        while rdr.read_frame(&mut frame)? {
            if each(&frame) {
                break;
            }
        }
        Ok::<(), bvhkit::Error>(())
    })?;
    match found {
        Some(found) => Ok(found),
        None => Ok(bvhkit::edit::axes::detect_up(&opts.parse(bytes)?.0)),
    }
}

/// What [`stream`] has decided before reading frames.
struct Run<'a> {
    c: &'a Common,
    input: &'a Input,
    out: Option<&'a Path>,
    format: Format,
    from: Option<bvhkit::edit::axes::SignedAxis>,
    notes: Vec<String>,
    /// What the pass must confirm of the frames `from` was detected on
    /// before the output is put in place ([`sampled_up`]).
    check: Option<SampleCheck<()>>,
}

/// The computation of one frame's values for `bvh positions` and `bvh
/// rotations`, built once the skeleton and the selected joints are known.
/// Frames whose values do not depend on the frames before them
/// ([`FrameWork::in_order`] false) are computed in pieces of a batch on
/// rayon's pool, each piece with a [`FrameWork::State`] of its own, into
/// disjoint parts of one buffer that is then written in order: the output
/// is the same whatever the thread count and the cut.
trait FrameWork: Sync {
    /// Buffers (and, for in-order work, what a frame leaves for the next).
    type State: Send;
    /// Whether a frame's values depend on the frames computed before it
    /// (then every frame is computed on the calling thread, in order, with
    /// one state kept from batch to batch).
    fn in_order(&self) -> bool;
    /// A fresh state.
    fn state(&self) -> Self::State;
    /// The values of `frame` (one per channel of the skeleton) for the
    /// selected joints, into `out` (joints × components); returns the
    /// frame's [`bvhkit::units::pose_size`] when it computed every joint's
    /// world position on the way, so that the NPY sidecar's unit guess does
    /// not run forward kinematics again for that frame.
    fn frame(&self, state: &mut Self::State, frame: &[f64], out: &mut [f64]) -> Option<f64>;
    /// [`FrameWork::frame`] for `n` frames one after the other, their
    /// values one after the other into `out`; returns whether it wrote each
    /// frame's size into `sizes` (when `sizes` is not empty).
    fn frames(
        &self,
        state: &mut Self::State,
        frames: &[f64],
        n: usize,
        out: &mut [f64],
        sizes: &mut [f64],
    ) -> bool {
        let (w_in, w_out) = (frames.len() / n.max(1), out.len() / n.max(1));
        let mut sized = true;
        for k in 0..n {
            let size = self.frame(
                state,
                &frames[k * w_in..(k + 1) * w_in],
                &mut out[k * w_out..(k + 1) * w_out],
            );
            match (size, sizes.get_mut(k)) {
                (Some(v), Some(s)) => *s = v,
                _ => sized = false,
            }
        }
        sized
    }
}

/// A piece of a batch: its frames, its parts of the value and size
/// buffers, and the state it computes with.
type Piece<'a, S> = (std::ops::Range<usize>, &'a mut [f64], &'a mut [f64], &'a mut PieceState<S>);

/// What a piece of a batch computes with: the work's state and, for the
/// unit guess of frames the work does not size, forward kinematics buffers.
struct PieceState<S> {
    work: S,
    fk: Option<(bvhkit::FkScratch, Vec<DVec3>)>,
}

/// Frames per piece of a batch, at least (a piece of the synthetic file's
/// 65 joints is then about a tenth of a millisecond of work or more).
const MIN_PIECE_FRAMES: usize = 32;

impl Run<'_> {
    /// Reads, computes and writes every frame of `rdr` ([`stream`]).
    fn frames<S: bvhkit::FrameSource + Send, W: FrameWork>(
        self,
        mut rdr: bvhkit::FrameReader<S>,
        settings: Vec<(&'static str, serde_json::Value)>,
        make_layout: impl FnOnce(&Skeleton, &[usize], Vec<String>, f64) -> Layout,
        make_work: impl FnOnce(&Skeleton, &[usize]) -> W,
    ) -> Result<Vec<String>> {
        let Run { c, input, out, format, from, notes, mut check } = self;
        // What a failed write says: the input and the output.
        let writing = || {
            let to = out.map_or_else(|| "standard output".to_string(), |o| o.display().to_string());
            format!("{}: writing {to}", input.display())
        };
        // The frames as read, converted to Y up per frame when asked (a
        // FrameMap streams; it keeps Euler angles continuous, so it maps
        // every frame in order on this thread).
        let mut to_y_up = from.map(|a| crate::clip::to_y_up(rdr.skeleton(), a));
        let skeleton = match &to_y_up {
            Some(map) => map.output_skeleton().clone(),
            None => rdr.skeleton().clone(),
        };
        let (sel, names) = select(&skeleton, &c.joints)?;
        let range = c.frames.unwrap_or("..".parse()?);
        let first = range.first();
        let layout = make_layout(&skeleton, &sel, names, rdr.frame_time());
        let width = sel.len() * layout.components.len();
        let mut meta = Meta::new(&skeleton, &sel, input, first);
        meta.settings = settings;
        // The up axis the output was converted from (null: the file's own axes).
        meta.settings.push(("up_converted_from", from.map(|a| a.name()).into()));
        let sink = open_sink(c, out, format, layout, meta)?;
        let work = make_work(&skeleton, &sel);
        // The NPY sidecar's unit guess: bvhkit::units' one guess, from the
        // size of every frame read (one number per frame is kept).
        let guess_units = format == Format::Npy;
        let fk = Kinematics::new(&skeleton, c.position_channels.into());
        let new_state = || PieceState {
            work: work.state(),
            fk: guess_units.then(|| (fk.scratch(), vec![DVec3::ZERO; skeleton.len()])),
        };
        let mut states: Vec<PieceState<W::State>> = Vec::new();
        let mut sizes = Vec::new();
        let (n_raw, n_out) = (rdr.skeleton().n_channels(), skeleton.n_channels());
        let mut mapped = Vec::new();
        let mut batch_sizes = Vec::new();
        let mut f = 0usize;
        let mut written = 0usize;
        // Whether the reading went on to the end (no frame range stopped it).
        let mut ended = true;
        // The next batch of frames is parsed while the batch before is
        // computed, in pieces, both on rayon's pool (`read_batches`), and a
        // thread of its own writes the batch before that: batches of values
        // in order, their buffers sent back to be filled again.
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<(usize, usize, Vec<f64>)>(2);
        let (free_tx, free_rx) = std::sync::mpsc::channel::<Vec<f64>>();
        // Shared with the pool's workers, where the batches are computed.
        let free_rx = std::sync::Mutex::new(free_rx);
        let (read, mut sink) = std::thread::scope(|scope| -> Result<_> {
            let writer = scope.spawn(move || -> Result<Box<dyn Sink>> {
                let mut sink = sink;
                for (first, n, values) in full_rx {
                    sink.frames(first, n, &values)?;
                    let _ = free_tx.send(values);
                }
                Ok(sink)
            });
            let read = crate::io::read_batches(&mut rdr, |frames, batch| {
                if let Some(check) = check.as_mut() {
                    check.batch(frames, batch);
                }
                // The frames of this batch before the end of the range.
                let n = (0..frames).take_while(|&k| !range.past(f + k)).count();
                let frames_in: &[f64] = match to_y_up.as_mut() {
                    Some(map) => {
                        mapped.resize(n * n_out, 0.0);
                        for k in 0..n {
                            map.map(
                                &batch[k * n_raw..(k + 1) * n_raw],
                                &mut mapped[k * n_out..(k + 1) * n_out],
                            );
                        }
                        &mapped
                    }
                    None => &batch[..n * n_raw],
                };
                // The frames in range: batch frames lo..n (none of them is past it).
                let (lo, hi) = (first.saturating_sub(f).min(n), n);
                // A buffer back from the writer (or a new one) holds the
                // values; every value in use is overwritten. The sizes'
                // buffer only grows.
                let n_values = (hi - lo) * width;
                let n_sizes = if guess_units { n } else { 0 };
                let mut values = crate::io::take_free(&free_rx);
                values.resize(n_values, 0.0);
                if batch_sizes.len() < n_sizes {
                    batch_sizes.resize(n_sizes, 0.0);
                }
                let pieces = if work.in_order() {
                    1
                } else {
                    (rayon::current_num_threads() * 4).min(n.div_ceil(MIN_PIECE_FRAMES)).max(1)
                };
                while states.len() < pieces {
                    states.push(new_state());
                }
                // Cut frames 0..n into pieces with their parts of the buffers.
                let per = n.div_ceil(pieces).max(1);
                let mut parts = Vec::with_capacity(pieces);
                let (mut vals, mut szs): (&mut [f64], &mut [f64]) =
                    (&mut values[..], &mut batch_sizes[..n_sizes]);
                for (p, state) in states.iter_mut().enumerate().take(pieces) {
                    let (a, b) = ((p * per).min(n), ((p + 1) * per).min(n));
                    let in_range = b.clamp(lo, hi) - a.clamp(lo, hi);
                    let (v, rest) = std::mem::take(&mut vals).split_at_mut(in_range * width);
                    vals = rest;
                    let (s, rest) =
                        std::mem::take(&mut szs).split_at_mut(if guess_units { b - a } else { 0 });
                    szs = rest;
                    parts.push((a..b, v, s, state));
                }
                let compute = |(frames, vals, szs, state): &mut Piece<'_, W::State>| {
                    // The piece's frames in range, then the sizes still missing.
                    let (a, b) = (frames.start, frames.end);
                    let (ra, rb) = (a.clamp(lo, hi), b.clamp(lo, hi));
                    let sized = rb > ra
                        && work.frames(
                            &mut state.work,
                            &frames_in[ra * n_out..rb * n_out],
                            rb - ra,
                            vals,
                            if guess_units { &mut szs[ra - a..rb - a] } else { &mut [] },
                        );
                    if guess_units {
                        for k in a..b {
                            if sized && (ra..rb).contains(&k) {
                                continue;
                            }
                            let (scratch, pose) = state.fk.as_mut().expect("made for NPY");
                            fk.positions_with(
                                &frames_in[k * n_out..(k + 1) * n_out],
                                scratch,
                                pose,
                            );
                            szs[k - a] = bvhkit::units::pose_size(pose);
                        }
                    }
                };
                if pieces == 1 {
                    parts.iter_mut().for_each(compute);
                } else {
                    use rayon::prelude::*;
                    parts.par_iter_mut().for_each(compute);
                }
                if hi > lo {
                    if full_tx.send((f + lo, hi - lo, values)).is_err() {
                        bail!("the writing thread stopped");
                    }
                    written += hi - lo;
                }
                sizes.extend_from_slice(&batch_sizes[..n_sizes]);
                f += n;
                ended = !range.past(f);
                Ok(ended)
            });
            drop(full_tx);
            let sink = writer.join().map_err(|_| anyhow::anyhow!("the writing thread panicked"))?;
            // The writer's own error first (a full disk stops the reading too).
            let sink = sink.with_context(writing)?;
            Ok((read?, sink))
        })?;
        // Sampled frames the pass did not confirm, or a reading that did not
        // reach the end (a bad frame, a frame range): the output, dropped,
        // is not put in place.
        if check.is_some_and(|ch| read.is_err() || !ch.holds(ended)) {
            return Err(UNCONFIRMED.into());
        }
        read.map_err(|e| anyhow::anyhow!(crate::io::located(input, &e)))?;
        if guess_units {
            sink.units(
                if sizes.is_empty() {
                    let rest = bvhkit::units::rest_pose(&skeleton, c.position_channels.into());
                    UnitGuess::of_positions(skeleton.len(), &rest)
                } else {
                    UnitGuess::of_pose_sizes(sizes)
                }
                .named(&bvhkit::units::Limbs::of(&skeleton)),
            );
        }
        sink.finish().with_context(writing)?;
        let mut lines: Vec<String> = rdr
            .warnings()
            .iter()
            .map(|w| crate::text::escape(&located_warning(input, w)).into_owned())
            .chain(notes.iter().map(|n| crate::text::escape(n).into_owned()))
            .collect();
        if written == 0 && f > 0 {
            lines.push(
                crate::text::escape(&format!(
                    "bvh: warning: {}: the frame range selects none of the {f} frames read",
                    input.display()
                ))
                .into_owned(),
            );
        }
        Ok(lines)
    }
}

/// The extension of `format`'s files.
fn extension(format: Format) -> &'static str {
    match format {
        Format::Csv => "csv",
        Format::Json => "json",
        Format::Npy => "npy",
    }
}

/// Runs `one(input, output)` for every input: one input (and `-o` not a
/// folder) as given; several into `-o OUTDIR/`, one file per input named
/// after it (the structure under a walked folder kept, the extension that of
/// `--format`, CSV by default), in parallel with a progress bar.
fn export_all(
    c: &Common,
    one: impl Fn(&Input, Option<&Path>) -> Result<Vec<String>> + Sync + Send,
) -> Result<ExitCode> {
    let inputs = crate::io::expand_rel(&c.files)?;
    let to_folder = c.output.as_deref().is_some_and(crate::io::names_folder);
    if inputs.len() == 1 && !to_folder {
        for l in one(&inputs[0].0, c.output.as_deref())? {
            eprintln!("{l}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let dir = match c.output.as_deref() {
        Some(o) if o.as_os_str() != "-" => o,
        _ => bail!(
            "several inputs need -o OUTDIR/, a folder that gets one output file per input \
             (--format chooses csv, json or npy)"
        ),
    };
    let ext = extension(c.format.unwrap_or(Format::Csv));
    let mut pairs: Vec<(&Input, PathBuf)> = Vec::with_capacity(inputs.len());
    for (input, rel) in &inputs {
        if *input == Input::Stdin {
            bail!("standard input (-) cannot be one of several inputs to an output folder");
        }
        pairs.push((input, dir.join(rel).with_extension(ext)));
    }
    // No two inputs on one output, and no output that is an input.
    crate::io::check_targets(pairs.iter().map(|(i, t)| (*i, t.as_path())))?;
    let targets: HashMap<&Input, PathBuf> = pairs.into_iter().collect();
    let list: Vec<Input> = inputs.iter().map(|(i, _)| i.clone()).collect();
    let results = crate::io::par_map(&list, c.threads, |input| -> Result<Vec<String>> {
        let t = &targets[input];
        if let Some(d) = t.parent() {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        one(input, Some(t)).with_context(|| format!("{} → {}", input.display(), t.display()))
    })?;
    Ok(crate::io::report(results))
}

pub(crate) fn run_positions(a: PositionsArgs) -> Result<ExitCode> {
    let c = &a.common;
    export_all(c, |input, out| positions_one(c, input, out))
}

/// `bvh positions`' frame: every joint's world position, the selected ones
/// written.
struct Positions {
    fk: Kinematics,
    sel: Vec<usize>,
}

impl FrameWork for Positions {
    /// Buffers of one frame, and of runs of frames on lanes.
    type State = (bvhkit::FkScratch, Vec<DVec3>, bvhkit::FkLanes, Vec<DVec3>);

    fn in_order(&self) -> bool {
        false
    }

    fn state(&self) -> Self::State {
        let n = self.fk.len();
        (self.fk.scratch(), vec![DVec3::ZERO; n], self.fk.lanes_scratch(), Vec::new())
    }

    fn frame(
        &self,
        (scratch, pos, ..): &mut Self::State,
        frame: &[f64],
        out: &mut [f64],
    ) -> Option<f64> {
        self.fk.positions_with(frame, scratch, pos);
        self.select(pos, out)
    }

    /// Runs of frames on SIMD lanes ([`Kinematics::positions_many`], the
    /// same bits as frame by frame), [`POSITIONS_RUN`] frames at a time.
    fn frames(
        &self,
        (.., lanes, pos): &mut Self::State,
        frames: &[f64],
        n: usize,
        out: &mut [f64],
        sizes: &mut [f64],
    ) -> bool {
        let (joints, w_in, w_out) = (self.fk.len(), frames.len() / n.max(1), self.sel.len() * 3);
        for start in (0..n).step_by(POSITIONS_RUN) {
            let m = POSITIONS_RUN.min(n - start);
            pos.resize(m * joints, DVec3::ZERO);
            self.fk.positions_many(&frames[start * w_in..(start + m) * w_in], lanes, pos);
            for k in 0..m {
                let size = self.select(
                    &pos[k * joints..(k + 1) * joints],
                    &mut out[(start + k) * w_out..(start + k + 1) * w_out],
                );
                if let (Some(s), Some(v)) = (sizes.get_mut(start + k), size) {
                    *s = v;
                }
            }
        }
        true
    }
}

/// Frames per call of [`Kinematics::positions_many`] in `bvh positions`
/// (their positions stay in the cache until they are copied out).
const POSITIONS_RUN: usize = 64;

impl Positions {
    /// The selected joints' positions of one frame into `out`, and the
    /// frame's size.
    fn select(&self, pos: &[DVec3], out: &mut [f64]) -> Option<f64> {
        for (o, &i) in out.chunks_exact_mut(3).zip(&self.sel) {
            o.copy_from_slice(&pos[i].to_array());
        }
        // Every joint's position, as the unit guess computes it (same
        // skeleton, same position-channel rule).
        Some(bvhkit::units::pose_size(pos))
    }
}

fn positions_one(c: &Common, input: &Input, out: Option<&Path>) -> Result<Vec<String>> {
    let settings = vec![
        ("command", "positions".into()),
        ("position_channels", format!("{:?}", c.position_channels).to_lowercase().into()),
    ];
    stream(
        c,
        input,
        out,
        "positions",
        settings,
        |_, _, names, frame_time| Layout {
            joints: names,
            labels: None,
            components: vec!["x", "y", "z"],
            frame_time,
        },
        |skel, sel| Positions {
            fk: Kinematics::new(skel, c.position_channels.into()),
            sel: sel.to_vec(),
        },
    )
}

pub(crate) fn run_rotations(a: RotationsArgs) -> Result<ExitCode> {
    export_all(&a.common, |input, out| rotations_one(&a, input, out))
}

/// `bvh rotations`' frame: local or world rotations of the selected joints
/// in one representation.
struct Rotations {
    fk: Kinematics,
    skeleton: Skeleton,
    sel: Vec<usize>,
    /// Each joint's Euler order.
    orders: Vec<RotationOrder>,
    space: Space,
    repr: RotationRepr,
    continuous: bool,
}

/// [`Rotations`]' buffers, and each joint's previous output (`--continuous`).
struct RotationsState {
    scratch: bvhkit::FkScratch,
    xf: Vec<DAffine3>,
    prev: Vec<f64>,
    have_prev: bool,
}

impl FrameWork for Rotations {
    type State = RotationsState;

    /// `--continuous` chooses each frame's angles and signs near the
    /// previous frame's.
    fn in_order(&self) -> bool {
        self.continuous
    }

    fn state(&self) -> RotationsState {
        RotationsState {
            scratch: self.fk.scratch(),
            xf: vec![DAffine3::IDENTITY; self.fk.len()],
            prev: vec![0.0; self.fk.len() * self.repr.width()],
            have_prev: false,
        }
    }

    fn frame(&self, st: &mut RotationsState, frame: &[f64], out: &mut [f64]) -> Option<f64> {
        let width = self.repr.width();
        // The frame's sines and cosines in one batch.
        match self.space {
            Space::Local => self.fk.local_with(frame, &mut st.scratch, &mut st.xf),
            Space::World => self.fk.world_with(frame, &mut st.scratch, &mut st.xf),
        }
        for (o, &i) in out.chunks_exact_mut(width).zip(&self.sel) {
            let j = &self.skeleton.joints()[i];
            let order = self.orders[i];
            // Local angles in the joint's own order are the file's values, exactly.
            let exact =
                (self.space == Space::Local).then(|| j.euler_angles(frame, order)).flatten();
            let slot = &mut st.prev[i * width..(i + 1) * width];
            let mut value = [0.0; 9];
            let previous = (self.continuous && st.have_prev).then_some(&*slot);
            mat3_to_repr(st.xf[i].matrix3, self.repr, order, exact, previous, &mut value);
            slot.copy_from_slice(&value[..width]);
            o.copy_from_slice(&value[..width]);
        }
        st.have_prev = true;
        None
    }
}

fn rotations_one(a: &RotationsArgs, input: &Input, out: Option<&Path>) -> Result<Vec<String>> {
    let c = &a.common;
    let (repr, space, continuous, fixed_order) = (a.repr, a.space, a.continuous, a.order);
    let rrepr = RotationRepr::from(repr);
    let name = |v: &dyn std::fmt::Debug| format!("{v:?}").to_lowercase();
    let settings = vec![
        ("command", "rotations".into()),
        ("space", name(&space).into()),
        (
            "repr",
            a.repr
                .to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string())
                .into(),
        ),
        ("continuous", continuous.into()),
        ("position_channels", name(&c.position_channels).into()),
    ];
    let order_of =
        |j: &bvhkit::Joint| fixed_order.or(j.rotation_order()).unwrap_or(RotationOrder::ZXY);
    stream(
        c,
        input,
        out,
        "rotations",
        settings,
        |skel, sel, names, frame_time| {
            let labels = (repr == Repr::Euler).then(|| {
                sel.iter().map(|&i| order_of(&skel.joints()[i]).name().to_string()).collect()
            });
            let components = rrepr.components().to_vec();
            Layout { joints: names, labels, components, frame_time }
        },
        |skel, sel| Rotations {
            fk: Kinematics::new(skel, c.position_channels.into()),
            skeleton: skel.clone(),
            sel: sel.to_vec(),
            orders: skel.joints().iter().map(order_of).collect(),
            space,
            repr: rrepr,
            continuous,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_aligned_and_fixed_size() {
        for (f, j) in [(0, 3), (1, 1), (123456789, 65), (usize::MAX, 1)] {
            let h = npy_header(Dtype::F32, f, j, 3);
            assert_eq!(h.len() % 64, 0);
            assert_eq!(h.len(), npy_header(Dtype::F32, 0, j, 3).len());
            assert_eq!(*h.last().unwrap(), b'\n');
            let text = String::from_utf8_lossy(&h[10..]);
            assert!(text.contains(&format!("'shape': ({f}, {j}, 3)")), "{text}");
        }
    }

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("Hips"), "Hips");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
