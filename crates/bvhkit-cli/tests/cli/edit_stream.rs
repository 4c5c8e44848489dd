//! `bvh edit` streamed against the whole clip: every per-frame transform
//! (and chains of them) writes the same bytes and says the same notes when
//! it streams from a mapped or read file as when the whole clip is loaded
//! (`--reverse --reverse`, the identity, makes the command load it).
use std::path::{Path, PathBuf};
use std::process::Output;

use bvhkit::Bvh;

use super::{bvh, corpus, run, standing_figure_header, stderr};

/// `bvh edit INPUT -o OUT FLAGS` with `RAYON_NUM_THREADS=threads`.
fn edit(threads: usize, input: &Path, out: &Path, flags: &[String]) -> Output {
    bvh()
        .env("RAYON_NUM_THREADS", threads.to_string())
        .arg("edit")
        .arg(input)
        .arg("-o")
        .arg(out)
        .args(flags)
        .output()
        .unwrap()
}

/// The notes of a run, in order, with the output's name taken out.
fn notes(o: &Output, out: &Path) -> Vec<String> {
    stderr(o).lines().map(|l| l.replace(out.to_str().unwrap(), "OUT")).collect()
}

/// Runs `flags` streamed and on the whole clip and asserts the same
/// outcome: exit code, notes, and the output's bytes. Returns whether the
/// edit succeeded.
fn same_streamed_and_whole(input: &Path, dir: &Path, flags: &[String], threads: usize) -> bool {
    let a = dir.join("streamed.bvh");
    let b = dir.join("whole.bvh");
    let _ = std::fs::remove_file(&a);
    let _ = std::fs::remove_file(&b);
    let whole_flags: Vec<String> = ["--reverse", "--reverse"]
        .iter()
        .map(|s| s.to_string())
        .chain(flags.iter().cloned())
        .collect();
    let streamed = edit(threads, input, &a, flags);
    let whole = edit(threads, input, &b, &whole_flags);
    let what = format!("{} {}", input.display(), flags.join(" "));
    assert_eq!(streamed.status.code(), whole.status.code(), "{what}: {}", stderr(&streamed));
    assert_eq!(notes(&streamed, &a), notes(&whole, &b), "{what}: notes differ");
    if !whole.status.success() {
        assert!(!a.exists(), "{what}: a failed edit left an output");
        return false;
    }
    let (sa, sb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(sa == sb, "{what}: streamed and whole-clip outputs differ");
    true
}

/// A joint to remove from `bvh`: the first joint below the root that has
/// children (its motion folds into them), else the last joint.
fn joint_to_remove(bvh: &Bvh) -> Option<String> {
    let s = bvh.skeleton();
    let ids: Vec<_> = s.ids().collect();
    ids.iter()
        .find(|&&id| {
            let j = s.joint(id);
            j.parent().is_some()
                && !j.is_end_site()
                && s.children(id).any(|c| !s.joint(c).is_end_site())
        })
        .or_else(|| {
            ids.iter()
                .rev()
                .find(|&&id| !s.joint(id).is_end_site() && s.joint(id).parent().is_some())
        })
        .map(|&id| s.joint(id).name().to_string())
}

/// The option sets compared on a file: every per-frame transform of the
/// edit-b family alone, and chains with the other streamed transforms.
fn plans(input: &Path, bvh: Option<&Bvh>) -> Vec<Vec<String>> {
    let me = input.to_str().unwrap();
    let mut plans: Vec<Vec<&str>> = vec![
        vec!["--rename", "Hips=Pelvis"],
        vec!["--rename", "e=E", "--rename", "Left=L_"],
        vec!["--strip-end-sites"],
        vec!["--add-end-sites"],
        vec!["--strip-end-sites", "--add-end-sites"],
        vec!["--in-place-root", "--source-up", "y"],
        vec!["--in-place-root"],
        vec!["--root-to-origin", "--source-up", "y"],
        vec!["--root-to-origin"],
        vec!["--extract-root", "--source-up", "y"],
        vec!["--extract-root", "Ground", "--source-up", "z"],
        vec!["--rest-pose", "1"],
        vec!["--rest-pose", "0", "--rest-pose", "2"],
        vec!["--rest-pose", me],
        vec!["--rename", "Hips=Pelvis", "--in-place-root", "--order", "zxy", "--source-up", "y"],
        vec!["--frames", "3..", "--root-to-origin", "--every", "2", "--source-up", "y"],
        vec!["--scale", "2", "--extract-root", "--strip-end-sites", "--source-up", "y"],
        vec!["--every", "3", "--rest-pose", "1", "--in-place-root", "--source-up", "y"],
        vec!["--in-place-root", "--root-to-origin", "--extract-root", "--source-up", "y"],
        // The up axis detected on frames spread over the clip, in a first pass.
        vec!["--up", "y"],
        vec!["--up", "z"],
        vec!["--frames", "3..", "--every", "2", "--up", "y"],
        vec!["--scale", "2", "--up", "y", "--in-place-root"],
        vec!["--units", "m", "--extract-root", "--up", "y"],
        // Detected from the sampled frames' lines alone, through frame
        // steps; and with a later range that stops the reading (a whole
        // first pass then).
        vec!["--every", "3", "--up", "z"],
        vec!["--frames", "2..40", "--in-place-root"],
        vec!["--frames", "1..", "--every", "2", "--frames", "..30", "--extract-root"],
        vec!["--up", "z", "--frames", "..5"],
        // The unit guessed on the sampled frames' lines, confirmed by the
        // sizes of every frame; after a map, and with a later range that
        // stops the reading (a whole first pass then).
        vec!["--units", "m"],
        vec!["--every", "2", "--frames", "1..", "--units", "mm"],
        vec!["--mirror", "--units", "m"],
        vec!["--units", "in", "--frames", "..6"],
        vec!["--in-place-root", "--frames", "3..9", "--up", "x"],
    ];
    let remove = bvh.and_then(joint_to_remove);
    if let Some(j) = &remove {
        plans.push(vec!["--remove-joints", j]);
        plans.push(vec!["--frames", "1..", "--remove-joints", j, "--rest-pose", "0"]);
        plans.push(vec!["--remove-joints", j, "--root-to-origin", "--order", "yxz"]);
        plans.push(vec!["--remove-joints", j, "--up", "y", "--root-to-origin"]);
    }
    plans.into_iter().map(|p| p.into_iter().map(String::from).collect()).collect()
}

#[test]
fn edit_streams_every_per_frame_transform_like_the_whole_clip_on_the_corpus() {
    let Some(_) = corpus() else { return };
    let files = bvhkit_testdata::corpus_files();
    let jobs: Vec<(std::path::PathBuf, Vec<String>)> = files
        .iter()
        .flat_map(|p| {
            let bvh = Bvh::from_path(p).ok();
            plans(p, bvh.as_ref()).into_iter().map(move |f| (p.clone(), f))
        })
        .collect();
    let ok = std::sync::atomic::AtomicUsize::new(0);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let dir = tempfile::tempdir().unwrap();
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((p, flags)) = jobs.get(k) else { break };
                    if same_streamed_and_whole(p, dir.path(), flags, 1) {
                        ok.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let ok = ok.into_inner();
    eprintln!("edit streamed = whole clip: {ok} of {} edits succeeded and agreed", jobs.len());
    assert!(ok >= 20 * 20, "only {ok} successful edits compared");
}

#[test]
fn edit_streams_a_synthetic_clip_like_the_whole_clip_whatever_the_threads() {
    // Several batches of frames and several parts per batch.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("synth.bvh");
    std::fs::write(&input, bvhkit_testdata::synth_text(4, 25, 9_000)).unwrap();
    let bvh = Bvh::from_path(&input).unwrap();
    for flags in plans(&input, Some(&bvh)) {
        for threads in [1, 3] {
            same_streamed_and_whole(&input, dir.path(), &flags, threads);
        }
    }
}

/// A Bandai Namco-like clip: a still `joint_Root` with position channels
/// above `Hips`, which moves only after many frames (past the first
/// batches a stream reads).
fn still_top_text(frames: usize, moves_from: usize) -> String {
    let mut t = String::from(
        "HIERARCHY\nROOT joint_Root\n{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
         \tJOINT Hips\n\t{\n\t\tOFFSET 0 90 0\n\t\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
         \t\tJOINT LeftLeg\n\t\t{\n\t\t\tOFFSET 10 -40 0\n\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
         \t\t\tEnd Site\n\t\t\t{\n\t\t\t\tOFFSET 0 -45 0\n\t\t\t}\n\t\t}\n\
         \t\tJOINT RightLeg\n\t\t{\n\t\t\tOFFSET -10 -40 0\n\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
         \t\t\tEnd Site\n\t\t\t{\n\t\t\t\tOFFSET 0 -45 0\n\t\t\t}\n\t\t}\n\
         \t\tJOINT Head\n\t\t{\n\t\t\tOFFSET 0 60 0\n\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
         \t\t\tEnd Site\n\t\t\t{\n\t\t\t\tOFFSET 0 10 0\n\t\t\t}\n\t\t}\n\t}\n}\n",
    );
    t.push_str(&format!("MOTION\nFrames: {frames}\nFrame Time: 0.0333333\n"));
    for f in 0..frames {
        let x = if f >= moves_from { (f - moves_from) as f64 * 0.25 } else { 0.0 };
        let a = (f as f64 * 0.05).sin() * 30.0;
        t.push_str(&format!(
            "0 0 0 0 0 0 {x} 90 1.5 {a:.4} 2 {:.4} {:.4} 0 0 {a:.4} 0 0 3 1 2\n",
            a * 0.5,
            -a
        ));
    }
    t
}

#[test]
fn edit_streams_a_clip_whose_top_joint_stands_still_with_the_same_carrier() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("still_top.bvh");
    // About 2.6 MB: mapped, and Hips moves only after more than a batch of frames.
    std::fs::write(&input, still_top_text(40_000, 30_000)).unwrap();
    let bvh = Bvh::from_path(&input).unwrap();
    assert_eq!(bvhkit::edit::root::carrier(&bvh).map(|j| j.index()), Some(1));
    for flags in [
        vec!["--in-place-root", "--source-up", "y"],
        vec!["--root-to-origin", "--source-up", "y"],
        vec!["--extract-root", "--source-up", "y"],
        vec!["--frames", "..29000", "--in-place-root", "--source-up", "y"],
    ] {
        let flags: Vec<String> = flags.into_iter().map(String::from).collect();
        assert!(same_streamed_and_whole(&input, dir.path(), &flags, 2), "{flags:?} failed");
    }
    // In place, Hips (not joint_Root) is held: its X stays at its first value.
    let out = dir.path().join("out.bvh");
    let o = edit(2, &input, &out, &["--in-place-root".into(), "--source-up".into(), "y".into()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let held = Bvh::from_path(&out).unwrap();
    let m = held.motion();
    assert!(m.frames().all(|f| f[6] == 0.0), "Hips' X channel is not held in place");
    assert_eq!(m.frame(39_999)[0..6], bvh.motion().frame(39_999)[0..6]);
}

/// A Y-up clip of 20 frames whose lines are not all frames: line 3 holds
/// a value too few and line 7 one too many, so the reader takes frames 4
/// to 6 one value later than their lines: those frames lie on their backs
/// (the root's X rotation becomes 90) while their lines stand upright. The
/// up axis is detected on frames 0, 1, 2, 4, 5, 6, 8, ... (none of them
/// line 3 or 7), so reading the sampled lines alone sees 15 upright
/// frames where the clip has 12.
fn shifted_lines_text() -> String {
    let mut t = standing_figure_header(20);
    let upright = "0 90 0 0 0 0 1 2 3 4 5 6 7 8 9";
    for line in 0..20 {
        t.push_str(match line {
            3 => "0 90 0 0 0 0 1 2 3 4 5 6 7 8",
            // Upright as a line (a turn about Y), on its back one value on.
            4..=6 => "0 90 0 0 0 90 0 0 0 0 0 0 0 0 0",
            7 => "0 0 90 0 0 0 1 2 3 4 5 6 7 8 9 10",
            _ => upright,
        });
        t.push('\n');
    }
    t
}

#[test]
fn frames_read_from_their_lines_alone_are_checked_against_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("shifted.bvh");
    std::fs::write(&input, shifted_lines_text()).unwrap();
    let bvh = bvhkit::ReadOptions::new().lenient(true).read_path(&input).unwrap().0;
    assert_eq!(bvh.motion().frame(4)[4], 90.0, "frame 4 is not shifted");
    for flags in [
        vec!["--up", "z"],
        vec!["--in-place-root"],
        vec!["--every", "1", "--up", "y"],
        vec!["--root-to-origin", "--up", "x"],
    ] {
        let flags: Vec<String> = flags.into_iter().map(String::from).collect();
        // The notes say what the whole clip detects (the streamed edit
        // gave up after its pass and loaded the whole clip), bytes the same.
        assert!(same_streamed_and_whole(&input, dir.path(), &flags, 2), "{flags:?} failed");
    }
    let out = dir.path().join("out.bvh");
    let o = edit(2, &input, &out, &["--up".into(), "z".into()]);
    assert!(stderr(&o).contains("in 12 of 15 frames"), "{}", stderr(&o));
}

/// A clip of 57 frames whose figure (a head on position channels above
/// the hips) is 1.7 units tall in every fourth frame and 170.1 in the
/// others: the 15 frames sampled for the unit guess (0, 4, ..., 56) are
/// all small, so they guess metres where the whole clip, 42 of its 57
/// frames tall, is in centimetres.
fn small_sampled_frames_text() -> String {
    let mut t = String::from(
        "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
         \tJOINT Head\n\t{\n\t\tOFFSET 0 50 0\n\t\tCHANNELS 3 Xposition Yposition Zposition\n\
         \t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 0.1 0\n\t\t}\n\t}\n}\n\
         MOTION\nFrames: 57\nFrame Time: 0.04\n",
    );
    for f in 0..57 {
        let head = if f % 4 == 0 { "1.6" } else { "170" };
        t.push_str(&format!("0 0 0 0 0 0 0 {head} 0\n"));
    }
    t
}

#[test]
fn a_unit_guessed_on_sampled_frames_is_checked_against_every_frame() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("sizes.bvh");
    std::fs::write(&input, small_sampled_frames_text()).unwrap();
    let flags: Vec<String> = ["--units", "m"].into_iter().map(String::from).collect();
    // The streamed edit's guess (metres, of the sample) is not the whole
    // clip's: it gives up after its pass, and the whole clip decides.
    assert!(same_streamed_and_whole(&input, dir.path(), &flags, 2));
    let out = dir.path().join("out.bvh");
    let o = edit(2, &input, &out, &flags);
    assert!(stderr(&o).contains("units guessed: centimetres (size 170.1000"), "{}", stderr(&o));
    let edited = Bvh::from_path(&out).unwrap();
    assert_eq!(edited.motion().frame(1)[7], 1.7, "170 cm is 1.7 m");
    assert_eq!(edited.skeleton().joints()[1].offset().y, 0.5);
}

#[test]
fn edit_reports_bad_input_on_the_mapped_path_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    // Over 1 MiB, so mapped: a bad token on line 20,012 and a truncated file.
    let text = bvhkit_testdata::synth_text(3, 6, 30_000);
    let lines: Vec<&str> = text.lines().collect();
    let motion = lines.iter().position(|l| l.starts_with("Frame Time")).unwrap() + 1;
    let bad_line = motion + 20_000;
    let mut bad_lines = lines.clone();
    let broken = bad_lines[bad_line].replacen(' ', " 1.2.3 ", 1);
    bad_lines[bad_line] = &broken;
    let bad = dir.path().join("bad.bvh");
    std::fs::write(&bad, bad_lines.join("\n") + "\n").unwrap();
    assert!(std::fs::metadata(&bad).unwrap().len() > 1 << 20);
    let column = broken.find("1.2.3").unwrap() + 1;
    let out = dir.path().join("out.bvh");
    for flags in [
        vec!["--scale", "2"],
        vec!["--strict", "--rename", "Hips=Pelvis"],
        vec!["--strict", "--in-place-root", "--source-up", "y"],
        vec!["--strict", "--remove-joints", "Spine"],
        vec!["--strict", "--rest-pose", "3"],
    ] {
        let o =
            run(&[&["edit", bad.to_str().unwrap(), "-o", out.to_str().unwrap()][..], &flags]
                .concat());
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        let want = format!("bad.bvh:{}:{column}:", bad_line + 1);
        assert!(stderr(&o).contains(&want), "{flags:?}: wanted {want} in {}", stderr(&o));
        assert!(!out.exists(), "{flags:?}: a failed edit left an output");
    }
    // Truncated in the middle of a frame: strict reading refuses it with
    // the last line's position; nothing is written.
    let cut = dir.path().join("cut.bvh");
    let bytes = text.as_bytes();
    let at = bytes.len() - bytes.len() / 3;
    std::fs::write(&cut, &bytes[..at]).unwrap();
    let cut_line = text[..at].lines().count();
    for flags in [
        vec!["--strict", "--strip-end-sites"],
        vec!["--strict", "--extract-root", "--source-up", "y"],
    ] {
        let o =
            run(&[&["edit", cut.to_str().unwrap(), "-o", out.to_str().unwrap()][..], &flags]
                .concat());
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        let want = format!("cut.bvh:{cut_line}:");
        assert!(stderr(&o).contains(&want), "{flags:?}: wanted {want} in {}", stderr(&o));
        assert!(!out.exists(), "{flags:?}: a failed edit left an output");
    }
}

/// A streamed edit's frames go to a file without a name in the output's
/// folder until the output is complete, so nothing is left behind when it
/// is killed (`kill -9`) halfway: the file is seen open in that folder
/// (`/proc/PID/fd`) while the folder lists no name at all.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_streaming_edit_leaves_nothing_behind() {
    use std::io::Write;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("out");
    std::fs::create_dir(&folder).unwrap();
    let folder = folder.canonicalize().unwrap();
    let mut child = bvh()
        .args(["edit", "-", "-o"])
        .arg(folder.join("x.bvh"))
        .args(["--scale", "2"])
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input
        .write_all(
            b"HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition \
              Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\nMOTION\n\
              Frames: 100000\nFrame Time: 0.01\n",
        )
        .unwrap();
    for k in 0..1000 {
        writeln!(input, "{k} 1 2 3 4 5").unwrap();
    }
    input.flush().unwrap();
    // The command is waiting for more frames, its temporary file open.
    let fds = format!("/proc/{}/fd", child.id());
    let start = std::time::Instant::now();
    let open_there = loop {
        let open: Vec<PathBuf> = std::fs::read_dir(&fds)
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|t| t.starts_with(&folder))
            .collect();
        if !open.is_empty() {
            break open;
        }
        assert!(start.elapsed().as_secs() < 30, "no file opened in {}", folder.display());
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let names = || -> Vec<_> {
        std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name()).collect()
    };
    assert!(names().is_empty(), "named while written: {:?} (open: {open_there:?})", names());
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(names().is_empty(), "left behind: {:?}", names());
}

/// A 2 MB clip (so `bvh edit` maps it) whose unit guess on the frames
/// `--units` samples (15 spread evenly) differs from the guess on every
/// frame: its chest's position channel is 0.5 in the sampled frames and
/// 50 in all the others.
fn unit_flip_text() -> String {
    let n = 60_000;
    let sampled = bvhkit::edit::axes::sampled_frames(n);
    let mut text = format!(
        "HIERARCHY\nROOT Hips\n{{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n  JOINT Chest\n  {{\n    OFFSET 0 10 0\n    CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n    JOINT Head\n    {{\n      OFFSET 0 10 0\n      CHANNELS 3 Zrotation Xrotation Yrotation\n      End Site\n      {{\n        OFFSET 0 10 0\n      }}\n    }}\n  }}\n}}\nMOTION\nFrames: {n}\nFrame Time: 0.0333333\n"
    );
    for f in 0..n {
        let y = if sampled.contains(&f) { "0.5" } else { "50" };
        text.push_str(&format!("0 90 0 0 0 0 0 {y} 0 0 0 0 0 0 0\n"));
    }
    text
}

/// A mapped stream that gives up after it has released the input's pages
/// behind it (the sampled unit guess is not the whole clip's, which only
/// the end of the pass shows) is run again on the whole clip, read anew:
/// the bytes and notes of the whole-clip path, with the whole clip's guess.
#[test]
fn a_stream_that_gives_up_after_releasing_pages_reads_the_clip_again() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("flip.bvh");
    std::fs::write(&input, unit_flip_text()).unwrap();
    assert!(
        std::fs::metadata(&input).unwrap().len() > 1 << 20,
        "the clip must be mapped (1 MiB and more)"
    );
    let flags: Vec<String> =
        ["--every", "1", "--units", "m"].iter().map(|s| s.to_string()).collect();
    for threads in [1, 2] {
        assert!(same_streamed_and_whole(&input, dir.path(), &flags, threads));
        let o = edit(threads, &input, &dir.path().join("o.bvh"), &flags);
        // The whole clip's guess (size 70 in inches), not the sampled
        // frames' (size 20.5).
        assert!(stderr(&o).contains("units guessed: inches (size 70.0000"), "{}", stderr(&o));
    }
}
