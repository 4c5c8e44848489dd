//! The HTTP server: axum routes on hyper's HTTP/1.1 connections, driven by a
//! tokio runtime that the [`Server`] owns, so callers stay synchronous.
//!
//! The accept loop is ours (rather than `axum::serve`) because it enforces what
//! `axum::serve` does not: a connection cap with a `503` beyond it, a deadline
//! for request heads, a bound on the head size and a write timeout.
//!
//! # Implementation notes
//!
//! `Server` owns a single-threaded tokio runtime; `bind` is synchronous (so a
//! busy port is an ordinary `AddrInUse` error, for which `free_port_near` names
//! a free port), `run` blocks, a `ShutdownHandle` stops it from any thread. The
//! accept loop is ours rather than `axum::serve`, because it enforces the
//! `Limits`: at most `max_connections` connections (a semaphore; when it is
//! full, the oldest connection that has sent no request head for over a second
//! (`SILENT_GRACE`) is closed to make room, so silent connections hold places only while there is
//! room; when none is silent a `503` is written before any request is read,
//! then the socket is half-closed and drained so the client never sees a
//! reset), at most `max_event_streams` `/live/events` streams (`503` beyond,
//! so pages left open never take the places of page and JSON requests), hyper's `header_read_timeout`
//! (a deadline for the whole request head, from connection start and between
//! keep-alive requests: slowloris connections are closed, and they cost a task
//! and a socket, not a thread), `max_buf_size` (8 KiB heads, `431` beyond), and
//! a write timeout (`WriteTimeout` around the socket: a client that stops
//! reading is cut off). axum routes `/`, `/index.html`, `/clips.json` and
//! `/live/events`; one middleware does the `Host` check on loopback against DNS
//! rebinding (absolute request targets included), refuses announced bodies over
//! 16 KiB (`413`; no route reads a body) and adds the common headers; the page
//! carries a strict CSP. The page and `clips.json` are built once (at compile
//! and bind time) and shared by reference.

use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bvhkit_render::Clip;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

use crate::live::LiveFeed;
use crate::{clips_json, page};

/// Port used by `bvh serve` when none is given.
pub const DEFAULT_PORT: u16 = 8123;

/// Largest request head (request line plus headers) accepted, in bytes.
/// Bigger requests get `431 Request Header Fields Too Large`.
pub const MAX_REQUEST_HEAD: usize = 8 * 1024;

/// Largest request body announced (`Content-Length`) before `413 Payload Too
/// Large`. No route reads a body; bodies are never buffered.
pub const MAX_REQUEST_BODY: u64 = 16 * 1024;

/// Default for [`Limits::max_connections`].
pub const MAX_CONNECTIONS: usize = 256;

/// Default for [`Limits::max_event_streams`]: a quarter of the connections,
/// so that open pages never take the room of page and JSON requests.
pub const MAX_EVENT_STREAMS: usize = MAX_CONNECTIONS / 4;

/// Default for [`Limits::header_timeout`].
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Default for [`Limits::write_timeout`].
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections beyond the cap that are answered `503` at once; more than that
/// are closed without an answer.
const MAX_REFUSALS: usize = 64;

const PAGE_CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; \
    style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// The answer to a connection beyond the cap, written before any request is read.
const BUSY: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
    Content-Length: 11\r\nRetry-After: 1\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n\
    server busy";

/// The loopback address `127.0.0.1:port`, the default for `bvh serve`.
#[must_use]
pub fn default_addr(port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
}

/// A port on `ip` that is free right now, near `busy` when one is (the next
/// hundred ports are tried), else any free port; `None` when none can be bound.
///
/// `bvh serve` names it when the port asked for is in use. Another program may
/// take it before it is used: it is a suggestion, not a reservation.
#[must_use]
pub fn free_port_near(ip: IpAddr, busy: u16) -> Option<u16> {
    let free = |port: u16| std::net::TcpListener::bind((ip, port)).ok()?.local_addr().ok();
    (1..=100u16)
        .filter_map(|d| busy.checked_add(d))
        .find_map(free)
        .or_else(|| free(0))
        .map(|a| a.port())
}

/// Bounds on what clients may hold; see [`Server::with_limits`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most connections served at once (live streams included). When a
    /// connection arrives beyond it, the oldest connection that has sent no
    /// request head for over a second is closed to make room (a client that
    /// connects and stays silent holds its place only while the server has
    /// room); when there is none, the newcomer gets `503 Service
    /// Unavailable` and is closed.
    pub max_connections: usize,
    /// Most `/live/events` streams open at once; beyond it `GET
    /// /live/events` gets `503`, so pages left open cannot fill
    /// [`Limits::max_connections`].
    pub max_event_streams: usize,
    /// Longest time a client may take to send a whole request head, counted
    /// from the connection's start or from the end of the previous response
    /// (idle keep-alive). The connection is then closed.
    pub header_timeout: Duration,
    /// Longest wait for a client to take the next bytes of a response.
    /// The connection is then closed.
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: MAX_CONNECTIONS,
            max_event_streams: MAX_EVENT_STREAMS,
            header_timeout: HEADER_TIMEOUT,
            write_timeout: WRITE_TIMEOUT,
        }
    }
}

/// A bound, not yet running, player server.
///
/// Routes: `GET /` (and `/index.html`) serves [`page`], `GET /clips.json` serves
/// [`clips_json`] of the clips given to [`Server::bind`], `GET /live/events` is
/// the server-sent event stream of the [`LiveFeed`] ([`Server::live_feed`]);
/// `HEAD` is accepted wherever `GET` is.
/// Other paths get `404`, other methods `405`, malformed requests `400`, heads
/// over [`MAX_REQUEST_HEAD`] bytes `431`, bodies over [`MAX_REQUEST_BODY`] `413`.
///
/// When bound to a loopback address, requests whose `Host` header (or
/// absolute request target) names another host get `403`, so a web page cannot
/// read the clips through DNS rebinding.
///
/// The server owns a single-threaded tokio runtime; [`Server::run`] blocks the
/// calling thread while it serves, so callers need no async code.
///
/// # Example
/// ```no_run
/// # fn main() -> std::io::Result<()> {
/// # let clips: Vec<bvhkit_render::Clip> = Vec::new();
/// let server = bvhkit_serve::Server::bind(bvhkit_serve::default_addr(8123), &clips)?;
/// println!("open {}", server.url()?);
/// server.run() // blocks until the process ends
/// # }
/// ```
#[derive(Debug)]
pub struct Server {
    runtime: tokio::runtime::Runtime,
    listener: std::net::TcpListener,
    local_addr: SocketAddr,
    clips_json: Bytes,
    live: LiveFeed,
    limits: Limits,
    stop_tx: watch::Sender<bool>,
}

/// Stops a running [`Server`] from another thread; see [`Server::shutdown_handle`].
#[derive(Clone, Debug)]
pub struct ShutdownHandle {
    stop: watch::Sender<bool>,
}

impl ShutdownHandle {
    /// Asks the server to stop: [`Server::run`] returns soon after, closing every
    /// connection (live streams included). Calling it before `run` makes `run`
    /// return at once.
    pub fn shutdown(&self) {
        self.stop.send_replace(true);
    }
}

impl Server {
    /// Binds a listener on `addr` (port 0 picks a free port) serving `clips`.
    ///
    /// The clips are encoded once, here.
    ///
    /// # Errors
    /// When the address cannot be resolved or bound (a port in use gives
    /// [`io::ErrorKind::AddrInUse`]; see [`free_port_near`]), or the runtime
    /// cannot start.
    pub fn bind<A: ToSocketAddrs>(addr: A, clips: &[Clip]) -> io::Result<Server> {
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let local_addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        Ok(Server {
            runtime,
            listener,
            local_addr,
            clips_json: Bytes::from(clips_json(clips)),
            live: LiveFeed::new(),
            limits: Limits::default(),
            stop_tx: watch::Sender::new(false),
        })
    }

    /// Replaces the default [`Limits`].
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Server {
        self.limits = limits;
        self
    }

    /// The address the server listens on (with the real port when bound to port 0).
    ///
    /// # Errors
    /// Never in practice; kept fallible like [`std::net::TcpListener::local_addr`].
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local_addr)
    }

    /// The URL to open in a browser, e.g. `http://127.0.0.1:8123/`.
    ///
    /// An unspecified bind address (`0.0.0.0`, `::`) is shown as loopback.
    ///
    /// # Errors
    /// Never in practice; kept fallible like [`Server::local_addr`].
    pub fn url(&self) -> io::Result<String> {
        let addr = connect_addr(self.local_addr);
        Ok(format!("http://{addr}/"))
    }

    /// A handle that stops [`Server::run`] from another thread.
    #[must_use]
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle { stop: self.stop_tx.clone() }
    }

    /// The live feed this server streams at `/live/events` (shown by the page at
    /// `/?live=1`). Clone it into the thread that produces frames.
    #[must_use]
    pub fn live_feed(&self) -> LiveFeed {
        self.live.clone()
    }

    /// Serves requests, blocking until a [`ShutdownHandle`] stops it
    /// (for `bvh serve`, until the process ends).
    ///
    /// # Errors
    /// Never for a failed connection, which only ends that connection;
    /// only when the listener cannot be handed to the runtime.
    pub fn run(self) -> io::Result<()> {
        let Server { runtime, listener, local_addr, clips_json, live, limits, stop_tx } = self;
        let streams = Arc::new(Semaphore::new(limits.max_event_streams));
        let app = router(clips_json, live, local_addr.ip().is_loopback(), streams);
        let result = runtime.block_on(async move {
            let listener = TcpListener::from_std(listener)?;
            accept_loop(listener, app, limits, stop_tx.subscribe()).await;
            Ok(())
        });
        runtime.shutdown_timeout(Duration::from_secs(1));
        result
    }
}

/// Where to connect to reach a listener bound on `addr`.
fn connect_addr(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), addr.port())
        }
        _ => addr,
    }
}

/// A connection that has not sent a whole request head yet: closed (its
/// `close` dropped) when the server is full and a newcomer needs its place.
struct Silent {
    close: tokio::sync::oneshot::Sender<()>,
    spoke: Arc<AtomicBool>,
    since: tokio::time::Instant,
}

impl Silent {
    /// Whether it is still open and has sent no request head.
    fn silent(&self) -> bool {
        !self.close.is_closed() && !self.spoke.load(Ordering::Relaxed)
    }
}

/// How long a connection may stay silent before it can lose its place to a
/// newcomer: far more than a client takes to send its request after
/// connecting, far less than [`HEADER_TIMEOUT`].
const SILENT_GRACE: Duration = Duration::from_secs(1);

async fn accept_loop(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) {
    let cap = limits.max_connections.max(1);
    let permits = Arc::new(Semaphore::new(cap));
    let refusals = Arc::new(Semaphore::new(MAX_REFUSALS));
    // Connections in order of arrival that may still be silent.
    let mut silent: VecDeque<Silent> = VecDeque::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(MAX_REQUEST_HEAD);
    let http = Arc::new(http);
    loop {
        if *stop.borrow_and_update() {
            return;
        }
        let accepted = tokio::select! {
            _ = stop.changed() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _peer)) = accepted else {
            // Per-connection failures (reset before accept, out of file
            // descriptors) are transient; back off briefly rather than spin.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let mut permit = Arc::clone(&permits).try_acquire_owned().ok();
        if permit.is_none() {
            // Full: close the oldest silent connection and take its place.
            // (Arrival order: when the oldest is too young, all are.)
            while let Some(oldest) = silent.front() {
                if !oldest.silent() {
                    silent.pop_front();
                    continue;
                }
                if oldest.since.elapsed() < SILENT_GRACE {
                    break;
                }
                silent.pop_front();
                let freed = Arc::clone(&permits).acquire_owned();
                permit = tokio::time::timeout(Duration::from_secs(1), freed)
                    .await
                    .ok()
                    .and_then(Result::ok);
                break;
            }
        }
        let Some(permit) = permit else {
            if let Ok(permit) = Arc::clone(&refusals).try_acquire_owned() {
                tokio::spawn(async move {
                    let _permit = permit;
                    refuse(stream).await;
                });
            }
            // else: dropped, which closes it.
            continue;
        };
        let (close, closed) = tokio::sync::oneshot::channel::<()>();
        let spoke = Arc::new(AtomicBool::new(false));
        if silent.len() >= 2 * cap {
            silent.retain(Silent::silent);
        }
        let since = tokio::time::Instant::now();
        silent.push_back(Silent { close, spoke: Arc::clone(&spoke), since });
        let io = TokioIo::new(WriteTimeout::new(stream, limits.write_timeout));
        let router = TowerToHyperService::new(app.clone());
        // The router, noting the connection's first whole request head.
        let service = hyper::service::service_fn(move |request| {
            spoke.store(true, Ordering::Relaxed);
            hyper::service::Service::call(&router, request)
        });
        let http = Arc::clone(&http);
        let mut stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let conn = http.serve_connection(io, service);
            tokio::select! {
                _ = conn => {}
                _ = stop.wait_for(|s| *s) => {}
                _ = closed => {}
            }
        });
    }
}

/// Answers `503` to a connection beyond the cap, then closes it gently: the
/// write side first, then whatever the client still sends is read (briefly),
/// so that unread request bytes do not turn the close into a reset before the
/// client has read the answer.
async fn refuse(mut stream: TcpStream) {
    let answer = async {
        stream.write_all(BUSY).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        for _ in 0..64 {
            if tokio::io::AsyncReadExt::read(&mut stream, &mut sink).await? == 0 {
                break;
            }
        }
        io::Result::Ok(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), answer).await;
}

#[derive(Clone)]
struct AppState {
    clips_json: Bytes,
    live: LiveFeed,
    loopback_only: bool,
    /// Places for `/live/events` streams ([`Limits::max_event_streams`]).
    streams: Arc<Semaphore>,
}

fn router(
    clips_json: Bytes,
    live: LiveFeed,
    loopback_only: bool,
    streams: Arc<Semaphore>,
) -> Router {
    let state = AppState { clips_json, live, loopback_only, streams };
    Router::new()
        .route("/", get(page_handler))
        .route("/index.html", get(page_handler))
        .route("/clips.json", get(clips_handler))
        .route("/live/events", get(live_handler))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "not found") })
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

async fn page_handler() -> Response {
    let mut response =
        ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page()).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_CSP));
    response
}

async fn clips_handler(State(state): State<AppState>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], state.clips_json).into_response()
}

async fn live_handler(State(state): State<AppState>) -> Response {
    let Ok(place) = Arc::clone(&state.streams).try_acquire_owned() else {
        let mut busy = error(StatusCode::SERVICE_UNAVAILABLE, "too many live streams open");
        busy.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return busy;
    };
    // The stream holds its place until the page goes.
    let events = futures_util::StreamExt::map(state.live.event_stream(), move |event| {
        let _ = &place;
        event
    });
    let mut response = Response::new(Body::from_stream(events));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

fn error(status: StatusCode, message: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], message).into_response()
}

/// Runs before every route: the `Host` check, the body limit, and the headers
/// every response carries.
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let mut response = if state.loopback_only && !names_this_machine(&request) {
        error(StatusCode::FORBIDDEN, "forbidden host")
    } else if body_too_large(&request) {
        error(StatusCode::PAYLOAD_TOO_LARGE, "request body too large")
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

fn body_too_large(request: &Request) -> bool {
    let declared = request.headers().get(header::CONTENT_LENGTH);
    declared.is_some_and(|v| {
        v.to_str().ok().and_then(|v| v.parse::<u64>().ok()).is_none_or(|n| n > MAX_REQUEST_BODY)
    })
}

/// Whether the request's host (absolute target, else `Host` header, if any)
/// names this machine.
fn names_this_machine(request: &Request) -> bool {
    if let Some(authority) = request.uri().authority() {
        return is_loopback_host(authority.as_str());
    }
    request
        .headers()
        .get_all(header::HOST)
        .iter()
        .all(|host| host.to_str().is_ok_and(|h| is_loopback_host(h.trim())))
}

/// Whether a `Host` header value (or an absolute target's authority) names
/// this machine: a loopback address or `localhost`, with at most a port of
/// digits after it. Anything else is refused, user information included
/// (`127.0.0.1:8123@evil.com` names `evil.com`), and a port that is not a
/// number (`localhost:abc`).
fn is_loopback_host(host: &str) -> bool {
    if host.contains('@') {
        return false;
    }
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, "")) => (ip, None),
            Some((ip, port)) => match port.strip_prefix(':') {
                Some(port) => (ip, Some(port)),
                None => return false,
            },
            None => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    if port.is_some_and(|p| p.parse::<u16>().is_err() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let name = name.to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A stream whose writes fail with [`io::ErrorKind::TimedOut`] when the peer
/// takes none of the bytes for `limit` (a client that requests and never reads).
struct WriteTimeout {
    inner: TcpStream,
    limit: Duration,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl WriteTimeout {
    fn new(inner: TcpStream, limit: Duration) -> WriteTimeout {
        WriteTimeout { inner, limit, timer: None }
    }

    /// Arms (or checks) the timer after a write that made no progress.
    fn stalled<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let limit = self.limit;
        let timer = self.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::ErrorKind::TimedOut.into())),
            Poll::Pending => Poll::Pending,
        }
    }

    fn track<T>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        match poll {
            Poll::Pending => self.stalled(cx),
            ready => {
                self.timer = None;
                ready
            }
        }
    }
}

impl AsyncRead for WriteTimeout {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteTimeout {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.track(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.track(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        self.track(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.track(cx, poll)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for host in
            ["localhost", "LOCALHOST:1", "127.0.0.1", "127.0.0.1:8123", "[::1]:9", "a.localhost"]
        {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in ["example.com", "10.0.0.1:80", "[::2]", "localhost.evil.com", "[::1"] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn a_free_port_is_found_next_to_a_busy_one() {
        let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = busy.local_addr().unwrap().port();
        let free = free_port_near(Ipv4Addr::LOCALHOST.into(), port).unwrap();
        assert_ne!(free, port);
        std::net::TcpListener::bind(("127.0.0.1", free)).expect("the suggested port is free");
    }
}
