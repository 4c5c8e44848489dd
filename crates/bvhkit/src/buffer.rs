//! The buffer that receives the motion values of a parse.
//!
//! A 100 MB file holds about 80 MB of values. Written into fresh memory 4 KiB
//! page by page, that costs one page fault per page: about a fifth of a
//! whole single-threaded parse. On Linux the buffer is therefore advised to
//! use transparent huge pages (2 MiB, 512 times fewer faults) when the
//! system allows them on request (`madvise` in
//! `/sys/kernel/mm/transparent_hugepage/enabled`, the usual default); with
//! `always` it changes nothing, with `never` the advice is ignored.
//!
//! # Implementation notes
//!
//! Why `unsafe`: `buffer::advise_huge_pages` calls `madvise(MADV_HUGEPAGE)`
//! (Linux, `libc`) on the page-aligned inside of a freshly allocated value
//! buffer of 4 MiB or more. It is advice only: it reads, writes, moves and
//! frees nothing. Writing 80 MB of values into fresh 4 KiB pages costs one page
//! fault per page, about 30 ms of a 130 ms single-threaded parse of a 100 MB
//! file on the CI machine; with 2 MiB pages that cost nearly vanishes. glibc
//! can do the same for every allocation
//! (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`), but that is the user's
//! environment, not something a library can count on. Where transparent huge
//! pages are `never` the advice is ignored and nothing else changes.

/// The size of a transparent huge page on x86-64 and most arm64 kernels;
/// buffers smaller than two of them are left as the allocator made them.
const HUGE_PAGE: usize = 2 << 20;

/// An empty vector with room for `capacity` values.
pub(crate) fn with_capacity(capacity: usize) -> Vec<f64> {
    let mut values = Vec::with_capacity(capacity);
    advise_huge_pages(&mut values);
    values
}

/// `len` zeros, in memory that is not written until the values are.
pub(crate) fn zeroed(len: usize) -> Vec<f64> {
    // Zeros come from the allocator as fresh, untouched pages (calloc), so
    // the advice below still applies to all of them.
    let mut values = vec![0.0; len];
    advise_huge_pages(&mut values);
    values
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(values: &mut Vec<f64>) {
    let bytes = values.capacity() * size_of::<f64>();
    if bytes < 2 * HUGE_PAGE {
        return;
    }
    let start = values.as_mut_ptr() as usize;
    let first = start.next_multiple_of(HUGE_PAGE);
    let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: [first, end) lies inside the vector's own allocation and is
        // page aligned, as madvise requires. MADV_HUGEPAGE is only advice on
        // how to back the range: it neither reads, writes, frees nor moves
        // memory, so every pointer and value stays as it was. A failure
        // (THP compiled out, an old kernel) only means no advice was taken.
        #[allow(unsafe_code)]
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_: &mut Vec<f64>) {}

#[cfg(test)]
mod tests {
    #[test]
    fn buffers_hold_what_they_are_given() {
        let mut v = super::with_capacity(1 << 20);
        assert!(v.capacity() >= 1 << 20 && v.is_empty());
        v.extend((0..1 << 20).map(f64::from));
        assert_eq!(v[12345], 12345.0);
        let z = super::zeroed(3 << 20);
        assert_eq!(z.len(), 3 << 20);
        assert!(z.iter().all(|&x| x.to_bits() == 0));
    }
}
