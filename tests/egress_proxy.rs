//! The egress proxy of `allowlist` runs (src/egress), over real sockets on 127.0.0.1 and with
//! clients this project did not write (curl, Python's urllib): what the allowlist names is
//! reached, by CONNECT and by absolute URL; what it does not is answered at once with a 403
//! and never connected to (its listener sees no accept); every destination asked for is on
//! the record with its bytes and phase, and never with its path or headers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

use std::io::ErrorKind;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use forgeloop::domain::egress::{Allowlist, NetworkEvent};
use forgeloop::egress::{EgressError, EgressProxy, Limits};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;

const PATIENCE: Duration = Duration::from_secs(10);

/// A small HTTP/1.1 origin server: answers each request with its request line (keeping the
/// connection open, as servers do), and records every request head it saw.
struct Origin {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
    accepted: Arc<AtomicUsize>,
}

impl Origin {
    async fn start() -> Origin {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (seen, count) = (Arc::clone(&heads), Arc::clone(&accepted));
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve_origin(socket, Arc::clone(&seen)));
            }
        });
        Origin { port, heads, accepted }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// The response the origin gives to `request_line`.
fn origin_response(request_line: &str) -> String {
    let body = format!("hello from origin: {request_line}\n");
    format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{body}", body.len())
}

async fn serve_origin(mut socket: TcpStream, heads: Arc<Mutex<Vec<String>>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let end = loop {
            if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end);
        let length = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap())
            })
            .unwrap_or(0);
        while buf.len() < length {
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        buf.drain(..length);
        let line = head.lines().next().unwrap_or_default().to_owned();
        heads.lock().unwrap().push(head);
        if socket.write_all(origin_response(&line).as_bytes()).await.is_err() {
            return;
        }
    }
}

/// A proxy for `entries`, serving a fresh loopback listener under `phase`.
fn proxy(entries: &[String], limits: Limits, phase: &str) -> (EgressProxy, u16) {
    let proxy = EgressProxy::with_limits(Allowlist::parse(entries).unwrap(), limits);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = proxy.serve(listener, phase).unwrap().port();
    (proxy, port)
}

/// A listener nothing may reach: tests check it never accepted.
fn untouchable() -> (std::net::TcpListener, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn assert_never_accepted(listener: &std::net::TcpListener) {
    match listener.accept() {
        Err(err) if err.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the refused destination was connected to: {other:?}"),
    }
}

/// Sends `request` to the proxy and reads until it closes.
async fn exchange(proxy_port: u16, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", proxy_port)).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut out = Vec::new();
    timeout(PATIENCE, stream.read_to_end(&mut out)).await.expect("the proxy answered and closed").unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads exactly `len` bytes.
async fn read_exactly(stream: &mut TcpStream, len: usize) -> String {
    let mut buf = vec![0u8; len];
    timeout(PATIENCE, stream.read_exact(&mut buf)).await.expect("answered in time").unwrap();
    String::from_utf8(buf).unwrap()
}

/// The log once `done` holds (connections finish after their clients have read everything).
async fn log_when(proxy: &EgressProxy, done: impl Fn(&[NetworkEvent]) -> bool) -> Vec<NetworkEvent> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let log = proxy.log();
        if done(&log) {
            return log;
        }
        assert!(Instant::now() < deadline, "the log never got there: {log:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A real client's command with no proxy settings of the machine's leaking in.
fn client(program: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    for var in
        ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]
    {
        command.env_remove(var);
    }
    command.kill_on_drop(true);
    command
}

async fn run(mut command: tokio::process::Command) -> (bool, String, String) {
    let output = timeout(PATIENCE * 2, command.output())
        .await
        .expect("the client finished")
        .unwrap_or_else(|e| panic!("cannot run {command:?} (curl and python3 are needed by these tests): {e}"));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (output.status.success(), text(&output.stdout), text(&output.stderr))
}

fn curl(proxy_port: u16, args: &[&str]) -> tokio::process::Command {
    let mut command = client("curl");
    command.args(["-sS", "--max-time", "10", "-x", &format!("http://127.0.0.1:{proxy_port}")]).args(args);
    command
}

fn python_get(proxy_port: u16, url: &str) -> tokio::process::Command {
    let script = "import sys, urllib.request, urllib.error\n\
                  try:\n    print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode(), end='')\n\
                  except urllib.error.HTTPError as e:\n    print(e.code, e.read().decode(), end=''); sys.exit(3)\n";
    let mut command = client("python3");
    command.args(["-c", script, url]);
    command.env("HTTP_PROXY", format!("http://127.0.0.1:{proxy_port}"));
    command.env("http_proxy", format!("http://127.0.0.1:{proxy_port}"));
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_tunnels_to_an_exactly_allowed_server_and_counts_its_bytes() {
    let origin = Origin::start().await;
    let (proxy, port) = proxy(&[format!("127.0.0.1:{}", origin.port)], Limits::default(), "setup");

    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let connect = format!("CONNECT 127.0.0.1:{0} HTTP/1.1\r\nHost: 127.0.0.1:{0}\r\n\r\n", origin.port);
    stream.write_all(connect.as_bytes()).await.unwrap();
    let established = "HTTP/1.1 200 Connection established\r\n\r\n";
    assert_eq!(read_exactly(&mut stream, established.len()).await, established);
    // Plain bytes through the tunnel: the origin sees them as they were sent.
    let request = "GET /tunnelled HTTP/1.1\r\nHost: anything\r\n\r\n";
    stream.write_all(request.as_bytes()).await.unwrap();
    let expected = origin_response("GET /tunnelled HTTP/1.1");
    assert_eq!(read_exactly(&mut stream, expected.len()).await, expected);
    assert_eq!(origin.heads(), [request]);
    drop(stream);

    let log = log_when(&proxy, |log| log.first().is_some_and(|e| e.bytes_down == expected.len() as u64)).await;
    assert_eq!(log.len(), 1, "{log:#?}");
    let event = &log[0];
    assert_eq!((event.host.as_str(), event.port, event.allowed), ("127.0.0.1", origin.port, true));
    assert_eq!(event.address.as_deref(), Some(format!("127.0.0.1:{}", origin.port).as_str()));
    assert_eq!((event.bytes_up, event.phase.as_str()), (request.len() as u64, "setup"));
    assert_eq!((&event.reason, &event.error), (&None, &None));
    proxy.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_and_python_reach_the_allowed_server_through_the_proxy() {
    let origin = Origin::start().await;
    let (proxy, port) = proxy(&[format!("127.0.0.1:{}", origin.port)], Limits::default(), "setup");
    let url = |path: &str| format!("http://127.0.0.1:{}{path}", origin.port);

    // Absolute form, with proxy credentials the origin must never see.
    let (ok, out, err) = run(curl(port, &["--proxy-user", "me:secret", &url("/curl?x=1")])).await;
    assert!(ok, "curl: {err}");
    assert_eq!(out, "hello from origin: GET /curl?x=1 HTTP/1.1\n");
    // curl with --proxytunnel asks for CONNECT even for http.
    let (ok, out, err) = run(curl(port, &["--proxytunnel", &url("/tunnel")])).await;
    assert!(ok, "curl -p: {err}");
    assert_eq!(out, "hello from origin: GET /tunnel HTTP/1.1\n");
    // Python's urllib, configured the way the sandbox configures commands: HTTP_PROXY.
    let (ok, out, err) = run(python_get(port, &url("/python"))).await;
    assert!(ok, "python: {out} {err}");
    assert_eq!(out, "hello from origin: GET /python HTTP/1.1\n");

    let heads = origin.heads();
    assert_eq!(heads.len(), 3, "{heads:#?}");
    let curl_head = &heads[0];
    assert!(curl_head.starts_with("GET /curl?x=1 HTTP/1.1\r\n"), "origin form: {curl_head}");
    assert!(curl_head.contains(&format!("\r\nHost: 127.0.0.1:{}\r\n", origin.port)), "{curl_head}");
    assert!(curl_head.ends_with("Connection: close\r\n\r\n"), "{curl_head}");
    for head in &heads {
        assert!(!head.to_ascii_lowercase().contains("proxy-"), "a Proxy-* header reached the origin: {head}");
    }
    let log = log_when(&proxy, |log| log.len() == 3 && log.iter().all(|e| e.bytes_down > 0)).await;
    for event in &log {
        assert!(event.allowed && event.port == origin.port, "{event:?}");
        assert!(event.bytes_up > 0, "{event:?}");
    }
    let response = origin_response("GET /curl?x=1 HTTP/1.1");
    assert_eq!(log[0].bytes_down, response.len() as u64, "what the destination sent");
    proxy.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_that_is_not_allowed_is_refused_at_once_and_never_connected_to() {
    let origin = Origin::start().await;
    let (refused, refused_port) = untouchable();
    let (proxy, port) = proxy(&[format!("127.0.0.1:{}", origin.port)], Limits::default(), "commands");

    let started = Instant::now();
    let answer = exchange(port, format!("CONNECT 127.0.0.1:{refused_port} HTTP/1.1\r\n\r\n").as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    let line = format!(
        "forgeloop refused 127.0.0.1:{refused_port}: 127.0.0.1:{refused_port} is loopback: refused by policy (only an exact IP:port entry a person writes by hand in [network] allow permits that)\n"
    );
    assert!(answer.ends_with(&format!("\r\n\r\n{line}")), "{answer}");
    // Real clients get the same answer, for plain HTTP too.
    let (ok, out, _) = run(curl(port, &["-w", "%{http_code}", &format!("http://127.0.0.1:{refused_port}/x")])).await;
    assert!(ok && out == format!("{line}403"), "{out}");
    let (ok, out, _) = run(python_get(port, &format!("http://127.0.0.1:{refused_port}/y"))).await;
    assert!(!ok && out == format!("403 {line}"), "{out}");
    assert!(started.elapsed() < Duration::from_secs(5), "refusals never wait: {:?}", started.elapsed());

    assert_never_accepted(&refused);
    let log = proxy.log();
    assert_eq!(log.len(), 3, "{log:#?}");
    for event in &log {
        assert!(!event.allowed && event.port == refused_port && event.host == "127.0.0.1", "{event:?}");
        assert_eq!(event.reason.as_deref(), line.trim_end().split_once(": ").map(|(_, r)| r));
        // Loopback is refused by policy: named, with no entry proposed for it.
        assert_eq!(event.allow_with, None);
        assert_eq!(event.by_policy.as_deref(), Some(format!("127.0.0.1:{refused_port}").as_str()));
        assert_eq!((event.bytes_up, event.bytes_down, event.phase.as_str()), (0, 0, "commands"));
    }
    assert_eq!(origin.accepted.load(Ordering::SeqCst), 0);
    proxy.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_other_loopback_ports_and_names_resolving_to_loopback_are_refused() {
    let origin = Origin::start().await;
    let (refused, refused_port) = untouchable();
    let entries = [format!("127.0.0.1:{}", origin.port), format!("localhost:{refused_port}")];
    let (proxy, port) = proxy(&entries, Limits::default(), "setup");

    let cases = [
        ("CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n".to_owned(), "169.254.169.254:80 is link-local (cloud metadata)"),
        (
            "GET http://169.254.169.254/latest/meta-data/iam/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n".to_owned(),
            "169.254.169.254:80 is link-local (cloud metadata): refused by policy",
        ),
        (format!("CONNECT 127.0.0.1:{refused_port} HTTP/1.1\r\n\r\n"), "is loopback"),
        (format!("CONNECT [::1]:{} HTTP/1.1\r\n\r\n", origin.port), "is loopback"),
        // Allowed by name, but it resolves to loopback (DNS rebinding): refused.
        (format!("CONNECT localhost:{refused_port} HTTP/1.1\r\n\r\n"), "which is loopback: refused by policy"),
        (format!("GET http://LOCALHOST:{refused_port}/ HTTP/1.1\r\n\r\n"), "it resolves to"),
        (
            format!("CONNECT localhost:{} HTTP/1.1\r\n\r\n", origin.port),
            "localhost is in [network] allow, but not on port",
        ),
        ("CONNECT pypi.org:443 HTTP/1.1\r\n\r\n".to_owned(), "pypi.org is not in [network] allow"),
        ("CONNECT 8.8.8.8:443 HTTP/1.1\r\n\r\n".to_owned(), "is an IP address, which only an exact IP:port entry"),
    ];
    for (request, reason) in &cases {
        let started = Instant::now();
        let answer = exchange(port, request.as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{request}: {answer}");
        assert!(answer.contains("\r\n\r\nforgeloop refused ") && answer.contains(reason), "{request}: {answer}");
        assert!(started.elapsed() < Duration::from_secs(5), "{request}: {:?}", started.elapsed());
    }
    assert_never_accepted(&refused);
    assert_eq!(origin.accepted.load(Ordering::SeqCst), 0);
    let log = proxy.log();
    assert_eq!(log.len(), cases.len(), "{log:#?}");
    assert!(log.iter().all(|e| !e.allowed && e.reason.is_some()), "{log:#?}");
    assert_eq!(log[0].host, "169.254.169.254");
    assert_eq!(log[3].host, "[::1]");
    assert_eq!(log[4].host, "localhost");
    assert_eq!(log[7].allow_with.as_deref(), Some("pypi.org"));
    // What is not public is refused by policy and proposes no entry (a PR probing for the
    // metadata endpoint must not get it offered to the person's one key); the rest name theirs.
    for (i, event) in log.iter().enumerate() {
        let policy = i <= 5;
        assert_eq!(event.by_policy.is_some(), policy, "{i}: {event:?}");
        assert_eq!(event.allow_with.is_none(), policy, "{i}: {event:?}");
    }
    assert_eq!(log[0].by_policy.as_deref(), Some("169.254.169.254:80"));
    let json = serde_json::to_string(&log).unwrap();
    assert!(!json.contains("meta-data") && !json.contains("latest"), "no path in the log: {json}");
    proxy.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_oversized_and_silent_clients_get_a_bounded_answer() {
    let limits = Limits { head_timeout: Duration::from_millis(300), ..Limits::default() };
    let (proxy, port) = proxy(&["registries".to_owned()], limits, "setup");

    for request in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET https://pypi.org/ HTTP/1.1\r\n\r\n",
        b"CONNECT pypi.org HTTP/1.1\r\n\r\n",
        b"GET http://pypi.org/ HTTP/1.1\r\nBad Header\r\n\r\n",
        b"\xff\xfe\x00\r\n\r\n",
    ] {
        let answer = exchange(port, request).await;
        assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{request:?}: {answer}");
        assert!(answer.contains("forgeloop: bad proxy request: "), "{answer}");
    }
    let huge = format!("GET http://pypi.org/ HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20_000));
    let answer = exchange(port, huge.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");

    // Silent, and half a head then silence: closed after the head timeout, not before.
    for partial in [&b""[..], b"CONNECT pypi.org:443 HTT"] {
        let started = Instant::now();
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream.write_all(partial).await.unwrap();
        let mut out = Vec::new();
        timeout(PATIENCE, stream.read_to_end(&mut out)).await.expect("dropped").unwrap();
        let waited = started.elapsed();
        assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
        assert!(waited >= Duration::from_millis(250) && waited < Duration::from_secs(5), "{waited:?}");
    }
    assert!(proxy.log().is_empty(), "malformed requests name no destination: {:?}", proxy.log());
    proxy.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_destination_that_does_not_answer_is_a_502_on_the_record() {
    let dead_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (proxy, port) = proxy(&[format!("127.0.0.1:{dead_port}")], Limits::default(), "setup");
    let answer = exchange(port, format!("CONNECT 127.0.0.1:{dead_port} HTTP/1.1\r\n\r\n").as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{answer}");
    assert!(
        answer.contains(&format!("forgeloop could not reach 127.0.0.1:{dead_port}: 127.0.0.1:{dead_port}: ")),
        "{answer}"
    );
    let log = proxy.log();
    assert_eq!(log.len(), 1);
    assert!(log[0].allowed && log[0].error.as_deref().is_some_and(|e| e.contains("refused")), "{log:#?}");
    proxy.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_holds_host_and_port_never_paths_or_headers() {
    let origin = Origin::start().await;
    let (proxy, port) = proxy(&[format!("127.0.0.1:{}", origin.port)], Limits::default(), "setup");
    let secret = format!("tok{}", std::process::id());
    let url = format!("http://127.0.0.1:{}/private/{secret}/pkg?key={secret}", origin.port);
    let (ok, out, err) = run(curl(port, &["-H", &format!("Authorization: Bearer {secret}"), &url])).await;
    assert!(ok, "{err}");
    assert!(out.contains(&secret), "the request went through whole: {out}");
    assert!(origin.heads()[0].contains(&format!("Authorization: Bearer {secret}")), "end-to-end headers pass");
    let log = log_when(&proxy, |log| log.first().is_some_and(|e| e.bytes_down > 0)).await;
    let json = serde_json::to_string(&log).unwrap();
    assert!(!json.contains(&secret) && !json.contains("private"), "{json}");
    proxy.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_listener_records_its_phase() {
    let origin = Origin::start().await;
    let (proxy, setup_port) = proxy(&[format!("127.0.0.1:{}", origin.port)], Limits::default(), "setup");
    let commands_port = proxy.serve(std::net::TcpListener::bind("127.0.0.1:0").unwrap(), "commands").unwrap().port();
    for port in [setup_port, commands_port] {
        let (ok, _, err) = run(curl(port, &[&format!("http://127.0.0.1:{}/", origin.port)])).await;
        assert!(ok, "{err}");
    }
    let phases: Vec<String> = proxy.log().into_iter().map(|e| e.phase).collect();
    assert_eq!(phases, ["setup", "commands"]);
    proxy.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_open_tunnels_and_closes_the_listeners() {
    let origin = Origin::start().await;
    let (proxy, port) = proxy(&[format!("127.0.0.1:{}", origin.port)], Limits::default(), "setup");
    let mut tunnel = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    tunnel.write_all(format!("CONNECT 127.0.0.1:{} HTTP/1.1\r\n\r\n", origin.port).as_bytes()).await.unwrap();
    let established = "HTTP/1.1 200 Connection established\r\n\r\n";
    assert_eq!(read_exactly(&mut tunnel, established.len()).await, established);
    tunnel.write_all(b"GET /open HTTP/1.1\r\n\r\n").await.unwrap();
    let expected = origin_response("GET /open HTTP/1.1");
    assert_eq!(read_exactly(&mut tunnel, expected.len()).await, expected);
    // A client that has sent nothing yet is ended too.
    let mut idle = TcpStream::connect(("127.0.0.1", port)).await.unwrap();

    timeout(PATIENCE, proxy.stop()).await.expect("stop returns once every connection is gone");
    let mut rest = Vec::new();
    let ended = timeout(Duration::from_secs(2), tunnel.read_to_end(&mut rest)).await.expect("the tunnel ended");
    assert!(ended.is_err() || rest.is_empty(), "{rest:?}");
    let ended =
        timeout(Duration::from_secs(2), idle.read_to_end(&mut rest)).await.expect("the idle client was dropped");
    assert!(ended.is_err() || rest.is_empty());
    assert!(TcpStream::connect(("127.0.0.1", port)).await.is_err(), "the listener is closed");
    let again = proxy.serve(std::net::TcpListener::bind("127.0.0.1:0").unwrap(), "setup");
    assert!(matches!(again, Err(EgressError::Stopped)), "{again:?}");
    assert_eq!(proxy.log().len(), 1, "the log outlives the proxy");
    timeout(PATIENCE, proxy.stop()).await.expect("stopping twice is fine");
}

#[test]
fn the_proxy_can_be_shared_between_tasks() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<EgressProxy>();
}

#[test]
fn serving_needs_a_runtime() {
    let proxy = EgressProxy::start(Allowlist::default());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    assert!(matches!(proxy.serve(listener, "setup"), Err(EgressError::NoRuntime)));
}
