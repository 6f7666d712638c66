//! SQL values and types, and how they are stored in Ordo's 64-bit-word rows.
//!
//! | SQL type                     | [`SqlType`] | storage column            |
//! |------------------------------|-------------|---------------------------|
//! | INT, INTEGER, BIGINT, SMALLINT | `Int`     | `Int` (i64)               |
//! | DOUBLE, FLOAT, REAL          | `Float`     | `Float` (f64)             |
//! | VARCHAR(n), CHAR(n)          | `Text(n)`   | `VarChar(n)`              |
//! | TEXT                         | `Text(256)` | `VarChar(256)`: TEXT is bounded at [`TEXT_LIMIT`] bytes |
//! | BOOLEAN                      | `Bool`      | `Int` (0 or 1)            |
//! | DATE                         | `Date`      | `Int` (days since 1970-01-01, see [`crate::datetime`]) |
//! | TIMESTAMP                    | `Timestamp` | `Int` (microseconds since 1970-01-01 00:00) |
//! | TIMESTAMP WITH TIME ZONE, TIMESTAMPTZ | `TimestampTz` | `Int` (microseconds since 1970-01-01 00:00 UTC) |
//!
//! **NULL.** A column declared `NOT NULL` (and every primary-key column) stores every value of its
//! type. A nullable column reserves one stored word pattern for NULL, so rows keep their storage
//! layout and no extra column is read or written (an update's written columns stay exact):
//!
//! | storage column | NULL is stored as | given up |
//! |----------------|-------------------|----------|
//! | `Int` (INT, BOOLEAN, dates and timestamps) | `i64::MIN` | the bigint -9223372036854775808 in a nullable column (refused, `0A000`) |
//! | `Float`        | one NaN bit pattern ([`NULL_FLOAT_BITS`]) | nothing: SQL never makes a NaN here |
//! | `VarChar(n)`   | the one byte `0xFF` | nothing: text is UTF-8, where a lone `0xFF` cannot occur |
//!
//! The reserved patterns never reach a key: primary-key columns are NOT NULL, and a NULL in an
//! indexed column is indexed under [`crate::key::prefix`]'s `u64::MAX`, a superset entry the
//! executor re-checks. Predicate locks stay sound: a row's tuple leaves a NULL column
//! unconstrained ([`crate::tuples::tuple`]), and where a protocol evaluates a WHERE cover on stored
//! rows, a NULL read as its pattern can only widen what it returns (a clause that is TRUE with a
//! column unknown is TRUE for any value of it).

use crate::datetime::{self, Kind};
use crate::error::{SqlError, SqlResult};
use ordo::storage::{ColumnType, RowMut, RowRef};
use std::cmp::Ordering;
use std::fmt;

/// How a nullable `Int` column stores NULL.
pub const NULL_INT: i64 = i64::MIN;
/// How a nullable `Float` column stores NULL: a quiet NaN with a payload arithmetic never makes.
pub const NULL_FLOAT_BITS: u64 = 0x7ff8_0000_4e55_4c4c;
/// How a nullable `VarChar` column stores NULL.
pub const NULL_TEXT: &[u8] = &[0xff];

/// The bound of a `TEXT` column, in bytes.
pub const TEXT_LIMIT: u16 = 256;

/// The declared type of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlType {
    Int,
    Float,
    Text(u16),
    Bool,
    Date,
    Timestamp,
    TimestampTz,
}

impl SqlType {
    /// The storage column type.
    pub fn storage(self) -> ColumnType {
        match self {
            SqlType::Int
            | SqlType::Bool
            | SqlType::Date
            | SqlType::Timestamp
            | SqlType::TimestampTz => ColumnType::Int,
            SqlType::Float => ColumnType::Float,
            SqlType::Text(n) => ColumnType::VarChar(n),
        }
    }
}

/// One SQL value.
#[derive(Clone, Debug, PartialEq)]
pub enum Datum {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    Bool(bool),
    /// Days since 1970-01-01.
    Date(i64),
    /// Microseconds since 1970-01-01 00:00:00.
    Timestamp(i64),
    /// Microseconds since 1970-01-01 00:00:00 UTC.
    TimestampTz(i64),
}

impl Datum {
    /// A date or timestamp in microseconds (a date at midnight; the session is in UTC, so a
    /// TIMESTAMP and a TIMESTAMPTZ with the same digits are equal), for comparisons across them.
    fn micros(&self) -> Option<i64> {
        match self {
            Datum::Date(d) => Some(datetime::date_to_micros(*d)),
            Datum::Timestamp(t) | Datum::TimestampTz(t) => Some(*t),
            _ => None,
        }
    }
    fn is_datetime(&self) -> bool {
        self.micros().is_some()
    }

    /// Total order for ORDER BY, GROUP BY and MIN/MAX: NULL last, numbers by value, then text, then bools.
    pub fn sort_cmp(&self, o: &Datum) -> Ordering {
        use Datum::*;
        match (self, o) {
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Greater,
            (_, Null) => Ordering::Less,
            (Int(a), Int(b)) => a.cmp(b),
            (Int(a), Float(b)) => (*a as f64).total_cmp(b),
            (Float(a), Int(b)) => a.total_cmp(&(*b as f64)),
            (Float(a), Float(b)) => a.total_cmp(b),
            (Text(a), Text(b)) => a.cmp(b),
            (Bool(a), Bool(b)) => a.cmp(b),
            (a, b) if a.is_datetime() && b.is_datetime() => a.micros().cmp(&b.micros()),
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }
    fn rank(&self) -> u8 {
        match self {
            Datum::Int(_) | Datum::Float(_) => 0,
            Datum::Text(_) => 1,
            Datum::Bool(_) => 2,
            Datum::Date(_) | Datum::Timestamp(_) | Datum::TimestampTz(_) => 3,
            Datum::Null => 4,
        }
    }
    /// SQL comparison: `None` when either side is NULL; an error for incomparable types.
    pub fn sql_cmp(&self, o: &Datum) -> SqlResult<Option<Ordering>> {
        use Datum::*;
        match (self, o) {
            (Null, _) | (_, Null) => Ok(None),
            (Int(_) | Float(_), Int(_) | Float(_)) | (Text(_), Text(_)) | (Bool(_), Bool(_)) => {
                Ok(Some(self.sort_cmp(o)))
            }
            (a, b) if a.is_datetime() && b.is_datetime() => Ok(Some(a.sort_cmp(b))),
            // A quoted literal beside a date is read as one, as PostgreSQL reads an untyped literal.
            (d, Text(s)) if d.is_datetime() => {
                Ok(Some(d.sort_cmp(&Text(s.clone()).cast(d.sql_type())?)))
            }
            (Text(s), d) if d.is_datetime() => {
                Ok(Some(Text(s.clone()).cast(d.sql_type())?.sort_cmp(d)))
            }
            (a, b) => Err(SqlError::new(
                "42883",
                format!(
                    "operator does not exist: {} = {}",
                    a.type_name(),
                    b.type_name()
                ),
            )),
        }
    }
    pub fn type_name(&self) -> &'static str {
        match self {
            Datum::Null => "unknown",
            Datum::Int(_) => "bigint",
            Datum::Float(_) => "double precision",
            Datum::Text(_) => "text",
            Datum::Bool(_) => "boolean",
            Datum::Date(_) => "date",
            Datum::Timestamp(_) => "timestamp without time zone",
            Datum::TimestampTz(_) => "timestamp with time zone",
        }
    }
    /// The type of a date or timestamp value (`Int` for any other).
    fn sql_type(&self) -> SqlType {
        match self {
            Datum::Date(_) => SqlType::Date,
            Datum::Timestamp(_) => SqlType::Timestamp,
            Datum::TimestampTz(_) => SqlType::TimestampTz,
            _ => SqlType::Int,
        }
    }

    /// An explicit cast (`CAST(x AS t)`, `x::t`, `t 'literal'`): the assignment casts of
    /// [`coerce`](Self::coerce), and text to and from every type.
    pub fn cast(self, ty: SqlType) -> SqlResult<Datum> {
        let invalid = |s: &str, name: &str| {
            SqlError::new(
                "22P02",
                format!("invalid input syntax for type {name}: \"{s}\""),
            )
        };
        Ok(match (ty, self) {
            (_, Datum::Null) => Datum::Null,
            (SqlType::Text(n), d) => {
                let mut s = d.to_string();
                // An explicit cast to varchar(n) truncates, as in PostgreSQL.
                let mut end = s.len().min(n as usize);
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                s.truncate(end);
                Datum::Text(s)
            }
            (SqlType::Int, Datum::Text(s)) => s
                .trim()
                .parse()
                .map(Datum::Int)
                .map_err(|_| invalid(&s, "bigint"))?,
            (SqlType::Float, Datum::Text(s)) => match s.trim().parse::<f64>() {
                Ok(v) if v.is_finite() => Datum::Float(v),
                _ => return Err(invalid(&s, "double precision")),
            },
            (SqlType::Bool, Datum::Text(s)) => match s.trim().to_ascii_lowercase().as_str() {
                "t" | "true" | "yes" | "on" | "1" => Datum::Bool(true),
                "f" | "false" | "no" | "off" | "0" => Datum::Bool(false),
                _ => return Err(invalid(&s, "boolean")),
            },
            (SqlType::Int, Datum::Bool(b)) => Datum::Int(b as i64),
            (SqlType::Bool, Datum::Int(v)) => Datum::Bool(v != 0),
            (ty, d) => {
                let from = d.type_name();
                d.coerce(ty, "").map_err(|e| {
                    if e.code == "42804" {
                        SqlError::new("42846", format!("cannot cast type {from} to {}", ty.name()))
                    } else {
                        e
                    }
                })?
            }
        })
    }
    /// Whether this value prints right-aligned in a result table.
    pub fn is_numeric(&self) -> bool {
        matches!(self, Datum::Int(_) | Datum::Float(_))
    }

    /// Converts to the column type `ty` (assignment cast), checking lengths.
    pub fn coerce(self, ty: SqlType, column: &str) -> SqlResult<Datum> {
        let bad = |d: &Datum| {
            SqlError::mismatch(format!(
                "column \"{column}\" is of type {} but expression is of type {}",
                ty.name(),
                d.type_name()
            ))
        };
        Ok(match (ty, self) {
            // NOT NULL is checked on the whole row (`check_row`).
            (_, Datum::Null) => Datum::Null,
            (SqlType::Int, Datum::Int(v)) => Datum::Int(v),
            (SqlType::Int, Datum::Float(v)) => Datum::Int(v.round() as i64),
            (SqlType::Float, Datum::Int(v)) => Datum::Float(v as f64),
            (SqlType::Float, Datum::Float(v)) => Datum::Float(v),
            (SqlType::Bool, Datum::Bool(b)) => Datum::Bool(b),
            (SqlType::Date, Datum::Text(s)) => Datum::Date(datetime::parse(&s, Kind::Date)?),
            (SqlType::Timestamp, Datum::Text(s)) => {
                Datum::Timestamp(datetime::parse(&s, Kind::Timestamp)?)
            }
            (SqlType::TimestampTz, Datum::Text(s)) => {
                Datum::TimestampTz(datetime::parse(&s, Kind::TimestampTz)?)
            }
            (SqlType::Date, d @ (Datum::Date(_) | Datum::Timestamp(_) | Datum::TimestampTz(_))) => {
                Datum::Date(datetime::micros_to_date(d.micros().unwrap_or(0)))
            }
            (
                SqlType::Timestamp,
                d @ (Datum::Date(_) | Datum::Timestamp(_) | Datum::TimestampTz(_)),
            ) => Datum::Timestamp(d.micros().unwrap_or(0)),
            (
                SqlType::TimestampTz,
                d @ (Datum::Date(_) | Datum::Timestamp(_) | Datum::TimestampTz(_)),
            ) => Datum::TimestampTz(d.micros().unwrap_or(0)),
            (SqlType::Text(n), Datum::Text(s)) => {
                if s.len() > n as usize {
                    return Err(SqlError::new(
                        "22001",
                        format!("value too long for type character varying({n})"),
                    ));
                }
                Datum::Text(s)
            }
            (_, d) => return Err(bad(&d)),
        })
    }

    /// Reads column `col` of a stored row as a value of type `ty`; `nullable`: the column's NULL
    /// pattern reads as NULL (see the module docs).
    pub fn read(row: &RowRef<'_>, col: usize, ty: SqlType, nullable: bool) -> Datum {
        match ty {
            SqlType::Int
            | SqlType::Bool
            | SqlType::Date
            | SqlType::Timestamp
            | SqlType::TimestampTz
                if nullable && row.int(col) == NULL_INT =>
            {
                Datum::Null
            }
            SqlType::Date => Datum::Date(row.int(col)),
            SqlType::Timestamp => Datum::Timestamp(row.int(col)),
            SqlType::TimestampTz => Datum::TimestampTz(row.int(col)),
            SqlType::Int => Datum::Int(row.int(col)),
            SqlType::Bool => Datum::Bool(row.int(col) != 0),
            SqlType::Float if nullable && row.float(col).to_bits() == NULL_FLOAT_BITS => {
                Datum::Null
            }
            SqlType::Float => Datum::Float(row.float(col)),
            SqlType::Text(_) if nullable && row.str(col) == NULL_TEXT => Datum::Null,
            SqlType::Text(_) => Datum::Text(String::from_utf8_lossy(row.str(col)).into_owned()),
        }
    }

    /// Writes this value (already [`coerce`](Self::coerce)d to `ty` and checked by
    /// [`check_row`]) into column `col`, NULL as its pattern.
    pub fn write_as(&self, row: &mut RowMut<'_>, col: usize, ty: SqlType) {
        match (self, ty) {
            (
                Datum::Null,
                SqlType::Int
                | SqlType::Bool
                | SqlType::Date
                | SqlType::Timestamp
                | SqlType::TimestampTz,
            ) => row.set_int(col, NULL_INT),
            (Datum::Null, SqlType::Float) => row.set_float(col, f64::from_bits(NULL_FLOAT_BITS)),
            (Datum::Null, SqlType::Text(_)) => {
                let _ = row.set_str(col, NULL_TEXT);
            }
            (d, _) => d.write(row, col),
        }
    }

    /// Writes this value (already [`coerce`](Self::coerce)d to the column's type) into column `col`.
    pub fn write(&self, row: &mut RowMut<'_>, col: usize) {
        match self {
            Datum::Int(v) | Datum::Date(v) | Datum::Timestamp(v) | Datum::TimestampTz(v) => {
                row.set_int(col, *v)
            }
            Datum::Bool(b) => row.set_int(col, *b as i64),
            Datum::Float(v) => row.set_float(col, *v),
            // Lengths were checked by `coerce`, so this cannot fail.
            Datum::Text(s) => {
                let _ = row.set_str(col, s.as_bytes());
            }
            Datum::Null => {}
        }
    }
}

/// Checks a whole row (values already coerced to the columns' types) before it is stored: NULL in
/// a NOT NULL column is `23502`, as in PostgreSQL; a value a nullable column reserves for NULL is
/// `0A000` (see the module docs).
pub fn check_row(def: &crate::catalog::TableDef, row: &[Datum]) -> SqlResult<()> {
    for (c, d) in def.columns.iter().zip(row) {
        match d {
            Datum::Null if c.not_null => {
                return Err(SqlError::new(
                    "23502",
                    format!(
                    "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                    c.name, def.name
                ),
                ))
            }
            Datum::Int(NULL_INT) if !c.not_null => {
                return Err(SqlError::unsupported(format!(
                    "the value {NULL_INT} in nullable column \"{}\" (Ordo stores NULL as it there; \
                     declare the column NOT NULL to store it)",
                    c.name
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

impl SqlType {
    pub fn name(self) -> String {
        match self {
            SqlType::Int => "bigint".into(),
            SqlType::Float => "double precision".into(),
            SqlType::Text(n) => format!("character varying({n})"),
            SqlType::Bool => "boolean".into(),
            SqlType::Date => "date".into(),
            SqlType::Timestamp => "timestamp without time zone".into(),
            SqlType::TimestampTz => "timestamp with time zone".into(),
        }
    }
}

impl fmt::Display for Datum {
    /// As PostgreSQL prints values: booleans as `t`/`f`, NULL as nothing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Null => Ok(()),
            Datum::Int(v) => write!(f, "{v}"),
            Datum::Float(v) => write!(f, "{v}"),
            Datum::Text(s) => f.write_str(s),
            Datum::Bool(b) => f.write_str(if *b { "t" } else { "f" }),
            Datum::Date(d) => f.write_str(&datetime::format_date(*d)),
            Datum::Timestamp(t) => f.write_str(&datetime::format_timestamp(*t, false)),
            Datum::TimestampTz(t) => f.write_str(&datetime::format_timestamp(*t, true)),
        }
    }
}
