//! The live feed: frames pushed by a Rust caller, streamed to pages as
//! server-sent events.
//!
//! # Implementation notes
//!
//! `LiveFeed`, the hand-off for live capture. A caller sets a skeleton (a
//! `Clip`, encoded as one clip of `clips.json`, whose frames frame the view)
//! and pushes frames of world positions with a timestamp; each event is encoded
//! once and broadcast (`tokio::sync::broadcast`, 1024 events of backlog; a
//! slower page skips ahead and sees the gap in `seq`). Subscribing and
//! snapshotting the latest skeleton and frame happen under one lock, so a page
//! that connects late misses nothing and sees nothing twice. `finish` ends
//! every stream with an `end` event.

use std::convert::Infallible;
use std::fmt;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use bvhkit_render::Clip;
use bvhkit_render::glam::DVec3;
use futures_util::Stream;
use tokio::sync::broadcast;

use crate::json::{push_clip, push_num};

/// Frames a slow page may fall behind by before it skips ahead (it then sees a
/// gap in `seq`).
const BACKLOG: usize = 1024;

/// A comment line sent when the stream has been quiet this long, so proxies
/// and browsers keep the connection open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Why [`LiveFeed::push`] refused a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiveError {
    /// No skeleton yet: call [`LiveFeed::set_skeleton`] first.
    NoSkeleton,
    /// The frame does not have one position per joint of the skeleton.
    JointCount {
        /// Joints of the skeleton.
        expected: usize,
        /// Positions in the frame.
        found: usize,
    },
    /// [`LiveFeed::finish`] was called.
    Finished,
}

impl fmt::Display for LiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LiveError::NoSkeleton => f.write_str("no skeleton set before the first frame"),
            LiveError::JointCount { expected, found } => {
                write!(f, "expected {expected} joint positions, found {found}")
            }
            LiveError::Finished => f.write_str("the live feed has finished"),
        }
    }
}

impl std::error::Error for LiveError {}

/// Frames of world positions pushed by a Rust caller (a capture device, a
/// simulation) and streamed to every page open at `/?live=1`.
///
/// Get one from [`Server::live_feed`](crate::Server::live_feed) and clone it
/// into the thread that produces frames; every method takes `&self`, is cheap
/// and never blocks on a client (a slow page skips frames instead).
///
/// Protocol, at `GET /live/events` (`text/event-stream`, each event's data one
/// line of JSON):
///
/// - `event: skeleton`: the skeleton as one clip object of [`clips_json`](crate::clips_json)
///   (names, parents, end sites, unit guess, and its frames, of which the page
///   frames the first until frames arrive);
/// - `event: frame`: `{"seq":N,"time":T,"sent_ms":M,"positions":[x,y,z,...]}`,
///   `seq` counting from 1 and never reused, `time` the caller's timestamp in
///   seconds, `sent_ms` the server's wall clock (Unix milliseconds) when the
///   frame was pushed, positions in the skeleton's units, Y up;
/// - `event: end`: the feed has finished; the stream then closes.
///
/// A page that connects late gets the skeleton and the latest frame at once,
/// then every later event, in order. A page that falls more than 1024 frames
/// behind skips ahead (a gap in `seq`).
///
/// # Example
/// ```
/// use bvhkit_render::{Clip, glam::DVec3};
///
/// let server = bvhkit_serve::Server::bind("127.0.0.1:0", &[])?;
/// let feed = server.live_feed();
/// // The skeleton, with a rest pose to frame the view on until frames arrive.
/// let skeleton = Clip {
///     name: "sensor suit".into(),
///     joint_names: vec!["Hips".into(), "Head".into()],
///     parents: vec![None, Some(0)],
///     is_end_site: vec![false, true],
///     frame_time: 1.0 / 60.0,
///     n_frames: 1,
///     positions: vec![DVec3::new(0.0, 0.9, 0.0), DVec3::new(0.0, 1.7, 0.0)],
/// };
/// feed.set_skeleton(&skeleton);
/// let seq = feed.push(0.0, &[DVec3::new(0.1, 0.9, 0.0), DVec3::new(0.1, 1.7, 0.0)])?;
/// assert_eq!(seq, 1);
/// assert!(feed.push(0.1, &[DVec3::ZERO]).is_err()); // one joint short
/// // let thread = std::thread::spawn(move || server.run()); ...
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct LiveFeed {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    state: Mutex<LiveState>,
    tx: broadcast::Sender<Event>,
}

#[derive(Debug, Default)]
struct LiveState {
    skeleton: Option<Bytes>,
    n_joints: usize,
    last: Option<Bytes>,
    seq: u64,
    finished: bool,
}

/// One encoded server-sent event, shared by every subscriber.
#[derive(Clone, Debug)]
struct Event {
    bytes: Bytes,
    last: bool,
}

const END: &[u8] = b"event: end\ndata: {}\n\n";

impl Default for LiveFeed {
    fn default() -> LiveFeed {
        LiveFeed::new()
    }
}

impl LiveFeed {
    /// A feed with no skeleton and no subscribers.
    #[must_use]
    pub fn new() -> LiveFeed {
        let (tx, _) = broadcast::channel(BACKLOG);
        LiveFeed { inner: Arc::new(Inner { state: Mutex::new(LiveState::default()), tx }) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, LiveState> {
        self.inner.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets (or replaces) the skeleton: joint names, parents and end sites of
    /// `skeleton`, with its frames as the pose shown until frames arrive
    /// (it may have none). Pages rebuild their figure; the last frame is forgotten.
    pub fn set_skeleton(&self, skeleton: &Clip) {
        let mut json = String::new();
        push_clip(&mut json, skeleton);
        let bytes = Bytes::from(format!("event: skeleton\ndata: {json}\n\n"));
        let mut state = self.state();
        if state.finished {
            return;
        }
        state.n_joints = skeleton.parents.len();
        state.skeleton = Some(bytes.clone());
        state.last = None;
        let _ = self.inner.tx.send(Event { bytes, last: false });
    }

    /// Sends a frame of world positions (one per joint, in the skeleton's order
    /// and units) taken at `time` seconds on the caller's clock, to every page
    /// now connected, and keeps it for pages that connect later.
    /// Non-finite positions are sent as missing joints.
    ///
    /// Returns the frame's sequence number (1 for the first frame).
    ///
    /// # Errors
    /// Without a skeleton, with the wrong number of positions, or after
    /// [`LiveFeed::finish`].
    pub fn push(&self, time: f64, positions: &[DVec3]) -> Result<u64, LiveError> {
        let sent_ms =
            SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        let mut state = self.state();
        if state.finished {
            return Err(LiveError::Finished);
        }
        if state.skeleton.is_none() {
            return Err(LiveError::NoSkeleton);
        }
        if positions.len() != state.n_joints {
            return Err(LiveError::JointCount { expected: state.n_joints, found: positions.len() });
        }
        let seq = state.seq + 1;
        let mut text = String::with_capacity(64 + positions.len() * 30);
        let _ = write!(text, "event: frame\ndata: {{\"seq\":{seq},\"time\":");
        // Timestamps keep every digit (`{}` of an f64 is its shortest exact form).
        if time.is_finite() {
            let _ = write!(text, "{time}");
        } else {
            text.push_str("null");
        }
        // Milliseconds to the microsecond: `push_num`'s six digits are too few.
        let _ = write!(text, ",\"sent_ms\":{sent_ms:.3},\"positions\":[");
        for (i, p) in positions.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            push_num(&mut text, p.x);
            text.push(',');
            push_num(&mut text, p.y);
            text.push(',');
            push_num(&mut text, p.z);
        }
        text.push_str("]}\n\n");
        let bytes = Bytes::from(text);
        state.seq = seq;
        state.last = Some(bytes.clone());
        let _ = self.inner.tx.send(Event { bytes, last: false });
        Ok(seq)
    }

    /// Ends the feed: pages get an `end` event and their streams close; pages
    /// that connect later get the skeleton, the last frame and `end`.
    /// Later pushes fail with [`LiveError::Finished`].
    pub fn finish(&self) {
        let mut state = self.state();
        if !state.finished {
            state.finished = true;
            let _ = self.inner.tx.send(Event { bytes: Bytes::from_static(END), last: true });
        }
    }

    /// Pages (event streams) connected right now.
    #[must_use]
    pub fn subscribers(&self) -> usize {
        self.inner.tx.receiver_count()
    }

    /// The event stream of one page: the current skeleton and latest frame,
    /// then every later event, in order.
    pub(crate) fn event_stream(
        &self,
    ) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
        // Subscribing and reading the state under one lock: no event is both
        // in the snapshot and in the channel, and none falls between them.
        let (rx, backlog) = {
            let state = self.state();
            let rx = self.inner.tx.subscribe();
            let mut backlog: Vec<Bytes> = Vec::new();
            backlog.push(Bytes::from_static(b"retry: 1000\n\n"));
            backlog.extend(state.skeleton.clone());
            backlog.extend(state.last.clone());
            if state.finished {
                backlog.push(Bytes::from_static(END));
            }
            (if state.finished { None } else { Some(rx) }, backlog)
        };
        let head = futures_util::stream::iter(backlog.into_iter().map(Ok));
        let tail = futures_util::stream::unfold(rx, |rx| async move {
            let mut rx = rx?;
            let bytes = match tokio::time::timeout(KEEP_ALIVE, rx.recv()).await {
                Err(_elapsed) => Bytes::from_static(b": keep-alive\n\n"),
                Ok(Ok(Event { bytes, last: true })) => return Some((Ok(bytes), None)),
                Ok(Ok(Event { bytes, last: false })) => bytes,
                // A page this far behind skips ahead; `seq` shows the gap.
                Ok(Err(broadcast::error::RecvError::Lagged(n))) => {
                    Bytes::from(format!(": skipped {n} events\n\n"))
                }
                Ok(Err(broadcast::error::RecvError::Closed)) => return None,
            };
            Some((Ok(bytes), Some(rx)))
        });
        futures_util::StreamExt::chain(head, tail)
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    fn stick() -> Clip {
        Clip {
            name: "stick".into(),
            joint_names: vec!["Hips".into(), "Head".into()],
            parents: vec![None, Some(0)],
            is_end_site: vec![false, true],
            frame_time: 0.01,
            n_frames: 0,
            positions: Vec::new(),
        }
    }

    fn events(stream: impl Stream<Item = Result<Bytes, Infallible>>) -> Vec<String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(stream.map(|b| String::from_utf8(b.unwrap().to_vec()).unwrap()).collect())
    }

    /// A page that falls more than the backlog behind skips ahead: it is told
    /// how many events it missed, then gets the newest ones in order.
    #[test]
    fn a_slow_page_skips_ahead_and_sees_the_gap() {
        let feed = LiveFeed::new();
        feed.set_skeleton(&stick());
        let stream = feed.event_stream(); // subscribed, not read
        let frame = [DVec3::ZERO, DVec3::Y];
        for _ in 0..BACKLOG + 10 {
            feed.push(0.0, &frame).unwrap();
        }
        feed.finish();
        let got = events(stream);
        assert_eq!(got[0], "retry: 1000\n\n");
        assert!(got[1].starts_with("event: skeleton\n"), "{}", got[1]);
        // 1035 events were sent after subscribing (1034 frames and the end);
        // the channel kept the last 1024.
        assert_eq!(got[2], ": skipped 11 events\n\n");
        let seqs: Vec<u64> = got[3..got.len() - 1]
            .iter()
            .map(|e| {
                let rest = e.strip_prefix("event: frame\ndata: {\"seq\":").unwrap();
                rest[..rest.find(',').unwrap()].parse().unwrap()
            })
            .collect();
        assert_eq!(seqs, (12..=BACKLOG as u64 + 10).collect::<Vec<_>>());
        assert_eq!(got.last().unwrap(), "event: end\ndata: {}\n\n");
    }

    #[test]
    fn frames_before_a_skeleton_or_of_the_wrong_size_are_refused() {
        let feed = LiveFeed::new();
        assert_eq!(feed.push(0.0, &[DVec3::ZERO]), Err(LiveError::NoSkeleton));
        feed.set_skeleton(&stick());
        assert_eq!(
            feed.push(0.0, &[DVec3::ZERO]),
            Err(LiveError::JointCount { expected: 2, found: 1 })
        );
        assert_eq!(feed.push(0.5, &[DVec3::ZERO, DVec3::new(f64::NAN, 1.0, 2.0)]), Ok(1));
        // A non-finite position is a missing joint (`null`), still valid JSON.
        let got = events(feed.event_stream().take(3));
        let data = got[2].strip_prefix("event: frame\ndata: ").unwrap().trim_end();
        assert!(data.ends_with(r#""positions":[0,0,0,null,1,2]}"#), "{data}");
        assert_eq!(
            LiveError::JointCount { expected: 2, found: 1 }.to_string(),
            "expected 2 joint positions, found 1"
        );
    }
}
