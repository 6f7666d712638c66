//! Isolation specs in the format of PostgreSQL's isolationtester (`src/test/isolation/specs`), run
//! against any Ordo protocol.
//!
//! ```text
//! setup    { CREATE TABLE t (k INT PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 0); }
//! teardown { DROP TABLE t; }
//! session s1
//! step r1  { BEGIN; SELECT v FROM t WHERE k = 1; }
//! step w1  { UPDATE t SET v = 1 WHERE k = 1; COMMIT; }
//! session s2
//! step r2  { BEGIN; SELECT v FROM t WHERE k = 1; }
//! step w2  { UPDATE t SET v = 2 WHERE k = 1; COMMIT; }
//! permutation r1 r2 w1 w2
//! ```
//!
//! * [`parse`] reads the format (with file and line in every error);
//! * [`permute`] enumerates the permutations when a spec gives none: every interleaving that keeps
//!   each session's step order;
//! * [`run`] runs each permutation on a fresh engine, one thread per session, and reports steps,
//!   results, errors and `<waiting ...>` markers as isolationtester does; a waiting step is detected
//!   from the protocol's own wait state ([`ordo::txn::wait`]), never from a timeout, and a blocked
//!   step that nothing can unblock is cancelled (57014) as isolationtester cancels it; a failing
//!   `setup` stops the run;
//! * [`isolation`] maps isolation level names to protocols.

pub mod isolation;
pub mod parse;
pub mod permute;
pub mod run;

pub use parse::{parse_spec, Spec, SpecError};
pub use run::{run_spec, RunError, RunOptions};
