//! The long table's column chunks, encoded here rather than by the
//! `parquet` crate's Arrow writer: the values are known to repeat in a
//! pattern (`clip` is constant, `joint` and `parent` repeat every frame,
//! `frame` counts up), so the string columns are written as a dictionary
//! page of the names and RLE / bit-packed index pages without hashing a
//! string per row, and the numbers as PLAIN pages read straight from the
//! clip's arrays while the chunk is copied to the file (no Arrow array, no
//! page buffer).
//!
//! What is written is what the Arrow writer writes with this crate's
//! properties (PLAIN numbers, dictionary-encoded strings, uncompressed,
//! chunk statistics, an offset index), page headers serialized by the
//! crate itself; `tests` in `parquet.rs` compare both on the corpus.
//!
//! # Implementation notes
//!
//! The long table's column chunks written without the crate's encoder, since
//! their values follow a known pattern: a dictionary page of the names and
//! RLE/bit-packed index pages for `clip`/`joint`/`parent` (no per-row string
//! hashing; the indices and definition levels repeat every frame, so each run
//! of the hybrid encoding is packed once per phase of the frame and copied
//! after that, `long::Periodic`), PLAIN pages of 65,536 rows for the numbers
//! read straight from the clip's arrays while the chunk is copied into the file
//! (`Chunk` is a `ChunkReader` for `SerializedRowGroupWriter::append_column`),
//! page headers serialized by the crate, chunk statistics and offset index as
//! the crate makes them; `prepare` does all of that without keeping the numbers
//! (a `Prepared` chunk names its number pages by rows), and `Prepared::chunk`
//! attaches the column's values just before the copy (`encode` is the two in
//! one). Invariant: the rows and the chunk metadata (statistics, encodings,
//! page encodings) equal the Arrow writer's, tested on the corpus and with
//! every option (`parquet::tests`).

use std::io::{Read, Write};
use std::ops::Range;

use bytes::Bytes;
use parquet::basic::{Compression, Encoding, PageType};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::errors::{ParquetError, Result as PqResult};
use parquet::file::metadata::{ColumnChunkMetaData, PageEncodingStats};
use parquet::file::page_index::offset_index::{OffsetIndexMetaData, PageLocation};
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

use crate::features::Dtype;

/// Rows per data page (pages start on row boundaries, as an offset index
/// wants): 512 KiB of doubles.
pub(crate) const PAGE_ROWS: usize = 1 << 16;

/// The longest `min`/`max` of a string column's statistics, as the
/// `parquet` crate's default (`DEFAULT_STATISTICS_TRUNCATE_LENGTH`).
const TRUNCATE: usize = 64;

/// One column of the long table over a range of frames.
pub(crate) enum LongColumn<'a> {
    /// The clip name on every row.
    Clip(&'a str),
    /// The frame number: frame `f` on its `joints` rows.
    Frame,
    /// The joint names, every frame.
    Joint(&'a [String]),
    /// The parent names (null for roots), every frame.
    Parent(&'a [String], &'a [i32]),
    /// Numbers, one per row of the range encoded.
    Floats(&'a [f64], Dtype),
    /// Flags, one per row of the range encoded.
    Bools(&'a [bool]),
}

/// An encoded column chunk: page headers and small pages held as bytes,
/// PLAIN number pages as borrowed slices of the clip, converted to
/// little-endian bytes as they are read.
#[derive(Clone)]
pub(crate) struct Chunk<'a> {
    parts: Vec<Part<'a>>,
    len: u64,
}

#[derive(Clone)]
enum Part<'a> {
    Bytes(Bytes),
    Floats(&'a [f64], Dtype),
    /// Bytes the writer takes from elsewhere (`parquet::Spliced`): read as
    /// this many bytes, the reader's buffer left as it was.
    Hole(usize),
}

impl Part<'_> {
    fn len(&self) -> usize {
        match self {
            Part::Bytes(b) => b.len(),
            Part::Floats(v, d) => v.len() * width(*d),
            Part::Hole(n) => *n,
        }
    }
}

/// A part of a [`Prepared`] chunk: bytes, or the PLAIN body of rows
/// `range` of the column's values, read when the chunk is made.
enum Spec {
    Bytes(Bytes),
    Values(Range<usize>, Dtype),
}

impl Spec {
    fn len(&self) -> usize {
        match self {
            Spec::Bytes(b) => b.len(),
            Spec::Values(r, d) => r.len() * width(*d),
        }
    }
}

fn width(d: Dtype) -> usize {
    match d {
        Dtype::F64 => 8,
        Dtype::F32 => 4,
    }
}

impl Length for Chunk<'_> {
    fn len(&self) -> u64 {
        self.len
    }
}

impl<'a> ChunkReader for Chunk<'a> {
    type T = ChunkRead<'a>;

    fn get_read(&self, start: u64) -> PqResult<ChunkRead<'a>> {
        if start > self.len {
            return Err(ParquetError::EOF(format!(
                "offset {start} past the chunk's {} bytes",
                self.len
            )));
        }
        let mut r = ChunkRead { parts: self.parts.clone(), part: 0, at: 0 };
        r.skip(start as usize);
        Ok(r)
    }

    fn get_bytes(&self, start: u64, length: usize) -> PqResult<Bytes> {
        let mut out = vec![0; length];
        self.get_read(start)?.read_exact(&mut out)?;
        Ok(out.into())
    }
}

/// Reads a [`Chunk`]'s bytes in order.
pub(crate) struct ChunkRead<'a> {
    parts: Vec<Part<'a>>,
    part: usize,
    /// Bytes of `parts[part]` already read.
    at: usize,
}

impl ChunkRead<'_> {
    fn skip(&mut self, mut n: usize) {
        while self.part < self.parts.len() {
            let left = self.parts[self.part].len() - self.at;
            if n < left {
                self.at += n;
                return;
            }
            n -= left;
            self.part += 1;
            self.at = 0;
        }
    }
}

impl Read for ChunkRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut done = 0;
        while done < buf.len() && self.part < self.parts.len() {
            let out = &mut buf[done..];
            let n = match &self.parts[self.part] {
                Part::Bytes(b) => {
                    let n = out.len().min(b.len() - self.at);
                    out[..n].copy_from_slice(&b[self.at..self.at + n]);
                    n
                }
                Part::Hole(len) => out.len().min(len - self.at),
                Part::Floats(v, d) => {
                    let w = width(*d);
                    let (first, skip) = (self.at / w, self.at % w);
                    if skip != 0 || out.len() < w {
                        // A value split between two reads.
                        let bytes = le_bytes(v[first], *d);
                        let n = out.len().min(w - skip);
                        out[..n].copy_from_slice(&bytes[skip..skip + n]);
                        n
                    } else {
                        let k = (out.len() / w).min(v.len() - first);
                        let src = &v[first..first + k];
                        match d {
                            Dtype::F64 => {
                                for (o, x) in out.chunks_exact_mut(8).zip(src) {
                                    o.copy_from_slice(&x.to_le_bytes());
                                }
                            }
                            Dtype::F32 => {
                                for (o, x) in out.chunks_exact_mut(4).zip(src) {
                                    o.copy_from_slice(&(*x as f32).to_le_bytes());
                                }
                            }
                        }
                        k * w
                    }
                }
            };
            done += n;
            self.at += n;
            if self.at == self.parts[self.part].len() {
                self.part += 1;
                self.at = 0;
            }
        }
        Ok(done)
    }
}

fn le_bytes(x: f64, d: Dtype) -> [u8; 8] {
    let mut b = [0; 8];
    match d {
        Dtype::F64 => b = x.to_le_bytes(),
        Dtype::F32 => b[..4].copy_from_slice(&(x as f32).to_le_bytes()),
    }
    b
}

/// Encodes `column` for the frames `frames` of a clip of `joints` joints as
/// the column chunk described by `descr`: the chunk's bytes (offsets from 0)
/// and its metadata, for `SerializedRowGroupWriter::append_column`. Number
/// and flag columns hold the values of those frames' rows only.
pub(crate) fn encode<'a>(
    descr: &ColumnDescPtr,
    column: &LongColumn<'a>,
    frames: Range<usize>,
    joints: usize,
) -> PqResult<(Chunk<'a>, ColumnCloseResult)> {
    let values = match column {
        LongColumn::Floats(v, _) => *v,
        _ => &[],
    };
    Ok(prepare(descr, column, frames, joints)?.chunk(values))
}

/// A column chunk encoded but for the bodies of its number pages, which
/// [`Prepared::chunk`] reads from the column's values: all a chunk's
/// encoding costs (statistics, the string columns' pages, page headers),
/// done where the values are computed, while the chunk itself is made just
/// before it is copied to the file.
pub(crate) struct Prepared {
    parts: Vec<Spec>,
    len: u64,
    rows: usize,
    close: ColumnCloseResult,
}

impl Prepared {
    /// The chunk, its number pages read from `values` (the values
    /// [`prepare`] was given; empty for the other columns).
    ///
    /// # Panics
    /// When `values` is shorter than the rows of a number column.
    pub(crate) fn chunk(self, values: &[f64]) -> (Chunk<'_>, ColumnCloseResult) {
        let parts = self
            .parts
            .into_iter()
            .map(|p| match p {
                Spec::Bytes(b) => Part::Bytes(b),
                Spec::Values(r, d) => Part::Floats(&values[r], d),
            })
            .collect();
        debug_assert!(values.is_empty() || values.len() == self.rows);
        (Chunk { parts, len: self.len }, self.close)
    }

    /// [`Prepared::chunk`], but the float64 page bodies are holes: for
    /// each, `hole(offset, rows)` is told where it starts in the chunk and
    /// which rows of `values` it holds (their bytes, little-endian, are
    /// the body), and the chunk reads as that many bytes left unwritten.
    pub(crate) fn chunk_sharing(
        self,
        values: &[f64],
        mut hole: impl FnMut(u64, Range<usize>),
    ) -> (Chunk<'_>, ColumnCloseResult) {
        let mut offset = 0u64;
        let parts = self
            .parts
            .into_iter()
            .map(|p| {
                let part = match p {
                    Spec::Bytes(b) => Part::Bytes(b),
                    Spec::Values(r, Dtype::F64) => {
                        let n = r.len() * 8;
                        hole(offset, r);
                        Part::Hole(n)
                    }
                    Spec::Values(r, d) => Part::Floats(&values[r], d),
                };
                offset += part.len() as u64;
                part
            })
            .collect();
        debug_assert!(values.is_empty() || values.len() == self.rows);
        (Chunk { parts, len: self.len }, self.close)
    }

    /// Bytes of the chunk.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }
}

/// [`encode`] but for the bodies of the number pages ([`Prepared`]).
pub(crate) fn prepare(
    descr: &ColumnDescPtr,
    column: &LongColumn<'_>,
    frames: Range<usize>,
    joints: usize,
) -> PqResult<Prepared> {
    let rows = frames.len() * joints;
    let first_row = frames.start * joints;
    let mut parts: Vec<Spec> = Vec::new();
    let mut locations = Vec::new();
    let mut offset = 0u64;
    let mut data_pages = 0i32;
    let mut push_page = |parts: &mut Vec<Spec>, page: Page, body: Spec| -> PqResult<()> {
        let is_data = page.is_data_page();
        let header = header(page)?;
        let size = header.len() + body.len();
        if is_data {
            locations.push((offset, size, 0));
            data_pages += 1;
        }
        parts.push(Spec::Bytes(header.into()));
        parts.push(body);
        offset += size as u64;
        Ok(())
    };
    let dict_page = |values: &[&str]| -> (Page, Spec) {
        let mut buf = Vec::new();
        for v in values {
            buf.extend_from_slice(&(v.len() as u32).to_le_bytes());
            buf.extend_from_slice(v.as_bytes());
        }
        let buf = Bytes::from(buf);
        let page = Page::DictionaryPage {
            buf: buf.clone(),
            num_values: values.len() as u32,
            encoding: Encoding::PLAIN,
            is_sorted: false,
        };
        (page, Spec::Bytes(buf))
    };
    let data_page = |buf: Bytes, n: usize, encoding: Encoding| Page::DataPage {
        buf,
        num_values: n as u32,
        encoding,
        def_level_encoding: Encoding::RLE,
        rep_level_encoding: Encoding::RLE,
        statistics: None,
    };
    // A data page whose body is `buf`, as built.
    let bytes_page = |buf: Vec<u8>, n: usize, encoding: Encoding| -> (Page, Spec) {
        let buf = Bytes::from(buf);
        (data_page(buf.clone(), n, encoding), Spec::Bytes(buf))
    };
    let mut page_starts = Vec::new();
    let (dictionary, statistics) = match column {
        LongColumn::Clip(name) => {
            let (page, body) = dict_page(&[name]);
            push_page(&mut parts, page, body)?;
            for p in (0..rows).step_by(PAGE_ROWS) {
                let n = PAGE_ROWS.min(rows - p);
                let mut buf = vec![0u8]; // bit width 0: a one-entry dictionary
                rle_run(&mut buf, 0, n, 0);
                page_starts.push(p);
                let (page, body) = bytes_page(buf, n, Encoding::RLE_DICTIONARY);
                push_page(&mut parts, page, body)?;
            }
            (true, string_stats(descr, [*name].into_iter(), 0))
        }
        LongColumn::Joint(names) | LongColumn::Parent(names, _) => {
            let parents = match column {
                LongColumn::Parent(_, p) => Some(*p),
                _ => None,
            };
            let values: Vec<&str> = names.iter().map(String::as_str).collect();
            let (page, body) = dict_page(&values);
            push_page(&mut parts, page, body)?;
            let bw = bits(names.len().saturating_sub(1) as u64);
            // One frame's dictionary indices (the non-null ones for
            // `parent`) and definition levels: the pages repeat them, and
            // pack each run of them once per phase (`Periodic`).
            let (pattern, levels): (Vec<u32>, Vec<u32>) = match parents {
                None => ((0..joints as u32).collect(), Vec::new()),
                Some(par) => (
                    par.iter().filter(|p| **p >= 0).map(|p| *p as u32).collect(),
                    par.iter().map(|p| u32::from(*p >= 0)).collect(),
                ),
            };
            // Non-null rows among the first `j` joints of a frame.
            let mut before = vec![0usize; joints + 1];
            for j in 0..joints {
                let used = parents.is_none_or(|par| par[j] >= 0);
                before[j + 1] = before[j] + usize::from(used);
            }
            let used_before = |r: usize| (r / joints) * pattern.len() + before[r % joints];
            let mut indices = Periodic::new(&pattern, bw);
            let mut defined = Periodic::new(&levels, 1);
            for p in (0..rows).step_by(PAGE_ROWS) {
                let n = PAGE_ROWS.min(rows - p);
                let (r0, r1) = (first_row + p, first_row + p + n);
                let mut buf = Vec::with_capacity(8 + n * usize::from(bw) / 8 + n / 64);
                if parents.is_some() {
                    let mut l = Vec::with_capacity(n / 8 + 8);
                    defined.pack(&mut l, r0 % joints, n);
                    buf.extend_from_slice(&(l.len() as u32).to_le_bytes());
                    buf.extend_from_slice(&l);
                }
                buf.push(bw);
                let phase = before[r0 % joints];
                indices.pack(&mut buf, phase, used_before(r1) - used_before(r0));
                page_starts.push(p);
                let (page, body) = bytes_page(buf, n, Encoding::RLE_DICTIONARY);
                push_page(&mut parts, page, body)?;
            }
            let stats = match parents {
                None => string_stats(descr, values.iter().copied(), 0),
                Some(par) => {
                    let nulls = par.iter().filter(|p| **p < 0).count() * frames.len();
                    let used = par.iter().filter(|p| **p >= 0).map(|p| values[*p as usize]);
                    string_stats(descr, used, nulls as u64)
                }
            };
            (true, stats)
        }
        LongColumn::Frame => {
            for p in (0..rows).step_by(PAGE_ROWS) {
                let n = PAGE_ROWS.min(rows - p);
                // Row `r` is in frame `r / joints`: runs of one frame's
                // rows filled with its number.
                let mut buf = vec![0u8; n * 4];
                let (mut f, mut at) = ((first_row + p) / joints, 0);
                let mut run = joints - (first_row + p) % joints;
                while at < n {
                    let end = n.min(at + run);
                    let b = (f as i32).to_le_bytes();
                    for o in buf[at * 4..end * 4].chunks_exact_mut(4) {
                        o.copy_from_slice(&b);
                    }
                    (f, at, run) = (f + 1, end, joints);
                }
                page_starts.push(p);
                let (page, body) = bytes_page(buf, n, Encoding::PLAIN);
                push_page(&mut parts, page, body)?;
            }
            let (lo, hi) = (frames.start as i32, frames.end as i32 - 1);
            let signed = descr.sort_order().is_signed();
            let s = ValueStatistics::new(Some(lo), Some(hi), None, Some(0), false)
                .with_backwards_compatible_min_max(signed);
            (false, Statistics::Int32(s))
        }
        LongColumn::Floats(v, d) => {
            check_rows(v.len(), rows)?;
            for p in (0..rows).step_by(PAGE_ROWS) {
                let n = PAGE_ROWS.min(rows - p);
                let body = Spec::Values(p..p + n, *d);
                let page = data_page(zeros(body.len()), n, Encoding::PLAIN);
                page_starts.push(p);
                push_page(&mut parts, page, body)?;
            }
            let signed = descr.sort_order().is_signed();
            let s = match d {
                Dtype::F64 => {
                    let (min, max, nans) = f64_min_max(v);
                    Statistics::Double(
                        ValueStatistics::new(min, max, None, Some(0), false)
                            .with_nan_count(Some(nans))
                            .with_backwards_compatible_min_max(signed),
                    )
                }
                Dtype::F32 => {
                    let (min, max, nans) = f32_min_max(v);
                    Statistics::Float(
                        ValueStatistics::new(min, max, None, Some(0), false)
                            .with_nan_count(Some(nans))
                            .with_backwards_compatible_min_max(signed),
                    )
                }
            };
            (false, s)
        }
        LongColumn::Bools(v) => {
            check_rows(v.len(), rows)?;
            for p in (0..rows).step_by(PAGE_ROWS) {
                let n = PAGE_ROWS.min(rows - p);
                let mut buf = vec![0u8; n.div_ceil(8)];
                for (i, b) in v[p..p + n].iter().enumerate() {
                    buf[i / 8] |= u8::from(*b) << (i % 8);
                }
                page_starts.push(p);
                let (page, body) = bytes_page(buf, n, Encoding::PLAIN);
                push_page(&mut parts, page, body)?;
            }
            let any = |x: bool| v.contains(&x);
            let min = if any(false) { Some(false) } else { v.first().copied() };
            let max = if any(true) { Some(true) } else { v.first().copied() };
            let signed = descr.sort_order().is_signed();
            let s = ValueStatistics::new(min, max, None, Some(0), false)
                .with_backwards_compatible_min_max(signed);
            (false, Statistics::Boolean(s))
        }
    };
    let len = offset;
    let dict_len = if dictionary { parts[0].len() + parts[1].len() } else { 0 };
    let mut encodings = vec![Encoding::PLAIN, Encoding::RLE];
    let mut encoding_stats = Vec::new();
    if dictionary {
        encodings.push(Encoding::RLE_DICTIONARY);
        encoding_stats.push(PageEncodingStats {
            page_type: PageType::DICTIONARY_PAGE,
            encoding: Encoding::PLAIN,
            count: 1,
        });
    }
    encoding_stats.push(PageEncodingStats {
        page_type: PageType::DATA_PAGE,
        encoding: if dictionary { Encoding::RLE_DICTIONARY } else { Encoding::PLAIN },
        count: data_pages,
    });
    let rows_i64 = i64::try_from(rows).map_err(|_| ParquetError::General("rows".into()))?;
    let size = i64::try_from(len).map_err(|_| ParquetError::General("chunk size".into()))?;
    let metadata = ColumnChunkMetaData::builder(descr.clone())
        .set_compression(Compression::UNCOMPRESSED)
        .set_encodings(encodings)
        .set_page_encoding_stats(encoding_stats)
        .set_num_values(rows_i64)
        .set_total_compressed_size(size)
        .set_total_uncompressed_size(size)
        .set_dictionary_page_offset(dictionary.then_some(0))
        .set_data_page_offset(dict_len as i64)
        .set_statistics(statistics)
        .build()?;
    let page_locations = locations
        .iter()
        .zip(&page_starts)
        .map(|((offset, size, _), first)| PageLocation {
            offset: *offset as i64,
            compressed_page_size: *size as i32,
            first_row_index: *first as i64,
        })
        .collect();
    let close = ColumnCloseResult {
        bytes_written: len,
        rows_written: rows as u64,
        metadata,
        bloom_filter: None,
        column_index: None,
        offset_index: Some(OffsetIndexMetaData {
            page_locations,
            unencoded_byte_array_data_bytes: None,
        }),
    };
    Ok(Prepared { parts, len, rows, close })
}

/// That a column holds a value per row of the range encoded.
fn check_rows(values: usize, rows: usize) -> PqResult<()> {
    if values == rows {
        Ok(())
    } else {
        Err(ParquetError::General(format!("{values} values for {rows} rows")))
    }
}

/// Zero bytes standing in for a page's body while its header is made.
fn zeros(n: usize) -> Bytes {
    static ZEROS: [u8; PAGE_ROWS * 8] = [0; PAGE_ROWS * 8];
    Bytes::from_static(&ZEROS[..n])
}

/// The serialized header of `page`, as the crate's page writer writes it
/// (the header depends on the body's length, not on its bytes).
fn header(page: Page) -> PqResult<Vec<u8>> {
    /// Keeps what is written up to a bound (the header), drops the rest.
    struct Prefix(Vec<u8>);
    impl Write for Prefix {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = 4096usize.saturating_sub(self.0.len());
            self.0.extend_from_slice(&buf[..buf.len().min(room)]);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let body = page.buffer().len();
    let mut sink = TrackedWrite::new(Prefix(Vec::new()));
    let spec = {
        let mut w = SerializedPageWriter::new(&mut sink);
        w.write_page(CompressedPage::new(page, body))?
    };
    let header = spec.bytes_written as usize - body;
    let mut kept = sink.into_inner()?.0;
    if header > kept.len() {
        return Err(ParquetError::General("page header longer than expected".into()));
    }
    kept.truncate(header);
    Ok(kept)
}

/// Bits to store values up to `max`.
fn bits(max: u64) -> u8 {
    (64 - max.leading_zeros()) as u8
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An RLE run of the hybrid encoding: `count` times `value`.
fn rle_run(out: &mut Vec<u8>, value: u32, count: usize, bw: u8) {
    varint(out, (count as u64) << 1);
    out.extend_from_slice(&value.to_le_bytes()[..usize::from(bw).div_ceil(8)]);
}

/// [`bit_packed`] of a sequence that repeats `pattern`: each full run
/// packed once per phase of the pattern, then copied.
struct Periodic<'p> {
    pattern: &'p [u32],
    bw: u8,
    /// The bytes of the full run starting at each phase, once packed.
    runs: Vec<Option<Vec<u8>>>,
    values: Vec<u32>,
}

impl<'p> Periodic<'p> {
    fn new(pattern: &'p [u32], bw: u8) -> Periodic<'p> {
        Periodic { pattern, bw, runs: vec![None; pattern.len()], values: Vec::new() }
    }

    /// [`bit_packed`] of `pattern[(phase + i) % pattern.len()]` for `i` in
    /// `0..n` (the same bytes: its runs are packed one by one).
    fn pack(&mut self, out: &mut Vec<u8>, phase: usize, n: usize) {
        const RUN: usize = 63 * 8;
        let p = self.pattern.len();
        let mut at = 0;
        while at < n {
            let len = RUN.min(n - at);
            let ph = (phase + at) % p;
            if len == RUN
                && let Some(bytes) = &self.runs[ph]
            {
                out.extend_from_slice(bytes);
                at += len;
                continue;
            }
            self.values.clear();
            self.values.extend((0..len).map(|i| self.pattern[(ph + i) % p]));
            let start = out.len();
            bit_packed(out, &self.values, self.bw);
            if len == RUN {
                self.runs[ph] = Some(out[start..].to_vec());
            }
            at += len;
        }
    }
}

/// `values` as bit-packed runs of the hybrid encoding, at most 63 groups of
/// eight each (a one-byte header, as parquet-mr writes them); the last
/// group is padded with zeros.
fn bit_packed(out: &mut Vec<u8>, values: &[u32], bw: u8) {
    const RUN: usize = 63 * 8;
    for run in values.chunks(RUN) {
        let groups = run.len().div_ceil(8);
        varint(out, ((groups as u64) << 1) | 1);
        let start = out.len();
        out.resize(start + groups * usize::from(bw), 0);
        if bw == 0 {
            continue;
        }
        let packed = &mut out[start..];
        if bw <= 8 {
            // Eight values of at most eight bits fill `bw` bytes of a u64.
            let w = usize::from(bw);
            for (g, dst) in packed.chunks_exact_mut(w).enumerate() {
                let mut acc = 0u64;
                for (i, v) in run[g * 8..run.len().min(g * 8 + 8)].iter().enumerate() {
                    acc |= u64::from(*v) << (i * w);
                }
                dst.copy_from_slice(&acc.to_le_bytes()[..w]);
            }
            continue;
        }
        let (mut acc, mut n, mut at) = (0u64, 0u32, 0usize);
        for v in run.iter().copied().chain(std::iter::repeat_n(0, groups * 8 - run.len())) {
            acc |= u64::from(v) << n;
            n += u32::from(bw);
            while n >= 8 {
                packed[at] = acc as u8;
                at += 1;
                acc >>= 8;
                n -= 8;
            }
        }
    }
}

/// Statistics of a string column: min and max of the values used (byte
/// order, truncated to [`TRUNCATE`] bytes as the crate truncates them) and
/// the null count.
fn string_stats<'s>(
    descr: &ColumnDescPtr,
    used: impl Iterator<Item = &'s str>,
    nulls: u64,
) -> Statistics {
    let (mut min, mut max): (Option<&str>, Option<&str>) = (None, None);
    for v in used {
        if min.is_none_or(|m| v.as_bytes() < m.as_bytes()) {
            min = Some(v);
        }
        if max.is_none_or(|m| v.as_bytes() > m.as_bytes()) {
            max = Some(v);
        }
    }
    let signed = descr.sort_order().is_signed();
    let (Some(min), Some(max)) = (min, max) else {
        return ValueStatistics::<ByteArray>::new(None, None, None, Some(nulls), false)
            .with_backwards_compatible_min_max(signed)
            .into();
    };
    let (lo, lo_cut) = match (min.len() > TRUNCATE).then(|| truncate_utf8(min, TRUNCATE)).flatten()
    {
        Some(t) => (t, true),
        None => (min.as_bytes().to_vec(), false),
    };
    let (hi, hi_cut) = match (max.len() > TRUNCATE)
        .then(|| truncate_and_increment_utf8(max, TRUNCATE))
        .flatten()
    {
        Some(t) => (t, true),
        None => (max.as_bytes().to_vec(), false),
    };
    ValueStatistics::new(
        Some(ByteArray::from(lo)),
        Some(ByteArray::from(hi)),
        None,
        Some(nulls),
        signed,
    )
    .with_min_is_exact(!lo_cut)
    .with_max_is_exact(!hi_cut)
    .into()
}

/// The longest prefix of at most `length` bytes (the crate's rule).
fn truncate_utf8(data: &str, length: usize) -> Option<Vec<u8>> {
    let split = (1..=length).rfind(|x| data.is_char_boundary(*x))?;
    Some(data.as_bytes()[..split].to_vec())
}

/// A prefix of at most `length` bytes with its last character incremented:
/// an upper bound (the crate's rule).
fn truncate_and_increment_utf8(data: &str, length: usize) -> Option<Vec<u8>> {
    let lower = length.saturating_sub(3);
    let split = (lower..=length).rfind(|x| data.is_char_boundary(*x))?;
    let data = data.get(..split)?;
    for (idx, c) in data.char_indices().rev() {
        let len = c.len_utf8();
        if let Some(next) = char::from_u32(c as u32 + 1)
            && next.len_utf8() == len
        {
            let mut out = data.as_bytes()[..idx + len].to_vec();
            next.encode_utf8(&mut out[idx..]);
            return Some(out);
        }
    }
    None
}

/// Minimum and maximum in IEEE 754 total order, NaNs left out unless all
/// are NaN (then the total-order extremes of the NaNs), and the NaN count:
/// the crate's statistics of a float column.
///
/// Ordinary comparisons skip NaNs and run on SIMD lanes; they differ from
/// the total order only between -0.0 and +0.0, settled by a second look
/// when an extreme is a zero.
fn f64_min_max(v: &[f64]) -> (Option<f64>, Option<f64>, u64) {
    const L: usize = 8;
    let (mut lo, mut hi, mut nan) = ([f64::INFINITY; L], [f64::NEG_INFINITY; L], [false; L]);
    let lanes = v.chunks_exact(L);
    let rest = lanes.remainder();
    for c in lanes {
        for k in 0..L {
            let x = c[k];
            nan[k] |= x.is_nan();
            lo[k] = if x < lo[k] { x } else { lo[k] };
            hi[k] = if x > hi[k] { x } else { hi[k] };
        }
    }
    for &x in rest {
        nan[0] |= x.is_nan();
        lo[0] = if x < lo[0] { x } else { lo[0] };
        hi[0] = if x > hi[0] { x } else { hi[0] };
    }
    // NaNs are rare: counted in a second pass only when there is one.
    let nans = if nan.contains(&true) { v.iter().filter(|x| x.is_nan()).count() as u64 } else { 0 };
    if v.is_empty() {
        return (None, None, 0);
    }
    if nans == v.len() as u64 {
        let lo = v.iter().copied().min_by(f64::total_cmp);
        let hi = v.iter().copied().max_by(f64::total_cmp);
        return (lo, hi, nans);
    }
    let mut lo = lo.iter().copied().fold(f64::INFINITY, |a, b| if b < a { b } else { a });
    let mut hi = hi.iter().copied().fold(f64::NEG_INFINITY, |a, b| if b > a { b } else { a });
    let zero = |negative: bool| v.iter().any(|x| *x == 0.0 && x.is_sign_negative() == negative);
    if lo == 0.0 {
        lo = if zero(true) { -0.0 } else { 0.0 };
    }
    if hi == 0.0 {
        hi = if zero(false) { 0.0 } else { -0.0 };
    }
    (Some(lo), Some(hi), nans)
}

/// [`f64_min_max`] of the values as `f32`.
fn f32_min_max(v: &[f64]) -> (Option<f32>, Option<f32>, u64) {
    let key = |x: f32| {
        let b = x.to_bits() as i32;
        b ^ (((b >> 31) as u32) >> 1) as i32
    };
    let (mut lo, mut hi, mut nans) = (i32::MAX, i32::MIN, 0u64);
    for &x in v {
        let x = x as f32;
        let k = key(x);
        let nan = x.is_nan();
        nans += u64::from(nan);
        lo = if nan { lo } else { lo.min(k) };
        hi = if nan { hi } else { hi.max(k) };
    }
    let back = |k: i32| f32::from_bits((k ^ (((k >> 31) as u32) >> 1) as i32) as u32);
    if v.is_empty() {
        (None, None, 0)
    } else if nans == v.len() as u64 {
        let lo = v.iter().map(|x| *x as f32).min_by(f32::total_cmp);
        let hi = v.iter().map(|x| *x as f32).max_by(f32::total_cmp);
        (lo, hi, nans)
    } else {
        (Some(back(lo)), Some(back(hi)), nans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hybrid encoding decoded as its specification says.
    fn decode_hybrid(mut b: &[u8], bw: u8, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        while out.len() < n {
            let (mut h, mut shift) = (0u64, 0);
            loop {
                let byte = b[0];
                b = &b[1..];
                h |= u64::from(byte & 0x7f) << shift;
                shift += 7;
                if byte < 0x80 {
                    break;
                }
            }
            if h & 1 == 0 {
                let w = usize::from(bw).div_ceil(8);
                let mut v = [0u8; 4];
                v[..w].copy_from_slice(&b[..w]);
                b = &b[w..];
                out.extend(std::iter::repeat_n(u32::from_le_bytes(v), (h >> 1) as usize));
            } else {
                let count = (h >> 1) as usize * 8;
                for i in 0..count {
                    let mut v = 0u32;
                    for k in 0..usize::from(bw) {
                        let bit = i * usize::from(bw) + k;
                        v |= u32::from((b[bit / 8] >> (bit % 8)) & 1) << k;
                    }
                    out.push(v);
                }
                b = &b[count * usize::from(bw) / 8..];
            }
        }
        out.truncate(n);
        out
    }

    #[test]
    fn hybrid_runs_decode_to_their_values() {
        for bw in [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 20] {
            let values: Vec<u32> = (0..1234u32)
                .map(|i| i.wrapping_mul(2654435761).wrapping_add(i >> 3) % (1 << bw))
                .collect();
            let mut b = Vec::new();
            bit_packed(&mut b, &values, bw);
            assert_eq!(decode_hybrid(&b, bw, values.len()), values, "bit width {bw}");
        }
        let mut b = Vec::new();
        rle_run(&mut b, 5, 70_000, 3);
        assert_eq!(decode_hybrid(&b, 3, 70_000), vec![5; 70_000]);
        let mut b = Vec::new();
        rle_run(&mut b, 0, 9, 0);
        assert_eq!(b, [18], "a run of a one-entry dictionary has no value bytes");
    }

    #[test]
    fn periodic_runs_are_the_bytes_of_the_values() {
        for (pattern, bw) in
            [(vec![0u32, 1, 2, 3, 4, 5, 6], 3u8), (vec![1, 0, 1, 1], 1), (vec![5], 3)]
        {
            let mut periodic = Periodic::new(&pattern, bw);
            for (phase, n) in
                [(0, 0), (0, 504), (3, 1500), (1, 2017), (0, 5000), (2, 503), (3, 505)]
            {
                let phase = phase % pattern.len();
                let values: Vec<u32> =
                    (0..n).map(|i| pattern[(phase + i) % pattern.len()]).collect();
                let (mut want, mut got) = (Vec::new(), Vec::new());
                bit_packed(&mut want, &values, bw);
                periodic.pack(&mut got, phase, n);
                assert_eq!(got, want, "{pattern:?} from {phase}, {n} values");
            }
        }
    }

    #[test]
    fn float_statistics_follow_total_order_without_nans() {
        let v = [1.5, f64::NAN, -0.0, 0.0, -3.0, f64::INFINITY];
        let (lo, hi, nans) = f64_min_max(&v);
        assert_eq!((lo, hi, nans), (Some(-3.0), Some(f64::INFINITY), 1));
        let (lo, hi, _) = f64_min_max(&[0.0, -0.0]);
        assert_eq!(lo.unwrap().to_bits(), (-0.0f64).to_bits());
        assert_eq!(hi.unwrap().to_bits(), 0.0f64.to_bits());
        let (lo, hi, nans) = f64_min_max(&[f64::NAN, -f64::NAN]);
        assert!(lo.unwrap().is_nan() && hi.unwrap().is_nan() && nans == 2);
        assert!(lo.unwrap().is_sign_negative() && hi.unwrap().is_sign_positive());
        // Against the total order, written plainly, over lanes and a rest.
        let v: Vec<f64> = (0..37)
            .map(|i| match i % 9 {
                0 => f64::NAN,
                1 => -0.0,
                2 => 0.0,
                _ => (f64::from(i) * 0.37).sin() * 1e3,
            })
            .collect();
        for n in 1..v.len() {
            let want: Vec<f64> = v[..n].iter().copied().filter(|x| !x.is_nan()).collect();
            let (lo, hi, nans) = f64_min_max(&v[..n]);
            assert_eq!(nans as usize, n - want.len());
            if want.is_empty() {
                assert!(lo.unwrap().is_nan());
                continue;
            }
            let wlo = want.iter().copied().min_by(f64::total_cmp).unwrap();
            let whi = want.iter().copied().max_by(f64::total_cmp).unwrap();
            assert_eq!(
                (lo.unwrap().to_bits(), hi.unwrap().to_bits()),
                (wlo.to_bits(), whi.to_bits()),
                "{n}"
            );
        }
        let (lo, hi, _) = f64_min_max(&[-0.0, -0.0]);
        assert_eq!(
            (lo.unwrap().to_bits(), hi.unwrap().to_bits()),
            ((-0.0f64).to_bits(), (-0.0f64).to_bits())
        );
        let (lo, hi, nans) = f32_min_max(&[2.0, 1e300, f64::NAN]);
        assert_eq!((lo, hi, nans), (Some(2.0), Some(f32::INFINITY), 1));
    }

    #[test]
    fn a_chunk_reads_back_whole_or_in_odd_pieces() {
        let v = [1.0, -2.5, 3.25];
        let chunk = Chunk {
            parts: vec![
                Part::Bytes(Bytes::from_static(b"ab")),
                Part::Floats(&v, Dtype::F64),
                Part::Floats(&v[1..], Dtype::F32),
            ],
            len: 2 + 24 + 8,
        };
        let mut want = b"ab".to_vec();
        for x in v {
            want.extend_from_slice(&x.to_le_bytes());
        }
        for x in &v[1..] {
            want.extend_from_slice(&(*x as f32).to_le_bytes());
        }
        let mut all = Vec::new();
        chunk.get_read(0).unwrap().read_to_end(&mut all).unwrap();
        assert_eq!(all, want);
        for step in [1, 3, 5, 7, 9] {
            let mut r = chunk.get_read(1).unwrap();
            let mut got = Vec::new();
            let mut buf = vec![0; step];
            loop {
                let n = r.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            assert_eq!(got, want[1..], "reads of {step} bytes");
        }
        assert_eq!(chunk.get_bytes(5, 6).unwrap(), want[5..11]);
    }
}
