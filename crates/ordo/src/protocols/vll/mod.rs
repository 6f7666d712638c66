//! `vll` — very lightweight locking (Ren, Thomson, Abadi, VLDB J. 2015).
//!
//! Reusable parts: [`counters`] (C_X/C_S, colocated and arrayed), [`txn_queue`] (the TxnQueue with
//! the head rule and blocked-count admission), [`sca`] (selective contention analysis, Fig. 4).

pub mod counters;
pub mod sca;
pub mod txn_queue;
