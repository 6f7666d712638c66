//! The stream of transactions a worker thread runs, seen from the protocol's side.
//!
//! Execution models differ (`docs/architecture.md`, "Protocols"): interactive protocols run one
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
/// The time is a raw reading of the CPU's invariant time-stamp counter ([`quanta::Clock::raw`]: a
/// plain `rdtsc`; quanta falls back to the OS's monotonic clock where there is no such counter),
/// scaled to nanoseconds only once, for the latency, by [`Ticket::elapsed_ns`]. Every transaction
/// is stamped twice — at hand-out and at its end — so the stamp is on every transaction's path:
/// `std::time::Instant`'s `clock_gettime` reads the counter with `rdtscp`, which waits for every
/// earlier load, cache misses included (≈ 32 ns a read here and ≈ 9% of a 2-thread SmallBank run;
/// see docs/results/README.md, "Harness overhead"); `quanta::Instant::now` would also check a
/// thread-local override and scale each reading (≈ 10 more instructions a transaction).
#[derive(Clone, Copy, Debug)]
pub struct Ticket {
    /// Raw counter reading at hand-out ([`clock`]'s units).
    pub started: u64,
    pub tag: u64,
}

/// The clock tickets are stamped with (calibrated on first use: ≈ 1 ms, far longer under a
/// profiler — a harness calls this before its measured interval starts).
#[inline]
pub fn clock() -> &'static quanta::Clock {
    static CLOCK: std::sync::OnceLock<quanta::Clock> = std::sync::OnceLock::new();
    CLOCK.get_or_init(quanta::Clock::new)
}

impl Ticket {
    /// A request handed out now, with the source's `tag`.
    #[inline]
    pub fn now(tag: u64) -> Self {
        Ticket {
            started: clock().raw(),
            tag,
        }
    }

    /// Nanoseconds since the ticket was handed out: 0 if the counter reads earlier than at hand-out
    /// (the thread may have moved to a core whose counter lags by a few cycles).
    #[inline]
    pub fn elapsed_ns(&self) -> u64 {
        let c = clock();
        c.delta_as_nanos(self.started, c.raw())
    }
}

/// Where a worker thread's transactions come from, and where their outcomes go.
pub trait RequestSource {
    /// `'static` (it owns its data) so that a protocol may hand a program from one worker thread to
    /// another through shared, type-erased state: VLL parks a blocked transaction in its queue
    /// entry for whichever worker runs it.
    type Program: Program + Send + 'static;

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

    /// Whether the run is over, so that a transaction in flight may be abandoned at its next
    /// retryable abort instead of retried until it commits (what [`Self::next`]'s `None` allows).
    /// Default: never (a source that counts its transactions wants each one to end).
    fn over(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_ticket_measures_the_time_since_its_hand_out_in_nanoseconds() {
        let t = Ticket::now(7);
        let since = Instant::now();
        std::thread::sleep(Duration::from_millis(5));
        let ns = t.elapsed_ns();
        let wall = since.elapsed().as_nanos() as u64;
        assert_eq!(t.tag, 7);
        // At least the sleep (the counter is scaled to nanoseconds, not left in cycles) and not
        // wildly more than the wall clock saw (a scale off by the counter's frequency would be).
        assert!(ns >= 4_000_000, "{ns} ns for a 5 ms sleep");
        assert!(
            ns <= wall * 2 + 1_000_000,
            "{ns} ns against {wall} ns of wall time"
        );
    }
}
