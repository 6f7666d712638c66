//! Fig. 14's single-threaded benchmark: each transaction locks one range; a fraction of the
//! transactions that run then wait (holding their lock) for a fixed delay, "to simulate remote
//! reads", while the thread goes on with others.
//!
//! ```text
//!  loop until the time is up:
//!    finish every delayed transaction whose delay is over      (release → runnable ones)
//!    run every runnable transaction: delayed? wait D : finish
//!    fewer than `blocked_limit` blocked → admit a new one (acquire: granted → run it)
//!    else → the manager's pick (VLLR + SCA), or wait for the next delay to end
//! ```
//!
//! Ranges ([`Ranges`]): a uniformly drawn block of keys sharing `shared_prefix` leading bits, and two
//! keys drawn uniformly in it as the range's ends, so the ends share at least those bits (on average
//! about one more). Every transaction takes its lock in the same mode (exclusive unless
//! `shared` says otherwise); a transaction's own work is nothing but its lock and its delay, so
//! throughput measures the lock manager and the contention its locks create.
//!
//! The same admission limit holds for every manager: new transactions are admitted only while fewer
//! than `blocked_limit` wait for locks (VLL's "TxnQueue is full", §2.1), and fewer than
//! [`MAX_IN_FLIGHT`] are in flight.

use super::{KeyRange, Mode, RangeLockManager, TxnId};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Transactions in flight at most (admitted and not finished): bounds memory when long delays meet
/// no contention (a second's delay at millions of transactions a second); the paper's settings stay
/// far below it (about 5,000 in flight at 10 M/s and 500 µs).
pub const MAX_IN_FLIGHT: usize = 1 << 20;

/// One run's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Bits in a key.
    pub key_bits: u8,
    /// Leading bits a range's ends share at least.
    pub shared_prefix: u8,
    /// Fraction of transactions that wait after their locks are granted, in [0, 1].
    pub delayed: f64,
    /// How long they wait.
    pub delay: Duration,
    /// Admission stops while this many transactions wait for locks.
    pub blocked_limit: usize,
    /// Fraction of transactions that lock their range shared, in [0, 1] (0: all exclusive).
    pub shared: f64,
    pub seconds: f64,
    pub seed: u64,
}

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Transactions that finished (released their locks).
    pub committed: u64,
    pub elapsed: Duration,
    /// Transactions that waited for a lock.
    pub blocked: u64,
    /// Blocked transactions that ran through [`RangeLockManager::pick_blocked`].
    pub picked: u64,
}

impl Outcome {
    pub fn per_sec(&self) -> f64 {
        self.committed as f64 / self.elapsed.as_secs_f64()
    }
}

/// SplitMix64: a small, fast, seedable generator (the run needs no more).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [0, 2^bits).
    fn bits(&mut self, bits: u8) -> u64 {
        if bits == 0 {
            0
        } else {
            self.next() >> (64 - bits as u32)
        }
    }
}

/// The ranges of a run (see the module docs).
pub struct Ranges {
    key_bits: u8,
    shared_prefix: u8,
    rng: Rng,
}

impl Ranges {
    pub fn new(key_bits: u8, shared_prefix: u8, seed: u64) -> Self {
        assert!(shared_prefix <= key_bits && key_bits <= 56);
        Ranges {
            key_bits,
            shared_prefix,
            rng: Rng(seed),
        }
    }
    pub fn draw(&mut self) -> KeyRange {
        let free = self.key_bits - self.shared_prefix;
        let block = self.rng.bits(self.shared_prefix) << free;
        let (a, b) = (self.rng.bits(free), self.rng.bits(free));
        KeyRange {
            lo: block | a.min(b),
            hi: block | a.max(b),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Txn {
    delayed: bool,
}

/// Runs `m` under `cfg` (see the module docs).
pub fn run<M: RangeLockManager + ?Sized>(m: &mut M, cfg: &Config) -> Outcome {
    let mut ranges = Ranges::new(cfg.key_bits, cfg.shared_prefix, cfg.seed);
    let mut rng = Rng(cfg.seed ^ 0x5DEE_CE66_D1CE_4E5B);
    let mut txns: Vec<Txn> = Vec::new();
    let mut free: Vec<TxnId> = Vec::new();
    let mut delayed: VecDeque<(Instant, TxnId)> = VecDeque::new();
    let mut ready: Vec<TxnId> = Vec::new();
    let mut runnable: Vec<TxnId> = Vec::new();
    let mut out = Outcome::default();
    let mut blocked = 0usize;
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(cfg.seconds);
    let mut now = start;
    let mut turns = 0u32;
    loop {
        turns = turns.wrapping_add(1);
        if !delayed.is_empty() || turns.is_multiple_of(64) {
            now = Instant::now();
            if now >= deadline {
                break;
            }
        }
        // Delays that are over: those transactions finish.
        while let Some(&(t, id)) = delayed.front() {
            if t > now {
                break;
            }
            delayed.pop_front();
            m.release(id, &mut ready);
            free.push(id);
            out.committed += 1;
        }
        // Runnable transactions run: wait, or finish at once (which may make others runnable).
        while !ready.is_empty() {
            runnable.append(&mut ready);
            for id in runnable.drain(..) {
                blocked -= 1;
                if txns[id].delayed {
                    delayed.push_back((now + cfg.delay, id));
                } else {
                    m.release(id, &mut ready);
                    free.push(id);
                    out.committed += 1;
                }
            }
        }
        if blocked < cfg.blocked_limit && txns.len() - free.len() < MAX_IN_FLIGHT {
            let id = free.pop().unwrap_or_else(|| {
                txns.push(Txn { delayed: false });
                txns.len() - 1
            });
            txns[id].delayed = rng.unit() < cfg.delayed;
            let mode = if rng.unit() < cfg.shared {
                Mode::Shared
            } else {
                Mode::Exclusive
            };
            // Counted as blocked until it runs (the loop above counts every runnable one out).
            blocked += 1;
            if m.acquire(id, ranges.draw(), mode) {
                ready.push(id);
            } else {
                out.blocked += 1;
            }
            continue;
        }
        if let Some(id) = m.pick_blocked() {
            out.picked += 1;
            ready.push(id);
            continue;
        }
        if blocked > 0 && delayed.is_empty() {
            panic!(
                "{}: {blocked} transactions blocked and nothing running",
                m.name()
            );
        }
        std::hint::spin_loop();
    }
    out.elapsed = now - start;
    // Drain: let everything finish, so the manager ends empty (checked by the tests).
    loop {
        while let Some((_, id)) = delayed.pop_front() {
            m.release(id, &mut ready);
        }
        if ready.is_empty() {
            break;
        }
        for id in std::mem::take(&mut ready) {
            m.release(id, &mut ready);
        }
    }
    out
}
