//! `edit::run::Edit`: the streamed run (with its lookahead) against the
//! whole clip, and against a reference computed by hand.

use std::collections::HashMap;

use bvhkit::edit::axes::SignedAxis;
use bvhkit::edit::layout::Positions;
use bvhkit::edit::plan::FrameSpan;
use bvhkit::edit::run::{Edit, EditError, Note, Output, Rename, RestSource, Settings, Step};
use bvhkit::rotation::RotationOrder;
use bvhkit::units::Units;
use bvhkit::{Bvh, WriteOptions};

use crate::util::{corpus_files, stem};

/// An output in memory that says which path wrote it.
#[derive(Default)]
struct Mem {
    text: Vec<u8>,
    streamed: bool,
    whole: bool,
}

impl Output for Mem {
    type Body = Vec<u8>;
    type Error = bvhkit::Error;

    fn begin(&mut self, _room: &[u8]) -> Result<Vec<u8>, bvhkit::Error> {
        Ok(Vec::new())
    }

    fn finish(&mut self, body: Vec<u8>, _room: &[u8], header: &[u8]) -> bvhkit::Result<()> {
        self.text = [header, &body].concat();
        self.streamed = true;
        Ok(())
    }

    fn whole(&mut self, bvh: &Bvh) -> bvhkit::Result<()> {
        self.text.clear();
        WriteOptions::new().write(bvh, &mut self.text)?;
        self.whole = true;
        Ok(())
    }
}

fn edits() -> Vec<(&'static str, Vec<Step>)> {
    vec![
        ("frames-every", vec![Step::Frames(FrameSpan::new(Some(3), None)), Step::Every(2)]),
        ("bounded", vec![Step::Frames(FrameSpan::new(Some(1), Some(30)))]),
        (
            "maps",
            vec![
                Step::Order(RotationOrder::ZXY),
                Step::Scale(0.5),
                Step::Rename(Rename::Pattern { from: "Left".into(), to: "L_".into() }),
            ],
        ),
        ("up", vec![Step::Every(2), Step::Up(SignedAxis::PosZ)]),
        ("map-then-units", vec![Step::Order(RotationOrder::YXZ), Step::Units(Units::Metres)]),
        (
            "sampled-units",
            vec![Step::Frames(FrameSpan::new(Some(2), None)), Step::Units(Units::Centimetres)],
        ),
        ("root", vec![Step::InPlaceRoot, Step::Mirror]),
        ("rest", vec![Step::Every(3), Step::RestPose(RestSource::Frame(1)), Step::StripEndSites]),
    ]
}

/// Step lists run with `--portable` (after their steps): alone, behind a
/// bounded range, a layout giving every joint position channels, a scale
/// (every value changes), a sampled unit guess and root motion.
fn portable_edits() -> Vec<(&'static str, Vec<Step>)> {
    vec![
        ("portable", vec![]),
        ("portable-bounded", vec![Step::Frames(FrameSpan::new(Some(1), Some(30))), Step::Every(2)]),
        ("portable-layout", vec![Step::Layout(RotationOrder::ZYX), Step::Scale(0.5)]),
        (
            "portable-units",
            vec![Step::Frames(FrameSpan::new(Some(2), None)), Step::Units(Units::Centimetres)],
        ),
        ("portable-root", vec![Step::RootToOrigin, Step::StripEndSites]),
    ]
}

/// Every edit of [`edits`] as it is, then every one of [`portable_edits`]
/// with `--portable`.
fn all_edits() -> Vec<(&'static str, Edit)> {
    let plain = edits().into_iter().map(|(n, s)| (n, Edit::new(s, Settings::default())));
    let portable = portable_edits().into_iter().map(|(n, s)| {
        let settings =
            Settings { portable: true, layout_positions: Positions::All, ..Settings::default() };
        (n, Edit::new(s, settings))
    });
    plain.chain(portable).collect()
}

#[test]
fn streamed_edits_give_the_whole_clips_bytes_and_notes_on_the_corpus() {
    let mut streamed = 0;
    // Per `--portable` step list: the files it streamed, those it could
    // read at all, and whether the portable rule changed anything.
    let mut portable: HashMap<&str, (usize, usize)> = HashMap::new();
    let mut changed = 0;
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        for (name, edit) in all_edits() {
            let whole = match edit.read_options().parse(&bytes) {
                Ok((bvh, warnings)) => {
                    let mut out = Mem::default();
                    edit.whole(bvh, warnings, &mut out).map(|notes| (notes, out.text))
                }
                Err(e) => Err(EditError::Read(e)),
            };
            let mut out = Mem::default();
            let run = edit.run_bytes(&bytes, &mut out);
            let at = format!("{} {name}", stem(&path));
            match (whole, run) {
                (Ok((notes, text)), Ok(run_notes)) => {
                    assert!(out.text == text, "{at}: bytes differ");
                    assert_eq!(notes, run_notes, "{at}");
                    streamed += usize::from(out.streamed && !out.whole);
                    if edit.settings.portable {
                        // The same steps without `--portable` stream exactly
                        // when they do with it.
                        let mut plain = edit.clone();
                        plain.settings.portable = false;
                        let mut alone = Mem::default();
                        plain.run_bytes(&bytes, &mut alone).unwrap();
                        assert_eq!(alone.streamed, out.streamed && !out.whole, "{at}");
                        let e = portable.entry(name).or_default();
                        e.0 += usize::from(out.streamed && !out.whole);
                        e.1 += 1;
                        let said =
                            |n: &Note| matches!(n, Note::Said(s) if s.starts_with("--portable:"));
                        changed += usize::from(run_notes.iter().any(said));
                    }
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{at}"),
                (a, b) => panic!("{at}: whole {:?}, run {:?}", a.is_ok(), b.is_ok()),
            }
        }
    }
    // Most of them really streamed (the others gave up to the whole clip).
    if !corpus_files().is_empty() {
        assert!(streamed > 200, "only {streamed} streamed");
        // `--portable` streams: alone, behind frame steps and maps, on
        // every file that reads (the malformed ones repaired); behind root
        // motion, on all but the three whose root-motion step gives up
        // without it too (asserted above). A range that starts past a
        // file's end is an error (`2..` on the nine files of fewer than
        // three frames, `1..30` on the six of fewer than two).
        for (name, &(s, read)) in &portable {
            let all = if *name == "portable-root" { read - 3 } else { read };
            assert!(s == all && read >= 29, "{name}: {s} of {read} streamed");
        }
        assert_eq!(portable.len(), portable_edits().len());
        // And the rule had something to do on many of them.
        assert!(changed > 50, "--portable changed only {changed} outputs");
    }
}

#[test]
fn a_stream_writes_the_frames_the_steps_leave() {
    let text = "HIERARCHY\nROOT A\n{\n\tOFFSET 1 2 3\n\tCHANNELS 3 Xposition Yposition Zposition\n\
                \tEnd Site\n\t{\n\t\tOFFSET 0 1 0\n\t}\n}\nMOTION\nFrames: 5\nFrame Time: 0.1\n\
                0 0 0\n1 0 0\n2 0 0\n3 0 0\n4 0 0\n";
    let edit = Edit::new(
        vec![Step::Frames(FrameSpan::new(Some(1), None)), Step::Every(2), Step::Scale(10.0)],
        Settings::default(),
    );
    let mut out = Mem::default();
    let notes = edit.run_bytes(text.as_bytes(), &mut out).unwrap();
    assert!(notes.is_empty() && out.streamed && !out.whole);
    let got = Bvh::parse(std::str::from_utf8(&out.text).unwrap()).unwrap();
    // Input frames 1 and 3, times 10; Frame Time doubled; OFFSET times 10.
    assert_eq!(got.motion().values(), [10.0, 0.0, 0.0, 30.0, 0.0, 0.0]);
    assert_eq!(got.motion().frame_time(), 0.2);
    assert_eq!(got.skeleton().joints()[0].offset().to_array(), [10.0, 20.0, 30.0]);
    // Read once, a step that must look at frames first gives up, having
    // finished nothing.
    let up = Edit::new(vec![Step::Up(SignedAxis::PosZ)], Settings::default());
    let mut out = Mem::default();
    assert!(matches!(up.stream_reader(text.as_bytes(), &mut out), Err(EditError::GaveUp)));
    assert!(!out.streamed && !out.whole);
    // From bytes it is retried on the whole clip, never given up.
    let run = up.run_bytes(text.as_bytes(), &mut out);
    assert!(!matches!(run, Err(EditError::GaveUp)));
    // `--portable` looks at every frame first: from bytes it streams, read
    // once it gives up.
    let settings = Settings { portable: true, ..Settings::default() };
    let portable = Edit::new(vec![Step::Scale(10.0)], settings);
    assert!(portable.streams() && portable.looks_ahead());
    let mut out = Mem::default();
    assert!(matches!(portable.stream_reader(text.as_bytes(), &mut out), Err(EditError::GaveUp)));
    assert!(!out.streamed && !out.whole);
    let notes = portable.run_bytes(text.as_bytes(), &mut out).unwrap();
    assert!(out.streamed && !out.whole);
    // The root's varying X and its constant Y and Z (a root's constant
    // channels are kept): every OFFSET component zeroed, values times 10.
    let got = Bvh::parse(std::str::from_utf8(&out.text).unwrap()).unwrap();
    assert_eq!(got.skeleton().joints()[0].offset().to_array(), [0.0, 0.0, 0.0]);
    assert_eq!(got.motion().frame(4), [40.0, 0.0, 0.0]);
    assert_eq!(notes.len(), 1, "{notes:?}");
}

/// What a streamed run did, in order: its output's body begun (every step
/// has looked at the frames it must by then) and each release of input
/// bytes.
#[derive(Debug, PartialEq)]
enum Event {
    Begin,
    Release(usize),
}

/// [`Mem`], logging when the body begins.
struct Logged {
    mem: Mem,
    log: std::sync::Arc<std::sync::Mutex<Vec<Event>>>,
}

impl Output for Logged {
    type Body = Vec<u8>;
    type Error = bvhkit::Error;

    fn begin(&mut self, room: &[u8]) -> Result<Vec<u8>, bvhkit::Error> {
        self.log.lock().unwrap().push(Event::Begin);
        self.mem.begin(room)
    }

    fn finish(&mut self, body: Vec<u8>, room: &[u8], header: &[u8]) -> bvhkit::Result<()> {
        self.mem.finish(body, room, header)
    }

    fn whole(&mut self, bvh: &Bvh) -> bvhkit::Result<()> {
        self.mem.whole(bvh)
    }
}

/// A clip of `frames` frames of a root (positions, ZXY rotations) and a
/// child (ZXY rotations), several batches long.
fn long_clip(frames: usize) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut t = String::from(
        "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 90 0\n\tCHANNELS 6 Xposition Yposition Zposition \
         Zrotation Xrotation Yrotation\n\tJOINT Chest\n\t{\n\t\tOFFSET 0 20 0\n\t\tCHANNELS 3 \
         Zrotation Xrotation Yrotation\n\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 30 0\n\t\t}\n\t}\n}\n\
         MOTION\n",
    );
    writeln!(t, "Frames: {frames}\nFrame Time: 0.0083333").unwrap();
    for f in 0..frames {
        let a = (f % 360) as f64;
        writeln!(
            t,
            "{:.2} 90 {:.2} {a} {:.1} -{a} {:.1} 3.5 {a}",
            f as f64 * 0.1,
            (f % 7) as f64,
            a / 2.0,
            a / 3.0
        )
        .unwrap();
    }
    t.into_bytes()
}

#[test]
fn a_stream_releases_the_bytes_behind_each_read_in_order() {
    let bytes = long_clip(300_000);
    let motion = bytes.windows(6).position(|w| w == b"MOTION").unwrap();
    // (name, steps, whether a look at the frames before the stream
    // releases what it read).
    let edits = [
        ("order", vec![Step::Order(RotationOrder::XYZ)], false),
        // A first pass over every frame (the unit guess behind a map).
        ("units", vec![Step::Order(RotationOrder::YXZ), Step::Units(Units::Metres)], false),
        // The carrier and first frame, looked at first, and the up axis
        // of the root's motion on sampled lines (below).
        ("root", vec![Step::InPlaceRoot, Step::Scale(2.0)], true),
        // The unit guess on sampled lines, found by a search for line
        // ends over the whole motion, which releases what it searched.
        ("sampled units", vec![Step::Units(Units::Metres)], true),
    ];
    for (name, steps, searches) in edits {
        let edit = Edit::new(steps, Settings::default());
        let mut plain = Mem::default();
        let notes = edit.run_bytes(&bytes, &mut plain).unwrap();
        assert!(plain.streamed && !plain.whole, "{name}: streamed");
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut out = Logged { mem: Mem::default(), log: log.clone() };
        let hook_log = log.clone();
        let mut release = move |n: usize| hook_log.lock().unwrap().push(Event::Release(n));
        let released_notes = edit.stream_bytes_releasing(&bytes, &mut out, &mut release).unwrap();
        // The same output and notes as without releasing.
        assert!(out.mem.text == plain.text, "{name}: bytes differ");
        assert_eq!(released_notes, notes, "{name}");
        let log = log.lock().unwrap();
        let begin = log.iter().position(|e| *e == Event::Begin).expect("the body began");
        let offsets = |events: &[Event]| -> Vec<usize> {
            events
                .iter()
                .map(|e| match e {
                    Event::Release(n) => *n,
                    Event::Begin => panic!("{name}: a second begin"),
                })
                .collect()
        };
        let (search, pass) = (offsets(&log[..begin]), offsets(&log[begin + 1..]));
        if searches {
            // The search, a window at a time, increasing, over the motion
            // to its last value; every offset past the header.
            assert!(search.len() >= 2, "{name}: {search:?}");
            assert!(search.windows(2).all(|w| w[0] < w[1]), "{name}: {search:?}");
            assert!(search[0] > motion, "{name}: {search:?}");
            assert_eq!(search.last(), Some(&(bytes.len() - 1)), "{name}: to the last value");
        } else {
            // Nothing released before the body began (after every look at
            // the frames, which reads the input again from the start).
            assert!(search.is_empty(), "{name}: {search:?}");
        }
        // The real pass: as the stream goes (a batch at a time), from the
        // start again, increasing, up to the end.
        assert!(pass.len() >= 3, "{name}: {pass:?}");
        assert!(pass.windows(2).all(|w| w[0] <= w[1]), "{name}: {pass:?}");
        assert!(pass[0] < bytes.len() / 2, "{name}: {pass:?}");
        assert_eq!(pass.last(), Some(&bytes.len()), "{name}");
        // Each offset is past the header and after a separator: no number
        // is cut, the values before it were parsed whole.
        for &n in &pass[..pass.len() - 1] {
            assert!(n > motion && bytes[n - 1].is_ascii_whitespace(), "{name}: {n}");
        }
    }
}
