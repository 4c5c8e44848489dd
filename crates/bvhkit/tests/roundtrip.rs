//! Parse, write, parse: every corpus file and random skeletons come back
//! bit for bit.
use bvhkit::glam::DVec3;
use bvhkit::{Bvh, Channel, Motion, ReadOptions, SkeletonBuilder};
use proptest::prelude::*;

use crate::util::{assert_round_trip, assert_streaming_agrees, corpus_files, stem};

#[test]
fn every_corpus_file_round_trips() {
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        let (bvh, _) = ReadOptions::new().lenient(true).parse(&bytes).unwrap();
        assert_round_trip(&bvh, &stem(&path));
    }
}

/// The writer formats motion in parallel pieces: its bytes are the same on
/// 1, 2 and 8 threads, for every corpus file and a large synthetic text.
#[test]
fn written_bytes_do_not_depend_on_the_thread_count() {
    let write_on = |bvh: &bvhkit::Bvh, threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| bvh.to_bytes().unwrap())
    };
    let synth = bvhkit_testdata::synth_text_of_size(3, 8_000_000);
    let mut models = vec![("synthetic 8 MB".to_string(), bvhkit::Bvh::parse(synth).unwrap())];
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        let (bvh, _) = bvhkit::ReadOptions::new().lenient(true).parse(&bytes).unwrap();
        models.push((stem(&path), bvh));
    }
    for (name, bvh) in &models {
        let one = write_on(bvh, 1);
        for threads in [2, 8] {
            assert!(write_on(bvh, threads) == one, "{name}: {threads} threads");
        }
    }
}

#[test]
fn streaming_reads_the_same_frames_as_parsing() {
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        assert_streaming_agrees(&bytes, &stem(&path));
    }
}

const CHANNELS: [Channel; 6] = Channel::ALL;

fn channel_list() -> impl Strategy<Value = Vec<Channel>> {
    (proptest::sample::subsequence(CHANNELS.to_vec(), 0..=6), any::<u64>()).prop_map(
        |(mut v, seed)| {
            // A deterministic shuffle: any order is legal.
            let mut s = seed;
            for i in (1..v.len()).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                v.swap(i, (s >> 33) as usize % (i + 1));
            }
            v
        },
    )
}

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
        (-1000i32..1000, 0u32..7).prop_map(|(m, d)| m as f64 / 10f64.powi(d as i32)),
        Just(-0.0),
    ]
}

fn name() -> impl Strategy<Value = String> {
    "[A-Za-z_:#.é0-9][A-Za-z_:#.é0-9 ]{0,12}[A-Za-z_:#.é0-9]".prop_map(|s| s)
}

#[derive(Debug, Clone)]
struct Node {
    parent_pick: usize,
    end_site: bool,
    name: String,
    offset: [f64; 3],
    channels: Vec<Channel>,
}

fn node() -> impl Strategy<Value = Node> {
    (
        any::<usize>(),
        proptest::bool::weighted(0.2),
        name(),
        [any_f64(), any_f64(), any_f64()],
        channel_list(),
    )
        .prop_map(|(parent_pick, end_site, name, offset, channels)| Node {
            parent_pick,
            end_site,
            name,
            offset,
            channels,
        })
}

fn build(nodes: &[Node], frames: usize, values: &[f64], frame_time: f64) -> Bvh {
    let mut b = SkeletonBuilder::new();
    let mut open: Vec<(bvhkit::JointId, bool)> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let off = DVec3::from_array(n.offset);
        // Keep only joints that may take children as candidate parents.
        open.retain(|&(_, end)| !end);
        if i == 0 || n.parent_pick % 7 == 0 || open.is_empty() {
            let id = b.root(&n.name, off, &n.channels).unwrap();
            open = vec![(id, false)];
            continue;
        }
        let k = n.parent_pick % open.len();
        open.truncate(k + 1);
        let parent = open[k].0;
        let id = if n.end_site {
            b.end_site(parent, off).unwrap()
        } else {
            b.joint(parent, &n.name, off, &n.channels).unwrap()
        };
        open.push((id, n.end_site));
    }
    let skel = b.build();
    let c = skel.n_channels();
    let vals: Vec<f64> = (0..frames * c).map(|i| values[i % values.len()]).collect();
    let motion = Motion::with_frames(frame_time, frames, c, vals).unwrap();
    Bvh::new(skel, motion).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_skeletons_and_motions_round_trip(
        nodes in proptest::collection::vec(node(), 1..24),
        frames in 0usize..6,
        values in proptest::collection::vec(any_f64(), 1..64),
        frame_time in (1e-6f64..10.0),
    ) {
        let bvh = build(&nodes, frames, &values, frame_time);
        let text = bvh.to_bytes().unwrap();
        let back = Bvh::parse(&text).unwrap();
        bvhkit_testdata::assert_bit_identical(&bvh, &back, "random");
        prop_assert_eq!(back.to_bytes().unwrap(), text);
    }

    #[test]
    fn every_f64_survives(v in any::<f64>().prop_filter("finite", |v| v.is_finite())) {
        let bvh = build(
            &[Node { parent_pick: 0, end_site: false, name: "A".into(), offset: [v, -v, 0.0], channels: vec![Channel::Xposition] }],
            1, &[v], 0.1,
        );
        let back = Bvh::parse(bvh.to_bytes().unwrap()).unwrap();
        prop_assert_eq!(back.motion().frame(0)[0].to_bits(), v.to_bits());
        prop_assert_eq!(back.skeleton().joints()[0].offset().x.to_bits(), v.to_bits());
    }
}

/// A reader that makes up a long motion on the fly: a header, then `frames`
/// lines of 6 values.
struct Synthetic {
    header: Vec<u8>,
    pos: usize,
    frame: u64,
    frames: u64,
    line: Vec<u8>,
    line_pos: usize,
}

impl std::io::Read for Synthetic {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos < self.header.len() {
            let n = buf.len().min(self.header.len() - self.pos);
            buf[..n].copy_from_slice(&self.header[self.pos..self.pos + n]);
            self.pos += n;
            return Ok(n);
        }
        if self.line_pos == self.line.len() {
            if self.frame == self.frames {
                return Ok(0);
            }
            self.line = format!("{} -12.345678 {} 0.5 1e-3 -7\n", self.frame, self.frame % 360)
                .into_bytes();
            self.line_pos = 0;
            self.frame += 1;
        }
        let n = buf.len().min(self.line.len() - self.line_pos);
        buf[..n].copy_from_slice(&self.line[self.line_pos..self.line_pos + n]);
        self.line_pos += n;
        Ok(n)
    }
}

fn resident_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    // Anonymous memory only: the code pages the reader touches the first
    // time it runs count in VmRSS too, and they grow with the test binary.
    s.lines().find(|l| l.starts_with("RssAnon:"))?.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn streaming_takes_constant_memory() {
    // Resident memory belongs to the whole process, which other tests share
    // when they run alongside (one failure seen so). So the measurement runs
    // in a child process that runs this test alone.
    const CHILD: &str = "BVHKIT_MEMORY_TEST_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let name = "roundtrip::streaming_takes_constant_memory";
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("1 passed"), "the child did not run the test: {text}");
        return;
    }
    let frames = 400_000; // about 13 MB of text: 10x what the reader may keep
    let header = format!(
        "HIERARCHY\nROOT A\n{{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n}}\nMOTION\nFrames: {frames}\nFrame Time: 0.01\n"
    );
    for lenient in [false, true] {
        let rdr = Synthetic {
            header: header.clone().into_bytes(),
            pos: 0,
            frame: 0,
            frames,
            line: Vec::new(),
            line_pos: 0,
        };
        let before = resident_kib();
        let mut r = ReadOptions::new().lenient(lenient).frame_reader(rdr).unwrap();
        let mut buf = [0.0; 6];
        let mut n = 0u64;
        let mut sum = 0.0;
        while r.read_frame(&mut buf).unwrap() {
            sum += buf[0];
            n += 1;
        }
        assert_eq!(n, frames);
        assert_eq!(sum, (frames * (frames - 1) / 2) as f64);
        if let (Some(b), Some(a)) = (before, resident_kib()) {
            // 13 MB went through; the reader kept under a tenth of it.
            assert!(
                a.saturating_sub(b) < 1300,
                "lenient {lenient}: resident memory grew by {} KiB",
                a - b
            );
        }
    }
}

#[test]
fn streaming_looks_ahead_a_bounded_way_for_lines_that_are_frames() {
    // Every line holds 2 values for 3 channels, one line per declared frame.
    let text = |lines: usize| {
        let mut t = format!(
            "HIERARCHY\nROOT A\n{{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n}}\nMOTION\nFrames: {lines}\nFrame Time: 0.01\n"
        );
        for i in 0..lines {
            t.push_str(&format!("{i}.5 -{i}\n"));
        }
        t.into_bytes()
    };
    // Short: the reader sees the whole motion and reads it line by line,
    // as reading it in memory does.
    assert_eq!(assert_streaming_agrees(&text(1000), "1000 lines"), 1000);
    // Past the lookahead (about 20 MiB of motion): in memory, still line by
    // line; streaming reads a stream and its warning says why it differs.
    let big = text(1_500_000);
    let (bvh, _) = ReadOptions::new().lenient(true).parse(&big).unwrap();
    assert_eq!(bvh.motion().n_frames(), 1_500_000);
    assert_eq!(bvh.motion().frame(7), [7.5, -7.0, 0.0]);
    let mut r = ReadOptions::new().lenient(true).frame_reader(&big[..]).unwrap();
    let mut frame = [0.0; 3];
    let mut n = 0;
    while r.read_frame(&mut frame).unwrap() {
        n += 1;
    }
    assert_eq!(n, 1_000_000);
    // Scanned in place, in batches: the same frames and warnings.
    let mut s = ReadOptions::new().lenient(true).frame_reader_slice(&big).unwrap();
    let (mut batch, mut m) = (Vec::new(), 0);
    loop {
        match s.read_frames(&mut batch, 4096).unwrap() {
            0 => break,
            k => m += k,
        }
    }
    assert_eq!(m, n);
    assert_eq!(batch.len(), 3 * n);
    // Values 2,999,997 to 2,999,999 of the stream: line 1,499,998's second
    // value, then both of the last line's.
    assert_eq!(batch[batch.len() - 3..], [-1_499_998.0, 1_499_999.5, -1_499_999.0]);
    let sw: Vec<String> = s.warnings().iter().map(|w| w.to_string()).collect();
    let w: Vec<String> = r.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(sw, w);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].contains("values were read as one stream"), "{w:?}");
    assert!(w[0].contains("streaming decides within the first 16 MiB of motion"), "{w:?}");
    assert!(w[1].contains("Frames: declares 1500000 frames but the file holds 1000000"), "{w:?}");
}
