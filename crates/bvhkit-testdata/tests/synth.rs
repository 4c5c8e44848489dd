//! The synthetic texts parse strictly with bvhkit and are deterministic.

use bvhkit::{Bvh, JointKind, ReadOptions};
use bvhkit_testdata::{corpus_dir, largest_corpus_files, synth_text, synth_text_of_size};

#[test]
fn parses_strictly_at_every_size() {
    for (seed, joints, frames) in
        [(0, 1, 0), (1, 1, 3), (2, 5, 10), (3, 22, 50), (4, 52, 120), (5, 100, 30), (6, 400, 5)]
    {
        let text = synth_text(seed, joints, frames);
        let bvh = Bvh::parse(&text).unwrap_or_else(|e| panic!("seed {seed}, {joints} joints: {e}"));
        let skel = bvh.skeleton();
        let named = skel.joints().iter().filter(|j| j.kind() != JointKind::EndSite).count();
        assert_eq!(named, joints, "seed {seed}");
        assert_eq!(bvh.motion().n_frames(), frames, "seed {seed}");
        assert_eq!(skel.joints()[0].channels().len(), 6);
        // The parallel and serial paths agree on it too.
        let (par, _) = ReadOptions::new().parallel(true).parse(text.as_bytes()).unwrap();
        assert_eq!(par, bvh);
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    assert_eq!(synth_text(42, 60, 200), synth_text(42, 60, 200));
    assert_ne!(synth_text(42, 60, 200), synth_text(43, 60, 200));
    // The skeleton does not depend on the frame count.
    let a = synth_text(9, 60, 10);
    let b = synth_text(9, 60, 20);
    let h = a.find("MOTION").unwrap();
    assert_eq!(a[..h], b[..h]);
}

#[test]
fn looks_like_real_exporter_output() {
    let text = synth_text(11, 52, 400);
    let motion = &text[text.find("Frame Time").unwrap()..];
    assert!(motion.contains("e-0"), "some values in scientific notation");
    let orders: std::collections::HashSet<_> =
        text.lines().filter(|l| l.contains("CHANNELS 3")).map(|l| l.trim().to_string()).collect();
    assert!(orders.len() > 1, "mixed rotation orders");
    let fixed =
        motion.split_ascii_whitespace().filter(|t| t.len() > 7 && t.find('.') == Some(t.len() - 7));
    assert!(fixed.count() > 400 * 100);
}

#[test]
fn sized_text_is_near_the_size_asked() {
    for want in [10_000, 1_000_000, 5_000_000] {
        let text = synth_text_of_size(3, want);
        let got = text.len() as f64;
        assert!((got - want as f64).abs() < 0.02 * want as f64 + 4_000.0, "{want} -> {got}");
        Bvh::parse(&text).unwrap();
    }
    assert_eq!(synth_text_of_size(3, 200_000), synth_text_of_size(3, 200_000));
}

#[test]
fn corpus_lookup() {
    match corpus_dir() {
        None => bvhkit_testdata::skip(
            "corpus_lookup",
            "no shared corpus (../shared/corpus beside the workspace)",
        ),
        Some(dir) => {
            assert!(dir.is_dir());
            let files = largest_corpus_files(3);
            assert_eq!(files.len(), 3);
            let sizes: Vec<u64> =
                files.iter().map(|p| std::fs::metadata(p).unwrap().len()).collect();
            assert!(sizes.windows(2).all(|w| w[0] >= w[1]));
        }
    }
}
