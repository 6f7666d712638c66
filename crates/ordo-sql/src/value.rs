//! SQL values and types, and how they are stored in Ordo's 64-bit-word rows.
//!
//! | SQL type                     | [`SqlType`] | storage column            |
//! |------------------------------|-------------|---------------------------|
//! | INT, INTEGER, BIGINT, SMALLINT | `Int`     | `Int` (i64)               |
//! | DOUBLE, FLOAT, REAL          | `Float`     | `Float` (f64)             |
//! | VARCHAR(n), CHAR(n)          | `Text(n)`   | `VarChar(n)`              |
//! | TEXT                         | `Text(256)` | `VarChar(256)`: TEXT is bounded at [`TEXT_LIMIT`] bytes |
//! | BOOLEAN                      | `Bool`      | `Int` (0 or 1)            |
//!
//! Stored rows have no NULLs (every column holds a value; an INSERT that omits a column stores 0,
//! `''` or false). `NULL` exists only as the result of an aggregate over no rows.

use crate::error::{SqlError, SqlResult};
use ordo::storage::{ColumnType, RowMut, RowRef};
use std::cmp::Ordering;
use std::fmt;

/// The bound of a `TEXT` column, in bytes.
pub const TEXT_LIMIT: u16 = 256;

/// The declared type of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlType {
    Int,
    Float,
    Text(u16),
    Bool,
}

impl SqlType {
    /// The storage column type.
    pub fn storage(self) -> ColumnType {
        match self {
            SqlType::Int | SqlType::Bool => ColumnType::Int,
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
}

impl Datum {
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
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }
    fn rank(&self) -> u8 {
        match self {
            Datum::Int(_) | Datum::Float(_) => 0,
            Datum::Text(_) => 1,
            Datum::Bool(_) => 2,
            Datum::Null => 3,
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
        }
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
            (_, Datum::Null) => {
                return Err(SqlError::unsupported(format!(
                    "NULL values (column \"{column}\")"
                )))
            }
            (SqlType::Int, Datum::Int(v)) => Datum::Int(v),
            (SqlType::Int, Datum::Float(v)) => Datum::Int(v.round() as i64),
            (SqlType::Float, Datum::Int(v)) => Datum::Float(v as f64),
            (SqlType::Float, Datum::Float(v)) => Datum::Float(v),
            (SqlType::Bool, Datum::Bool(b)) => Datum::Bool(b),
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

    /// Reads column `col` of a stored row as a value of type `ty`.
    pub fn read(row: &RowRef<'_>, col: usize, ty: SqlType) -> Datum {
        match ty {
            SqlType::Int => Datum::Int(row.int(col)),
            SqlType::Bool => Datum::Bool(row.int(col) != 0),
            SqlType::Float => Datum::Float(row.float(col)),
            SqlType::Text(_) => Datum::Text(String::from_utf8_lossy(row.str(col)).into_owned()),
        }
    }

    /// Writes this value (already [`coerce`](Self::coerce)d to the column's type) into column `col`.
    pub fn write(&self, row: &mut RowMut<'_>, col: usize) {
        match self {
            Datum::Int(v) => row.set_int(col, *v),
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

impl SqlType {
    pub fn name(self) -> String {
        match self {
            SqlType::Int => "bigint".into(),
            SqlType::Float => "double precision".into(),
            SqlType::Text(n) => format!("character varying({n})"),
            SqlType::Bool => "boolean".into(),
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
        }
    }
}
