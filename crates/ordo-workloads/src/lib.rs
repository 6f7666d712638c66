//! The benchmarks of the papers, each written once as transaction programs every protocol can run.
//!
//! * [`tpcc`] — TPC-C (all five transactions, consistency conditions 1–4) and TPC-C++ (Credit Check).
//! * [`vll_micro`] — the VLL paper's micro-benchmark (1 hot + 9 cold records, contention index).
//! * [`vll_range`] — the VLL paper's range micro-benchmark (one range per transaction; Fig. 15, VLLR vs VLL).
//! * [`pwv_micro`] — the PWV paper's write-visibility micro-benchmark (1 hot + 9 cold, the hot update
//!   moved from last to first; Fig. 1).
//! * [`salt_micro`] — Salt's three microbenchmarks (contention ratio, contention position,
//!   read/write ratio; Xie 2016 §3.6.3), writers BASE-ified one update per alkaline subtransaction.
//! * [`ycsb`] — YCSB as DBx1000 and the VLL, PWV and DIBS papers configure it (Zipfian or hot-set keys).
//! * [`smallbank`] — SmallBank as the SSI thesis runs it (§2.8, §5.1): the write-skew-prone banking mix.
//! * [`sibench`] — the SSI thesis's sibench (§5.2): a full-table min query against single-row updates.
//! * [`ticketing`] — ticket sales after Salt's Fusion Ticket set-up (one event, two categories of
//!   10,000 seats; create-order BASE-ified; no seat sold twice, counts match).
//! * [`front_accounting`] — a retail company's ERP after the thesis's Front Accounting workload
//!   (17 transactions, 100 goods, a bulk purchase per ~1,000 orders; stock, invoices, payments and
//!   document numbers match).
//! * [`callas_micro`] — Callas's microbenchmarks (nexus-lock overhead, execution frequency and
//!   contention across groups, application rollbacks; Xie 2016 §4.6.4–4.6.6), one piece per
//!   operation, each transaction type named for grouping.
//! * [`tatp`] — TATP (Neuvonen et al.), the telecom benchmark DIBS uses: 80/20 reads/writes.
//! * [`subscriber_scan`] — DIBS's SubscriberScan: reads and updates of the rows a disjunctive
//!   predicate on TATP's subscriber names (§4.1).
//! * [`seats`] — SEATS (OLTP-Bench), the airline ticketing benchmark DIBS also runs: six
//!   transactions, 45% read-only by type, flight search by predicate; no seat booked twice, seat
//!   counts match.
//!
//! Each declares its command-line options beside it (`<workload>/options.rs`), with its defaults for
//! a benchmark or a verification run ([`Purpose`]); the [`catalog`] lists them all by name and
//! builds one from the options given. A configuration a workload cannot run is an [`Error`], which
//! names the option at fault.

pub mod base_ified;
pub mod callas_micro;
pub mod catalog;
pub mod error;
pub mod front_accounting;
pub mod inspect;
pub mod ledger;
pub mod purpose;
pub mod pwv_micro;
pub mod salt_micro;
pub mod seats;
pub mod sibench;
pub mod smallbank;
pub mod subscriber_scan;
pub mod tatp;
#[cfg(test)]
mod testkit;
pub mod ticketing;
pub mod tpcc;
pub mod vll_micro;
pub mod vll_range;
pub mod ycsb;
pub mod zipf;

pub use catalog::{AnyWorkload, WorkloadVisitor};
pub use error::{Error, Result};
pub use purpose::Purpose;
