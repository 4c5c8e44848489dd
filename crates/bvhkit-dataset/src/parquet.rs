//! Parquet output: the motion table (long or wide), one row group per
//! clip, and the skeleton table.
//!
//! # Implementation notes
//!
//! `ParquetWriter` (one row group per clip, split between frames into row
//! groups of at most `ROW_GROUP_ROWS` rows when longer; `write_bvh` computes
//! the long table's features a row group at a time with `features::Kernel` into
//! two sets of column buffers kept from clip to clip, a group computed and
//! encoded on the pool, all but its number pages' bodies (`long::prepare`, one
//! task per column: statistics, the string columns' pages, page headers), while
//! the one before is copied to the file (`rayon::join`; the copy is the only
//! serial step), so nothing as long as the clip is allocated; velocities and
//! contacts, which need the whole clip, and the wide or compressed tables go
//! through `write_clip(Clip::compute(..))`, whose bytes it writes (tested on
//! the corpus with every option); names dictionary-encoded, numbers plain and
//! uncompressed; the long table's chunks are encoded by `long.rs`, one task per
//! column, then appended in schema order; the wide table and compressed files
//! go through `ArrowRowGroupWriterFactory` column writers, one task per column,
//! each built and fed in pieces of 64K rows (`Columns::column`), never as
//! whole-clip Arrow arrays), the long and wide schemas, the options as
//! key-value metadata under `bvhkit`, and `SkeletonTable` (one row per clip ×
//! joint, written as `OUT.skeleton.parquet`: one row group, as the Arrow
//! writer makes of one batch, but its columns encoded side by side on
//! rayon's current pool; the same bytes, tested).
//!
//! Shared pages (`ParquetWriter::with_shared_pages`, the folder export's
//! path): a prepared clip's float64 page bodies are its column buffers'
//! bytes, so they are not copied through the crate at all. Its chunks are
//! made with holes there (`long::Prepared::chunk_sharing`: the chunk reads
//! as that many bytes left unwritten), the file offset of each hole is
//! known before the row group is appended (the crate's count of bytes
//! written, then the chunks one after another), and `Spliced`, the writer
//! under the crate's, skips the stand-in bytes of each hole and hands the
//! buffer itself (an `Arc` of `Column`, which goes back to the
//! `Preparer`'s free list when the last handle drops) to `W` in their
//! place. Before, a page was copied into the crate's 8 KiB copy buffer,
//! then into a 4 MiB block, then by the kernel into the file; now only the
//! last copy is left.

use std::io::Write;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, BooleanArray, DictionaryArray, Float32Array, Float64Array, Int32Array,
    ListArray, RecordBatch, StringArray,
};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowSchemaConverter;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves};
use parquet::basic::{Compression, Encoding};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnDescPtr, ColumnPath};
use rayon::prelude::*;

use bvhkit::Bvh;
use bvhkit::units::UnitGuess;

use crate::features::{self, Clip, Dtype, Kernel, Layout, Options};
use crate::long::{self, LongColumn};
use crate::{Error, Result};

/// The key of the JSON document in the motion table's key-value metadata
/// that records the options it was written with.
pub const METADATA_KEY: &str = "bvhkit";

fn float_type(d: Dtype) -> DataType {
    match d {
        Dtype::F64 => DataType::Float64,
        Dtype::F32 => DataType::Float32,
    }
}

fn dict_utf8() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// The Arrow schema of the motion table written with `options` (strings are
/// written dictionary-encoded; readers see them as text).
///
/// Long layout: `clip`, `frame` (int32), `joint`, `parent` (null for
/// roots), `px py pz`, the rotation columns ([`crate::Rotations::columns`]),
/// then `vx vy vz` with velocities and `contact` (bool) with contacts.
///
/// Wide layout: `clip`, `frame`, then list columns holding the frame's
/// joints in skeleton order (the skeleton table's `joint_index`):
/// `positions` (joints × 3: x, y, z of joint 0, then of joint 1, ...),
/// `rotations` (joints × the rotation's width), `velocities` (joints × 3)
/// and `contacts` (joints) when asked. Lists rather than a column per joint
/// so that clips with different skeletons share one file.
#[must_use]
pub fn schema(options: &Options) -> SchemaRef {
    let ft = float_type(options.dtype);
    let mut fields =
        vec![Field::new("clip", dict_utf8(), false), Field::new("frame", DataType::Int32, false)];
    match options.layout {
        Layout::Long => {
            fields.push(Field::new("joint", dict_utf8(), false));
            fields.push(Field::new("parent", dict_utf8(), true));
            for c in ["px", "py", "pz"].iter().chain(options.rotations.columns()) {
                fields.push(Field::new(*c, ft.clone(), false));
            }
            if options.velocities {
                for c in ["vx", "vy", "vz"] {
                    fields.push(Field::new(c, ft.clone(), false));
                }
            }
            if options.contacts.is_some() {
                fields.push(Field::new("contact", DataType::Boolean, false));
            }
        }
        Layout::Wide => {
            let list = |t: DataType| DataType::List(Arc::new(Field::new_list_field(t, false)));
            fields.push(Field::new("positions", list(ft.clone()), false));
            fields.push(Field::new("rotations", list(ft.clone()), false));
            if options.velocities {
                fields.push(Field::new("velocities", list(ft.clone()), false));
            }
            if options.contacts.is_some() {
                fields.push(Field::new("contacts", list(DataType::Boolean), false));
            }
        }
    }
    Arc::new(Schema::new(fields))
}

/// The options as the JSON document stored under [`METADATA_KEY`].
#[must_use]
pub fn options_json(options: &Options) -> serde_json::Value {
    serde_json::json!({
        "layout": match options.layout { Layout::Long => "long", Layout::Wide => "wide" },
        "dtype": match options.dtype { Dtype::F64 => "float64", Dtype::F32 => "float32" },
        "rotations": options.rotations.name(),
        "rotation_space": "local",
        "root_relative": options.root_relative,
        "velocities": options.velocities,
        "contacts": options.contacts.map(|c| serde_json::json!({
            "height": c.height, "speed": c.speed,
            "relative_to": "the skeleton's size (median pose extent); speed per second",
        })),
        "position_channels": format!("{:?}", options.position_channels).to_lowercase(),
        "skeleton_table": "OUT.skeleton.parquet",
    })
}

/// The key, in both files' key-value metadata, of the id that pairs a
/// motion table with its skeleton table ([`SkeletonTable::pair`]).
pub const PAIR_KEY: &str = "bvhkit.pair";

fn properties(options: &Options, compression: Compression) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(compression)
        .set_created_by(format!("bvhkit-dataset {}", env!("CARGO_PKG_VERSION")))
        // Numbers are not worth a dictionary; the names are.
        .set_dictionary_enabled(false)
        .set_encoding(Encoding::PLAIN)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_key_value_metadata(Some(vec![KeyValue::new(
            METADATA_KEY.to_string(),
            options_json(options).to_string(),
        )]));
    for c in ["clip", "joint", "parent"] {
        b = b.set_column_dictionary_enabled(ColumnPath::from(c), true);
    }
    b.build()
}

/// Writes clips, one row group each, to a Parquet file, and collects their
/// skeletons for [`SkeletonTable::write`].
///
/// Memory is bounded by one clip's arrays: a clip is encoded and written
/// before the next is taken. Columns are encoded in parallel on rayon's
/// current pool.
pub struct ParquetWriter<W: Write + Send> {
    /// The clips' names so far: each is a key.
    names: std::collections::HashSet<String>,
    file: SerializedFileWriter<Spliced<W>>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    options: Options,
    skeletons: SkeletonTable,
    row_groups: usize,
    max_group_rows: usize,
    /// Long-table chunks are encoded by [`crate::long`] (uncompressed
    /// files); otherwise, and for the wide table, by the Arrow writer.
    direct: bool,
    /// [`ParquetWriter::write_bvh`]'s two sets of row-group columns (one
    /// computed while the other is written), kept from clip to clip.
    buffers: [Vec<Vec<f64>>; 2],
}

impl<W: Write + Send> ParquetWriter<W> {
    /// Starts a file on `w` (uncompressed: the floats of motion barely
    /// compress, and the writer stays fast).
    ///
    /// # Errors
    /// When the schema cannot be converted or `w` fails.
    pub fn new(w: W, options: &Options) -> Result<Self> {
        Self::with_compression(w, options, Compression::UNCOMPRESSED)
    }

    /// [`ParquetWriter::new`] with a compression codec (`SNAPPY` is built
    /// in).
    ///
    /// # Errors
    /// As for [`ParquetWriter::new`].
    pub fn with_compression(w: W, options: &Options, compression: Compression) -> Result<Self> {
        let schema = schema(options);
        let props = Arc::new(properties(options, compression));
        let parquet_schema = ArrowSchemaConverter::new().convert(&schema)?;
        let file =
            SerializedFileWriter::new(Spliced::new(w), parquet_schema.root_schema_ptr(), props)?;
        let factory = ArrowRowGroupWriterFactory::new(&file, schema.clone());
        Ok(ParquetWriter {
            file,
            factory,
            schema,
            options: options.clone(),
            skeletons: SkeletonTable::default(),
            row_groups: 0,
            max_group_rows: ROW_GROUP_ROWS,
            direct: options.layout == Layout::Long && compression == Compression::UNCOMPRESSED,
            buffers: Default::default(),
            names: std::collections::HashSet::new(),
        })
    }

    /// Hands the bodies of the number pages of prepared clips
    /// ([`ParquetWriter::write_prepared`]) to `write_shared` instead of
    /// copying them through the writer: the page's bytes (the column
    /// buffer's own, little-endian doubles) and their range, to be written
    /// next into `W`, in order with the bytes `W` is given by `write` (a
    /// [`bvhkit_write::BlockWriter`]-like writer that keeps a handle and
    /// copies them into the file itself, say). The bytes of the file are
    /// the same. Float32 tables and clips written by
    /// [`ParquetWriter::write_bvh`] or [`ParquetWriter::write_clip`] are
    /// copied as before, and so is everything on a big-endian machine.
    ///
    /// [`bvhkit_write::BlockWriter`]: https://docs.rs/bvhkit-write
    #[must_use]
    pub fn with_shared_pages(mut self, write_shared: WriteShared<W>) -> Self {
        if cfg!(target_endian = "little") {
            self.file.inner_mut().shared = Some(write_shared);
        }
        self
    }

    /// Sets the most rows of a row group ([`ROW_GROUP_ROWS`] by default; at
    /// least one frame is always taken). The rows do not depend on it, only
    /// how they are split.
    #[must_use]
    pub fn with_row_group_rows(mut self, rows: usize) -> Self {
        self.max_group_rows = rows.max(1);
        self
    }

    /// Writes `clip` as one row group, or as several consecutive ones of at
    /// most [`ROW_GROUP_ROWS`] rows when it is longer (split between frames;
    /// none for a clip without rows; its skeleton is still recorded).
    ///
    /// Each row group's columns are encoded in parallel on rayon's current
    /// pool, each from pieces of the clip's arrays, so no whole-clip copy of
    /// a column is made.
    ///
    /// # Errors
    /// When encoding or writing fails, a wide row's list would exceed 2^31
    /// values, or [`Error::DuplicateClip`] for a second clip of one name
    /// (nothing of it written).
    pub fn write_clip(&mut self, clip: Clip) -> Result<()> {
        if !self.names.insert(clip.name.clone()) {
            return Err(Error::DuplicateClip(clip.name));
        }
        self.skeletons.add(&clip);
        let nj = clip.joints.len();
        let rows = match self.options.layout {
            Layout::Long => clip.rows(),
            Layout::Wide => clip.n_frames,
        };
        if rows == 0 {
            return Ok(());
        }
        i32::try_from(clip.n_frames).map_err(|_| Error::TooLarge("frames".into()))?;
        i32::try_from(nj).map_err(|_| Error::TooLarge("joints".into()))?;
        if self.options.velocities && clip.velocities.is_none() {
            return Err(Error::Missing("velocities"));
        }
        if self.options.contacts.is_some() && clip.contacts.is_none() {
            return Err(Error::Missing("contacts"));
        }
        check_lengths(&clip, &self.options)?;
        clip.check_finite(self.options.dtype)?;
        if self.direct {
            let group_frames = (self.max_group_rows / nj).max(1);
            let mut start = 0;
            while start < clip.n_frames {
                let end = (start + group_frames).min(clip.n_frames);
                let rows = start * nj..end * nj;
                let columns = self
                    .schema
                    .fields()
                    .iter()
                    .map(|f| long_column(&clip, &self.options, f.name(), rows.clone()))
                    .collect::<Result<Vec<_>>>()?;
                write_group_long(&mut self.file, &columns, start..end, nj)?;
                self.row_groups += 1;
                start = end;
            }
            return Ok(());
        }
        let per_frame = match self.options.layout {
            Layout::Long => nj,
            Layout::Wide => 1,
        };
        let group_frames = (self.max_group_rows / per_frame).max(1);
        let piece_frames = (PIECE_ROWS / per_frame).max(1);
        let names: ArrayRef = Arc::new(StringArray::from(clip.joints.clone()));
        let clip_name: ArrayRef = Arc::new(StringArray::from(vec![clip.name.as_str()]));
        let options = self.options.clone();
        let columns = Columns { clip: &clip, options: &options, names, clip_name };
        let mut start = 0;
        while start < clip.n_frames {
            let end = (start + group_frames).min(clip.n_frames);
            self.write_group(&columns, start..end, piece_frames)?;
            start = end;
        }
        Ok(())
    }

    /// Writes the clip of `bvh` under `name`: the same rows, row groups and
    /// skeleton as [`ParquetWriter::write_clip`] of
    /// [`Clip::compute`]`(name, bvh, options)`.
    ///
    /// The long table without velocities or contacts (the features that
    /// need the whole clip) is computed a row group at a time, into two
    /// sets of buffers the writer keeps from clip to clip: the features of
    /// a row group are computed and encoded (all but the bodies of its
    /// number pages) on rayon's current pool while the one before is copied
    /// to the file, and no array as long as the clip is made. Otherwise the
    /// whole clip is computed first.
    ///
    /// # Errors
    /// As for [`ParquetWriter::write_clip`].
    pub fn write_bvh(&mut self, name: &str, bvh: &Bvh) -> Result<()> {
        let o = self.options.clone();
        if !self.direct || o.velocities || o.contacts.is_some() {
            return self.write_clip(Clip::compute(name, bvh, &o));
        }
        let skeleton = bvh.skeleton();
        let motion = bvh.motion();
        let nj = skeleton.len();
        let nf = motion.n_frames();
        let joints = skeleton.display_names();
        let parents = features::parents(skeleton);
        let mut sizes = vec![0.0; nf];
        if nj > 0 && nf > 0 {
            i32::try_from(nf).map_err(|_| Error::TooLarge("frames".into()))?;
            i32::try_from(nj).map_err(|_| Error::TooLarge("joints".into()))?;
            let kernel = Kernel::new(skeleton, &o, true);
            let group_frames = (self.max_group_rows / nj).clamp(1, nf);
            let groups: Vec<Range<usize>> =
                (0..nf).step_by(group_frames).map(|f| f..(f + group_frames).min(nf)).collect();
            let mut bufs = std::mem::take(&mut self.buffers);
            // The second set only when there is a second group; a column
            // that grows is made anew (zeros from the allocator: its pages
            // are first touched when the features are written, never
            // cleared a second time).
            for set in bufs.iter_mut().take(groups.len().min(2)) {
                set.resize_with(kernel.columns(), Vec::new);
                for c in set.iter_mut() {
                    if c.len() < group_frames * nj {
                        *c = Vec::new();
                        *c = vec![0.0; group_frames * nj];
                    }
                }
            }
            // Group `g` is computed into `bufs[g % 2]`, and encoded but for
            // its number pages' bodies (statistics, the string columns'
            // pages, headers: `long::prepare`), while group `g - 1` is
            // copied to the file from the other set.
            let names = self.schema.fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
            // The column of each field: a number column's index in a set,
            // or `None`.
            let index = |n: &str| number_column(&o, n);
            let descr = self.file.schema_descr();
            let descrs = (0..names.len()).map(|i| descr.column(i)).collect::<Vec<_>>();
            let mut prepared: Vec<long::Prepared> = Vec::new();
            for g in 0..=groups.len() {
                let [a, b] = &mut bufs;
                let (cur, prev) = if g % 2 == 0 { (a, b) } else { (b, a) };
                let file = &mut self.file;
                let ready = std::mem::take(&mut prepared);
                let write = || -> Result<()> {
                    if g == 0 {
                        return Ok(());
                    }
                    let rows = groups[g - 1].len() * nj;
                    let mut rg = file.next_row_group()?;
                    for (n, p) in names.iter().zip(ready) {
                        let values = index(n).map_or(&[][..], |c| &prev[c][..rows]);
                        let (chunk, close) = p.chunk(values);
                        rg.append_column(&chunk, close)?;
                    }
                    rg.close()?;
                    Ok(())
                };
                let compute = || -> Result<Vec<long::Prepared>> {
                    let Some(frames) = groups.get(g) else { return Ok(Vec::new()) };
                    let rows = frames.len() * nj;
                    let mut out: Vec<&mut [f64]> = cur.iter_mut().map(|c| &mut c[..rows]).collect();
                    kernel.run(motion, frames.start, &mut out, &mut sizes[frames.clone()], true);
                    let values = |c: usize| &cur[c][..rows];
                    let clip = ClipParts { name, joints: &joints, parents: &parents };
                    prepare_group(&o, &names, &descrs, &clip, &values, frames.clone(), true)
                };
                let (written, next) = rayon::join(write, compute);
                written?;
                prepared = next?;
                if g > 0 {
                    self.row_groups += 1;
                }
            }
            self.buffers = bufs;
        }
        let units = features::unit_guess(skeleton, &o, sizes);
        let offsets: Vec<[f64; 3]> =
            skeleton.joints().iter().map(|j| j.offset().to_array()).collect();
        self.skeletons.add_joints(
            name,
            &joints,
            &parents,
            &offsets,
            motion.frame_time(),
            nf,
            &units,
        );
        Ok(())
    }

    /// What prepares clips for [`ParquetWriter::write_prepared`] on other
    /// threads.
    #[must_use]
    pub fn preparer(&self) -> Preparer {
        let descr = self.file.schema_descr();
        Preparer {
            options: self.options.clone(),
            names: self.schema.fields().iter().map(|f| f.name().clone()).collect(),
            descrs: (0..descr.num_columns()).map(|i| descr.column(i)).collect(),
            max_group_rows: self.max_group_rows,
            direct: self.direct,
            free: Arc::default(),
            parallel: true,
        }
    }

    /// Writes a clip prepared by this writer's [`ParquetWriter::preparer`]
    /// (as [`ParquetWriter::write_bvh`] writes it): its row group copied
    /// into the file, its skeleton recorded.
    ///
    /// # Errors
    /// When writing fails.
    pub fn write_prepared(&mut self, clip: PreparedClip) -> Result<()> {
        let PreparedClip { columns, prepared, free, .. } = clip;
        let rows = clip.n_frames * clip.joints.len();
        // With shared pages, the float64 pages' bodies are handed to the
        // writer as the column buffers' own bytes (`Spliced`): each column
        // goes back to the free list when the writer lets go of it.
        let share = self.file.inner_mut().shared.is_some() && self.options.dtype == Dtype::F64;
        let columns: Vec<Arc<Column>> = columns
            .into_iter()
            .map(|values| Arc::new(Column { values, free: free.clone() }))
            .collect();
        // Where the row group starts in the file: its chunks follow one
        // another from there.
        let mut at = self.file.bytes_written() as u64;
        let mut chunks = Vec::with_capacity(prepared.len());
        for (field, p) in self.schema.fields().iter().zip(prepared) {
            let column = number_column(&self.options, field.name()).map(|c| &columns[c]);
            let values = column.map_or(&[][..], |c| &c.values[..rows]);
            let len = p.len();
            let chunk = match column {
                Some(c) if share => {
                    let spliced = self.file.inner_mut();
                    p.chunk_sharing(values, |offset, rows| {
                        let bytes: Shared = c.clone();
                        spliced.hole(at + offset, bytes, rows.start * 8..rows.end * 8);
                    })
                }
                _ => p.chunk(values),
            };
            at += len;
            chunks.push(chunk);
        }
        let mut rg = self.file.next_row_group()?;
        for (chunk, close) in chunks {
            rg.append_column(&chunk, close)?;
        }
        rg.close()?;
        self.row_groups += 1;
        drop(columns);
        self.skeletons.add_joints(
            &clip.name,
            &clip.joints,
            &clip.parents,
            &clip.offsets,
            clip.frame_time,
            clip.n_frames,
            &clip.units,
        );
        Ok(())
    }

    /// Encodes the long table with the `parquet` crate's Arrow writer, as
    /// the wide table and compressed files are (the reference the direct
    /// encoding is tested against).
    #[cfg(test)]
    pub(crate) fn with_arrow_encoder(mut self) -> Self {
        self.direct = false;
        self
    }

    /// One row group: frames `frames` of the clip, every column on its own
    /// task, fed in pieces of `piece_frames` frames.
    fn write_group(
        &mut self,
        columns: &Columns<'_>,
        frames: Range<usize>,
        piece_frames: usize,
    ) -> Result<()> {
        let writers = self.factory.create_column_writers(self.row_groups)?;
        let fields = self.schema.fields();
        debug_assert_eq!(writers.len(), fields.len(), "one leaf per field");
        row_group_side_by_side(&mut self.file, writers, |c, w| {
            let mut f = frames.start;
            while f < frames.end {
                let to = (f + piece_frames).min(frames.end);
                let array = columns.column(fields[c].name(), f..to)?;
                for leaf in compute_leaves(&fields[c], &array)? {
                    w.write(&leaf)?;
                }
                f = to;
            }
            Ok(())
        })?;
        self.row_groups += 1;
        Ok(())
    }

    /// Ends the file; returns the writer and the skeletons of the clips
    /// written.
    ///
    /// # Errors
    /// When writing the footer fails.
    pub fn finish(self) -> Result<(W, SkeletonTable)> {
        let (w, skeletons, ()) = self.finish_beside(|_| (), |w| w)?;
        Ok((w, skeletons))
    }

    /// [`ParquetWriter::finish`], running `beside` on another thread with
    /// the skeletons of the clips written (to write their table, say) while
    /// this one writes the file's footer and page indexes, then hands the
    /// writer to `then` (to flush and sync it, say): these are the last
    /// steps of an export, and neither side needs the other. The pairing
    /// id ([`SkeletonTable::pair`]) is computed once, before both. Returns
    /// what `then` and `beside` returned, with the skeletons.
    ///
    /// # Errors
    /// When writing the footer fails (`beside` has run then too, `then`
    /// not).
    pub fn finish_beside<R: Send, T>(
        self,
        beside: impl FnOnce(&SkeletonTable) -> R + Send,
        then: impl FnOnce(W) -> T,
    ) -> Result<(T, SkeletonTable, R)> {
        let ParquetWriter { mut file, skeletons, .. } = self;
        file.append_key_value_metadata(KeyValue::new(PAIR_KEY.to_string(), skeletons.pair()));
        let (t, r) = std::thread::scope(|s| {
            let side = s.spawn(|| beside(&skeletons));
            let t = file.into_inner().map(|w| then(w.into_inner()));
            let r = side.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            (t, r)
        });
        Ok((t?, skeletons, r))
    }
}

/// What [`ParquetWriter::prepare_group`] reads of a clip besides its
/// numbers.
struct ClipParts<'a> {
    name: &'a str,
    joints: &'a [String],
    parents: &'a [i32],
}

/// The long table's row group of frames `frames` of a clip, prepared
/// ([`long::prepare`]: all but the number pages' bodies), a task per column
/// on rayon's current pool (or, with `parallel` false, one column after
/// another on this thread); `values(c)` is number column `c`
/// ([`number_column`]) over those frames.
fn prepare_group<'v>(
    o: &Options,
    names: &[String],
    descrs: &[ColumnDescPtr],
    clip: &ClipParts<'_>,
    values: &(dyn Fn(usize) -> &'v [f64] + Sync),
    frames: Range<usize>,
    parallel: bool,
) -> Result<Vec<long::Prepared>> {
    let nj = clip.joints.len();
    let one = |(i, n): (usize, &String)| -> Result<long::Prepared> {
        let column = match number_column(o, n) {
            None => match n.as_str() {
                "clip" => LongColumn::Clip(clip.name),
                "frame" => LongColumn::Frame,
                "joint" => LongColumn::Joint(clip.joints),
                _ => LongColumn::Parent(clip.joints, clip.parents),
            },
            Some(c) => {
                let values = values(c);
                features::check_finite(clip.name, n, values, o.dtype, frames.start, clip.joints)?;
                LongColumn::Floats(values, o.dtype)
            }
        };
        Ok(long::prepare(&descrs[i], &column, frames.clone(), nj)?)
    };
    if parallel {
        names.par_iter().enumerate().with_max_len(1).map(one).collect()
    } else {
        names.iter().enumerate().map(one).collect()
    }
}

/// The index of the long table's number column `name` among the columns
/// [`Kernel::run`] computes (`px py pz`, then the rotation's), or `None`
/// for `clip`, `frame`, `joint` and `parent`.
fn number_column(o: &Options, name: &str) -> Option<usize> {
    match name {
        "clip" | "frame" | "joint" | "parent" => None,
        "px" => Some(0),
        "py" => Some(1),
        "pz" => Some(2),
        rotation => Some(3 + rotation_index(o, rotation)),
    }
}

/// Prepares clips for a [`ParquetWriter`] on any thread
/// ([`ParquetWriter::preparer`]): the features of a clip computed and its
/// row group encoded but for the copy into the file, which
/// [`ParquetWriter::write_prepared`] does in order. Many clips are so
/// prepared at once, one per thread, while the writer copies the ones
/// before: the file is written by one thread, but only the copy is left
/// to it.
#[derive(Clone)]
pub struct Preparer {
    options: Options,
    names: Vec<String>,
    descrs: Vec<ColumnDescPtr>,
    max_group_rows: usize,
    direct: bool,
    /// Column buffers of clips written, for the next clips: their pages
    /// are not faulted in and cleared again for every clip.
    free: Arc<std::sync::Mutex<Vec<Vec<f64>>>>,
    /// Whether a clip's frames and columns are split over rayon's pool
    /// ([`Preparer::parallel`]).
    parallel: bool,
}

impl Preparer {
    /// Whether one clip's work (its frames' features, its columns'
    /// encoding) is split over rayon's current pool (`true`, the default:
    /// one long clip then takes every core), or done in order on the thread
    /// that calls [`Preparer::prepare`] (`false`). A caller that prepares
    /// many clips at once, one per thread, says `false`: a thread out of
    /// work then takes the next clip instead of stealing pieces of
    /// another thread's, whose values it would read from that thread's
    /// core (and it is not woken for every piece). The bytes are the same
    /// either way.
    #[must_use]
    pub fn parallel(mut self, yes: bool) -> Preparer {
        self.parallel = yes;
        self
    }

    /// The clip of `bvh` under `name`, prepared: the same row group and
    /// skeleton as [`ParquetWriter::write_bvh`] gives it. `None` when the
    /// clip is not one row group of the long, uncompressed table without
    /// velocities or contacts (more rows than a row group, no rows, or
    /// other options): [`ParquetWriter::write_bvh`] writes those.
    ///
    /// It holds the clip's features (7 to 12 numbers a joint and frame)
    /// until it is written.
    ///
    /// # Errors
    /// As for [`ParquetWriter::write_bvh`] (a value that is not finite).
    pub fn prepare(&self, name: &str, bvh: &Bvh) -> Option<Result<PreparedClip>> {
        let o = &self.options;
        if !self.direct || o.velocities || o.contacts.is_some() {
            return None;
        }
        let skeleton = bvh.skeleton();
        let motion = bvh.motion();
        let (nj, nf) = (skeleton.len(), motion.n_frames());
        let rows = nj.checked_mul(nf)?;
        if rows == 0 || rows > self.max_group_rows {
            return None;
        }
        Some((|| {
            i32::try_from(nf).map_err(|_| Error::TooLarge("frames".into()))?;
            i32::try_from(nj).map_err(|_| Error::TooLarge("joints".into()))?;
            let kernel = Kernel::new(skeleton, o, true);
            // Buffers of clips already written (every value in use is
            // overwritten): the smallest that hold `rows` values (the free
            // list is sorted by length), or new ones. (Replacing the largest
            // of the others by ones that hold `rows` instead, so that no
            // buffer is made while one is free, took 2% more CPU on one
            // core and 3,000 more page faults in a folder of 432 files:
            // the buffers all grew to the longest clip's length and the
            // free list's bound then dropped some.)
            let n = kernel.columns();
            let mut columns: Vec<Vec<f64>> = {
                let mut free = self.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let at = free.partition_point(|c| c.len() < rows);
                let take = n.min(free.len() - at);
                free.drain(at..at + take).collect()
            };
            columns.resize_with(n, || vec![0.0; rows]);
            let mut sizes = vec![0.0; nf];
            let mut out: Vec<&mut [f64]> = columns.iter_mut().map(|c| &mut c[..rows]).collect();
            kernel.run(motion, 0, &mut out, &mut sizes, self.parallel);
            let joints = skeleton.display_names();
            let parents = features::parents(skeleton);
            let clip = ClipParts { name, joints: &joints, parents: &parents };
            let values = |c: usize| &columns[c][..rows];
            let prepared =
                prepare_group(o, &self.names, &self.descrs, &clip, &values, 0..nf, self.parallel)?;
            let units = features::unit_guess(skeleton, o, sizes);
            Ok(PreparedClip {
                name: name.to_string(),
                offsets: skeleton.joints().iter().map(|j| j.offset().to_array()).collect(),
                joints,
                parents,
                frame_time: motion.frame_time(),
                n_frames: nf,
                units,
                columns,
                prepared,
                free: self.free.clone(),
            })
        })())
    }
}

/// Bytes of column buffers a [`Preparer`] keeps for the next clips, at
/// most.
const FREE_BYTES: usize = 64 << 20;

/// A written clip's column buffer, on its way back to its [`Preparer`]'s
/// free list: it goes back when dropped, which with shared pages
/// ([`ParquetWriter::with_shared_pages`]) is once the writer has copied
/// its pages into the file.
struct Column {
    values: Vec<f64>,
    free: Arc<std::sync::Mutex<Vec<Vec<f64>>>>,
}

impl AsRef<[u8]> for Column {
    /// The values' bytes in memory (little-endian doubles, the body of a
    /// PLAIN page, on the machines that share pages).
    fn as_ref(&self) -> &[u8] {
        use arrow_buffer::ToByteSlice;
        self.values.to_byte_slice()
    }
}

impl Drop for Column {
    fn drop(&mut self) {
        // The free list is sorted by length and keeps at most `FREE_BYTES`
        // of buffers, the largest (which serve any clip), so that after
        // the first few clips hardly any clip needs new pages (each new
        // page is faulted in and cleared, under the kernel's
        // page-allocator locks, which two threads then contend for).
        let c = std::mem::take(&mut self.values);
        let mut free = self.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = free.partition_point(|f| f.len() < c.len());
        free.insert(at, c);
        let mut kept: usize = free.iter().map(Vec::len).sum();
        let mut smallest = 0;
        while kept * 8 > FREE_BYTES && smallest < free.len() {
            kept -= free[smallest].len();
            smallest += 1;
        }
        let dropped: Vec<Vec<f64>> = free.drain(..smallest).collect();
        drop(free);
        drop(dropped);
    }
}

/// Bytes shared with a writer rather than copied into it (the type of
/// `bvhkit_write::Shared`).
pub type Shared = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// What writes shared bytes into a [`ParquetWriter`]'s `W`, next after
/// what it was given before ([`ParquetWriter::with_shared_pages`]).
pub type WriteShared<W> = fn(&mut W, Shared, Range<usize>) -> std::io::Result<()>;

/// The writer under the `parquet` crate's file writer: what it is given
/// goes to `W`, but for the holes, ranges of the file whose bytes are
/// shared (number pages of prepared clips): there the crate's bytes (a
/// stand-in, never read) are skipped and the shared bytes handed to `W`
/// instead, when the hole's first byte comes.
struct Spliced<W> {
    inner: W,
    /// Bytes given so far (the file offset of the next).
    at: u64,
    holes: std::collections::VecDeque<Hole>,
    shared: Option<WriteShared<W>>,
}

/// A range of the file written from shared bytes.
struct Hole {
    at: u64,
    len: u64,
    /// The bytes and their range, until they go to `W`.
    bytes: Option<(Shared, Range<usize>)>,
}

impl<W> Spliced<W> {
    fn new(inner: W) -> Spliced<W> {
        Spliced { inner, at: 0, holes: Default::default(), shared: None }
    }

    /// Bytes `range` of `bytes` are the file's from offset `at` (after
    /// every hole before, and not before what was given so far).
    fn hole(&mut self, at: u64, bytes: Shared, range: Range<usize>) {
        debug_assert!(at >= self.holes.back().map_or(self.at, |h| h.at + h.len));
        if !range.is_empty() {
            let len = range.len() as u64;
            self.holes.push_back(Hole { at, len, bytes: Some((bytes, range)) });
        }
    }

    fn into_inner(self) -> W {
        debug_assert!(self.holes.is_empty(), "every hole is filled by the end");
        self.inner
    }
}

impl<W: Write> Write for Spliced<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            let left = buf.len() - done;
            let Some(hole) = self.holes.front_mut() else {
                self.inner.write_all(&buf[done..])?;
                self.at += left as u64;
                break;
            };
            if self.at < hole.at {
                // Up to the hole, as given.
                let n = left.min((hole.at - self.at) as usize);
                self.inner.write_all(&buf[done..done + n])?;
                (self.at, done) = (self.at + n as u64, done + n);
                continue;
            }
            if let Some((bytes, range)) = hole.bytes.take() {
                let write = self.shared.ok_or_else(|| std::io::Error::other("no shared writer"))?;
                write(&mut self.inner, bytes, range)?;
            }
            // The stand-in bytes of the hole, skipped.
            let end = hole.at + hole.len;
            let n = left.min((end - self.at) as usize);
            (self.at, done) = (self.at + n as u64, done + n);
            if self.at == end {
                self.holes.pop_front();
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A clip ready to be copied into the file ([`Preparer::prepare`],
/// [`ParquetWriter::write_prepared`]).
pub struct PreparedClip {
    name: String,
    joints: Vec<String>,
    parents: Vec<i32>,
    offsets: Vec<[f64; 3]>,
    frame_time: f64,
    n_frames: usize,
    units: UnitGuess,
    /// The number columns ([`number_column`]).
    columns: Vec<Vec<f64>>,
    /// The row group's chunks, in schema order.
    prepared: Vec<long::Prepared>,
    /// Where the columns go once written ([`Preparer`]'s).
    free: Arc<std::sync::Mutex<Vec<Vec<f64>>>>,
}

impl PreparedClip {
    /// Frames of the clip.
    #[must_use]
    pub fn n_frames(&self) -> usize {
        self.n_frames
    }

    /// Rows of the long table (frames × joints).
    #[must_use]
    pub fn rows(&self) -> usize {
        self.n_frames * self.joints.len()
    }
}

/// One row group: each of `writers` (one a leaf column, in schema order)
/// fed by `encode(column, writer)` on its own task of rayon's current pool,
/// then the closed chunks appended to the file in schema order (the bytes
/// `ArrowWriter` writes for the same leaves, one column after another).
fn row_group_side_by_side<W: Write + Send>(
    file: &mut SerializedFileWriter<W>,
    writers: Vec<ArrowColumnWriter>,
    encode: impl Fn(usize, &mut ArrowColumnWriter) -> Result<()> + Sync,
) -> Result<()> {
    let chunks: Vec<_> = writers
        .into_par_iter()
        .enumerate()
        .with_max_len(1)
        .map(|(c, mut w)| {
            encode(c, &mut w)?;
            Ok(w.close()?)
        })
        .collect::<Result<_>>()?;
    let mut rg = file.next_row_group()?;
    for chunk in chunks {
        chunk.append_to_row_group(&mut rg)?;
    }
    rg.close()?;
    Ok(())
}

/// One row group of the long table: the columns of frames `frames` of a
/// clip of `nj` joints, every column chunk encoded by [`crate::long`] on its
/// own task, then copied to the file in schema order.
fn write_group_long<W: Write + Send>(
    file: &mut SerializedFileWriter<W>,
    columns: &[LongColumn<'_>],
    frames: Range<usize>,
    nj: usize,
) -> Result<()> {
    let descr = file.schema_descr();
    let chunks = columns
        .par_iter()
        .enumerate()
        .with_max_len(1)
        .map(|(i, c)| long::encode(&descr.column(i), c, frames.clone(), nj))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut rg = file.next_row_group()?;
    for (chunk, close) in chunks {
        rg.append_column(&chunk, close)?;
    }
    rg.close()?;
    Ok(())
}

/// Which of a clip's rotation arrays holds the rotation column `name`.
fn rotation_index(o: &Options, name: &str) -> usize {
    o.rotations
        .columns()
        .iter()
        .position(|c| *c == name)
        .expect("every column of the schema is built")
}

/// Column `name` of the long table for [`long::encode`]: the rows `rows`
/// of `clip`.
fn long_column<'a>(
    clip: &'a Clip,
    o: &Options,
    name: &str,
    rows: Range<usize>,
) -> Result<LongColumn<'a>> {
    let axis = |n: &str| usize::from(n.as_bytes()[1] - b'x');
    Ok(match name {
        "clip" => LongColumn::Clip(&clip.name),
        "frame" => LongColumn::Frame,
        "joint" => LongColumn::Joint(&clip.joints),
        "parent" => LongColumn::Parent(&clip.joints, &clip.parents),
        "px" | "py" | "pz" => LongColumn::Floats(&clip.positions[axis(name)][rows], o.dtype),
        "vx" | "vy" | "vz" => {
            let v = clip.velocities.as_ref().ok_or(Error::Missing("velocities"))?;
            LongColumn::Floats(&v[axis(name)][rows], o.dtype)
        }
        "contact" => {
            LongColumn::Bools(&clip.contacts.as_ref().ok_or(Error::Missing("contacts"))?[rows])
        }
        rotation => LongColumn::Floats(&clip.rotations[rotation_index(o, rotation)][rows], o.dtype),
    })
}

/// That the clip's arrays hold a value per frame and joint, and its parents
/// name joints (a clip's fields are public; [`Clip::compute`] makes them
/// consistent).
fn check_lengths(clip: &Clip, o: &Options) -> Result<()> {
    let nj = clip.joints.len();
    let rows = clip.rows();
    let mut bad = None;
    if clip.parents.len() != nj || clip.parents.iter().any(|p| *p >= nj as i32) {
        bad = Some("parents");
    }
    if clip.positions.iter().any(|c| c.len() != rows) {
        bad = Some("positions");
    }
    if clip.rotations.len() != o.rotations.columns().len()
        || clip.rotations.iter().any(|c| c.len() != rows)
    {
        bad = Some("rotations");
    }
    if o.velocities && clip.velocities.as_ref().is_some_and(|v| v.iter().any(|c| c.len() != rows)) {
        bad = Some("velocities");
    }
    if o.contacts.is_some() && clip.contacts.as_ref().is_some_and(|c| c.len() != rows) {
        bad = Some("contacts");
    }
    match bad {
        Some(what) => Err(Error::Inconsistent(what)),
        None => Ok(()),
    }
}

/// Rows per row group at most: a longer clip is split between frames into
/// consecutive row groups, which bounds the memory of the encoded pages.
pub const ROW_GROUP_ROWS: usize = 1 << 20;

/// Rows handed to a column writer at once: the Arrow arrays and the
/// writer's level buffers are built for this many rows, not for the clip.
const PIECE_ROWS: usize = 1 << 16;

/// The arrays of one clip's columns, built for a range of frames at a time.
struct Columns<'a> {
    clip: &'a Clip,
    options: &'a Options,
    /// The joint names (the dictionary of `joint` and `parent`).
    names: ArrayRef,
    /// The clip name (the one-entry dictionary of `clip`).
    clip_name: ArrayRef,
}

impl Columns<'_> {
    /// Column `name` of the schema for frames `f` (rows `f × joints` in the
    /// long layout, `f` in the wide one).
    fn column(&self, name: &str, f: Range<usize>) -> Result<ArrayRef> {
        let clip = self.clip;
        let o = self.options;
        let nj = clip.joints.len();
        let long = o.layout == Layout::Long;
        let rows = if long { f.start * nj..f.end * nj } else { f.clone() };
        let n = rows.len();
        let dict = |keys: Int32Array, values: &ArrayRef| -> Result<ArrayRef> {
            Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(keys, values.clone())?))
        };
        // Frame and joint counts were checked against i32 by `write_clip`.
        let array: ArrayRef = match name {
            "clip" => dict(Int32Array::from(vec![0; n]), &self.clip_name)?,
            "frame" if long => Arc::new(Int32Array::from_iter_values(
                f.flat_map(|i| std::iter::repeat_n(i as i32, nj)),
            )),
            "frame" => Arc::new(Int32Array::from_iter_values(f.map(|i| i as i32))),
            "joint" => {
                dict(Int32Array::from_iter_values(f.flat_map(|_| 0..nj as i32)), &self.names)?
            }
            "parent" => dict(
                f.flat_map(|_| clip.parents.iter().map(|&p| (p >= 0).then_some(p))).collect(),
                &self.names,
            )?,
            "px" | "py" | "pz" => {
                floats(&clip.positions[usize::from(name.as_bytes()[1] - b'x')][rows], o.dtype)
            }
            "vx" | "vy" | "vz" => {
                let v = clip.velocities.as_ref().ok_or(Error::Missing("velocities"))?;
                floats(&v[usize::from(name.as_bytes()[1] - b'x')][rows], o.dtype)
            }
            "contact" => {
                let c = clip.contacts.as_ref().ok_or(Error::Missing("contacts"))?;
                Arc::new(BooleanArray::from(c[rows].to_vec()))
            }
            "positions" | "velocities" => {
                let p = if name == "positions" {
                    &clip.positions
                } else {
                    clip.velocities.as_ref().ok_or(Error::Missing("velocities"))?
                };
                let r = f.start * nj..f.end * nj;
                let cols: Vec<&[f64]> = p.iter().map(|c| &c[r.clone()]).collect();
                list_of(floats(&interleave(&cols), o.dtype), nj * 3, n, float_type(o.dtype))?
            }
            "rotations" => {
                let r = f.start * nj..f.end * nj;
                let cols: Vec<&[f64]> = clip.rotations.iter().map(|c| &c[r.clone()]).collect();
                let per = nj * cols.len();
                list_of(floats(&interleave(&cols), o.dtype), per, n, float_type(o.dtype))?
            }
            "contacts" => {
                let c = clip.contacts.as_ref().ok_or(Error::Missing("contacts"))?;
                let values = Arc::new(BooleanArray::from(c[f.start * nj..f.end * nj].to_vec()));
                list_of(values, nj, n, DataType::Boolean)?
            }
            rotation => floats(&clip.rotations[rotation_index(o, rotation)][rows], o.dtype),
        };
        Ok(array)
    }
}

fn floats(v: &[f64], d: Dtype) -> ArrayRef {
    match d {
        Dtype::F64 => Arc::new(Float64Array::from(v.to_vec())),
        Dtype::F32 => Arc::new(Float32Array::from_iter_values(v.iter().map(|x| *x as f32))),
    }
}

/// A list column: each row's `per_row` values, joints in order.
fn list_of(values: ArrayRef, per_row: usize, rows: usize, item: DataType) -> Result<ArrayRef> {
    let total = per_row.checked_mul(rows).filter(|t| *t <= i32::MAX as usize);
    if total.is_none() {
        return Err(Error::TooLarge("a wide row group's list values (2^31)".into()));
    }
    let offsets: Vec<i32> = (0..=rows).map(|r| (r * per_row) as i32).collect();
    let field = Arc::new(Field::new_list_field(item, false));
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    Ok(Arc::new(ListArray::try_new(field, offsets, values, None)?))
}

/// Interleaves component slices (`cols[c][r]`) into rows of `cols.len()`.
fn interleave(cols: &[&[f64]]) -> Vec<f64> {
    let n = cols.first().map_or(0, |c| c.len());
    let k = cols.len();
    let mut out = vec![0.0; n * k];
    for (r, row) in out.chunks_mut(k.max(1)).enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = cols[c][r];
        }
    }
    out
}

/// Texts one after another in one buffer (a skeleton table's names: one
/// row per joint of every clip, thousands of them), so that a row costs
/// no allocation of its own: they are added on the thread that writes the
/// table, whose heap then grew a page at a time (one `mprotect` each,
/// about 2,000 for 432 clips, each holding the process's memory-map lock
/// against the other threads' page faults), and freed one by one at the
/// end, on the command's last, serial steps.
#[derive(Clone, Debug, Default)]
struct Texts {
    bytes: String,
    /// Where each text ends in `bytes`.
    ends: Vec<usize>,
}

impl Texts {
    fn push(&mut self, text: &str) {
        self.bytes.push_str(text);
        self.ends.push(self.bytes.len());
    }

    /// Adds `d` as [`std::fmt::Display`] writes it.
    fn push_display(&mut self, d: impl std::fmt::Display) {
        use std::fmt::Write as _;
        // Writing into a `String` cannot fail.
        let _ = write!(self.bytes, "{d}");
        self.ends.push(self.bytes.len());
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Text `i` (`i < len`).
    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// The skeletons of the clips written: one row per clip × joint, written
/// beside the motion table as `OUT.skeleton.parquet`.
///
/// Columns: `clip`, `joint_index` (int32, the position in the wide
/// layout's lists), `joint`, `parent` (null for roots), `parent_index`
/// (int32, -1 for roots), `ox oy oz` (the `OFFSET`, float64), `frame_time`
/// (seconds), `frames` (int64), `units` (the unit guess, e.g.
/// `centimetres`), `metres_per_unit` (null when unknown) and `size` (the
/// median pose extent in the file's units, the reference of the contact
/// thresholds).
#[derive(Clone, Debug, Default)]
pub struct SkeletonTable {
    clip: Texts,
    joint_index: Vec<i32>,
    joint: Texts,
    /// The parent's name, empty for a root (whose `parent_index` is -1:
    /// null in the table).
    parent: Texts,
    parent_index: Vec<i32>,
    offsets: [Vec<f64>; 3],
    frame_time: Vec<f64>,
    frames: Vec<i64>,
    units: Texts,
    metres_per_unit: Vec<Option<f64>>,
    size: Vec<f64>,
    /// [`SkeletonTable::pair`], once computed (cleared by every change):
    /// the motion table's footer and this table's both carry it.
    pair: std::sync::OnceLock<String>,
}

impl SkeletonTable {
    /// The id that pairs it with its motion table, stored under
    /// [`PAIR_KEY`] in both files: XXH3-128 of its rows (32 hex digits), so
    /// an export gives the same bytes each time, and a motion table beside
    /// the skeleton table of another export (a `kill -9` between the two
    /// renames) carries another id unless the two skeleton tables hold the
    /// same rows, when either serves.
    #[must_use]
    pub fn pair(&self) -> String {
        self.pair.get_or_init(|| self.compute_pair()).clone()
    }

    /// [`SkeletonTable::pair`] computed from the rows.
    fn compute_pair(&self) -> String {
        // The rows as bytes (a skeleton table is small: joints × clips),
        // each text after its length, then hashed at once.
        let mut b = Vec::new();
        let text = |b: &mut Vec<u8>, s: &str| {
            b.extend_from_slice(&(s.len() as u64).to_le_bytes());
            b.extend_from_slice(s.as_bytes());
        };
        b.extend_from_slice(&(self.clip.len() as u64).to_le_bytes());
        for r in 0..self.clip.len() {
            text(&mut b, self.clip.get(r));
            b.extend_from_slice(&self.joint_index[r].to_le_bytes());
            text(&mut b, self.joint.get(r));
            if self.parent_index[r] < 0 {
                b.extend_from_slice(&u64::MAX.to_le_bytes());
            } else {
                text(&mut b, self.parent.get(r));
            }
            b.extend_from_slice(&self.parent_index[r].to_le_bytes());
            for o in &self.offsets {
                b.extend_from_slice(&o[r].to_le_bytes());
            }
            b.extend_from_slice(&self.frame_time[r].to_le_bytes());
            b.extend_from_slice(&self.frames[r].to_le_bytes());
            text(&mut b, self.units.get(r));
            b.extend_from_slice(
                &self.metres_per_unit[r].map_or(u64::MAX, f64::to_bits).to_le_bytes(),
            );
            b.extend_from_slice(&self.size[r].to_le_bytes());
        }
        format!("{:032x}", twox_hash::XxHash3_128::oneshot(&b))
    }

    /// Adds `clip`'s joints.
    pub fn add(&mut self, clip: &Clip) {
        self.add_joints(
            &clip.name,
            &clip.joints,
            &clip.parents,
            &clip.offsets,
            clip.frame_time,
            clip.n_frames,
            &clip.units,
        );
    }

    /// Adds the joints of a clip given by its parts (as [`Clip`] holds
    /// them).
    #[allow(clippy::too_many_arguments)]
    fn add_joints(
        &mut self,
        name: &str,
        joints: &[String],
        parents: &[i32],
        offsets: &[[f64; 3]],
        frame_time: f64,
        n_frames: usize,
        units: &UnitGuess,
    ) {
        self.pair = std::sync::OnceLock::new();
        for (j, joint) in joints.iter().enumerate() {
            self.clip.push(name);
            self.joint_index.push(j as i32);
            self.joint.push(joint);
            let p = parents[j];
            self.parent.push(if p >= 0 { &joints[p as usize] } else { "" });
            self.parent_index.push(p);
            for (column, &v) in self.offsets.iter_mut().zip(&offsets[j]) {
                column.push(v);
            }
            self.frame_time.push(frame_time);
            self.frames.push(n_frames as i64);
            self.units.push_display(units.units);
            self.metres_per_unit.push(units.units.metres_per_unit());
            self.size.push(units.size);
        }
    }

    /// Number of rows (joints of all clips).
    #[must_use]
    pub fn len(&self) -> usize {
        self.clip.len()
    }

    /// Whether no joint was added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.clip.is_empty()
    }

    /// Writes the table as a Parquet file to `w` (snappy-compressed: it is
    /// small and mostly names), its columns encoded in parallel on rayon's
    /// current pool.
    ///
    /// # Errors
    /// When encoding or writing fails.
    pub fn write<W: Write + Send>(&self, w: W) -> Result<W> {
        let (batch, props) = self.batch()?;
        let schema = batch.schema();
        // One row group (what `ArrowWriter::write` makes of a batch within
        // its limits), its columns encoded side by side on rayon's current
        // pool: the same bytes, but not one column after another at the
        // end of an export, when nothing else is left to run beside it.
        let rows = batch.num_rows();
        let one_group = rows > 0
            && props.max_row_group_row_count().is_none_or(|max| rows <= max)
            && props.max_row_group_bytes().is_none()
            && props.content_defined_chunking().is_none();
        let mut writer = ArrowWriter::try_new(w, schema.clone(), Some(props))?;
        if !one_group {
            writer.write(&batch)?;
            return Ok(writer.into_inner()?);
        }
        let (mut file, factory) = writer.into_serialized_writer()?;
        let writers = factory.create_column_writers(0)?;
        let fields = schema.fields();
        debug_assert_eq!(writers.len(), fields.len(), "one leaf per field");
        row_group_side_by_side(&mut file, writers, |c, w| {
            for leaf in compute_leaves(&fields[c], batch.column(c))? {
                w.write(&leaf)?;
            }
            Ok(())
        })?;
        Ok(file.into_inner()?)
    }

    /// The table as one Arrow batch, and the properties it is written
    /// with.
    fn batch(&self) -> Result<(RecordBatch, WriterProperties)> {
        let strings = |v: &Texts| -> ArrayRef { Arc::new(StringArray::from_iter_values(v.iter())) };
        let mut parent = StringBuilder::new();
        for (r, &p) in self.parent_index.iter().enumerate() {
            parent.append_option((p >= 0).then(|| self.parent.get(r)));
        }
        let mut mpu = Float64Builder::new();
        for m in &self.metres_per_unit {
            mpu.append_option(*m);
        }
        let mut ji = Int32Builder::new();
        ji.append_slice(&self.joint_index);
        let mut pi = Int32Builder::new();
        pi.append_slice(&self.parent_index);
        let mut frames = Int64Builder::new();
        frames.append_slice(&self.frames);
        let f64s = |v: &[f64]| -> ArrayRef { Arc::new(Float64Array::from(v.to_vec())) };
        let columns: Vec<(&str, ArrayRef, bool)> = vec![
            ("clip", strings(&self.clip), false),
            ("joint_index", Arc::new(ji.finish()), false),
            ("joint", strings(&self.joint), false),
            ("parent", Arc::new(parent.finish()), true),
            ("parent_index", Arc::new(pi.finish()), false),
            ("ox", f64s(&self.offsets[0]), false),
            ("oy", f64s(&self.offsets[1]), false),
            ("oz", f64s(&self.offsets[2]), false),
            ("frame_time", f64s(&self.frame_time), false),
            ("frames", Arc::new(frames.finish()), false),
            ("units", strings(&self.units), false),
            ("metres_per_unit", Arc::new(mpu.finish()), true),
            ("size", f64s(&self.size), false),
        ];
        let schema = Arc::new(Schema::new(
            columns
                .iter()
                .map(|(n, a, null)| Field::new(*n, a.data_type().clone(), *null))
                .collect::<Vec<_>>(),
        ));
        let batch =
            RecordBatch::try_new(schema.clone(), columns.into_iter().map(|c| c.1).collect())?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("bvhkit-dataset {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(vec![KeyValue::new(PAIR_KEY.to_string(), self.pair())]))
            .build();
        Ok((batch, props))
    }

    /// [`SkeletonTable::write`] through `ArrowWriter::write` alone (the
    /// reference the column-parallel encoding is tested against).
    #[cfg(test)]
    fn write_serial<W: Write + Send>(&self, w: W) -> Result<W> {
        let (batch, props) = self.batch()?;
        let mut writer = ArrowWriter::try_new(w, batch.schema(), Some(props))?;
        writer.write(&batch)?;
        Ok(writer.into_inner()?)
    }
}

/// The skeleton table's file beside a motion table: `walks.parquet` →
/// `walks.skeleton.parquet`.
#[must_use]
pub fn skeleton_path(out: &std::path::Path) -> std::path::PathBuf {
    out.with_extension("skeleton.parquet")
}

#[cfg(test)]
mod tests {
    //! The long table's directly encoded chunks against the `parquet`
    //! crate's Arrow writer (the reference): the same rows and the same
    //! chunk metadata, on the corpus and on synthetic clips of several
    //! pages, with every option.

    use arrow_array::RecordBatch;
    use bvhkit::Bvh;
    use parquet::arrow::arrow_reader::{
        ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
    };
    use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};

    use super::*;
    use crate::features::{Contacts, Rotations};

    fn write(clips: &[(String, Bvh)], o: &Options, group_rows: usize, direct: bool) -> Vec<u8> {
        let mut w = ParquetWriter::new(Vec::new(), o).unwrap().with_row_group_rows(group_rows);
        if !direct {
            w = w.with_arrow_encoder();
        }
        assert_eq!(w.direct, direct);
        for (name, bvh) in clips {
            w.write_clip(Clip::compute(name, bvh, o)).unwrap();
        }
        w.finish().unwrap().0
    }

    fn read(bytes: &[u8], selection: Option<RowSelection>) -> (Vec<RecordBatch>, ParquetMetaData) {
        let options = ArrowReaderOptions::new().with_offset_index_policy(PageIndexPolicy::Required);
        let mut b = ParquetRecordBatchReaderBuilder::try_new_with_options(
            bytes::Bytes::from(bytes.to_vec()),
            options,
        )
        .unwrap();
        if let Some(s) = selection {
            b = b.with_row_selection(s);
        }
        let meta = b.metadata().as_ref().clone();
        (b.build().unwrap().map(|r| r.unwrap()).collect(), meta)
    }

    fn same(direct: &[u8], arrow: &[u8], what: &str) {
        let (a, ma) = read(direct, None);
        let (b, mb) = read(arrow, None);
        let schema = a[0].schema();
        let a = arrow_select_concat(&a);
        let b = arrow_select_concat(&b);
        assert_eq!(a.schema(), b.schema(), "{what}");
        for (f, (x, y)) in schema.fields().iter().zip(a.columns().iter().zip(b.columns())) {
            assert_eq!(x.to_data(), y.to_data(), "{what}: column {}", f.name());
        }
        assert_eq!(ma.num_row_groups(), mb.num_row_groups(), "{what}");
        for (g, (ga, gb)) in ma.row_groups().iter().zip(mb.row_groups()).enumerate() {
            assert_eq!(ga.num_rows(), gb.num_rows());
            for (ca, cb) in ga.columns().iter().zip(gb.columns()) {
                let at = format!("{what}: row group {g}, column {}", ca.column_path());
                assert_eq!(ca.statistics(), cb.statistics(), "{at}");
                assert_eq!(ca.num_values(), cb.num_values(), "{at}");
                assert_eq!(ca.compression(), cb.compression(), "{at}");
                assert_eq!(ca.encodings_mask(), cb.encodings_mask(), "{at}");
                assert_eq!(
                    ca.dictionary_page_offset().is_some(),
                    cb.dictionary_page_offset().is_some(),
                    "{at}"
                );
                // Both list the same page encodings (the page counts differ:
                // 65,536 rows a page here).
                assert_eq!(ca.page_encoding_stats_mask(), cb.page_encoding_stats_mask(), "{at}");
                assert!(ca.page_encoding_stats_mask().is_some(), "{at}");
                assert!(ca.offset_index_offset().is_some(), "{at}: an offset index");
            }
        }
        // The offset index finds rows: a selection in the middle of a page
        // of a later row group reads what the whole file holds there.
        let rows = a.num_rows();
        let from = rows * 2 / 3 + 7;
        let n = (rows - from).min(70_000);
        let selection = RowSelection::from(vec![RowSelector::skip(from), RowSelector::select(n)]);
        let (part, _) = read(direct, Some(selection));
        let part = arrow_select_concat(&part);
        assert_eq!(part.num_rows(), n);
        for (x, y) in part.columns().iter().zip(a.columns()) {
            assert_eq!(x.to_data(), y.slice(from, n).to_data(), "{what}: rows {from}..");
        }
    }

    fn arrow_select_concat(b: &[RecordBatch]) -> RecordBatch {
        arrow_select::concat::concat_batches(&b[0].schema(), b).unwrap()
    }

    #[test]
    fn direct_long_chunks_equal_the_arrow_writers_on_the_corpus() {
        if bvhkit_testdata::corpus_or_skip("direct_long_chunks").is_none() {
            return;
        }
        let clips: Vec<(String, Bvh)> = bvhkit_testdata::corpus_files()
            .iter()
            .filter_map(|p| {
                let text = std::fs::read(p).ok()?;
                let (bvh, _) = bvhkit::ReadOptions::new().lenient(true).parse(&text).ok()?;
                Some((p.file_name()?.to_string_lossy().into_owned(), bvh))
            })
            .collect();
        assert!(clips.len() >= 40, "{} corpus clips", clips.len());
        let o = Options::default();
        same(
            &write(&clips, &o, ROW_GROUP_ROWS, true),
            &write(&clips, &o, ROW_GROUP_ROWS, false),
            "corpus",
        );
    }

    #[test]
    fn skeleton_table_columns_encoded_side_by_side_give_the_bytes_of_the_arrow_writer() {
        // The corpus's skeletons 12 times over (about the folder export's
        // 17,000 rows, several pages of names), a table of one clip, and
        // an empty one (no row group), each on a pool of two threads.
        let mut clips: Vec<(String, Bvh)> = (0..3)
            .map(|i| (format!("s{i}"), Bvh::parse(bvhkit_testdata::synth_text(i, 9, 4)).unwrap()))
            .collect();
        if bvhkit_testdata::corpus_or_skip("skeleton_table_side_by_side").is_some() {
            for p in bvhkit_testdata::corpus_files() {
                let Ok(text) = std::fs::read(&p) else { continue };
                let Ok((bvh, _)) = bvhkit::ReadOptions::new().lenient(true).parse(&text) else {
                    continue;
                };
                clips.push((p.file_name().unwrap().to_string_lossy().into_owned(), bvh));
            }
        }
        let o = Options::default();
        let table = |copies: usize, clips: &[(String, Bvh)]| {
            let mut t = SkeletonTable::default();
            for i in 0..copies {
                for (name, bvh) in clips {
                    t.add(&Clip::compute(&format!("r{i}_{name}"), bvh, &o));
                }
            }
            t
        };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        for (what, t) in [
            ("many", table(12, &clips)),
            ("one", table(1, &clips[..1])),
            ("empty", SkeletonTable::default()),
        ] {
            let side_by_side = pool.install(|| t.write(Vec::new())).unwrap();
            let serial = t.write_serial(Vec::new()).unwrap();
            assert!(side_by_side == serial, "{what}: {} rows, the bytes differ", t.len());
            assert!(!serial.is_empty(), "{what}");
        }
    }

    /// Pages handed to [`append_shared`], by every test.
    static SHARED_PAGES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// A `Vec<u8>`'s writer of shared bytes: appended, as a file writer
    /// writes them next.
    fn append_shared(w: &mut Vec<u8>, bytes: Shared, range: Range<usize>) -> std::io::Result<()> {
        SHARED_PAGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        w.extend_from_slice(&(*bytes).as_ref()[range]);
        Ok(())
    }

    #[test]
    fn prepared_clips_give_the_bytes_of_write_bvh() {
        // Clips prepared on other threads (`Preparer`, as `bvh export DIR`
        // does) and written in order give the file `write_bvh` gives, byte
        // for byte; a clip longer than a row group is not prepared (None)
        // and goes through `write_bvh` in both files.
        let clips: Vec<(String, Bvh)> = [(3, 20, 700), (5, 7, 1), (11, 60, 90), (4, 9, 40)]
            .iter()
            .enumerate()
            .map(|(i, &(seed, joints, frames))| {
                (
                    format!("c{i}"),
                    Bvh::parse(bvhkit_testdata::synth_text(seed, joints, frames)).unwrap(),
                )
            })
            .collect();
        for dtype in [Dtype::F64, Dtype::F32] {
            for rotations in [Rotations::Quat, Rotations::SixD, Rotations::Matrix] {
                let o = Options { dtype, rotations, ..Options::default() };
                let group = 6_000;
                let mut a = ParquetWriter::new(Vec::new(), &o).unwrap().with_row_group_rows(group);
                for (name, bvh) in &clips {
                    a.write_bvh(name, bvh).unwrap();
                }
                let (a, sa) = a.finish().unwrap();
                let mut b = ParquetWriter::new(Vec::new(), &o).unwrap().with_row_group_rows(group);
                let preparer = b.preparer();
                let prepared: Vec<_> = clips
                    .par_iter()
                    .map(|(name, bvh)| preparer.prepare(name, bvh).map(Result::unwrap))
                    .collect();
                // A clip of more rows than a row group is not prepared.
                let kinds: Vec<bool> = prepared.iter().map(Option::is_some).collect();
                let fits: Vec<bool> = clips
                    .iter()
                    .map(|(_, b)| b.motion().n_frames() * b.skeleton().len() <= group)
                    .collect();
                assert_eq!(kinds, fits, "{dtype:?} {rotations:?}");
                assert!(fits.contains(&true) && fits.contains(&false), "{fits:?}");
                for ((name, bvh), p) in clips.iter().zip(prepared) {
                    match p {
                        Some(p) => b.write_prepared(p).unwrap(),
                        None => b.write_bvh(name, bvh).unwrap(),
                    }
                }
                let (b, sb) = b.finish().unwrap();
                assert!(a == b, "{dtype:?} {rotations:?}: the files differ");
                assert_eq!(sa.pair(), sb.pair());
                // Again with the float64 page bodies shared: handed to the
                // writer from the column buffers, never copied through the
                // crate; and each clip's own work done in order on the
                // thread that prepares it (`parallel(false)`, as `bvh
                // export DIR` prepares the files of a folder): the same
                // bytes, and every buffer back in the free list once
                // written.
                let shared_before = SHARED_PAGES.load(std::sync::atomic::Ordering::Relaxed);
                let mut c = ParquetWriter::new(Vec::new(), &o)
                    .unwrap()
                    .with_row_group_rows(group)
                    .with_shared_pages(append_shared);
                let preparer = c.preparer().parallel(false);
                let prepared: Vec<_> = clips
                    .par_iter()
                    .map(|(name, bvh)| preparer.prepare(name, bvh).map(Result::unwrap))
                    .collect();
                let mut buffers = 0;
                for ((name, bvh), p) in clips.iter().zip(prepared) {
                    match p {
                        Some(p) => {
                            buffers += p.columns.len();
                            c.write_prepared(p).unwrap();
                        }
                        None => c.write_bvh(name, bvh).unwrap(),
                    }
                }
                let (c, sc) = c.finish().unwrap();
                assert_eq!(preparer.free.lock().unwrap().len(), buffers, "buffers back");
                assert!(a == c, "{dtype:?} {rotations:?}: the file with shared pages differs");
                assert_eq!(sa.pair(), sc.pair());
                let shared =
                    SHARED_PAGES.load(std::sync::atomic::Ordering::Relaxed) - shared_before;
                if cfg!(target_endian = "little") && dtype == Dtype::F64 {
                    // A page per number column of each prepared clip.
                    assert!(shared >= buffers, "{shared} pages shared for {buffers} columns");
                }
                let (batches, meta) = read(&b, None);
                assert!(meta.num_row_groups() > clips.len(), "a clip split in row groups");
                let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
                let want: usize = clips
                    .iter()
                    .map(|(_, bvh)| bvh.motion().n_frames() * bvh.skeleton().len())
                    .sum();
                assert_eq!(rows, want);
            }
        }
    }

    #[test]
    fn a_prepared_clip_with_a_value_that_is_not_finite_is_an_error() {
        let mut bvh = Bvh::parse(bvhkit_testdata::synth_text(3, 5, 10)).unwrap();
        // The root's first position channel: finite, but not as float32.
        bvh.motion_mut().values_mut()[0] = 1e308;
        let w =
            ParquetWriter::new(Vec::new(), &Options { dtype: Dtype::F32, ..Options::default() })
                .unwrap();
        let e = w.preparer().prepare("x", &bvh).expect("one row group").err();
        let direct = {
            let mut w = ParquetWriter::new(
                Vec::new(),
                &Options { dtype: Dtype::F32, ..Options::default() },
            )
            .unwrap();
            w.write_bvh("x", &bvh).err()
        };
        assert!(e.is_some(), "1e308 as float32 is refused");
        assert_eq!(e.map(|e| e.to_string()), direct.map(|e| e.to_string()));
    }

    #[test]
    fn direct_long_chunks_equal_the_arrow_writers_with_every_option() {
        // Names past the statistics' 64 bytes (truncated, the maximum
        // incremented), one clip of several pages and row groups.
        let long = "ü".repeat(40);
        let clips: Vec<(String, Bvh)> = [(3, 20, 700), (5, 7, 1), (11, 60, 1500)]
            .iter()
            .enumerate()
            .map(|(i, &(seed, joints, frames))| {
                let name = if i == 0 { long.clone() } else { format!("c{i}") };
                (name, Bvh::parse(bvhkit_testdata::synth_text(seed, joints, frames)).unwrap())
            })
            .collect();
        for dtype in [Dtype::F64, Dtype::F32] {
            for rotations in [Rotations::Quat, Rotations::SixD] {
                let o = Options {
                    dtype,
                    rotations,
                    velocities: true,
                    contacts: Some(Contacts::default()),
                    root_relative: rotations == Rotations::SixD,
                    ..Options::default()
                };
                let what = format!("{dtype:?} {rotations:?}");
                for group in [ROW_GROUP_ROWS, 50_000] {
                    same(&write(&clips, &o, group, true), &write(&clips, &o, group, false), &what);
                }
            }
        }
    }
}
