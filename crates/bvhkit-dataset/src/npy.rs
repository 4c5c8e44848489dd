//! The NPY v1.0 array header, shared by `bvh positions -o OUT.npy` and the
//! NPZ writer ([`crate::NpzWriter`]).

/// The NPY v1.0 header of a C-order array of element type `descr` (`"<f4"`,
/// `"<f8"`, `"<i4"`, `"|b1"`, ...) and shape `shape`.
///
/// The first dimension is given room for 20 digits, so the header of the
/// same array with any other first dimension has the same length: a writer
/// can write the header with 0 frames, stream the values and patch the count
/// at the end. The length is a multiple of 64 bytes, so the values are
/// aligned.
///
/// # Example
///
/// ```
/// let h = bvhkit_dataset::npy::header("<f8", &[2, 3]);
/// assert!(h.starts_with(b"\x93NUMPY\x01\x00"));
/// assert_eq!(h.len() % 64, 0);
/// assert_eq!(h.len(), bvhkit_dataset::npy::header("<f8", &[123456, 3]).len());
/// ```
#[must_use]
pub fn header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dims = match shape {
        [one] => format!("({one},)"),
        _ => format!("({})", shape.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")),
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    let first = shape.first().map_or(0, |n| n.to_string().len());
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    let unpadded = 10 + dict.len() + 20usize.saturating_sub(first) + 1;
    let total = unpadded.div_ceil(64) * 64;
    let hlen = u16::try_from(total - 10).expect("an NPY header of a few dimensions fits in 64 KiB");
    h.extend_from_slice(&hlen.to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h.resize(total - 1, b' ');
    h.push(b'\n');
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_aligned_fixed_size_and_says_the_shape() {
        for f in [0, 1, 99, 123_456_789] {
            let h = header("<f4", &[f, 65, 3]);
            assert_eq!(h.len() % 64, 0);
            assert_eq!(h.len(), header("<f4", &[0, 65, 3]).len());
            let text = std::str::from_utf8(&h[10..]).unwrap();
            assert!(text.contains(&format!("'shape': ({f}, 65, 3)")), "{text}");
            assert_eq!(u16::from_le_bytes([h[8], h[9]]) as usize, h.len() - 10);
        }
        let h = header("|b1", &[7]);
        assert!(std::str::from_utf8(&h[10..]).unwrap().contains("'shape': (7,)"));
    }
}
