//! The interactive BVH player behind `bvh view FILE...`.
//!
//! [`run`] opens a window (eframe/egui, OpenGL through glow) that plays one
//! or more BVH files side by side, each in its own colour, with an orbit
//! camera, a timeline with a loop range, a joint inspector, and drag and
//! drop. It draws the very [`DrawList`](bvhkit_render::DrawList) that
//! `bvhkit-render` rasterises headlessly, painted with egui, so the player
//! and `bvh render` show the same picture from the same camera.
//!
//! The logic is in window-free modules with their own tests:
//! [`clock`] (real-time playback), [`timeline`] (frame grid and loop
//! range), [`rig`] (camera framing, mouse mapping, following a joint),
//! [`units`] (unit guess, shared with `bvh render`), [`in_place`] (root travel removal), [`load`]
//! (files to clips), [`paint`] (draw list to egui shapes) and [`shot`]
//! (screenshot PNG and its sidecar JSON).
//!
//! # Screenshot mode
//! With [`ViewOptions::screenshot`] set, the player shows
//! [`ViewOptions::frame`], waits for a few frames to be drawn, saves the
//! window as a PNG plus a sidecar JSON with the pixel position of every
//! joint (see [`shot`]) and closes: this is how the window is tested.
//! [`ViewOptions::keys`] first sends key presses through the window's input,
//! so the keyboard shortcuts are tested too; the playback clock stands
//! still in screenshot mode, so the picture is the same on every run.
//!
//! # Keys and mouse
//! Space play/pause, Left/Right step a frame, Home/End go to the loop
//! range's ends, F frames all figures; drag to orbit, right- or shift-drag
//! to pan, wheel to zoom; click a joint to select it, hover to name it.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub use bvhkit::PositionChannels;

mod app;
pub mod clock;
pub mod in_place;
pub mod load;
pub mod paint;
pub mod rig;
pub mod shot;
pub mod timeline;
pub use bvhkit_render::units;

/// How [`run`] opens the player.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ViewOptions {
    /// How position channels combine with `OFFSET`s (default: replace).
    pub position_channels: PositionChannels,
    /// Screenshot mode: save the window to this PNG (and the sidecar JSON
    /// `<screenshot>.json`), then close.
    pub screenshot: Option<PathBuf>,
    /// The timeline frame to show first (clamped); default 0.
    pub frame: Option<usize>,
    /// Inner window size in points; default 1280 x 800.
    pub window_size: Option<[f32; 2]>,
    /// Start with the roots' horizontal travel removed.
    pub in_place: bool,
    /// Start playing (ignored in screenshot mode).
    pub play: bool,
    /// Select the first joint of this name (display name, searched file
    /// by file), as if clicked.
    pub select: Option<String>,
    /// Follow the selected joint with the camera.
    pub follow: bool,
    /// Screenshot mode only: key presses sent to the window, one per drawn
    /// frame, before the picture is taken (names as `egui::Key::from_name`
    /// knows them: `Space`, `Right`, `Left`, `Home`, `End`, `F`, ...). The
    /// sidecar then records the frame reached and whether it is playing.
    pub keys: Vec<String>,
    /// Applied to every file opened, before it is shown (`bvh view` brings
    /// files to Y up with it, as `bvh render` does); none by default.
    pub prepare: Option<load::Prepare>,
}

impl ViewOptions {
    /// The defaults: interactive, frame 0, paused.
    #[must_use]
    pub fn new() -> ViewOptions {
        ViewOptions::default()
    }
}

/// Why [`run`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ViewError {
    /// None of the files given on the command line could be read or parsed.
    Load(String),
    /// The window could not be opened (no display, no OpenGL, ...).
    Window(String),
    /// Screenshot mode could not take or save the screenshot.
    Screenshot(String),
}

impl fmt::Display for ViewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ViewError::Load(m) => write!(f, "cannot open: {m}"),
            ViewError::Window(m) => write!(f, "cannot open a window: {m}"),
            ViewError::Screenshot(m) => write!(f, "screenshot failed: {m}"),
        }
    }
}

impl std::error::Error for ViewError {}

/// Opens the player on `files` and returns when its window is closed,
/// with the messages of the files it skipped.
///
/// Files are parsed leniently; their warnings are shown in the window. A
/// file that cannot be read or parsed at all is skipped, and its message
/// shown in the window and returned; the others play. Any number of files
/// (zero included) may be given; more can be dropped on the window or
/// opened from its file dialog.
///
/// Must be called on the main thread (winit's rule on most platforms).
///
/// # Errors
/// [`ViewError::Load`] when files were given and none of them can be read
/// or parsed,
/// [`ViewError::Window`] when no window can be opened, and in screenshot
/// mode [`ViewError::Screenshot`] when the picture could not be taken or
/// written.
pub fn run(files: Vec<PathBuf>, options: ViewOptions) -> Result<Vec<String>, ViewError> {
    let keys = options
        .keys
        .iter()
        .map(|k| {
            eframe::egui::Key::from_name(k)
                .ok_or_else(|| ViewError::Screenshot(format!("unknown key '{k}'")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut loaded = Vec::with_capacity(files.len());
    let mut errors = Vec::new();
    for f in &files {
        match load::load_path_with(f, options.position_channels, options.prepare.as_ref()) {
            Ok(l) => loaded.push(l),
            Err(e) => errors.push(e),
        }
    }
    if loaded.is_empty() && !errors.is_empty() {
        return Err(ViewError::Load(errors.join("; ")));
    }
    let skipped = errors.clone();
    let size = options.window_size.unwrap_or([1280.0, 800.0]);
    let title = match files.as_slice() {
        [] => "bvh view".to_string(),
        [one] => format!("bvh view — {}", one.display()),
        more => format!("bvh view — {} files", more.len()),
    };
    let native = eframe::NativeOptions {
        viewport: eframe::egui::ViewportBuilder::default()
            .with_title(title.clone())
            .with_inner_size(size)
            .with_drag_and_drop(true),
        ..Default::default()
    };
    let screenshot_mode = options.screenshot.is_some();
    let outcome: Arc<Mutex<Option<Result<(), String>>>> = Arc::default();
    let app_outcome = Arc::clone(&outcome);
    eframe::run_native(
        &title,
        native,
        Box::new(move |cc| {
            Ok(Box::new(app::Player::new(cc, loaded, errors, options, keys, app_outcome)))
        }),
    )
    .map_err(|e| ViewError::Window(e.to_string()))?;
    let result = outcome.lock().map(|mut o| o.take()).unwrap_or(None);
    match result {
        Some(Err(e)) => Err(ViewError::Screenshot(e)),
        None if screenshot_mode => {
            Err(ViewError::Screenshot("the window closed before the screenshot was taken".into()))
        }
        _ => Ok(skipped),
    }
}
