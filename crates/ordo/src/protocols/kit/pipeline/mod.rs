//! Early write visibility with tracked dependencies: what IC3 (`ic3`) and Callas's Runtime
//! Pipelining (`callas`) share.
//!
//! Both cut a transaction into pieces that each run as a mini-transaction under short **piece
//! locks**, their writes visible to others as soon as the piece ends. What keeps whole
//! transactions isolated is bookkeeping beside each record and each transaction:
//!
//! | file            | what it is |
//! |-----------------|------------|
//! | [`access_list`] | per record: its piece lock and the list of uncommitted accessors; who a newcomer depends on |
//! | [`board`]       | per worker: the state and progress of its transaction, and whom it waits for (cycle detection) |
//! | [`ending`]      | commit after the transactions depended on (cascading aborts); abort record by record |
//! | [`piece`]       | a piece's [`Tx`](crate::txn::Tx) over the in-place executor, and the undo log kept per record |
//! | [`alone`]       | a transaction run alone under the database-wide barrier (interactive ones, and what cannot be pipelined) |
//!
//! The protocols differ in *when* a piece may run (IC3: after the transactions it depends on
//! finished their conflicting pieces; Callas: after they passed the piece's rank) and in what
//! surrounds the pieces (Callas's nexus locks between groups).

pub mod access_list;
pub mod alone;
pub mod board;
pub mod ending;
pub mod piece;
