//! A deliberately small HTTP/1.1 server on `std::net`.
//!
//! One request per connection (`Connection: close`), one thread per connection,
//! at most [`MAX_CONNECTIONS`] at once.

use std::io::{self, Read, Write};
use std::net::{
    IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use bvhkit_render::Clip;

use crate::{clips_json, page};

/// Port used by `bvh serve` when none is given.
pub const DEFAULT_PORT: u16 = 8123;

/// Largest request head (request line plus headers) accepted, in bytes.
/// Bigger requests get `431 Request Header Fields Too Large`.
pub const MAX_REQUEST_HEAD: usize = 8 * 1024;

/// Most connections served at once; more get `503 Service Unavailable`.
pub const MAX_CONNECTIONS: usize = 16;

/// Longest wait for the next bytes of a request before `408 Request Timeout`.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Longest time a client may take to send its whole request head.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(10);

/// Longest wait for the client to take the next bytes of a response.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

const PAGE_CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; \
    style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// The loopback address `127.0.0.1:port`, the default for `bvh serve`.
#[must_use]
pub fn default_addr(port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
}

/// A bound, not yet running, player server.
///
/// Routes: `GET /` (and `/index.html`) serves [`page`], `GET /clips.json` serves
/// [`clips_json`] of the clips given to [`Server::bind`]; `HEAD` is accepted
/// wherever `GET` is.
/// Other paths get `404`, other methods `405`, malformed requests `400`.
///
/// When bound to a loopback address, requests whose `Host` header names another
/// host get `403`, so a web page cannot read the clips through DNS rebinding.
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
    listener: TcpListener,
    local_addr: SocketAddr,
    clips_json: Arc<[u8]>,
    stop: Arc<AtomicBool>,
}

/// Stops a running [`Server`] from another thread; see [`Server::shutdown_handle`].
#[derive(Clone, Debug)]
pub struct ShutdownHandle {
    stop: Arc<AtomicBool>,
    wake_addr: SocketAddr,
}

impl ShutdownHandle {
    /// Asks the server to stop: [`Server::run`] returns once it has noticed.
    ///
    /// Connections already being served finish on their own threads.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept; failure means the listener is already gone.
        let _ = TcpStream::connect_timeout(&self.wake_addr, Duration::from_secs(1));
    }
}

impl Server {
    /// Binds a listener on `addr` (port 0 picks a free port) serving `clips`.
    ///
    /// The clips are encoded once, here.
    ///
    /// # Errors
    /// When the address cannot be resolved or bound.
    pub fn bind<A: ToSocketAddrs>(addr: A, clips: &[Clip]) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        let local_addr = listener.local_addr()?;
        Ok(Server {
            listener,
            local_addr,
            clips_json: Arc::from(clips_json(clips).into_bytes()),
            stop: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The address the server listens on (with the real port when bound to port 0).
    ///
    /// # Errors
    /// Never in practice; kept fallible like [`TcpListener::local_addr`].
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
        let addr = wake_addr(self.local_addr);
        Ok(format!("http://{addr}/"))
    }

    /// A handle that stops [`Server::run`] from another thread.
    #[must_use]
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle { stop: Arc::clone(&self.stop), wake_addr: wake_addr(self.local_addr) }
    }

    /// Serves requests, blocking until a [`ShutdownHandle`] stops it
    /// (for `bvh serve`, until the process ends).
    ///
    /// # Errors
    /// Never for a failed connection, which only ends that connection;
    /// only when the listener itself fails.
    pub fn run(self) -> io::Result<()> {
        let active = Arc::new(AtomicUsize::new(0));
        let loopback_only = self.local_addr.ip().is_loopback();
        for stream in self.listener.incoming() {
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            let Ok(stream) = stream else {
                // Per-connection failures (reset before accept, out of fds) are
                // transient; back off briefly rather than spin.
                thread::sleep(Duration::from_millis(10));
                continue;
            };
            if active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                active.fetch_sub(1, Ordering::SeqCst);
                let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
                let _ = write_response(&stream, &Response::error(503, "server busy"), false);
                continue;
            }
            let guard = ActiveGuard(Arc::clone(&active));
            let clips_json = Arc::clone(&self.clips_json);
            let spawned =
                thread::Builder::new().name("bvhkit-serve-conn".into()).spawn(move || {
                    let _guard = guard;
                    handle_connection(stream, &clips_json, loopback_only);
                });
            if spawned.is_err() {
                // The guard went with the failed closure and was dropped there.
                thread::sleep(Duration::from_millis(10));
            }
        }
        Ok(())
    }
}

/// Where to connect to reach a listener bound on `addr`.
fn wake_addr(addr: SocketAddr) -> SocketAddr {
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

struct ActiveGuard(Arc<AtomicUsize>);

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Response {
    status: u16,
    content_type: &'static str,
    body: Body,
    allow: bool,
}

enum Body {
    Static(&'static [u8]),
    Shared(Arc<[u8]>),
}

impl Body {
    fn bytes(&self) -> &[u8] {
        match self {
            Body::Static(b) => b,
            Body::Shared(b) => b,
        }
    }
}

impl Response {
    fn error(status: u16, message: &'static str) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: Body::Static(message.as_bytes()),
            allow: status == 405,
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

fn handle_connection(stream: TcpStream, clips_json: &Arc<[u8]>, loopback_only: bool) {
    let _ = stream.set_nodelay(true);
    if stream.set_write_timeout(Some(WRITE_TIMEOUT)).is_err() {
        return;
    }
    let (response, head) = match read_head(&stream) {
        Ok(head) => match parse_request(&head, loopback_only) {
            Ok(request) => (route(&request, clips_json), request.method == "HEAD"),
            Err(response) => (response, false),
        },
        Err(ReadError::TooLarge) => (Response::error(431, "request head too large"), false),
        Err(ReadError::TimedOut) => (Response::error(408, "request timeout"), false),
        Err(ReadError::Closed) => return,
    };
    if write_response(&stream, &response, head).is_ok() {
        linger(&stream);
    }
}

/// Half-closes and drains what the client still sends (briefly), so closing the
/// socket with unread bytes does not reset the connection before the client has
/// read the response.
fn linger(mut stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut sink = [0u8; 4096];
    for _ in 0..16 {
        match stream.read(&mut sink) {
            Ok(n) if n > 0 => {}
            _ => break,
        }
    }
}

enum ReadError {
    TooLarge,
    TimedOut,
    Closed,
}

/// Reads up to the blank line that ends the request head.
fn read_head(mut stream: &TcpStream) -> Result<Vec<u8>, ReadError> {
    let deadline = Instant::now() + REQUEST_DEADLINE;
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ReadError::TimedOut);
        }
        if stream.set_read_timeout(Some(left.min(READ_TIMEOUT))).is_err() {
            return Err(ReadError::Closed);
        }
        let n = match stream.read(&mut chunk) {
            Ok(0) => return Err(ReadError::Closed),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                return Err(ReadError::TimedOut);
            }
            Err(_) => return Err(ReadError::Closed),
        };
        // Search only where the terminator can newly appear.
        let from = head.len().saturating_sub(3);
        head.extend_from_slice(&chunk[..n]);
        if let Some(end) = find_head_end(&head[from..]) {
            head.truncate(from + end);
            if head.len() > MAX_REQUEST_HEAD {
                return Err(ReadError::TooLarge);
            }
            return Ok(head);
        }
        if head.len() > MAX_REQUEST_HEAD {
            return Err(ReadError::TooLarge);
        }
    }
}

/// Index just past `\r\n\r\n` (or a bare `\n\n`), if present.
fn find_head_end(bytes: &[u8]) -> Option<usize> {
    (0..bytes.len()).find_map(|i| {
        if bytes[i..].starts_with(b"\r\n\r\n") {
            Some(i + 4)
        } else if bytes[i..].starts_with(b"\n\n") {
            Some(i + 2)
        } else {
            None
        }
    })
}

#[derive(Debug)]
struct Request<'a> {
    method: &'a str,
    path: &'a str,
}

fn parse_request(head: &[u8], loopback_only: bool) -> Result<Request<'_>, Response> {
    let bad = || Response::error(400, "bad request");
    let text = std::str::from_utf8(head).map_err(|_| bad())?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let request_line = lines.next().ok_or_else(bad)?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(bad());
    }
    if !matches!(version, "HTTP/1.0" | "HTTP/1.1") || !target.starts_with('/') {
        return Err(bad());
    }
    let mut host = None;
    for line in lines.take_while(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or_else(bad)?;
        if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(bad());
        }
        if name.eq_ignore_ascii_case("host") {
            host = Some(value.trim());
        }
    }
    if loopback_only && !host.is_none_or(is_loopback_host) {
        return Err(Response::error(403, "forbidden host"));
    }
    let path = target.split(['?', '#']).next().unwrap_or(target);
    Ok(Request { method, path })
}

/// Whether a `Host` header value names this machine.
fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, _port)) => ip,
            None => return false,
        }
    } else {
        host.rsplit_once(':').map_or(host, |(name, _port)| name)
    };
    let name = name.to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn route(request: &Request<'_>, clips_json: &Arc<[u8]>) -> Response {
    if !matches!(request.method, "GET" | "HEAD") {
        return Response::error(405, "method not allowed");
    }
    match request.path {
        "/" | "/index.html" => Response {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: Body::Static(page().as_bytes()),
            allow: false,
        },
        "/clips.json" => Response {
            status: 200,
            content_type: "application/json",
            body: Body::Shared(Arc::clone(clips_json)),
            allow: false,
        },
        _ => Response::error(404, "not found"),
    }
}

fn write_response(mut stream: &TcpStream, response: &Response, head_only: bool) -> io::Result<()> {
    let body = response.body.bytes();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        body.len(),
    );
    if response.content_type.starts_with("text/html") {
        head.push_str("Content-Security-Policy: ");
        head.push_str(PAGE_CSP);
        head.push_str("\r\n");
    }
    if response.allow {
        head.push_str("Allow: GET, HEAD\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(body)?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(head: &str) -> Result<(String, String), u16> {
        parse_request(head.as_bytes(), true)
            .map(|r| (r.method.to_string(), r.path.to_string()))
            .map_err(|r| r.status)
    }

    #[test]
    fn parses_request_lines() {
        assert_eq!(
            parse("GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n"),
            Ok(("GET".into(), "/".into()))
        );
        assert_eq!(
            parse("GET /clips.json?x=1 HTTP/1.0\n\n"),
            Ok(("GET".into(), "/clips.json".into()))
        );
        assert_eq!(
            parse("POST /a HTTP/1.1\r\nHost: localhost\r\n\r\n"),
            Ok(("POST".into(), "/a".into()))
        );
        assert_eq!(
            parse("GET / HTTP/1.1\r\nHost: [::1]:8123\r\n\r\n").map(|r| r.1),
            Ok("/".into())
        );
        assert_eq!(parse("GET / HTTP/2.0\r\n\r\n"), Err(400));
        assert_eq!(parse("get / HTTP/1.1\r\n\r\n"), Err(400));
        assert_eq!(parse("GET  / HTTP/1.1\r\n\r\n"), Err(400));
        assert_eq!(parse("GET http://x/ HTTP/1.1\r\n\r\n"), Err(400));
        assert_eq!(parse("GET / HTTP/1.1\r\nno colon\r\n\r\n"), Err(400));
        assert_eq!(parse("GET / HTTP/1.1\r\nHost: evil.example:8123\r\n\r\n"), Err(403));
        assert_eq!(parse("\u{0}\u{1}garbage"), Err(400));
    }

    #[test]
    fn finds_head_end() {
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\n\r\nbody"), Some(18));
        assert_eq!(find_head_end(b"GET / HTTP/1.1\n\n"), Some(16));
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\n"), None);
    }

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
}
