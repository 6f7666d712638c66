//! The sequencer: one thread that puts every request into a single global order, batch by batch.
//!
//! In Calvin the sequencer collects client requests for an *epoch* (10 ms), replicates the batch and
//! hands it to the schedulers of every partition; the order of requests in the sequence of batches is
//! the serial order every replica reproduces. Here there is one machine and no replication, so an epoch
//! is simply **whatever arrived while the previous batch was being handed on** (at most [`MAX_BATCH`]):
//! batching still amortizes the hand-off to the lock-manager thread, without a fixed 10 ms delay. Each
//! request gets the next sequence number; the lock manager admits them in that order.

use super::engine::{LmMsg, Request};
use crate::protocols::kit::recv::recv_polling;
use std::sync::mpsc::{Receiver, Sender};

/// The most requests in one batch.
pub const MAX_BATCH: usize = 1024;

/// What clients send to the sequencer.
pub enum SeqMsg {
    Request(Request),
    /// Hand on what is left, tell the lock manager to stop, and exit.
    Shutdown,
}

/// The sequencer thread's loop: number requests in arrival order and forward them in batches.
pub fn run(rx: Receiver<SeqMsg>, lock_manager: Sender<LmMsg>) {
    let mut next_seq: u64 = 1;
    loop {
        let Ok(first) = recv_polling(&rx) else { break };
        let mut batch = Vec::new();
        let mut stop = false;
        let mut msg = Some(first);
        while let Some(m) = msg.take() {
            match m {
                SeqMsg::Request(r) => {
                    batch.push((next_seq, r));
                    next_seq += 1;
                }
                SeqMsg::Shutdown => {
                    stop = true;
                    break;
                }
            }
            if batch.len() < MAX_BATCH {
                msg = rx.try_recv().ok();
            }
        }
        if !batch.is_empty() && lock_manager.send(LmMsg::Batch(batch)).is_err() {
            break;
        }
        if stop {
            break;
        }
    }
    let _ = lock_manager.send(LmMsg::Shutdown);
}
