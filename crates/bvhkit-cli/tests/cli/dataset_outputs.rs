//! The Parquet table and its skeleton table are one output: both replaced
//! or neither; through a symbolic link the messages name the files written;
//! a dangling link to a missing folder is refused as for every output.
use std::path::Path;

use super::{bvh, fixture, fx, run, run_ok, stderr};

fn bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn a_parquet_pair_is_replaced_whole_or_not_at_all() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = d.join("x.parquet");
    let skel = d.join("x.skeleton.parquet");
    let o = out.to_str().unwrap();
    run_ok(&["export", &fx("two_roots.bvh"), "-o", o]);
    let (table, skeleton) = (bytes(&out), bytes(&skel));
    // The skeleton table's place is taken by a folder: the export fails
    // and the table is the old one (it used to be replaced before the
    // skeleton table's rename failed, a new table beside the old skeleton).
    std::fs::remove_file(&skel).unwrap();
    std::fs::create_dir(&skel).unwrap();
    std::fs::write(skel.join("keep"), "x").unwrap();
    let r = run(&["export", &fx("crlf.bvh"), "-o", o]);
    let err = stderr(&r);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("x.skeleton.parquet: is a directory"), "{err}");
    assert_eq!(bytes(&out), table, "the table was replaced without its skeleton table");
    // Hard-linked skeleton table: refused (unless --break-links), both kept.
    std::fs::remove_dir_all(&skel).unwrap();
    std::fs::write(&skel, &skeleton).unwrap();
    #[cfg(unix)]
    {
        std::fs::hard_link(&skel, d.join("other.parquet")).unwrap();
        let r = run(&["export", &fx("crlf.bvh"), "-o", o]);
        let err = stderr(&r);
        assert_eq!(r.status.code(), Some(2), "{err}");
        assert!(err.contains("x.skeleton.parquet: has 2 hard links"), "{err}");
        assert_eq!((bytes(&out), bytes(&skel)), (table.clone(), skeleton.clone()));
    }
    // And an export that succeeds replaces both.
    std::fs::remove_file(&skel).unwrap();
    run_ok(&["export", &fx("crlf.bvh"), "-o", o]);
    assert_ne!(bytes(&out), table);
    assert_ne!(bytes(&skel), skeleton);
    let left = bvhkit_testdata::file_names(d);
    assert!(left.iter().all(|n| !n.starts_with(".bvh-")), "temporary files left: {left:?}");
}

/// The `bvhkit.pair` id in a Parquet file's key-value metadata: the 32 hex
/// digits after the key (the footer's strings are stored as they are).
fn pair_id(file: &[u8]) -> String {
    let key = b"bvhkit.pair";
    let at =
        file.windows(key.len()).rposition(|w| w == key).expect("a bvhkit.pair key") + key.len();
    let rest = &file[at..];
    let from = rest.iter().position(u8::is_ascii_hexdigit).expect("a value after the key");
    let id = &rest[from..from + 32];
    assert!(id.iter().all(u8::is_ascii_hexdigit), "{}", String::from_utf8_lossy(id));
    String::from_utf8(id.to_vec()).unwrap()
}

/// A `kill -9` between the two renames (held there by the debug builds'
/// `BVHKIT_TEST_PAUSE_BETWEEN_RENAMES_MS`) leaves the new skeleton table
/// beside the old table, which their `bvhkit.pair` ids tell apart, and the
/// new table complete under its temporary name; the writer threads are
/// done by then.
#[cfg(all(unix, debug_assertions))]
#[test]
fn a_kill_between_the_parquet_renames_leaves_a_pair_the_ids_tell_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (out, skel) = (d.join("x.parquet"), d.join("x.skeleton.parquet"));
    let o = out.to_str().unwrap();
    run_ok(&["export", &fx("two_roots.bvh"), "-o", o]);
    let (old_table, old_skel) = (bytes(&out), bytes(&skel));
    assert_eq!(pair_id(&old_table), pair_id(&old_skel), "a pair written whole");
    // What the interrupted export writes, complete (elsewhere).
    let fresh = tempfile::tempdir().unwrap();
    let f = fresh.path().join("x.parquet");
    run_ok(&["export", &fx("crlf.bvh"), "-o", f.to_str().unwrap()]);
    let (new_table, new_skel) = (bytes(&f), bytes(&fresh.path().join("x.skeleton.parquet")));
    assert_ne!(pair_id(&new_table), pair_id(&old_table));
    let mut child = bvh()
        .args(["export", &fx("crlf.bvh"), "-o", o])
        .env("BVHKIT_TEST_PAUSE_BETWEEN_RENAMES_MS", "60000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The skeleton table's rename is the first: wait for it.
    let start = std::time::Instant::now();
    while bytes(&skel) != new_skel {
        assert!(child.try_wait().unwrap().is_none(), "the export ended before the kill");
        assert!(start.elapsed().as_secs() < 60, "the skeleton table was never replaced");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // The new skeleton table beside the old table: the ids differ.
    assert_eq!(bytes(&out), old_table, "the table is the old one");
    assert_ne!(pair_id(&bytes(&out)), pair_id(&bytes(&skel)), "the mismatch shows");
    // The new table is whole under its temporary name, nothing else.
    let left = bvhkit_testdata::file_names(d);
    let temps: Vec<&String> = left.iter().filter(|n| n.starts_with(".bvh-")).collect();
    assert_eq!(left.len(), 3, "{left:?}");
    assert_eq!(temps.len(), 1, "{left:?}");
    assert!(bytes(&d.join(temps[0])) == new_table, "the staged table is the new table");
    // Renaming it into place completes the pair.
    std::fs::rename(d.join(temps[0]), &out).unwrap();
    assert_eq!(pair_id(&bytes(&out)), pair_id(&bytes(&skel)));
}

#[cfg(unix)]
#[test]
fn dataset_outputs_through_symbolic_links() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir(d.join("real")).unwrap();
    // Through a link: the table and its skeleton table are written beside
    // the link's target, and the message names where.
    std::os::unix::fs::symlink("real/t.parquet", d.join("link.parquet")).unwrap();
    let o =
        run_ok(&["export", &fx("two_roots.bvh"), "-o", d.join("link.parquet").to_str().unwrap()]);
    let err = stderr(&o);
    assert!(d.join("real/t.parquet").is_file() && d.join("real/t.skeleton.parquet").is_file());
    assert!(!d.join("link.skeleton.parquet").exists());
    let real = d.canonicalize().unwrap().join("real/t.skeleton.parquet");
    assert!(err.contains(&format!("and {}", real.display())), "{err}");
    // A dangling link to a missing folder is refused; no folder is made.
    for ext in ["parquet", "npz"] {
        let link = d.join(format!("dangling.{ext}"));
        std::os::unix::fs::symlink(format!("missing/sub/t.{ext}"), &link).unwrap();
        let r = run(&["export", &fx("two_roots.bvh"), "-o", link.to_str().unwrap()]);
        let err = stderr(&r);
        assert_eq!(r.status.code(), Some(2), "{ext}: {err}");
        assert!(err.contains("whose folder") && err.contains("does not exist"), "{ext}: {err}");
        assert!(!d.join("missing").exists(), "{ext}: the link's missing folders were made");
    }
    // A plain -o in a new folder is still made.
    run_ok(&["export", &fx("two_roots.bvh"), "-o", d.join("new/dir/t.npz").to_str().unwrap()]);
    assert!(d.join("new/dir/t.npz").is_file());
}

#[test]
fn a_folder_export_gives_the_same_bytes_on_any_number_of_threads() {
    // Files are parsed and their clips prepared as tasks of their own,
    // written in order by another thread: the bytes, the files skipped (the
    // quirks folder read strictly: many fail) and their order do not depend
    // on `-j`.
    let tmp = tempfile::tempdir().unwrap();
    let folder = fixture("crlf.bvh").parent().unwrap().to_string_lossy().into_owned();
    // The table, the skeleton table, the exit code and the skipped lines.
    type Run = (Vec<u8>, Vec<u8>, Option<i32>, Vec<String>);
    let mut seen: Option<Run> = None;
    for j in ["1", "2", "5"] {
        let out = tmp.path().join(format!("j{j}.parquet"));
        let r = run(&["export", &folder, "-o", out.to_str().unwrap(), "-j", j, "--strict"]);
        let err = stderr(&r);
        let skipped: Vec<String> =
            err.lines().filter(|l| l.contains("; skipped")).map(str::to_string).collect();
        assert!(!skipped.is_empty(), "-j {j}: files fail when read strictly\n{err}");
        let skel = tmp.path().join(format!("j{j}.skeleton.parquet"));
        // Inputs not read: exit 2, as for every command (it was 1).
        assert_eq!(r.status.code(), Some(2), "-j {j}\n{err}");
        let this = (bytes(&out), bytes(&skel), r.status.code(), skipped);
        assert!(this.0.len() > 1000, "-j {j}: a table of {} bytes", this.0.len());
        match &seen {
            None => seen = Some(this),
            Some(first) => assert!(first == &this, "-j {j} differs from -j 1\n{err}"),
        }
    }
}

#[test]
fn a_folder_export_is_the_library_s_table_written_without_shared_pages() {
    // The command writes the number pages of prepared clips from their
    // column buffers (`with_shared_pages`, `BlockWriter::write_shared`);
    // the library's `write_bvh` into a `Vec` copies them through the
    // `parquet` crate. Clips of several pages (65,536 rows a page) and of
    // one, float64 and float32 (whose pages are copied in both), on one
    // and two threads: the same bytes, table and skeleton table.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("in");
    std::fs::create_dir(&dir).unwrap();
    let clips = [("a.bvh", 3, 40, 4_000), ("b.bvh", 5, 7, 3), ("c.bvh", 11, 25, 2_700)];
    for (name, seed, joints, frames) in clips {
        std::fs::write(dir.join(name), bvhkit_testdata::synth_text(seed, joints, frames)).unwrap();
    }
    for dtype in ["f64", "f32"] {
        let options = bvhkit_dataset::Options {
            dtype: if dtype == "f64" {
                bvhkit_dataset::Dtype::F64
            } else {
                bvhkit_dataset::Dtype::F32
            },
            ..bvhkit_dataset::Options::default()
        };
        let mut w = bvhkit_dataset::ParquetWriter::new(Vec::new(), &options).unwrap();
        for (name, seed, joints, frames) in clips {
            let bvh =
                bvhkit::Bvh::parse(bvhkit_testdata::synth_text(seed, joints, frames)).unwrap();
            w.write_bvh(name, &bvh).unwrap();
        }
        let (table, skeletons) = w.finish().unwrap();
        let skeleton_table = skeletons.write(Vec::new()).unwrap();
        assert!(table.len() > 8 * 40 * 4_000 * 7 / 2, "{dtype}: {} bytes", table.len());
        for j in ["1", "2"] {
            let out = tmp.path().join(format!("{dtype}-{j}.parquet"));
            let d = dir.to_str().unwrap();
            let o = out.to_str().unwrap();
            run_ok(&["export", d, "-o", o, "-j", j, "--up", "keep", "--dtype", dtype]);
            assert!(bytes(&out) == table, "{dtype} -j {j}: the table differs from the library's");
            let skel = tmp.path().join(format!("{dtype}-{j}.skeleton.parquet"));
            assert!(bytes(&skel) == skeleton_table, "{dtype} -j {j}: the skeleton table differs");
        }
    }
}

/// Neither the table nor its skeleton table may be one of the inputs
/// (each input is looked up once for both): the first output that is an
/// input is named, the table before its skeleton table, and nothing is
/// written.
#[cfg(unix)]
#[test]
fn a_dataset_output_that_is_an_input_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (a, b) = (d.join("a.bvh"), d.join("b.bvh"));
    std::fs::copy(fixture("two_roots.bvh"), &a).unwrap();
    std::fs::copy(fixture("crlf.bvh"), &b).unwrap();
    let (a_bytes, b_bytes) = (bytes(&a), bytes(&b));
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    // The skeleton table is the second input.
    std::os::unix::fs::symlink("b.bvh", d.join("s.skeleton.parquet")).unwrap();
    let out = d.join("s.parquet");
    let r = run(&["export", a_s, b_s, "-o", out.to_str().unwrap()]);
    let err = stderr(&r);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("s.skeleton.parquet: the output is the input"), "{err}");
    assert!(err.contains("b.bvh; refusing to overwrite it"), "{err}");
    // The table is the second input and the skeleton table the first: the
    // table is named.
    std::os::unix::fs::symlink("b.bvh", d.join("t.parquet")).unwrap();
    std::os::unix::fs::symlink("a.bvh", d.join("t.skeleton.parquet")).unwrap();
    let r = run(&["export", a_s, b_s, "-o", d.join("t.parquet").to_str().unwrap()]);
    let err = stderr(&r);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("t.parquet: the output is the input"), "{err}");
    assert!(err.contains("b.bvh; refusing"), "{err}");
    // Nothing written, the inputs as they were.
    assert_eq!((bytes(&a), bytes(&b)), (a_bytes, b_bytes));
    assert!(!out.exists());
    let left = bvhkit_testdata::file_names(d);
    assert!(left.iter().all(|n| !n.starts_with(".bvh-")), "temporary files left: {left:?}");
    // An NPZ has no skeleton table: a file named like one is not an output.
    let npz = d.join("s.npz");
    run_ok(&["export", a_s, b_s, "-o", npz.to_str().unwrap()]);
    assert!(npz.is_file());
}
