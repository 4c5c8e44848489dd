//! Helpers shared by the integration tests: a synthetic clip and a running server.

#![allow(dead_code, unreachable_pub)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

use bvhkit_render::glam::DVec3;
use bvhkit_serve::{Clip, Limits, LiveFeed, Server, ShutdownHandle};

/// Joint names, parents and rest positions (centimetres, Y up) of a stick figure.
const FIGURE: &[(&str, Option<usize>, [f64; 3])] = &[
    ("Hips", None, [0.0, 95.0, 0.0]),
    ("Chest", Some(0), [0.0, 130.0, 0.0]),
    ("Head", Some(1), [0.0, 150.0, 0.0]),
    ("Head_End", Some(2), [0.0, 172.0, 0.0]),
    ("LeftArm", Some(1), [18.0, 140.0, 0.0]),
    ("LeftHand", Some(4), [20.0, 110.0, 0.0]),
    ("LeftHand_End", Some(5), [21.0, 95.0, 0.0]),
    ("RightArm", Some(1), [-18.0, 140.0, 0.0]),
    ("RightHand", Some(7), [-20.0, 110.0, 0.0]),
    ("RightHand_End", Some(8), [-21.0, 95.0, 0.0]),
    ("LeftLeg", Some(0), [10.0, 90.0, 0.0]),
    ("LeftFoot", Some(10), [11.0, 8.0, 0.0]),
    ("LeftFoot_End", Some(11), [11.0, 0.0, 15.0]),
    ("RightLeg", Some(0), [-10.0, 90.0, 0.0]),
    ("RightFoot", Some(13), [-11.0, 8.0, 0.0]),
    ("RightFoot_End", Some(14), [-11.0, 0.0, 15.0]),
];

/// A walking-ish stick figure in centimetres: the root moves 2 cm per frame
/// along +Z and the hands swing, so every frame is a different pose.
pub fn stick_clip(name: &str, n_frames: usize) -> Clip {
    let mut positions = Vec::with_capacity(n_frames * FIGURE.len());
    for f in 0..n_frames {
        let phase = f as f64 * 0.3;
        for (joint_name, _, rest) in FIGURE {
            let mut p = DVec3::from_array(*rest) + DVec3::new(0.0, 0.0, 2.0 * f as f64);
            if joint_name.contains("Hand") {
                let side = if joint_name.starts_with("Left") { 1.0 } else { -1.0 };
                p.z += side * 25.0 * phase.sin();
            }
            positions.push(p);
        }
    }
    Clip {
        name: name.to_string(),
        joint_names: FIGURE.iter().map(|j| j.0.to_string()).collect(),
        parents: FIGURE.iter().map(|j| j.1).collect(),
        is_end_site: FIGURE.iter().map(|j| j.0.ends_with("_End")).collect(),
        frame_time: 1.0 / 30.0,
        n_frames,
        positions,
    }
}

/// A server on a free loopback port, stopped when dropped.
pub struct Running {
    pub addr: SocketAddr,
    pub feed: LiveFeed,
    stop: ShutdownHandle,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl Running {
    pub fn start(clips: &[Clip]) -> Running {
        Running::start_with(clips, Limits::default())
    }

    pub fn start_with(clips: &[Clip], limits: Limits) -> Running {
        let server = Server::bind("127.0.0.1:0", clips).expect("bind").with_limits(limits);
        let addr = server.local_addr().expect("local addr");
        let stop = server.shutdown_handle();
        let feed = server.live_feed();
        let thread = Some(std::thread::spawn(move || server.run()));
        Running { addr, feed, stop, thread }
    }

    pub fn url(&self, path_and_query: &str) -> String {
        format!("http://{}{}", self.addr, path_and_query)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.shutdown();
        if let Some(thread) = self.thread.take() {
            thread.join().expect("server thread panicked").expect("server failed");
        }
    }
}

/// A parsed HTTP response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Sends raw bytes and reads the whole response; `None` when the server closed
/// the connection without answering.
pub fn raw_request(addr: SocketAddr, request: &[u8]) -> Option<Reply> {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // The server may answer and close before reading everything we send.
    let _ = stream.write_all(request);
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    parse_reply(&bytes)
}

/// Sends raw bytes and reads until the server closes; any I/O error (a reset
/// above all) is returned as it is.
pub fn try_request(addr: SocketAddr, request: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.write_all(request)?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes)?;
    Ok(bytes)
}

pub fn parse(bytes: &[u8]) -> Option<Reply> {
    parse_reply(bytes)
}

pub fn get(addr: SocketAddr, path: &str) -> Reply {
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    raw_request(addr, request.as_bytes()).expect("a response")
}

fn parse_reply(bytes: &[u8]) -> Option<Reply> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&bytes[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    let status = status_line.split(' ').nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    Some(Reply { status, headers, body: bytes[end + 4..].to_vec() })
}
