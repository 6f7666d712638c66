//! The stream of transactions a worker thread runs, seen from the protocol's side.
//!
//! Execution models differ (DESIGN.md, "Threads and execution"): interactive protocols run one
//! transaction at a time to commit, retrying aborts ([`crate::protocols::Protocol::run_worker`]'s
//! default); VLL's TxnQueue loop keeps several transactions in flight per thread and admits new ones
//! only while few are blocked; Calvin's clients hand requests to a sequencer. So the harness does not
//! impose one loop: it hands each worker thread a [`RequestSource`] and the protocol pulls from it.
//!
//! The source owns measurement. It stamps each request with a [`Ticket`] when it hands it out and is
//! told how each ended ([`RequestSource::finished`]) and of every retried abort on the way
//! ([`RequestSource::aborted`]), so latency and abort counts mean the same under every protocol:
//! latency runs from the hand-out to the commit, retries included.

use super::error::{Abort, AbortReason};
use super::program::Program;

/// A request handed out by a [`RequestSource`]: when, and an opaque tag of the source.
///
/// The time is a [`quanta::Instant`]: the CPU's invariant time-stamp counter, scaled to
/// nanoseconds (quanta falls back to the OS's monotonic clock where there is none). Every
/// transaction is stamped twice — at hand-out and at its end — and `std::time::Instant`'s
/// `clock_gettime` reads the counter with `rdtscp`, which waits for every earlier load, cache
/// misses included: ≈ 32 ns a read here and ≈ 9% of a 2-thread SmallBank run, against ≈ 13 ns
/// (docs/results/README.md, "Harness overhead").
#[derive(Clone, Copy, Debug)]
pub struct Ticket {
    pub started: quanta::Instant,
    pub tag: u64,
}

impl Ticket {
    /// A request handed out now, with the source's `tag`.
    #[inline]
    pub fn now(tag: u64) -> Self {
        Ticket {
            started: quanta::Instant::now(),
            tag,
        }
    }
}

/// Where a worker thread's transactions come from, and where their outcomes go.
pub trait RequestSource {
    type Program: Program + Send;

    /// A new, empty program (a protocol that keeps several transactions in flight holds several).
    fn program(&self) -> Self::Program;

    /// Fills `program` with the next transaction, or `None` once the run is over: stop asking, finish
    /// (or abandon) what is in flight, and return.
    fn next(&mut self, program: &mut Self::Program) -> Option<Ticket>;

    /// [`Self::next`] for a protocol that collects the program's declared accesses itself before
    /// running it (VLL's planning) and prefetches their records there
    /// ([`crate::txn::prefetch_accesses`]): the source does not prefetch them first (which means
    /// declaring the accesses once more, as [`crate::txn::prefetch_declared`] does); the `bool` says
    /// whether the caller should prefetch — whether `next` would have. Default: `next`, and `false`
    /// (the source prefetched already, or prefetches nothing).
    fn next_resolving(&mut self, program: &mut Self::Program) -> Option<(Ticket, bool)> {
        self.next(program).map(|t| (t, false))
    }

    /// One attempt of a transaction aborted for `reason` and will be retried.
    fn aborted(&mut self, reason: AbortReason);

    /// A transaction ended: committed (`Ok`), or aborted for good (its own logic, or a retry limit).
    fn finished(&mut self, ticket: Ticket, outcome: Result<(), Abort>);

    /// A seed for this worker's randomness (retry backoff jitter), distinct per worker.
    fn seed(&self) -> u64;
}
