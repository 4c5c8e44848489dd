//! The HTTP server, driven over raw TCP.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use bvhkit_serve::MAX_REQUEST_HEAD;
use common::{Running, get, raw_request, stick_clip};

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
        let request =
            format!("{method} / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello");
        let reply = raw_request(server.addr, request.as_bytes()).expect("a response");
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("Allow"), Some("GET, HEAD"));
    }
}

#[test]
fn head_has_headers_only() {
    let server = Running::start(&[stick_clip("walk", 2)]);
    let reply =
        raw_request(server.addr, b"HEAD /clips.json HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
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
    let reply = raw_request(server.addr, b"GET /clips.json HTTP/1.1\r\nHost: evil.example\r\n\r\n")
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
fn slow_clients_time_out() {
    let server = Running::start(&[]);
    let started = std::time::Instant::now();
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream.write_all(b"GET / HT").unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut response = String::new();
    let _ = std::io::Read::read_to_string(&mut stream, &mut response);
    assert!(response.starts_with("HTTP/1.1 408"), "{response:?}");
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[test]
fn many_connections_at_once_are_bounded_but_served() {
    let server = Running::start(&[stick_clip("walk", 2)]);
    // Hold more idle connections than the cap: the extra ones are refused with 503
    // (or queued), and once they go away the server answers again.
    let idle: Vec<TcpStream> = (0..bvhkit_serve::MAX_CONNECTIONS + 4)
        .map(|_| TcpStream::connect(server.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let busy = raw_request(server.addr, b"GET / HTTP/1.1\r\n\r\n").expect("a response");
    assert_eq!(busy.status, 503);
    drop(idle);
    // The idle connections' threads notice the hang-up and exit.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let reply = get(server.addr, "/");
        if reply.status == 200 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "server stayed busy");
        std::thread::sleep(Duration::from_millis(50));
    }
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
