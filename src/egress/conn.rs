//! One client connection: read the head, decide, resolve, decide each address, connect, then
//! tunnel (CONNECT) or forward one request (absolute form). A refusal or a failure is answered
//! at once and the connection closed; nothing here waits without a bound except an open
//! tunnel, which ends with its peers or with the proxy.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout, timeout_at};

use super::Shared;
use super::head::{self, MAX_REQUEST_HEAD, MAX_RESPONSE_HEAD, Parsed, Request, Response, Target};
use super::log::Counters;
use crate::domain::egress::{self, Destination, Host, NetworkEvent, Refusal, socket_text};

const BUFFER: usize = 32 * 1024;

/// How long the unread rest of a refused client's request is drained after the answer, so that
/// closing does not reset the connection before the client has read the answer.
const LINGER: Duration = Duration::from_millis(500);

enum HeadRead {
    /// The client closed, or the connection failed, before a complete head.
    Gone,
    TooLarge,
    /// Not a request this proxy serves: the reason, for a 400.
    Bad(String),
}

pub(super) async fn handle(mut client: TcpStream, shared: &Shared, phase: &str) {
    let _ = client.set_nodelay(true);
    let (request, leftover) = match timeout(shared.limits.head_timeout, read_head(&mut client)).await {
        Ok(Ok(found)) => found,
        Ok(Err(HeadRead::TooLarge)) => {
            let body = format!("forgeloop: the request head is larger than {MAX_REQUEST_HEAD} bytes\n");
            return answer_and_close(client, 431, "Request Header Fields Too Large", &body).await;
        }
        Ok(Err(HeadRead::Bad(why))) => {
            return answer_and_close(client, 400, "Bad Request", &format!("forgeloop: bad proxy request: {why}\n"))
                .await;
        }
        // A silent client, or one that went away: nothing to answer.
        Ok(Err(HeadRead::Gone)) | Err(_) => return,
    };
    let leftover = leftover.as_slice();
    let record = Record { shared, phase, destination: &request.destination };
    if let Err(refusal) = egress::decide(&shared.policy, &request.destination) {
        return record.refuse(client, refusal).await;
    }
    let (upstream, address) = match connect(shared, &request.destination).await {
        Ok(connected) => connected,
        Err(Unreachable::Refused(refusal)) => return record.refuse(client, refusal).await,
        Err(Unreachable::Failed(error)) => return record.fail(client, error).await,
    };
    let _ = upstream.set_nodelay(true);
    let counters = record.allowed(address);
    // An error here is the client or the destination going away: the connection just ends.
    let _ = match &request.target {
        Target::Connect => tunnel(client, upstream, leftover, &counters).await,
        Target::Absolute { .. } => forward(client, upstream, &request, leftover, &counters).await,
    };
}

/// Reads until the head is whole; returns it parsed, and the bytes the client sent after it.
async fn read_head(client: &mut TcpStream) -> Result<(Request, Vec<u8>), HeadRead> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk).await.map_err(|_| HeadRead::Gone)?;
        if n == 0 {
            return Err(HeadRead::Gone);
        }
        let fresh = chunk.get(..n).unwrap_or_default();
        buf.extend_from_slice(fresh);
        // A head ends with a line end, and every line is checked when it ends: parsed again
        // only then, so a client trickling bytes does not make the proxy parse on each one.
        if fresh.contains(&b'\n') {
            match head::parse_request(&buf) {
                Ok(Parsed::Complete { len, .. }) if len > MAX_REQUEST_HEAD => return Err(HeadRead::TooLarge),
                Ok(Parsed::Complete { request, len }) => {
                    return Ok((request, buf.get(len..).unwrap_or_default().to_vec()));
                }
                Ok(Parsed::Partial) => {}
                Err(why) => return Err(HeadRead::Bad(why)),
            }
        }
        if buf.len() >= MAX_REQUEST_HEAD {
            return Err(HeadRead::TooLarge);
        }
    }
}

enum Unreachable {
    Refused(Refusal),
    Failed(String),
}

/// Resolves a name (the proxy does DNS, not the sandbox), checks every address, and connects to
/// the first acceptable one that answers, all within the connect timeout.
async fn connect(shared: &Shared, destination: &Destination) -> Result<(TcpStream, SocketAddr), Unreachable> {
    let limit = shared.limits.connect_timeout;
    let deadline = Instant::now() + limit;
    let port = destination.port;
    let (candidates, by_name) = match &destination.host {
        Host::Ip(ip) => (vec![SocketAddr::new(*ip, port)], false),
        Host::Name(name) => match timeout_at(deadline, tokio::net::lookup_host((name.as_str(), port))).await {
            Ok(Ok(addrs)) => (addrs.collect(), true),
            Ok(Err(err)) => return Err(Unreachable::Failed(format!("cannot resolve {name}: {err}"))),
            Err(_) => return Err(Unreachable::Failed(format!("resolving {name} took longer than {limit:?}"))),
        },
    };
    let mut acceptable = Vec::new();
    let mut first_refusal = None;
    for addr in candidates {
        let ip = addr.ip().to_canonical();
        match egress::decide_addr(&shared.policy, by_name, ip, port) {
            Ok(()) => acceptable.push(SocketAddr::new(ip, port)),
            Err(refusal) => {
                first_refusal.get_or_insert(refusal);
            }
        }
    }
    if acceptable.is_empty() {
        return Err(match first_refusal {
            Some(refusal) => Unreachable::Refused(refusal),
            None => Unreachable::Failed(format!("{} has no address", destination.host_text())),
        });
    }
    let mut last_error = String::new();
    for addr in acceptable {
        match timeout_at(deadline, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok((stream, addr)),
            Ok(Err(err)) => last_error = format!("{}: {err}", socket_text(addr.ip(), port)),
            Err(_) => return Err(Unreachable::Failed(format!("no connection within {limit:?}"))),
        }
    }
    Err(Unreachable::Failed(last_error))
}

/// What the run's log says about this connection: host and port only, never the path or a header.
struct Record<'a> {
    shared: &'a Shared,
    phase: &'a str,
    destination: &'a Destination,
}

impl Record<'_> {
    fn event(&self, allowed: bool) -> NetworkEvent {
        NetworkEvent {
            host: self.destination.host_text(),
            port: self.destination.port,
            allowed,
            reason: None,
            allow_with: None,
            by_policy: None,
            address: None,
            error: None,
            bytes_up: 0,
            bytes_down: 0,
            phase: self.phase.to_owned(),
        }
    }

    fn allowed(&self, address: SocketAddr) -> std::sync::Arc<Counters> {
        let address = Some(socket_text(address.ip(), address.port()));
        self.shared.log.record(NetworkEvent { address, ..self.event(true) })
    }

    async fn refuse(&self, client: TcpStream, refusal: Refusal) {
        let body = format!("forgeloop refused {}: {}\n", self.destination, refusal.reason);
        let (reason, allow_with, by_policy) = (Some(refusal.reason), refusal.allow_with, refusal.by_policy);
        self.shared.log.record(NetworkEvent { reason, allow_with, by_policy, ..self.event(false) });
        answer_and_close(client, 403, "Forbidden", &body).await;
    }

    async fn fail(&self, client: TcpStream, error: String) {
        let body = format!("forgeloop could not reach {}: {error}\n", self.destination);
        self.shared.log.record(NetworkEvent { error: Some(error), ..self.event(true) });
        answer_and_close(client, 502, "Bad Gateway", &body).await;
    }
}

async fn answer_and_close(mut client: TcpStream, status: u16, reason: &str, body: &str) {
    if client.write_all(&head::answer(status, reason, body)).await.is_err() {
        return;
    }
    let _ = client.shutdown().await;
    let mut sink = [0u8; 4096];
    let drain = async { while let Ok(1..) = client.read(&mut sink).await {} };
    let _ = timeout(LINGER, drain).await;
}

async fn tunnel(
    mut client: TcpStream,
    mut upstream: TcpStream,
    leftover: &[u8],
    counters: &Counters,
) -> io::Result<()> {
    client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await?;
    if !leftover.is_empty() {
        upstream.write_all(leftover).await?;
        counters.add_up(leftover.len());
    }
    let (mut client_read, mut client_write) = client.split();
    let (mut upstream_read, mut upstream_write) = upstream.split();
    tokio::try_join!(
        pump(&mut client_read, &mut upstream_write, |n| counters.add_up(n)),
        pump(&mut upstream_read, &mut client_write, |n| counters.add_down(n)),
    )?;
    Ok(())
}

/// One absolute-form request: its head in origin form, then the client's bytes as they come;
/// the response's head says `Connection: close`, and the exchange ends with the response.
async fn forward(
    mut client: TcpStream,
    mut upstream: TcpStream,
    request: &Request,
    leftover: &[u8],
    counters: &Counters,
) -> io::Result<()> {
    let Some(head) = request.origin_head() else {
        return Ok(());
    };
    upstream.write_all(&head).await?;
    counters.add_up(head.len());
    if !leftover.is_empty() {
        upstream.write_all(leftover).await?;
        counters.add_up(leftover.len());
    }
    let (mut client_read, mut client_write) = client.split();
    let (mut upstream_read, mut upstream_write) = upstream.split();
    let up = pump(&mut client_read, &mut upstream_write, |n| counters.add_up(n));
    let down = relay_response(&mut upstream_read, &mut client_write, counters);
    tokio::pin!(up, down);
    let mut up_done = false;
    loop {
        tokio::select! {
            result = &mut down => return result,
            result = &mut up, if !up_done => {
                result?;
                up_done = true;
            }
        }
    }
}

/// Passes on the destination's interim heads as they are, its final head rewritten to close
/// the connection, then the body. A head this proxy does not understand passes untouched.
async fn relay_response<R, W>(upstream: &mut R, client: &mut W, counters: &Counters) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; BUFFER];
    loop {
        let end = loop {
            if let Some(end) = head::head_end(&buf) {
                break Some(end);
            }
            if buf.len() >= MAX_RESPONSE_HEAD {
                break None;
            }
            let n = upstream.read(&mut chunk).await?;
            if n == 0 {
                client.write_all(&buf).await?;
                let _ = client.shutdown().await;
                return Ok(());
            }
            counters.add_down(n);
            buf.extend_from_slice(&chunk[..n]);
        };
        match end.and_then(|end| buf.get(..end).and_then(head::rewrite_response).map(|r| (end, r))) {
            Some((end, Response::Interim)) => {
                client.write_all(&buf[..end]).await?;
                buf.drain(..end);
            }
            Some((end, Response::Final(rewritten))) => {
                client.write_all(&rewritten).await?;
                client.write_all(&buf[end..]).await?;
                break;
            }
            None => {
                client.write_all(&buf).await?;
                break;
            }
        }
    }
    pump(upstream, client, |n| counters.add_down(n)).await
}

/// Copies until end of file, then half-closes the other side.
async fn pump<R, W>(from: &mut R, to: &mut W, count: impl Fn(usize)) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; BUFFER];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            let _ = to.shutdown().await;
            return Ok(());
        }
        to.write_all(&buf[..n]).await?;
        count(n);
    }
}
