//! `calvin` — deterministic locking with Calvin's lock manager: a hash table of per-key request
//! queues ([`HashLockManager`]) in one lock-manager thread, fed by a sequencer in a global order.
//!
//! This is the "Calvin" baseline of the VLL paper (Fig. 11: deterministic VLL against Calvin's lock
//! manager; Fig. 16: 20.18 µs of locking per transaction). See [`super`] for the pipeline.

use super::{Deterministic, Flavor};
use crate::protocols::kit::lock_manager::HashLockManager;
use crate::protocols::{Interactive, Isolation, ProtocolInfo};

impl Flavor for HashLockManager {
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "calvin",
        summary:
            "deterministic locking: sequencer, one hash-table lock manager thread granting in order",
        paper: "Thomson et al., Calvin (SIGMOD 2012); Ren, Thomson, Abadi, VLL (VLDB J. 2015) §2.4",
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[],
    };
}

/// Calvin: the deterministic pipeline with the hash-table lock manager.
pub type Calvin = Deterministic<HashLockManager>;
