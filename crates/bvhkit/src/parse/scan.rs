//! The motion values: a stream of numbers, with per-line statistics.
//!
//! Motion is read as a token stream (frames = values / channels), which is
//! what flattened and wrapped files need. Line statistics are kept on the
//! side so that the common layout (one frame per line) is verified for free
//! and deviations get a precise warning or error.

use crate::number::parse_number;

/// What the lines of a motion section looked like.
#[derive(Clone, Debug, Default)]
pub(crate) struct RowStats {
    /// Lines holding at least one value.
    pub(crate) rows: u64,
    /// Values on the first such line.
    pub(crate) first_len: u64,
    /// Whether every such line holds `first_len` values.
    pub(crate) uniform: bool,
    /// Lines whose value count is not the channel count.
    pub(crate) irregular: u64,
    /// The first such line: (byte offset, values, index among rows).
    pub(crate) first_irregular: Option<(usize, u64, u64)>,
    /// The last line with values: (byte offset, values).
    pub(crate) last: Option<(usize, u64)>,
    /// `\n` and `\r` bytes seen (to count empty frames when there are no channels).
    pub(crate) lf: u64,
    pub(crate) cr: u64,
    cur_start: usize,
    cur_len: u64,
}

impl RowStats {
    #[inline]
    fn end_line(&mut self, channels: u64) {
        if self.cur_len == 0 {
            return;
        }
        let len = self.cur_len;
        if self.rows == 0 {
            self.first_len = len;
            self.uniform = true;
        } else if len != self.first_len {
            self.uniform = false;
        }
        if len != channels {
            self.irregular += 1;
            if self.first_irregular.is_none() {
                self.first_irregular = Some((self.cur_start, len, self.rows));
            }
        }
        self.rows += 1;
        self.last = Some((self.cur_start, len));
        self.cur_len = 0;
    }

    /// Statistics of two consecutive stretches of lines (`self` first).
    pub(crate) fn merge(mut self, b: RowStats) -> RowStats {
        if b.rows > 0 {
            if self.rows == 0 {
                self.first_len = b.first_len;
                self.uniform = b.uniform;
            } else {
                self.uniform = self.uniform && b.uniform && self.first_len == b.first_len;
            }
            if self.first_irregular.is_none() {
                self.first_irregular = b.first_irregular.map(|(o, l, r)| (o, l, r + self.rows));
            }
            self.last = b.last;
        }
        self.rows += b.rows;
        self.irregular += b.irregular;
        self.lf += b.lf;
        self.cr += b.cr;
        self
    }

    /// Where the line being read started, if it holds a value yet.
    pub(crate) fn open_line_start(&self) -> Option<usize> {
        (self.cur_len > 0).then_some(self.cur_start)
    }

    /// Line terminators seen, whatever the convention.
    pub(crate) fn line_ends(&self) -> u64 {
        self.lf.max(self.cr)
    }
}

/// A bad token: its byte range in the whole input.
pub(crate) struct BadToken {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Scans `data` (which starts at byte `base` of the input) for numbers.
///
/// With `last == false`, a token touching the end of `data` may be cut and
/// is left for the next call: the return value is the number of bytes
/// consumed. Line state carries over in `stats` between calls.
#[inline(never)]
pub(crate) fn scan(
    data: &[u8],
    base: usize,
    channels: u64,
    out: &mut Vec<f64>,
    stats: &mut RowStats,
    last: bool,
) -> Result<usize, BadToken> {
    let n = data.len();
    let mut i = 0;
    while i < n {
        let b = data[i];
        if b == b' ' || b == b'\t' {
            i += 1;
            continue;
        }
        if b == b'\n' {
            stats.lf += 1;
            stats.end_line(channels);
            i += 1;
            continue;
        }
        if b == b'\r' {
            stats.cr += 1;
            stats.end_line(channels);
            i += 1;
            continue;
        }
        if b == b'\x0b' || b == b'\x0c' {
            i += 1;
            continue;
        }
        match parse_number(data, i) {
            Ok((v, end)) => {
                if end == n && !last {
                    if end - i < 1024 {
                        return Ok(i);
                    }
                    return Err(BadToken { start: base + i, end: base + end });
                }
                if stats.cur_len == 0 {
                    stats.cur_start = base + i;
                }
                stats.cur_len += 1;
                out.push(v);
                i = end;
            }
            Err(end) => {
                if end == n && !last && end - i < 1024 {
                    return Ok(i);
                }
                return Err(BadToken { start: base + i, end: base + end });
            }
        }
    }
    if last {
        stats.end_line(channels);
    }
    Ok(n)
}

/// Scans a whole in-memory motion section, split over threads when large.
///
/// With `parallel == false`, or one worker thread, or a small section, this
/// is one pass on the calling thread. Otherwise the section is cut at line
/// ends into a few chunks per thread, each scanned into its own buffer, and
/// the buffers are copied into the final one in parallel as well: a serial
/// concatenation would cost as much as the scan saves on two cores.
pub(crate) fn scan_all(
    data: &[u8],
    base: usize,
    channels: u64,
    parallel: bool,
) -> Result<(Vec<f64>, RowStats), BadToken> {
    const MIN_CHUNK: usize = 1 << 20;
    let threads = if parallel { worker_count() } else { 1 };
    if threads <= 1 || data.len() < 2 * MIN_CHUNK {
        let mut out = Vec::with_capacity(data.len() / 6);
        let mut stats = RowStats::default();
        scan(data, base, channels, &mut out, &mut stats, true)?;
        return Ok((out, stats));
    }
    let n_chunks = (data.len() / MIN_CHUNK).clamp(1, threads * 4);
    // Cut at line ends so that no line straddles two chunks.
    let mut bounds = vec![0usize];
    for k in 1..n_chunks {
        let mut cut = (data.len() * k / n_chunks).max(*bounds.last().unwrap_or(&0));
        while cut < data.len() && data[cut] != b'\n' && data[cut] != b'\r' {
            cut += 1;
        }
        bounds.push((cut + 1).min(data.len()));
    }
    bounds.push(data.len());
    let pieces: Vec<(usize, usize)> =
        bounds.windows(2).map(|w| (w[0], w[1])).filter(|(a, b)| a < b).collect();
    let results = run_chunks(&pieces, |&(a, b)| {
        let mut out = Vec::with_capacity((b - a) / 6);
        let mut stats = RowStats::default();
        scan(&data[a..b], base + a, channels, &mut out, &mut stats, true).map(|_| (out, stats))
    });
    let mut parts = Vec::with_capacity(results.len());
    let mut stats = RowStats::default();
    for r in results {
        let (v, s) = r?;
        stats = stats.merge(s);
        parts.push(v);
    }
    Ok((concat(parts), stats))
}

/// Concatenates `parts` into one vector, copying in parallel.
#[cfg(feature = "parallel")]
fn concat(parts: Vec<Vec<f64>>) -> Vec<f64> {
    use rayon::prelude::*;
    let total = parts.iter().map(Vec::len).sum();
    // Zeroed memory comes from the allocator untouched, so its pages are
    // first written (and faulted in) by the copying threads.
    let mut values = vec![0.0; total];
    let mut dst: Vec<(&mut [f64], Vec<f64>)> = Vec::with_capacity(parts.len());
    let mut rest = &mut values[..];
    for p in parts {
        let (head, tail) = rest.split_at_mut(p.len());
        dst.push((head, p));
        rest = tail;
    }
    dst.par_iter_mut().for_each(|(d, s)| d.copy_from_slice(s));
    values
}

#[cfg(not(feature = "parallel"))]
fn concat(parts: Vec<Vec<f64>>) -> Vec<f64> {
    parts.concat()
}

#[cfg(feature = "parallel")]
fn worker_count() -> usize {
    rayon::current_num_threads()
}

#[cfg(not(feature = "parallel"))]
fn worker_count() -> usize {
    1
}

#[cfg(feature = "parallel")]
fn run_chunks<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    use rayon::prelude::*;
    items.par_iter().map(f).collect()
}

#[cfg(not(feature = "parallel"))]
fn run_chunks<T, R>(items: &[T], f: impl Fn(&T) -> R) -> Vec<R> {
    items.iter().map(f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, c: u64) -> (Vec<f64>, RowStats) {
        let Ok(r) = scan_all(text.as_bytes(), 0, c, false) else { panic!("bad token") };
        r
    }

    #[test]
    fn regular_rows() {
        let (v, s) = run("1 2 3\n4 5 6\r\n7 8 9", 3);
        assert_eq!(v, [1., 2., 3., 4., 5., 6., 7., 8., 9.]);
        assert_eq!((s.rows, s.first_len, s.uniform, s.irregular), (3, 3, true, 0));
    }

    #[test]
    fn irregular_rows_are_located() {
        let text = "1 2 3\n4 5\n6 7 8 9\n";
        let (v, s) = run(text, 3);
        assert_eq!(v.len(), 9);
        assert_eq!(s.irregular, 2);
        assert_eq!(s.first_irregular, Some((6, 2, 1)));
        assert_eq!(s.last, Some((10, 4)));
    }

    #[test]
    fn chunked_and_streamed_scans_agree_with_one_pass() {
        let mut text = String::new();
        for i in 0..200_000 {
            text.push_str(&format!("{i} -{i}.5 {i}e-3\n"));
        }
        text.push_str("1 2\n");
        let (v1, s1) = scan_all(text.as_bytes(), 0, 3, false).ok().unwrap();
        let (v2, s2) = scan_all(text.as_bytes(), 0, 3, true).ok().unwrap();
        assert_eq!(v1, v2);
        assert_eq!(
            (s1.rows, s1.irregular, s1.first_irregular, s1.last),
            (s2.rows, s2.irregular, s2.first_irregular, s2.last)
        );
        // Streaming in small pieces gives the same values too.
        let bytes = text.as_bytes();
        let (mut out, mut st, mut pos) = (Vec::new(), RowStats::default(), 0);
        let mut end = 0;
        while end < bytes.len() {
            end = (end + 4093).min(bytes.len());
            let used =
                scan(&bytes[pos..end], pos, 3, &mut out, &mut st, end == bytes.len()).ok().unwrap();
            pos += used;
        }
        assert_eq!(out, v1);
        assert_eq!((st.rows, st.first_irregular), (s1.rows, s1.first_irregular));
    }

    #[test]
    fn bad_tokens_are_reported_with_their_range() {
        let Err(e) = scan_all(b"1 2 x3 4", 10, 2, false) else { panic!() };
        assert_eq!((e.start, e.end), (14, 16));
    }
}
