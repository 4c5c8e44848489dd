//! The import's fast path (the curves' arrays read from the file's bytes,
//! the scene loaded by `ufbx` without its keys) against the import through
//! `ufbx`'s keyframes: the same `Bvh` bit for bit, the same notes and unit,
//! on every corpus export; the files it does not take fall back; damaged
//! files give an error, never a panic.

use bvhkit::{Bvh, ReadOptions};
use bvhkit_fbx::{
    ExportOptions, ImportOptions, Options, export, import, import_fast_path,
    import_through_ufbx_keys,
};

const FIXTURE: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 1 2 3
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Arm:L
  {
    OFFSET 5 8 0
    CHANNELS 4 Yposition Yrotation Zrotation Xrotation
    End Site
    {
      OFFSET 7 0 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.0083333
1 2 3 10 20 30 2.5 90 45 -30
4 5 6 -170 89.9 30 2.5 91 46 -31
7 8 9 179.99 -89.99 -179 2.6 92 47 -32
";

/// The fast path is taken and gives what ufbx's keys give.
fn same_both_ways(name: &str, fbx: &[u8], options: &ImportOptions) -> Bvh {
    let fast = import_fast_path(fbx, options)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .unwrap_or_else(|| panic!("{name}: the fast path was not taken"));
    let slow = import_through_ufbx_keys(fbx, options).unwrap_or_else(|e| panic!("{name}: {e}"));
    bvhkit_testdata::assert_bit_identical(&fast.bvh, &slow.bvh, name);
    assert_eq!(fast.notes, slow.notes, "{name}: notes");
    assert_eq!(fast.metres_per_unit.to_bits(), slow.metres_per_unit.to_bits(), "{name}: unit");
    fast.bvh
}

#[test]
fn every_corpus_export_takes_the_fast_path_and_reads_as_ufbx_reads_it() {
    if bvhkit_testdata::corpus_or_skip("every_corpus_export_takes_the_fast_path").is_none() {
        return;
    }
    let mut done = 0;
    for path in bvhkit_testdata::corpus_files() {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let Ok((bvh, _)) = ReadOptions::new().lenient(true).parse(&bytes) else { continue };
        let out = export(&bvh, &ExportOptions::default()).unwrap();
        let back = same_both_ways(&name, &out.bytes, &ImportOptions::default());
        assert_eq!(back.motion().n_frames(), bvh.motion().n_frames(), "{name}");
        // Stepped keys and no End Sites: still keys on the frames.
        let plain = ExportOptions {
            constant: true,
            end_sites: false,
            common: Options { mesh: false, ..Default::default() },
        };
        let out = export(&bvh, &plain).unwrap();
        same_both_ways(&format!("{name} (constant keys)"), &out.bytes, &ImportOptions::default());
        done += 1;
    }
    assert!(done >= 30, "only {done} corpus files read");
}

#[test]
fn the_fixture_reads_its_32_bit_values_and_a_named_stack() {
    let bvh = Bvh::parse(FIXTURE).unwrap();
    let options = ExportOptions {
        common: Options { name: Some("take 1".into()), ..Default::default() },
        ..Default::default()
    };
    let out = export(&bvh, &options).unwrap();
    let back = same_both_ways("fixture", &out.bytes, &ImportOptions::default());
    for (x, y) in bvh.motion().values().iter().zip(back.motion().values()) {
        assert_eq!(*y, f64::from(*x as f32));
    }
    let named = ImportOptions { stack: Some("take 1".into()), ..Default::default() };
    same_both_ways("fixture, named stack", &out.bytes, &named);
    let missing = ImportOptions { stack: Some("take 2".into()), ..Default::default() };
    assert!(import_fast_path(&out.bytes, &missing).is_err());
}

#[test]
fn a_given_rate_and_ascii_files_go_through_ufbx_s_keys() {
    let bvh = Bvh::parse(FIXTURE).unwrap();
    let out = export(&bvh, &ExportOptions::default()).unwrap();
    let rate = ImportOptions { fps: Some(240.0), ..Default::default() };
    assert!(import_fast_path(&out.bytes, &rate).unwrap().is_none());
    let ascii = b"; FBX 7.4.0 project file
FBXHeaderExtension:  {
\tFBXHeaderVersion: 1003
\tFBXVersion: 7400
}
Objects:  {
\tModel: 1, \"Model::Hips\", \"LimbNode\" {
\t\tVersion: 232
\t}
}
Connections:  {
\tC: \"OO\",1,0
}
";
    assert!(import_fast_path(ascii, &ImportOptions::default()).unwrap().is_none());
    let back = import(ascii, &ImportOptions::default()).unwrap();
    assert_eq!(back.bvh.skeleton().joints()[0].name(), "Hips");
}

/// Every truncation and a byte changed at many places: an error or a
/// result, never a panic; whatever the fast path reads, ufbx's keys read
/// too, the same.
#[test]
fn damaged_files_never_panic() {
    let bvh = Bvh::parse(FIXTURE).unwrap();
    let out = export(
        &bvh,
        &ExportOptions {
            common: Options { mesh: false, ..Default::default() },
            ..Default::default()
        },
    )
    .unwrap();
    let bytes = &out.bytes;
    let options = ImportOptions::default();
    let mut fast_taken = 0;
    let check = |b: &[u8], fast_taken: &mut usize| {
        if let Ok(Some(fast)) = import_fast_path(b, &options) {
            *fast_taken += 1;
            if let Ok(slow) = import_through_ufbx_keys(b, &options) {
                bvhkit_testdata::assert_bit_identical(&fast.bvh, &slow.bvh, "damaged");
            }
        }
        let _ = import(b, &options);
    };
    for end in (0..bytes.len()).step_by(97) {
        check(&bytes[..end], &mut fast_taken);
    }
    for at in (27..bytes.len()).step_by(13) {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[at] ^= flip;
            check(&b, &mut fast_taken);
        }
    }
    assert!(fast_taken > 100, "the fast path read only {fast_taken} of the damaged files");
}

/// Arrays whose counts claim more elements than a clip may hold (2^30 key
/// times and values) are refused by their count, before anything is sized
/// by it, on the fast path and through ufbx.
#[test]
fn array_counts_beyond_the_limit_are_refused_before_they_size_anything() {
    let bvh = Bvh::parse(FIXTURE).unwrap();
    let mut fbx = export(&bvh, &ExportOptions::default()).unwrap().bytes;
    // A record's name, then its property's type code, then the count.
    let mut patched = 0;
    for name in [&b"KeyTimel"[..], b"KeyValueFloatf"] {
        let mut from = 0;
        while let Some(i) = fbx[from..].windows(name.len()).position(|w| w == name) {
            let at = from + i + name.len();
            fbx[at..at + 4].copy_from_slice(&(1u32 << 30).to_le_bytes());
            patched += 1;
            from = at;
        }
    }
    assert!(patched >= 2, "no arrays found");
    let err = import_fast_path(&fbx, &ImportOptions::default())
        .expect_err("a count beyond the limit is an error");
    assert!(err.to_string().contains("more than the limit of 536870912"), "{err}");
    assert!(import(&fbx, &ImportOptions::default()).is_err());
    assert!(import_through_ufbx_keys(&fbx, &ImportOptions::default()).is_err());
}
