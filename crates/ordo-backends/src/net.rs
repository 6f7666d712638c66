//! What the two server backends share: a bound on the whole of connecting.
//!
//! Both clients bound only the TCP connect itself. A peer that accepts the connection and then
//! says nothing (a stopped or wedged server, another program on the port) would hold the
//! handshake forever (PostgreSQL) or for the read timeout (MariaDB). [`within`] runs the connect
//! on a thread of its own and gives up on it at a deadline; a thread left waiting on such a peer
//! ends when the peer closes the connection.

use std::sync::mpsc;
use std::time::Duration;

/// `connect()`'s result, or `None` when it has not finished after `deadline`.
pub(crate) fn within<T, E>(
    deadline: Duration,
    connect: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Option<Result<T, E>>
where
    T: Send + 'static,
    E: Send + 'static,
{
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("ordo-connect".into())
        .spawn(move || {
            let _ = tx.send(connect());
        });
    match spawned {
        Ok(_) => rx.recv_timeout(deadline).ok(),
        Err(_) => None,
    }
}
