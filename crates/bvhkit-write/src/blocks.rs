//! [`BlockWriter`]: a file written in order by one producer, its bytes
//! copied into the file by other threads.
//!
//! # Implementation notes
//!
//! Copying bytes into the page cache is kernel work done by the thread that
//! calls `write`: for an output of hundreds of megabytes it is a large part
//! of a command's time (a Parquet export of a folder spent about 35% of its
//! CPU there, with the writeback the advice starts), and it is serial in the
//! thread that makes the bytes. `BlockWriter` gathers the bytes into blocks
//! of [`BLOCK`] bytes and hands each full block with its offset to a writer
//! thread, which writes it with `pwrite` (`FileExt::write_all_at`, the
//! order of the blocks does not matter) in calls of 256 KiB (`PIECE`) and
//! starts its writeback as [`crate::WriteBehind`] does. The pieces: on ext4
//! the kernel gives a write page-cache folios as large as the write (up to
//! 2 MiB), and on the 2-core CI virtual machine, its memory full of page
//! cache, those large folios cost up to eight times the kernel time of
//! small ones, unevenly (504 MiB in 4 MiB `pwrite`s: 0.09 to 1.01 s of
//! system time from run to run; in 256 KiB ones 0.11 to 0.24 s, median 0.13
//! s; tmpfs, whose pages are 4 KiB, 0.2 to 0.25 s either way). The producer goes on filling the next
//! block meanwhile. Buffers are reused (a fixed number, `threads + 4`: the
//! producer waits for one when all are in flight, so memory is bounded and
//! fresh pages are not cleared for every block; with `threads + 2`, a
//! Parquet export whose producer only shares its pages filled them in
//! bursts and waited, its pool's window of files ahead then full and
//! asleep while the writer thread caught up alone: 1,800 context switches
//! in a two-core run against 900, 506 ms against 486). The first error of a
//! writer is returned by the next `write` or `flush`; `flush` waits for
//! every block given so far. Dropping the writer stops its threads after
//! the blocks in flight (no error is reported then: call `flush`). One
//! writer thread is enough for one file: the kernel copies into a file one
//! write at a time, under the file's lock, and a second thread spins on
//! that lock when both cores are free.
//!
//! Bytes the producer already holds in a buffer of their own (a Parquet
//! table's number pages, which are its column buffers' bytes) need not be
//! copied into a block at all: [`BlockWriter::write_shared`] puts a shared
//! handle to them in the block's list of pieces, and the writer thread
//! copies them into the file from where they are (`pwritev` of the block's
//! own bytes and the shared ones in file order, at most `PIECE` bytes a
//! call), then drops the handle: the one copy left is the kernel's into
//! the page cache.

use std::fs::File;
use std::io::{self, Write};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Bytes of one block: what a writer thread takes at once.
pub const BLOCK: usize = 4 << 20;

/// Bytes of one `pwrite` of a block (see the module notes: 4 MiB calls
/// cost up to eight times the kernel time of 256 KiB ones on ext4).
const PIECE: usize = 256 << 10;

/// Bytes shared with a [`BlockWriter`] rather than copied into it
/// ([`BlockWriter::write_shared`]): the writer thread reads them from
/// here and drops its handle once they are in the file.
pub type Shared = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// A block for a writer thread: where it goes, its own bytes and, when it
/// holds shared bytes too, its pieces in file order.
struct Job {
    at: u64,
    bytes: Vec<u8>,
    /// The pieces, in file order; empty when `bytes` is the whole block.
    pieces: Vec<Piece>,
}

/// A piece of a block: some of its own bytes, or shared ones.
enum Piece {
    Own(Range<usize>),
    Shared(Shared, Range<usize>),
}

/// A writer thread's answer: the block's buffer back, or the error.
type Done = Result<Vec<u8>, io::Error>;

/// Writes a file from its start in order, the copy of the bytes into the
/// file done by writer threads a block at a time (see the module notes).
pub struct BlockWriter {
    /// The block being filled: its own bytes.
    current: Vec<u8>,
    /// Its pieces when it holds shared bytes ([`BlockWriter::write_shared`]),
    /// up to `own_from`, where its own bytes not yet in a piece start.
    pieces: Vec<Piece>,
    own_from: usize,
    /// Bytes of the block being filled, its own and shared.
    len: usize,
    /// The file offset of `current`'s first byte.
    at: u64,
    /// Buffers back from the writers, ready to fill.
    free: Vec<Vec<u8>>,
    /// Buffers that exist (filled, in flight or free), at most `max`.
    made: usize,
    max: usize,
    /// Blocks given to the writers and not yet back.
    in_flight: usize,
    jobs: Option<SyncSender<Job>>,
    done: Receiver<Done>,
    threads: Vec<JoinHandle<()>>,
    /// The first error a writer met, kept to be returned again.
    failed: Option<(io::ErrorKind, String)>,
}

impl BlockWriter {
    /// Writes `file` from offset 0 with `threads` writer threads (at least
    /// one).
    ///
    /// # Errors
    /// When a thread cannot be started.
    pub fn new(file: File, threads: usize) -> io::Result<BlockWriter> {
        let threads = threads.max(1);
        let file = Arc::new(file);
        let (jobs, job_rx) = sync_channel::<Job>(threads * 2 + 2);
        let (done_tx, done) = sync_channel::<Done>(threads * 2 + 2);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let handles = (0..threads)
            .map(|i| {
                let (file, job_rx, done_tx) = (file.clone(), job_rx.clone(), done_tx.clone());
                std::thread::Builder::new()
                    .name(format!("bvh-write-{i}"))
                    .spawn(move || writer(&file, &job_rx, &done_tx))
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(BlockWriter {
            current: Vec::with_capacity(BLOCK),
            pieces: Vec::new(),
            own_from: 0,
            len: 0,
            at: 0,
            free: Vec::new(),
            made: 1,
            max: threads + 4,
            in_flight: 0,
            jobs: Some(jobs),
            done,
            threads: handles,
            failed: None,
        })
    }

    fn error(&self) -> io::Result<()> {
        match &self.failed {
            Some((kind, message)) => Err(io::Error::new(*kind, message.clone())),
            None => Ok(()),
        }
    }

    /// Takes one writer's answer (waiting for it).
    fn receive(&mut self) -> io::Result<()> {
        let answer = self.done.recv().map_err(|_| io::Error::other("the writer threads ended"))?;
        self.answered(answer);
        Ok(())
    }

    /// Counts one writer's answer: its buffer back on the free list, or its
    /// error kept (the first one) and its buffer gone.
    fn answered(&mut self, answer: Done) {
        self.in_flight -= 1;
        match answer {
            Ok(mut buffer) => {
                buffer.clear();
                self.free.push(buffer);
            }
            Err(e) => {
                self.made -= 1;
                if self.failed.is_none() {
                    self.failed = Some((e.kind(), e.to_string()));
                }
            }
        }
    }

    /// Writes `range` of `bytes` next, without copying them: the writer
    /// thread copies them into the file from `bytes` itself and then drops
    /// its handle (after [`Write::flush`] returns, or once the writer is
    /// dropped, no handle is left here).
    ///
    /// # Errors
    /// A writer's earlier error, or when the writer threads ended.
    ///
    /// # Panics
    /// When `range` is not within `bytes`.
    pub fn write_shared(&mut self, bytes: Shared, range: Range<usize>) -> io::Result<()> {
        self.error()?;
        assert!(range.start <= range.end && range.end <= (*bytes).as_ref().len(), "{range:?}");
        if range.is_empty() {
            return Ok(());
        }
        self.own_piece();
        self.len += range.len();
        self.pieces.push(Piece::Shared(bytes, range));
        if self.len >= BLOCK {
            self.dispatch()?;
        }
        Ok(())
    }

    /// Closes the current block's own bytes since the last piece into a
    /// piece (when it has pieces at all).
    fn own_piece(&mut self) {
        if self.current.len() > self.own_from {
            self.pieces.push(Piece::Own(self.own_from..self.current.len()));
            self.own_from = self.current.len();
        }
    }

    /// Gives the current block to the writers and takes an empty one.
    fn dispatch(&mut self) -> io::Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        while let Ok(answer) = self.done.try_recv() {
            self.answered(answer);
        }
        self.error()?;
        let next = if let Some(b) = self.free.pop() {
            b
        } else if self.made < self.max {
            self.made += 1;
            Vec::with_capacity(BLOCK)
        } else {
            while self.free.is_empty() {
                self.receive()?;
                self.error()?;
            }
            self.free.pop().expect("a buffer came back")
        };
        if !self.pieces.is_empty() {
            self.own_piece();
        }
        let bytes = std::mem::replace(&mut self.current, next);
        let pieces = std::mem::take(&mut self.pieces);
        let len = std::mem::take(&mut self.len) as u64;
        self.own_from = 0;
        let jobs = self.jobs.as_ref().expect("jobs are open until drop");
        jobs.send(Job { at: self.at, bytes, pieces })
            .map_err(|_| io::Error::other("the writer threads ended"))?;
        self.in_flight += 1;
        self.at += len;
        Ok(())
    }
}

/// A writer thread: blocks written at their offsets until the jobs end.
fn writer(file: &File, jobs: &Mutex<Receiver<Job>>, done: &SyncSender<Done>) {
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(Job { at, bytes, pieces }) = job else { return };
        let written = if pieces.is_empty() {
            write_in_pieces(file, &bytes, at).map(|()| bytes.len())
        } else {
            let slices = pieces.iter().map(|p| match p {
                Piece::Own(r) => &bytes[r.clone()],
                Piece::Shared(b, r) => &(**b).as_ref()[r.clone()],
            });
            write_gathered(file, slices, at)
        };
        // The shared bytes are in the file: their handles go now.
        drop(pieces);
        let answer = written.map(|len| {
            crate::start_writeback(file, at, len as u64);
            bytes
        });
        if done.send(answer).is_err() {
            return;
        }
    }
}

/// Writes `bytes` at `at` in calls of at most [`PIECE`] bytes.
fn write_in_pieces(file: &File, bytes: &[u8], at: u64) -> io::Result<()> {
    let mut at = at;
    for piece in bytes.chunks(PIECE) {
        file.write_all_at(piece, at)?;
        at += piece.len() as u64;
    }
    Ok(())
}

/// Writes `slices` one after another from `at`, gathered into calls of at
/// most [`PIECE`] bytes (`pwritev` on Linux); returns the bytes written.
fn write_gathered<'a>(
    file: &File,
    slices: impl Iterator<Item = &'a [u8]>,
    at: u64,
) -> io::Result<usize> {
    let mut at = at;
    let mut total = 0;
    // The slices of one call, cut at `PIECE` bytes.
    let mut batch: Vec<&[u8]> = Vec::new();
    let mut batch_len = 0;
    for slice in slices {
        let mut rest = slice;
        while !rest.is_empty() {
            let (now, later) = rest.split_at(rest.len().min(PIECE - batch_len));
            batch.push(now);
            batch_len += now.len();
            rest = later;
            if batch_len == PIECE || batch.len() == MAX_SLICES {
                write_all_vectored_at(file, &batch, at)?;
                (at, total) = (at + batch_len as u64, total + batch_len);
                batch.clear();
                batch_len = 0;
            }
        }
    }
    if batch_len > 0 {
        write_all_vectored_at(file, &batch, at)?;
        total += batch_len;
    }
    Ok(total)
}

/// Slices of one `pwritev` at most (Linux's `IOV_MAX` is 1,024).
const MAX_SLICES: usize = 256;

/// Writes all of `slices`, one after another, at `at`.
fn write_all_vectored_at(file: &File, slices: &[&[u8]], at: u64) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let mut slices = slices.to_vec();
        let mut at = at;
        while !slices.is_empty() {
            let io: Vec<io::IoSlice<'_>> = slices.iter().map(|s| io::IoSlice::new(s)).collect();
            let mut n = match rustix::io::pwritev(file, &io, at) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            };
            at += n as u64;
            // Past what was written (a short write continues mid-slice).
            let mut first = 0;
            while first < slices.len() && n >= slices[first].len() {
                n -= slices[first].len();
                first += 1;
            }
            slices.drain(..first);
            if let Some(s) = slices.first_mut() {
                *s = &s[n..];
            }
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let mut at = at;
        for s in slices {
            file.write_all_at(s, at)?;
            at += s.len() as u64;
        }
        Ok(())
    }
}

impl Write for BlockWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.error()?;
        let room = BLOCK.saturating_sub(self.len);
        let n = buf.len().min(room);
        self.current.extend_from_slice(&buf[..n]);
        self.len += n;
        if self.len >= BLOCK {
            self.dispatch()?;
        }
        Ok(n)
    }

    /// Writes what is buffered and waits for every block given so far.
    fn flush(&mut self) -> io::Result<()> {
        self.dispatch()?;
        while self.in_flight > 0 {
            self.receive()?;
        }
        self.error()
    }
}

impl Drop for BlockWriter {
    fn drop(&mut self) {
        self.jobs = None;
        // The writers end when the jobs are gone; answers they still send
        // are dropped with the receiver.
        while self.in_flight > 0 && self.receive().is_ok() {}
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Seek, Write};

    use super::*;

    /// Bytes that differ at every offset (a block written at the wrong
    /// place shows).
    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8).collect()
    }

    #[test]
    fn the_file_holds_every_byte_in_order() {
        for threads in [1, 2, 3] {
            for len in [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 5 * BLOCK + 12_345] {
                let data = pattern(len);
                let mut file = tempfile::tempfile().unwrap();
                let mut w = BlockWriter::new(file.try_clone().unwrap(), threads).unwrap();
                // Pieces of uneven sizes, as a writer hands them over.
                let mut at = 0;
                let mut step = 1;
                while at < len {
                    let to = (at + step).min(len);
                    w.write_all(&data[at..to]).unwrap();
                    at = to;
                    step = step * 3 % 1_000_003 + 7;
                }
                w.flush().unwrap();
                drop(w);
                let mut back = Vec::new();
                file.rewind().unwrap();
                file.read_to_end(&mut back).unwrap();
                assert_eq!(back.len(), len, "{threads} threads, {len} bytes");
                assert!(back == data, "{threads} threads, {len} bytes: bytes differ");
            }
        }
    }

    #[test]
    fn shared_bytes_land_in_order_between_copied_ones_and_are_let_go() {
        // Copied and shared pieces of every size around the block and the
        // 256 KiB call (shared pieces larger than a block, empty ones,
        // many small ones in one block), against the same bytes written
        // plainly; each shared buffer's handle is gone after the flush.
        let data = pattern(7 * BLOCK + 3 * PIECE + 17);
        let shared: Shared = Arc::new(data.clone());
        for threads in [1, 2] {
            let mut file = tempfile::tempfile().unwrap();
            let mut w = BlockWriter::new(file.try_clone().unwrap(), threads).unwrap();
            let (mut at, mut k) = (0, 0usize);
            while at < data.len() {
                let n = [1, 30, PIECE - 1, PIECE + 3, BLOCK + 5, 0, 7, 3 * PIECE, 2][k % 9];
                let to = (at + n).min(data.len());
                if k % 2 == 0 {
                    w.write_all(&data[at..to]).unwrap();
                } else {
                    w.write_shared(shared.clone(), at..to).unwrap();
                }
                (at, k) = (to, k + 1);
            }
            // A thousand small pieces in one block (more than one call's
            // slices).
            let tail = pattern(2_000);
            for (i, c) in tail.chunks(2).enumerate() {
                if i % 2 == 0 {
                    w.write_all(c).unwrap();
                } else {
                    let b: Shared = Arc::new(c.to_vec());
                    w.write_shared(b, 0..c.len()).unwrap();
                }
            }
            w.flush().unwrap();
            assert_eq!(Arc::strong_count(&shared), 1, "{threads} threads: a handle kept");
            drop(w);
            let mut back = Vec::new();
            file.rewind().unwrap();
            file.read_to_end(&mut back).unwrap();
            assert_eq!(back.len(), data.len() + tail.len(), "{threads} threads");
            assert!(back[..data.len()] == data[..], "{threads} threads: bytes differ");
            assert!(back[data.len()..] == tail[..], "{threads} threads: the tail differs");
        }
    }

    #[test]
    fn dropped_without_a_flush_it_ends_its_threads_and_keeps_the_full_blocks() {
        let data = pattern(3 * BLOCK + 5);
        let mut file = tempfile::tempfile().unwrap();
        let mut w = BlockWriter::new(file.try_clone().unwrap(), 2).unwrap();
        w.write_all(&data).unwrap();
        // The drop waits for the blocks in flight (it returns: no thread is
        // left waiting); the last, partial block was never handed over.
        drop(w);
        let mut back = Vec::new();
        file.rewind().unwrap();
        file.read_to_end(&mut back).unwrap();
        assert_eq!(back.len(), 3 * BLOCK);
        assert!(back[..] == data[..3 * BLOCK]);
    }

    #[test]
    fn a_failed_write_is_returned() {
        // A file opened for reading only: every pwrite fails.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, b"").unwrap();
        let file = File::open(&path).unwrap();
        let mut w = BlockWriter::new(file, 2).unwrap();
        let data = pattern(BLOCK * 3);
        let wrote = w.write_all(&data).and_then(|()| w.flush());
        let e = wrote.expect_err("writing into a read-only file fails");
        assert_eq!(e.raw_os_error(), None, "the error is kept as kind and message: {e}");
        assert!(e.to_string().contains("Bad file descriptor"), "{e}");
        // And again on the next call.
        assert!(w.flush().is_err());
    }
}
