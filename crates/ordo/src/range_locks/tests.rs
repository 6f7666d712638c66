//! The range lock managers: the paper's translation of a range to its longest shared prefix, each
//! manager's grants on small schedules, and a randomized oracle: under random ranges and random
//! finishing orders no manager ever lets two conflicting transactions run together, every blocked
//! transaction runs in the end, and everything is released.

use super::driver::{self, Config, Ranges};
use super::hierarchical::{compatible, HMode, HierarchicalLocks};
use super::standard::StandardRangeLocks;
use super::vllr::VllrRangeLocks;
use super::*;
use std::time::Duration;

fn r(lo: u64, hi: u64) -> KeyRange {
    KeyRange { lo, hi }
}

const X: Mode = Mode::Exclusive;
const S: Mode = Mode::Shared;

#[test]
fn a_range_becomes_its_longest_shared_prefix() {
    // Footnote 3's range [00111100, 01000010] shares only its first bit.
    let p = longest_shared_prefix(r(0b0011_1100, 0b0100_0010), 8);
    assert_eq!(p.render(8), "0xxxxxxx");
    assert_eq!(
        longest_shared_prefix(r(0b1010_0000, 0b1010_1111), 8).render(8),
        "1010xxxx"
    );
    assert_eq!(longest_shared_prefix(r(7, 7), 8).render(8), "00000111");
    assert_eq!(longest_shared_prefix(r(0, 255), 8).len, 0);
}

#[test]
fn standard_splits_overlapping_ranges_and_grants_in_order() {
    let mut m = StandardRangeLocks::new();
    let mut ready = Vec::new();
    assert!(m.acquire(1, r(10, 19), X));
    assert!(!m.acquire(2, r(15, 24), X), "overlaps T1 on 15..=19");
    assert_eq!(m.fragments(), 3, "[10,14] [15,19] [20,24]");
    assert!(m.acquire(3, r(0, 9), X), "adjacent, not overlapping");
    // T4 splits [15,19] while T2 waits there: T2 now waits in two fragments.
    assert!(!m.acquire(4, r(17, 17), X));
    m.release(1, &mut ready);
    assert_eq!(
        ready,
        vec![2],
        "T2 runs once all of its fragments granted it"
    );
    ready.clear();
    m.release(2, &mut ready);
    assert_eq!(ready, vec![4]);
    ready.clear();
    m.release(4, &mut ready);
    m.release(3, &mut ready);
    assert!(ready.is_empty());
    assert!(m.is_empty(), "emptied fragments are dropped");
}

#[test]
fn standard_shares_shared_locks_and_queues_writers_fifo() {
    let mut m = StandardRangeLocks::new();
    let mut ready = Vec::new();
    assert!(m.acquire(1, r(0, 9), S));
    assert!(m.acquire(2, r(5, 14), S), "shared with shared");
    assert!(!m.acquire(3, r(8, 8), X));
    assert!(
        !m.acquire(4, r(8, 8), S),
        "FIFO: a reader behind a waiting writer waits"
    );
    m.release(1, &mut ready);
    assert!(ready.is_empty(), "T2 still reads 8");
    m.release(2, &mut ready);
    assert_eq!(ready, vec![3]);
    ready.clear();
    m.release(3, &mut ready);
    assert_eq!(ready, vec![4]);
    ready.clear();
    m.release(4, &mut ready);
    assert!(m.is_empty());
}

#[test]
fn hierarchical_modes_follow_the_multi_granularity_matrix() {
    use HMode::*;
    let all = [IntentShared, IntentExclusive, Shared, Exclusive];
    let expect = [
        [true, true, true, false],
        [true, true, false, false],
        [true, false, true, false],
        [false, false, false, false],
    ];
    for (i, a) in all.iter().enumerate() {
        for (j, b) in all.iter().enumerate() {
            assert_eq!(compatible(*a, *b), expect[i][j], "{a:?} vs {b:?}");
        }
    }
}

#[test]
fn prefix_managers_conflict_on_ancestors_but_not_siblings() {
    // 8-bit keys: T1 locks 0101xxxx; T2 locks 0110xxxx (a sibling subtree: intentions only meet
    // intentions); T3 locks 01xxxxxx (an ancestor of T1's prefix); T4 reads 01010011 (below T1).
    let managers: Vec<Box<dyn RangeLockManager>> = vec![
        Box::new(HierarchicalLocks::new(8)),
        Box::new(VllrRangeLocks::new(8, false)),
        Box::new(VllrRangeLocks::new(8, true)),
    ];
    for mut m in managers {
        let mut ready = Vec::new();
        assert!(m.acquire(1, r(0b0101_0000, 0b0101_1111), X), "{}", m.name());
        assert!(m.acquire(2, r(0b0110_0000, 0b0110_1111), X), "{}", m.name());
        assert!(
            !m.acquire(3, r(0b0100_0000, 0b0111_1111), X),
            "{}",
            m.name()
        );
        assert!(
            !m.acquire(4, r(0b0101_0011, 0b0101_0011), S),
            "{}",
            m.name()
        );
        m.release(1, &mut ready);
        m.release(2, &mut ready);
        assert_eq!(ready, vec![3], "{}", m.name());
        ready.clear();
        m.release(3, &mut ready);
        assert_eq!(ready, vec![4], "{}", m.name());
        ready.clear();
        m.release(4, &mut ready);
        assert!(m.is_empty(), "{}", m.name());
    }
}

#[test]
fn vllr_sca_runs_a_blocked_transaction_that_conflicts_with_no_older_one() {
    // §2.5 with prefixes: A locks x, B y, C x and then (its range) z's subtree... one prefix each
    // here: A 0000xxxx, B 1111xxxx, C 000xxxxx (an ancestor of A's: blocked), D 0001xxxx (below C's,
    // not A's: blocked behind C). After A finishes, B still runs, so C is not the front; SCA picks
    // C, never D (which conflicts with the older C). Basic VLLR picks nothing.
    for sca in [false, true] {
        let mut m = VllrRangeLocks::new(8, sca);
        let mut ready = Vec::new();
        assert!(m.acquire(0, r(0b0000_0000, 0b0000_1111), X));
        assert!(m.acquire(1, r(0b1111_0000, 0b1111_1111), X));
        assert!(!m.acquire(2, r(0b0000_0000, 0b0001_1111), X));
        assert!(!m.acquire(3, r(0b0001_0000, 0b0001_1111), X));
        assert_eq!(m.pick_blocked(), None, "C conflicts with the running A");
        m.release(0, &mut ready);
        assert!(ready.is_empty(), "B is the front");
        if sca {
            assert_eq!(m.pick_blocked(), Some(2), "SCA finds C");
            assert_eq!(m.pick_blocked(), None, "D conflicts with C");
            m.release(2, &mut ready);
            assert!(ready.is_empty(), "B is still the front");
            assert_eq!(m.pick_blocked(), Some(3));
            m.release(3, &mut ready);
            m.release(1, &mut ready);
        } else {
            assert_eq!(m.pick_blocked(), None);
            m.release(1, &mut ready);
            assert_eq!(ready, vec![2], "the head rule");
            ready.clear();
            m.release(2, &mut ready);
            assert_eq!(ready, vec![3]);
            m.release(3, &mut ready);
        }
        assert!(m.is_empty());
        assert_eq!(m.states(), vec![]);
    }
}

/// Whether two locks may not be held together: exact ranges for the standard manager, prefixes
/// (one covering the other) for the prefix managers.
fn conflict(exact: bool, a: (KeyRange, Mode), b: (KeyRange, Mode), bits: u8) -> bool {
    if a.1 == S && b.1 == S {
        return false;
    }
    if exact {
        a.0.lo <= b.0.hi && b.0.lo <= a.0.hi
    } else {
        let (p, q) = (
            longest_shared_prefix(a.0, bits),
            longest_shared_prefix(b.0, bits),
        );
        p.covers(q) || q.covers(p)
    }
}

#[test]
fn no_manager_runs_conflicting_transactions_together_and_every_blocked_one_runs() {
    let bits = 10;
    for seed in 0..40u64 {
        let managers: Vec<(bool, Box<dyn RangeLockManager>)> = vec![
            (true, Box::new(StandardRangeLocks::new())),
            (false, Box::new(HierarchicalLocks::new(bits))),
            (false, Box::new(VllrRangeLocks::new(bits, false))),
            (false, Box::new(VllrRangeLocks::new(bits, true))),
        ];
        for (exact, mut m) in managers {
            let mut ranges = Ranges::new(bits, (seed % 4) as u8 + 1, seed);
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut next = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            let mut locks: Vec<(KeyRange, Mode)> = Vec::new();
            let mut running: Vec<usize> = Vec::new();
            let mut blocked = 0usize;
            let mut done = 0usize;
            let mut ready = Vec::new();
            let total = 300;
            while done < total {
                let admit = locks.len() < total && (running.is_empty() || next() % 3 != 0);
                if admit {
                    let id = locks.len();
                    let mode = if next() % 4 == 0 { S } else { X };
                    locks.push((ranges.draw(), mode));
                    if m.acquire(id, locks[id].0, mode) {
                        ready.push(id);
                    } else {
                        blocked += 1;
                    }
                } else if let Some(id) = m.pick_blocked() {
                    blocked -= 1;
                    ready.push(id);
                } else {
                    assert!(
                        !running.is_empty(),
                        "{}: stuck with {blocked} blocked",
                        m.name()
                    );
                    let i = (next() % running.len() as u64) as usize;
                    let id = running.swap_remove(i);
                    let before = ready.len();
                    m.release(id, &mut ready);
                    blocked -= ready.len() - before;
                    done += 1;
                }
                for id in ready.drain(..) {
                    for &o in &running {
                        assert!(
                            !conflict(exact, locks[id], locks[o], bits),
                            "{} (seed {seed}): T{id} {:?} runs beside T{o} {:?}",
                            m.name(),
                            locks[id],
                            locks[o]
                        );
                    }
                    running.push(id);
                }
            }
            assert_eq!(blocked, 0, "{}", m.name());
            assert!(m.is_empty(), "{}: locks left after every release", m.name());
        }
    }
}

#[test]
fn the_driver_runs_every_manager_and_leaves_it_empty() {
    for delayed in [0.0, 0.5] {
        let cfg = Config {
            key_bits: 32,
            shared_prefix: 4,
            delayed,
            // Long enough for many transactions to be admitted during one delay even on a slow,
            // busy machine, so that the queue fills and SCA gets to run.
            delay: Duration::from_micros(200),
            blocked_limit: 4,
            shared: 0.25,
            seconds: 0.05,
            seed: 7,
        };
        let managers: Vec<Box<dyn RangeLockManager>> = vec![
            Box::new(StandardRangeLocks::new()),
            Box::new(HierarchicalLocks::new(32)),
            Box::new(VllrRangeLocks::new(32, false)),
            Box::new(VllrRangeLocks::new(32, true)),
        ];
        for mut m in managers {
            let out = driver::run(m.as_mut(), &cfg);
            assert!(out.committed > 100, "{}: {out:?}", m.name());
            // Without delays each transaction finishes before the next one asks: nothing blocks.
            assert_eq!(
                out.blocked > 0,
                delayed > 0.0,
                "4 shared bits: delayed ranges collide ({})",
                m.name()
            );
            assert!(m.is_empty(), "{}", m.name());
            if m.name() == "vllr-sca" && delayed > 0.0 {
                assert!(out.picked > 0, "SCA ran some blocked transactions: {out:?}");
            }
        }
    }
}

/// A transaction whose own prefixes' counters share a hashed slot refuses itself (a false conflict,
/// as Fig. 6's hashing allows); at the front of the queue the head rule runs it anyway, so nothing
/// can wait forever behind it. Found by the driver: one such transaction at the front of an empty
/// queue, holding a C_x in the empty prefix's slot, blocked every later one until admission stopped.
#[test]
fn vllr_runs_a_front_that_only_its_own_hash_collision_refused() {
    use crate::protocols::kit::prefix::{slot_of, Prefix};
    let root = slot_of(0, Prefix { len: 0, bits: 0 });
    // A 32-bit key whose full-length prefix hashes to the empty prefix's slot.
    let key = (0u64..)
        .find(|&k| slot_of(0, Prefix::key(k, 32)) == root)
        .unwrap();
    let mut m = VllrRangeLocks::new(32, false);
    let mut ready = Vec::new();
    assert!(m.acquire(1, r(key, key), X), "the front runs");
    assert!(
        !m.acquire(2, r(key ^ (1 << 31), key ^ (1 << 31)), X),
        "the false conflict"
    );
    m.release(1, &mut ready);
    assert_eq!(ready, vec![2]);
    m.release(2, &mut ready);
    assert!(m.is_empty());
}
