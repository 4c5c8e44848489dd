//! `bvh concat`, `blend`, `layer` and `loop`: the command gives the
//! library's result, reports on stderr, refuses bad arguments and never
//! writes over an input.
use bvhkit::Bvh;
use bvhkit::edit::frames;
use bvhkit::mix::Span;
use bvhkit::mix::blend::{BlendOptions, blend};
use bvhkit::mix::concat::{ConcatOptions, concat};
use bvhkit::mix::layer::{LayerOptions, layer};
use bvhkit::mix::looping::{LoopOptions, Travel, make_loop};
use bvhkit::mix::weights::{Curve, Weight};

use super::{corpus, run, run_ok, stderr};

fn read(p: &std::path::Path) -> Bvh {
    Bvh::from_path(p).unwrap()
}

#[test]
fn mix_commands_match_the_library() {
    let Some(dir) = corpus() else { return };
    let src = read(&dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh"));
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    let a = frames::range(&src, 0..300).unwrap();
    let b = frames::range(&src, 1200..1500).unwrap();
    std::fs::write(p("a.bvh"), a.to_bytes().unwrap()).unwrap();
    std::fs::write(p("b.bvh"), b.to_bytes().unwrap()).unwrap();
    let s = |n: &str| p(n).to_str().unwrap().to_string();
    let (sa, sb, so) = (s("a.bvh"), s("b.bvh"), s("out.bvh"));

    let r = run_ok(&["concat", &sa, &sb, &sa, "-o", &so, "--crossfade", "0.1s", "--linear"]);
    assert!(
        stderr(&r).contains("b.bvh: moved ") && stderr(&r).contains("crossfade of 12 frames"),
        "{}",
        stderr(&r)
    );
    let opts = ConcatOptions {
        crossfade: Span::Seconds(0.1),
        curve: Curve::Linear,
        ..ConcatOptions::default()
    };
    let (e, _) = concat(&[(sa.as_str(), &a), (sb.as_str(), &b), (sa.as_str(), &a)], &opts).unwrap();
    bvhkit_testdata::assert_bit_identical(&read(&p("out.bvh")), &e, "concat");

    run_ok(&["blend", &sa, &sb, "-o", &so, "--weight", "0..1:smooth", "--joints", "Spine"]);
    let w = Weight::Ramp { from: 0.0, to: 1.0, curve: Curve::Smoothstep };
    let (e, _) = blend(&a, &b, &BlendOptions { weight: w, joints: Some("Spine".into()) }).unwrap();
    bvhkit_testdata::assert_bit_identical(&read(&p("out.bvh")), &e, "blend");

    run_ok(&["layer", &sa, &sb, "-o", &so, "--weight", "0.5", "--reference", "7"]);
    let o = LayerOptions { weight: Weight::Constant(0.5), joints: None, reference: 7 };
    bvhkit_testdata::assert_bit_identical(
        &read(&p("out.bvh")),
        &layer(&a, &b, &o).unwrap().0,
        "layer",
    );

    let r = run_ok(&["loop", &sa, "-o", &so, "--crossfade", "20", "--in-place"]);
    assert!(stderr(&r).contains("loop of 280 frames (20 crossfaded)"), "{}", stderr(&r));
    let o = LoopOptions {
        crossfade: Span::Frames(20),
        travel: Travel::Remove,
        ..LoopOptions::default()
    };
    bvhkit_testdata::assert_bit_identical(
        &read(&p("out.bvh")),
        &make_loop(&a, &o).unwrap().0,
        "loop",
    );

    // Refusals: a crossfade longer than a clip, an output that is an input
    // (left untouched), another skeleton, a bad weight.
    let before = std::fs::read(p("a.bvh")).unwrap();
    let r = run(&["concat", &sa, &sb, "-o", &so, "--crossfade", "301"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("the crossfade (301 frames) is longer than"), "{}", stderr(&r));
    for args in [
        vec!["concat", &sa, &sb, "-o", &sa],
        vec!["blend", &sa, &sb, "-o", &sb, "--weight", "1"],
        vec!["layer", &sa, &sb, "-o", &sa],
        vec!["loop", &sa, "-o", &sa],
    ] {
        let r = run(&args);
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        assert!(stderr(&r).contains("refusing to overwrite it"), "{}", stderr(&r));
    }
    assert_eq!(std::fs::read(p("a.bvh")).unwrap(), before);
    let other = dir.join("rokoko_jesse_dance_yxz_fingers.bvh");
    let r = run(&["concat", &sa, other.to_str().unwrap(), "-o", &so]);
    assert_eq!(r.status.code(), Some(2));
    assert!(
        stderr(&r).contains("the skeletons differ at joint 1: joint \"LHipJoint\" under \"Hips\""),
        "{}",
        stderr(&r)
    );
    let r = run(&["blend", &sa, &sb, "-o", &so, "--weight", "1.5"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("a weight must be in [0, 1], found 1.5"), "{}", stderr(&r));
    let r = run(&["blend", &sa, &sb, "-o", &so, "--weight", "1", "--joints", "Tail"]);
    assert!(stderr(&r).contains("no joint named \"Tail\""), "{}", stderr(&r));
}

#[test]
fn mix_help_explains_and_gives_an_example() {
    for cmd in ["concat", "blend", "layer", "loop"] {
        let o = run(&[cmd, "--help"]);
        assert!(o.status.success());
        let s = String::from_utf8(o.stdout).unwrap();
        let paragraphs: Vec<&str> = s.split("\n\n").collect();
        // The example closes the long help, before clap's usage line.
        let usage = paragraphs.iter().position(|p| p.starts_with("Usage: ")).unwrap();
        assert!(usage >= 3, "{cmd}: {s}");
        let explained: usize = paragraphs[1..usage - 1].iter().map(|p| p.len()).sum();
        assert!(explained > 300, "{cmd}: paragraphs that explain: {s}");
        let example = paragraphs[usage - 1];
        assert!(example.starts_with(&format!("Example: bvh {cmd} ")), "{cmd}: {s}");
    }
    // The loop's help teaches in short paragraphs: the crossfade, the
    // travel and the feet each their own.
    let s = String::from_utf8(run(&["loop", "--help"]).stdout).unwrap();
    for start in ["The crossfade: ", "Travel: ", "The feet, "] {
        let p = s.split("\n\n").find(|p| p.starts_with(start));
        assert!(p.is_some_and(|p| p.len() < 1200), "loop: no short paragraph {start:?}: {s}");
    }
    assert!(s.replace('\n', " ").contains("contact on one side only"), "{s}");
    // So do concat's, retarget's and clean's.
    for (cmd, starts) in [
        ("concat", &["Alignment: ", "Crossfades: ", "Folders: "][..]),
        ("retarget", &["Joints: ", "Rotations: ", "Travel and ground: ", "Feet ("][..]),
        (
            "clean",
            &["The steps run in this order", "Rotations are filtered", "A summary of each step"][..],
        ),
    ] {
        let s = String::from_utf8(run(&[cmd, "--help"]).stdout).unwrap();
        for start in starts {
            let p = s.split("\n\n").find(|p| p.starts_with(start));
            assert!(p.is_some_and(|p| p.len() < 1200), "{cmd}: no short paragraph {start:?}: {s}");
        }
    }
}
