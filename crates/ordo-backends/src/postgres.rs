//! PostgreSQL through the synchronous `postgres` client, without TLS: one connection per worker,
//! statements prepared once per connection and cached by [`Stmt::id`], the `?` placeholders of the
//! workloads' SQL numbered `$1, $2, …` before preparing.
//!
//! Connecting gives up after a few seconds, the handshake after a few more (see `net.rs`). Once
//! connected, the synchronous client has no read timeout: a server that dies closes the
//! connection (an [`Error::Unavailable`]), but one that stops answering without closing it holds
//! the worker.
//!
//! PostgreSQL runs READ UNCOMMITTED as READ COMMITTED, so it offers three levels and DIBS runs it
//! at READ COMMITTED. Every session sets `lock_timeout = '5s'` (at connection start-up, no extra
//! round trip), so that an engine lock wait the layer above cannot see (a wait across DIBS and the
//! engine's own locks) ends as a retryable [`Retry::Busy`] instead of a hang; deadlocks among
//! engine locks are still found first (`deadlock_timeout` is 1 s by default).
//!
//! Parameters are converted to what each parameter's inferred type wants: an integer to `int2`,
//! `int4` or `int8` in binary, anything else in text format for the server to parse (a `Value` to
//! a `text`, `numeric` or `boolean` parameter). Results: integers (and `numeric`s without a
//! fraction, which `sum(bigint)` returns) are [`Value::Int`], text is [`Value::Text`].

use crate::conn::{Backend, Conn, Intent, Level, Outcome, Stmt, Value};
use crate::error::{Error, Result, Retry};
use crate::net;
use bytes::{BufMut, BytesMut};
use postgres::error::SqlState;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{Format, FromSql, IsNull, ToSql, Type};
use postgres::NoTls;
use std::error::Error as StdError;
use std::fmt::Write;
use std::sync::OnceLock;
use std::time::Duration;

const NAME: &str = "postgres";
const HINT: &str = "scripts/servers/postgres.sh start";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const LOCK_TIMEOUT: &str = "5s";
/// How long the handshake may take after the TCP connect, before the server counts as absent.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

type BoxError = Box<dyn StdError + Sync + Send>;

/// A PostgreSQL server and how to reach it.
#[derive(Debug)]
pub struct Postgres {
    config: postgres::Config,
    /// `SHOW server_version`, read by the first connection.
    version: OnceLock<String>,
}

impl Postgres {
    /// The server at `url` (`postgres://user:password@host:port/database`, or a `key=value`
    /// string); connects only in [`Backend::connect`].
    pub fn new(url: &str) -> Result<Self> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| Error::Input(format!("postgres: bad URL {url:?}: {}", chain(&e))))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let options = match config.get_options() {
            Some(o) => format!("{o} -c lock_timeout={LOCK_TIMEOUT}"),
            None => format!("-c lock_timeout={LOCK_TIMEOUT}"),
        };
        config.options(&options);
        if config.get_application_name().is_none() {
            config.application_name("ordo");
        }
        Ok(Postgres {
            config,
            version: OnceLock::new(),
        })
    }

    fn open(&self) -> Result<PostgresConn> {
        let config = self.config.clone();
        let deadline = self
            .config
            .get_connect_timeout()
            .copied()
            .unwrap_or(CONNECT_TIMEOUT)
            + HANDSHAKE_TIMEOUT;
        let mut client = match net::within(deadline, move || config.connect(NoTls)) {
            Some(r) => r.map_err(pg_error)?,
            None => {
                return Err(Error::Unavailable {
                    backend: NAME,
                    detail: format!("the server did not complete a handshake within {deadline:?}"),
                    hint: HINT,
                })
            }
        };
        if self.version.get().is_none() {
            let row = client
                .query_one("SHOW server_version", &[])
                .map_err(pg_error)?;
            let v: String = row.try_get(0).map_err(pg_error)?;
            let _ = self.version.set(v);
        }
        Ok(PostgresConn {
            client,
            stmts: Vec::new(),
        })
    }
}

impl Backend for Postgres {
    fn name(&self) -> &'static str {
        NAME
    }

    fn connect(&self) -> Result<Box<dyn Conn>> {
        Ok(Box::new(self.open()?))
    }

    fn levels(&self) -> &'static [Level] {
        &[
            Level::ReadCommitted,
            Level::RepeatableRead,
            Level::Serializable,
        ]
    }

    fn weak_level(&self) -> Level {
        Level::ReadCommitted
    }

    fn error_ends_transaction(&self, _e: &Error) -> bool {
        // Any error puts the transaction block in the aborted state (its locks released); only
        // ROLLBACK (or COMMIT, which rolls back) leaves it.
        true
    }

    fn settle(&self, conn: &mut dyn Conn) -> Result<()> {
        // Fresh statistics and visibility map after the bulk load.
        conn.batch("VACUUM ANALYZE")
    }

    fn describe(&self) -> serde_json::Value {
        if self.version.get().is_none() {
            // Connecting records the version; a server that cannot be reached leaves it null.
            let _ = self.open();
        }
        let hosts: Vec<String> = self
            .config
            .get_hosts()
            .iter()
            .map(|h| match h {
                postgres::config::Host::Tcp(s) => s.clone(),
                postgres::config::Host::Unix(p) => p.display().to_string(),
            })
            .collect();
        serde_json::json!({
            "engine": NAME,
            "version": self.version.get(),
            "host": hosts.first(),
            "port": self.config.get_ports().first(),
            "database": self.config.get_dbname(),
            "lock_timeout": LOCK_TIMEOUT,
        })
    }
}

struct PostgresConn {
    client: postgres::Client,
    /// Prepared statements by [`Stmt::id`], with the text (before numbering) each came from.
    stmts: Vec<Option<(String, postgres::Statement)>>,
}

impl PostgresConn {
    fn prepared(&mut self, stmt: &Stmt<'_>) -> Result<postgres::Statement> {
        if let Some(Some((sql, s))) = self.stmts.get(stmt.id) {
            if sql == stmt.sql {
                return Ok(s.clone());
            }
        }
        let s = self
            .client
            .prepare(&number_placeholders(stmt.sql))
            .map_err(pg_error)?;
        if self.stmts.len() <= stmt.id {
            self.stmts.resize_with(stmt.id + 1, || None);
        }
        self.stmts[stmt.id] = Some((stmt.sql.to_owned(), s.clone()));
        Ok(s)
    }
}

/// `?` placeholders numbered `$1, $2, …`, skipping over quoted literals and identifiers.
pub fn number_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    let mut quote = None;
    for c in sql.chars() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                out.push(c);
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    out.push(c);
                }
                '?' => {
                    n += 1;
                    let _ = write!(out, "${n}");
                }
                _ => out.push(c),
            },
        }
    }
    out
}

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> std::result::Result<IsNull, BoxError> {
        match (self, ty) {
            (Value::Null, _) => return Ok(IsNull::Yes),
            (Value::Int(i), &Type::INT8) => out.put_i64(*i),
            (Value::Int(i), &Type::INT4) => out.put_i32(i32::try_from(*i)?),
            (Value::Int(i), &Type::INT2) => out.put_i16(i16::try_from(*i)?),
            // Text format (see `encode_format`): the server parses it as the parameter's type.
            (Value::Int(i), _) => {
                let _ = write!(out, "{i}");
            }
            (Value::Text(s), _) => out.put_slice(s.as_bytes()),
        }
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, ty: &Type) -> Format {
        match (self, ty) {
            (Value::Int(_), &Type::INT8 | &Type::INT4 | &Type::INT2) => Format::Binary,
            _ => Format::Text,
        }
    }

    postgres::types::to_sql_checked!();
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> std::result::Result<Self, BoxError> {
        Ok(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Text(f64::from_sql(ty, raw)?.to_string()),
            Type::FLOAT4 => Value::Text(f32::from_sql(ty, raw)?.to_string()),
            Type::NUMERIC => numeric(raw)?,
            _ if <&str as FromSql>::accepts(ty) => {
                Value::Text(<&str>::from_sql(ty, raw)?.to_owned())
            }
            _ => {
                return Err(format!("cannot read a {ty} column; cast it to bigint or text").into())
            }
        })
    }

    fn from_sql_null(_: &Type) -> std::result::Result<Self, BoxError> {
        Ok(Value::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A binary `numeric`: an integer when it has no fraction and fits, its decimal text otherwise.
fn numeric(raw: &[u8]) -> std::result::Result<Value, BoxError> {
    let word = |i: usize| -> std::result::Result<u16, BoxError> {
        raw.get(2 * i..2 * i + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "truncated numeric".into())
    };
    let ndigits = word(0)? as usize;
    let weight = word(1)? as i16 as i64;
    let sign = word(2)?;
    let dscale = word(3)? as i64;
    match sign {
        0x0000 | 0x4000 => {}
        0xC000 => return Ok(Value::Text("NaN".into())),
        0xD000 => return Ok(Value::Text("Infinity".into())),
        0xF000 => return Ok(Value::Text("-Infinity".into())),
        _ => return Err("bad numeric sign".into()),
    }
    let digit = |i: i64| -> std::result::Result<u16, BoxError> {
        if (0..ndigits as i64).contains(&i) {
            word(4 + i as usize)
        } else {
            Ok(0)
        }
    };
    let mut s = String::new();
    if sign == 0x4000 {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for i in 0..=weight {
            if i == 0 {
                let _ = write!(s, "{}", digit(i)?);
            } else {
                let _ = write!(s, "{:04}", digit(i)?);
            }
        }
    }
    if dscale > 0 {
        s.push('.');
        let start = s.len();
        let mut j = 1;
        while ((s.len() - start) as i64) < dscale {
            let _ = write!(s, "{:04}", digit(weight + j)?);
            j += 1;
        }
        s.truncate(start + dscale as usize);
        return Ok(Value::Text(s));
    }
    Ok(s.parse().map_or(Value::Text(s), Value::Int))
}

/// The error and its causes, on one line.
fn chain(e: &dyn StdError) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let _ = write!(s, ": {c}");
        cause = c.source();
    }
    s.replace('\n', " ")
}

fn pg_error(e: postgres::Error) -> Error {
    let unavailable = |detail: String| Error::Unavailable {
        backend: NAME,
        detail,
        hint: HINT,
    };
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        let detail = format!("{} ({}): {}", db.severity(), code.code(), db.message());
        let why = if *code == SqlState::T_R_SERIALIZATION_FAILURE {
            Retry::Serialization
        } else if *code == SqlState::T_R_DEADLOCK_DETECTED {
            Retry::Deadlock
        } else if *code == SqlState::LOCK_NOT_AVAILABLE {
            Retry::Busy
        } else if code.code().starts_with("08")
            || *code == SqlState::ADMIN_SHUTDOWN
            || *code == SqlState::CRASH_SHUTDOWN
            || *code == SqlState::CANNOT_CONNECT_NOW
            || *code == SqlState::TOO_MANY_CONNECTIONS
        {
            return unavailable(detail);
        } else {
            return Error::engine(NAME, detail);
        };
        return Error::Retry {
            backend: NAME,
            why,
            detail,
        };
    }
    let detail = chain(&e);
    let io = {
        let mut cause = e.source();
        let mut found = false;
        while let Some(c) = cause {
            if c.is::<std::io::Error>() {
                found = true;
                break;
            }
            cause = c.source();
        }
        found
    };
    if e.is_closed() || io || detail.starts_with("timeout waiting for server") {
        unavailable(detail)
    } else {
        Error::engine(NAME, detail)
    }
}

impl Conn for PostgresConn {
    fn batch(&mut self, sql: &str) -> Result<()> {
        self.client.batch_execute(sql).map_err(pg_error)
    }

    fn query(
        &mut self,
        stmt: &Stmt<'_>,
        params: &[Value],
        out: &mut Vec<Vec<Value>>,
    ) -> Result<()> {
        out.clear();
        let s = self.prepared(stmt)?;
        let n = s.columns().len();
        let mut rows = self.client.query_raw(&s, params.iter()).map_err(pg_error)?;
        while let Some(row) = rows.next().map_err(pg_error)? {
            let mut r = Vec::with_capacity(n);
            for i in 0..n {
                r.push(row.try_get::<_, Value>(i).map_err(pg_error)?);
            }
            out.push(r);
        }
        Ok(())
    }

    fn simple(&mut self, sql: &str) -> Result<Outcome> {
        use postgres::SimpleQueryMessage as M;
        let mut out = Outcome::default();
        let mut sets = 0;
        for m in self.client.simple_query(sql).map_err(pg_error)? {
            match m {
                M::RowDescription(cols) => {
                    sets += 1;
                    if sets == 1 {
                        out.columns = cols.iter().map(|c| c.name().to_string()).collect();
                    }
                }
                M::Row(row) if sets <= 1 => {
                    if out.columns.is_empty() {
                        out.columns = row.columns().iter().map(|c| c.name().to_string()).collect();
                    }
                    // The simple protocol sends text: a value that reads as an integer is one.
                    out.rows.push(
                        (0..row.len())
                            .map(|i| match row.get(i) {
                                None => Value::Null,
                                Some(t) => t
                                    .parse()
                                    .map_or_else(|_| Value::Text(t.to_string()), Value::Int),
                            })
                            .collect(),
                    );
                }
                M::CommandComplete(n) if sets <= 1 => out.changed = n,
                _ => {}
            }
        }
        Ok(out)
    }

    fn execute(&mut self, stmt: &Stmt<'_>, params: &[Value]) -> Result<u64> {
        let s = self.prepared(stmt)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        self.client.execute(&s, &refs).map_err(pg_error)
    }

    fn begin(&mut self, level: Level, _intent: Intent) -> Result<()> {
        self.batch(match level {
            Level::ReadUncommitted => "BEGIN ISOLATION LEVEL READ UNCOMMITTED",
            Level::ReadCommitted => "BEGIN ISOLATION LEVEL READ COMMITTED",
            Level::RepeatableRead => "BEGIN ISOLATION LEVEL REPEATABLE READ",
            Level::Serializable => "BEGIN ISOLATION LEVEL SERIALIZABLE",
        })
    }

    fn commit(&mut self) -> Result<()> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) -> Result<()> {
        self.batch("ROLLBACK")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_literals() {
        assert_eq!(
            number_placeholders("SELECT a FROM t WHERE b = ? AND c = '?' AND \"d?\" = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = '?' AND \"d?\" = $2"
        );
        assert_eq!(
            number_placeholders("UPDATE t SET s = 'it''s ?' WHERE k IN (?, ?)"),
            "UPDATE t SET s = 'it''s ?' WHERE k IN ($1, $2)"
        );
        assert_eq!(number_placeholders("SELECT 1"), "SELECT 1");
    }

    fn numeric_bytes(weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut v = Vec::new();
        for w in [digits.len() as u16, weight as u16, sign, dscale] {
            v.extend_from_slice(&w.to_be_bytes());
        }
        for d in digits {
            v.extend_from_slice(&d.to_be_bytes());
        }
        v
    }

    #[test]
    fn numerics_decode() {
        // 123456789 = 1 2345 6789 in base 10,000.
        let n = numeric_bytes(2, 0, 0, &[1, 2345, 6789]);
        assert_eq!(numeric(&n).unwrap(), Value::Int(123_456_789));
        // -50000 = 5 0000, trailing zero groups left out.
        let n = numeric_bytes(1, 0x4000, 0, &[5]);
        assert_eq!(numeric(&n).unwrap(), Value::Int(-50_000));
        let n = numeric_bytes(0, 0, 0, &[]);
        assert_eq!(numeric(&n).unwrap(), Value::Int(0));
        // 12.5 with two decimals: 12 . 5000.
        let n = numeric_bytes(0, 0, 2, &[12, 5000]);
        assert_eq!(numeric(&n).unwrap(), Value::Text("12.50".into()));
        // 0.00012 = 0 . 0001 2000, weight -1.
        let n = numeric_bytes(-1, 0, 5, &[1, 2000]);
        assert_eq!(numeric(&n).unwrap(), Value::Text("0.00012".into()));
        // Beyond i64: text.
        let n = numeric_bytes(5, 0, 0, &[9, 9999, 9999, 9999, 9999, 9999]);
        assert_eq!(
            numeric(&n).unwrap(),
            Value::Text("9".to_owned() + &"9999".repeat(5))
        );
    }
}
