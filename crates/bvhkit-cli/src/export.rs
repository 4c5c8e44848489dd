//! `bvh positions` and `bvh rotations`: per-joint, per-frame arrays, streamed
//! frame by frame so memory stays constant whatever the file length.

use std::fs::File;
use std::io::{BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use bvhkit::glam::{DAffine3, DVec3};
use bvhkit::rotation::{RotationOrder, RotationRepr, mat3_to_repr};
use bvhkit::{Kinematics, ReadOptions, Skeleton};
use clap::ValueEnum;

use crate::PosMode;
use crate::io::{Input, located_warning};
use crate::range::FrameRange;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// One row per joint per frame: `frame,joint,<components>`.
    Csv,
    /// One JSON object with joint names and a frames × joints × components array.
    Json,
    /// A NumPy array [frames, joints, components] plus a `.joints.txt` names file.
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
    /// The BVH file; `-` reads standard input.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Output file (default: standard output; NPY needs a file).
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
    /// Keep Euler angles and quaternion signs continuous from frame to frame (no ±180° or sign flips).
    #[arg(long)]
    continuous: bool,
}

fn parse_order(s: &str) -> Result<RotationOrder, String> {
    RotationOrder::from_name(s)
        .ok_or_else(|| format!("'{s}' is not a rotation order (XYZ, XZY, YXZ, YZX, ZXY, ZYX)"))
}

/// Where exported frames go.
trait Sink {
    fn frame(&mut self, index: usize, values: &[f64]) -> Result<()>;
    fn finish(self: Box<Self>) -> Result<()>;
}

struct Layout {
    joints: Vec<String>,
    /// Extra per-joint label column (the Euler order), if any.
    labels: Option<Vec<String>>,
    components: Vec<&'static str>,
    frame_time: f64,
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

impl<W: Write> Sink for CsvSink<W> {
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
        self.w.flush()?;
        Ok(())
    }
}

struct JsonSink<W: Write> {
    w: W,
    k: usize,
    first: bool,
}

impl<W: Write> JsonSink<W> {
    fn new(mut w: W, layout: Layout, first_frame: usize) -> Result<Self> {
        write!(w, "{{\"joints\":{}", serde_json::to_string(&layout.joints)?)?;
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

impl<W: Write> Sink for JsonSink<W> {
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
        self.w.flush()?;
        Ok(())
    }
}

/// NPY v1.0 with the frame count patched in at the end (the stream's length
/// is not trusted from `Frames:`).
struct NpySink {
    tmp: tempfile::NamedTempFile,
    w: BufWriter<File>,
    out: PathBuf,
    dtype: Dtype,
    joints: usize,
    k: usize,
    frames: usize,
    header_len: usize,
    /// The names file's text, written when the array is complete.
    names: String,
}

fn npy_header(dtype: Dtype, frames: usize, joints: usize, k: usize) -> Vec<u8> {
    let descr = match dtype {
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
    };
    // The frame count is padded to 20 digits' room so the header never changes size.
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': False, 'shape': ({frames}, {joints}, {k}), }}"
    );
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    let unpadded = 10 + dict.len() + (20 - frames.to_string().len()) + 1;
    let total = unpadded.div_ceil(64) * 64;
    let hlen = (total - 10) as u16;
    h.extend_from_slice(&hlen.to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h.resize(total - 1, b' ');
    h.push(b'\n');
    h
}

impl NpySink {
    fn new(out: &Path, layout: &Layout, dtype: Dtype) -> Result<Self> {
        let dir = match out.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let tmp = crate::io::temp_in(dir)?;
        let mut w = BufWriter::new(tmp.reopen()?);
        let header = npy_header(dtype, 0, layout.joints.len(), layout.components.len());
        w.write_all(&header)?;
        let mut names = String::new();
        for (i, j) in layout.joints.iter().enumerate() {
            names.push_str(j);
            if let Some(l) = &layout.labels {
                names.push('\t');
                names.push_str(&l[i]);
            }
            names.push('\n');
        }
        Ok(NpySink {
            tmp,
            w,
            out: out.to_path_buf(),
            dtype,
            joints: layout.joints.len(),
            k: layout.components.len(),
            frames: 0,
            header_len: header.len(),
            names,
        })
    }
}

impl Sink for NpySink {
    fn frame(&mut self, _index: usize, values: &[f64]) -> Result<()> {
        for &v in values {
            match self.dtype {
                Dtype::F32 => self.w.write_all(&(v as f32).to_le_bytes())?,
                Dtype::F64 => self.w.write_all(&v.to_le_bytes())?,
            }
        }
        self.frames += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        let header = npy_header(self.dtype, self.frames, self.joints, self.k);
        debug_assert_eq!(header.len(), self.header_len);
        self.w.seek(SeekFrom::Start(0))?;
        self.w.write_all(&header)?;
        self.w.flush()?;
        self.w.get_ref().sync_all()?;
        self.tmp
            .persist(&self.out)
            .map_err(|e| e.error)
            .with_context(|| format!("writing {}", self.out.display()))?;
        // Names next to the array: `out.joints.txt`, one per line.
        let names_path = self.out.with_extension("joints.txt");
        crate::io::write_atomic(&names_path, |w| Ok(w.write_all(self.names.as_bytes())?))?;
        Ok(())
    }
}

fn pick_format(c: &Common) -> Format {
    c.format.unwrap_or_else(|| {
        match c
            .output
            .as_ref()
            .and_then(|o| o.extension())
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
        {
            Some(e) if e == "json" => Format::Json,
            Some(e) if e == "npy" => Format::Npy,
            _ => Format::Csv,
        }
    })
}

/// Opens the sink; CSV and JSON to a file go through a temporary file too.
fn open_sink(
    c: &Common,
    layout: Layout,
    first_frame: usize,
) -> Result<(Box<dyn Sink>, Option<tempfile::NamedTempFile>)> {
    let format = pick_format(c);
    let out = c.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    if format == Format::Npy {
        if out.as_os_str() == "-" {
            bail!("--format npy needs an output file (-o OUT.npy)");
        }
        return Ok((Box::new(NpySink::new(&out, &layout, c.dtype)?), None));
    }
    let (w, tmp): (Box<dyn Write>, _) = if out.as_os_str() == "-" {
        (Box::new(BufWriter::new(std::io::stdout())), None)
    } else {
        let dir = match out.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let tmp = crate::io::temp_in(&dir)?;
        (Box::new(BufWriter::new(tmp.reopen()?)), Some(tmp))
    };
    let sink: Box<dyn Sink> = match format {
        Format::Csv => Box::new(CsvSink::new(w, layout)?),
        _ => Box::new(JsonSink::new(w, layout, first_frame)?),
    };
    Ok((sink, tmp))
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

/// Streams `input` frame by frame, calling `per_frame(frame_values, out)` for
/// the frames in range.
fn stream(
    c: &Common,
    make_layout: impl FnOnce(&Skeleton, &[usize], Vec<String>, f64) -> Layout,
    mut per_frame: impl FnMut(&Skeleton, &[f64], &[usize], &mut Vec<f64>),
) -> Result<ExitCode> {
    let input = if c.file.as_os_str() == "-" { Input::Stdin } else { Input::File(c.file.clone()) };
    let reader = BufReader::with_capacity(1 << 16, input.open()?);
    let mut rdr = ReadOptions::new()
        .lenient(!c.strict)
        .frame_reader(reader)
        .map_err(|e| anyhow::anyhow!(crate::io::located(&input, &e)))?;
    let skeleton = rdr.skeleton().clone();
    let (sel, names) = select(&skeleton, &c.joints)?;
    let range = c.frames.unwrap_or("..".parse()?);
    let first = range.resolve(usize::MAX)?.start;
    let layout = make_layout(&skeleton, &sel, names, rdr.frame_time());
    let (mut sink, tmp) = open_sink(c, layout, first)?;
    let mut frame = vec![0.0; skeleton.n_channels()];
    let mut values = Vec::new();
    let mut f = 0usize;
    let mut written = 0usize;
    loop {
        if range.past(f) {
            break;
        }
        let more = rdr
            .read_frame(&mut frame)
            .map_err(|e| anyhow::anyhow!(crate::io::located(&input, &e)))?;
        if !more {
            break;
        }
        if range.contains(f) {
            values.clear();
            per_frame(&skeleton, &frame, &sel, &mut values);
            sink.frame(f, &values)?;
            written += 1;
        }
        f += 1;
    }
    sink.finish()?;
    if let (Some(tmp), Some(out)) = (tmp, &c.output) {
        tmp.as_file().sync_all()?;
        tmp.persist(out)
            .map_err(|e| e.error)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    for w in rdr.warnings() {
        eprintln!("{}", located_warning(&input, w));
    }
    if written == 0 && f > 0 {
        eprintln!("bvh: warning: the frame range selects none of the {f} frames read");
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_positions(a: PositionsArgs) -> Result<ExitCode> {
    let c = &a.common;
    let mut fk: Option<Kinematics> = None;
    let mut scratch = None;
    let mut pos = Vec::new();
    stream(
        c,
        |_, _, names, frame_time| Layout {
            joints: names,
            labels: None,
            components: vec!["x", "y", "z"],
            frame_time,
        },
        |skel, frame, sel, out| {
            let fk = fk.get_or_insert_with(|| Kinematics::new(skel, c.position_channels.into()));
            let scratch = scratch.get_or_insert_with(|| fk.scratch());
            pos.resize(fk.len(), DVec3::ZERO);
            fk.positions_with(frame, scratch, &mut pos);
            for &i in sel {
                out.extend_from_slice(&pos[i].to_array());
            }
        },
    )
}

pub(crate) fn run_rotations(a: RotationsArgs) -> Result<ExitCode> {
    let c = &a.common;
    let mut fk: Option<Kinematics> = None;
    let mut xf: Vec<DAffine3> = Vec::new();
    let mut orders: Vec<RotationOrder> = Vec::new();
    // Each joint's previous output, for --continuous.
    let mut prev: Vec<f64> = Vec::new();
    let mut have_prev = false;
    let (repr, space, continuous, fixed_order) = (a.repr, a.space, a.continuous, a.order);
    let rrepr = RotationRepr::from(repr);
    let width = rrepr.width();
    stream(
        c,
        |skel, sel, names, frame_time| {
            let labels = (repr == Repr::Euler).then(|| {
                sel.iter()
                    .map(|&i| {
                        fixed_order
                            .or(skel.joints()[i].rotation_order())
                            .unwrap_or(RotationOrder::ZXY)
                            .name()
                            .to_string()
                    })
                    .collect()
            });
            let components = rrepr.components().to_vec();
            Layout { joints: names, labels, components, frame_time }
        },
        |skel, frame, sel, out| {
            let fk = fk.get_or_insert_with(|| Kinematics::new(skel, c.position_channels.into()));
            if xf.len() != fk.len() {
                xf.resize(fk.len(), DAffine3::IDENTITY);
                orders = skel
                    .joints()
                    .iter()
                    .map(|j| fixed_order.or(j.rotation_order()).unwrap_or(RotationOrder::ZXY))
                    .collect();
                prev = vec![0.0; fk.len() * width];
            }
            match space {
                Space::Local => fk.local(frame, &mut xf),
                Space::World => fk.world(frame, &mut xf),
            }
            for &i in sel {
                let j = &skel.joints()[i];
                // Local angles in the joint's own order are the file's values, exactly.
                let exact =
                    (space == Space::Local).then(|| j.euler_angles(frame, orders[i])).flatten();
                let slot = &mut prev[i * width..(i + 1) * width];
                let mut value = [0.0; 9];
                let previous = (continuous && have_prev).then_some(&*slot);
                mat3_to_repr(xf[i].matrix3, rrepr, orders[i], exact, previous, &mut value);
                slot.copy_from_slice(&value[..width]);
                out.extend_from_slice(&value[..width]);
            }
            have_prev = true;
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
