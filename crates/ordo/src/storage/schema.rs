//! Table schemas: typed columns laid out as 64-bit words.
//!
//! Every column occupies a whole number of 64-bit words so that a row can live in an array of
//! `AtomicU64` (see [`super::arena`]). That lets optimistic protocols copy a row while a writer may be
//! installing it without a data race in the Rust sense, and lets every protocol copy only the columns it
//! declared (column-level access), word by word.
//!
//! | type              | SQL analogue   | words                      |
//! |-------------------|----------------|----------------------------|
//! | `Int`             | BIGINT         | 1 (`i64`)                  |
//! | `Float`           | DOUBLE         | 1 (`f64` bits)             |
//! | `Char(n)`         | CHAR(n)        | ⌈n / 8⌉, exactly n bytes   |
//! | `VarChar(n)`      | VARCHAR(n)     | ⌈(n + 2) / 8⌉, 2-byte length then bytes |

use std::fmt;

/// The type of one column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ColumnType {
    /// A signed 64-bit integer.
    Int,
    /// A 64-bit float.
    Float,
    /// A fixed-length byte string of exactly `n` bytes (shorter values are zero-padded).
    Char(u16),
    /// A byte string of at most `n` bytes.
    VarChar(u16),
}

impl ColumnType {
    /// Number of 64-bit words a value of this type occupies in a row.
    pub fn words(self) -> usize {
        match self {
            ColumnType::Int | ColumnType::Float => 1,
            ColumnType::Char(n) => (n as usize).div_ceil(8),
            ColumnType::VarChar(n) => (n as usize + 2).div_ceil(8),
        }
    }
}

impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnType::Int => write!(f, "BIGINT"),
            ColumnType::Float => write!(f, "DOUBLE"),
            ColumnType::Char(n) => write!(f, "CHAR({n})"),
            ColumnType::VarChar(n) => write!(f, "VARCHAR({n})"),
        }
    }
}

/// A named, typed column.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
}

impl Column {
    pub fn new(name: impl Into<String>, ty: ColumnType) -> Self {
        Column {
            name: name.into(),
            ty,
        }
    }
}

/// Errors in schema definitions and values.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error("a table has at most {max} columns, got {got}")]
    TooManyColumns { max: usize, got: usize },
    #[error("a table needs at least one column")]
    NoColumns,
    #[error("duplicate column name `{0}`")]
    DuplicateColumn(String),
    #[error("column `{name}`: zero-length string type")]
    ZeroLength { name: String },
    #[error("value of {len} bytes is too long for column `{column}` of type {ty}")]
    TooLong {
        column: String,
        ty: ColumnType,
        len: usize,
    },
    #[error("no column named `{0}`")]
    UnknownColumn(String),
    #[error("column `{column}` has type {ty}, not {wanted}")]
    WrongType {
        column: String,
        ty: ColumnType,
        wanted: &'static str,
    },
}

/// The maximum number of columns of a table (a [`ColumnSet`] is a 64-bit mask).
pub const MAX_COLUMNS: usize = 64;

/// A set of column positions, as a bit mask. Declared accesses and column-level reads and writes use it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub struct ColumnSet(pub u64);

impl ColumnSet {
    /// No column.
    pub const NONE: ColumnSet = ColumnSet(0);
    /// Every column of any table.
    pub const ALL: ColumnSet = ColumnSet(u64::MAX);

    /// The set holding exactly the given column positions.
    pub fn of(cols: &[usize]) -> Self {
        ColumnSet(cols.iter().fold(0, |m, &c| m | (1u64 << c)))
    }
    /// The set `{col}`.
    pub const fn one(col: usize) -> Self {
        ColumnSet(1u64 << col)
    }
    pub fn contains(self, col: usize) -> bool {
        col < MAX_COLUMNS && self.0 & (1u64 << col) != 0
    }
    pub fn union(self, o: ColumnSet) -> Self {
        ColumnSet(self.0 | o.0)
    }
    pub fn intersects(self, o: ColumnSet) -> bool {
        self.0 & o.0 != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Column positions in the set, ascending.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut m = self.0;
        std::iter::from_fn(move || {
            if m == 0 {
                None
            } else {
                let c = m.trailing_zeros() as usize;
                m &= m - 1;
                Some(c)
            }
        })
    }
}

/// A table's columns and their word layout.
#[derive(Clone, Debug)]
pub struct Schema {
    columns: Vec<Column>,
    /// First word of each column.
    offsets: Vec<usize>,
    /// Words of each row.
    row_words: usize,
    /// The mask of real columns (`ColumnSet::ALL` is clamped to this).
    all: ColumnSet,
}

impl Schema {
    /// Builds a schema, checking names and sizes.
    pub fn new(columns: Vec<Column>) -> Result<Self, SchemaError> {
        if columns.is_empty() {
            return Err(SchemaError::NoColumns);
        }
        if columns.len() > MAX_COLUMNS {
            return Err(SchemaError::TooManyColumns {
                max: MAX_COLUMNS,
                got: columns.len(),
            });
        }
        let mut offsets = Vec::with_capacity(columns.len());
        let mut w = 0;
        for (i, c) in columns.iter().enumerate() {
            if columns[..i].iter().any(|o| o.name == c.name) {
                return Err(SchemaError::DuplicateColumn(c.name.clone()));
            }
            if matches!(c.ty, ColumnType::Char(0) | ColumnType::VarChar(0)) {
                return Err(SchemaError::ZeroLength {
                    name: c.name.clone(),
                });
            }
            offsets.push(w);
            w += c.ty.words();
        }
        let all = if columns.len() == 64 {
            ColumnSet::ALL
        } else {
            ColumnSet((1u64 << columns.len()) - 1)
        };
        Ok(Schema {
            columns,
            offsets,
            row_words: w,
            all,
        })
    }

    /// A schema of integer columns named `names` (most of the benchmarks' tables).
    pub fn ints(names: &[&str]) -> Result<Self, SchemaError> {
        Schema::new(
            names
                .iter()
                .map(|n| Column::new(*n, ColumnType::Int))
                .collect(),
        )
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }
    pub fn len(&self) -> usize {
        self.columns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }
    /// Words in one row.
    pub fn row_words(&self) -> usize {
        self.row_words
    }
    /// Every column of this table.
    pub fn all(&self) -> ColumnSet {
        self.all
    }
    /// Clamps a set to this table's columns.
    pub fn clamp(&self, cols: ColumnSet) -> ColumnSet {
        ColumnSet(cols.0 & self.all.0)
    }
    /// Position of the column called `name`.
    pub fn position(&self, name: &str) -> Result<usize, SchemaError> {
        self.columns
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| SchemaError::UnknownColumn(name.into()))
    }
    /// The word range of column `col`.
    #[inline]
    pub fn words_of(&self, col: usize) -> std::ops::Range<usize> {
        let o = self.offsets[col];
        o..o + self.columns[col].ty.words()
    }
    /// Calls `f` with each maximal run of consecutive words covered by `cols` (so a read of every
    /// column is one copy).
    #[inline]
    pub fn for_each_word_run(&self, cols: ColumnSet, mut f: impl FnMut(std::ops::Range<usize>)) {
        let cols = self.clamp(cols);
        if cols == self.all {
            f(0..self.row_words);
            return;
        }
        let mut run: Option<std::ops::Range<usize>> = None;
        for c in cols.iter() {
            let r = self.words_of(c);
            run = match run {
                Some(cur) if cur.end == r.start => Some(cur.start..r.end),
                Some(cur) => {
                    f(cur);
                    Some(r)
                }
                None => Some(r),
            };
        }
        if let Some(r) = run {
            f(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The word runs of `cols`, computed column by column (the reference).
    fn runs_by_column(s: &Schema, cols: ColumnSet) -> Vec<std::ops::Range<usize>> {
        let mut out: Vec<std::ops::Range<usize>> = Vec::new();
        for c in s.clamp(cols).iter() {
            let r = s.words_of(c);
            match out.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ => out.push(r),
            }
        }
        out
    }

    fn runs(s: &Schema, cols: ColumnSet) -> Vec<std::ops::Range<usize>> {
        let mut out = Vec::new();
        s.for_each_word_run(cols, |r| out.push(r));
        out
    }

    #[test]
    fn ints_are_integer_columns_named_in_order() {
        let s = Schema::ints(&["a", "b"]).unwrap();
        let names: Vec<&str> = s.columns().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(s.columns().iter().all(|c| c.ty == ColumnType::Int));
        assert_eq!(s.row_words(), 2);
        assert!(matches!(
            Schema::ints(&["a", "a"]),
            Err(SchemaError::DuplicateColumn(_))
        ));
        assert!(matches!(Schema::ints(&[]), Err(SchemaError::NoColumns)));
    }

    fn schema(widths: &[u16]) -> Schema {
        let cols = widths
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                let ty = if w == 0 {
                    ColumnType::Int
                } else {
                    ColumnType::Char(w)
                };
                Column::new(format!("c{i}"), ty)
            })
            .collect();
        Schema::new(cols).unwrap()
    }

    #[test]
    fn word_runs_merge_adjacent_columns_and_skip_missing_ones() {
        // Words: c0 0..1, c1 1..3 (9 bytes), c2 3..4, c3 4..5.
        let s = schema(&[0, 9, 0, 0]);
        assert_eq!(runs(&s, ColumnSet::ALL), vec![0..5]);
        assert_eq!(runs(&s, s.all()), vec![0..5]);
        assert_eq!(runs(&s, ColumnSet::of(&[1])), vec![1..3]);
        assert_eq!(runs(&s, ColumnSet::of(&[0, 2, 3])), vec![0..1, 3..5]);
        assert_eq!(runs(&s, ColumnSet::of(&[1, 3])), vec![1..3, 4..5]);
        assert_eq!(
            runs(&s, ColumnSet::NONE),
            Vec::<std::ops::Range<usize>>::new()
        );
        // Bits past the last column are not columns.
        assert_eq!(
            runs(&s, ColumnSet(0b1111_0000)),
            Vec::<std::ops::Range<usize>>::new()
        );
        assert_eq!(runs(&s, ColumnSet(u64::MAX << 3)), vec![4..5]);
    }

    #[test]
    fn a_full_sixty_four_column_row_is_one_run() {
        let s = schema(&[0; 64]);
        assert_eq!(runs(&s, ColumnSet::ALL), vec![0..64]);
        assert_eq!(runs(&s, ColumnSet(1 << 63)), vec![63..64]);
        assert_eq!(runs(&s, ColumnSet(u64::MAX - 1)), vec![1..64]);
    }

    proptest! {
        #[test]
        fn word_runs_match_a_column_by_column_walk(
            widths in proptest::collection::vec(0u16..20, 1..=64),
            mask in any::<u64>(),
        ) {
            let s = schema(&widths);
            prop_assert_eq!(runs(&s, ColumnSet(mask)), runs_by_column(&s, ColumnSet(mask)));
        }
    }
}
