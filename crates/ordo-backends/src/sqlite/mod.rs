//! SQLite through rusqlite's bundled SQLite (nothing to install): one file, WAL journal,
//! `synchronous=FULL` (every commit is durable: one sync of the WAL), a large page cache, one
//! connection per worker, and every file opened through the sync-counting VFS ([`vfs`]).
//!
//! SQLite is serializable by construction: readers see a snapshot, and one writer at a time holds
//! the database's write lock until its commit is durable (§4.4: "a new write transaction may not
//! begin until the changes caused by the previous write transaction are flushed"). A transaction
//! that will write begins with `BEGIN IMMEDIATE`, taking that lock up front, so that it never fails
//! to upgrade a stale read snapshot; a lock wait past the busy timeout is a retryable
//! [`Retry::Busy`].

pub mod vfs;

#[cfg(test)]
mod tests;

use crate::conn::{Backend, Conn, Intent, Level, Outcome, Stmt, Value};
use crate::error::{Error, Result, Retry};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{ErrorCode, OpenFlags, ToSql};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const NAME: &str = "sqlite";

/// A SQLite database file and how to open it.
#[derive(Debug, Clone)]
pub struct Sqlite {
    path: PathBuf,
    /// Page cache per connection, in KiB.
    cache_kib: u64,
    busy: Duration,
}

impl Sqlite {
    /// The database at `path` (created when missing), through the counting VFS.
    pub fn new(path: &Path) -> Result<Self> {
        vfs::register().map_err(|e| Error::engine(NAME, e))?;
        Ok(Sqlite {
            path: path.to_path_buf(),
            cache_kib: 256 * 1024,
            busy: Duration::from_secs(5),
        })
    }

    /// How long a connection waits for the write lock before [`Retry::Busy`] (5 s by default).
    pub fn busy_timeout(mut self, busy: Duration) -> Self {
        self.busy = busy;
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the database and its WAL and shared-memory files (before a fresh load).
    pub fn remove(&self) -> Result<()> {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(Error::Input(format!(
                        "sqlite: cannot remove {}: {e}",
                        PathBuf::from(p).display()
                    )))
                }
            }
        }
        Ok(())
    }
}

impl Backend for Sqlite {
    fn name(&self) -> &'static str {
        NAME
    }

    fn connect(&self) -> Result<Box<dyn Conn>> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = rusqlite::Connection::open_with_flags_and_vfs(&self.path, flags, vfs::NAME)
            .map_err(|e| {
                Error::Input(format!("sqlite: cannot open {}: {e}", self.path.display()))
            })?;
        // SQLite's own busy handler sleeps 1, 2, 5, 10… ms between tries, ten times a write
        // transaction's length here: a writer that waits for the write lock would sleep through
        // several commits. This one polls every POLL, up to `busy` in all.
        let busy = Box::new(Busy {
            limit: self.busy,
            since: Cell::new(Instant::now()),
        });
        // SAFETY: the handle is this open connection's; `busy` is kept beside it in
        // `SqliteConn`, declared after the connection, so it outlives it.
        let rc = unsafe {
            rusqlite::ffi::sqlite3_busy_handler(
                conn.handle(),
                Some(busy_poll),
                &*busy as *const Busy as *mut std::ffi::c_void,
            )
        };
        if rc != rusqlite::ffi::SQLITE_OK {
            return Err(Error::engine(
                NAME,
                format!("sqlite3_busy_handler failed ({rc})"),
            ));
        }
        conn.set_prepared_statement_cache_capacity(64);
        conn.execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-{};",
            self.cache_kib
        ))
        .map_err(sql_error)?;
        Ok(Box::new(SqliteConn { conn, _busy: busy }))
    }

    fn levels(&self) -> &'static [Level] {
        &[Level::Serializable]
    }

    fn weak_level(&self) -> Level {
        Level::Serializable
    }

    fn syncs(&self) -> Option<u64> {
        Some(vfs::syncs())
    }

    fn settle(&self, conn: &mut dyn Conn) -> Result<()> {
        conn.batch("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "engine": "sqlite",
            "version": rusqlite::version(),
            "journal_mode": "wal",
            "synchronous": "full",
            "cache_kib": self.cache_kib,
        })
    }
}

struct SqliteConn {
    conn: rusqlite::Connection,
    /// The busy handler's argument (dropped after the connection).
    _busy: Box<Busy>,
}

/// The busy handler's state: how long one wait may last, and when the current one began.
struct Busy {
    limit: Duration,
    since: Cell<Instant>,
}

/// How often a connection waiting for SQLite's write lock tries again.
const POLL: Duration = Duration::from_micros(20);

/// The busy handler: `false` (give up: `SQLITE_BUSY`) once the wait that began at its first call
/// (`n == 0`) has lasted [`Busy::limit`], else sleep [`POLL`]. (A count of tries would not do: a
/// 20-µs sleep takes several times that, so the wait would last several times the limit.)
unsafe extern "C" fn busy_poll(busy: *mut std::ffi::c_void, n: std::ffi::c_int) -> std::ffi::c_int {
    // SAFETY: the pointer is the connection's `Busy`, alive as long as the connection.
    let busy = &*(busy as *const Busy);
    if n == 0 {
        busy.since.set(Instant::now());
    } else if busy.since.get().elapsed() >= busy.limit {
        return 0;
    }
    std::thread::sleep(POLL);
    1
}

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
        }))
    }
}

fn value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Text(f.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            Value::Text(String::from_utf8_lossy(t).into_owned())
        }
    }
}

fn sql_error(e: rusqlite::Error) -> Error {
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Error::Retry {
            backend: NAME,
            why: Retry::Busy,
            detail: e.to_string(),
        },
        _ => Error::engine(NAME, e),
    }
}

impl Conn for SqliteConn {
    fn batch(&mut self, sql: &str) -> Result<()> {
        self.conn.execute_batch(sql).map_err(sql_error)
    }

    fn query(
        &mut self,
        stmt: &Stmt<'_>,
        params: &[Value],
        out: &mut Vec<Vec<Value>>,
    ) -> Result<()> {
        out.clear();
        let mut s = self.conn.prepare_cached(stmt.sql).map_err(sql_error)?;
        let n = s.column_count();
        let mut rows = s
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(sql_error)?;
        while let Some(row) = rows.next().map_err(sql_error)? {
            let mut r = Vec::with_capacity(n);
            for i in 0..n {
                r.push(value(row.get_ref(i).map_err(sql_error)?));
            }
            out.push(r);
        }
        Ok(())
    }

    fn simple(&mut self, sql: &str) -> Result<Outcome> {
        let mut s = self.conn.prepare(sql).map_err(sql_error)?;
        let n = s.column_count();
        if n == 0 {
            let changed = s.execute([]).map_err(sql_error)? as u64;
            return Ok(Outcome {
                changed,
                ..Outcome::default()
            });
        }
        let columns = s.column_names().map(|c| c.to_string()).collect();
        let mut rows = Vec::new();
        let mut it = s.query([]).map_err(sql_error)?;
        while let Some(row) = it.next().map_err(sql_error)? {
            let mut r = Vec::with_capacity(n);
            for i in 0..n {
                r.push(value(row.get_ref(i).map_err(sql_error)?));
            }
            rows.push(r);
        }
        Ok(Outcome {
            columns,
            rows,
            changed: 0,
        })
    }

    fn execute(&mut self, stmt: &Stmt<'_>, params: &[Value]) -> Result<u64> {
        let mut s = self.conn.prepare_cached(stmt.sql).map_err(sql_error)?;
        s.execute(rusqlite::params_from_iter(params.iter()))
            .map(|n| n as u64)
            .map_err(sql_error)
    }

    fn begin(&mut self, _level: Level, intent: Intent) -> Result<()> {
        self.batch(match intent {
            Intent::Read => "BEGIN DEFERRED",
            Intent::Write => "BEGIN IMMEDIATE",
        })
    }

    fn commit(&mut self) -> Result<()> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) -> Result<()> {
        if self.conn.is_autocommit() {
            return Ok(());
        }
        self.batch("ROLLBACK")
    }
}
