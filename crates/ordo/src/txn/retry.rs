//! Re-running aborted transactions with randomized exponential backoff.

use super::error::{Abort, TxResult};
use std::time::Duration;

/// How to retry.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// Give up after this many attempts (0: never give up on a retryable abort).
    pub max_attempts: u32,
    /// Backoff before the first retry; doubles each retry up to `max_backoff`, with random jitter.
    pub base_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 0,
            base_backoff: Duration::from_micros(1),
            max_backoff: Duration::from_micros(200),
        }
    }
}

/// Per-caller backoff state (a tiny RNG for jitter; no allocation, no syscalls for short waits).
#[derive(Debug)]
pub struct Backoff {
    policy: RetryPolicy,
    rng: u64,
}

impl Backoff {
    pub fn new(policy: RetryPolicy, seed: u64) -> Self {
        Backoff {
            policy,
            rng: seed | 1,
        }
    }

    fn next_rand(&mut self) -> u64 {
        // xorshift64*
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Waits before retry number `attempt` (1 = first retry).
    pub fn wait(&mut self, attempt: u32) {
        let base = self.policy.base_backoff.as_nanos() as u64;
        let cap = self.policy.max_backoff.as_nanos() as u64;
        let limit = base.saturating_mul(1u64 << attempt.min(20)).min(cap).max(1);
        let ns = self.next_rand() % limit;
        if ns < 20_000 {
            let start = std::time::Instant::now();
            while (start.elapsed().as_nanos() as u64) < ns {
                std::hint::spin_loop();
            }
        } else {
            std::thread::sleep(Duration::from_nanos(ns));
        }
    }

    /// Runs `attempt` until it commits, its abort is not retryable, or the policy gives up.
    /// `on_abort` sees every abort (for statistics). Returns the value and the number of attempts.
    pub fn run<R>(
        &mut self,
        mut attempt: impl FnMut() -> TxResult<R>,
        mut on_abort: impl FnMut(&Abort),
    ) -> Result<(R, u32), Abort> {
        let mut n = 0;
        loop {
            n += 1;
            match attempt() {
                Ok(v) => return Ok((v, n)),
                Err(a) => {
                    on_abort(&a);
                    if !a.is_retryable()
                        || (self.policy.max_attempts != 0 && n >= self.policy.max_attempts)
                    {
                        return Err(a);
                    }
                    self.wait(n);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::txn::AbortReason;

    #[test]
    fn retries_until_commit_and_counts_aborts() {
        let mut b = Backoff::new(RetryPolicy::default(), 7);
        let mut left = 3;
        let mut seen = Vec::new();
        let r = b.run(
            || {
                if left > 0 {
                    left -= 1;
                    Err(Abort::new(AbortReason::LockConflict))
                } else {
                    Ok(42)
                }
            },
            |a| seen.push(a.reason),
        );
        assert_eq!(r, Ok((42, 4)));
        assert_eq!(seen, vec![AbortReason::LockConflict; 3]);
    }

    #[test]
    fn user_aborts_are_not_retried() {
        let mut b = Backoff::new(RetryPolicy::default(), 7);
        let mut calls = 0;
        let r: Result<((), u32), _> = b.run(
            || {
                calls += 1;
                Err(Abort::user("no"))
            },
            |_| {},
        );
        assert_eq!(r.unwrap_err().reason, AbortReason::User);
        assert_eq!(calls, 1);
    }

    #[test]
    fn gives_up_after_max_attempts() {
        let policy = RetryPolicy {
            max_attempts: 5,
            ..RetryPolicy::default()
        };
        let mut b = Backoff::new(policy, 1);
        let mut calls = 0;
        let r: Result<((), u32), _> = b.run(
            || {
                calls += 1;
                Err(Abort::new(AbortReason::Validation))
            },
            |_| {},
        );
        assert!(r.is_err());
        assert_eq!(calls, 5);
    }
}
