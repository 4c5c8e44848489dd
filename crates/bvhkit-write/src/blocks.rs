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
//! block meanwhile. Buffers are reused (a fixed number, `threads + 2`: the
//! producer waits for one when all are in flight, so memory is bounded and
//! fresh pages are not cleared for every block). The first error of a
//! writer is returned by the next `write` or `flush`; `flush` waits for
//! every block given so far. Dropping the writer stops its threads after
//! the blocks in flight (no error is reported then: call `flush`). One
//! writer thread is enough for one file: the kernel copies into a file one
//! write at a time, under the file's lock, and a second thread spins on
//! that lock when both cores are free.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Bytes of one block: what a writer thread takes at once.
pub const BLOCK: usize = 4 << 20;

/// Bytes of one `pwrite` of a block (see the module notes: 4 MiB calls
/// cost up to eight times the kernel time of 256 KiB ones on ext4).
const PIECE: usize = 256 << 10;

/// A block for a writer thread: its bytes and where they go.
struct Job {
    at: u64,
    bytes: Vec<u8>,
}

/// A writer thread's answer: the block's buffer back, or the error.
type Done = Result<Vec<u8>, io::Error>;

/// Writes a file from its start in order, the copy of the bytes into the
/// file done by writer threads a block at a time (see the module notes).
pub struct BlockWriter {
    /// The block being filled.
    current: Vec<u8>,
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
            at: 0,
            free: Vec::new(),
            made: 1,
            max: threads + 2,
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

    /// Gives the current block to the writers and takes an empty one.
    fn dispatch(&mut self) -> io::Result<()> {
        if self.current.is_empty() {
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
        let bytes = std::mem::replace(&mut self.current, next);
        let len = bytes.len() as u64;
        let jobs = self.jobs.as_ref().expect("jobs are open until drop");
        jobs.send(Job { at: self.at, bytes })
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
        let Ok(Job { at, bytes }) = job else { return };
        let answer = write_in_pieces(file, &bytes, at).map(|()| {
            crate::start_writeback(file, at, bytes.len() as u64);
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

impl Write for BlockWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.error()?;
        let room = BLOCK - self.current.len();
        let n = buf.len().min(room);
        self.current.extend_from_slice(&buf[..n]);
        if self.current.len() == BLOCK {
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
