//! Where lock hold time comes from: `--op-delay-us` and `--commit-delay-us`, slept **while locks
//! are held**, alike by every lock-based protocol that lists them in its `ProtocolInfo::knobs`.
//!
//! Salt's numbers (Xie 2016, Ch. 3) come from MySQL Cluster with three-way replication: every
//! operation waits for its replicas, and every commit for a two-phase commit, before the locks it
//! took may go — so a lock is held for network round trips, not for the microseconds an in-memory
//! engine needs. On one machine the same shape is emulated by sleeping: after each operation, with
//! the operation's locks (its short-term ones included) still held, for the operation delay; and
//! before a commit releases its locks, for the commit delay. Run such figures with many more client
//! threads than cores: the clients mostly sleep, as the thesis's clients mostly wait on the network.
//!
//! Both default to 0 (no sleep, no system call). Who honours them: `salt`, `salt-local`, `acid-2pl`
//! (per operation; before an ACID commit and at the end of each alkaline subtransaction) and the
//! lock-as-you-go 2PLs `2pl-nowait`, `2pl-waitdie`, `2pl-detect`, `2pl-table`, `2pl-table-detect`
//! (per operation; before the commit), and `callas`, `callas-ser` (per operation; at the end of each
//! stage that wrote, each stage being a subtransaction of its own), and `sc-chopping`,
//! `sc-chopping-ser` (per operation; at the end of each chop that wrote). A protocol that does not lock as it goes (OCC, MVCC, the
//! planning protocols) has no lock to hold across an operation's round trip and does not list them.

use crate::options::{OptionSpec, ValueKind};
use crate::protocols::ProtocolConfig;
use std::time::Duration;

/// `--op-delay-us`: see [`HoldDelay::op`].
pub const OP_DELAY_KNOB: OptionSpec = OptionSpec::new(
    "op-delay-us",
    "MICROS",
    ValueKind::Int {
        min: 0,
        max: 10_000_000,
    },
    "salt, salt-local, acid-2pl, 2pl-nowait, 2pl-waitdie, 2pl-detect, 2pl-table, \
     2pl-table-detect, callas, callas-ser, sc-chopping, sc-chopping-ser: sleep this long after each operation, its locks still held (emulates an \
     operation's replication round trip; see protocols::kit::hold_delay).",
)
.default("0");

/// `--commit-delay-us`: see [`HoldDelay::commit`].
pub const COMMIT_DELAY_KNOB: OptionSpec = OptionSpec::new(
    "commit-delay-us",
    "MICROS",
    ValueKind::Int {
        min: 0,
        max: 10_000_000,
    },
    "salt, salt-local, acid-2pl, 2pl-nowait, 2pl-waitdie, 2pl-detect, 2pl-table, \
     2pl-table-detect, callas, callas-ser, sc-chopping, sc-chopping-ser: sleep this long before a commit (of a transaction, of an \
     alkaline subtransaction, or of a Callas stage or SC chop that wrote) releases its locks (emulates a distributed commit).",
)
.default("0");

/// The two delays, read from a [`ProtocolConfig`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HoldDelay {
    /// Slept after each operation, with its locks held.
    pub op: Duration,
    /// Slept before a commit releases (or downgrades) its locks.
    pub commit: Duration,
}

impl HoldDelay {
    /// The knobs' values in `config` (0 where not given).
    pub fn of(config: &ProtocolConfig) -> Self {
        let us = |spec: &OptionSpec| {
            config
                .knobs
                .int_or_default(spec)
                .unwrap_or_else(|e| unreachable!("a checked delay knob: {e}"))
        };
        HoldDelay {
            op: Duration::from_micros(us(&OP_DELAY_KNOB)),
            commit: Duration::from_micros(us(&COMMIT_DELAY_KNOB)),
        }
    }

    /// The operation delay (nothing when 0).
    #[inline]
    pub fn after_op(&self) {
        if !self.op.is_zero() {
            std::thread::sleep(self.op);
        }
    }

    /// The commit delay (nothing when 0).
    #[inline]
    pub fn before_release(&self) {
        if !self.commit.is_zero() {
            std::thread::sleep(self.commit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_default_to_zero_and_read_the_knobs() {
        assert_eq!(
            HoldDelay::of(&ProtocolConfig::default()),
            HoldDelay::default()
        );
        let c = ProtocolConfig::default()
            .with_knob(&OP_DELAY_KNOB, "100")
            .unwrap()
            .with_knob(&COMMIT_DELAY_KNOB, "500")
            .unwrap();
        let d = HoldDelay::of(&c);
        assert_eq!(d.op, Duration::from_micros(100));
        assert_eq!(d.commit, Duration::from_micros(500));
        let t = std::time::Instant::now();
        d.after_op();
        assert!(t.elapsed() >= Duration::from_micros(100));
    }
}
