//! A few chosen frames of a BVH text in memory, read from their own lines
//! without parsing the others ([`ReadOptions::sample_frames`]).
//!
//! # Implementation notes
//!
//! `ReadOptions::sample_frames`, chosen frames of a text in memory read from
//! their own lines alone (line ends by `memchr`, counted in 256 KiB pieces on
//! the pool, then each chosen line looked for in its own piece; only those
//! lines parsed, by `number::parse_number` in the whole text as the scanner
//! does, so the reader's bits), under the assumption that each motion line is a
//! frame; `None` where that visibly fails (the line count is not `Frames:`, a
//! chosen line is not one frame). The lines it does not read are trusted:
//! callers that need the reader's frames check them when they read the file
//! (`bvh edit`'s up-axis detection).

use super::ReadOptions;
use super::header::{Header, HeaderParser, Stop};
use crate::error::Result;
use crate::number::{is_space, parse_number};

impl ReadOptions {
    /// The values of frames `frames` (frame numbers in ascending order) of
    /// a whole BVH text in memory, such as a memory-mapped file, read from
    /// their own lines alone: the motion's lines are found by searching
    /// for line ends, and only the chosen lines are parsed. Returns
    /// `frames.len()` frames of the skeleton's channel count, one after
    /// the other.
    ///
    /// This assumes that each line of the motion section is one frame,
    /// which is how nearly every file is written, and gives `Ok(None)`
    /// where that visibly fails: no `Frames:`, a number of lines other
    /// than `Frames:` declares (blank lines between frames, frames
    /// wrapped over several lines, lines ended by a lone `\r`), a chosen
    /// line that does not hold exactly one frame's values or holds a
    /// token that is not a number, a frame number past the last line, or
    /// frame numbers out of order. Where the assumption holds, the values
    /// are bit for bit those [`ReadOptions::parse`] and [`super::FrameReader`]
    /// give (the same number parser reads them, from the same first byte).
    ///
    /// Lines that are not chosen are not read, so a file can hold
    /// something they would refuse or read differently (an unchosen line
    /// with a value too few and another with one too many shift the frames
    /// between them) and still give `Some`: a caller that must have the
    /// reader's frames compares them when it reads the file anyway, as
    /// `bvh edit` does with the frames it detects the up axis on.
    ///
    /// The cost is the header's parse, a search for line ends over the
    /// motion (a few milliseconds for 100 MB) and the chosen lines.
    ///
    /// # Errors
    /// When the header (hierarchy and motion header) cannot be read, as
    /// [`ReadOptions::frame_reader_slice`].
    ///
    /// # Example
    /// ```
    /// let text = b"HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 2 Xrotation Yrotation }
    /// MOTION Frames: 3 Frame Time: 0.1
    /// 1 2
    /// 3 4\r
    /// 5 6
    /// ";
    /// let picked = bvhkit::ReadOptions::new().sample_frames(text, &[0, 2])?;
    /// assert_eq!(picked, Some(vec![1.0, 2.0, 5.0, 6.0]));
    /// // Frames: says 3, but five lines hold them: no answer.
    /// let wrapped = b"HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 2 Xrotation Yrotation }
    /// MOTION Frames: 3 Frame Time: 0.1
    /// 1 2
    /// 3
    /// 4
    /// 5
    /// 6
    /// ";
    /// assert_eq!(bvhkit::ReadOptions::new().sample_frames(wrapped, &[0])?, None);
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn sample_frames(&self, bytes: &[u8], frames: &[usize]) -> Result<Option<Vec<f64>>> {
        self.sample_frames_as(bytes, frames, None)
    }

    /// [`ReadOptions::sample_frames`], calling `release(n)` as the search
    /// for line ends goes (every 8 MiB of the motion, offsets
    /// increasing): it will not read `bytes[..n]` again but for the few
    /// chosen lines. A caller holding a mapped file may drop those pages
    /// from its memory (a private read-only map gives the same bytes when
    /// a page is read again), so that the search holds a window of the
    /// text, not the whole text, in memory.
    ///
    /// # Errors
    /// As [`ReadOptions::sample_frames`].
    pub fn sample_frames_releasing(
        &self,
        bytes: &[u8],
        frames: &[usize],
        release: &(dyn Fn(usize) + Sync),
    ) -> Result<Option<Vec<f64>>> {
        self.sample_frames_as(bytes, frames, Some(release))
    }

    fn sample_frames_as(
        &self,
        bytes: &[u8],
        frames: &[usize],
        release: Option<&(dyn Fn(usize) + Sync)>,
    ) -> Result<Option<Vec<f64>>> {
        let header = match HeaderParser::new(bytes, true, self.lenient).parse() {
            Ok(h) => h,
            Err(Stop::Fatal(e)) => return Err(e),
            Err(Stop::NeedMore) => unreachable!("complete input never needs more"),
        };
        Ok(sample(bytes, &header, frames, release))
    }
}

/// [`ReadOptions::sample_frames`] once the header is read.
fn sample(
    bytes: &[u8],
    header: &Header,
    frames: &[usize],
    release: Option<&(dyn Fn(usize) + Sync)>,
) -> Option<Vec<f64>> {
    let channels = header.skeleton.n_channels();
    let (declared, _) = header.frames_declared?;
    if channels == 0 || frames.windows(2).any(|w| w[0] > w[1]) {
        return None;
    }
    let start = header.data_start;
    // Whitespace at the end (the last newline, blank last lines) ends no
    // frame.
    let end = bytes[start..].iter().rposition(|&b| !is_space(b)).map_or(start, |i| start + i + 1);
    let data = &bytes[start..end];
    // The rest of the `Frame Time:` line is a line of the motion only when
    // it holds a value (the reader takes a first frame there).
    let first_end = memchr::memchr(b'\n', data).unwrap_or(data.len());
    let skip = usize::from(data[..first_end].iter().all(|&b| is_space(b)));
    // The line ends of each piece of the motion, counted (on the pool for
    // a large text); line `k` starts after the `k`th line end.
    let counts = piece_line_ends(data, |n| {
        if let Some(release) = release {
            release(start + n);
        }
    });
    let ends: usize = counts.iter().sum();
    let lines = ends + 1 - skip;
    if lines as u64 != declared {
        return None;
    }
    // The chosen lines, as ranges of `bytes`.
    let mut picked: Vec<(usize, usize)> = Vec::with_capacity(frames.len());
    for &frame in frames {
        let line = frame.checked_add(skip).filter(|&l| l <= ends)?;
        let from = match line {
            0 => 0,
            // After the `line`th line end: found in its piece.
            _ => {
                let (mut piece, mut before) = (0, 0);
                while before + counts[piece] < line {
                    before += counts[piece];
                    piece += 1;
                }
                let at = piece * LINE_PIECE;
                let chunk = &data[at..data.len().min(at + LINE_PIECE)];
                at + memchr::memchr_iter(b'\n', chunk).nth(line - before - 1)? + 1
            }
        };
        let to = memchr::memchr(b'\n', &data[from..]).map_or(data.len(), |i| from + i);
        picked.push((start + from, start + to));
    }
    let mut out = Vec::with_capacity(frames.len() * channels);
    for (from, to) in picked {
        if !line_values(bytes, from, to, channels, &mut out) {
            return None;
        }
    }
    Some(out)
}

/// Bytes per piece of the motion whose line ends are counted apart
/// ([`piece_line_ends`]).
const LINE_PIECE: usize = 256 << 10;

/// Bytes of the motion searched for line ends before the bytes searched
/// are released ([`ReadOptions::sample_frames_releasing`]): 32 pieces.
const RELEASE_WINDOW: usize = 32 * LINE_PIECE;

/// The number of line ends (`\n`) in each [`LINE_PIECE`] of `data`, on
/// rayon's pool (with the `parallel` feature) when there are several: a
/// chosen line is then looked for in its own piece only. `searched(n)` is
/// called after each [`RELEASE_WINDOW`] of `data` with the end of the
/// bytes searched so far (the last call with `data.len()`).
fn piece_line_ends(data: &[u8], searched: impl Fn(usize)) -> Vec<usize> {
    let count = |piece: &[u8]| memchr::memchr_iter(b'\n', piece).count();
    let mut counts = Vec::with_capacity(data.len().div_ceil(LINE_PIECE));
    for (k, window) in data.chunks(RELEASE_WINDOW).enumerate() {
        #[cfg(feature = "parallel")]
        if window.len() > 2 * LINE_PIECE {
            use rayon::prelude::*;
            counts.par_extend(window.par_chunks(LINE_PIECE).map(count));
            searched(k * RELEASE_WINDOW + window.len());
            continue;
        }
        counts.extend(window.chunks(LINE_PIECE).map(count));
        searched(k * RELEASE_WINDOW + window.len());
    }
    counts
}

/// Appends the values of the line `bytes[from..to]` (its `\n` excluded) to
/// `out` when it holds exactly `channels` numbers, separated as the
/// reader's scanner allows within a line; `false` otherwise (then `out`
/// is left part-filled).
fn line_values(bytes: &[u8], from: usize, to: usize, channels: usize, out: &mut Vec<f64>) -> bool {
    // A CRLF line's `\r`; any other `\r` ends a line for the reader.
    let to = if to > from && bytes[to - 1] == b'\r' { to - 1 } else { to };
    let mut i = from;
    let mut n = 0;
    while i < to {
        match bytes[i] {
            b' ' | b'\t' | b'\x0b' | b'\x0c' => i += 1,
            // A line end, or a control byte the reader refuses.
            b if b <= b' ' => return false,
            _ => {
                // Parsed in `bytes` itself, as the reader does, so that
                // the fast path sees the same bytes after the token.
                let Ok((v, end)) = parse_number(bytes, i) else { return false };
                if end > to || n == channels {
                    return false;
                }
                out.push(v);
                n += 1;
                i = end;
            }
        }
    }
    n == channels
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of three channels whose motion is `body` (after the
    /// `Frame Time:` value), declaring `frames` frames.
    fn file(frames: usize, body: &str) -> Vec<u8> {
        format!(
            "HIERARCHY\nROOT A\n{{\n\tOFFSET 0 0 0\n\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
             \tEnd Site\n\t{{\n\t\tOFFSET 0 1 0\n\t}}\n}}\nMOTION\nFrames: {frames}\nFrame Time: 0.1{body}"
        )
        .into_bytes()
    }

    /// `sample_frames` of `text`, checked against the whole reader: `Some`
    /// only with the reader's frames, bit for bit.
    fn sampled(text: &[u8], frames: &[usize]) -> Option<Vec<f64>> {
        let got = ReadOptions::new().lenient(true).sample_frames(text, frames).unwrap();
        if let Some(values) = &got {
            let (bvh, _) = ReadOptions::new().lenient(true).parse(text).unwrap();
            let m = bvh.motion();
            let want: Vec<u64> =
                frames.iter().flat_map(|&f| m.frame(f)).map(|v| v.to_bits()).collect();
            let bits: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
            assert_eq!(bits, want, "{}", String::from_utf8_lossy(text));
        }
        got
    }

    /// A motion of several pieces ([`LINE_PIECE`]), counted on the pool,
    /// its lines of varying lengths crossing the pieces' edges: every
    /// chosen line found, including the first and last of each piece.
    #[test]
    fn lines_are_found_across_pieces() {
        let mut body = String::new();
        let mut ends = Vec::new();
        let mut k = 0u64;
        while body.len() < 5 * LINE_PIECE + 1000 {
            k += 1;
            // Lines of 7 to 60 bytes.
            let pad = "0".repeat((k * 7919 % 40) as usize);
            body.push_str(&format!("\n{k}.5{pad}1 -{} {}", k % 97, k * 3));
            ends.push(body.len());
        }
        let n = k as usize;
        let text = file(n, &body);
        assert!(piece_line_ends(&body.as_bytes()[1..], |_| {}).len() > 2, "several pieces");
        // The frames whose lines meet each piece edge, and some others.
        let mut frames = vec![0, 1, n / 2, n - 2, n - 1];
        for edge in (1..=5).map(|p| p * LINE_PIECE) {
            let f = ends.partition_point(|&e| e < edge);
            frames.extend([f.saturating_sub(1), f, (f + 1).min(n - 1)]);
        }
        frames.sort_unstable();
        assert!(sampled(&text, &frames).is_some());
        assert!(sampled(&text, &(0..n).step_by(997).collect::<Vec<_>>()).is_some());
        // One line more than declared: no answer.
        assert_eq!(sampled(&file(n - 1, &body), &[0]), None);
        assert_eq!(sampled(&text, &[n]), None, "a frame past the last line");
    }

    #[test]
    fn the_search_releases_what_it_counted_a_window_at_a_time() {
        // A motion of two windows and a part: the line ends counted per
        // piece as in one go, the searched ends reported in order, and the
        // frames the same as without releasing.
        let line = "\n1.5 -2 30.25";
        let n = (2 * RELEASE_WINDOW + 3 * LINE_PIECE) / line.len() + 1;
        let body = line.repeat(n);
        let text = file(n, &body);
        let data = &body.as_bytes()[1..];
        let searched = std::sync::Mutex::new(Vec::new());
        let counts = piece_line_ends(data, |k| searched.lock().unwrap().push(k));
        let plain: Vec<usize> =
            data.chunks(LINE_PIECE).map(|p| memchr::memchr_iter(b'\n', p).count()).collect();
        assert_eq!(counts, plain);
        assert_eq!(*searched.lock().unwrap(), [RELEASE_WINDOW, 2 * RELEASE_WINDOW, data.len()]);
        let frames = [0, n / 3, n - 1];
        let released = std::sync::Mutex::new(Vec::new());
        let o = ReadOptions::new();
        let release = |k: usize| released.lock().unwrap().push(k);
        let got = o.sample_frames_releasing(&text, &frames, &release).unwrap();
        assert_eq!(got, o.sample_frames(&text, &frames).unwrap());
        assert_eq!(got.unwrap()[..3], [1.5, -2.0, 30.25]);
        // Offsets of the file, from the motion's first line end (where
        // the header's reader stops) to the file's last byte.
        let released = released.into_inner().unwrap();
        let start = text.len() - body.len();
        assert_eq!(released, [start + RELEASE_WINDOW, start + 2 * RELEASE_WINDOW, text.len()]);
    }

    #[test]
    fn lines_are_read_as_the_reader_reads_them() {
        let plain = "\n1 2 3\n4.5 -6.25 7\n8 9 10.125\n";
        for body in [
            plain.to_string(),
            plain.replace('\n', "\r\n"),
            plain.replace('\n', " \t \n"),
            "\n1 2 3\n\t4.5  -6.25\t7\n8 9 10.125".to_string(),
            format!("{plain}\n\n  \n"),
            format!("{}\r\n\r\n", plain.replace('\n', "\r\n")),
            // The first frame on the `Frame Time:` line.
            " 1 2 3\n4.5 -6.25 7\n8 9 10.125\n".to_string(),
            // Spellings off the fast path: exponents, long mantissas, signs.
            "\n1e0 +2 3.00000000000000000001\n4.5e-0 -6.25 7\n-0 0.0000000000000000000000001 1e300\n"
                .to_string(),
        ] {
            let text = file(3, &body);
            assert!(sampled(&text, &[0, 1, 2]).is_some(), "{body:?}");
            assert!(sampled(&text, &[1]).is_some(), "{body:?}");
            assert!(sampled(&text, &[0, 0, 2]).is_some(), "{body:?}");
            assert_eq!(sampled(&text, &[]), Some(Vec::new()));
        }
        let text = file(3, plain);
        assert_eq!(sampled(&text, &[2, 0]), None);
        assert_eq!(sampled(&text, &[0, 2]), Some(vec![1.0, 2.0, 3.0, 8.0, 9.0, 10.125]));
        assert_eq!(sampled(&file(0, "\n"), &[]), Some(Vec::new()));
    }

    #[test]
    fn layouts_it_cannot_see_through_give_none() {
        for (frames, body, wanted) in [
            // Frames wrapped over lines, and a frame on one line too many.
            (2, "\n1 2\n3\n4 5 6\n", &[0][..]),
            (2, "\n1 2\n3 4 5 6\n", &[1][..]),
            // A chosen line with a value too few or too many.
            (3, "\n1 2 3\n4 5\n6 7 8 9\n", &[1][..]),
            (3, "\n1 2 3\n4 5\n6 7 8 9\n", &[2][..]),
            // Every line one value too many (read line by line, keeping
            // three): not this function's business.
            (2, "\n1 2 3 4\n5 6 7 8\n", &[0][..]),
            // A blank line between frames, or `Frames:` wrong.
            (3, "\n1 2 3\n\n4 5 6\n7 8 9\n", &[0][..]),
            (4, "\n1 2 3\n4 5 6\n7 8 9\n", &[0][..]),
            (2, "\n1 2 3\n4 5 6\n7 8 9\n", &[0][..]),
            // Lines ended by a lone `\r` (old Mac files), or one inside a line.
            (3, "\r1 2 3\r4 5 6\r7 8 9\r", &[0][..]),
            (2, "\n1 2 3\r4 5 6\n", &[1][..]),
            // A token that is not a number, a control byte.
            (2, "\n1 2 3\n4 x 6\n", &[1][..]),
            (2, "\n1 2 3\n4 5\x016\n", &[1][..]),
            (2, "\n1 2 3\n4 5 6.5.5\n", &[1][..]),
            // Past the last frame, or out of order.
            (2, "\n1 2 3\n4 5 6\n", &[2][..]),
            (2, "\n1 2 3\n4 5 6\n", &[1, 0][..]),
        ] {
            let text = file(frames, body);
            assert_eq!(sampled(&text, wanted), None, "{body:?} {wanted:?}");
        }
        // No `Frames:` (lenient), no channels.
        let text =
            b"HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Xrotation } MOTION Frame Time: 0.1\n1\n";
        assert_eq!(ReadOptions::new().lenient(true).sample_frames(text, &[0]).unwrap(), None);
        let text =
            b"HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 0 } MOTION Frames: 1 Frame Time: 0.1\n\n";
        assert_eq!(ReadOptions::new().sample_frames(text, &[0]).unwrap(), None);
        // A header the reader refuses is its error.
        let err = ReadOptions::new().sample_frames(b"HIERARCHY ROOT A { OFFSET 0 0", &[0]);
        assert!(err.is_err());
    }

    /// The function trusts the lines it does not read: a value missing on
    /// one and one more on another shift the reader's frames in between,
    /// which only a full read sees (why `bvh edit` checks the frames it
    /// used when it reads the file).
    #[test]
    fn unread_lines_are_trusted() {
        let text = file(4, "\n1 2 3\n4 5\n6 7 8\n9 10 11 12\n");
        let got = ReadOptions::new().lenient(true).sample_frames(&text, &[2]).unwrap();
        assert_eq!(got, Some(vec![6.0, 7.0, 8.0]));
        let (bvh, _) = ReadOptions::new().lenient(true).parse(&text).unwrap();
        assert_eq!(bvh.motion().frame(2), [7.0, 8.0, 9.0]);
    }

    #[test]
    fn corpus_frames_are_the_readers_or_none() {
        if bvhkit_testdata::corpus_or_skip("corpus_frames_are_the_readers_or_none").is_none() {
            return;
        }
        let mut some = 0;
        let files = bvhkit_testdata::corpus_files();
        for path in &files {
            let bytes = std::fs::read(path).unwrap();
            let Ok((bvh, _)) = ReadOptions::new().lenient(true).parse(&bytes) else { continue };
            let n = bvh.motion().n_frames();
            let wanted = crate::edit::axes::sampled_frames(n);
            if sampled(&bytes, &wanted).is_some() {
                some += 1;
            }
        }
        // Nearly every real file writes one frame per line.
        eprintln!("{some} of {} files sampled", files.len());
        assert!(some * 10 >= files.len() * 8, "{some} of {} files sampled", files.len());
    }
}
