//! The BVH data stream that Axis Neuron-style motion-capture software
//! broadcasts over TCP: one frame of channel values at a time, in the
//! skeleton's channel order, already local Euler angles and positions.
//!
//! The grammar accepted (ASCII whitespace, line ends included, separates
//! tokens; `||` ends a frame and may be glued to the token before or after it):
//!
//! ```text
//! stream := frame*
//! frame  := [index [avatar] | avatar] value{N} "||"
//! index  := [0-9]+
//! avatar := any token (at most 64 bytes, no whitespace, no "|")
//! value  := a finite decimal number (Rust's f64 syntax: "1", "-0.5", "1e-3")
//! ```
//!
//! `N` is the skeleton's channel count. Which leading tokens are the index
//! and the avatar name is decided by the frame's token count: `N` tokens are
//! all values, `N + 1` have one leading token (an index or a name), `N + 2`
//! an index then a name. Anything else (a wrong count, a token that is not a
//! finite number where a value must be, a lone `|`, a token over 64 bytes)
//! makes the frame malformed: it is counted, skipped up to its `||`, and
//! reading goes on. At most `N + 2` tokens of a frame are kept, so a stream
//! that never sends `||` is read in bounded memory.

/// Longest token (bytes); longer ones make their frame malformed.
pub const MAX_TOKEN: usize = 64;

/// A frame that is not one of the skeleton's: at its first token's line
/// and column (bytes), never fatal.
pub type FrameError = crate::InputError;

/// Reads the stream from bytes as they arrive (any split), appending each
/// complete frame's `N` values to a caller-owned buffer.
///
/// # Example
/// ```
/// use bvhkit_capture::NeuronReader;
/// let mut r = NeuronReader::new(3);
/// let (mut frames, mut errors) = (Vec::new(), Vec::new());
/// r.feed(b"0 Avatar00 1 2.5 -3 ||\n1 Avatar00 4 5", &mut frames, &mut |e| errors.push(e));
/// r.feed(b" 6 ||\n7 8 ||", &mut frames, &mut |e| errors.push(e));
/// r.finish(&mut |e| errors.push(e));
/// assert_eq!(frames, [1.0, 2.5, -3.0, 4.0, 5.0, 6.0]);
/// assert_eq!((r.frames(), r.malformed()), (2, 1));
/// assert!(errors[0].message.contains("expected 3 values"));
/// ```
#[derive(Clone, Debug)]
pub struct NeuronReader {
    n: usize,
    /// The current token's bytes (at most [`MAX_TOKEN`]).
    token: Vec<u8>,
    token_overlong: bool,
    /// Tokens of the current frame, parsed (NaN for a non-number), at most `n + 2`.
    values: Vec<f64>,
    /// Tokens seen in the current frame (may exceed `values.len()`).
    count: usize,
    /// Whether the first token is all digits.
    first_is_index: bool,
    /// The first three non-numbers (position, text): a frame has at most
    /// two leading tokens that may be non-numbers.
    non_numbers: Vec<(usize, String)>,
    /// Why the frame is malformed already (lone `|`, overlong token).
    broken: Option<String>,
    /// A `|` was just read.
    bar: bool,
    line: u64,
    column: u64,
    frame_at: Option<(u64, u64)>,
    frames: u64,
    malformed: u64,
}

impl NeuronReader {
    /// A reader for frames of `n_channels` values.
    pub fn new(n_channels: usize) -> NeuronReader {
        NeuronReader {
            n: n_channels,
            token: Vec::with_capacity(MAX_TOKEN),
            token_overlong: false,
            values: Vec::with_capacity(n_channels + 2),
            count: 0,
            first_is_index: false,
            non_numbers: Vec::with_capacity(3),
            broken: None,
            bar: false,
            line: 1,
            column: 0,
            frame_at: None,
            frames: 0,
            malformed: 0,
        }
    }

    /// Values per frame.
    pub fn n_channels(&self) -> usize {
        self.n
    }

    /// Frames read.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Malformed frames skipped.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    /// Reads `bytes`; appends each complete frame's values to `out`, calls
    /// `on_error` for each malformed one, and returns the frames appended.
    pub fn feed(
        &mut self,
        bytes: &[u8],
        out: &mut Vec<f64>,
        on_error: &mut dyn FnMut(FrameError),
    ) -> usize {
        let mut emitted = 0;
        for &b in bytes {
            self.column += 1;
            if b == b'|' {
                self.end_token();
                self.note_start();
                if self.bar {
                    self.bar = false;
                    if self.end_frame(out, on_error) {
                        emitted += 1;
                    }
                } else {
                    self.bar = true;
                }
                continue;
            }
            if self.bar {
                self.bar = false;
                self.broken.get_or_insert_with(|| "a lone \"|\" (frames end with \"||\")".into());
            }
            if b.is_ascii_whitespace() {
                self.end_token();
                if b == b'\n' {
                    self.line += 1;
                    self.column = 0;
                }
                continue;
            }
            self.note_start();
            if self.token.len() < MAX_TOKEN {
                self.token.push(b);
            } else {
                self.token_overlong = true;
            }
        }
        emitted
    }

    /// Ends the stream: a frame begun and not ended by `||` is malformed.
    /// Returns whether there was one.
    pub fn finish(&mut self, on_error: &mut dyn FnMut(FrameError)) -> bool {
        self.end_token();
        if self.bar {
            self.bar = false;
            self.broken.get_or_insert_with(|| "a lone \"|\" (frames end with \"||\")".into());
        }
        if self.frame_at.is_none() {
            return false;
        }
        self.fail("the stream ended in the middle of a frame (no \"||\")".into(), on_error);
        true
    }

    fn note_start(&mut self) {
        if self.frame_at.is_none() {
            self.frame_at = Some((self.line, self.column));
        }
    }

    fn end_token(&mut self) {
        if self.token.is_empty() && !self.token_overlong {
            return;
        }
        let k = self.count;
        self.count += 1;
        if self.token_overlong {
            self.broken
                .get_or_insert_with(|| format!("token {} is longer than {MAX_TOKEN} bytes", k + 1));
        } else if self.values.len() < self.n + 2 {
            let text = std::str::from_utf8(&self.token).unwrap_or("");
            let v = text.parse::<f64>().ok().filter(|v| v.is_finite());
            if k == 0 {
                self.first_is_index =
                    !self.token.is_empty() && self.token.iter().all(u8::is_ascii_digit);
            }
            if v.is_none() && self.non_numbers.len() < 3 {
                self.non_numbers.push((k, String::from_utf8_lossy(&self.token).into_owned()));
            }
            self.values.push(v.unwrap_or(f64::NAN));
        }
        self.token.clear();
        self.token_overlong = false;
    }

    /// At `||`: the frame's values, or why it is malformed.
    fn end_frame(&mut self, out: &mut Vec<f64>, on_error: &mut dyn FnMut(FrameError)) -> bool {
        if let Some(why) = self.broken.take() {
            self.fail(why, on_error);
            return false;
        }
        let n = self.n;
        if self.count < n || self.count > n + 2 {
            let why = format!(
                "expected {n} values after an optional index and avatar name, found {} tokens",
                self.count
            );
            self.fail(why, on_error);
            return false;
        }
        let prefix = self.count - n;
        // Past the first three, a non-number is always at a value's place.
        if let Some((p, text)) = self.non_numbers.iter().find(|(p, _)| *p >= prefix) {
            let why = format!("expected a number for value {}, found \"{text}\"", p - prefix + 1);
            self.fail(why, on_error);
            return false;
        }
        if prefix == 2 && !self.first_is_index {
            self.fail("expected a frame index (digits) before the avatar name".into(), on_error);
            return false;
        }
        out.extend_from_slice(&self.values[prefix..]);
        self.frames += 1;
        self.reset();
        true
    }

    fn fail(&mut self, message: String, on_error: &mut dyn FnMut(FrameError)) {
        let (line, column) = self.frame_at.unwrap_or((self.line, self.column));
        self.malformed += 1;
        on_error(FrameError { line, column, message, fatal: false });
        self.reset();
    }

    fn reset(&mut self) {
        self.values.clear();
        self.count = 0;
        self.first_is_index = false;
        self.non_numbers.clear();
        self.broken = None;
        self.frame_at = None;
    }
}

/// Appends one frame of the stream to `out`: `INDEX AVATAR v1 ... vN ||`
/// and a line end, values in Rust's shortest round-trip form (`{:?}`: `1.0`,
/// `-0.25`, `1e-300`), so a reader gets the same bits back.
///
/// # Example
/// ```
/// let mut out = Vec::new();
/// bvhkit_capture::write_neuron_frame(7, "Avatar00", &[1.0, -0.25, 90.0], &mut out);
/// assert_eq!(out, b"7 Avatar00 1.0 -0.25 90.0 ||\n");
/// ```
pub fn write_neuron_frame(index: u64, avatar: &str, values: &[f64], out: &mut Vec<u8>) {
    use std::io::Write as _;
    let _ = write!(out, "{index} {avatar}");
    for v in values {
        // Debug: shortest round trip, with an exponent for very small or
        // large values, so no token is longer than 24 bytes.
        let _ = write!(out, " {v:?}");
    }
    out.extend_from_slice(b" ||\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(n: usize, chunks: &[&[u8]]) -> (Vec<f64>, Vec<FrameError>, NeuronReader) {
        let mut r = NeuronReader::new(n);
        let (mut out, mut errors) = (Vec::new(), Vec::new());
        for c in chunks {
            r.feed(c, &mut out, &mut |e| errors.push(e));
        }
        r.finish(&mut |e| errors.push(e));
        (out, errors, r)
    }

    #[test]
    fn prefixes_and_glued_bars() {
        let (out, errors, r) = read(2, &[b"1 2||3 4 ||\n0 A 5 6 ||", b"12 7 8|", b"|B 9 10\r\n||"]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(out, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(r.frames(), 5);
    }

    #[test]
    fn every_split_of_a_stream_reads_the_same() {
        let text = b"0 Avatar00 1.5 -2 3e-2 ||\r\n1 Avatar00 4 5 6 ||\n";
        for cut in 0..text.len() {
            let (out, errors, _) = read(3, &[&text[..cut], &text[cut..]]);
            assert!(errors.is_empty(), "cut {cut}: {errors:?}");
            assert_eq!(out, [1.5, -2.0, 0.03, 4.0, 5.0, 6.0], "cut {cut}");
        }
    }

    #[test]
    fn malformed_frames_are_counted_with_their_position() {
        let text = b"0 A 1 2 3 ||\n0 A 1 2 ||\n0 A 1 x 3 ||\nA B 1 2 3 ||\n1 2 3 4 5 6 ||\n1 | 2 3 ||\nnan 1 2 ||\n4 5 6 ||\n7 8";
        let (out, errors, r) = read(3, &[text]);
        let messages: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(out, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "{messages:?}");
        assert_eq!((r.frames(), r.malformed()), (2, 7), "{messages:?}");
        assert_eq!(
            messages,
            [
                "2:1: expected a number for value 1, found \"A\"",
                "3:1: expected a number for value 2, found \"x\"",
                "4:1: expected a frame index (digits) before the avatar name",
                "5:1: expected 3 values after an optional index and avatar name, found 6 tokens",
                "6:1: a lone \"|\" (frames end with \"||\")",
                "7:1: expected a number for value 1, found \"nan\"",
                "9:1: the stream ended in the middle of a frame (no \"||\")",
            ]
        );
    }

    #[test]
    fn a_stream_without_bars_is_read_in_bounded_memory() {
        let mut r = NeuronReader::new(4);
        let mut out = Vec::new();
        let chunk = b"1.25 ".repeat(10_000);
        let long = vec![b'7'; 100_000];
        for _ in 0..100 {
            r.feed(&chunk, &mut out, &mut |_| {});
        }
        r.feed(&long, &mut out, &mut |_| {});
        assert!(r.values.capacity() <= 64 && r.token.capacity() <= 2 * MAX_TOKEN);
        let mut errors = Vec::new();
        r.feed(b" ||", &mut out, &mut |e| errors.push(e));
        assert!(out.is_empty());
        assert_eq!(r.malformed(), 1);
        assert!(errors[0].message.contains("longer than 64 bytes"), "{errors:?}");
    }

    #[test]
    fn written_frames_read_back_bit_for_bit() {
        let values = [0.1, -0.0, 1e-300, 123456.789, f64::MIN_POSITIVE, -7.0, 1.0 / 3.0];
        let mut text = Vec::new();
        write_neuron_frame(0, "Avatar00", &values, &mut text);
        write_neuron_frame(1, "Avatar00", &values, &mut text);
        let (out, errors, _) = read(values.len(), &[&text]);
        assert!(errors.is_empty(), "{errors:?}");
        for (a, b) in out.iter().zip(values.iter().chain(&values)) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }
}
