//! `ChunkedMap` and `map_frames_chunked`: the per-frame transforms mapped
//! in parallel runs give, bit for bit, what mapping one frame at a time in
//! order gives, on every thread count, on the corpus and on synthetic
//! clips whose angles wander several turns (so that guessed states are
//! wrong and parts are mapped again).

use bvhkit::edit::axes::{Axes, AxesMap, SignedAxis};
use bvhkit::edit::layout::{LayoutMap, Positions};
use bvhkit::edit::mirror::{Mirror, MirrorOptions};
use bvhkit::edit::order::OrderMap;
use bvhkit::edit::scale::ScaleMap;
use bvhkit::edit::{ChunkedMap, SplitFrameMap, map_frames, map_frames_chunked};
use bvhkit::rotation::RotationOrder;
use bvhkit::{Bvh, PositionChannels, ReadOptions};

use crate::util::{corpus_files, stem};

/// The spinning clip of `bvhkit_testdata::spinning_text`.
pub(crate) fn spinning(frames: usize) -> Bvh {
    Bvh::parse(bvhkit_testdata::spinning_text(frames)).unwrap()
}

fn bits(b: &Bvh) -> Vec<u64> {
    b.motion().values().iter().map(|v| v.to_bits()).collect()
}

/// Maps `bvh` one frame at a time and through `map_frames_chunked` on pools
/// of 1, 2 and 3 threads, and in runs of odd sizes; all must agree.
fn agree<M: SplitFrameMap + std::fmt::Debug>(what: &str, bvh: &Bvh, map: M) -> (M, usize) {
    let exact = map_frames(bvh, &mut map.clone()).unwrap();
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let (chunked, _) = pool.install(|| map_frames_chunked(bvh, map.clone())).unwrap();
        assert_eq!(exact.skeleton(), chunked.skeleton(), "{what}");
        assert!(bits(&exact) == bits(&chunked), "{what}: {threads} threads differ");
    }
    // Runs of uneven lengths, as a stream hands them out.
    let m = bvh.motion();
    let (n_in, n_out) = (m.n_channels(), exact.motion().n_channels());
    let mut c = ChunkedMap::new(map);
    let mut out = vec![0.0; m.n_frames() * n_out];
    let mut f = 0;
    for (k, len) in [1usize, 7000, 3, 12345, 5000].iter().cycle().enumerate() {
        if f >= m.n_frames() || k > 1000 {
            break;
        }
        let n = (*len).min(m.n_frames() - f);
        c.map(n, &m.values()[f * n_in..(f + n) * n_in], &mut out[f * n_out..(f + n) * n_out]);
        f += n;
    }
    let same = out.iter().zip(exact.motion().values()).all(|(a, b)| a.to_bits() == b.to_bits());
    assert!(same, "{what}: runs of uneven lengths differ");
    (c.get().clone(), c.redone())
}

#[test]
fn chunked_maps_equal_one_frame_at_a_time_when_guesses_fail() {
    let bvh = spinning(40_000);
    // The rotation order maps groups of joints through every frame
    // (`SplitFrameMap::map_many`): nothing is guessed.
    agree("order", &bvh, OrderMap::all(bvh.skeleton(), RotationOrder::XYZ));
    let up = AxesMap::new(
        bvh.skeleton(),
        Axes::with_up(SignedAxis::PosY),
        Axes::with_up(SignedAxis::PosZ),
    );
    let (_, redone) = agree("axes", &bvh, up);
    // The root's yaw leaves its principal range: guesses are wrong and
    // parts are mapped again, yet the output is the same.
    assert!(redone > 0, "the spinning clip should make some guesses wrong");
    agree("scale", &bvh, ScaleMap::new(bvh.skeleton(), 0.25).unwrap());
    let layout = LayoutMap::new(
        bvh.skeleton(),
        RotationOrder::YXZ,
        Positions::None,
        PositionChannels::Replace,
    )
    .unwrap();
    let mut one = layout.clone();
    let _ = map_frames(&bvh, &mut one).unwrap();
    let (chunked, _) = agree("layout", &bvh, layout);
    // The largest error is gathered over every part.
    assert!(one.max_position_error() > 0.0);
    assert_eq!(one.max_position_error().to_bits(), chunked.max_position_error().to_bits());
}

#[test]
fn chunked_maps_equal_one_frame_at_a_time_on_a_synthetic_clip() {
    let bvh = Bvh::parse(bvhkit_testdata::synth_text(11, 30, 8_000)).unwrap();
    for order in [RotationOrder::XYZ, RotationOrder::ZYX] {
        agree("order", &bvh, OrderMap::all(bvh.skeleton(), order));
    }
    let up = AxesMap::new(
        bvh.skeleton(),
        Axes::with_up(SignedAxis::PosY),
        Axes::with_up(SignedAxis::NegX),
    );
    agree("axes", &bvh, up);
}

#[test]
fn chunked_maps_equal_one_frame_at_a_time_on_the_corpus() {
    let mut n = 0;
    for p in corpus_files() {
        if stem(&p).starts_with("malformed_") {
            continue;
        }
        let (bvh, _) = ReadOptions::new().lenient(true).read_path(&p).unwrap();
        let name = stem(&p);
        agree(&name, &bvh, OrderMap::all(bvh.skeleton(), RotationOrder::YZX));
        agree(&name, &bvh, Mirror::new(&bvh, &MirrorOptions::default()).unwrap());
        let up = AxesMap::new(
            bvh.skeleton(),
            Axes::with_up(SignedAxis::PosY),
            Axes::with_up(SignedAxis::PosZ),
        );
        agree(&name, &bvh, up);
        let layout = LayoutMap::new(
            bvh.skeleton(),
            RotationOrder::XZY,
            Positions::Root,
            PositionChannels::Replace,
        )
        .unwrap();
        let mut one = layout.clone();
        let _ = map_frames(&bvh, &mut one).unwrap();
        let (chunked, _) = agree(&name, &bvh, layout);
        assert_eq!(
            one.max_position_error().to_bits(),
            chunked.max_position_error().to_bits(),
            "{name}"
        );
        n += 1;
    }
    assert!(n >= 30 || corpus_files().is_empty(), "{n} corpus files");
}
