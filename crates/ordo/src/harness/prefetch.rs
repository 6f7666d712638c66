//! How the harness's request sources prefetch a transaction's declared records: before handing it
//! out ([`RequestSource::next`]), or, for a protocol that collects the accesses itself while it
//! plans, by telling it to ([`RequestSource::next_resolving`]). One piece for the benchmark's source
//! and the verifier's, so that `ordo verify` runs the code paths `ordo bench` measures.

use crate::storage::Database;
use crate::txn::{prefetch_declared, Program, Ticket};

/// A source's prefetch setting and the database it prefetches from.
pub(super) struct Prefetch<'a, M> {
    pub db: &'a Database<M>,
    pub on: bool,
}

impl<M: Default + Send + Sync> Prefetch<'_, M> {
    /// `next`: the `drawn` request (`None` once the source is done), after prefetching the records
    /// `program` declares when prefetching is on.
    #[inline]
    pub fn next<P: Program>(&self, drawn: Option<Ticket>, program: &P) -> Option<Ticket> {
        let ticket = drawn?;
        if self.on {
            prefetch_declared(program, self.db);
        }
        Some(ticket)
    }

    /// `next_resolving`: the `drawn` request, and whether the protocol should prefetch while it
    /// plans (latency still starts at the draw).
    #[inline]
    pub fn resolving(&self, drawn: Option<Ticket>) -> Option<(Ticket, bool)> {
        drawn.map(|t| (t, self.on))
    }
}

/// A small loaded workload for the sources' tests.
#[cfg(test)]
pub(super) fn test_workload() -> (crate::protocols::kit::testkit::Mixed, Database<()>) {
    use super::Workload;
    let workload = crate::protocols::kit::testkit::Mixed {
        keys: 64,
        ops: 4,
        pointer_share: 0.0,
        affine: None,
    };
    let mut db = Database::<()>::new();
    workload.load(&mut db).unwrap();
    (workload, db)
}

/// Draws `n` requests from each of two sources made alike, one through `next` and one through
/// `next_resolving`: the same programs come out, and `next_resolving` passes `prefetch` on. Returns
/// their program buffers, for the caller to check how the sources stop.
#[cfg(test)]
pub(super) fn assert_resolving_passes_prefetch_on<S: crate::txn::RequestSource>(
    plain: &mut S,
    resolving: &mut S,
    prefetch: bool,
    n: usize,
) -> (S::Program, S::Program)
where
    S::Program: std::fmt::Debug,
{
    let (mut a, mut b) = (plain.program(), resolving.program());
    for _ in 0..n {
        assert!(plain.next(&mut a).is_some());
        let (_, pass_on) = resolving.next_resolving(&mut b).unwrap();
        assert_eq!(pass_on, prefetch);
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "the same programs");
    }
    (a, b)
}
