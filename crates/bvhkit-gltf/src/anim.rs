//! The animation's bytes: where every track lies in buffer 0 ([`Anim`],
//! planned before any frame is computed) and the frames computed in pieces
//! on rayon's pool and handed over in frame order ([`Anim::stream`]).
//!
//! Buffer 0 keeps each track whole (all frames of one joint's translation,
//! then of its rotation, joint after joint), so a piece of frames lands in
//! every track: a piece is handed over as one run of bytes per track, each
//! with its offset. The pieces are computed by as many workers as the pool
//! has threads, each taking the next piece in frame order; whichever worker
//! finds the next piece to hand over ready hands it (and any that follow,
//! ready) over, so the writing runs beside the computing and at most a few
//! pieces wait in memory. Rotations are made sign-continuous as they are
//! handed over, in frame order: a worker records on which side of the frame
//! before's quaternion each frame's lies (the sign of their dot product),
//! and `q` is turned to `-q` when that side times the sign given to the
//! frame before is negative (negating is exact, in f64 and in f32 alike), so
//! the bytes are those of one frame after the other on any number of
//! threads.

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

use bvhkit::glam::{DAffine3, DQuat};
use bvhkit::{Kinematics, Motion, PositionChannels, Skeleton};

use crate::{Error, GlbError, finite32};

/// Frames per piece of the animation computed on rayon's pool.
pub(crate) const PIECE_FRAMES: usize = 512;

/// Pieces that may wait, computed, for the pieces before them: beyond
/// that, a worker that finishes a piece waits for its turn to hand pieces
/// over instead of leaving it to the worker that has it.
const MAX_WAITING: usize = 8;

/// One track: its joint, where it starts in buffer 0 and its bytes per
/// frame (12: a translation, 16: a rotation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Track {
    pub(crate) joint: usize,
    pub(crate) start: usize,
    pub(crate) stride: usize,
}

/// The animation's tracks and what computes them.
pub(crate) struct Anim {
    fk: Kinematics,
    factor: f64,
    names: Vec<String>,
    n_frames: usize,
    /// Every track, in buffer order (a joint's translation before its
    /// rotation).
    pub(crate) tracks: Vec<Track>,
    /// Bytes per frame of all tracks together.
    frame_bytes: usize,
    n_rot: usize,
}

/// A computed piece: each track's bytes one after the other, and the side
/// of every rotation (frame by frame, rotated joint by rotated joint).
#[derive(Default)]
struct Piece {
    bytes: Vec<u8>,
    sides: Vec<i8>,
}

/// Per-worker buffers of the computation.
struct Work {
    scratch: bvhkit::FkScratch,
    local: Vec<DAffine3>,
    prev: Vec<DQuat>,
}

impl Anim {
    /// The tracks of `skeleton`'s joints with channels, laid out from
    /// `start` (a multiple of 4) on; returns the plan and the end of the
    /// last track.
    pub(crate) fn plan(
        skeleton: &Skeleton,
        mode: PositionChannels,
        factor: f64,
        names: &[String],
        n_frames: usize,
        start: usize,
    ) -> (Anim, usize) {
        let mut tracks = Vec::new();
        let mut end = start;
        for (i, j) in skeleton.joints().iter().enumerate() {
            if j.channels().iter().any(|c| c.is_position()) {
                tracks.push(Track { joint: i, start: end, stride: 12 });
                end += 12 * n_frames;
            }
            if j.rotation_axes().next().is_some() {
                tracks.push(Track { joint: i, start: end, stride: 16 });
                end += 16 * n_frames;
            }
        }
        let frame_bytes = tracks.iter().map(|t| t.stride).sum();
        let n_rot = tracks.iter().filter(|t| t.stride == 16).count();
        let anim = Anim {
            fk: Kinematics::new(skeleton, mode),
            factor,
            names: names.to_vec(),
            n_frames,
            tracks,
            frame_bytes,
            n_rot,
        };
        (anim, end)
    }

    /// Computes every frame of `motion` on rayon's pool and hands each
    /// piece's run of each track to `sink` (the offset in buffer 0, the
    /// bytes), piece after piece in frame order, each piece's runs in
    /// buffer order. Stops at the first value that is not finite (in frame
    /// order, as one frame after the other would find it) or the first
    /// error of `sink`.
    pub(crate) fn stream(
        &self,
        motion: &Motion,
        sink: &mut (dyn FnMut(usize, &[u8]) -> io::Result<()> + Send),
    ) -> Result<(), GlbError> {
        let pieces = self.n_frames.div_ceil(PIECE_FRAMES);
        let workers = rayon::current_num_threads().clamp(1, pieces.max(1));
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let waiting: Mutex<Waiting> = Mutex::new(Waiting::default());
        let handing =
            Mutex::new(Handing { next: 0, signs: vec![1; self.n_rot], sink, failed: None });
        rayon::scope(|s| {
            for _ in 0..workers {
                s.spawn(|_| {
                    let mut work = Work {
                        scratch: self.fk.scratch(),
                        local: vec![DAffine3::IDENTITY; self.fk.len()],
                        prev: vec![DQuat::IDENTITY; self.fk.len()],
                    };
                    while !stop.load(Ordering::Relaxed) {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= pieces {
                            break;
                        }
                        let mut piece = lock(&waiting).spare.pop().unwrap_or_default();
                        let r = self.piece(motion, k, &mut work, &mut piece).map(|()| piece);
                        let backlog = {
                            let mut w = lock(&waiting);
                            w.ready.insert(k, r);
                            w.ready.len()
                        };
                        self.hand_over(&waiting, &handing, &stop, backlog > MAX_WAITING);
                    }
                });
            }
        });
        let h = handing.into_inner().unwrap_or_else(PoisonError::into_inner);
        match h.failed {
            Some(e) => Err(e),
            None => {
                debug_assert_eq!(h.next, pieces);
                Ok(())
            }
        }
    }

    /// Hands over the pieces ready in frame order, unless another worker
    /// is doing it (then it is left to that one, unless `wait`: too many
    /// pieces wait, so this worker waits its turn and helps).
    fn hand_over(
        &self,
        waiting: &Mutex<Waiting>,
        handing: &Mutex<Handing<'_>>,
        stop: &AtomicBool,
        wait: bool,
    ) {
        loop {
            let mut h = if wait {
                lock(handing)
            } else {
                match handing.try_lock() {
                    Ok(h) => h,
                    Err(TryLockError::Poisoned(p)) => p.into_inner(),
                    Err(TryLockError::WouldBlock) => return,
                }
            };
            loop {
                let Some(r) = lock(waiting).ready.remove(&h.next) else { break };
                let first = h.next * PIECE_FRAMES;
                h.next += 1;
                match r {
                    Err(e) => {
                        h.failed.get_or_insert(GlbError::Export(e));
                        stop.store(true, Ordering::Relaxed);
                    }
                    Ok(mut piece) => {
                        if h.failed.is_none()
                            && let Err(e) = self.emit(first, &mut piece, &mut h)
                        {
                            h.failed = Some(GlbError::Io(e));
                            stop.store(true, Ordering::Relaxed);
                        }
                        lock(waiting).spare.push(piece);
                    }
                }
            }
            let next = h.next;
            drop(h);
            // A piece that became ready while this worker held the turn
            // was left to it: look again now that the turn is free.
            if !lock(waiting).ready.contains_key(&next) {
                return;
            }
        }
    }

    /// Makes the piece's rotations sign-continuous with everything handed
    /// over before it, then hands its runs to the sink.
    fn emit(&self, first: usize, piece: &mut Piece, h: &mut Handing<'_>) -> io::Result<()> {
        let frames = (self.n_frames - first).min(PIECE_FRAMES);
        let mut at = 0;
        let mut r = 0;
        for t in &self.tracks {
            let run = &mut piece.bytes[at..at + t.stride * frames];
            at += t.stride * frames;
            if t.stride == 16 {
                let mut sign = h.signs[r];
                for (f, q) in run.chunks_exact_mut(16).enumerate() {
                    let side = piece.sides[f * self.n_rot + r];
                    // Turned when its dot product with the one handed over
                    // before (this side times that one's sign) is negative.
                    sign = if side * sign < 0 { -1 } else { 1 };
                    if sign < 0 {
                        for x in q.chunks_exact_mut(4) {
                            x[3] ^= 0x80;
                        }
                    }
                }
                h.signs[r] = sign;
                r += 1;
            }
            (h.sink)(t.start + t.stride * first, run)?;
        }
        Ok(())
    }

    /// Computes piece `k`: each track's run of its frames, one after the
    /// other in buffer order, and the sides of its rotations.
    fn piece(
        &self,
        motion: &Motion,
        k: usize,
        work: &mut Work,
        piece: &mut Piece,
    ) -> Result<(), Error> {
        let first = k * PIECE_FRAMES;
        let last = (first + PIECE_FRAMES).min(self.n_frames);
        let frames = last - first;
        let Work { scratch, local, prev } = work;
        piece.bytes.resize(self.frame_bytes * frames, 0);
        piece.sides.clear();
        piece.sides.reserve(frames * self.n_rot);
        // The frame before the piece, for the sides of its first.
        if first > 0 {
            self.fk.local_with(motion.frame(first - 1), scratch, local);
            for t in self.tracks.iter().filter(|t| t.stride == 16) {
                prev[t.joint] = DQuat::from_mat3(&local[t.joint].matrix3).normalize();
            }
        }
        for f in first..last {
            self.fk.local_with(motion.frame(f), scratch, local);
            let mut at = 0;
            // A joint's translation comes before its rotation in the
            // buffer, but its rotation is checked first: joint after joint,
            // the rotation, then the translation.
            let mut pending: Option<(usize, usize)> = None;
            for t in &self.tracks {
                let i = t.joint;
                let slot = at + t.stride * (f - first);
                at += t.stride * frames;
                if t.stride == 12 {
                    if let Some((j, s)) = pending.replace((i, slot)) {
                        self.translation(local, j, f, &mut piece.bytes[s..])?;
                    }
                    continue;
                }
                let mut after = None;
                if let Some((j, s)) = pending.take() {
                    if j == i {
                        after = Some((j, s));
                    } else {
                        self.translation(local, j, f, &mut piece.bytes[s..])?;
                    }
                }
                let q = DQuat::from_mat3(&local[i].matrix3).normalize();
                let d = q.dot(prev[i]);
                piece.sides.push(if f == 0 {
                    1
                } else if d < 0.0 {
                    -1
                } else if d > 0.0 {
                    1
                } else {
                    0
                });
                prev[i] = q;
                let a = [q.x as f32, q.y as f32, q.z as f32, q.w as f32];
                if !a.iter().all(|x| x.is_finite()) {
                    return Err(Error::NotFinite { joint: self.names[i].clone(), frame: Some(f) });
                }
                put(&mut piece.bytes[slot..], &a);
                if let Some((j, s)) = after {
                    self.translation(local, j, f, &mut piece.bytes[s..])?;
                }
            }
            if let Some((j, s)) = pending {
                self.translation(local, j, f, &mut piece.bytes[s..])?;
            }
        }
        Ok(())
    }

    fn translation(
        &self,
        local: &[DAffine3],
        i: usize,
        f: usize,
        out: &mut [u8],
    ) -> Result<(), Error> {
        let v = finite32(local[i].translation * self.factor, &self.names[i], Some(f))?;
        put(out, &v);
        Ok(())
    }
}

/// Pieces computed and waiting for those before them, and the buffers of
/// pieces handed over, for the next.
#[derive(Default)]
struct Waiting {
    ready: BTreeMap<usize, Result<Piece, Error>>,
    spare: Vec<Piece>,
}

/// The turn to hand pieces over: the next piece, the sign given to each
/// rotation track's last quaternion, the sink, the first failure.
struct Handing<'s> {
    next: usize,
    signs: Vec<i8>,
    sink: &'s mut (dyn FnMut(usize, &[u8]) -> io::Result<()> + Send),
    failed: Option<GlbError>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Writes `values` little-endian at the start of `out`.
pub(crate) fn put(out: &mut [u8], values: &[f32]) {
    for (o, v) in out.chunks_exact_mut(4).zip(values) {
        o.copy_from_slice(&v.to_le_bytes());
    }
}
