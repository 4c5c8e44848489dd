//! The motion values: a stream of numbers, with per-line statistics.
//!
//! Motion is read as a token stream (frames = values / channels), which is
//! what flattened and wrapped files need. Line statistics are kept on the
//! side so that the common layout (one frame per line) is verified for free
//! and deviations get a precise warning or error.
//!
//! # Implementation notes
//!
//! Motion values as a stream of numbers with per-line statistics (`RowStats`).
//! Token starts come from a 64-byte bit mask (bytes above `b' '`), so each
//! number is parsed without waiting for the end of the one before; only
//! separators other than one space are looked at byte by byte (line ends, and
//! control bytes, which are errors). The two hot kernels, the mask and the
//! number fast path, sit behind a `Kernels` trait: SSE2 on x86-64 (`FAST`),
//! eight bytes at a time in a `u64` elsewhere (`Portable`), and AVX2
//! (`avx2`: the mask 32 bytes per compare, the number's digits laid out by
//! one byte shuffle, `number::parse_short_avx2`); tests run all of them on
//! the same random texts and compare every bit. The token loop is compiled
//! once per SIMD level by `simd_kernel!` (`scan_simd`), so that the AVX2
//! kernels inline into it; its AVX2 and AVX-512F builds use them, the
//! portable build the SSE2 ones. The AVX2 kernel takes the number scan from
//! 131 to 100 instructions per number (callgrind, `bvh check` of a 5 MB
//! clip of the synthetic file, one thread) and `bvh check` of the 105 MB
//! file from 135 to 117 ms of CPU on one pinned thread (medians of 11
//! alternated pairs, session 34). A token does no line bookkeeping: the
//! open line's value count is the sink's count less the count where the
//! line began (`line_base`, moved at line ends, which the look at the
//! separators finds anyway), and where a line's first value starts is noted
//! there too (a line's first token is never after exactly one space but at
//! the start of a piece, whose leading spaces are skipped so that its first
//! token takes that look); `RowStats::cur_len` holds the count between
//! calls, as the sink may be emptied in between. That takes 102 -> 97
//! instructions per token of the whole 5 MB read (callgrind, the streaming
//! reader alone, one thread) and `bvh check` of the 105 MB file from 117.2
//! to 112.2 ms of CPU on one pinned thread (medians of 21 alternated pairs,
//! faster in 20, quartiles apart; session 34, second round), 125.5 to 119.9
//! ms on two threads (15 pairs); `bvh lint -q` of it (about 420 ms of CPU
//! on two threads) moves within its noise. Large inputs are cut at line ends into a
//! few chunks per thread; the tokens of every chunk are counted first (from
//! the same mask), then each chunk is scanned straight into its place in
//! the one final buffer: no per-chunk buffers, no join.
//!
//! Tried and not paying (session 34, callgrind on the same clip): the open
//! line's start and count in locals instead of `RowStats` fields (the loop
//! then spills them: 100 -> 105 instructions per number); the AVX2 number
//! load from the token's first byte, sign included, with a shuffle table by
//! sign (so that the load does not wait for the sign: 100 -> 112, the
//! three-index table and the shift by the sign cost more than they save);
//! the AVX2 mask from two 16-byte loads instead of one `_mm256_set_epi64x`
//! (the same count); a per-block mask of token starts after exactly one
//! space (a second compare in the mask kernel) in place of the per-token
//! look at `data[sep]` (the same count: the block's extra work eats what
//! the tokens save). Small and not taken yet: handing the kernel a window
//! of exactly 24 bytes after one compare with `n - 23` (instead of
//! `&data[start..]`, whose length the kernel checks): 100 -> 99. Not tried
//! yet (session 34, second round): the values of a block written by index
//! into room reserved once per block instead of `Vec::push` (whose length
//! and capacity checks cost about 6 instructions per token in the profile);
//! it needs `unsafe` (`set_len`) or a sink that hands out a block's room.
//! Earlier: packed `divpd` of two numbers (6-7% slower).
//!
//! Why `unsafe`: `parse::scan::avx2` (two blocks, and one in `number`'s
//! tests) calls the AVX2 kernels, `#[target_feature(enable = "avx2")]`
//! functions; an `Avx2` is only used in `scan_simd`'s AVX2 and AVX-512F
//! builds, which `simd_kernel!` runs only once the CPU was found to have
//! AVX2 (resp. AVX-512F, which implies it), and in tests that check the CPU
//! first. `parse::scan::sse2` (two blocks, and one in `number`'s tests)
//! calls the SSE2 kernels, which are `#[target_feature(enable = "sse2")]`
//! functions and so unsafe to call. The module only exists when the build's
//! target features include SSE2 (`cfg(target_feature = "sse2")`, true on every
//! x86-64 target), so every CPU the binary runs on has it: no runtime check is
//! needed. Since Rust 1.87 the intrinsics themselves are safe inside such
//! functions, so the kernels hold no other `unsafe`. They make a one-core parse
//! about 1.3x faster (the loop is bound by instructions per number, and SSE2
//! takes about a quarter of them away). `core::simd` would need no `unsafe` but
//! is not stable; `safe_arch`/`wide` would move the same `unsafe` into a
//! dependency.

use crate::number::{le_word, parse_general, parse_short, token_end};
use crate::simd::simd_kernel;

/// What the lines of a motion section looked like.
#[derive(Clone, Debug, Default)]
pub(crate) struct RowStats {
    /// Lines holding at least one value.
    pub(crate) rows: u64,
    /// Values on the first such line.
    pub(crate) first_len: u64,
    /// Whether every such line holds `first_len` values.
    pub(crate) uniform: bool,
    /// The fewest and the most values on such a line.
    pub(crate) min_len: u64,
    pub(crate) max_len: u64,
    /// The value count of every such line from the first irregular one on,
    /// when asked for (`Some`): the streaming reader records them while it
    /// decides the layout.
    pub(crate) lens: Option<Vec<u64>>,
    /// Lines whose value count is not the channel count.
    pub(crate) irregular: u64,
    /// The first such line: (byte offset, values, index among rows).
    pub(crate) first_irregular: Option<(usize, u64, u64)>,
    /// The last line with values: (byte offset, values).
    pub(crate) last: Option<(usize, u64)>,
    /// `\n` and `\r` bytes seen (to count empty frames when there are no channels).
    pub(crate) lf: u64,
    pub(crate) cr: u64,
    /// `\r\n` pairs within one scanned piece (a pair split between two
    /// pieces is not counted).
    pub(crate) crlf: u64,
    /// The open line: where its first value starts, and its value count
    /// (kept up to date between two scans only: within one, the token loop
    /// counts it from its sink's count).
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
            self.min_len = len;
            self.max_len = len;
        } else {
            self.uniform &= len == self.first_len;
            self.min_len = self.min_len.min(len);
            self.max_len = self.max_len.max(len);
        }
        if len != channels {
            self.irregular += 1;
            if self.first_irregular.is_none() {
                self.first_irregular = Some((self.cur_start, len, self.rows));
            }
        }
        if self.irregular > 0
            && let Some(lens) = &mut self.lens
        {
            lens.push(len);
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
                self.min_len = b.min_len;
                self.max_len = b.max_len;
            } else {
                self.uniform = self.uniform && b.uniform && self.first_len == b.first_len;
                self.min_len = self.min_len.min(b.min_len);
                self.max_len = self.max_len.max(b.max_len);
            }
            if let (Some(a), Some(bl)) = (&mut self.lens, b.lens) {
                a.extend(bl);
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
        self.crlf += b.crlf;
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

/// Where [`scan`] puts the values it reads.
pub(crate) trait Sink {
    /// Appends `v`.
    fn put(&mut self, v: f64);
    /// Values put so far (stored or not): [`scan`] counts a line's values
    /// as the difference of two counts.
    fn count(&self) -> usize;
}

impl Sink for Vec<f64> {
    #[inline(always)]
    fn put(&mut self, v: f64) {
        self.push(v);
    }

    #[inline(always)]
    fn count(&self) -> usize {
        self.len()
    }
}

/// A slice of the final value buffer, filled from the front; values past
/// its end are counted, not stored (the caller then knows the slice was
/// too short).
struct Slot<'a> {
    buf: &'a mut [f64],
    len: usize,
}

impl Sink for Slot<'_> {
    #[inline(always)]
    fn put(&mut self, v: f64) {
        if let Some(x) = self.buf.get_mut(self.len) {
            *x = v;
        }
        self.len += 1;
    }

    #[inline(always)]
    fn count(&self) -> usize {
        self.len
    }
}

impl Slot<'_> {
    /// Whether exactly the slice's length of values was put.
    fn is_exact(&self) -> bool {
        self.len == self.buf.len()
    }
}

/// The number of whitespace-separated tokens in `data`, counting every
/// byte above `b' '` as part of a token.
///
/// This is exact for motion text (numbers and ASCII whitespace). A control
/// byte other than whitespace, which [`scan`] rejects as part of a token, is
/// counted as a separator here: the count is then only a prediction, which
/// the caller checks.
fn count_tokens(data: &[u8]) -> usize {
    count_tokens_with(data, FAST)
}

/// [`count_tokens`] with the given kernels.
#[inline(always)]
fn count_tokens_with(data: &[u8], kernels: impl Kernels) -> usize {
    let mut count = 0usize;
    // Bit 0: the byte before the current block is inside a token.
    let mut carry = 0u64;
    for block in data.chunks(64) {
        let inside = inside_mask(block, kernels);
        count += (inside & !((inside << 1) | carry)).count_ones() as usize;
        carry = inside >> 63;
    }
    count
}

/// The value count of every motion line holding a value, in order: the
/// lines and tokens [`scan`] sees (tokens are runs of bytes above `b' '`;
/// `\n`, `\r` and `\r\n` end lines). For text `scan` accepted.
pub(crate) fn line_lengths(data: &[u8]) -> Vec<u64> {
    let mut lens = Vec::new();
    let (mut cur, mut inside) = (0u64, false);
    for &b in data {
        if b > b' ' {
            cur += u64::from(!inside);
            inside = true;
            continue;
        }
        inside = false;
        if (b == b'\n' || b == b'\r') && cur > 0 {
            lens.push(cur);
            cur = 0;
        }
    }
    if cur > 0 {
        lens.push(cur);
    }
    lens
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
///
/// Token starts are found 64 bytes at a time from a bit mask, so that
/// reading one token does not wait for the end of the one before: the
/// numbers of a line are parsed independently of each other, and only the
/// separators that are not a single space are looked at byte by byte.
#[inline(never)]
pub(crate) fn scan(
    data: &[u8],
    base: usize,
    channels: u64,
    out: &mut impl Sink,
    stats: &mut RowStats,
    last: bool,
) -> Result<usize, BadToken> {
    scan_simd(crate::simd::Simd::best(), data, base, channels, out, stats, last)
}

simd_kernel! {
    /// [`scan_with`] compiled for every SIMD level, so that its kernels
    /// inline into the whole token loop: the AVX2 kernels (`avx2`) on the
    /// AVX2 and AVX-512F builds, the SSE2 ones (`FAST`) on the portable
    /// build.
    fn scan_simd(
        simd: Simd,
        data: &[u8],
        base: usize,
        channels: u64,
        out: &mut impl Sink,
        stats: &mut RowStats,
        last: bool,
    ) -> Result<usize, BadToken> {
        #[cfg(target_arch = "x86_64")]
        if matches!(LEVEL, crate::simd::Level::Avx2 | crate::simd::Level::Avx512) {
            return scan_with(data, base, channels, out, stats, last, avx2::Avx2::IN_AVX2_BUILD);
        }
        scan_with(data, base, channels, out, stats, last, FAST)
    }
}

/// [`scan`] of a window of a stream, cut in two at a line end and scanned
/// on two threads when it is large (`parallel`, and rayon's pool has two
/// threads or more): the same values in `out`, the same statistics and the
/// same first bad token as one [`scan`]. `spare` holds the second half's
/// values meanwhile (a buffer the caller keeps, so a window allocates
/// nothing).
///
/// The second half starts a line, so it is scanned with statistics of its
/// own and merged after the first. One thing it cannot know is whether
/// line lengths must be recorded from its first line on (`stats.lens`
/// records them from the first irregular line): when the first half turns
/// out to hold one, the second half is scanned again after it, in order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_window(
    data: &[u8],
    base: usize,
    channels: u64,
    out: &mut Vec<f64>,
    spare: &mut Vec<f64>,
    stats: &mut RowStats,
    last: bool,
    parallel: bool,
) -> Result<usize, BadToken> {
    const MIN_HALF: usize = 128 * 1024;
    let recording = stats.lens.is_some();
    if !parallel
        || worker_count() < 2
        || data.len() < 2 * MIN_HALF
        || (recording && stats.irregular > 0)
    {
        return scan(data, base, channels, out, stats, last);
    }
    let mid = data.len() / 2;
    let cut = match data[mid..].iter().position(|&b| b == b'\n') {
        Some(k) if mid + k + 1 < data.len() => mid + k + 1,
        _ => return scan(data, base, channels, out, stats, last),
    };
    let (a, b) = data.split_at(cut);
    spare.clear();
    let mut b_stats = RowStats { lens: recording.then(Vec::new), ..RowStats::default() };
    let (ra, rb) = join(
        || scan(a, base, channels, out, stats, false),
        || scan(b, base + cut, channels, spare, &mut b_stats, last),
    );
    // The first half ends with a line end, so it has no cut token to leave.
    let used_a = ra?;
    debug_assert_eq!(used_a, cut);
    if recording && stats.irregular > 0 {
        return scan(b, base + cut, channels, out, stats, last).map(|used| cut + used);
    }
    let used_b = rb?;
    out.extend_from_slice(spare);
    let (cur_start, cur_len) = (b_stats.cur_start, b_stats.cur_len);
    *stats = std::mem::take(stats).merge(b_stats);
    // The line still open at the end of the window is the second half's.
    stats.cur_start = cur_start;
    stats.cur_len = cur_len;
    Ok(cut + used_b)
}

/// Both closures, on rayon's pool when the crate has it (also the edit
/// plan's, `edit::plan`).
#[cfg(feature = "parallel")]
pub(crate) fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    rayon::join(a, b)
}

#[cfg(not(feature = "parallel"))]
pub(crate) fn join<A, B>(a: impl FnOnce() -> A, b: impl FnOnce() -> B) -> (A, B) {
    (a(), b())
}

/// The two hot kernels of [`scan`]: the token mask of a 64-byte block and
/// the number fast path. Both builds give the same results bit for bit;
/// the tests run both.
pub(crate) trait Kernels: Copy {
    /// Bit `k` set when `block[k]` is above `b' '` (inside a token).
    fn inside_mask_64(self, block: &[u8; 64]) -> u64;
    /// [`parse_short`].
    fn parse_short(self, bytes: &[u8]) -> Option<(f64, usize)>;
}

/// The portable kernels: eight bytes at a time in a `u64` (SWAR). On
/// x86-64 only the tests use them, to check the fast ones.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2", not(test)), allow(dead_code))]
#[derive(Clone, Copy)]
pub(crate) struct Portable;

impl Kernels for Portable {
    #[inline(always)]
    fn inside_mask_64(self, block: &[u8; 64]) -> u64 {
        inside_mask_64(block)
    }

    #[inline(always)]
    fn parse_short(self, bytes: &[u8]) -> Option<(f64, usize)> {
        parse_short(bytes)
    }
}

/// The kernels in SSE2: sixteen bytes per compare.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use super::Kernels;
    use crate::number::le_word;

    #[derive(Clone, Copy)]
    pub(super) struct Sse2;

    impl Kernels for Sse2 {
        #[inline(always)]
        fn inside_mask_64(self, block: &[u8; 64]) -> u64 {
            // SAFETY: the build enables SSE2 for every CPU it targets (the
            // module's cfg): every x86-64 CPU has it.
            #[allow(unsafe_code)]
            unsafe {
                inside_mask_64(block)
            }
        }

        #[inline(always)]
        fn parse_short(self, bytes: &[u8]) -> Option<(f64, usize)> {
            // SAFETY: as above.
            #[allow(unsafe_code)]
            unsafe {
                crate::number::parse_short_sse2(bytes)
            }
        }
    }

    /// Bit `k` set when `block[k]` is above `b' '`.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn inside_mask_64(block: &[u8; 64]) -> u64 {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_max_epu8, _mm_movemask_epi8, _mm_set_epi64x, _mm_set1_epi8,
        };
        let space = _mm_set1_epi8(b' ' as i8);
        let mut mask = 0u64;
        for (j, sixteen) in block.chunks_exact(16).enumerate() {
            let (lo, hi) = (le_word(&sixteen[..8]), le_word(&sixteen[8..]));
            let x = _mm_set_epi64x(hi as i64, lo as i64);
            // max(b, ' ') == ' ' exactly when b <= ' ' (unsigned).
            let outside = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(x, space), space));
            mask |= u64::from(!outside as u16) << (16 * j);
        }
        mask
    }
}

/// The kernels with AVX2's target features: 32 bytes per compare for the
/// token mask, and [`crate::number::parse_short_avx2`]'s byte shuffle for
/// the number.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Kernels;
    use crate::number::le_word;

    /// Made only where AVX2 is there: see [`Avx2::IN_AVX2_BUILD`].
    #[derive(Clone, Copy)]
    pub(super) struct Avx2(());

    impl Avx2 {
        /// The kernels, for the AVX2 and AVX-512F builds of `scan_simd`
        /// alone (`simd_kernel!` runs those only once the CPU was found to
        /// have AVX2, resp. AVX-512F, which rustc's `avx512f` feature
        /// implies AVX2 with), and for tests that checked the CPU first.
        pub(super) const IN_AVX2_BUILD: Avx2 = Avx2(());
    }

    impl Kernels for Avx2 {
        #[inline(always)]
        fn inside_mask_64(self, block: &[u8; 64]) -> u64 {
            // SAFETY: an `Avx2` is only used where the CPU has AVX2 (its
            // constant's docs).
            #[allow(unsafe_code)]
            unsafe {
                inside_mask_64(block)
            }
        }

        #[inline(always)]
        fn parse_short(self, bytes: &[u8]) -> Option<(f64, usize)> {
            // SAFETY: as above.
            #[allow(unsafe_code)]
            unsafe {
                crate::number::parse_short_avx2(bytes)
            }
        }
    }

    /// Bit `k` set when `block[k]` is above `b' '`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn inside_mask_64(block: &[u8; 64]) -> u64 {
        use std::arch::x86_64::{
            _mm256_cmpeq_epi8, _mm256_max_epu8, _mm256_movemask_epi8, _mm256_set_epi64x,
            _mm256_set1_epi8,
        };
        let space = _mm256_set1_epi8(b' ' as i8);
        let mut mask = 0u64;
        for (j, half) in block.chunks_exact(32).enumerate() {
            let word = |k: usize| le_word(&half[8 * k..8 * k + 8]) as i64;
            let x = _mm256_set_epi64x(word(3), word(2), word(1), word(0));
            // max(b, ' ') == ' ' exactly when b <= ' ' (unsigned).
            let outside = _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(x, space), space));
            mask |= u64::from(!outside as u32) << (32 * j);
        }
        mask
    }
}

/// The kernels [`scan`] and [`count_tokens`] use in this build.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
const FAST: sse2::Sse2 = sse2::Sse2;
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
const FAST: Portable = Portable;

/// [`scan`] with the given kernels.
#[inline(always)]
fn scan_with(
    data: &[u8],
    base: usize,
    channels: u64,
    out: &mut impl Sink,
    stats: &mut RowStats,
    last: bool,
    kernels: impl Kernels,
) -> Result<usize, BadToken> {
    // The open line's values are counted as `out.count() - line_base`, so
    // that a token costs no line bookkeeping; `stats.cur_len` holds that
    // count between calls (a sink may be cleared in between).
    let mut line_base = out.count().wrapping_sub(stats.cur_len as usize);
    let done = scan_tokens(data, base, channels, out, stats, &mut line_base, last, kernels);
    stats.cur_len = out.count().wrapping_sub(line_base) as u64;
    if let Ok(used) = done
        && used == data.len()
        && last
    {
        stats.end_line(channels);
    }
    done
}

/// [`scan_with`]'s token loop: the values in `out`, the lines' statistics
/// in `stats` (but `stats.cur_len`, which is `out.count() - line_base`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn scan_tokens(
    data: &[u8],
    base: usize,
    channels: u64,
    out: &mut impl Sink,
    stats: &mut RowStats,
    line_base: &mut usize,
    last: bool,
    kernels: impl Kernels,
) -> Result<usize, BadToken> {
    let n = data.len();
    // One past the last token read: the separator bytes start here. The
    // leading spaces are skipped, so that the first token is never after
    // exactly one space and takes the look at its separators, which notes
    // where its line starts if it is the line's first value (a token after
    // one space is never a line's first but here).
    let mut sep = data.iter().position(|&b| b != b' ').unwrap_or(n);
    // Bit 0: the byte before the current block is inside a token.
    let mut carry = 0u64;
    for (k, block) in data.chunks(64).enumerate() {
        let at = 64 * k;
        let inside = inside_mask(block, kernels);
        let mut bits = inside & !((inside << 1) | carry);
        carry = inside >> 63;
        while bits != 0 {
            let start = at + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            // Anything but one space between two tokens is looked at.
            if start != sep + 1 || data[sep] != b' ' {
                let count = out.count();
                if let Err(bad) = separators(data, sep, start, channels, stats, count, line_base) {
                    return bad_token(bad, n, last, base);
                }
                if count == *line_base {
                    stats.cur_start = base + start;
                }
            }
            let (v, end) = match kernels.parse_short(&data[start..]) {
                Some((v, len)) => (v, start + len),
                None => match parse_general(data, start) {
                    Ok((_, end)) if end == n && !last => {
                        return bad_token((start, end), n, last, base);
                    }
                    Ok(done) => done,
                    Err(end) => {
                        return bad_token((start, end), n, last, base);
                    }
                },
            };
            out.put(v);
            sep = end;
        }
    }
    if let Err(bad) = separators(data, sep, n, channels, stats, out.count(), line_base) {
        return bad_token(bad, n, last, base);
    }
    Ok(n)
}

/// Bit 7 of byte `k` set when `eight[k]` is above `b' '` (inside a token),
/// all other bits clear.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2", not(test)), allow(dead_code))]
#[inline(always)]
fn inside_bytes(eight: &[u8]) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // (b & 0x7f) + 0x5f carries into bit 7 exactly when b & 0x7f > 0x20,
    // and never into the next byte; `| w` adds the bytes from 0x80 up.
    const ADD: u64 = 0x5f5f_5f5f_5f5f_5f5f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let w = le_word(eight);
    (((w & LOW7) + ADD) | w) & HIGH
}

/// Bit `k` set when `block[k]` (64 bytes or fewer) is above `b' '`: inside
/// a token. Control bytes below `b' '` that are not whitespace count as
/// separators here and are rejected by [`separators`].
#[inline(always)]
fn inside_mask(block: &[u8], kernels: impl Kernels) -> u64 {
    match block.try_into() {
        Ok(full) => kernels.inside_mask_64(full),
        Err(_) => {
            let mut padded = [b' '; 64];
            padded[..block.len()].copy_from_slice(block);
            kernels.inside_mask_64(&padded)
        }
    }
}

/// [`inside_mask`] of 64 bytes, 8 at a time in a `u64`.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2", not(test)), allow(dead_code))]
#[inline(always)]
fn inside_mask_64(block: &[u8; 64]) -> u64 {
    let mut mask = 0;
    for (j, w) in block.chunks_exact(8).enumerate() {
        let high = inside_bytes(w);
        // Gathers bit 7 of byte j into bit 56 + j, then down to bit j.
        let bits = (high >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        mask |= bits << (8 * j);
    }
    mask
}

/// Reads the separator bytes `data[from..to]` (all at most `b' '`): counts
/// line ends, and rejects a control byte that is not whitespace as the
/// start of a bad token, returned as its range in `data`. `count` is the
/// values put so far, and the open line holds `count - *line_base` of them
/// (a line end closes it and opens an empty one).
fn separators(
    data: &[u8],
    from: usize,
    to: usize,
    channels: u64,
    stats: &mut RowStats,
    count: usize,
    line_base: &mut usize,
) -> Result<(), (usize, usize)> {
    for i in from..to {
        match data[i] {
            b' ' | b'\t' | b'\x0b' | b'\x0c' => {}
            b'\n' => {
                stats.lf += 1;
                if i > 0 && data[i - 1] == b'\r' {
                    stats.crlf += 1;
                }
                stats.cur_len = count.wrapping_sub(*line_base) as u64;
                stats.end_line(channels);
                *line_base = count;
            }
            b'\r' => {
                stats.cr += 1;
                stats.cur_len = count.wrapping_sub(*line_base) as u64;
                stats.end_line(channels);
                *line_base = count;
            }
            _ => return Err((i, token_end(data, i))),
        }
    }
    Ok(())
}

/// The end of a scan at a token that is not a number, or that touches the
/// end of a piece that is not the last (`n` bytes long): such a token may
/// be cut, and is read again with the next piece (the return value is
/// where it starts), unless it is already too long to be a number.
fn bad_token(
    (start, end): (usize, usize),
    n: usize,
    last: bool,
    base: usize,
) -> Result<usize, BadToken> {
    if end == n && !last && end - start < 1024 {
        return Ok(start);
    }
    Err(BadToken { start: base + start, end: base + end })
}

/// Scans a whole in-memory motion section, split over threads when large.
///
/// With `parallel == false`, or one worker thread, or a small section, this
/// is one pass on the calling thread. Otherwise the section is cut at line
/// ends into chunks (up to 16 per thread, so that a slow thread does not
/// hold the others up), and [`scan_into_place`] scans each straight into
/// its place in the final buffer. Only if that finds a chunk whose count
/// was wrong are the chunks scanned into buffers of their own and copied
/// together (in parallel: a serial copy would cost as much as the scan
/// saves on two cores).
pub(crate) fn scan_all(
    data: &[u8],
    base: usize,
    channels: u64,
    parallel: bool,
    reuse: Vec<f64>,
) -> Result<(Vec<f64>, RowStats), BadToken> {
    const MIN_CHUNK: usize = 1 << 20;
    let threads = if parallel { worker_count() } else { 1 };
    if threads <= 1 || data.len() < 2 * MIN_CHUNK {
        // Motion text spends at least 6 bytes on a value but for rare files
        // (which the vector then grows for). A buffer given back by the
        // caller (`ParseBuffers`) serves when it holds that many, so
        // its pages, already faulted in, are written again; else a new one
        // (at least twice as large as a given one, so that a caller's
        // buffer is replaced a few times at most).
        let mut out = if reuse.capacity() >= data.len() / 6 {
            let mut out = reuse;
            out.clear();
            out
        } else {
            let grown = 2 * reuse.capacity();
            drop(reuse);
            crate::buffer::with_capacity((data.len() / 6).max(grown))
        };
        let mut stats = RowStats::default();
        scan(data, base, channels, &mut out, &mut stats, true)?;
        return Ok((out, stats));
    }
    let n_chunks = (data.len() / MIN_CHUNK).clamp(1, threads * 16);
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
    if let Some(done) = scan_into_place(data, base, channels, &pieces, reuse) {
        return done;
    }
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

/// The parallel scan without copies: counts the tokens of every chunk,
/// then scans each chunk straight into its place in the final buffer.
///
/// A bad token is reported as the sequential scan reports it: the first in
/// file order. Returns `None` when a chunk held another number of values
/// than its token count: that cannot happen for text the scan accepts
/// (both split tokens at the same bytes), and is checked so that a mistake
/// there would cost speed (the caller then scans the chunks into buffers
/// of their own) and never misplace a value.
fn scan_into_place(
    data: &[u8],
    base: usize,
    channels: u64,
    pieces: &[(usize, usize)],
    reuse: Vec<f64>,
) -> Option<Result<(Vec<f64>, RowStats), BadToken>> {
    let counts = run_chunks(pieces, |&(a, b)| count_tokens(&data[a..b]));
    let total = counts.iter().sum();
    // Zeroed memory comes from the allocator untouched, so its pages are
    // first written (and faulted in) by the scanning threads in parallel;
    // a buffer given back by the caller (`ParseBuffers`) that holds
    // `total` values is cleared instead (its pages are already in).
    let mut values = if reuse.capacity() >= total {
        let mut values = reuse;
        values.clear();
        values.resize(total, 0.0);
        values
    } else {
        drop(reuse);
        crate::buffer::zeroed(total)
    };
    let mut jobs = Vec::with_capacity(pieces.len());
    let mut rest = &mut values[..];
    for (&piece, &count) in pieces.iter().zip(&counts) {
        let (head, tail) = rest.split_at_mut(count);
        jobs.push((piece, Slot { buf: head, len: 0 }));
        rest = tail;
    }
    let results = run_chunks_mut(&mut jobs, |((a, b), slot)| {
        let mut stats = RowStats::default();
        scan(&data[*a..*b], base + *a, channels, slot, &mut stats, true).map(|_| stats)
    });
    let mut stats = RowStats::default();
    for (r, (_, slot)) in results.into_iter().zip(&jobs) {
        match r {
            Err(bad) => return Some(Err(bad)),
            Ok(_) if !slot.is_exact() => return None,
            Ok(s) => stats = stats.merge(s),
        }
    }
    drop(jobs);
    Some(Ok((values, stats)))
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

/// Threads of rayon's current pool (1 without the `parallel` feature): the
/// parser's chunking and the writer's pieces both size their work by it.
#[cfg(feature = "parallel")]
pub(crate) fn worker_count() -> usize {
    rayon::current_num_threads()
}

#[cfg(not(feature = "parallel"))]
pub(crate) fn worker_count() -> usize {
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

#[cfg(feature = "parallel")]
fn run_chunks_mut<T: Send, R: Send>(
    items: &mut [T],
    f: impl Fn(&mut T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    items.par_iter_mut().map(f).collect()
}

#[cfg(not(feature = "parallel"))]
fn run_chunks_mut<T, R>(items: &mut [T], f: impl Fn(&mut T) -> R) -> Vec<R> {
    items.iter_mut().map(f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, c: u64) -> (Vec<f64>, RowStats) {
        let Ok(r) = scan_all(text.as_bytes(), 0, c, false, Vec::new()) else { panic!("bad token") };
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
        let (v1, s1) = scan_all(text.as_bytes(), 0, 3, false, Vec::new()).ok().unwrap();
        let (v2, s2) = scan_all(text.as_bytes(), 0, 3, true, Vec::new()).ok().unwrap();
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
    fn the_token_mask_and_count_see_every_byte_value_right() {
        for b in 0..=255u8 {
            for at in [0, 7, 15, 16, 40, 63] {
                let mut block = [b' '; 64];
                block[at] = b;
                let want = if b > b' ' { 1 << at } else { 0 };
                assert_eq!(inside_mask(&block, Portable), want, "byte {b:#04x} at {at}");
                assert_eq!(inside_mask(&block, FAST), want, "byte {b:#04x} at {at}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    let got = inside_mask(&block, avx2::Avx2::IN_AVX2_BUILD);
                    assert_eq!(got, want, "avx2: byte {b:#04x} at {at}");
                }
                let short = &block[..at + 1];
                assert_eq!(inside_mask(short, FAST), want, "byte {b:#04x} at {at}");
            }
        }
        let text = "1 22\t333\r\n-4e5  \x0b.5\x0c+6\n\n7";
        for cut in 0..text.len() {
            let (a, b) = text.as_bytes().split_at(cut);
            let split = count_tokens(a) + count_tokens(b);
            let (whole, _) = run(text, 1);
            assert!(split == whole.len() || split == whole.len() + 1, "cut at {cut}");
        }
        assert_eq!(count_tokens(text.as_bytes()), 7);
    }

    #[test]
    fn a_control_byte_in_a_large_motion_is_the_same_error_in_parallel() {
        let mut text = String::new();
        for i in 0..300_000 {
            text.push_str(&format!("{i} -{i}.25 0.{i}\n"));
        }
        // Inside a token, and alone between two tokens, deep in the text.
        for bad in ["7\x01", "\x01"] {
            let mut t = text.clone().into_bytes();
            let at = t.len() * 2 / 3;
            let at = at + t[at..].iter().position(|&b| b == b' ').unwrap_or(0) + 1;
            t.splice(at..at, bad.bytes().chain([b' ']));
            let Err(one) = scan_all(&t, 5, 3, false, Vec::new()) else {
                panic!("{bad:?} accepted")
            };
            let Err(all) = scan_all(&t, 5, 3, true, Vec::new()) else { panic!("{bad:?} accepted") };
            assert_eq!((one.start, one.end), (all.start, all.end), "{bad:?}");
            assert_eq!(one.start, 5 + at, "{bad:?}");
        }
    }

    /// Scans `text` in pieces of `piece` bytes with the given kernels: the
    /// values' bits, the line statistics, and the first bad token.
    fn scan_pieces(
        text: &[u8],
        piece: usize,
        kernels: impl Kernels,
    ) -> (Vec<u64>, Option<(usize, usize)>, String) {
        let (mut out, mut st) = (Vec::new(), RowStats::default());
        let (mut bad, mut pos, mut end) = (None, 0, 0);
        loop {
            // A piece that ends inside a token is read again, longer.
            end = (end.max(pos) + piece).min(text.len());
            let last = end == text.len();
            match scan_with(&text[pos..end], pos, 3, &mut out, &mut st, last, kernels) {
                Ok(used) if !last => pos += used,
                Ok(_) => break,
                Err(e) => {
                    bad = Some((e.start, e.end));
                    break;
                }
            }
        }
        let stats = fmt_stats(&st);
        (out.iter().map(|v| v.to_bits()).collect(), bad, stats)
    }

    #[test]
    fn both_kernels_scan_every_layout_alike() {
        // Random text over the bytes motion is made of, with the rarer
        // spellings and separators and the odd bad byte.
        const PIECES: &[&str] = &[
            "0",
            "-12.345678",
            "7",
            "+3.25",
            ".5",
            "5.",
            "1e-3",
            "-4.3e-08",
            "123456789.5",
            "0.000000001",
            "1234567.12345678",
            " ",
            " ",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\r",
            "\x0b",
            "x",
            "\x01",
            "-",
            "..",
        ];
        let mut next = crate::xorshift(0x2545_f491_4f6c_dd1d);
        for case in 0..300 {
            let mut text = String::new();
            let len = next() % 3000;
            while (text.len() as u64) < len {
                let r = next();
                // Bad pieces rarely, so that most texts are read to the end.
                let k = (r % PIECES.len() as u64) as usize;
                if k >= PIECES.len() - 4 && !r.is_multiple_of(50) {
                    continue;
                }
                text.push_str(PIECES[k]);
                if k < 11 {
                    text.push(' ');
                }
            }
            for piece in [text.len().max(1), 100, 37] {
                let portable = scan_pieces(text.as_bytes(), piece, Portable);
                let fast = scan_pieces(text.as_bytes(), piece, FAST);
                assert_eq!(portable, fast, "case {case}, pieces of {piece}: {text:?}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    let avx2 = scan_pieces(text.as_bytes(), piece, avx2::Avx2::IN_AVX2_BUILD);
                    assert_eq!(portable, avx2, "avx2: case {case}, pieces of {piece}: {text:?}");
                }
                // Every value, in order, is its token's own parse up to the
                // first bad token (none lost or moved where a piece ends).
                let read = &text.as_bytes()[..portable.1.map_or(text.len(), |b| b.0)];
                let want: Vec<u64> = read
                    .split(|&b| crate::number::is_space(b))
                    .filter(|t| !t.is_empty())
                    .map(|t| crate::number::parse_token(t).map_or(0, f64::to_bits))
                    .collect();
                assert_eq!(portable.0, want, "case {case}, pieces of {piece}: {text:?}");
            }
        }
    }

    /// The line statistics of `text` (3 channels), byte by byte: what
    /// [`scan_pieces`] formats, from tokens (runs of bytes above `b' '`)
    /// and line ends alone.
    fn reference_stats(text: &[u8]) -> String {
        let mut st = RowStats::default();
        let mut inside = false;
        for (i, &b) in text.iter().enumerate() {
            if b > b' ' {
                if !inside {
                    if st.cur_len == 0 {
                        st.cur_start = i;
                    }
                    st.cur_len += 1;
                }
                inside = true;
                continue;
            }
            inside = false;
            if b == b'\n' {
                st.lf += 1;
                st.end_line(3);
            } else if b == b'\r' {
                st.cr += 1;
                st.end_line(3);
            }
        }
        st.end_line(3);
        fmt_stats(&st)
    }

    /// What the tests compare of a scan's line statistics.
    fn fmt_stats(st: &RowStats) -> String {
        format!(
            "{} {} {} {} {:?} {:?} {} {}",
            st.rows,
            st.first_len,
            st.uniform,
            st.irregular,
            st.first_irregular,
            st.last,
            st.lf,
            st.cr
        )
    }

    #[test]
    fn line_statistics_match_a_byte_by_byte_reference() {
        // Lines of one to five numbers, led and followed by runs of
        // spaces, so that pieces (and the lines they leave open) start
        // and end anywhere: on a space before a line's first value too.
        const SEPS: &[&str] = &[" ", " ", "  ", "\t", "\n", "\r\n", "\r", "\n\n", " \n  "];
        let mut next = crate::xorshift(0x9e37_79b9_7f4a_7c15);
        for case in 0..300 {
            let mut text = " ".repeat((next() % 3) as usize);
            let len = next() % 2000;
            while (text.len() as u64) < len {
                text.push_str(&format!("{}.{}", next() % 1000, next() % 100));
                text.push_str(SEPS[(next() % SEPS.len() as u64) as usize]);
            }
            let want = reference_stats(text.as_bytes());
            for piece in [text.len().max(1), 100, 37, 5] {
                let (values, bad, stats) = scan_pieces(text.as_bytes(), piece, FAST);
                assert_eq!(
                    (bad, &stats),
                    (None, &want),
                    "case {case}, pieces of {piece}: {text:?}"
                );
                // The same with the sink emptied after every piece, as the
                // streaming reader does: the open line's count is kept.
                let (mut out, mut st, mut count) = (Vec::new(), RowStats::default(), 0);
                let (mut pos, mut end) = (0, 0);
                loop {
                    end = (end.max(pos) + piece).min(text.len());
                    let last = end == text.len();
                    let done = scan(&text.as_bytes()[pos..end], pos, 3, &mut out, &mut st, last);
                    let Ok(used) = done else { panic!("bad token, case {case}") };
                    count += out.len();
                    out.clear();
                    if last {
                        break;
                    }
                    pos += used;
                }
                assert_eq!((count, fmt_stats(&st)), (values.len(), want.clone()), "case {case}");
            }
        }
    }

    #[test]
    fn blocks_of_one_byte_tokens_give_every_value() {
        // 32 token starts in every 64-byte block, the most a block holds
        // (a scan that gathers a block's starts in pieces of eight, as
        // tried in session 27, must not drop any).
        for sep in [" ", "\n", "\r\n", " \t"] {
            let text: String = (0..5000).map(|i| format!("{}{sep}", i % 10)).collect();
            let (v, s) = run(&text, 1);
            let want: Vec<f64> = (0..5000).map(|i| f64::from(i % 10)).collect();
            assert_eq!(v, want, "{sep:?}");
            let rows = if sep.contains('\n') { 5000 } else { 1 };
            assert_eq!(s.rows, rows, "{sep:?}");
        }
    }

    #[test]
    fn bad_tokens_are_reported_with_their_range() {
        let Err(e) = scan_all(b"1 2 x3 4", 10, 2, false, Vec::new()) else { panic!() };
        assert_eq!((e.start, e.end), (14, 16));
    }
}
