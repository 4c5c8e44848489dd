//! A small local HTTP server with a self-contained browser player for BVH clips.
//!
//! This is the library behind `bvh serve FILE... [--port N]`.
//! The caller computes [`Clip`]s (joint world positions over time) and hands them to
//! [`Server::bind`]; [`Server::run`] then serves:
//!
//! - `GET /`: [`page`], one HTML page with its CSS and JavaScript inline and no
//!   external resources, that plays the clips in a Canvas2D player (several
//!   clips are laid out in a grid);
//! - `GET /clips.json`: [`clips_json`] of the clips, fetched by the page;
//! - `GET /live/events`: the server-sent events of the server's [`LiveFeed`],
//!   which a Rust caller fills with frames of world positions while the page,
//!   opened as `/?live=1`, draws each as it arrives (see [`LiveFeed`]).
//!
//! It is built on axum and hyper (HTTP/1.1, keep-alive) over a tokio runtime
//! that the [`Server`] owns: callers stay synchronous ([`Server::run`] blocks,
//! a [`ShutdownHandle`] stops it from another thread). The server listens on
//! loopback by default ([`default_addr`]) and refuses foreign `Host`s there
//! (DNS rebinding); it bounds request heads to [`MAX_REQUEST_HEAD`] bytes and
//! announced bodies to [`MAX_REQUEST_BODY`], closes connections that take longer
//! than [`Limits::header_timeout`] to send a request head or
//! [`Limits::write_timeout`] to read an answer, and serves at most
//! [`Limits::max_connections`] at once, answering `503` beyond that. Idle
//! connections cost a socket and a few kilobytes, not a thread.
//!
//! # Page parameters
//! The page reads optional query parameters, used by tests and handy for links:
//!
//! - `frame=N` start frame, `play=0|1`, `speed=X` (0.1 to 4), `loop=0`,
//!   `range=A-B` (loop range in frames), `inplace=1`, `follow=1`,
//!   `select=JOINT` (a joint name);
//! - `keys=K1,K2,...` key presses replayed once the clips are loaded
//!   (`ArrowRight`, `Home`, `End`, `Space`, `f`);
//! - `elapse=S` plays for `S` seconds of simulated wall time, as the animation
//!   loop would, so tests can check playback without a real clock;
//! - `size=WxH` fixes the canvas size in CSS pixels;
//! - `live=1` shows the [`LiveFeed`] instead of the clips;
//! - `debug=1` writes the player state and the projected screen position of
//!   every joint (CSS pixels from the top-left of the page) into the hidden
//!   `<pre id="debug">` element as JSON after each draw.
//!
//! # Example
//! ```no_run
//! # fn main() -> std::io::Result<()> {
//! # let clips: Vec<bvhkit_serve::Clip> = Vec::new();
//! let server = bvhkit_serve::Server::bind(("127.0.0.1", 0), &clips)?;
//! let stop = server.shutdown_handle();
//! let url = server.url()?;
//! let feed = server.live_feed(); // frames pushed here reach pages at /?live=1
//! let thread = std::thread::spawn(move || server.run());
//! println!("serving {url}");
//! stop.shutdown();
//! thread.join().unwrap()?;
//! # Ok(())
//! # }
//! ```
//!
//! # Implementation notes
//!
//! Turns `Clip`s into a local web player; it never parses BVH and depends on
//! `bvhkit-render`'s data types and the HTTP stack, which lives in this crate
//! only (axum, hyper, hyper-util, tokio, futures-util): the core and the CLI
//! need no async runtime.
//!
//! The UI is one static file, `assets/player.html`, embedded with
//! `include_str!`, with inline CSS/JS, no external resources and a strict CSP,
//! so `bvh serve` works offline and the binary is the only artifact. It lays
//! several clips out in a grid on the floor (columns along +X, rows back along
//! -Z, cells the size of the largest clip) and, with `?live=1`, draws the live
//! feed (`EventSource`) with frame, time and push-to-display latency in its
//! HUD.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod json;
mod live;
mod server;

pub use bvhkit_render::Clip;

pub use crate::json::clips_json;
pub use crate::live::{LiveError, LiveFeed};
pub use crate::server::{
    DEFAULT_PORT, HEADER_TIMEOUT, Limits, MAX_CONNECTIONS, MAX_EVENT_STREAMS, MAX_REQUEST_BODY,
    MAX_REQUEST_HEAD, Server, ShutdownHandle, WRITE_TIMEOUT, default_addr, free_port_near,
};

/// The player page: HTML with its CSS and JavaScript inline, no external resources.
///
/// It fetches `/clips.json` (see [`clips_json`]) from the server that served it.
///
/// # Example
/// ```
/// assert!(bvhkit_serve::page().starts_with("<!DOCTYPE html>"));
/// ```
#[must_use]
pub fn page() -> &'static str {
    include_str!("../assets/player.html")
}
