use super::*;

use bvhkit_testdata::file_names as names;

/// The options of a writer that names no way to break links.
fn opts() -> Options<'static> {
    Options::new()
}

/// `write_atomic` of `bytes`.
fn put(path: &Path, bytes: &[u8]) -> io::Result<()> {
    opts().write_atomic(path, |w| w.write_all(bytes))
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[cfg(unix)]
fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(unix)]
#[test]
fn destinations() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().canonicalize().unwrap();
    let dest = |p: &Path| opts().destination(p);
    assert_eq!(dest(Path::new("-")).unwrap(), Dest::Stdout);
    assert_eq!(dest(Path::new("/dev/stdout")).unwrap(), Dest::Stdout);
    assert_eq!(dest(Path::new("/dev/null")).unwrap(), Dest::Through("/dev/null".into()));
    assert!(
        matches!(dest(Path::new("/dev/fd/2")).unwrap(), Dest::Through(p) if p.starts_with("/proc"))
    );
    let new = d.join("new.bvh");
    assert_eq!(dest(&new).unwrap(), Dest::Replace(new.clone()));
    std::fs::write(&new, "x").unwrap();
    assert_eq!(dest(&new).unwrap(), Dest::Replace(new.clone()));
    let link = d.join("link.bvh");
    std::os::unix::fs::symlink("new.bvh", &link).unwrap();
    assert_eq!(dest(&link).unwrap(), Dest::Replace(new.clone()));
    let to_null = d.join("null.bvh");
    std::os::unix::fs::symlink("/dev/null", &to_null).unwrap();
    assert_eq!(dest(&to_null).unwrap(), Dest::Through("/dev/null".into()));
    let e = dest(&d).unwrap_err();
    assert!(e.to_string().ends_with("is a directory"), "{e}");
    assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
    let selfish = d.join("self.bvh");
    std::os::unix::fs::symlink("self.bvh", &selfish).unwrap();
    let e = dest(&selfish).unwrap_err();
    assert!(e.to_string().contains("too many levels"), "{e}");
    #[cfg(target_os = "linux")]
    {
        use rustix::io::Errno;
        assert_eq!(os_error_code(&e), Some(Errno::LOOP.raw_os_error()));
        assert_eq!(os_error_code(&dest(&d).unwrap_err()), Some(Errno::ISDIR.raw_os_error()));
    }
}

#[test]
fn atomic_files_replace_only_when_committed() {
    for anonymous in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bvh");
        std::fs::write(&target, "old").unwrap();
        #[cfg(unix)]
        set_mode(&target, 0o600);
        // Abandoned: the old file stays, and nothing else.
        let mut a = AtomicFile::create_as(&target, anonymous).unwrap();
        a.file().write_all(b"half").unwrap();
        let during = names(dir.path());
        drop(a);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(names(dir.path()), ["out.bvh"]);
        // On Linux the file being written has no name at all.
        #[cfg(target_os = "linux")]
        assert_eq!(during.len(), if anonymous { 1 } else { 2 }, "{during:?}");
        let _ = during;
        // Committed: the new content, the old mode, no temporary file.
        let mut a = AtomicFile::create_as(&target, anonymous).unwrap();
        a.file().write_all(b"new").unwrap();
        a.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(names(dir.path()), ["out.bvh"]);
        #[cfg(unix)]
        assert_eq!(mode(&target), 0o600);
        // A new file.
        let fresh = dir.path().join("fresh.csv");
        put(&fresh, b"a,b\n").unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "a,b\n");
        // A failing writer leaves nothing, and its error comes back as it was.
        let failed = dir.path().join("failed.csv");
        let e = opts()
            .write_atomic(&failed, |w| {
                w.write_all(b"partial")?;
                Err(io::Error::other("stop"))
            })
            .unwrap_err();
        assert_eq!(e.to_string(), "stop");
        assert_eq!(names(dir.path()), ["fresh.csv", "out.bvh"]);
    }
}

/// `commit_open`: the old file until the commit, then the new one, which
/// goes on growing through the handle handed back (both with `O_TMPFILE`
/// and with a named temporary file).
#[test]
fn a_file_committed_open_keeps_growing_under_its_name() {
    for anonymous in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("take.bvh");
        std::fs::write(&target, "old take").unwrap();
        #[cfg(unix)]
        set_mode(&target, 0o640);
        let mut a = AtomicFile::create_as(&target, anonymous).unwrap();
        a.file().write_all(b"header\n").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old take");
        let mut f = a.commit_open().unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "header\n");
        assert_eq!(names(dir.path()), ["take.bvh"]);
        #[cfg(unix)]
        assert_eq!(mode(&target), 0o640);
        f.write_all(b"frame 1\n").unwrap();
        f.seek(io::SeekFrom::Start(0)).unwrap();
        f.write_all(b"HEADER").unwrap();
        drop(f);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "HEADER\nframe 1\n");
    }
}

/// A new file gets the mode `File::create` gives (0666 less the umask), not
/// a temporary file's 0600; an existing one keeps its mode, and its owner
/// when the process may give it (root).
#[cfg(unix)]
#[test]
fn new_files_get_the_umask_mode_and_old_ones_keep_mode_and_owner() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    File::create(&plain).unwrap();
    let fresh = dir.path().join("fresh.bvh");
    put(&fresh, b"new").unwrap();
    assert_eq!(mode(&fresh), mode(&plain), "the umask's mode");
    assert_ne!(mode(&plain) & 0o044, 0, "a umask that keeps reading for others shows it");
    // The named temporary file where O_TMPFILE is refused: the same mode.
    let named = dir.path().join("named.bvh");
    let mut a = AtomicFile::create_as(&named, false).unwrap();
    a.file().write_all(b"new").unwrap();
    a.commit().unwrap();
    assert_eq!(mode(&named), mode(&plain), "the umask's mode, O_TMPFILE refused");

    let old = dir.path().join("old.bvh");
    std::fs::write(&old, "old").unwrap();
    set_mode(&old, 0o751);
    let root = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(1) == 0;
    if root {
        std::os::unix::fs::chown(&old, Some(12345), Some(23456)).unwrap();
    }
    put(&old, b"new").unwrap();
    let m = std::fs::metadata(&old).unwrap();
    assert_eq!(mode(&old), 0o751);
    if root {
        assert_eq!((m.uid(), m.gid()), (12345, 23456));
    } else {
        // The harness swallows `eprintln!` of a passing test: this one is
        // seen, and fails in CI, where the tests run as root.
        bvhkit_testdata::skip(
            "new_files_get_the_umask_mode_and_old_ones_keep_mode_and_owner (owner kept)",
            "not root: only root may give a file another owner",
        );
    }
    assert_eq!(std::fs::read(&old).unwrap(), b"new");
}

/// A symbolic link (relative, through a second link, into another folder)
/// is followed: its target is replaced, the links stay; a dangling link's
/// target is created.
#[cfg(unix)]
#[test]
fn symbolic_links_are_followed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("real")).unwrap();
    std::fs::write(d.join("real/walk.bvh"), "old").unwrap();
    set_mode(&d.join("real/walk.bvh"), 0o640);
    std::os::unix::fs::symlink("real/walk.bvh", d.join("link.bvh")).unwrap();
    std::os::unix::fs::symlink("link.bvh", d.join("link2.bvh")).unwrap();
    put(&d.join("link2.bvh"), b"new").unwrap();
    for l in ["link.bvh", "link2.bvh"] {
        assert!(std::fs::symlink_metadata(d.join(l)).unwrap().file_type().is_symlink(), "{l}");
    }
    assert_eq!(std::fs::read(d.join("real/walk.bvh")).unwrap(), b"new");
    assert_eq!(mode(&d.join("real/walk.bvh")), 0o640);
    assert_eq!(names(&d.join("real")), ["walk.bvh"]);
    std::os::unix::fs::symlink("real/new.csv", d.join("new.csv")).unwrap();
    put(&d.join("new.csv"), b"a,b\n").unwrap();
    assert!(std::fs::symlink_metadata(d.join("new.csv")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(d.join("real/new.csv")).unwrap(), b"a,b\n");
    assert_eq!(names(d), ["link.bvh", "link2.bvh", "new.csv", "real"]);
}

/// A FIFO is written into and stays a FIFO; /dev/null stays a device.
#[cfg(target_os = "linux")]
#[test]
fn fifos_and_devices_are_written_through() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, 0o600.into(), 0)
        .unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    put(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(names(dir.path()), ["fifo"]);
    put(Path::new("/dev/null"), b"nothing").unwrap();
    assert!(std::fs::symlink_metadata("/dev/null").unwrap().file_type().is_char_device());
}

/// An output that cannot be made names its folder and keeps the OS error's
/// kind and number; nothing is left anywhere.
#[test]
fn errors_name_the_path_and_keep_the_os_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/out.bvh");
    let e = put(&missing, b"x").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!(
            "creating a temporary file in {}",
            dir.path().join("no/such").display()
        )),
        "{shown}"
    );
    #[cfg(target_os = "linux")]
    assert_eq!(os_error_code(&e), Some(rustix::io::Errno::NOENT.raw_os_error()));
    assert_eq!(names(dir.path()), Vec::<String>::new());
}

#[test]
fn pairs_are_published_together_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, gltf) = (dir.path().join("a.bin"), dir.path().join("a.gltf"));
    std::fs::write(&bin, "old bin").unwrap();
    std::fs::write(&gltf, "old gltf").unwrap();
    let pair = |fail_bin: bool, fail_gltf: bool| {
        let fail = |yes: bool, what: &str| {
            if yes { Err(io::Error::other(format!("injected {what} failure"))) } else { Ok(()) }
        };
        let mut b = |w: &mut dyn Write| {
            w.write_all(b"new bin")?;
            fail(fail_bin, "bin")
        };
        let mut g = |w: &mut dyn Write| {
            w.write_all(b"new gltf")?;
            fail(fail_gltf, "gltf")
        };
        opts().write_atomic_all(&mut [(bin.as_path(), &mut b), (gltf.as_path(), &mut g)])
    };
    // A failure in either file, the second one after the first is complete:
    // the old pair stays as it was, and no temporary file is left.
    for (fail_bin, fail_gltf) in [(true, false), (false, true)] {
        let e = pair(fail_bin, fail_gltf).unwrap_err().to_string();
        assert!(e.starts_with("injected"), "{e}");
        assert_eq!(std::fs::read_to_string(&bin).unwrap(), "old bin");
        assert_eq!(std::fs::read_to_string(&gltf).unwrap(), "old gltf");
        assert_eq!(names(dir.path()), ["a.bin", "a.gltf"]);
    }
    pair(false, false).unwrap();
    assert_eq!(std::fs::read_to_string(&bin).unwrap(), "new bin");
    assert_eq!(std::fs::read_to_string(&gltf).unwrap(), "new gltf");
    assert_eq!(names(dir.path()), ["a.bin", "a.gltf"]);
    // The second target cannot be opened (its folder is missing): nothing appears.
    let lonely = dir.path().join("b.bin");
    let missing = dir.path().join("no/such/folder/b.gltf");
    let mut b = |w: &mut dyn Write| w.write_all(b"bin");
    let mut g = |w: &mut dyn Write| w.write_all(b"gltf");
    assert!(
        opts()
            .write_atomic_all(&mut [(lonely.as_path(), &mut b), (missing.as_path(), &mut g)])
            .is_err()
    );
    assert_eq!(names(dir.path()), ["a.bin", "a.gltf"]);
}

/// The renames come in the order given: when the second cannot happen (its
/// target became a folder while the files were written), the first file
/// is already in place and the second target is as it was, whichever of
/// the two is given first.
#[test]
fn pairs_are_renamed_in_the_order_given() {
    for bin_first in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let (bin, gltf) = (dir.path().join("a.bin"), dir.path().join("a.gltf"));
        std::fs::write(&bin, "old").unwrap();
        std::fs::write(&gltf, "old").unwrap();
        let (first, second) = if bin_first { (&bin, &gltf) } else { (&gltf, &bin) };
        let mut one = |w: &mut dyn Write| w.write_all(b"new");
        let mut two = |w: &mut dyn Write| {
            w.write_all(b"new")?;
            // Both files are open by now: the second target turns into a
            // folder with something in it, which no rename can replace.
            std::fs::remove_file(second)?;
            std::fs::create_dir(second)?;
            std::fs::write(second.join("keep"), "")
        };
        let e = opts()
            .write_atomic_all(&mut [(first.as_path(), &mut one), (second.as_path(), &mut two)])
            .unwrap_err();
        let canonical = second.canonicalize().unwrap();
        let shown = e.to_string();
        assert!(shown.starts_with(&format!("writing {}: ", canonical.display())), "{shown}");
        assert!(shown.ends_with(&format!("(os error {})", os_error_code(&e).unwrap())), "{shown}");
        assert_eq!(std::fs::read_to_string(first).unwrap(), "new", "the first is in place");
        assert!(second.join("keep").exists(), "the second target is as it was");
        assert_eq!(names(dir.path()), ["a.bin", "a.gltf"], "no temporary file is left");
    }
}

#[cfg(unix)]
#[test]
fn hard_linked_outputs_are_refused_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.bvh"), dir.path().join("b.bvh"));
    std::fs::write(&a, "shared").unwrap();
    std::fs::hard_link(&a, &b).unwrap();
    let cli = Options::new().break_links_hint("pass --break-links");
    let e = cli.destination(&b).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: has 2 hard links; replacing it would leave the other name with the old \
             contents (write elsewhere, or pass --break-links to replace this name only)",
            b.display()
        )
    );
    #[cfg(target_os = "linux")]
    assert_eq!(os_error_code(&e), Some(rustix::io::Errno::MLINK.raw_os_error()));
    // Without a hint, the message says only to write elsewhere.
    let e = opts().destination(&b).unwrap_err().to_string();
    assert!(e.ends_with("with the old contents (write elsewhere)"), "{e}");
    // Through a symbolic link too: the file at its end is what counts.
    let link = dir.path().join("link.bvh");
    std::os::unix::fs::symlink("a.bvh", &link).unwrap();
    assert!(cli.destination(&link).unwrap_err().to_string().contains("has 2 hard links"));
    assert!(put(&b, b"new").is_err());
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "shared");
    std::fs::hard_link(&a, dir.path().join("c.bvh")).unwrap();
    assert!(cli.destination(&a).unwrap_err().to_string().contains("the other 2 names"));
    // A new file, or a file with one link, is fine.
    assert!(cli.destination(&dir.path().join("new.bvh")).is_ok());
    std::fs::write(dir.path().join("one.bvh"), "x").unwrap();
    assert!(cli.destination(&dir.path().join("one.bvh")).is_ok());
    // Asked: this name gets the new contents, the others keep the old.
    cli.break_links(true).write_atomic(&b, |w| w.write_all(b"new")).unwrap();
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "new");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "shared");
    assert_eq!(names(dir.path()), ["a.bvh", "b.bvh", "c.bvh", "link.bvh", "one.bvh"]);
}

/// A folder that cannot hold the output (a file stands where it should
/// be): the system's reason, naming the folder, with its error number,
/// and not the random name of a temporary file it never made.
#[cfg(target_os = "linux")]
#[test]
fn a_folder_that_is_a_file_is_said_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("walk.bvh");
    std::fs::write(&file, "x").unwrap();
    let e = opts().write_atomic(&file.join("out.bvh"), |w| w.write_all(b"new")).unwrap_err();
    let shown = e.to_string();
    assert_eq!(os_error_code(&e), Some(20), "{shown}");
    assert!(
        shown.starts_with(&format!("creating a temporary file in {}: ", file.display())),
        "{shown}"
    );
    assert!(!shown.contains(".bvh-") && !shown.contains("at path"), "{shown}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

/// `same_file`: one file by another path, a hard link or a symbolic link
/// is the same file; another file, or a path that does not exist, is not.
#[test]
fn same_file_tells_one_file_by_any_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::fs::write(d.join("a.bvh"), "a").unwrap();
    std::fs::write(d.join("b.bvh"), "a").unwrap();
    std::fs::hard_link(d.join("a.bvh"), d.join("hard.bvh")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(d.join("a.bvh"), d.join("soft.bvh")).unwrap();
    let a = d.join("a.bvh");
    assert!(crate::same_file(&a, &a));
    assert!(crate::same_file(&a, &d.join("sub/../a.bvh")));
    assert!(crate::same_file(&a, &d.join("hard.bvh")));
    #[cfg(unix)]
    assert!(crate::same_file(&d.join("soft.bvh"), &a));
    assert!(!crate::same_file(&a, &d.join("b.bvh")), "same bytes, another file");
    assert!(!crate::same_file(&a, &d.join("missing.bvh")));
    assert!(!crate::same_file(&d.join("missing.bvh"), &d.join("missing.bvh")));
}

#[cfg(unix)]
#[test]
fn a_publish_keeping_the_old_file_hands_it_back_unlinked_and_whole() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.parquet");
    // No file to replace: nothing to hand back.
    let mut a = AtomicFile::create(&target).unwrap();
    a.file().write_all(b"first").unwrap();
    assert!(a.stage().unwrap().publish_keeping_old().unwrap().is_none());
    let first = std::fs::metadata(&target).unwrap();
    // A file replaced: handed back, the very file (no name left, its size
    // as it was) while the target holds the new bytes.
    let mut a = AtomicFile::create(&target).unwrap();
    a.file().write_all(b"the second file").unwrap();
    let old = a.stage().unwrap().publish_keeping_old().unwrap().expect("the old file");
    let m = old.metadata().unwrap();
    assert_eq!((m.ino(), m.dev(), m.len(), m.nlink()), (first.ino(), first.dev(), 5, 0));
    assert_eq!(std::fs::read(&target).unwrap(), b"the second file");
    drop(old);
    assert_eq!(names(dir.path()), ["out.parquet"]);
}

/// Dropping the cached pages of a file an output will replace leaves its
/// contents whole, and never blocks or fails on what is not a regular
/// file (a FIFO opened for reading would wait for a writer).
#[cfg(unix)]
#[test]
fn dropping_cached_pages_keeps_the_contents_and_passes_over_other_files() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.parquet");
    let bytes: Vec<u8> =
        (0..3_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 9) as u8).collect();
    put(&file, &bytes).unwrap();
    let fifo = dir.path().join("fifo");
    rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, 0o600.into(), 0)
        .unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    let paths = [file.clone(), fifo.clone(), dir.path().join("missing"), dir.path().to_path_buf()];
    std::thread::spawn(move || {
        for p in &paths {
            drop_cached_pages(p);
        }
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("drop_cached_pages returned for a file, a FIFO, a missing path and a folder");
    assert!(std::fs::read(&file).unwrap() == bytes, "the contents changed");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(names(dir.path()), ["fifo", "old.parquet"]);
}
