//! Where `bvh positions` and `bvh rotations` write their frames, a format
//! each: CSV, JSON and NPY (its frame count patched in at the end, its JSON
//! sidecar `OUT.npy.json`), on a writing thread of their own; the format
//! chosen from `--format` or the output's extension.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Where exported frames go (on a writing thread of their own).
pub(super) trait Sink: Send {
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

pub(super) struct Layout {
    pub(super) joints: Vec<String>,
    /// Extra per-joint label column (the Euler order), if any.
    pub(super) labels: Option<Vec<String>>,
    pub(super) components: Vec<&'static str>,
    pub(super) frame_time: f64,
}

/// What the NPY sidecar says beyond the layout.
pub(super) struct Meta {
    /// The command's settings, as `"key": value` entries.
    pub(super) settings: Vec<(&'static str, serde_json::Value)>,
    /// Each exported joint's parent, as an index into the exported joints
    /// (its nearest exported ancestor), -1 for none.
    pub(super) parents: Vec<i64>,
    pub(super) offsets: Vec<[f64; 3]>,
    pub(super) source: String,
    pub(super) first_frame: usize,
}

impl Meta {
    pub(super) fn new(
        skeleton: &Skeleton,
        sel: &[usize],
        input: &Input,
        first_frame: usize,
    ) -> Meta {
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

pub(super) struct CsvSink<W: Write> {
    pub(super) w: W,
    pub(super) layout: Layout,
    pub(super) buf: Vec<u8>,
}

pub(super) fn push_num(buf: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        let mut b = ryu::Buffer::new();
        let s = b.format_finite(v);
        buf.extend_from_slice(s.strip_suffix(".0").unwrap_or(s).as_bytes());
    } else {
        buf.extend_from_slice(b"nan");
    }
}

pub(super) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl<W: Write> CsvSink<W> {
    /// The header waits in the buffer with the first rows: a reading that
    /// fails before any row is written (a `--frames` range past the end)
    /// leaves standard output empty, not a header alone.
    pub(super) fn new(w: W, layout: Layout) -> Result<Self> {
        let mut buf = Vec::with_capacity(1 << 16);
        write!(buf, "frame,joint")?;
        if layout.labels.is_some() {
            write!(buf, ",order")?;
        }
        for c in &layout.components {
            write!(buf, ",{c}")?;
        }
        writeln!(buf)?;
        let layout =
            Layout { joints: layout.joints.iter().map(|j| csv_field(j)).collect(), ..layout };
        Ok(CsvSink { w, layout, buf })
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

pub(super) struct JsonSink<W: Write> {
    pub(super) w: W,
    pub(super) k: usize,
    pub(super) first: bool,
    /// The object's opening, written with the first frame or at the end
    /// (as the CSV header: nothing reaches the output of a reading that
    /// fails before its first frame).
    pub(super) head: Vec<u8>,
}

impl<W: Write> JsonSink<W> {
    pub(super) fn new(w: W, layout: Layout, first_frame: usize) -> Result<Self> {
        let mut head = Vec::new();
        let names = serde_json::to_string(&layout.joints)?;
        write!(head, "{{\"joints\":{}", crate::text::escape_json(&names))?;
        if let Some(l) = &layout.labels {
            write!(head, ",\"orders\":{}", serde_json::to_string(l)?)?;
        }
        write!(
            head,
            ",\"components\":{},\"frame_time\":{},\"first_frame\":{first_frame},\"frames\":[",
            serde_json::to_string(&layout.components)?,
            serde_json::to_string(&layout.frame_time)?
        )?;
        Ok(JsonSink { w, k: layout.components.len(), first: true, head })
    }
}

impl<W: Done> Sink for JsonSink<W> {
    fn frame(&mut self, _index: usize, values: &[f64]) -> Result<()> {
        let mut buf = std::mem::take(&mut self.head);
        buf.reserve(values.len() * 12);
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
        self.w.write_all(&self.head)?;
        writeln!(self.w, "]}}")?;
        let JsonSink { w, .. } = *self;
        w.done()
    }
}

/// A writer that can be completed: flushed and, for a regular file, put in
/// place of its target.
pub(super) trait Done: Write + Send {
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
pub(super) struct NpySink {
    pub(super) out: Output,
    pub(super) w: BufWriter<WriteBehind>,
    /// Where the array goes when it is a regular file (the sidecar goes beside it).
    pub(super) path: Option<PathBuf>,
    pub(super) dtype: Dtype,
    pub(super) joints: usize,
    pub(super) k: usize,
    pub(super) frames: usize,
    pub(super) header_len: usize,
    /// Frames converted to little-endian bytes (the first `filled`),
    /// written out about a megabyte at a time.
    pub(super) bytes: Vec<u8>,
    pub(super) filled: usize,
    /// The sidecar's fields, completed at the end.
    pub(super) sidecar: serde_json::Map<String, serde_json::Value>,
}

/// How many bytes of frames [`NpySink`] gathers before writing them.
pub(super) const NPY_WRITE: usize = 1 << 20;

pub(super) fn npy_header(dtype: Dtype, frames: usize, joints: usize, k: usize) -> Vec<u8> {
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
    pub(super) fn new(out_path: &Path, layout: &Layout, meta: Meta, dtype: Dtype) -> Result<Self> {
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
    pub(super) fn push(&mut self, values: &[f64]) -> Result<()> {
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
pub(super) const ACCEPTED: &str = ".csv, .json, .npy";

/// The format: `--format`, else from the extension of `out` (none, or
/// standard output: CSV). Any other extension is an error naming the
/// accepted ones, so `-o x.parquet` never writes CSV under that name.
pub(super) fn pick_format(c: &Common, out: Option<&Path>, command: &str) -> Result<Format> {
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
pub(super) fn open_sink(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Dtype;

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
