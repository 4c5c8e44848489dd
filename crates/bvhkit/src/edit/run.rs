//! Running an edit: a list of [`Step`]s over a BVH input to an [`Output`],
//! streamed in constant memory where every step allows it, else on the
//! whole clip. `bvh edit` and the Python package's `edit_file` both run
//! edits through [`Edit`]; they parse their arguments, choose files and
//! say the notes.
//!
//! [`Edit::run_bytes`] runs an edit over the bytes of a file in memory
//! (mapped or read): as a stream when no step needs the whole clip
//! ([`Edit::streams`]), looking at frames first where a step must
//! (`lookahead`: the up axis, the unit guess, the root-motion carrier, a
//! rest-pose frame, `portable`'s constant channels, read again from those
//! bytes, or only sampled lines
//! behind frame steps, which the real pass confirms, `sample`), and
//! retrying on the whole clip whenever the stream gives up, having
//! written nothing ([`EditError::GaveUp`]). [`Edit::stream_reader`]
//! streams a reader that cannot be read twice (a pipe; transforms that
//! look ahead give up at once), and [`Edit::whole`] runs the steps on a
//! loaded clip.
//!
//! A streamed run (`run/stream.rs`) sets the steps up as the core's
//! [`crate::edit::plan::Steps`], then runs the input through them a batch
//! at a time ([`read_batches`]: the next batch parsed while the steps run
//! on the one before, both on rayon's pool); every map runs through
//! [`crate::edit::ChunkedMap`], the batch is formatted in pieces on the
//! pool, and a writing thread appends them in order to the output's body
//! ([`Output::begin`], after room left for the header sized for the frame
//! count the frame steps should leave); [`Output::finish`] gets the real
//! header at the end. The bytes are those of one frame at a time through
//! one map, whatever the thread count or batch size, and those of the
//! whole-clip path.
//!
//! The output sees the input's reading warnings before anything is
//! finished or written ([`Output::accept`]), and may refuse them: `bvh
//! edit` refuses repairs that invent or discard values unless `--repair`.
//!
//! Notes come in the whole clip's order: the reader's warnings, then each
//! step's set-up notes and its map's ([`Note`]). Messages name the
//! command line's flags (`--up`, `--source-up`, …), which the Python
//! package's keyword steps mirror.

mod lookahead;
pub mod sample;
mod stream;
mod whole;

use std::collections::HashMap;
use std::io::Write;

use crate::PositionChannels;
use crate::bvh::Bvh;
use crate::edit::axes::{SignedAxis, UpAxis};
use crate::edit::joints;
use crate::edit::layout::{LayoutMap, Positions, sig};
use crate::edit::mirror::{Mirror, MirrorOptions};
use crate::edit::order::OrderMap;
use crate::edit::plan::{FrameSpan, Stage};
use crate::edit::scale::ScaleMap;
use crate::error::{Error, Warning};
use crate::parse::ReadOptions;
use crate::rotation::RotationOrder;
use crate::skeleton::Skeleton;
use crate::units::{UnitGuess, Units};

pub use lookahead::{BATCH_VALUES, detect_up_in_one_pass, read_batches, read_batches_consumed};

/// One transform of an edit, applied in the order given.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Keep a range of the frames reaching this step.
    Frames(FrameSpan),
    /// Keep every Nth frame, starting with the first.
    Every(usize),
    /// Reverse the frames (whole clip).
    Reverse,
    /// Resample to frames per second (whole clip).
    Fps(f64),
    /// Rotation channel order of every joint with three rotation channels.
    Order(RotationOrder),
    /// Channel layout: three rotations in this order, position channels as
    /// [`Settings::layout_positions`] says.
    Layout(RotationOrder),
    /// Convert so that this axis is up.
    Up(SignedAxis),
    /// Multiply offsets and position channels.
    Scale(f64),
    /// Convert lengths to a unit.
    Units(Units),
    /// Scale to a height along the up axis (whole clip).
    Height(f64),
    /// Mirror left and right.
    Mirror,
    /// Remove horizontal root travel.
    InPlaceRoot,
    /// Move the first frame's root above the origin, facing +Z.
    RootToOrigin,
    /// Extract root motion onto a new joint of this name.
    ExtractRoot(String),
    /// Rename joints.
    Rename(Rename),
    /// Remove these joints, folding their motion into their children.
    RemoveJoints(Vec<String>),
    /// Remove every End Site.
    StripEndSites,
    /// Add an End Site to every joint without children.
    AddEndSites,
    /// Make a frame or another skeleton's rest pose the rest pose.
    RestPose(RestSource),
}

/// How [`Step::Rename`] renames.
#[derive(Clone, Debug, PartialEq)]
pub enum Rename {
    /// Old name to new name ([`crate::edit::joints::parse_rename_map`]).
    Map(HashMap<String, String>),
    /// `from` replaced by `to` in every name.
    Pattern {
        /// What is replaced.
        from: String,
        /// What replaces it.
        to: String,
    },
}

/// The rest pose of [`Step::RestPose`].
#[derive(Clone, Debug, PartialEq)]
pub enum RestSource {
    /// A frame as it reaches this step.
    Frame(usize),
    /// Another skeleton's rest pose.
    Skeleton(Skeleton),
}

impl Step {
    /// Whether the step needs the whole clip in memory.
    pub fn whole_clip(&self) -> bool {
        matches!(self, Step::Reverse | Step::Fps(_) | Step::Height(_))
    }

    /// Whether a stream may need to look at frames first (a first pass
    /// over a file in memory): the root-motion steps (the carrier, the
    /// first frame, and the up axis unless a source up axis is given),
    /// [`Step::Up`] without a source up axis (detected on frames spread over
    /// the clip: their lines alone behind frame steps only, else a whole
    /// pass), [`Step::Units`] without a source unit (the guess from every
    /// frame's size: on the sampled frames' lines behind frame steps only,
    /// confirmed by the stream, else a whole pass), a rest-pose frame and
    /// the mirror (whose plane may come from the first frame, when the
    /// whole clip takes over). A reader read once takes the whole clip
    /// instead.
    pub fn looks_ahead(&self, settings: &Settings) -> bool {
        match self {
            Step::InPlaceRoot | Step::RootToOrigin | Step::ExtractRoot(_) | Step::Mirror => true,
            Step::Up(_) => settings.source_up.is_none(),
            Step::Units(_) => settings.source_units.is_none(),
            Step::RestPose(source) => matches!(source, RestSource::Frame(_)),
            _ => false,
        }
    }
}

/// Whether one of `steps` can stop the reading before the end of the
/// input (a frame range with an end).
fn stops_reading(steps: &[Step]) -> bool {
    steps.iter().any(|s| matches!(s, Step::Frames(r) if r.is_bounded()))
}

/// What an edit's steps share.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The input's up axis, instead of detecting it.
    pub source_up: Option<SignedAxis>,
    /// The input's length unit, instead of guessing it.
    pub source_units: Option<Units>,
    /// Which joints get position channels with [`Step::Layout`].
    pub layout_positions: Positions,
    /// Make a layout that drops position channels whose motion is lost.
    pub drop_motion: bool,
    /// Write position channels every reader reads alike
    /// ([`crate::edit::portable`]), after the steps: streamed after a first
    /// pass over the frames they leave (which channels stay constant), a
    /// reader read once loads the whole clip.
    pub portable: bool,
    /// How position channels combine with OFFSET.
    pub position_channels: PositionChannels,
    /// Repair what lenient reading recovers (else refuse any problem).
    pub lenient: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            source_up: None,
            source_units: None,
            layout_positions: Positions::Root,
            drop_motion: false,
            portable: false,
            position_channels: PositionChannels::Replace,
            lenient: true,
        }
    }
}

/// What an edit says besides its output.
#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// A reading warning of the input.
    Warning(Warning),
    /// A note of a step about the input (said after the input's name).
    Said(String),
}

/// Why an edit failed.
#[derive(Debug)]
pub enum EditError<E> {
    /// The input could not be read (at a position in it, when known).
    Read(Error),
    /// A step refused the input: the message, to be said after the
    /// input's name.
    Input(String),
    /// A step's error, said as it is.
    Step(Error),
    /// Said as it is.
    Other(String),
    /// Writing the output's body failed.
    Write(std::io::Error),
    /// The output's own error ([`Output`]).
    Output(E),
    /// The stream gave up, having written nothing, so that the whole clip
    /// decides: a step that must look at frames first on an input that
    /// cannot be read twice, a mirror whose plane comes from the first
    /// frame, a rest-pose frame past the end, a root-motion frame that
    /// failed, a guess made on a sample the pass did not confirm, or a step
    /// set up on frames that failed behind a frame range (whose own error,
    /// a range past the end, comes first on the whole clip).
    /// [`Edit::run_bytes`] retries on the whole clip; never returned by it.
    GaveUp,
}

impl<E> From<Error> for EditError<E> {
    fn from(e: Error) -> Self {
        EditError::Step(e)
    }
}

impl<E: std::fmt::Display> std::fmt::Display for EditError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditError::Read(e) | EditError::Step(e) => write!(f, "{e}"),
            EditError::Input(m) | EditError::Other(m) => f.write_str(m),
            EditError::Write(e) => write!(f, "writing: {e}"),
            EditError::Output(e) => write!(f, "{e}"),
            EditError::GaveUp => f.write_str("this edit needs the whole clip"),
        }
    }
}

impl<E: std::fmt::Debug + std::fmt::Display> std::error::Error for EditError<E> {}

/// Where an edit writes its BVH text: the caller opens files, [`Edit`]
/// writes into them.
pub trait Output {
    /// Where a stream's frames go.
    type Body: Write + Send;
    /// The output's own errors.
    type Error: Send;
    /// The body a stream writes its frames into; `room` is the header the
    /// frame count the steps should leave would have (a caller that writes
    /// in place leaves that many bytes first, to be filled in
    /// [`Output::finish`]).
    fn begin(&mut self, room: &[u8]) -> Result<Self::Body, Self::Error>;
    /// The stream's frames are all in `body`; `header` is the output's
    /// real header (`room`'s size when the count came out as expected).
    fn finish(&mut self, body: Self::Body, room: &[u8], header: &[u8]) -> Result<(), Self::Error>;
    /// The whole-clip path's result, to be written at once.
    fn whole(&mut self, bvh: &Bvh) -> Result<(), Self::Error>;
    /// The input's reading `warnings`, of an input of `frames` frames (a
    /// stream: the frames read), before anything is finished or written:
    /// an error refuses the output (a caller that refuses repairs that
    /// invent or discard values, as `bvh fmt` without `--repair` does).
    /// Called by [`Edit::whole`] before its steps run, and by a stream
    /// before [`Output::finish`]. Accepts everything by default.
    fn accept(&mut self, warnings: &[Warning], frames: usize) -> Result<(), Self::Error> {
        let _ = (warnings, frames);
        Ok(())
    }
}

/// An edit: its steps in order and their settings.
#[derive(Clone, Debug, Default)]
pub struct Edit {
    /// The steps, in the order they apply.
    pub steps: Vec<Step>,
    /// What they share.
    pub settings: Settings,
}

impl Edit {
    /// An edit of `steps` with `settings`.
    pub fn new(steps: Vec<Step>, settings: Settings) -> Edit {
        Edit { steps, settings }
    }

    /// The reading options of the input.
    pub fn read_options(&self) -> ReadOptions {
        let mut opts = ReadOptions::new();
        opts.lenient(self.settings.lenient);
        opts
    }

    /// Whether the edit can stream: no step needs the whole clip
    /// (`portable` streams after a first pass over the frames, see
    /// [`Edit::looks_ahead`]).
    pub fn streams(&self) -> bool {
        !self.steps.iter().any(Step::whole_clip)
    }

    /// Whether a step, or `portable` (which channels stay constant, over
    /// every frame), may look at frames before streaming (the input must
    /// then be read twice: bytes in memory, not a reader).
    pub fn looks_ahead(&self) -> bool {
        self.settings.portable || self.steps.iter().any(|s| s.looks_ahead(&self.settings))
    }

    /// Runs the edit over `bytes`, the whole input in memory (a mapped or
    /// read file), into `out`: streamed when [`Edit::streams`], reading the
    /// bytes again where a step must look at frames first, and on the whole
    /// clip when the stream gives up (having written nothing) or cannot
    /// stream. Returns the notes.
    pub fn run_bytes<O: Output>(
        &self,
        bytes: &[u8],
        out: &mut O,
    ) -> Result<Vec<Note>, EditError<O::Error>> {
        if self.streams() {
            match self.stream_bytes(bytes, out) {
                Err(EditError::GaveUp) => {}
                r => return r,
            }
        }
        self.whole_bytes(bytes, out)
    }

    /// Runs the edit on the whole clip that `bytes` hold (parsed with
    /// [`Edit::read_options`]), into `out`: what [`Edit::run_bytes`] does
    /// when the stream gives up or cannot stream. Returns the notes.
    pub fn whole_bytes<O: Output>(
        &self,
        bytes: &[u8],
        out: &mut O,
    ) -> Result<Vec<Note>, EditError<O::Error>> {
        let (bvh, warnings) = self.read_options().parse(bytes).map_err(EditError::Read)?;
        self.whole(bvh, warnings, out)
    }

    /// Streams `bytes` into `out`, reading them again where a step must
    /// look at frames first; [`EditError::GaveUp`] when the whole clip must
    /// decide.
    pub fn stream_bytes<O: Output>(
        &self,
        bytes: &[u8],
        out: &mut O,
    ) -> Result<Vec<Note>, EditError<O::Error>> {
        self.stream_slice(bytes, out, None)
    }

    /// [`Edit::stream_bytes`], calling `release(n)` as the stream goes: the
    /// stream will not read `bytes[..n]` again in this read of them. A read
    /// is the search for the sampled lines of a step that looks at frames
    /// first (`--up`, `--units` without a source unit), which needs only a
    /// few of the lines it searched afterwards, then the real pass, which
    /// reads `bytes` from the start again: within a read the offsets never
    /// decrease, and an offset below the one before starts the next read
    /// (the pages before it were read again). The real pass's last call is
    /// `bytes.len()` when the stream read to the end. A caller holding a
    /// private read-only map of a file may drop those pages from its memory
    /// (a page read again is mapped again from the file, with the same
    /// bytes), so a stream's memory stays constant however large the file.
    /// On [`EditError::GaveUp`] the whole clip must decide, and reading the
    /// whole clip reads every byte again: the caller gets the bytes again
    /// (maps the file anew) before that.
    pub fn stream_bytes_releasing<O: Output>(
        &self,
        bytes: &[u8],
        out: &mut O,
        release: &mut (dyn FnMut(usize) + Send),
    ) -> Result<Vec<Note>, EditError<O::Error>> {
        self.stream_slice(bytes, out, Some(release))
    }

    /// The stream of [`Edit::stream_bytes`] and
    /// [`Edit::stream_bytes_releasing`].
    fn stream_slice<O: Output>(
        &self,
        bytes: &[u8],
        out: &mut O,
        release: Option<&mut (dyn FnMut(usize) + Send)>,
    ) -> Result<Vec<Note>, EditError<O::Error>> {
        let opts = self.read_options();
        let rdr = opts.frame_reader_slice(bytes).map_err(EditError::Read)?;
        // One caller of `release` at a time: the sampled lines' search and
        // the real pass come one after the other.
        let release = release.map(std::sync::Mutex::new);
        let call = |n: usize| {
            if let Some(r) = &release {
                (r.lock().unwrap_or_else(std::sync::PoisonError::into_inner))(n);
            }
        };
        let release: Option<&(dyn Fn(usize) + Sync)> = release.as_ref().map(|_| &call as _);
        let again = lookahead::Lookahead { opts: &opts, bytes, release };
        stream::run(self, rdr, Some(again), out, release)
    }

    /// Streams what `r` gives into `out`, reading it once:
    /// [`EditError::GaveUp`] when a step must look at frames first or the
    /// whole clip must decide (the caller then loads the clip and runs
    /// [`Edit::whole`]).
    pub fn stream_reader<R: std::io::Read + Send, O: Output>(
        &self,
        r: R,
        out: &mut O,
    ) -> Result<Vec<Note>, EditError<O::Error>> {
        let rdr = self.read_options().frame_reader(r).map_err(EditError::Read)?;
        stream::run(self, rdr, None, out, None)
    }

    /// Runs the steps on the whole clip `bvh` (read with `warnings`) and
    /// writes the result to `out` ([`Output::whole`]).
    pub fn whole<O: Output>(
        &self,
        bvh: Bvh,
        warnings: Vec<Warning>,
        out: &mut O,
    ) -> Result<Vec<Note>, EditError<O::Error>> {
        out.accept(&warnings, bvh.motion().n_frames()).map_err(EditError::Output)?;
        let mut notes: Vec<Note> = warnings.into_iter().map(Note::Warning).collect();
        let bvh = whole::run(self, bvh, &mut notes)?;
        out.whole(&bvh).map_err(EditError::Output)?;
        Ok(notes)
    }
}

/// The mirror of `bvh`'s skeleton, with a note naming the name pairs it
/// did not swap, and one naming the pairs confirmed by their lengths only.
fn mirror_of<E>(bvh: &Bvh, notes: &mut Vec<Note>) -> Result<Mirror, EditError<E>> {
    let m =
        Mirror::new(bvh, &MirrorOptions::default()).map_err(|e| EditError::Input(e.to_string()))?;
    if m.confirmed_by_length().is_empty() && m.rejected().is_empty() {
        return Ok(m);
    }
    let names = bvh.skeleton().display_names();
    let pair = |l: &crate::skeleton::JointId, r: &crate::skeleton::JointId| {
        format!("{}|{}", names[l.index()], names[r.index()])
    };
    if !m.confirmed_by_length().is_empty() {
        let list: Vec<String> = m.confirmed_by_length().iter().map(|(l, r)| pair(l, r)).collect();
        let from =
            if bvh.motion().n_frames() > 0 { "the first frame's" } else { "the rest pose's" };
        notes.push(Note::Said(format!(
            "--mirror: the rest pose is not symmetric: {} swapped as their offsets have the \
             same length (mirrored across {}, {from} lateral axis)",
            list.join(", "),
            m.world_axis()
        )));
    }
    if !m.rejected().is_empty() {
        let list: Vec<String> =
            m.rejected().iter().map(|(l, r, why)| format!("{} ({why})", pair(l, r))).collect();
        notes.push(Note::Said(format!(
            "--mirror: {} pairs, {} name pairs not swapped: {}",
            m.pairs().len(),
            list.len(),
            list.join(", ")
        )));
    }
    Ok(m)
}

/// The factor of a unit conversion to `to`: from the source unit, else
/// from `guess` (said).
fn units_factor<E>(
    settings: &Settings,
    guess: impl FnOnce() -> Result<UnitGuess, EditError<E>>,
    to: Units,
    notes: &mut Vec<Note>,
) -> Result<f64, EditError<E>> {
    let from = match settings.source_units {
        Some(u) => u,
        None => {
            let guess = guess()?;
            notes.push(Note::Said(guessed_note(&guess)));
            guess.units
        }
    };
    units_between(from, to).ok_or_else(|| {
        EditError::Input(
            "the skeleton's unit cannot be guessed from its size; give --source-units or use \
             --scale"
                .to_string(),
        )
    })
}

/// The factor from `from` to `to`; `None` when either has no size.
fn units_between(from: Units, to: Units) -> Option<f64> {
    Some(from.metres_per_unit()? / to.metres_per_unit()?)
}

/// What a unit conversion says of the unit it guessed.
fn guessed_note(guess: &UnitGuess) -> String {
    format!("units guessed: {}", guess.label())
}

/// The up axis root motion uses when `up` was detected: its axis, else Y
/// (said).
fn root_up(up: UpAxis, notes: &mut Vec<Note>) -> SignedAxis {
    match up.axis {
        Some(a) => a,
        None => {
            notes.push(Note::Said(format!(
                "up axis not detected ({up}); root motion uses Y up (give --source-up)"
            )));
            SignedAxis::PosY
        }
    }
}

/// The up axis an up conversion converts from when `up` was detected
/// (said), else an error asking for the source up axis.
fn detected_up<E>(up: UpAxis, notes: &mut Vec<Note>) -> Result<SignedAxis, EditError<E>> {
    match up.axis {
        Some(a) => {
            notes.push(Note::Said(format!("up axis detected: {up}")));
            Ok(a)
        }
        None => Err(EditError::Input(format!("cannot detect the up axis: {up}; give --source-up"))),
    }
}

/// `skel` renamed as `how` says. Frames are unchanged (the channels keep
/// their order).
fn renamed<E>(how: &Rename, skel: &Skeleton) -> Result<Skeleton, EditError<E>> {
    let at = |e: Error| EditError::Input(e.to_string());
    match how {
        Rename::Map(map) => joints::rename_map_skeleton(skel, map).map_err(at),
        Rename::Pattern { from, to } => joints::rename_pattern_skeleton(skel, from, to).map_err(at),
    }
}

/// The note of a step whose channels could not hold all of the world
/// motion (`error` against the size of `skel`, its input skeleton).
fn lossy_note(flag: &str, error: f64, skel: &Skeleton) -> Option<String> {
    let what = if flag == "--remove-joints" {
        "the remaining joints' channels cannot hold all of the removed motion"
    } else {
        "some joints' channels cannot hold the compensation"
    };
    (error > 1e-9 * crate::edit::rest_height(skel))
        .then(|| format!("{flag}: {what}: largest world position error {}", sig(error)))
}

/// The per-frame map of an order, layout or scale step.
fn frame_map<E>(settings: &Settings, step: &Step, skel: &Skeleton) -> Result<Stage, EditError<E>> {
    Ok(match *step {
        Step::Order(o) => Stage::Order(OrderMap::all(skel, o)),
        Step::Layout(o) => Stage::Layout(Box::new(LayoutMap::new(
            skel,
            o,
            settings.layout_positions,
            settings.position_channels,
        )?)),
        Step::Scale(f) => Stage::Scale(ScaleMap::new(skel, f)?),
        _ => {
            return Err(EditError::Other(format!(
                "internal error: {step:?} is not a per-frame transform"
            )));
        }
    })
}

/// A layout that lost motion, refused without `drop_motion`
/// ([`LayoutMap::lost_motion`] says what).
fn layout_refusal<E>(settings: &Settings, stage: &Stage) -> Result<(), EditError<E>> {
    let Stage::Layout(m) = stage else { return Ok(()) };
    match m.lost_motion() {
        Some(what) if !settings.drop_motion => Err(EditError::Input(format!(
            "--layout {what}; give --drop-motion to drop them anyway, or keep them with \
             --layout-positions keep or all"
        ))),
        _ => Ok(()),
    }
}

/// What a per-frame map reports at the end.
fn stage_note(stage: &Stage) -> Option<String> {
    match stage {
        Stage::Layout(m) => m.is_lossy().then(|| {
            format!(
                "--layout dropped position channels: largest world position error {}",
                sig(m.max_position_error())
            )
        }),
        Stage::Remove(m, skel) => lossy_note("--remove-joints", m.max_position_error(), skel),
        Stage::Rest(m, skel) => lossy_note("--rest-pose", m.max_position_error(), skel),
        Stage::Units(_, check) => Some(guessed_note(&check.sizes().guess())),
        _ => None,
    }
}
