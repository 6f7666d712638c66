//! What a workload is built for, which picks the defaults of the options not given.
//!
//! The same workload serves two ends: a benchmark wants the papers' configuration (a million YCSB
//! rows, 18,000 SmallBank customers, a full-size TPC-C warehouse), and a verification run wants a
//! small, contended one, so that a recorded history of a few thousand transactions meets every
//! conflict the protocol can mishandle. Each workload's `options` module maps a `Purpose` to its
//! defaults; an option given on the command line wins over both.

/// What a workload is built for (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// `ordo bench`: the papers' configurations.
    Bench,
    /// `ordo verify`: small and contended, so that a recorded run finds anomalies fast.
    Verify,
}
