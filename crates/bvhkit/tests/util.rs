use std::path::{Path, PathBuf};

use bvhkit::glam::{DMat3, DQuat};
use bvhkit::{Bvh, Channel};

/// The shared corpus folder ([`bvhkit_testdata::corpus_dir`]), or `None`
/// with a printed skip message.
#[track_caller]
pub(crate) fn corpus_dir() -> Option<PathBuf> {
    bvhkit_testdata::corpus_or_skip(std::panic::Location::caller().to_string().as_str())
}

/// Every `.bvh` file of the corpus, sorted by name.
pub(crate) fn corpus_files() -> Vec<PathBuf> {
    if corpus_dir().is_none() {
        return Vec::new();
    }
    let files = bvhkit_testdata::corpus_files();
    assert!(files.len() >= 41, "the corpus should hold at least 41 files, found {}", files.len());
    files
}

pub(crate) fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// The folder of the committed fixtures.
pub(crate) fn data_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(sub)
}

/// The `.bvh` fixtures of one folder, sorted.
pub(crate) fn fixtures(sub: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bvh"))
        .collect();
    files.sort();
    files
}

/// Compares `actual` with the `.expected` file next to `fixture`; with
/// `BVHKIT_BLESS=1` in the environment, writes it instead.
#[track_caller]
pub(crate) fn check_expected(fixture: &Path, actual: &str) {
    let path = fixture.with_extension("expected");
    if std::env::var_os("BVHKIT_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!("{} is missing: run with BVHKIT_BLESS=1 and review it", path.display())
    });
    assert_eq!(actual, expected, "{} differs from {}", stem(fixture), path.display());
}

/// Writes `bvh` canonically and reads it back strictly: it must be identical,
/// bit for bit, and writing again must give the same bytes.
#[track_caller]
pub(crate) fn assert_round_trip(bvh: &bvhkit::Bvh, what: &str) {
    let text = bvh.to_bytes().unwrap_or_else(|e| panic!("{what}: write failed: {e}"));
    let back = bvhkit::Bvh::parse(&text)
        .unwrap_or_else(|e| panic!("{what}: canonical output does not parse: {e}"));
    bvhkit_testdata::assert_bit_identical(bvh, &back, what);
    assert_eq!(
        back.to_bytes().unwrap(),
        text,
        "{what}: canonical text is not re-emitted byte for byte"
    );
}

/// Reads `input` leniently both ways, in memory and through a `FrameReader`
/// fed in small reads, and asserts that both give the same skeleton, frames
/// (bit for bit) and warnings. Returns how many frames there were.
#[track_caller]
pub(crate) fn assert_streaming_agrees(input: &[u8], what: &str) -> usize {
    let opts = {
        let mut o = bvhkit::ReadOptions::new();
        o.lenient(true);
        o
    };
    let (bvh, warnings) = opts.parse(input).unwrap_or_else(|e| panic!("{what}: {e}"));
    // Reads of 4 KiB: the header and the motion cross many read boundaries.
    let rdr = std::io::BufReader::with_capacity(4096, input);
    let mut r = opts.frame_reader(rdr).unwrap_or_else(|e| panic!("{what}: streaming: {e}"));
    assert_eq!(r.skeleton(), bvh.skeleton(), "{what}");
    let mut frame = vec![0.0; r.skeleton().n_channels()];
    let mut i = 0;
    while r.read_frame(&mut frame).unwrap_or_else(|e| panic!("{what}: frame {i}: {e}")) {
        let bits = |f: &[f64]| f.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&frame), bits(bvh.motion().frame(i)), "{what}: frame {i}");
        i += 1;
    }
    assert_eq!(i, bvh.motion().n_frames(), "{what}: frames");
    let sw: Vec<String> = r.warnings().iter().map(|w| w.to_string()).collect();
    let pw: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(sw, pw, "{what}: streaming warnings");
    // Scanned in place (`frame_reader_slice`, its large windows in two
    // halves on two threads), taken in batches of an odd size: the same.
    let mut r = opts.frame_reader_slice(input).unwrap_or_else(|e| panic!("{what}: slice: {e}"));
    assert_eq!(r.skeleton(), bvh.skeleton(), "{what}: slice");
    let mut batch = Vec::new();
    let mut n = 0;
    loop {
        let got = r.read_frames(&mut batch, 97).unwrap_or_else(|e| panic!("{what}: slice: {e}"));
        if got == 0 {
            break;
        }
        n += got;
    }
    assert_eq!(n, bvh.motion().n_frames(), "{what}: slice frames");
    let bits = |f: &[f64]| f.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert!(bits(&batch) == bits(bvh.motion().values()), "{what}: slice values differ");
    let sw: Vec<String> = r.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(sw, pw, "{what}: slice warnings");
    i
}

/// A joint's local rotation in `frame`, written plainly from the format
/// texts: the product of its rotation channels in listed order, each a 3x3
/// matrix about its axis (the reference the edit, mix and rest-pose tests
/// compare with).
pub(crate) fn local_matrix(bvh: &Bvh, joint: usize, frame: &[f64]) -> DMat3 {
    let j = &bvh.skeleton().joints()[joint];
    let mut m = DMat3::IDENTITY;
    for (k, c) in j.channels().iter().enumerate() {
        let r = frame[j.first_channel() + k].to_radians();
        m *= match c {
            Channel::Xrotation => DMat3::from_rotation_x(r),
            Channel::Yrotation => DMat3::from_rotation_y(r),
            Channel::Zrotation => DMat3::from_rotation_z(r),
            _ => DMat3::IDENTITY,
        };
    }
    m
}

/// The same as a unit quaternion.
pub(crate) fn local_quat(bvh: &Bvh, joint: usize, frame: &[f64]) -> DQuat {
    DQuat::from_mat3(&local_matrix(bvh, joint, frame)).normalize()
}
