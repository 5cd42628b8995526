//! The egress proxy of `allowlist` runs (design §5.6, issue 28): the only way out of a
//! sandbox whose network mode is `allowlist`. An HTTP/1.1 forward proxy — `CONNECT host:port`
//! for TLS, absolute `http://` URLs for plain HTTP — that resolves names itself and checks the
//! name and every address against the person's allowlist
//! ([`crate::domain::egress`] decides; this only carries the bytes). A refusal is answered at
//! once with a 403 and a one-line reason; every destination asked for is on the record
//! ([`EgressProxy::log`]), by host and port only, never by path or header.
//!
//! It serves listeners others create (a socket made inside the run's network namespace, or a
//! loopback listener Landlock lets the run reach), each tagged with the run's phase.

mod conn;
mod head;
mod log;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};

use self::log::EventLog;
use crate::domain::egress::{Allowlist, NetworkEvent};

/// The proxy's bounds; the defaults suit real clients, tests shorten them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// A client must have sent its whole request head by then (default 10 s).
    pub head_timeout: Duration,
    /// Resolving and connecting to the destination (default 10 s).
    pub connect_timeout: Duration,
    /// Connections served at once; more wait to be accepted (default 256).
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { head_timeout: Duration::from_secs(10), connect_timeout: Duration::from_secs(10), max_connections: 256 }
    }
}

/// Why the egress proxy cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    /// `serve` was called outside a tokio runtime.
    #[error("the egress proxy runs inside a tokio runtime, and none is running here")]
    NoRuntime,
    /// The proxy was already stopped.
    #[error("the egress proxy is stopped")]
    Stopped,
    /// The listener could not be used (setting it non-blocking, reading its address, or handing it to tokio).
    #[error("the egress proxy cannot serve its listener: {0}")]
    Listener(#[source] std::io::Error),
}

/// What every connection of one proxy shares.
struct Shared {
    policy: Allowlist,
    limits: Limits,
    log: EventLog,
}

/// One run's egress proxy. Dropping it stops it too (without waiting).
pub struct EgressProxy {
    shared: Arc<Shared>,
    slots: Arc<Semaphore>,
    stop: watch::Sender<bool>,
    /// Every accept loop and connection holds a clone; `stop` waits until all are gone.
    alive: Mutex<Option<mpsc::Sender<()>>>,
    all_gone: tokio::sync::Mutex<mpsc::Receiver<()>>,
}

impl EgressProxy {
    /// A proxy for `policy` (the run's effective allowlist), serving nothing yet.
    pub fn start(policy: Allowlist) -> EgressProxy {
        EgressProxy::with_limits(policy, Limits::default())
    }

    /// A proxy for `policy` with other timeouts and connection bound than the default (tests).
    pub fn with_limits(policy: Allowlist, limits: Limits) -> EgressProxy {
        let (alive, all_gone) = mpsc::channel(1);
        let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
        EgressProxy {
            shared: Arc::new(Shared { policy, limits, log: EventLog::default() }),
            slots,
            stop: watch::Sender::new(false),
            alive: Mutex::new(Some(alive)),
            all_gone: tokio::sync::Mutex::new(all_gone),
        }
    }

    /// The allowlist the proxy enforces.
    pub fn policy(&self) -> &Allowlist {
        &self.shared.policy
    }

    /// Serves connections on `listener` (made elsewhere, e.g. inside the run's network
    /// namespace), recording them under `phase`, until [`EgressProxy::stop`]. Must be called
    /// inside a tokio runtime. Returns the listener's address.
    pub fn serve(&self, listener: std::net::TcpListener, phase: &str) -> Result<SocketAddr, EgressError> {
        let alive = lock(&self.alive).clone().ok_or(EgressError::Stopped)?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| EgressError::NoRuntime)?;
        listener.set_nonblocking(true).map_err(EgressError::Listener)?;
        let address = listener.local_addr().map_err(EgressError::Listener)?;
        let listener = {
            let _inside = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(EgressError::Listener)?
        };
        let serving = Serving {
            shared: Arc::clone(&self.shared),
            slots: Arc::clone(&self.slots),
            phase: Arc::from(phase),
            stop: self.stop.subscribe(),
            alive,
        };
        runtime.spawn(serving.accept_loop(listener));
        Ok(address)
    }

    /// Every destination asked for so far, in order, with the bytes moved until now.
    pub fn log(&self) -> Vec<NetworkEvent> {
        self.shared.log.snapshot()
    }

    /// Destinations asked for beyond the log's bound (10 000), counted but not kept.
    pub fn dropped_events(&self) -> u64 {
        self.shared.log.dropped()
    }

    /// Closes every listener and ends every connection (open tunnels included), and returns
    /// when they are all gone. The log stays readable; serving again is refused.
    pub async fn stop(&self) {
        self.stop.send_replace(true);
        lock(&self.alive).take();
        let mut all_gone = self.all_gone.lock().await;
        while all_gone.recv().await.is_some() {}
    }
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One listener's accept loop and what its connections need.
struct Serving {
    shared: Arc<Shared>,
    slots: Arc<Semaphore>,
    phase: Arc<str>,
    stop: watch::Receiver<bool>,
    alive: mpsc::Sender<()>,
}

impl Serving {
    async fn accept_loop(mut self, listener: tokio::net::TcpListener) {
        self.accept_until_stopped(&listener).await;
        drop(listener);
        // `self.alive` goes last: once `stop` returns, the listener is closed.
    }

    async fn accept_until_stopped(&mut self, listener: &tokio::net::TcpListener) {
        loop {
            let permit = tokio::select! {
                permit = Arc::clone(&self.slots).acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => return,
                },
                () = stopped(&mut self.stop) => return,
            };
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = stopped(&mut self.stop) => return,
            };
            match accepted {
                Ok((socket, _)) => self.spawn_connection(socket, permit),
                // Out of descriptors and the like: wait rather than spin.
                Err(_) => {
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(50)) => {}
                        () = stopped(&mut self.stop) => return,
                    }
                }
            }
        }
    }

    fn spawn_connection(&self, socket: tokio::net::TcpStream, permit: OwnedSemaphorePermit) {
        let shared = Arc::clone(&self.shared);
        let phase = Arc::clone(&self.phase);
        let mut stop = self.stop.clone();
        let alive = self.alive.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = conn::handle(socket, &shared, &phase) => {}
                () = stopped(&mut stop) => {}
            }
            drop(permit);
            drop(alive);
        });
    }
}

/// Resolves once the proxy is stopped (or gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}
