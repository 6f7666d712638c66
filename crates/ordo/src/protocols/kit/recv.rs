//! Receiving a hand-off: poll briefly, then block.
//!
//! The pipelines that pass transactions between threads (Calvin's sequencer → lock manager → worker,
//! the partitioned engines' notifications) hand off through channels. A receiver that blocks at once
//! costs every message to an idle thread a futex wake-up for the sender and a sleep and context
//! switch for the receiver; one that polls briefly first takes the next message without either when
//! it comes within a few microseconds, as it usually does while the pipeline is busy.

use crossbeam_utils::Backoff;
use std::sync::mpsc::{Receiver, RecvError, TryRecvError};

/// Receives from `rx`, polling with [`Backoff`] (a few exponential spins, then a few yields) before
/// it blocks.
///
/// Every hand-off in the pipeline used to block in `recv`, so every message to an idle thread cost
/// the sender a futex wake-up and the receiver a sleep and a context switch: `perf` put a third of a
/// `calvin` run in the kernel's wake and switch paths. A receiver that polls briefly first takes the
/// next message without either when it comes within a few microseconds, as it usually does while the
/// pipeline is busy; an idle pipeline still sleeps.
pub fn recv_polling<T>(rx: &Receiver<T>) -> Result<T, RecvError> {
    let backoff = Backoff::new();
    loop {
        match rx.try_recv() {
            Ok(m) => return Ok(m),
            Err(TryRecvError::Disconnected) => return Err(RecvError),
            Err(TryRecvError::Empty) if backoff.is_completed() => return rx.recv(),
            Err(TryRecvError::Empty) => backoff.snooze(),
        }
    }
}
