//! Selective contention analysis (SCA, §2.6, Fig. 4): finding a blocked transaction that could run,
//! but only when the CPU would otherwise idle (the TxnQueue is full).
//!
//! VLL's counters forget *who* waits for whom. SCA recovers just enough of it: it walks the TxnQueue
//! from the oldest transaction, keeping two bit arrays D_X and D_S of hashed keys written and read by
//! the transactions scanned so far. A blocked transaction none of whose reads hit D_X and none of whose
//! writes hit D_X or D_S conflicts with no older transaction, so it can run now:
//!
//! ```text
//!  SCA():                                        Sca::select
//!    bit Dx[819200] = {0}; bit Ds[819200] = {0}   dx, ds (100 kB each; cleared by unsetting what was set)
//!    foreach Txn T in TxnQueue                    candidates, oldest first
//!      if T.state() == BLOCKED                    c.blocked
//!        success = true
//!        foreach key in T.ReadSet:  j = hash(key) footprint.reads (offsets hashed once, cached)
//!          if Dx[j]: success = false;  Ds[j] = 1
//!        foreach key in T.WriteSet: j = hash(key) footprint.writes
//!          if Dx[j] or Ds[j]: success = false;  Dx[j] = 1
//!        if success: return T                    (and c.eligible: the caller may run it)
//!      else mark T's keys in Ds / Dx
//!    return NULL
//! ```
//!
//! VLLR (§2.7) locks prefixes with four counters, C_x, C_s, I_x and I_s, whose conflicts are Fig. 5's
//! matrix rather than read/write ([`super::prefix::conflicts`]); its SCA keeps two more arrays, D_IX and
//! D_IS, for the intentions, allocated the first time a transaction with intentions is scanned (so
//! point-lock SCA never touches them). Two arrays alone would have to mark an I_x as exclusive, and
//! every writer's intention on a table's empty prefix would then conflict with every other's.
//!
//! A blocked transaction that fails still marks its keys, so no younger transaction can jump an older
//! one it conflicts with. Hash collisions can only make SCA miss a runnable transaction (a false
//! negative), never return one that conflicts (no false positives).
//!
//! This module knows nothing about queues or threads: it takes any oldest-first sequence of
//! [`ScaCandidate`]s. [`super::txn_queue::TxnQueue::sca`] feeds it a VLL TxnQueue.

pub use super::lock_request::lock_id;
use super::lock_request::LockRequest;
use super::prefix::Kind;

/// Bits in each of D_X and D_S (100 kB each, so both fit in a 256 kB L2 cache).
pub const SCA_BITS: u32 = 819_200;

/// What SCA marks for a point lock request: its record's [`lock_id`], and the counter (`D_X` or
/// `D_S`) its mode sets. Every point-lock VLL (threaded, per partition, deterministic) marks this.
#[inline]
pub fn point_key(r: &LockRequest) -> (u64, Kind) {
    (lock_id(r.table, r.key), Kind::of_lock(r.mode))
}

/// The bit arrays, reused across calls.
pub struct Sca {
    bits: u32,
    dx: Vec<u64>,
    ds: Vec<u64>,
    /// D_IX and D_IS, VLLR's intentions: empty until a footprint with intentions is scanned.
    dix: Vec<u64>,
    dis: Vec<u64>,
    /// Offsets set during the current call (cleared on the way out instead of zeroing 200 kB).
    touched: Vec<u32>,
    /// Whether the last [`Sca::select`] found nothing eligible but passed over a blocked candidate
    /// that was safe to run (see [`Sca::passed_over`]).
    passed_over: bool,
}

/// A transaction's hashed offsets by kind, computed the first time SCA meets it: `reads` (C_s),
/// `writes` (C_x), and VLLR's intentions `intent_reads` (I_s) and `intent_writes` (I_x).
#[derive(Clone, Debug, Default)]
pub struct Footprint {
    pub reads: Vec<u32>,
    pub writes: Vec<u32>,
    pub intent_reads: Vec<u32>,
    pub intent_writes: Vec<u32>,
}

impl Footprint {
    /// Adds lock `id` of kind `kind`, hashed for `sca`.
    pub fn add(&mut self, sca: &Sca, id: u64, kind: Kind) {
        self.add_offset(sca.offset(id), kind);
    }

    /// Adds a lock already hashed to bit offset `j` (below the arrays' [`Sca::bits`]), of kind
    /// `kind`: for a caller whose locks are hashed slots already (the range-lock manager's VLLR).
    pub fn add_offset(&mut self, j: u32, kind: Kind) {
        match kind {
            Kind::Cx => self.writes.push(j),
            Kind::Cs => self.reads.push(j),
            Kind::Ix => self.intent_writes.push(j),
            Kind::Is => self.intent_reads.push(j),
        }
    }

    /// Empties it for reuse (keeps the capacity).
    pub fn clear(&mut self) {
        self.reads.clear();
        self.writes.clear();
        self.intent_reads.clear();
        self.intent_writes.clear();
    }

    /// Whether it holds intentions (VLLR's I_x, I_s).
    fn has_intents(&self) -> bool {
        !(self.intent_reads.is_empty() && self.intent_writes.is_empty())
    }
}

/// One transaction as SCA sees it.
pub struct ScaCandidate<'a> {
    /// Blocked (a candidate to run), or running (only marks its keys).
    pub blocked: bool,
    /// Whether the caller can run it if it is found safe; a safe but ineligible transaction is passed
    /// over (its keys stay marked).
    pub eligible: bool,
    pub footprint: &'a Footprint,
}

impl Default for Sca {
    fn default() -> Self {
        Self::new()
    }
}

impl Sca {
    /// The paper's sizes.
    pub fn new() -> Self {
        Self::with_bits(SCA_BITS)
    }

    /// Bit arrays of `bits` bits each (tiny sizes force hash collisions in tests).
    pub fn with_bits(bits: u32) -> Self {
        assert!(bits > 0, "SCA needs at least one bit");
        let words = bits.div_ceil(64) as usize;
        Sca {
            bits,
            dx: vec![0; words],
            ds: vec![0; words],
            dix: Vec::new(),
            dis: Vec::new(),
            touched: Vec::new(),
            passed_over: false,
        }
    }

    /// Bits in each of D_X and D_S.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// An empty footprint for this SCA's hashing.
    pub fn footprint(&self) -> Footprint {
        Footprint::default()
    }

    /// `hash(key)`: the bit offset of lock id `id`.
    #[inline]
    pub fn offset(&self, id: u64) -> u32 {
        let h = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let h = h ^ (h >> 29);
        ((h as u128 * self.bits as u128) >> 64) as u32
    }

    #[inline]
    fn test(a: &[u64], j: u32) -> bool {
        a[(j / 64) as usize] >> (j % 64) & 1 == 1
    }
    #[inline]
    fn set(a: &mut [u64], touched: &mut Vec<u32>, j: u32) {
        a[(j / 64) as usize] |= 1 << (j % 64);
        touched.push(j);
    }

    /// Whether the last [`Self::select`] returned `None` although it passed over a blocked candidate
    /// that conflicted with no older one but was not eligible: a transaction the caller may not run
    /// (another worker's) and that Fig. 4's idle worker, which may run any, would have run.
    pub fn passed_over(&self) -> bool {
        self.passed_over
    }

    /// Fig. 4 over `queue` (oldest first): the index of the first eligible blocked candidate that
    /// conflicts with no older candidate, or `None`.
    pub fn select<'a>(
        &mut self,
        queue: impl IntoIterator<Item = ScaCandidate<'a>>,
    ) -> Option<usize> {
        let mut found = None;
        self.scan(queue, |i| {
            found = Some(i);
            false
        });
        found
    }

    /// Fig. 4 repeated until it finds nothing, in **one** pass: calls `found` with the index of every
    /// eligible blocked candidate that conflicts with no older candidate, oldest first, as if each
    /// were claimed (made running) before the next call. A found transaction's keys are marked as
    /// any blocked one's are, which is exactly what a running one marks, so the pass continues with
    /// the bits a fresh pass would have at that point: the same transactions in O(queue) instead of
    /// O(found × queue). For a caller that runs everything it finds at once (a lock-manager thread).
    pub fn select_all<'a>(
        &mut self,
        queue: impl IntoIterator<Item = ScaCandidate<'a>>,
        mut found: impl FnMut(usize),
    ) {
        self.scan(queue, |i| {
            found(i);
            true
        });
    }

    /// The scan of Fig. 4: `safe(i)` is called for each eligible blocked candidate `i` that
    /// conflicts with no older one, and says whether to go on. With intentions (VLLR), a candidate
    /// conflicts with what Fig. 5 says: its C_s with marked C_x and I_x, its C_x with all four, its
    /// I_x with C_x and C_s, its I_s with C_x.
    fn scan<'a>(
        &mut self,
        queue: impl IntoIterator<Item = ScaCandidate<'a>>,
        mut safe: impl FnMut(usize) -> bool,
    ) {
        let Sca {
            dx,
            ds,
            dix,
            dis,
            touched,
            passed_over,
            ..
        } = self;
        *passed_over = false;
        let mut any = false;
        for (i, t) in queue.into_iter().enumerate() {
            let fp = t.footprint;
            if dix.is_empty() && fp.has_intents() {
                (*dix, *dis) = (vec![0; dx.len()], vec![0; dx.len()]);
            }
            // Some transaction of the scan may have marked an intention (point locks: never).
            let intents = !dix.is_empty();
            if t.blocked {
                let mut success = true;
                for &j in &fp.reads {
                    if Self::test(dx, j) || intents && Self::test(dix, j) {
                        success = false;
                    }
                    Self::set(ds, touched, j);
                }
                for &j in &fp.writes {
                    if Self::test(dx, j)
                        || Self::test(ds, j)
                        || intents && (Self::test(dix, j) || Self::test(dis, j))
                    {
                        success = false;
                    }
                    Self::set(dx, touched, j);
                }
                for &j in &fp.intent_writes {
                    if Self::test(dx, j) || Self::test(ds, j) {
                        success = false;
                    }
                    Self::set(dix, touched, j);
                }
                for &j in &fp.intent_reads {
                    if Self::test(dx, j) {
                        success = false;
                    }
                    Self::set(dis, touched, j);
                }
                if success && t.eligible {
                    any = true;
                    if !safe(i) {
                        break;
                    }
                    continue;
                }
                *passed_over |= success;
            } else {
                for &j in &fp.reads {
                    Self::set(ds, touched, j);
                }
                for &j in &fp.writes {
                    Self::set(dx, touched, j);
                }
                for &j in &fp.intent_writes {
                    Self::set(dix, touched, j);
                }
                for &j in &fp.intent_reads {
                    Self::set(dis, touched, j);
                }
            }
        }
        *passed_over &= !any;
        let intents = !dix.is_empty();
        for &j in touched.iter() {
            let w = (j / 64) as usize;
            dx[w] = 0;
            ds[w] = 0;
            if intents {
                dix[w] = 0;
                dis[w] = 0;
            }
        }
        touched.clear();
    }
}

/// SCA's oracle and random queues, also used by the TxnQueue's tests.
#[cfg(test)]
pub(super) mod tests {
    use super::super::prefix::conflicts as fig_5;
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A queued transaction for the tests: blocked or not, and (key, kind) locks.
    #[derive(Clone, Debug)]
    pub(in crate::protocols) struct T {
        pub blocked: bool,
        pub locks: Vec<(u64, Kind)>,
    }

    /// Each transaction's footprint, hashed for `sca`.
    fn footprints(sca: &Sca, q: &[T]) -> Vec<Footprint> {
        q.iter()
            .map(|t| {
                let mut f = sca.footprint();
                for &(k, kind) in &t.locks {
                    f.add(sca, k, kind);
                }
                f
            })
            .collect()
    }

    /// `q` as SCA's candidates, every blocked one eligible.
    fn candidates<'a>(q: &'a [T], fps: &'a [Footprint]) -> impl Iterator<Item = ScaCandidate<'a>> {
        q.iter().zip(fps).map(|(t, f)| ScaCandidate {
            blocked: t.blocked,
            eligible: true,
            footprint: f,
        })
    }

    fn run(sca: &mut Sca, q: &[T]) -> Option<usize> {
        let fps = footprints(sca, q);
        sca.select(candidates(q, &fps))
    }

    fn conflicts(a: &T, b: &T) -> bool {
        a.locks
            .iter()
            .any(|&(k, x)| b.locks.iter().any(|&(k2, x2)| k == k2 && fig_5(x, x2)))
    }

    /// The oracle: every blocked transaction that conflicts with no older one.
    pub(in crate::protocols) fn runnable(q: &[T]) -> Vec<usize> {
        (0..q.len())
            .filter(|&i| q[i].blocked && !q[..i].iter().any(|o| conflicts(o, &q[i])))
            .collect()
    }

    /// 1 to 11 transactions over 16 keys, each key once per transaction (as planning leaves them),
    /// point locks (C_x, C_s).
    pub(in crate::protocols) fn random_queue(rng: &mut impl Rng) -> Vec<T> {
        random_queue_of(rng, &[Kind::Cx, Kind::Cs])
    }

    /// The same with locks of `kinds`.
    fn random_queue_of(rng: &mut impl Rng, kinds: &[Kind]) -> Vec<T> {
        let n = rng.gen_range(1..12);
        (0..n)
            .map(|_| {
                let mut locks: Vec<(u64, Kind)> = (0..rng.gen_range(1..5))
                    .map(|_| {
                        (
                            rng.gen_range(0..16u64),
                            kinds[rng.gen_range(0..kinds.len())],
                        )
                    })
                    .collect();
                locks.sort_by_key(|l| l.0);
                locks.dedup_by_key(|l| l.0);
                T {
                    blocked: rng.gen_bool(0.6),
                    locks,
                }
            })
            .collect()
    }

    /// §2.5's trace after A finished: B(y) running, C(x, z) and D(z) blocked. SCA returns C, not D.
    #[test]
    fn section_2_5_returns_c_not_d() {
        let (x, y, z) = (1, 2, 3);
        let q = [
            T {
                blocked: false,
                locks: vec![(y, Kind::Cx)],
            },
            T {
                blocked: true,
                locks: vec![(x, Kind::Cx), (z, Kind::Cx)],
            },
            T {
                blocked: true,
                locks: vec![(z, Kind::Cx)],
            },
        ];
        assert_eq!(run(&mut Sca::new(), &q), Some(1));
        // While A(x) is still running, nothing is runnable — and D is not returned even though the
        // counters alone cannot tell, because C (older, blocked) marked z.
        let mut with_a = vec![T {
            blocked: false,
            locks: vec![(x, Kind::Cx)],
        }];
        with_a.extend(q.iter().cloned());
        assert_eq!(run(&mut Sca::new(), &with_a), None);
    }

    #[test]
    fn agrees_with_a_brute_force_oracle_on_random_queues() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(42);
        let mut sca = Sca::new();
        for _ in 0..5_000 {
            let q = random_queue(&mut rng);
            let got = run(&mut sca, &q);
            let want = runnable(&q);
            // With the paper's 819,200 bits and 16 keys, collisions are (essentially) impossible: the
            // answer is exactly the oldest runnable transaction.
            assert_eq!(got, want.first().copied(), "{q:?}");
        }
    }

    fn run_all(sca: &mut Sca, q: &[T]) -> Vec<usize> {
        let fps = footprints(sca, q);
        let mut found = Vec::new();
        sca.select_all(candidates(q, &fps), |i| found.push(i));
        found
    }

    /// One `select_all` pass finds what calling `select` until it finds nothing, running (unblocking)
    /// each find before the next call, finds — and, with the paper's bit arrays, exactly every
    /// blocked transaction that conflicts with no older one; with colliding bits a subset of those.
    #[test]
    fn select_all_is_select_repeated_with_each_find_running() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
        for bits in [SCA_BITS, 1, 3, 17] {
            let mut sca = Sca::with_bits(bits);
            for _ in 0..3_000 {
                let q = random_queue(&mut rng);
                let mut repeated = Vec::new();
                let mut left = q.clone();
                while let Some(i) = run(&mut sca, &left) {
                    repeated.push(i);
                    left[i].blocked = false;
                }
                let all = run_all(&mut sca, &q);
                assert_eq!(all, repeated, "{bits} bits: {q:?}");
                let want = runnable(&q);
                if bits == SCA_BITS {
                    assert_eq!(all, want, "{q:?}");
                } else {
                    assert!(all.iter().all(|i| want.contains(i)), "{bits} bits: {q:?}");
                }
            }
        }
    }

    #[test]
    fn forced_collisions_only_cause_false_negatives() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut misses = 0;
        for bits in [1, 2, 3, 5] {
            let mut sca = Sca::with_bits(bits);
            for _ in 0..3_000 {
                let q = random_queue(&mut rng);
                let want = runnable(&q);
                match run(&mut sca, &q) {
                    Some(i) => assert!(
                        want.contains(&i),
                        "{bits} bits: returned {i}, which conflicts with an older one: {q:?}"
                    ),
                    None => misses += !want.is_empty() as u32,
                }
            }
        }
        assert!(
            misses > 0,
            "tiny bit arrays should miss some runnable transactions"
        );
    }

    #[test]
    fn ineligible_transactions_are_passed_over_but_keep_their_marks() {
        let mut sca = Sca::new();
        let fa = Footprint {
            writes: vec![sca.offset(1)],
            ..Footprint::default()
        };
        let fb = Footprint {
            reads: vec![sca.offset(1)],
            ..Footprint::default()
        };
        let fc = Footprint {
            writes: vec![sca.offset(2)],
            ..Footprint::default()
        };
        let q = |e: [bool; 3]| {
            [&fa, &fb, &fc]
                .into_iter()
                .zip(e)
                .map(|(f, eligible)| ScaCandidate {
                    blocked: true,
                    eligible,
                    footprint: f,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(sca.select(q([true, true, true])), Some(0));
        assert!(!sca.passed_over());
        // The first is not ours: skipped, and b (reads what a writes) is blocked by it; c is free.
        assert_eq!(sca.select(q([false, true, true])), Some(2));
        assert!(!sca.passed_over(), "something was found");
        assert_eq!(sca.select(q([false, true, false])), None);
        assert!(sca.passed_over(), "a could have run, by another worker");
        // Nothing safe at all: a runs (not blocked), b waits for it, c is not ours and waits for
        // nobody — passed over; without c's eligibility problem there is nothing to miss.
        let running = |e: bool| {
            [(false, &fa), (true, &fb), (true, &fc)]
                .into_iter()
                .map(|(blocked, f)| ScaCandidate {
                    blocked,
                    eligible: e,
                    footprint: f,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(sca.select(running(false)), None);
        assert!(sca.passed_over());
        let only_b = [(false, &fa), (true, &fb)].map(|(blocked, f)| ScaCandidate {
            blocked,
            eligible: false,
            footprint: f,
        });
        assert_eq!(sca.select(only_b), None);
        assert!(
            !sca.passed_over(),
            "b conflicts with the running a: nobody could run it"
        );
    }

    /// Fig. 5's matrix, cell by cell, as SCA applies it: a blocked transaction of each kind behind a
    /// running one of each kind on the same id is found exactly when the two kinds do not conflict
    /// (intentions never conflict with each other; I_s only with C_x).
    #[test]
    fn intentions_conflict_as_fig_5_says() {
        use Kind::*;
        let all = [Cx, Cs, Ix, Is];
        // Fig. 5, rows and columns in the order of `all`.
        const FIG_5: [[bool; 4]; 4] = [
            [true, true, true, true],
            [true, false, true, false],
            [true, true, false, false],
            [true, false, false, false],
        ];
        let at = |k| all.iter().position(|&a| a == k).unwrap();
        let expected = |a, b| FIG_5[at(a)][at(b)];
        let mut sca = Sca::new();
        for held in all {
            for wanted in all {
                assert_eq!(fig_5(held, wanted), expected(held, wanted));
                assert_eq!(fig_5(held, wanted), fig_5(wanted, held), "symmetric");
                let q = [
                    T {
                        blocked: false,
                        locks: vec![(5, held)],
                    },
                    T {
                        blocked: true,
                        locks: vec![(5, wanted)],
                    },
                ];
                let found = run(&mut sca, &q);
                assert_eq!(
                    found.is_none(),
                    expected(held, wanted),
                    "{held:?} then {wanted:?}"
                );
                // Blocked behind a blocked one: the same (a failed candidate still marks).
                let q = [
                    T {
                        blocked: false,
                        locks: vec![(6, Cx)],
                    },
                    T {
                        blocked: true,
                        locks: vec![(6, Cx), (5, held)],
                    },
                    T {
                        blocked: true,
                        locks: vec![(5, wanted)],
                    },
                ];
                let found = run(&mut sca, &q);
                assert_eq!(found, (!expected(held, wanted)).then_some(2));
            }
        }
        // Point-lock SCA never allocates the intention arrays.
        let mut point = Sca::new();
        run(
            &mut point,
            &random_queue(&mut rand::rngs::SmallRng::seed_from_u64(1)),
        );
        assert!(point.dix.is_empty() && point.dis.is_empty());
        assert!(!sca.dix.is_empty());
    }

    /// With all four kinds, `select` finds the oldest transaction the Fig. 5 oracle says may run and
    /// `select_all` every one of them; tiny arrays only ever miss.
    #[test]
    fn with_intentions_agrees_with_a_fig_5_oracle_on_random_queues() {
        let kinds = [Kind::Cx, Kind::Cs, Kind::Ix, Kind::Is];
        let mut rng = rand::rngs::SmallRng::seed_from_u64(23);
        for bits in [SCA_BITS, 2, 5] {
            let mut sca = Sca::with_bits(bits);
            for _ in 0..3_000 {
                let q = random_queue_of(&mut rng, &kinds);
                let want = runnable(&q);
                let (got, all) = (run(&mut sca, &q), run_all(&mut sca, &q));
                if bits == SCA_BITS {
                    assert_eq!(got, want.first().copied(), "{q:?}");
                    assert_eq!(all, want, "{q:?}");
                } else {
                    assert!(got.is_none_or(|i| want.contains(&i)), "{bits} bits: {q:?}");
                    assert!(all.iter().all(|i| want.contains(i)), "{bits} bits: {q:?}");
                }
            }
        }
    }
}
