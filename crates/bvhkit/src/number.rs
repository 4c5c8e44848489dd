//! Number scanning and formatting: the hot loops of reading and writing.
//!
//! Reading uses Clinger's fast path (an exact integer mantissa below 2^53
//! scaled by an exact power of ten is correctly rounded by one IEEE division
//! or multiplication) and falls back to `fast-float2`, a correct
//! Eisel-Lemire implementation, for everything else. Writing prints the
//! shortest decimal that parses back to the same `f64` (`ryu`), laid out
//! without an exponent so that every BVH reader can read it.
//!
//! # Implementation notes
//!
//! The hot loops. `parse_short`, the fast path for the usual motion token
//! (sign, up to 7 + 8 digits, read eight digits at a time in a `u64`, one exact
//! division), and `parse_short_sse2`, the same tokens to the same bits in SSE2
//! (one 16-byte compare finds the integer part, point and fraction; both
//! 8-digit groups are converted in one register), `parse_short_avx2`, the same
//! again with AVX2's target features (one `pshufb` from a table by integer and
//! fraction length lays out both groups, four instructions convert them; the
//! scan's AVX2 build inlines it), `parse_number` (any spelling:
//! Clinger's exact fast path, `fast-float2` fallback; both give the same bits
//! as the fast path, which a differential test checks) and `write_shortest` /
//! `write_shortest_row` (decimals of up to nine places below 2^22, the usual
//! motion value and the angles `bvh edit` computes, straight from one exact
//! division check with 10^9, which below 2^22 also decides the decimals of
//! fewer places; m = round(|v|·10^9) found by adding 2^52, no float-to-integer
//! conversion; split once by 10^8 and both eight-digit halves made at once in
//! one SSE2 register (`digits16`; two `digits8` SWAR words elsewhere), the
//! integer digits and the point one shifted 8-byte store, the places another;
//! decimals of up to six places in [2^22, 2^32) by the same check with 10^6;
//! each row's values stored into a slice of the row sized beforehand; any other
//! value through `ryu`'s digits, its positional texts stored in place; always
//! laid out without exponent; tests compare both paths on millions of random
//! values, at the edges of both ranges and on every corpus value).

/// Exact powers of ten representable in `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Whether `b` separates tokens (ASCII whitespace as BVH files use it).
#[inline(always)]
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// Parses the number that starts at `bytes[start]`.
///
/// Returns the value and the index one past the token, or `Err(end)` with
/// the end of the offending token when the token is not a finite decimal
/// number. A token ends at whitespace or at the end of `bytes`.
#[inline]
pub(crate) fn parse_number(bytes: &[u8], start: usize) -> Result<(f64, usize), usize> {
    if let Some(done) = bytes.get(start..).and_then(parse_short) {
        return Ok((done.0, start + done.1));
    }
    parse_general(bytes, start)
}

/// Bit 7 of each byte of `w` set where that byte is not an ASCII digit.
#[inline(always)]
fn non_digits(w: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // Digits become 0..=9; (t & 0x7f) + 0x76 reaches bit 7 exactly when
    // t & 0x7f > 9, without carrying into the next byte; `| t` catches the
    // bytes whose own bit 7 is set.
    let t = w ^ ZEROS;
    (((t & LOW7) + 0x7676_7676_7676_7676) | t) & 0x8080_8080_8080_8080
}

/// The digits of `w` before its first non-digit byte (`non_digits(w)`
/// gives them), read as the eight-digit number they start:
/// `"12.3xxxxx"` gives 12_000_000.
#[inline(always)]
fn leading_digits(w: u64, non_digits: u64) -> u64 {
    // Bits below the first non-digit byte (all bits when there is none).
    let keep = ((non_digits & non_digits.wrapping_neg()) >> 7).wrapping_sub(1);
    // Digit values (a borrow only leaves the first non-digit byte, which
    // `keep` drops), the first digit in the lowest byte.
    let v = w.wrapping_sub(ZEROS) & keep;
    // Pairs of digits, then all eight (the usual SWAR steps).
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let pairs = 0x0000_00ff_0000_00ff;
    let hi = (v & pairs).wrapping_mul(100 + (1_000_000 << 32));
    let lo = ((v >> 16) & pairs).wrapping_mul(1 + (10_000 << 32));
    hi.wrapping_add(lo) >> 32
}

/// `b'0'` in every byte.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// What both fast paths start from: the token's first 24 bytes (`None`
/// when there are fewer), whether it is negative, and its sign's length.
#[inline(always)]
fn signed_window(bytes: &[u8]) -> Option<(&[u8; 24], bool, usize)> {
    let w: &[u8; 24] = bytes.get(..24)?.try_into().ok()?;
    let negative = w[0] == b'-';
    Some((w, negative, usize::from(negative || w[0] == b'+')))
}

/// The eight bytes of `w` from `at` as a little-endian word.
#[inline(always)]
fn word_at(w: &[u8; 24], at: usize) -> u64 {
    le_word(&w[at..at + 8])
}

/// `eight` (exactly eight bytes) as a little-endian word: the one load of
/// the SWAR and SSE2 code.
#[inline(always)]
pub(crate) fn le_word(eight: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(eight);
    u64::from_le_bytes(b)
}

/// The fast path for the tokens motion data is made of: an optional sign,
/// up to 7 integer digits, optionally a point and up to 8 more digits,
/// then whitespace. `bytes` starts at the token; the fast path reads 24
/// bytes of it and declines when there are fewer. Returns the value and
/// the token's length, or `None` for any other shape (which
/// [`parse_number`] then reads, to the same bits).
#[inline(always)]
pub(crate) fn parse_short(bytes: &[u8]) -> Option<(f64, usize)> {
    let (w, negative, sign) = signed_window(bytes)?;
    let word = |at: usize| word_at(w, at);
    let int = word(sign);
    let int_nd = non_digits(int);
    let int_len = int_nd.trailing_zeros() / 8;
    if int_len == 8 {
        return None;
    }
    // The integer part I as I * 10^(8 - int_len), the fraction F of
    // frac_len digits as F * 10^(8 - frac_len): the value is
    // (I * 10^8 + F * 10^(8 - frac_len)) / 10^8, whose numerator is below
    // 10^15 < 2^53, so exact; one division then rounds it correctly.
    let mut mantissa = leading_digits(int, int_nd) * POW10_U64[int_len as usize];
    let mut end = sign + int_len as usize; // at most 8
    let mut frac_len = 0;
    if w[end] == b'.' {
        let frac = word(end + 1);
        let frac_nd = non_digits(frac);
        frac_len = frac_nd.trailing_zeros() / 8;
        mantissa += leading_digits(frac, frac_nd);
        end += 1 + frac_len as usize; // at most 17
    }
    if int_len + frac_len == 0 || !is_space(w[end]) {
        return None;
    }
    // mantissa < 2^52 as an f64, exactly: 2^52 + mantissa, minus 2^52.
    // (`as f64` compiles to cvtsi2sd, which waits for the previous value
    // of its register: a chain through every number of the file.)
    let m = f64::from_bits(0x4330_0000_0000_0000 | mantissa) - 4_503_599_627_370_496.0;
    // The sign rides on the divisor, so the value stays in its register
    // (-0 included: 0 / -1e8 is -0).
    let v = m / DIVISOR[usize::from(negative)];
    Some((v, end))
}

/// [`parse_short`] on x86-64 with SSE2, for the same tokens and to the same
/// bits: one 16-byte compare finds the integer part, the point and the
/// fraction, and both 8-digit groups are converted at once.
///
/// A one-core parse is bound by the instructions it spends per number;
/// this takes it from about 850 to about 1180 MB/s on the CI machine. SSE2
/// is part of every x86-64 CPU and the build's target features say so (the
/// `cfg`), so calling this is always sound.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
pub(crate) fn parse_short_sse2(bytes: &[u8]) -> Option<(f64, usize)> {
    use std::arch::x86_64::{
        _mm_add_epi64, _mm_cmpeq_epi8, _mm_cvtepi32_pd, _mm_cvtsd_f64, _mm_madd_epi16,
        _mm_max_epu8, _mm_movemask_epi8, _mm_mul_epu32, _mm_packs_epi32, _mm_set_epi16,
        _mm_set_epi64x, _mm_set1_epi8, _mm_set1_epi32, _mm_setzero_si128, _mm_shuffle_epi32,
        _mm_srli_epi64, _mm_sub_epi8, _mm_unpackhi_epi8, _mm_unpackhi_pd, _mm_unpacklo_epi8,
    };
    let (w, negative, sign) = signed_window(bytes)?;
    let word = |at: usize| word_at(w, at);
    // The 16 bytes after the sign; bit k of `nd` set where byte k is not a
    // digit (and every bit from 16 up).
    let lo = word(sign);
    let x = _mm_set_epi64x(word(sign + 8) as i64, lo as i64);
    let d = _mm_sub_epi8(x, _mm_set1_epi8(b'0' as i8));
    let nine = _mm_set1_epi8(9);
    let digit = _mm_cmpeq_epi8(_mm_max_epu8(d, nine), nine);
    let nd = !(_mm_movemask_epi8(digit) as u32);
    let int_len = nd.trailing_zeros() as usize;
    if int_len >= 8 {
        return None;
    }
    let point = (lo >> (8 * int_len)) as u8 == b'.';
    let frac_len = if point { (nd >> (int_len + 1)).trailing_zeros() as usize } else { 0 };
    if frac_len > 8 {
        return None;
    }
    let end = sign + int_len + usize::from(point) + frac_len; // at most 17
    if int_len + frac_len == 0 || !is_space(w[end]) {
        return None;
    }
    // The integer digits shifted up to the top bytes read as I (the rest
    // of the word, and any borrow out of it, falls off; two shifts, as one
    // by 64 is not a shift). The fraction's digits with zeros after them
    // read as F * 10^(8 - frac_len).
    let int = (lo.wrapping_sub(ZEROS) << (56 - 8 * int_len)) << 8;
    let keep = ((1u64 << (4 * frac_len)) << (4 * frac_len)).wrapping_sub(1);
    let frac = word(sign + int_len + 1).wrapping_sub(ZEROS) & keep;
    // Both 8-digit numbers at once: pairs, groups of four, then eight.
    let v = _mm_set_epi64x(frac as i64, int as i64);
    let zero = _mm_setzero_si128();
    let tens = _mm_set_epi16(1, 10, 1, 10, 1, 10, 1, 10);
    let pairs = _mm_packs_epi32(
        _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), tens),
        _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), tens),
    );
    let fours = _mm_madd_epi16(pairs, _mm_set_epi16(1, 100, 1, 100, 1, 100, 1, 100));
    let eights =
        _mm_add_epi64(_mm_mul_epu32(fours, _mm_set1_epi32(10_000)), _mm_srli_epi64(fours, 32));
    // [I, F * 10^(8 - frac_len)] as doubles (both below 10^8, exact); the
    // numerator I * 10^8 + F * 10^(8 - frac_len) < 10^15 is exact too, and
    // the division rounds it correctly, as in the portable path.
    let f = _mm_cvtepi32_pd(_mm_shuffle_epi32(eights, 0b10_00_10_00));
    let m = _mm_cvtsd_f64(f) * 1e8 + _mm_cvtsd_f64(_mm_unpackhi_pd(f, f));
    Some((m / DIVISOR[usize::from(negative)], end))
}

/// [`parse_short`] with AVX2's target features (SSSE3's byte shuffle and
/// SSE4.1's packing among them), for the same tokens and to the same bits:
/// the 16-byte compare of [`parse_short_sse2`] finds the integer part, the
/// point and the fraction, then one byte shuffle (from [`DIGIT_SHUFFLES`],
/// by the two lengths) lays the integer digits out right-aligned in the low
/// eight bytes and the fraction's left-aligned in the high eight, zeros
/// elsewhere, and four instructions make [I, F * 10^(8 - frac_len)] of them
/// (`pmaddubsw` pairs, `pmaddwd` fours, `packusdw`, `pmaddwd` eights): some
/// 30 instructions fewer per number than the SSE2 kernel's shifts, masks
/// and unpacking (the scan: 131 to 100 per number). Only `parse::scan`'s
/// AVX2 kernels call it (under `simd_kernel!`'s AVX2 build, where it
/// inlines).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn parse_short_avx2(bytes: &[u8]) -> Option<(f64, usize)> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cvtepi32_pd, _mm_cvtsd_f64, _mm_madd_epi16, _mm_maddubs_epi16,
        _mm_max_epu8, _mm_movemask_epi8, _mm_packus_epi32, _mm_set_epi64x, _mm_set1_epi8,
        _mm_set1_epi16, _mm_set1_epi32, _mm_shuffle_epi8, _mm_sub_epi8, _mm_unpackhi_pd,
    };
    let (w, negative, sign) = signed_window(bytes)?;
    let word = |at: usize| word_at(w, at);
    // As in `parse_short_sse2`: bit k of `nd` set where byte k after the
    // sign is not a digit (and every bit from 16 up).
    let x = _mm_set_epi64x(word(sign + 8) as i64, word(sign) as i64);
    let d = _mm_sub_epi8(x, _mm_set1_epi8(b'0' as i8));
    let nine = _mm_set1_epi8(9);
    let digit = _mm_cmpeq_epi8(_mm_max_epu8(d, nine), nine);
    let nd = !(_mm_movemask_epi8(digit) as u32);
    let int_len = nd.trailing_zeros() as usize;
    if int_len >= 8 {
        return None;
    }
    let point = w[sign + int_len] == b'.';
    let frac_len = if point { (nd >> (int_len + 1)).trailing_zeros() as usize } else { 0 };
    if frac_len > 8 {
        return None;
    }
    let end = sign + int_len + usize::from(point) + frac_len; // at most 17
    if int_len + frac_len == 0 || !is_space(w[end]) {
        return None;
    }
    // The digit values laid out as two 8-digit numbers (see above), then
    // pairs, fours (below 10^4, so they pack to 16 bits) and eights.
    let shuffle = DIGIT_SHUFFLES[int_len][frac_len];
    let lanes = _mm_set_epi64x(le_word(&shuffle[8..]) as i64, le_word(&shuffle[..8]) as i64);
    let laid: __m128i = _mm_shuffle_epi8(d, lanes);
    let pairs = _mm_maddubs_epi16(laid, _mm_set1_epi16(0x010a));
    let fours = _mm_madd_epi16(pairs, _mm_set1_epi32(0x0001_0064));
    let eights = _mm_madd_epi16(_mm_packus_epi32(fours, fours), _mm_set1_epi32(0x0001_2710));
    // [I, F * 10^(8 - frac_len)] as doubles, exact; the same numerator and
    // division as the other fast paths.
    let f = _mm_cvtepi32_pd(eights);
    let m = _mm_cvtsd_f64(f) * 1e8 + _mm_cvtsd_f64(_mm_unpackhi_pd(f, f));
    Some((m / DIVISOR[usize::from(negative)], end))
}

/// The byte shuffles of [`parse_short_avx2`], by integer and fraction
/// length: byte `j < 8` takes the integer digit `j - (8 - int_len)` (right
/// aligned), byte `8 + j` the fraction digit `j` (at `int_len + 1 + j`)
/// while `j < frac_len`; every other byte is zero (index bit 7 set).
#[cfg(target_arch = "x86_64")]
static DIGIT_SHUFFLES: [[[u8; 16]; 9]; 8] = digit_shuffles();

#[cfg(target_arch = "x86_64")]
const fn digit_shuffles() -> [[[u8; 16]; 9]; 8] {
    let mut all = [[[0x80u8; 16]; 9]; 8];
    let mut int_len = 0;
    while int_len < 8 {
        let mut frac_len = 0;
        while frac_len <= 8 {
            let s = &mut all[int_len][frac_len];
            let mut j = 8 - int_len;
            while j < 8 {
                s[j] = (j + int_len - 8) as u8;
                j += 1;
            }
            let mut j = 0;
            while j < frac_len {
                s[8 + j] = (int_len + 1 + j) as u8;
                j += 1;
            }
            frac_len += 1;
        }
        int_len += 1;
    }
    all
}

/// The fast path's divisor, by sign.
const DIVISOR: [f64; 2] = [1e8, -1e8];

/// Exact powers of ten as integers, for the fast path's mantissa.
const POW10_U64: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// [`parse_number`] for every token shape (what callers that have already
/// tried [`parse_short`] call next).
pub(crate) fn parse_general(bytes: &[u8], start: usize) -> Result<(f64, usize), usize> {
    let n = bytes.len();
    let mut i = start;
    let mut negative = false;
    if i < n && (bytes[i] == b'-' || bytes[i] == b'+') {
        negative = bytes[i] == b'-';
        i += 1;
    }
    // Accumulate every digit; more than 19 of them (leading zeros included)
    // may have wrapped, and such rare tokens take the exact slow path below.
    let int_start = i;
    let (mut i, mut mantissa) = digits(bytes, i, 0);
    let mut n_digits = i - int_start;
    let mut exp10: i32 = 0;
    if i < n && bytes[i] == b'.' {
        i += 1;
        let frac_start = i;
        (i, mantissa) = digits(bytes, i, mantissa);
        let frac = i - frac_start;
        n_digits += frac;
        exp10 = -(frac.min(1 << 20) as i32);
    }
    let any_digit = n_digits > 0;
    let overflow = n_digits > 19;
    if !any_digit {
        return Err(token_end(bytes, i));
    }
    if i < n && (bytes[i] == b'e' || bytes[i] == b'E') {
        i += 1;
        let mut eneg = false;
        if i < n && (bytes[i] == b'-' || bytes[i] == b'+') {
            eneg = bytes[i] == b'-';
            i += 1;
        }
        let estart = i;
        let mut e: i32 = 0;
        while i < n && bytes[i].is_ascii_digit() {
            e = e.saturating_mul(10).saturating_add(i32::from(bytes[i] - b'0'));
            i += 1;
        }
        if i == estart {
            return Err(token_end(bytes, i));
        }
        exp10 = exp10.saturating_add(if eneg { -e } else { e });
    }
    if i < n && !is_space(bytes[i]) {
        return Err(token_end(bytes, i));
    }
    if !overflow && mantissa < (1u64 << 53) && (-22..=22).contains(&exp10) {
        // mantissa < 2^53: exact through i64, which converts in one instruction.
        let m = mantissa as i64 as f64;
        let v = if exp10 < 0 { m / POW10[(-exp10) as usize] } else { m * POW10[exp10 as usize] };
        return Ok((if negative { -v } else { v }, i));
    }
    // Slow path: long mantissas and large exponents.
    match fast_float2::parse::<f64, _>(&bytes[start..i]) {
        Ok(v) if v.is_finite() => Ok((v, i)),
        _ => Err(i),
    }
}

/// Appends the decimal digits from `bytes[i]` on to `mantissa` (wrapping
/// past 19 digits: callers count digits and then take the slow path);
/// returns the index of the first non-digit and the new mantissa.
#[inline(always)]
fn digits(bytes: &[u8], mut i: usize, mut mantissa: u64) -> (usize, u64) {
    while i < bytes.len() {
        let d = bytes[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    (i, mantissa)
}

/// Index one past the token containing `i`.
#[inline]
pub(crate) fn token_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && !is_space(bytes[i]) {
        i += 1;
    }
    i
}

/// Parses a whole token as a finite `f64`, or `None`.
pub(crate) fn parse_token(tok: &[u8]) -> Option<f64> {
    match parse_number(tok, 0) {
        Ok((v, end)) if end == tok.len() => Some(v),
        _ => None,
    }
}

/// Appends the shortest decimal form of `v` that parses back to the same
/// bits, without exponent and without a trailing `.0`: `0`, `-0`, `1.5`,
/// `0.0001`, `123456789012345680000`.
///
/// `v` must be finite.
pub(crate) fn write_shortest(out: &mut Vec<u8>, v: f64) {
    debug_assert!(v.is_finite());
    let start = out.len();
    out.resize(start + SHORT_ROOM, 0);
    match short_decimal_into(&mut out[start..], v) {
        Some(n) => out.truncate(start + n),
        None => {
            out.truncate(start);
            write_shortest_ryu(out, v);
        }
    }
}

/// Bytes of room [`short_decimal_into`] needs after its start: the longest
/// texts it writes (sign, ten integer digits, point and six places, or
/// sign, seven integer digits, point and nine places: 18 bytes) plus the
/// slack of its 8-byte stores.
pub(crate) const SHORT_ROOM: usize = 24;

/// `'0'` in every byte.
const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// The eight decimal digits of `n < 10^8` as byte values 0 to 9 in one
/// `u64`, the most significant digit in the lowest byte (so that the
/// little-endian bytes read in writing order). Each step splits every lane
/// in two at once: 4 + 4 digits by one division, then 2 + 2 and 1 + 1 by
/// multiplications that divide exactly for lanes below 10^4 and 10^2
/// (`x · 10486 >> 20` is `x / 100` for `x < 43699`, `x · 103 >> 10` is
/// `x / 10` for `x < 179`).
#[inline(always)]
fn digits8(n: u32) -> u64 {
    debug_assert!(n < 100_000_000);
    let n = u64::from(n);
    let x = (n / 10_000) | ((n % 10_000) << 32);
    let hi = ((x * 10486) >> 20) & 0x0000_007f_0000_007f;
    let x = hi | ((x - hi * 100) << 16);
    let hi = ((x * 103) >> 10) & 0x000f_000f_000f_000f;
    hi | ((x - hi * 10) << 8)
}

/// Writes [`write_shortest`]'s text of the usual motion value, a decimal of
/// at most nine places below 2^22 in magnitude (zero included) or of at
/// most six places below 2^32, at the start of `dst` (at least
/// [`SHORT_ROOM`] bytes; bytes past the text are scratch) and returns its
/// length; `None` for any other value (including non-finite ones).
///
/// With k places (9 below 2^22, 6 above) and m = round(|v| · 10^k), m and
/// m / 10^k are exact and correctly rounded (m < 2^52), so m / 10^k is what
/// the text of m · 10^-k reads back to; when that is |v|, the text with
/// trailing zeros dropped is `ryu`'s, the shortest that reads back (the
/// closest of those as short). An ulp of |v| is under 10^-k (2^-31 below
/// 2^22, 2^-21 below 2^32), so no other decimal of k places or fewer reads
/// back to `v`. Another decimal that does and has no more significant
/// digits therefore ends below 10^-k, so it starts lower than m · 10^-k:
/// it lies below 10^e <= m · 10^-k (e the position of the leading digit of
/// m · 10^-k, so e >= -k). Then 10^e, between the two, reads back to `v`
/// too and, having at most k places, is m · 10^-k itself, whose one digit
/// no other decimal undercuts. Below 2^22 the test with 10^9 thus decides
/// the decimals of six places or fewer as well (their m is a multiple of
/// 1000: the same digits, the zeros dropped, and the point for an
/// integer), so it is the only test made there. Any integer m that passes
/// the check is that decimal, so m may be rounded loosely (its product
/// with 10^k is rounded first; the decimal nearest to `v` is still found:
/// the two roundings move m by under one half); a value it misses would go
/// to `ryu`, which gives the same digits. Tests compare the two on
/// millions of values, at the edges of both ranges and on every value of
/// the corpus.
#[inline(always)]
pub(crate) fn short_decimal_into(dst: &mut [u8], v: f64) -> Option<usize> {
    let a = v.abs();
    let dst: &mut [u8; SHORT_ROOM] = dst.get_mut(..SHORT_ROOM)?.try_into().ok()?;
    if a < 4_194_304.0 {
        let t = round_below_2_52(a * 1e9);
        if integer_part(t) / 1e9 != a {
            return None;
        }
        dst[0] = b'-';
        let p = usize::from(v.is_sign_negative());
        return Some(nine_places_text(dst, p, integer_bits(t)));
    }
    if a.is_nan() || a >= 4_294_967_296.0 {
        return None;
    }
    let t = round_below_2_52(a * 1e6);
    if integer_part(t) / 1e6 != a {
        return None;
    }
    let m = integer_bits(t);
    dst[0] = b'-';
    let mut p = usize::from(v.is_sign_negative());
    // q >= 2^22 has seven to ten digits.
    let (q, r) = (m / 1_000_000, (m % 1_000_000) as u32);
    if q < 100_000_000 {
        let d = digits8(q as u32);
        // Leading zero digits are the low zero bytes.
        let lead = (d.trailing_zeros() / 8) as usize;
        let text = (d | ASCII_ZEROS) >> (8 * lead);
        dst[p..p + 8].copy_from_slice(&text.to_le_bytes());
        p += 8 - lead;
    } else {
        // Nine or ten integer digits.
        let (hi, lo) = ((q / 100_000_000) as u32, (q % 100_000_000) as u32);
        if hi >= 10 {
            dst[p] = b'0' + (hi / 10) as u8;
            p += 1;
        }
        dst[p] = b'0' + (hi % 10) as u8;
        dst[p + 1..p + 9].copy_from_slice(&(digits8(lo) | ASCII_ZEROS).to_le_bytes());
        p += 9;
    }
    if r != 0 {
        // Six places as eight digits; trailing zero digits are the high zero bytes.
        let d = digits8(r * 100);
        let places = 8 - (d.leading_zeros() / 8) as usize;
        dst[p] = b'.';
        dst[p + 1..p + 9].copy_from_slice(&(d | ASCII_ZEROS).to_le_bytes());
        p += 1 + places;
    }
    Some(p)
}

/// `x` (`0 <= x < 2^52`) rounded to an integer, as `2^52 +` that integer:
/// one addition, which rounds to the nearest integer as the ulp there is 1.
/// (No float-to-integer conversion, with its checks for NaN and range,
/// and none back: the integer as an `f64` is [`integer_part`]'s, exact.)
#[inline(always)]
fn round_below_2_52(x: f64) -> f64 {
    debug_assert!((0.0..4_503_599_627_370_496.0).contains(&x));
    x + 4_503_599_627_370_496.0
}

/// The integer `t - 2^52` of `t` from [`round_below_2_52`], as an `f64`
/// (exact: `2^52 <= t < 2^53`).
#[inline(always)]
fn integer_part(t: f64) -> f64 {
    t - 4_503_599_627_370_496.0
}

/// The integer `t - 2^52` of `t` from [`round_below_2_52`], from its
/// mantissa bits.
#[inline(always)]
fn integer_bits(t: f64) -> u64 {
    t.to_bits() & ((1 << 52) - 1)
}

/// Writes m · 10^-9 (m < 2^22 · 10^9) at `dst[p..]` the way
/// [`short_decimal_into`] writes it (at least one integer digit, the point
/// and the places up to the last that is not zero, neither for an integer)
/// and returns the end of the text.
///
/// m is split once by 10^8 into an eight-digit high part (the seven
/// integer digits and the first place) and the eight last places, both
/// converted at once ([`digits16`]); the integer digits with the point
/// after them are one 8-byte store shifted past the leading zeros, the
/// nine places one byte and one 8-byte store.
#[inline(always)]
fn nine_places_text(dst: &mut [u8; SHORT_ROOM], p: usize, m: u64) -> usize {
    debug_assert!(p <= 1 && m < 4_194_304_000_000_000);
    let (hi, lo) = digits16((m / 100_000_000) as u32, (m % 100_000_000) as u32);
    // Leading zero digits are the low zero bytes; keep the last integer
    // digit (byte 6) whatever it is.
    let lead = ((hi.trailing_zeros() / 8) as usize).min(6);
    let int_point = ((hi | ASCII_ZEROS) & 0x00ff_ffff_ffff_ffff) | (u64::from(b'.') << 56);
    dst[p..p + 8].copy_from_slice(&(int_point >> (8 * lead)).to_le_bytes());
    let p = p + 8 - lead;
    // The nine places: the high part's last digit, then the low part, whose
    // trailing zero digits are its high zero bytes.
    let first = (hi >> 56) as u8;
    dst[p] = first | b'0';
    dst[p + 1..p + 9].copy_from_slice(&(lo | ASCII_ZEROS).to_le_bytes());
    let places =
        if lo != 0 { 9 - (lo.leading_zeros() / 8) as usize } else { usize::from(first != 0) };
    // No places: no point either.
    p + places - usize::from(places == 0)
}

/// The digits of `hi` and `lo` (both below 10^8) as [`digits8`] gives
/// them: SSE2 on x86-64 (both numbers in one register), else `digits8`
/// twice.
#[inline(always)]
fn digits16(hi: u32, lo: u32) -> (u64, u64) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: the build enables SSE2 for every target CPU (the cfg):
        // every x86-64 CPU has it.
        #[allow(unsafe_code)]
        unsafe {
            digits16_sse2(hi, lo)
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        (digits8(hi), digits8(lo))
    }
}

/// [`digits8`] of `hi` and `lo` at once, in the two halves of one SSE2
/// register, by the same three splits: 4 + 4 digits by the exact
/// multiplication `n · 0xd1b7_1759 >> 45` (`n / 10^4` for every `n < 2^32`),
/// then 2 + 2 and 1 + 1 in 16-bit lanes by high halves of products
/// (`(x · 5243 >> 16) >> 3` is `x / 100` for `x < 10^4`, `x · 6554 >> 16`
/// is `x / 10` for `x < 100`). A test compares it with `digits8`.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn digits16_sse2(hi: u32, lo: u32) -> (u64, u64) {
    use std::arch::x86_64::{
        _mm_cvtsi128_si64, _mm_mul_epu32, _mm_mulhi_epu16, _mm_mullo_epi16, _mm_or_si128,
        _mm_set_epi64x, _mm_set1_epi16, _mm_set1_epi32, _mm_slli_epi16, _mm_slli_epi32,
        _mm_slli_epi64, _mm_srli_epi16, _mm_srli_epi64, _mm_srli_si128, _mm_sub_epi16,
        _mm_sub_epi32,
    };
    let n = _mm_set_epi64x(i64::from(lo), i64::from(hi));
    // Per 64-bit lane: n / 10^4 in the low half, n % 10^4 in the high one.
    let q = _mm_srli_epi64(_mm_mul_epu32(n, _mm_set1_epi32(0xd1b7_1759_u32 as i32)), 45);
    let r = _mm_sub_epi32(n, _mm_mul_epu32(q, _mm_set1_epi32(10_000)));
    let x = _mm_or_si128(q, _mm_slli_epi64(r, 32));
    // Per 32-bit lane (below 10^4, so its high 16 bits are zero): x / 100
    // in the low half, x % 100 in the high one.
    let q = _mm_srli_epi16(_mm_mulhi_epu16(x, _mm_set1_epi16(5243)), 3);
    let r = _mm_sub_epi16(x, _mm_mullo_epi16(q, _mm_set1_epi16(100)));
    let x = _mm_or_si128(q, _mm_slli_epi32(r, 16));
    // Per 16-bit lane (below 100): the tens in the low byte, the units in
    // the high one.
    let q = _mm_mulhi_epu16(x, _mm_set1_epi16(6554));
    let r = _mm_sub_epi16(x, _mm_mullo_epi16(q, _mm_set1_epi16(10)));
    let d = _mm_or_si128(q, _mm_slli_epi16(r, 8));
    (_mm_cvtsi128_si64(d) as u64, _mm_cvtsi128_si64(_mm_srli_si128(d, 8)) as u64)
}

/// Appends `values` separated by one space, each as [`write_shortest`]
/// writes it: one frame of motion, the writer's hot loop. Returns the index
/// of the first value that is not finite (the text stops before it, after
/// its separator) or `None`.
pub(crate) fn write_shortest_row(out: &mut Vec<u8>, values: &[f64]) -> Option<usize> {
    let mut p = out.len();
    // Room for every value (its separator and SHORT_ROOM bytes), refilled
    // after one of the rare texts that are longer.
    out.resize(p + values.len() * (SHORT_ROOM + 1), 0);
    let mut i = 0;
    loop {
        // The values the fast path takes, into the room as a slice (its
        // start and length stay in registers), up to one it does not.
        let room = &mut out[..];
        while let Some(&v) = values.get(i) {
            if i > 0 {
                room[p] = b' ';
                p += 1;
            }
            let Some(n) = short_decimal_into(&mut room[p..], v) else { break };
            p += n;
            i += 1;
        }
        let Some(&v) = values.get(i) else { break };
        if !v.is_finite() {
            out.truncate(p);
            return Some(i);
        }
        // `ryu` prints values from 1e-5 to 1e16 positionally (with a margin
        // here): such texts of up to SHORT_ROOM bytes go into the value's
        // room as they are; others are laid out.
        let mut buf = ryu::Buffer::new();
        let text = buf.format_finite(v).as_bytes();
        let text = text.strip_suffix(b".0").unwrap_or(text);
        if text.len() <= SHORT_ROOM && (1e-4..1e15).contains(&v.abs()) {
            out[p..p + text.len()].copy_from_slice(text);
            p += text.len();
        } else {
            out.truncate(p);
            write_shortest_ryu(out, v);
            p = out.len();
            out.resize(p + (values.len() - i) * (SHORT_ROOM + 1), 0);
        }
        i += 1;
    }
    out.truncate(p);
    None
}

/// Appends `values` separated by one space: each value that is exactly a
/// 32-bit float as the shortest decimal that reads back to that float
/// ([`short_f32_into`], else `ryu`'s `f32` digits laid out as
/// [`write_shortest`] lays them out), any other as [`write_shortest`]
/// writes it. Returns the index of the first value that is not finite (the
/// text stops before it, after its separator) or `None`.
pub(crate) fn write_shortest_f32_row(out: &mut Vec<u8>, values: &[f64]) -> Option<usize> {
    const ROOM: usize = SHORT_ROOM + 1;
    let mut p = out.len();
    // Room for every value (its separator and SHORT_ROOM bytes): after each
    // value, at least ROOM bytes per value left. A longer text (rare) goes
    // through `slow` and, when it takes the room of others, the room left
    // is doubled (so a row of long texts costs O(n) too).
    out.resize(p + values.len() * ROOM, 0);
    let mut slow = Vec::new();
    for (i, &v) in values.iter().enumerate() {
        if i > 0 {
            out[p] = b' ';
            p += 1;
        }
        let x = v as f32;
        let single = f64::from(x) == v;
        if single && let Some(n) = short_f32_into(&mut out[p..], x) {
            p += n;
            continue;
        }
        if !v.is_finite() {
            out.truncate(p);
            return Some(i);
        }
        slow.clear();
        if single {
            lay_out_ryu(&mut slow, ryu::Buffer::new().format_finite(x).as_bytes());
        } else {
            write_shortest(&mut slow, v);
        }
        let after = (values.len() - i - 1) * ROOM;
        if out.len() < p + slow.len() + after {
            out.resize(p + slow.len() + 2 * after, 0);
        }
        out[p..p + slow.len()].copy_from_slice(&slow);
        p += slow.len();
    }
    out.truncate(p);
    None
}

/// Writes the shortest decimal of at most nine places that reads back to
/// `x` (a 32-bit float below 2^22 in magnitude) at the start of `dst` (at
/// least [`SHORT_ROOM`] bytes) as [`short_decimal_into`] lays decimals out,
/// and returns its length; `None` when there is none or it is not sure.
///
/// With a = |x| and h the half distance to the nearer neighbouring float
/// (so that every number closer to a than h reads back to x), the decimals
/// of k places are tried for k = 0, 1, ... 9: the closest to a is
/// m · 10^-k, m = round(a · 10^k), and it reads back to x when
/// |m - a · 10^k| < h · 10^k. The test is made with h less a margin of
/// a · 2^-48, which covers the rounding of a · 10^k and h · 10^k, so a
/// decimal that passes is strictly inside x's interval (never at a tie);
/// one that lies within the margin of the edge is left to `ryu`. The first
/// k that passes gives the shortest decimal, the closest of that length.
#[inline(always)]
pub(crate) fn short_f32_into(dst: &mut [u8], x: f32) -> Option<usize> {
    let dst: &mut [u8; SHORT_ROOM] = dst.get_mut(..SHORT_ROOM)?.try_into().ok()?;
    let bits = x.to_bits() & 0x7fff_ffff;
    let a = f64::from(f32::from_bits(bits));
    if a.is_nan() || a >= 4_194_304.0 {
        return None;
    }
    dst[0] = b'-';
    let p = usize::from(x.is_sign_negative());
    if bits == 0 {
        return Some(nine_places_text(dst, p, 0));
    }
    let up = f64::from(f32::from_bits(bits + 1)) - a;
    let down = a - f64::from(f32::from_bits(bits - 1));
    let h = 0.5 * up.min(down) - a * (1.0 / 281_474_976_710_656.0);
    for (k, &scale) in POW10[..10].iter().enumerate() {
        let t = a * scale;
        let r = round_below_2_52(t);
        if (integer_part(r) - t).abs() < h * scale {
            let m = integer_bits(r) * (1_000_000_000 / 10u64.pow(k as u32));
            return Some(nine_places_text(dst, p, m));
        }
    }
    None
}

/// [`write_shortest`] through `ryu`'s digits, for any finite value.
fn write_shortest_ryu(out: &mut Vec<u8>, v: f64) {
    let mut buf = ryu::Buffer::new();
    lay_out_ryu(out, buf.format_finite(v).as_bytes());
}

/// Appends `ryu`'s text `s` of a value without exponent and without a
/// trailing `.0`.
fn lay_out_ryu(out: &mut Vec<u8>, s: &[u8]) {
    // ryu prints either `[-]digits.digits` or `[-]d[.ddd]e[-]x`.
    let Some(epos) = s.iter().position(|&b| b == b'e') else {
        // Positional; drop a trailing ".0".
        let s = s.strip_suffix(b".0").unwrap_or(s);
        out.extend_from_slice(s);
        return;
    };
    let (mant, exp) = (&s[..epos], &s[epos + 1..]);
    let exp: i32 = std::str::from_utf8(exp).ok().and_then(|e| e.parse().ok()).unwrap_or(0);
    let (neg, mant) = match mant.first() {
        Some(b'-') => (true, &mant[1..]),
        _ => (false, mant),
    };
    // Significant digits without the point; the value is 0.d1d2...dn * 10^(exp+1).
    let mut digits: Vec<u8> = mant.iter().copied().filter(|&b| b != b'.').collect();
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    if neg {
        out.push(b'-');
    }
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-point) as usize));
        out.extend_from_slice(&digits);
    } else if point as usize >= digits.len() {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', point as usize - digits.len()));
    } else {
        out.extend_from_slice(&digits[..point as usize]);
        out.push(b'.');
        out.extend_from_slice(&digits[point as usize..]);
    }
}

/// Appends `v` with exactly `decimals` digits after the point.
pub(crate) fn write_fixed(out: &mut Vec<u8>, v: f64, decimals: u8) {
    use std::io::Write as _;
    let _ = write!(out, "{:.*}", usize::from(decimals), v);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decimal fast path writes what `ryu` writes, or nothing.
    #[test]
    fn the_short_decimal_path_writes_what_ryu_writes() {
        let mut next = crate::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1e-6,
            -1e-6,
            1.5e-6,
            1e-7,
            0.000001,
            0.0083333,
            123.456,
            4294967295.999999,
            4294967296.0,
            -4294967295.5,
            2147483647.123456,
            1e15,
            0.1 + 0.2,
            9.999_999_5,
            0.999_999_5,
            1e-5,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            99_999_999.999_999,
            100_000_000.0,
            -100_000_000.000_001,
            123_456_789.5,
            999_999_999.25,
            1_000_000_000.0,
            4_000_000_000.000_001,
            0.000_000_001,
            -0.000_000_01,
            0.100_000_001,
            179.999_999_999,
            -359.123_456_789,
            4_194_303.999_999_999,
            4_194_303.5,
            4_194_304.000_000_1,
            1_000_000.000_000_001,
            0.000_01,
            0.1,
            10.0,
            -7.0,
        ];
        for _ in 0..3_000_000 {
            let r = next();
            let v = match r % 6 {
                // Decimals of 0 to 9 places, the way motion files hold them.
                0..=2 => {
                    let places = (r >> 8) % 10;
                    let digits = (r >> 16) % 10u64.pow(1 + (r >> 12) as u32 % 12);
                    let s = format!("{}", digits as f64 / 10f64.powi(places as i32));
                    s.parse::<f64>().unwrap() * if r & 1 == 0 { 1.0 } else { -1.0 }
                }
                3 => match r >> 62 {
                    0 | 1 => f64::from_bits(next()),
                    // Angles at nine places, as `bvh edit` writes them.
                    2 => {
                        let a = (next() >> 11) as f64 / (1u64 << 53) as f64 * 720.0 - 360.0;
                        (a * 1e9).round() / 1e9
                    }
                    // Decimals of seven to nine places just below 2^22.
                    _ => (4_194_304e9 - (next() % 100_000) as f64) / 1e9,
                },
                4 => (next() >> 11) as f64 / (1u64 << 53) as f64 * 360.0 - 180.0,
                _ => ((next() % 2_000_000_000) as f64 - 1e9) / 10f64.powi((r >> 8) as i32 % 8),
            };
            if v.is_finite() {
                values.push(v);
            }
        }
        let mut taken = 0;
        for v in values {
            let mut fast = [0u8; SHORT_ROOM];
            let mut slow = Vec::new();
            write_shortest_ryu(&mut slow, v);
            let mut row = Vec::new();
            assert_eq!(write_shortest_row(&mut row, &[v]), None);
            assert_eq!(row, slow, "{v:e}");
            if let Some(n) = short_decimal_into(&mut fast, v) {
                taken += 1;
                assert_eq!(fast[..n], slow[..], "{v:e}");
                // std's `Display` is the same form (shortest digits, no
                // exponent), written independently of both. (Beyond these
                // values it may pick another last digit among equally short
                // ones, e.g. for 1658206780088562.25.)
                assert_eq!(slow, format!("{v}").as_bytes(), "{v:e}");
            }
        }
        assert!(taken > 1_000_000, "the fast path took {taken} values");
    }

    /// The values at the edges of the nine-place and six-place tests:
    /// integers, the last values below 2^22 and 2^32 and the first above,
    /// decimals of one to nine places (six to nine places: trailing zeros
    /// the nine-place test drops) around every digit count of the integer
    /// part, and both zeros. Each prints what `ryu` prints, and every
    /// decimal of at most nine places below 2^22 (of at most six below
    /// 2^32) takes the fast path.
    #[test]
    fn the_edges_of_the_fast_path_write_what_ryu_writes() {
        let below = |v: f64| f64::from_bits(v.to_bits() - 1);
        let above = |v: f64| f64::from_bits(v.to_bits() + 1);
        let mut values = vec![0.0, -0.0];
        for edge in [4_194_304.0, 4_294_967_296.0] {
            values.extend([below(edge), edge, above(edge), below(below(edge))]);
        }
        let ints = [
            0u64,
            1,
            9,
            10,
            99,
            100,
            999,
            1_000,
            9_999,
            10_000,
            99_999,
            100_000,
            999_999,
            1_000_000,
            4_194_303,
            4_194_304,
            4_194_305,
            9_999_999,
            10_000_000,
            99_999_999,
            100_000_000,
            999_999_999,
            1_000_000_000,
            4_294_967_295,
            4_294_967_296,
        ];
        let fractions = [
            "",
            "0",
            "1",
            "5",
            "05",
            "001",
            "000001",
            "100000",
            "123456",
            "999999",
            "0000001",
            "1000000",
            "1234567",
            "00000001",
            "10000000",
            "12345678",
            "99999999",
            "000000001",
            "100000000",
            "123456789",
            "999999999",
            "000000010",
            "000001000",
            "120000000",
        ];
        let mut decimals = Vec::new();
        for int in ints {
            for frac in fractions {
                let text = if frac.is_empty() { int.to_string() } else { format!("{int}.{frac}") };
                decimals.push(text);
            }
        }
        for text in &decimals {
            let v: f64 = text.parse().unwrap();
            values.extend([v, -v]);
        }
        for v in values {
            let mut want = Vec::new();
            write_shortest_ryu(&mut want, v);
            let mut row = Vec::new();
            assert_eq!(write_shortest_row(&mut row, &[v, v]), None);
            assert_eq!(row, [&want[..], b" ", &want[..]].concat(), "{v:e}");
            let mut fast = [0u8; SHORT_ROOM];
            if let Some(n) = short_decimal_into(&mut fast, v) {
                assert_eq!(fast[..n], want[..], "{v:e}");
            }
        }
        for text in &decimals {
            let v: f64 = text.parse().unwrap();
            let places = text.split_once('.').map_or(0, |(_, f)| f.len());
            if v < 4_194_304.0 || (v < 4_294_967_296.0 && places <= 6) {
                for v in [v, -v] {
                    let mut fast = [0u8; SHORT_ROOM];
                    assert!(short_decimal_into(&mut fast, v).is_some(), "{text}");
                }
            }
        }
    }

    /// Both numbers' digits in one SSE2 register are `digits8`'s.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[test]
    fn sse2_digits_are_digits8s() {
        let mut next = crate::xorshift(0x2545_f491_4f6c_dd1d);
        let mut edges = vec![0u32, 1, 9, 10, 99, 100, 9_999, 10_000, 10_001, 99_999_999];
        edges.extend((0..8).map(|k| 10u32.pow(k) - 1));
        edges.extend((0..8).map(|k| 10u32.pow(k)));
        for i in 0..2_000_000u32 {
            let x = next();
            let (hi, lo) = if (i as usize) < edges.len() * edges.len() {
                (edges[i as usize % edges.len()], edges[i as usize / edges.len()])
            } else {
                ((x % 100_000_000) as u32, ((x >> 32) % 100_000_000) as u32)
            };
            // SAFETY: the build enables SSE2 for every target CPU (the cfg).
            #[allow(unsafe_code)]
            let got = unsafe { digits16_sse2(hi, lo) };
            assert_eq!(got, (digits8(hi), digits8(lo)), "{hi} {lo}");
        }
    }

    /// Every value of the corpus (motion, offsets, frame times), printed by
    /// the fast path where it takes it and by the `ryu` path, gives the same
    /// text, and a row of the corpus is its values joined as the `ryu` path
    /// prints them.
    #[test]
    fn every_corpus_value_prints_the_same_on_both_paths() {
        let files = bvhkit_testdata::corpus_files();
        if files.is_empty() {
            bvhkit_testdata::skip("every_corpus_value_prints_the_same_on_both_paths", "no corpus");
            return;
        }
        let (mut values, mut taken) = (0usize, 0usize);
        let (mut row, mut want) = (Vec::new(), Vec::new());
        for path in files {
            let bytes = std::fs::read(&path).unwrap();
            let (bvh, _) = crate::ReadOptions::new().lenient(true).parse(&bytes).unwrap();
            let mut extra = vec![bvh.motion().frame_time()];
            for j in bvh.skeleton().joints() {
                extra.extend(j.offset().to_array());
            }
            for frame in bvh.motion().frames().chain(std::iter::once(&extra[..])) {
                want.clear();
                for (i, &v) in frame.iter().enumerate() {
                    if i > 0 {
                        want.push(b' ');
                    }
                    let start = want.len();
                    write_shortest_ryu(&mut want, v);
                    let mut fast = [0u8; SHORT_ROOM];
                    if let Some(n) = short_decimal_into(&mut fast, v) {
                        assert_eq!(fast[..n], want[start..], "{}: {v:e}", path.display());
                        taken += 1;
                    }
                }
                row.clear();
                assert_eq!(write_shortest_row(&mut row, frame), None);
                assert!(row == want, "{}", path.display());
                values += frame.len();
            }
        }
        assert!(values > 1_000_000 && taken > values / 4, "{taken} of {values} values");
        eprintln!("{taken} of {values} corpus values took the fast path");
    }

    /// A row is its values as [`write_shortest`] writes them, one space
    /// apart, whatever mix of fast and `ryu` values it holds; a value that
    /// is not finite stops it after its separator.
    #[test]
    fn rows_are_their_values_one_space_apart() {
        let values =
            [1.5, -0.0, 1e300, 12.25, 1e-300, 0.1 + 0.2, -180.0, 4294967296.5, 3.0, 1e-7, 42.0];
        for n in 0..=values.len() {
            let row = &values[..n];
            let mut out = b"prefix ".to_vec();
            assert_eq!(write_shortest_row(&mut out, row), None);
            let want: Vec<String> = row.iter().map(|v| format!("{v}")).collect();
            assert_eq!(String::from_utf8(out).unwrap(), format!("prefix {}", want.join(" ")));
        }
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut out = Vec::new();
            assert_eq!(write_shortest_row(&mut out, &[1.0, 1e300, bad, 2.0]), Some(2));
            assert_eq!(out, format!("1 {} ", 1e300).as_bytes());
            let mut out = Vec::new();
            assert_eq!(write_shortest_row(&mut out, &[bad]), Some(0));
            assert!(out.is_empty());
        }
    }

    fn p(s: &str) -> Option<f64> {
        parse_token(s.as_bytes())
    }

    fn shortest(v: f64) -> String {
        let mut out = Vec::new();
        write_shortest(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn parses_the_spellings_found_in_real_files() {
        assert_eq!(p("0"), Some(0.0));
        assert_eq!(p(".5"), Some(0.5));
        assert_eq!(p("5."), Some(5.0));
        assert_eq!(p("+1"), Some(1.0));
        assert_eq!(p("-12.345678"), Some(-12.345678));
        assert_eq!(p("1e3"), Some(1000.0));
        assert_eq!(p("1.5E-3"), Some(0.0015));
        assert_eq!(p("-2.220446049250313e-16"), Some(-2.220446049250313e-16));
        assert_eq!(p(".0083333"), Some(0.0083333));
        assert_eq!(p("0.016666666666666666"), Some(0.016666666666666666));
        let z = p("-0").unwrap();
        assert!(z == 0.0 && z.is_sign_negative());
        let z = p("-0.000").unwrap();
        assert!(z == 0.0 && z.is_sign_negative());
    }

    #[test]
    fn rejects_what_is_not_a_finite_number() {
        for bad in [
            "", "-", "+", ".", "e5", "1e", "1e+", "1.2.3", "12abc", "nan", "inf", "1,5", "--1",
            "1e999",
        ] {
            assert_eq!(p(bad), None, "{bad:?}");
        }
    }

    /// `token` then a space, padded to the fast path's window.
    fn window(token: &str) -> Vec<u8> {
        let mut w = format!("{token} ").into_bytes();
        w.resize(w.len().max(24), b'x');
        w
    }

    #[test]
    fn the_fast_path_takes_the_usual_motion_tokens() {
        for (t, v) in [
            ("-12.345678", -12.345678_f64),
            ("0", 0.0),
            ("+7", 7.0),
            ("1234567.12345678", 1234567.12345678),
            (".5", 0.5),
            ("5.", 5.0),
            ("-0.000001", -0.000001),
            ("-0", -0.0),
        ] {
            for (name, fast) in fast_paths() {
                let got = fast(&window(t)[..24]);
                assert_eq!(
                    got.map(|(v, e)| (v.to_bits(), e)),
                    Some((v.to_bits(), t.len())),
                    "{name} {t}"
                );
            }
        }
        for t in ["12345678", "1.123456789", "1e5", "-", ".", "1.2.3", "1x", "--1", "- 1"] {
            for (name, fast) in fast_paths() {
                assert_eq!(fast(&window(t)[..24]), None, "{name} {t}");
            }
        }
    }

    type FastPath = fn(&[u8]) -> Option<(f64, usize)>;

    /// The fast paths of this build: the portable one, and SSE2 on x86-64.
    fn fast_paths() -> Vec<(&'static str, FastPath)> {
        #[allow(unused_mut)]
        let mut paths: Vec<(&'static str, FastPath)> = vec![("portable", parse_short)];
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        paths.push(("sse2", |b| {
            // SAFETY: the build enables SSE2 for every target CPU (the cfg).
            #[allow(unsafe_code)]
            unsafe {
                parse_short_sse2(b)
            }
        }));
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            paths.push(("avx2", |b| {
                // SAFETY: pushed only once the CPU was found to have AVX2.
                #[allow(unsafe_code)]
                unsafe {
                    parse_short_avx2(b)
                }
            }));
        }
        paths
    }

    #[test]
    fn the_fast_path_agrees_with_the_general_one_bit_for_bit() {
        // Random short tokens over the characters numbers are made of.
        const ALPHABET: &[u8] = b"0123456789012345678901234567890123456789-+.e ";
        let mut next = crate::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut taken = 0;
        for _ in 0..200_000 {
            let x = next();
            let len = 1 + (x % 18) as usize;
            let mut w: Vec<u8> = (0..24)
                .map(|k| ALPHABET[((x >> (k * 2)) as usize ^ (k * 7)) % ALPHABET.len()])
                .collect();
            w[len] = b' ';
            let paths = fast_paths();
            let portable = parse_short(&w);
            for (name, fast) in &paths {
                // Every fast path takes the same tokens.
                let got = fast(&w);
                assert_eq!(
                    got.map(|(v, e)| (v.to_bits(), e)),
                    portable.map(|(v, e)| (v.to_bits(), e)),
                    "{name} {:?}",
                    String::from_utf8_lossy(&w)
                );
            }
            if let Some((v, end)) = portable {
                taken += 1;
                let general = parse_general(&w, 0);
                assert_eq!(
                    general.map(|(g, e)| (g.to_bits(), e)),
                    Ok((v.to_bits(), end)),
                    "{:?}",
                    String::from_utf8_lossy(&w)
                );
            }
        }
        assert!(taken > 10_000, "the fast path took only {taken} tokens");
    }

    /// Each 32-bit float is written as std's shortest text of that `f32`
    /// (positional, the digits that read back to it; at a tie, either of
    /// the two as short), every other value as
    /// `write_shortest` writes it; a value that is not finite stops the row.
    #[test]
    fn f32_rows_are_std_s_shortest_f32_text() {
        let mut floats: Vec<f32> = vec![
            0.0,
            -0.0,
            1.0,
            0.1,
            -40.692955,
            1e-7,
            1.5e-45,
            f32::MIN_POSITIVE,
            f32::MAX,
            -f32::MAX,
            16_777_216.0,
            123_456_790.0,
            1e20,
        ];
        let mut usual: Vec<f32> = Vec::new();
        let mut x: u32 = 0x9e37_79b9;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let f = f32::from_bits(x);
            if f.is_finite() {
                floats.push(f);
            }
            // And the usual motion values: six decimals below 1000.
            usual.push(((x % 2_000_000_000) as f64 / 1e6 - 1000.0) as f32);
        }
        floats.extend_from_slice(&usual);
        let values: Vec<f64> = floats.iter().map(|&f| f64::from(f)).collect();
        let mut out = Vec::new();
        assert_eq!(write_shortest_f32_row(&mut out, &values), None);
        let text = String::from_utf8(out).unwrap();
        let (mut n, mut ties) = (0, 0);
        for (t, f) in text.split(' ').zip(&floats) {
            assert_eq!(t.parse::<f32>().unwrap().to_bits(), f.to_bits(), "{t}");
            let std = format!("{f}");
            if t != std {
                // Two decimals as short read back (the float is halfway
                // between them): std and ryu may pick either.
                assert_eq!(t.len(), std.len(), "{f:e}: {t} vs {std}");
                let (a, b): (f64, f64) = (t.parse().unwrap(), std.parse().unwrap());
                let mid = f64::from(*f);
                assert!(((a + b) / 2.0 - mid).abs() <= 1e-12 * mid.abs(), "{f:e}: {t} vs {std}");
                ties += 1;
            }
            n += 1;
        }
        assert_eq!(n, floats.len());
        assert!(ties * 100 < n, "{ties} ties in {n}");
        // The fast path takes the usual motion values, and writes the text
        // the row has.
        let mut taken = 0;
        for f in &usual {
            let mut room = [0u8; SHORT_ROOM];
            if let Some(n) = short_f32_into(&mut room, *f) {
                let mut row = Vec::new();
                write_shortest_f32_row(&mut row, &[f64::from(*f)]);
                assert_eq!(&room[..n], &row[..], "{f:e}");
                taken += 1;
            }
        }
        assert!(taken > 199_000, "the fast path took {taken} of 200,000 usual values");
        // Values that are not 32-bit floats keep their 64-bit text.
        for v in [0.1f64, 1.0 / 3.0, -123.456789, 1e300, 4e-320] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            write_shortest_f32_row(&mut a, &[v]);
            write_shortest(&mut b, v);
            assert_eq!(a, b, "{v:e}");
            assert_eq!(String::from_utf8(a).unwrap().parse::<f64>().unwrap(), v);
        }
        let mut out = Vec::new();
        assert_eq!(write_shortest_f32_row(&mut out, &[1.5, f64::NAN, 2.0]), Some(1));
        assert_eq!(out, b"1.5 ");
    }

    #[test]
    fn slow_path_agrees_with_std() {
        for s in [
            "123456789012345678901234567890",
            "0.1234567890123456789012345",
            "1e-300",
            "4.9406564584124654e-324",
            "1.7976931348623157e308",
            "9007199254740993",
            "0.000000000000000000000000000001",
        ] {
            assert_eq!(p(s), Some(s.parse::<f64>().unwrap()), "{s}");
        }
    }

    #[test]
    fn shortest_is_positional_and_round_trips() {
        assert_eq!(shortest(0.0), "0");
        assert_eq!(shortest(-0.0), "-0");
        assert_eq!(shortest(1.0), "1");
        assert_eq!(shortest(-1.5), "-1.5");
        assert_eq!(shortest(0.0001), "0.0001");
        assert_eq!(shortest(1e-7), "0.0000001");
        assert_eq!(shortest(1.25e-7), "0.000000125");
        assert_eq!(shortest(1e21), "1000000000000000000000");
        assert_eq!(shortest(1.5e17), "150000000000000000");
        assert_eq!(shortest(123.456), "123.456");
        for v in [f64::MIN_POSITIVE, 5e-324, f64::MAX, -f64::MAX, 0.1 + 0.2, 1.0 / 3.0, 2.5e-8] {
            let s = shortest(v);
            assert_eq!(p(&s).map(f64::to_bits), Some(v.to_bits()), "{v:e} -> {s}");
        }
    }

    #[test]
    fn fixed_decimals() {
        let mut out = Vec::new();
        write_fixed(&mut out, 1.23456, 2);
        assert_eq!(out, b"1.23");
    }
}
