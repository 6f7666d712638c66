//! MariaDB (or MySQL) through the pure-Rust `mysql` client: one TCP connection per worker, binary
//! protocol prepared statements cached per connection by [`Stmt::id`], InnoDB's own isolation
//! levels. DIBS runs the engine at READ UNCOMMITTED, as the paper ran it over MySQL (§4.5).
//!
//! Four choices of the client's defaults, and one of the server's, are overridden:
//! - the connection goes where the URL says: by default the client, once connected over TCP to a
//!   server on this host, asks for the server's unix socket and reconnects through it, which
//!   would put MariaDB and PostgreSQL (TCP) on different transports (`?prefer_socket=true` in the
//!   URL asks for it);
//! - the client's own statement cache is off (`stmt_cache_size = 0`): its LRU would close a
//!   statement on the server that this connection's cache still holds, once a workload has more
//!   statements than its capacity;
//! - `CLIENT_FOUND_ROWS`: an `UPDATE` reports the rows it matched, as SQLite and PostgreSQL do,
//!   not only those whose value changed;
//! - bounded waits: connecting gives up after a few seconds (and the handshake a few more, see
//!   `net.rs`), and a read or write that the server leaves unanswered for a minute is an error,
//!   so a missing or dead server never hangs a run; a row lock wait gives up after 5 s
//!   (`innodb_lock_wait_timeout`, 50 s by default), as PostgreSQL's `lock_timeout` does here.

use crate::conn::{Backend, Conn, Intent, Level, Outcome, Stmt, Value};
use crate::error::{Error, Result, Retry};
use crate::net;
use mysql::consts::{CapabilityFlags, ColumnType};
use mysql::prelude::Queryable;
use std::sync::OnceLock;
use std::time::Duration;

const NAME: &str = "mariadb";
const HINT: &str = "scripts/servers/mariadb.sh start";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const IO_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the handshake may take after the TCP connect, before the server counts as absent.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a statement waits for a row lock before error 1205 ([`Retry::Busy`]).
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// A MariaDB server and how to reach it.
#[derive(Debug)]
pub struct Mariadb {
    opts: mysql::Opts,
    /// Connect and handshake together.
    connect_deadline: Duration,
    /// `SELECT VERSION()`, read by the first connection.
    version: OnceLock<String>,
}

impl Mariadb {
    /// The server at `url` (`mysql://user:password@host:port/database`); connects only in
    /// [`Backend::connect`].
    pub fn new(url: &str) -> Result<Self> {
        let opts = mysql::Opts::from_url(url)
            .map_err(|e| Error::Input(format!("mariadb: bad URL {url:?}: {e}")))?;
        let connect_timeout = opts.get_tcp_connect_timeout().unwrap_or(CONNECT_TIMEOUT);
        let read_timeout = opts.get_read_timeout().copied().unwrap_or(IO_TIMEOUT);
        let write_timeout = opts.get_write_timeout().copied().unwrap_or(IO_TIMEOUT);
        let caps = opts.get_additional_capabilities() | CapabilityFlags::CLIENT_FOUND_ROWS;
        let prefer_socket = url.contains("prefer_socket=") && opts.get_prefer_socket();
        let opts = mysql::OptsBuilder::from_opts(opts)
            .prefer_socket(prefer_socket)
            .tcp_connect_timeout(Some(connect_timeout))
            .read_timeout(Some(read_timeout))
            .write_timeout(Some(write_timeout))
            .stmt_cache_size(0)
            .init(vec![format!(
                "SET SESSION innodb_lock_wait_timeout = {}",
                LOCK_WAIT.as_secs()
            )])
            .additional_capabilities(caps);
        Ok(Mariadb {
            opts: opts.into(),
            connect_deadline: connect_timeout + HANDSHAKE_TIMEOUT,
            version: OnceLock::new(),
        })
    }

    fn open(&self) -> Result<MariadbConn> {
        let opts = self.opts.clone();
        let mut conn = match net::within(self.connect_deadline, move || mysql::Conn::new(opts)) {
            Some(r) => r.map_err(my_error)?,
            None => {
                return Err(Error::Unavailable {
                    backend: NAME,
                    detail: format!(
                        "{}:{} did not complete a handshake within {:?}",
                        self.opts.get_ip_or_hostname(),
                        self.opts.get_tcp_port(),
                        self.connect_deadline
                    ),
                    hint: HINT,
                })
            }
        };
        if self.version.get().is_none() {
            let v: Option<String> = conn.query_first("SELECT VERSION()").map_err(my_error)?;
            let _ = self.version.set(v.unwrap_or_default());
        }
        Ok(MariadbConn {
            conn,
            stmts: Vec::new(),
            level: None,
        })
    }
}

impl Backend for Mariadb {
    fn name(&self) -> &'static str {
        NAME
    }

    fn connect(&self) -> Result<Box<dyn Conn>> {
        Ok(Box::new(self.open()?))
    }

    fn levels(&self) -> &'static [Level] {
        &[
            Level::ReadUncommitted,
            Level::ReadCommitted,
            Level::RepeatableRead,
            Level::Serializable,
        ]
    }

    fn weak_level(&self) -> Level {
        Level::ReadUncommitted
    }

    fn describe(&self) -> serde_json::Value {
        if self.version.get().is_none() {
            // Connecting records the version; a server that cannot be reached leaves it null.
            let _ = self.open();
        }
        serde_json::json!({
            "engine": NAME,
            "version": self.version.get(),
            "host": self.opts.get_ip_or_hostname(),
            "port": self.opts.get_tcp_port(),
            "database": self.opts.get_db_name(),
        })
    }
}

struct MariadbConn {
    conn: mysql::Conn,
    /// Prepared statements by [`Stmt::id`], with the text each was prepared from.
    stmts: Vec<Option<(String, mysql::Statement)>>,
    /// The session's isolation level as last set, so `begin` sets it only when it changes.
    level: Option<Level>,
}

impl MariadbConn {
    fn prepared(&mut self, stmt: &Stmt<'_>) -> Result<mysql::Statement> {
        if let Some(Some((sql, s))) = self.stmts.get(stmt.id) {
            if sql == stmt.sql {
                return Ok(s.clone());
            }
        }
        let s = self.conn.prep(stmt.sql).map_err(my_error)?;
        if self.stmts.len() <= stmt.id {
            self.stmts.resize_with(stmt.id + 1, || None);
        }
        self.stmts[stmt.id] = Some((stmt.sql.to_owned(), s.clone()));
        Ok(s)
    }
}

fn params(values: &[Value]) -> mysql::Params {
    if values.is_empty() {
        return mysql::Params::Empty;
    }
    mysql::Params::Positional(
        values
            .iter()
            .map(|v| match v {
                Value::Null => mysql::Value::NULL,
                Value::Int(i) => mysql::Value::Int(*i),
                Value::Text(s) => mysql::Value::Bytes(s.as_bytes().to_vec()),
            })
            .collect(),
    )
}

fn value(v: mysql::Value, ty: ColumnType) -> Value {
    match v {
        mysql::Value::NULL => Value::Null,
        mysql::Value::Int(i) => Value::Int(i),
        mysql::Value::UInt(u) => {
            i64::try_from(u).map_or_else(|_| Value::Text(u.to_string()), Value::Int)
        }
        mysql::Value::Bytes(b) => {
            let s = String::from_utf8(b)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            // `SUM` of integers is a DECIMAL, which the server sends as text.
            if matches!(
                ty,
                ColumnType::MYSQL_TYPE_NEWDECIMAL | ColumnType::MYSQL_TYPE_DECIMAL
            ) {
                if let Ok(i) = s.parse() {
                    return Value::Int(i);
                }
            }
            Value::Text(s)
        }
        mysql::Value::Float(f) => Value::Text(f.to_string()),
        mysql::Value::Double(f) => Value::Text(f.to_string()),
        other => Value::Text(other.as_sql(true).trim_matches('\'').to_owned()),
    }
}

fn my_error(e: mysql::Error) -> Error {
    let unavailable = |detail: String| Error::Unavailable {
        backend: NAME,
        detail,
        hint: HINT,
    };
    match e {
        mysql::Error::MySqlError(ref m) => {
            let why = match m.code {
                1213 => Some(Retry::Deadlock),
                1205 => Some(Retry::Busy),
                // ER_CHECKREAD: a REPEATABLE READ transaction's snapshot went stale
                // (`innodb_snapshot_isolation`, on by default from MariaDB 11.6).
                1020 => Some(Retry::Serialization),
                // Shutdown in progress, connection killed, too many connections.
                1053 | 1927 | 1040 => return unavailable(m.to_string()),
                _ => None,
            };
            match why {
                Some(why) => Error::Retry {
                    backend: NAME,
                    why,
                    detail: m.to_string(),
                },
                None => Error::engine(NAME, m),
            }
        }
        mysql::Error::IoError(ref io) => unavailable(io.to_string()),
        mysql::Error::CodecError(ref c) => unavailable(c.to_string()),
        mysql::Error::DriverError(ref d) => match d {
            mysql::DriverError::ConnectTimeout
            | mysql::DriverError::CouldNotConnect(_)
            | mysql::DriverError::Timeout
            | mysql::DriverError::PacketOutOfSync
            | mysql::DriverError::SetupError => unavailable(d.to_string()),
            _ => Error::engine(NAME, d),
        },
        other => Error::engine(NAME, other),
    }
}

impl Conn for MariadbConn {
    fn batch(&mut self, sql: &str) -> Result<()> {
        // `query_drop` would drop the results of a multi-statement batch unread, and with them
        // the error of any statement after the first: read every result set.
        let mut res = self.conn.query_iter(sql).map_err(my_error)?;
        while let Some(set) = res.iter() {
            for row in set {
                row.map_err(my_error)?;
            }
        }
        Ok(())
    }

    fn query(
        &mut self,
        stmt: &Stmt<'_>,
        params_: &[Value],
        out: &mut Vec<Vec<Value>>,
    ) -> Result<()> {
        out.clear();
        let s = self.prepared(stmt)?;
        let res = self.conn.exec_iter(&s, params(params_)).map_err(my_error)?;
        for row in res {
            let row = row.map_err(my_error)?;
            let types: Vec<ColumnType> =
                row.columns_ref().iter().map(|c| c.column_type()).collect();
            out.push(
                row.unwrap()
                    .into_iter()
                    .zip(types)
                    .map(|(v, t)| value(v, t))
                    .collect(),
            );
        }
        Ok(())
    }

    fn simple(&mut self, sql: &str) -> Result<Outcome> {
        let mut res = self.conn.query_iter(sql).map_err(my_error)?;
        let mut out = Outcome::default();
        let mut first = true;
        while let Some(set) = res.iter() {
            if first {
                out.columns = set
                    .columns()
                    .as_ref()
                    .iter()
                    .map(|c| c.name_str().into_owned())
                    .collect();
                out.changed = set.affected_rows();
            }
            for row in set {
                let row = row.map_err(my_error)?;
                if first {
                    let types: Vec<ColumnType> =
                        row.columns_ref().iter().map(|c| c.column_type()).collect();
                    out.rows.push(
                        row.unwrap()
                            .into_iter()
                            .zip(types)
                            .map(|(v, t)| value(v, t))
                            .collect(),
                    );
                }
            }
            first = false;
        }
        Ok(out)
    }

    fn execute(&mut self, stmt: &Stmt<'_>, params_: &[Value]) -> Result<u64> {
        let s = self.prepared(stmt)?;
        let mut res = self.conn.exec_iter(&s, params(params_)).map_err(my_error)?;
        let n = res.affected_rows();
        while let Some(set) = res.iter() {
            for row in set {
                row.map_err(my_error)?;
            }
        }
        Ok(n)
    }

    fn begin(&mut self, level: Level, _intent: Intent) -> Result<()> {
        if self.level != Some(level) {
            self.level = None;
            self.batch(&format!(
                "SET SESSION TRANSACTION ISOLATION LEVEL {}",
                level.sql()
            ))?;
            self.level = Some(level);
        }
        self.batch("START TRANSACTION")
    }

    fn commit(&mut self) -> Result<()> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) -> Result<()> {
        self.batch("ROLLBACK")
    }
}
