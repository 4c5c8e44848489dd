//! The HTTP server, driven over raw TCP.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bvhkit_serve::{Limits, MAX_REQUEST_HEAD};
use common::{Running, get, parse, raw_request, stick_clip, try_request};

#[test]
fn serves_the_page_as_html() {
    let server = Running::start(&[stick_clip("walk", 10)]);
    for path in ["/", "/index.html", "/?debug=1&frame=3"] {
        let reply = get(server.addr, path);
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.header("Content-Type"), Some("text/html; charset=utf-8"));
        assert_eq!(reply.body, bvhkit_serve::page().as_bytes());
        let len: usize = reply.header("Content-Length").unwrap().parse().unwrap();
        assert_eq!(len, reply.body.len());
        assert!(reply.header("Content-Security-Policy").unwrap().contains("default-src 'none'"));
    }
}

#[test]
fn page_is_self_contained() {
    let page = bvhkit_serve::page();
    assert!(page.starts_with("<!DOCTYPE html>"));
    for external in ["http://", "https://", "//cdn", "<link", "src=\"", "@import"] {
        assert!(!page.contains(external), "page refers to an external resource: {external}");
    }
}

#[test]
fn serves_clips_json_with_the_right_shapes() {
    let clips = [stick_clip("walk", 12), stick_clip("run \"fast\"", 5)];
    let server = Running::start(&clips);
    let reply = get(server.addr, "/clips.json");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("Content-Type"), Some("application/json"));
    let json: serde_json::Value = serde_json::from_slice(&reply.body).expect("valid JSON");
    assert_eq!(json["version"], 1);
    let got = json["clips"].as_array().unwrap();
    assert_eq!(got.len(), 2);
    for (clip, got) in clips.iter().zip(got) {
        assert_eq!(got["name"], clip.name.as_str());
        assert_eq!(got["n_frames"], clip.n_frames);
        assert_eq!(got["n_joints"], clip.n_joints());
        assert_eq!(got["joint_names"].as_array().unwrap().len(), clip.n_joints());
        assert_eq!(got["joint_names"][3], "Head_End");
        assert_eq!(got["parents"][0], serde_json::Value::Null);
        assert_eq!(got["parents"][5], 4);
        assert_eq!(got["is_end_site"][3], true);
        assert_eq!(got["is_end_site"][2], false);
        assert!((got["frame_time"].as_f64().unwrap() - 1.0 / 30.0).abs() < 1e-6);
        // The server's unit guess, which the page uses as it is.
        let guess = bvhkit_render::units::of_clip(clip);
        assert_eq!(got["units"]["symbol"], "cm");
        assert_eq!(got["units"]["label"], guess.label().as_str());
        assert_eq!(got["units"]["metres_per_unit"], 0.01);
        assert!((got["units"]["size"].as_f64().unwrap() - guess.size).abs() < 1e-3);
        let positions = got["positions"].as_array().unwrap();
        assert_eq!(positions.len(), clip.n_frames * clip.n_joints() * 3);
        for (i, p) in clip.positions.iter().enumerate() {
            for (axis, want) in p.to_array().into_iter().enumerate() {
                let have = positions[i * 3 + axis].as_f64().unwrap();
                assert!((have - want).abs() <= 1e-5 * want.abs().max(1.0), "{have} vs {want}");
            }
        }
    }
}

#[test]
fn non_finite_positions_stay_valid_json() {
    let mut clip = stick_clip("broken", 2);
    clip.positions[0].x = f64::NAN;
    clip.positions[1].y = f64::INFINITY;
    clip.frame_time = f64::NAN;
    clip.n_frames = 99; // more than the positions hold
    let json: serde_json::Value = serde_json::from_str(&bvhkit_serve::clips_json(&[clip])).unwrap();
    let clip = &json["clips"][0];
    assert_eq!(clip["positions"][0], serde_json::Value::Null);
    assert_eq!(clip["positions"][4], serde_json::Value::Null);
    assert_eq!(clip["frame_time"], serde_json::Value::Null);
    assert_eq!(clip["n_frames"], 2);
    assert_eq!(clip["positions"].as_array().unwrap().len(), 2 * 16 * 3);
}

#[test]
fn unknown_paths_are_404() {
    let server = Running::start(&[]);
    for path in ["/nope", "/clips.json/", "/../Cargo.toml", "/favicon.ico"] {
        assert_eq!(get(server.addr, path).status, 404, "{path}");
    }
    assert_eq!(get(server.addr, "/clips.json").body, br#"{"version":1,"clips":[]}"#);
}

#[test]
fn other_methods_are_405() {
    let server = Running::start(&[stick_clip("walk", 2)]);
    for method in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"] {
        let request = format!(
            "{method} / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
        );
        let reply = raw_request(server.addr, request.as_bytes()).expect("a response");
        assert_eq!(reply.status, 405, "{method}");
        let mut allow: Vec<&str> =
            reply.header("Allow").unwrap().split(',').map(str::trim).collect();
        allow.sort_unstable();
        assert_eq!(allow, ["GET", "HEAD"], "{method}");
    }
}

#[test]
fn head_has_headers_only() {
    let server = Running::start(&[stick_clip("walk", 2)]);
    let reply = raw_request(
        server.addr,
        b"HEAD /clips.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    assert_eq!(reply.status, 200);
    assert!(reply.body.is_empty());
    let len: usize = reply.header("Content-Length").unwrap().parse().unwrap();
    assert_eq!(len, get(server.addr, "/clips.json").body.len());
}

#[test]
fn hostile_requests_get_errors_and_the_server_survives() {
    let server = Running::start(&[stick_clip("walk", 2)]);

    // Garbage, binary junk and wrong protocol versions.
    for junk in [
        &b"hello\r\n\r\n"[..],
        b"\x00\x01\x02\xff\xfe\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET /\r\n\r\n",
    ] {
        let reply = raw_request(server.addr, junk);
        assert_eq!(reply.map(|r| r.status), Some(400), "{junk:?}");
    }

    // A request head bigger than the limit.
    let mut huge = b"GET / HTTP/1.1\r\nX-Pad: ".to_vec();
    huge.resize(MAX_REQUEST_HEAD * 4, b'a');
    huge.extend_from_slice(b"\r\n\r\n");
    // Closing the connection without a response would also be acceptable.
    if let Some(reply) = raw_request(server.addr, &huge) {
        assert_eq!(reply.status, 431);
    }

    // A foreign Host (DNS rebinding) is refused on a loopback server.
    let reply = raw_request(
        server.addr,
        b"GET /clips.json HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    assert_eq!(reply.status, 403);

    // A client that connects and sends nothing, and one that stops mid-request,
    // do not stop others from being served.
    let idle = TcpStream::connect(server.addr).unwrap();
    let mut partial = TcpStream::connect(server.addr).unwrap();
    partial.write_all(b"GET / HTTP/1.1\r\nHost: local").unwrap();
    let reply = get(server.addr, "/");
    assert_eq!(reply.status, 200);

    // A client that hangs up at once.
    drop(TcpStream::connect(server.addr).unwrap());
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(get(server.addr, "/clips.json").status, 200);
    drop((idle, partial));
}

#[test]
fn slow_clients_are_cut_off() {
    let limits = Limits { header_timeout: Duration::from_secs(1), ..Limits::default() };
    let server = Running::start_with(&[], limits);
    let started = Instant::now();
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream.write_all(b"GET / HT").unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut response = Vec::new();
    // The server closes the connection without an answer (hyper sends no 408).
    let read = stream.read_to_end(&mut response);
    assert!(read.is_ok(), "{read:?}");
    assert!(response.is_empty(), "{:?}", String::from_utf8_lossy(&response));
    assert!(started.elapsed() < Duration::from_secs(10), "cut off after {:?}", started.elapsed());

    // The same deadline holds for an idle keep-alive connection after a response.
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(b"GET /clips.json HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    let reply = parse(&bytes).expect("a response before the close");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, br#"{"version":1,"clips":[]}"#);
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let server = Running::start(&[stick_clip("walk", 3)]);
    let json_len = get(server.addr, "/clips.json").body.len();
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    for (path, len) in [("/clips.json", json_len), ("/", bvhkit_serve::page().len())] {
        write!(stream, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let mut content_length = None;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                content_length = Some(v.trim().parse::<usize>().unwrap());
            }
        }
        assert_eq!(content_length, Some(len), "{path}");
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
    }
}

#[test]
fn large_bodies_and_foreign_absolute_targets_are_refused() {
    let server = Running::start(&[stick_clip("walk", 2)]);
    // Announced bodies over the limit get 413 before a byte of them is read.
    let request = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        100 * bvhkit_serve::MAX_REQUEST_BODY
    );
    assert_eq!(raw_request(server.addr, request.as_bytes()).unwrap().status, 413);
    let bad =
        b"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: lots\r\nConnection: close\r\n\r\n";
    assert_eq!(raw_request(server.addr, bad).unwrap().status, 400);
    // An absolute request target names the host too (DNS rebinding through a proxy).
    let foreign =
        b"GET http://evil.example/clips.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    assert_eq!(raw_request(server.addr, foreign).unwrap().status, 403);
    let local =
        b"GET http://localhost/clips.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    assert_eq!(raw_request(server.addr, local).unwrap().status, 200);
    // Common headers on every answer, errors included.
    for path in ["/", "/clips.json", "/nope"] {
        let reply = get(server.addr, path);
        assert_eq!(reply.header("Cache-Control"), Some("no-store"), "{path}");
        assert_eq!(reply.header("X-Content-Type-Options"), Some("nosniff"), "{path}");
    }
}

/// 50 slowloris connections (a partial request head, then silence) hold
/// connections open; other clients are still answered at once.
#[test]
fn slowloris_connections_do_not_starve_other_clients() {
    let clips = [stick_clip("walk", 5)];
    let server = Running::start(&clips); // default limits: 10 s head deadline
    let mut idle = Vec::new();
    for i in 0..50 {
        let mut stream = TcpStream::connect(server.addr).unwrap();
        write!(stream, "GET /clips.json HTTP/1.1\r\nHost: local{i}").unwrap();
        idle.push(stream);
    }
    let started = Instant::now();
    for _ in 0..10 {
        let reply = get(server.addr, "/clips.json");
        assert_eq!(reply.status, 200);
        assert_eq!(reply.body, bvhkit_serve::clips_json(&clips).as_bytes());
    }
    // Far below the head deadline: nobody waited for the idle connections.
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    // The idle connections are still open (not one was answered or closed).
    for stream in &mut idle {
        stream.set_nonblocking(true).unwrap();
        let mut byte = [0u8; 1];
        let err = stream.read(&mut byte).expect_err("an idle connection was answered or closed");
        assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
    }
}

fn concurrent_clients(server: &Running, n: usize) -> Vec<std::io::Result<Vec<u8>>> {
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(n));
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let addr = server.addr;
            let barrier = std::sync::Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                try_request(
                    addr,
                    b"GET /clips.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                )
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

/// 50 clients at once all get the whole answer; none is reset.
#[test]
fn fifty_concurrent_clients_each_get_a_full_response() {
    let clips = [stick_clip("walk", 300)];
    let want = bvhkit_serve::clips_json(&clips);
    let server = Running::start(&clips);
    for (i, result) in concurrent_clients(&server, 50).into_iter().enumerate() {
        let bytes = result.unwrap_or_else(|e| panic!("client {i}: {e}"));
        let reply = parse(&bytes).unwrap_or_else(|| panic!("client {i}: no response"));
        assert_eq!(reply.status, 200, "client {i}");
        assert_eq!(reply.body, want.as_bytes(), "client {i}");
    }
}

/// Beyond the connection cap clients get a 503, never a reset or silence.
#[test]
fn beyond_the_cap_clients_get_503_not_resets() {
    let clips = [stick_clip("walk", 300)];
    let want = bvhkit_serve::clips_json(&clips);
    let limits = Limits { max_connections: 4, max_event_streams: 4, ..Limits::default() };
    let server = Running::start_with(&clips, limits);

    // Open pages (event streams, each a request in progress) fill the cap:
    // the next client is refused with 503.
    let held: Vec<_> = (0..4).map(|_| open_events(&server)).collect();
    std::thread::sleep(Duration::from_millis(1200));
    let busy =
        raw_request(server.addr, b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .expect("a response");
    assert_eq!(busy.status, 503);
    assert_eq!(busy.header("Retry-After"), Some("1"));
    drop(held);

    // 50 at once against a cap of 4: every one a 200 or a 503, in full.
    let (mut ok, mut refused) = (0, 0);
    for (i, result) in concurrent_clients(&server, 50).into_iter().enumerate() {
        let bytes = result.unwrap_or_else(|e| panic!("client {i}: {e}"));
        let reply = parse(&bytes).unwrap_or_else(|| panic!("client {i}: no response"));
        match reply.status {
            200 => {
                assert_eq!(reply.body, want.as_bytes(), "client {i}");
                ok += 1;
            }
            503 => refused += 1,
            other => panic!("client {i}: {other}"),
        }
    }
    assert_eq!(ok + refused, 50);
    assert!(ok >= 1, "nobody was served");
    // Typically 8 served and 42 refused here; the split depends on timing.

    // Once the held connections are gone, the server answers again.
    let deadline = Instant::now() + Duration::from_secs(10);
    while get(server.addr, "/").status != 200 {
        assert!(Instant::now() < deadline, "server stayed busy");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A client that asks for a large answer and never reads it is cut off after
/// the write timeout, freeing its connection.
#[test]
fn clients_that_do_not_read_are_cut_off() {
    let clips = [stick_clip("big", 60_000)]; // about 25 MB of JSON, more than socket buffers hold
    let limits =
        Limits { max_connections: 1, write_timeout: Duration::from_secs(1), ..Limits::default() };
    let server = Running::start_with(&clips, limits);
    let mut stuck = TcpStream::connect(server.addr).unwrap();
    stuck.write_all(b"GET /clips.json HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // It holds the only connection for now ...
    assert_eq!(get(server.addr, "/nope").status, 503);
    // ... until the server gives up writing to it.
    let deadline = Instant::now() + Duration::from_secs(20);
    while get(server.addr, "/nope").status != 404 {
        assert!(Instant::now() < deadline, "the stuck client kept its connection");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(stuck);
}

#[test]
fn binds_loopback_by_default_and_shuts_down() {
    let addr = bvhkit_serve::default_addr(0);
    assert!(addr.ip().is_loopback());
    let server = bvhkit_serve::Server::bind(addr, &[]).unwrap();
    let url = server.url().unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let stop = server.shutdown_handle();
    let thread = std::thread::spawn(move || server.run());
    stop.shutdown();
    thread.join().unwrap().unwrap();
}

#[test]
fn a_busy_port_is_an_addr_in_use_error() {
    let first = bvhkit_serve::Server::bind("127.0.0.1:0", &[]).unwrap();
    let addr = first.local_addr().unwrap();
    let err = bvhkit_serve::Server::bind(addr, &[]).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    let free = bvhkit_serve::free_port_near(addr.ip(), addr.port()).unwrap();
    assert_ne!(free, addr.port());
    bvhkit_serve::Server::bind((addr.ip(), free), &[]).expect("the suggested port is free");
}

/// One server-sent event: its name and data (comments and `retry` skipped).
fn next_event(reader: &mut impl BufRead) -> Option<(String, String)> {
    let (mut name, mut data) = (String::from("message"), None::<String>);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            return None;
        }
        let line = line.trim_end_matches('\n');
        if line.is_empty() {
            if let Some(data) = data.take() {
                return Some((name, data));
            }
            name = "message".into();
            continue;
        }
        if let Some(v) = line.strip_prefix("event: ") {
            name = v.to_string();
        } else if let Some(v) = line.strip_prefix("data: ") {
            data = Some(v.to_string());
        } else {
            assert!(line.starts_with(':') || line.starts_with("retry: "), "{line:?}");
        }
    }
}

/// Opens the live event stream; HTTP/1.0 so the body is plain bytes until close.
fn open_events(server: &Running) -> BufReader<TcpStream> {
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(b"GET /live/events HTTP/1.0\r\nHost: localhost\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.0 200"), "{status}");
    let mut content_type = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-type:") {
            content_type = Some(v.trim().to_string());
        }
    }
    assert_eq!(content_type.as_deref(), Some("text/event-stream"));
    reader
}

fn unix_ms() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64()
        * 1000.0
}

/// Frames pushed from Rust reach an event-stream client whole and in order;
/// a client that connects late gets the skeleton and the latest frame.
#[test]
fn live_frames_reach_an_event_stream_client_in_order() {
    use bvhkit_serve::LiveError;
    let server = Running::start(&[]);
    let feed = server.feed.clone();
    let walk = stick_clip("walk", 100);
    let n_joints = walk.n_joints();
    assert_eq!(feed.push(0.0, &walk.positions[..n_joints]), Err(LiveError::NoSkeleton));
    let mut rest = walk.clone();
    rest.n_frames = 1;
    rest.positions.truncate(n_joints);
    rest.name = "suit".into();
    feed.set_skeleton(&rest);

    let mut events = open_events(&server);
    let (name, data) = next_event(&mut events).unwrap();
    assert_eq!(name, "skeleton");
    let skeleton: serde_json::Value = serde_json::from_str(&data).unwrap();
    assert_eq!(skeleton["name"], "suit");
    assert_eq!(skeleton["n_joints"], n_joints);
    assert_eq!(skeleton["joint_names"][3], "Head_End");
    assert_eq!(skeleton["units"]["symbol"], "cm");
    assert_eq!(feed.subscribers(), 1);

    let mut windows = Vec::new();
    for f in 0..100 {
        let frame = &walk.positions[f * n_joints..(f + 1) * n_joints];
        let before = unix_ms();
        assert_eq!(feed.push(f as f64 / 30.0, frame), Ok(f as u64 + 1));
        windows.push((before, unix_ms()));
    }
    assert_eq!(
        feed.push(9.0, &walk.positions[..3]),
        Err(LiveError::JointCount { expected: n_joints, found: 3 })
    );
    for (f, &(before, after)) in windows.iter().enumerate() {
        let (name, data) = next_event(&mut events).expect("a frame");
        assert_eq!(name, "frame");
        let frame: serde_json::Value = serde_json::from_str(&data).unwrap();
        assert_eq!(frame["seq"], f + 1);
        assert!((frame["time"].as_f64().unwrap() - f as f64 / 30.0).abs() < 1e-12);
        let sent = frame["sent_ms"].as_f64().unwrap();
        assert!(sent >= before - 1.0 && sent <= after + 1.0, "{sent} not in {before}..{after}");
        let positions = frame["positions"].as_array().unwrap();
        assert_eq!(positions.len(), n_joints * 3);
        for (j, p) in walk.positions[f * n_joints..(f + 1) * n_joints].iter().enumerate() {
            for (axis, want) in p.to_array().into_iter().enumerate() {
                let have = positions[j * 3 + axis].as_f64().unwrap();
                assert!((have - want).abs() <= 1e-5 * want.abs().max(1.0), "{have} vs {want}");
            }
        }
    }

    feed.finish();
    assert_eq!(next_event(&mut events).map(|e| e.0).as_deref(), Some("end"));
    assert!(next_event(&mut events).is_none(), "the stream goes on after the end");
    assert_eq!(feed.push(10.0, &walk.positions[..n_joints]), Err(LiveError::Finished));

    // Late: the skeleton, the last frame, the end.
    let mut late = open_events(&server);
    let names: Vec<(String, String)> = std::iter::from_fn(|| next_event(&mut late)).collect();
    assert_eq!(
        names.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
        ["skeleton", "frame", "end"]
    );
    let last: serde_json::Value = serde_json::from_str(&names[1].1).unwrap();
    assert_eq!(last["seq"], 100);
}

/// Stopping the server ends open event streams too: `run` returns and the
/// page's connection closes.
#[test]
fn shutdown_closes_open_event_streams() {
    let server = Running::start(&[]);
    server.feed.set_skeleton(&stick_clip("walk", 1));
    let mut events = open_events(&server);
    assert_eq!(next_event(&mut events).map(|e| e.0).as_deref(), Some("skeleton"));
    let started = Instant::now();
    drop(server); // shuts down and joins the server thread
    assert!(next_event(&mut events).is_none(), "the stream outlived the server");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

/// 300 connections that never send a byte, against the default cap of
/// 256: every other client is still served, at once (the oldest silent
/// connections are closed to make room, not left to the head deadline).
#[test]
fn silent_connections_give_way_to_clients_that_ask() {
    let clips = [stick_clip("walk", 5)];
    let server = Running::start(&clips);
    let silent: Vec<TcpStream> =
        (0..300).map(|_| TcpStream::connect(server.addr).unwrap()).collect();
    // Past the second of grace a silent connection has.
    std::thread::sleep(Duration::from_millis(1200));
    let started = Instant::now();
    for _ in 0..20 {
        let reply = get(server.addr, "/clips.json");
        assert_eq!(reply.status, 200);
        assert_eq!(reply.body, bvhkit_serve::clips_json(&clips).as_bytes());
        assert_eq!(get(server.addr, "/").status, 200);
    }
    // Far below the 10 s head deadline.
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    // Each silent connection is still open, or was closed to make room or
    // refused with a 503 (it came while all 256 places were young).
    let open: Vec<usize> = silent
        .iter()
        .enumerate()
        .filter(|(_, stream)| {
            let mut stream: &TcpStream = stream;
            stream.set_nonblocking(true).unwrap();
            let read = stream.read(&mut [0u8; 64]);
            matches!(read, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
        })
        .map(|(i, _)| i)
        .collect();
    eprintln!("silent connections still open: {} of 300, from {:?}", open.len(), open.first());
    // The places were taken from the oldest ones (at least one), and every
    // one after them among the first 256 still holds its place; of the 44
    // that came when all 256 places were taken, those that came within
    // the first's second of grace were refused, and on a slow machine the
    // later ones took the oldest places too (so they are open or not).
    let first = open[0];
    assert!(first >= 1, "no silent connection gave way");
    let admitted: Vec<usize> = open.iter().copied().filter(|&i| i < 256).collect();
    assert_eq!(admitted, (first..256).collect::<Vec<_>>());
    assert!(open.len() >= 256 - 40 - 44, "only {} kept their places", open.len());
}

/// Event streams have a cap of their own: with every place taken, one more
/// page gets a 503, and page and JSON requests are still served.
#[test]
fn open_event_streams_leave_room_for_other_requests() {
    let clips = [stick_clip("walk", 5)];
    let limits = Limits { max_connections: 8, max_event_streams: 2, ..Limits::default() };
    let server = Running::start_with(&clips, limits);
    let streams: Vec<_> = (0..2).map(|_| open_events(&server)).collect();
    let third = raw_request(
        server.addr,
        b"GET /live/events HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .expect("a response");
    assert_eq!(third.status, 503);
    assert_eq!(third.header("Retry-After"), Some("1"));
    for _ in 0..10 {
        assert_eq!(get(server.addr, "/").status, 200);
        assert_eq!(get(server.addr, "/clips.json").status, 200);
    }
    // A page that goes frees its place.
    drop(streams);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET /live/events HTTP/1.0\r\nHost: localhost\r\n\r\n").unwrap();
        let mut line = String::new();
        BufReader::new(&mut s).read_line(&mut line).unwrap();
        if line.starts_with("HTTP/1.0 200") {
            break;
        }
        assert!(Instant::now() < deadline, "the place was not freed: {line}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `Host` values that only look like this machine are refused.
#[test]
fn host_lookalikes_are_refused() {
    let clips = [stick_clip("walk", 5)];
    let server = Running::start(&clips);
    let port = server.addr.port();
    for (host, want) in [
        (format!("127.0.0.1:{port}"), 200),
        (format!("localhost:{port}"), 200),
        ("localhost".to_string(), 200),
        (format!("[::1]:{port}"), 200),
        (format!("127.0.0.1:{port}@evil.com"), 403),
        ("localhost:abc".to_string(), 403),
        ("localhost:".to_string(), 403),
        ("localhost:99999".to_string(), 403),
        ("[::1]x".to_string(), 403),
        ("user@localhost".to_string(), 403),
    ] {
        let request =
            format!("GET /clips.json HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        let reply = raw_request(server.addr, request.as_bytes()).expect("a response");
        assert_eq!(reply.status, want, "Host: {host}");
    }
}
