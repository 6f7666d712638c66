//! The outcome check: was what a permutation's committed transactions saw, and the state they left,
//! what some serial execution of them gives?
//!
//! A real engine keeps no version history a client could read back, so the spec runner judges the
//! *outcome*: it replays the committed transactions one at a time, on a fresh copy of the spec's
//! setup, in each order that keeps every session's own order, and compares each statement's result
//! (rows as a multiset, rows changed, or "an error") and, at the end, every table of the spec with
//! what the permutation produced. An order that reproduces all of it is a serial execution with the
//! same reads and the same final state: the outcome is serializable. When none does, no serial
//! execution could have produced what the clients saw — write skew, a lost update, a dirty read of
//! an aborted write each show up this way. (Aborted transactions are not replayed: what they read
//! is not judged, as serializability judges committed transactions only. Nor is a statement that
//! failed inside a transaction that still committed — a MariaDB lock wait timeout, SQLite's busy
//! error: the engine undid that statement alone, so it had no effect to reproduce.)

use super::{run_block, Cleanup};
use crate::conn::{Backend, Conn, Intent, Level, Outcome};
use crate::error::Result;
use ordo_sql::locks::Schema;
use ordo_sql::spec::Spec;

/// What one statement returned, as the check compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// Rows, each as text, sorted (SQL gives no order without ORDER BY).
    Rows(Vec<Vec<String>>),
    /// A statement without rows: the rows it changed.
    Changed(u64),
    Error,
}

impl Observed {
    pub fn of(o: &Outcome) -> Self {
        if o.columns.is_empty() {
            return Observed::Changed(o.changed);
        }
        Observed::Rows(text_rows(o))
    }
}

fn text_rows(o: &Outcome) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = o
        .rows
        .iter()
        .map(|r| r.iter().map(|v| v.to_string()).collect())
        .collect();
    rows.sort();
    rows
}

/// A committed transaction: its session, its place in the session, and its statements.
#[derive(Debug, Clone)]
pub struct TxnLog {
    pub session: usize,
    pub seq: usize,
    pub stmts: Vec<(String, Observed)>,
}

/// Every table of the schema, sorted: the final state compared.
pub type State = Vec<(String, Vec<Vec<String>>)>;

pub fn state(conn: &mut dyn Conn, schema: &Schema) -> Result<State> {
    schema
        .tables
        .iter()
        .map(|t| {
            let o = conn.simple(&format!("SELECT * FROM {}", t.name))?;
            Ok((t.name.clone(), text_rows(&o)))
        })
        .collect()
}

/// The check's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// This order (indices into the logs) reproduces the outcome.
    Serial(Vec<usize>),
    /// No order does; `orders` were tried.
    NotSerial { orders: usize },
    /// Too many transactions to try every order.
    TooMany(usize),
}

/// Most committed transactions whose orders are all tried (7! = 5,040 replays).
pub const MAX_TXNS: usize = 7;

/// Every order of `txns` that keeps each session's order.
fn orders(txns: &[TxnLog]) -> Vec<Vec<usize>> {
    fn go(txns: &[TxnLog], used: &mut Vec<bool>, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == txns.len() {
            out.push(cur.clone());
            return;
        }
        for i in 0..txns.len() {
            // The next of its session: every earlier one of the session is placed.
            let ready = !used[i]
                && txns
                    .iter()
                    .enumerate()
                    .all(|(j, t)| used[j] || t.session != txns[i].session || t.seq >= txns[i].seq);
            if ready {
                used[i] = true;
                cur.push(i);
                go(txns, used, cur, out);
                cur.pop();
                used[i] = false;
            }
        }
    }
    let mut out = Vec::new();
    go(
        txns,
        &mut vec![false; txns.len()],
        &mut Vec::new(),
        &mut out,
    );
    out
}

/// Replays `txns` in each order until one reproduces the reads and `final_state`. `conn` starts
/// without the spec's tables (the caller ran `cleanup`) and is left so: each order runs on a fresh
/// setup and is cleaned up after.
pub fn check(
    backend: &dyn Backend,
    conn: &mut dyn Conn,
    spec: &Spec,
    cleanup: &Cleanup,
    schema: &Schema,
    txns: &[TxnLog],
    final_state: &State,
) -> Result<Verdict> {
    if txns.len() > MAX_TXNS {
        return Ok(Verdict::TooMany(txns.len()));
    }
    let all = orders(txns);
    for order in &all {
        let mut ok = spec.setup.iter().all(|b| run_block(conn, &b.sql).is_ok());
        for &i in order {
            if !ok {
                break;
            }
            ok = replay(backend, conn, &txns[i]);
        }
        let same = if ok {
            state(conn, schema).map(|s| s == *final_state)
        } else {
            Ok(false)
        };
        cleanup.run(conn);
        if same? {
            return Ok(Verdict::Serial(order.clone()));
        }
    }
    Ok(Verdict::NotSerial { orders: all.len() })
}

/// Runs one transaction alone; whether every statement returned what it had returned.
fn replay(backend: &dyn Backend, conn: &mut dyn Conn, t: &TxnLog) -> bool {
    let level = backend
        .levels()
        .last()
        .copied()
        .unwrap_or(Level::Serializable);
    if conn.begin(level, Intent::Write).is_err() {
        return false;
    }
    for (sql, seen) in &t.stmts {
        if *seen == Observed::Error {
            continue;
        }
        let got = match conn.simple(sql) {
            Ok(o) => Observed::of(&o),
            Err(_) => Observed::Error,
        };
        if got != *seen {
            let _ = conn.rollback();
            return false;
        }
    }
    conn.commit().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(session: usize, seq: usize) -> TxnLog {
        TxnLog {
            session,
            seq,
            stmts: Vec::new(),
        }
    }

    #[test]
    fn orders_keep_each_sessions_order() {
        let txns = [log(0, 1), log(0, 2), log(1, 1)];
        let o = orders(&txns);
        assert_eq!(o, vec![vec![0, 1, 2], vec![0, 2, 1], vec![2, 0, 1]]);
        assert_eq!(orders(&[log(0, 1), log(1, 1), log(2, 1)]).len(), 6);
        assert_eq!(orders(&[]), vec![Vec::<usize>::new()]);
    }
}
