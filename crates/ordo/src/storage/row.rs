//! Row images: a transaction's private copy of (some columns of) a row, read and written by column.
//!
//! A row image is a slice of `u64` words laid out by the table's [`Schema`]. [`RowRef`] reads columns,
//! [`RowMut`] writes them and remembers which columns it wrote, so protocols install only those.
//! Nothing here allocates: images live in buffers each worker reuses across transactions.

use super::schema::{ColumnSet, ColumnType, Schema, SchemaError};
use std::fmt;

/// A value of one column, for loaders, the SQL layer and display. The hot path uses the typed getters.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    Int(i64),
    Float(f64),
    Str(Vec<u8>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Str(s) => write!(f, "{}", String::from_utf8_lossy(s)),
        }
    }
}

#[inline]
fn bytes(words: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding and u8 has alignment 1; the length is exact.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 8) }
}

#[inline]
fn bytes_mut(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: as in `bytes`; every bit pattern is a valid u64.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 8) }
}

/// Read access to a row image.
#[derive(Clone, Copy)]
pub struct RowRef<'a> {
    schema: &'a Schema,
    words: &'a [u64],
}

impl<'a> RowRef<'a> {
    pub fn new(schema: &'a Schema, words: &'a [u64]) -> Self {
        debug_assert!(words.len() >= schema.row_words());
        RowRef { schema, words }
    }
    pub fn schema(&self) -> &'a Schema {
        self.schema
    }
    /// The raw words of the image.
    pub fn words(&self) -> &'a [u64] {
        self.words
    }
    /// The integer in column `col`.
    #[inline]
    pub fn int(&self, col: usize) -> i64 {
        debug_assert_eq!(self.schema.columns()[col].ty, ColumnType::Int);
        self.words[self.schema.words_of(col).start] as i64
    }
    /// The float in column `col`.
    #[inline]
    pub fn float(&self, col: usize) -> f64 {
        debug_assert_eq!(self.schema.columns()[col].ty, ColumnType::Float);
        f64::from_bits(self.words[self.schema.words_of(col).start])
    }
    /// The bytes of string column `col` (a `Char(n)` column always yields n bytes).
    #[inline]
    pub fn str(&self, col: usize) -> &'a [u8] {
        let b = bytes(&self.words[self.schema.words_of(col)]);
        match self.schema.columns()[col].ty {
            ColumnType::Char(n) => &b[..n as usize],
            ColumnType::VarChar(n) => {
                let len = (u16::from_le_bytes([b[0], b[1]]) as usize).min(n as usize);
                &b[2..2 + len]
            }
            _ => {
                debug_assert!(false, "str() on a numeric column");
                &[]
            }
        }
    }
    /// Column `col` as a [`Value`].
    pub fn value(&self, col: usize) -> Value {
        match self.schema.columns()[col].ty {
            ColumnType::Int => Value::Int(self.int(col)),
            ColumnType::Float => Value::Float(self.float(col)),
            ColumnType::Char(_) | ColumnType::VarChar(_) => Value::Str(self.str(col).to_vec()),
        }
    }
}

impl fmt::Debug for RowRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries((0..self.schema.len()).map(|c| self.value(c)))
            .finish()
    }
}

/// Write access to a row image; records the set of columns written.
pub struct RowMut<'a> {
    schema: &'a Schema,
    words: &'a mut [u64],
    written: ColumnSet,
}

impl<'a> RowMut<'a> {
    pub fn new(schema: &'a Schema, words: &'a mut [u64]) -> Self {
        debug_assert!(words.len() >= schema.row_words());
        RowMut {
            schema,
            words,
            written: ColumnSet::NONE,
        }
    }
    /// A read view of the image (including what was written so far).
    pub fn as_ref(&self) -> RowRef<'_> {
        RowRef {
            schema: self.schema,
            words: self.words,
        }
    }
    pub fn int(&self, col: usize) -> i64 {
        self.as_ref().int(col)
    }
    pub fn float(&self, col: usize) -> f64 {
        self.as_ref().float(col)
    }
    pub fn str(&self, col: usize) -> &[u8] {
        RowRef {
            schema: self.schema,
            words: self.words,
        }
        .str(col)
    }
    /// The columns written through this handle.
    pub fn written(&self) -> ColumnSet {
        self.written
    }
    #[inline]
    pub fn set_int(&mut self, col: usize, v: i64) {
        debug_assert_eq!(self.schema.columns()[col].ty, ColumnType::Int);
        self.words[self.schema.words_of(col).start] = v as u64;
        self.written.0 |= 1 << col;
    }
    #[inline]
    pub fn set_float(&mut self, col: usize, v: f64) {
        debug_assert_eq!(self.schema.columns()[col].ty, ColumnType::Float);
        self.words[self.schema.words_of(col).start] = v.to_bits();
        self.written.0 |= 1 << col;
    }
    /// Sets string column `col`; an error (and no change) if the value does not fit.
    #[inline]
    pub fn set_str(&mut self, col: usize, v: &[u8]) -> Result<(), SchemaError> {
        let ty = self.schema.columns()[col].ty;
        let range = self.schema.words_of(col);
        let b = bytes_mut(&mut self.words[range]);
        match ty {
            ColumnType::Char(n) if v.len() <= n as usize => {
                b[..v.len()].copy_from_slice(v);
                b[v.len()..].fill(0);
            }
            ColumnType::VarChar(n) if v.len() <= n as usize => {
                b[..2].copy_from_slice(&(v.len() as u16).to_le_bytes());
                b[2..2 + v.len()].copy_from_slice(v);
            }
            ColumnType::Char(_) | ColumnType::VarChar(_) => {
                return Err(SchemaError::TooLong {
                    column: self.schema.columns()[col].name.clone(),
                    ty,
                    len: v.len(),
                })
            }
            _ => {
                return Err(SchemaError::WrongType {
                    column: self.schema.columns()[col].name.clone(),
                    ty,
                    wanted: "a string",
                })
            }
        }
        self.written.0 |= 1 << col;
        Ok(())
    }
    /// Sets column `col` from a [`Value`], checking the type.
    pub fn set(&mut self, col: usize, v: &Value) -> Result<(), SchemaError> {
        let ty = self.schema.columns()[col].ty;
        match (ty, v) {
            (ColumnType::Int, Value::Int(i)) => self.set_int(col, *i),
            (ColumnType::Float, Value::Float(x)) => self.set_float(col, *x),
            (ColumnType::Float, Value::Int(i)) => self.set_float(col, *i as f64),
            (ColumnType::Char(_) | ColumnType::VarChar(_), Value::Str(s)) => {
                return self.set_str(col, s)
            }
            (ty, _) => {
                let wanted = match v {
                    Value::Int(_) => "an integer",
                    Value::Float(_) => "a float",
                    Value::Str(_) => "a string",
                };
                return Err(SchemaError::WrongType {
                    column: self.schema.columns()[col].name.clone(),
                    ty,
                    wanted,
                });
            }
        }
        Ok(())
    }
}
