//! Predicates (§2.1, §3.3): `column op scalar` atoms under ∧ / ∨, BETWEEN as a conjunction.
//!
//! A predicate is an [`Expr`] tree generic over what an atom compares with: a bound predicate
//! ([`Predicate`] = `Expr<i64>`) compares with integers, a prepared statement's predicate
//! (`Expr<Value>`) with constants or parameters `$1, $2, …` bound per request (§2.2.2).
//!
//! ## Scalars
//! The lock manager reasons over `i64` exactly (an integer domain: `x > 3 ∧ x < 4` is a
//! contradiction). Other column types are mapped onto `i64` by an order-preserving encoding, so every
//! comparison keeps its meaning or becomes *coarser* — never finer, so no conflict is ever missed:
//! - floats: [`float_key`] is exact (a monotone bijection from the non-NaN doubles, `-0.0` folded into
//!   `0.0`); NaN is refused.
//! - strings: [`string_key`] takes the first 8 bytes, big-endian: monotone but not injective, so
//!   [`string_atom`] widens each comparison to the key (`s = 'abcdefghij'` locks every string with that
//!   8-byte prefix; `≠` locks everything). Exact for distinct 8-byte prefixes; a later step can add
//!   a per-column dictionary (exact `=`) if a workload needs finer string locks.
//!
//! Column ids are `u16` and must be below the relation's width, which is at most 64 (the column sets of
//! §2.2.4 are 64-bit masks, as Ordo's own `ColumnSet`).

use std::fmt;

use crate::error::Error;

/// A column's position in its relation (0-based).
pub type ColumnId = u16;

/// Deepest nesting `validate` accepts: recursion over predicates is bounded by it.
pub const MAX_DEPTH: usize = 64;

/// A comparison operator of an atom `column op scalar`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Op {
    /// The operator of `¬(c op v)`.
    pub fn negated(self) -> Op {
        match self {
            Op::Lt => Op::Ge,
            Op::Le => Op::Gt,
            Op::Gt => Op::Le,
            Op::Ge => Op::Lt,
            Op::Eq => Op::Ne,
            Op::Ne => Op::Eq,
        }
    }

    /// The operator with its operands swapped: `a op b` ⇔ `b op.flipped() a`.
    pub fn flipped(self) -> Op {
        match self {
            Op::Lt => Op::Gt,
            Op::Le => Op::Ge,
            Op::Gt => Op::Lt,
            Op::Ge => Op::Le,
            Op::Eq | Op::Ne => self,
        }
    }

    /// `x op v`.
    pub fn holds(self, x: i64, v: i64) -> bool {
        match self {
            Op::Lt => x < v,
            Op::Le => x <= v,
            Op::Gt => x > v,
            Op::Ge => x >= v,
            Op::Eq => x == v,
            Op::Ne => x != v,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "=",
            Op::Ne => "<>",
        }
    }
}

/// `column op value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Atom<V> {
    pub column: ColumnId,
    pub op: Op,
    pub value: V,
}

/// What a prepared predicate's atom compares with: a constant or the `n`-th parameter (0-based;
/// written `$n+1` in text, as in SQL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    Const(i64),
    Param(u16),
}

/// A predicate tree. `And(vec![])` would be `true` and `Or(vec![])` `false`, but `validate` refuses
/// both as malformed; use `True` / `False`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr<V> {
    True,
    False,
    Atom(Atom<V>),
    And(Vec<Expr<V>>),
    Or(Vec<Expr<V>>),
}

/// A predicate over integers: what a lock holds.
pub type Predicate = Expr<i64>;

/// A prepared (parameterized) predicate.
pub type Prepared = Expr<Value>;

impl<V: Copy> Expr<V> {
    pub fn atom(column: ColumnId, op: Op, value: V) -> Self {
        Expr::Atom(Atom { column, op, value })
    }
    pub fn eq(column: ColumnId, value: V) -> Self {
        Self::atom(column, Op::Eq, value)
    }
    /// `column BETWEEN lo AND hi` ≡ `column ≥ lo ∧ column ≤ hi` (an empty range when lo > hi).
    pub fn between(column: ColumnId, lo: V, hi: V) -> Self {
        Expr::And(vec![
            Self::atom(column, Op::Ge, lo),
            Self::atom(column, Op::Le, hi),
        ])
    }
    pub fn and(parts: Vec<Self>) -> Self {
        Expr::And(parts)
    }
    pub fn or(parts: Vec<Self>) -> Self {
        Expr::Or(parts)
    }

    /// `¬self`, pushed to the atoms (De Morgan), so the result is again an ∧/∨ tree of atoms.
    pub fn negate(&self) -> Self {
        match self {
            Expr::True => Expr::False,
            Expr::False => Expr::True,
            Expr::Atom(a) => Expr::Atom(Atom {
                column: a.column,
                op: a.op.negated(),
                value: a.value,
            }),
            Expr::And(ps) => Expr::Or(ps.iter().map(Self::negate).collect()),
            Expr::Or(ps) => Expr::And(ps.iter().map(Self::negate).collect()),
        }
    }

    /// The columns the predicate mentions, as a 64-bit mask (columns ≥ 64 are dropped: `validate`
    /// refuses them first).
    pub fn columns(&self) -> u64 {
        match self {
            Expr::True | Expr::False => 0,
            Expr::Atom(a) => 1u64.checked_shl(u32::from(a.column)).unwrap_or(0),
            Expr::And(ps) | Expr::Or(ps) => ps.iter().fold(0, |m, p| m | p.columns()),
        }
    }

    /// Refuse empty connectives, columns at or past `width` (and past 64) and nesting past
    /// [`MAX_DEPTH`].
    pub fn validate(&self, width: u16) -> Result<(), Error> {
        self.validate_at(width.min(64), 0)
    }

    fn validate_at(&self, width: u16, depth: usize) -> Result<(), Error> {
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep(MAX_DEPTH));
        }
        match self {
            Expr::True | Expr::False => Ok(()),
            Expr::Atom(a) if a.column >= width => Err(Error::ColumnOutOfRange {
                column: a.column,
                width,
            }),
            Expr::Atom(_) => Ok(()),
            Expr::And(ps) if ps.is_empty() => Err(Error::EmptyConnective("AND")),
            Expr::Or(ps) if ps.is_empty() => Err(Error::EmptyConnective("OR")),
            Expr::And(ps) | Expr::Or(ps) => {
                ps.iter().try_for_each(|p| p.validate_at(width, depth + 1))
            }
        }
    }

    /// `self` with every atom on a column of `mask` made `True` (then [`Expr::simplify`]d): a
    /// predicate that no longer constrains those columns, covering every row `self` covers.
    ///
    /// This is the lock of a write that **changes** the columns of `mask`: `UPDATE t SET c = 15
    /// WHERE c = 3` names rows by their old `c`, but the rows it leaves hold `c = 15` and may enter
    /// another transaction's `c BETWEEN 10 AND 20`, with which `c = 3` is unsatisfiable. Over its
    /// freed predicate (`TRUE` here) the update conflicts with that reader, as it must. Sound
    /// because a tree of atoms under ∧/∨ (no negation) only grows when an atom grows.
    pub fn freed(&self, mask: u64) -> Self {
        if self.columns() & mask == 0 {
            return self.clone();
        }
        fn free<V: Copy>(e: &Expr<V>, mask: u64) -> Expr<V> {
            match e {
                Expr::Atom(a) if 1u64.checked_shl(u32::from(a.column)).unwrap_or(0) & mask != 0 => {
                    Expr::True
                }
                Expr::And(ps) => Expr::And(ps.iter().map(|p| free(p, mask)).collect()),
                Expr::Or(ps) => Expr::Or(ps.iter().map(|p| free(p, mask)).collect()),
                e => e.clone(),
            }
        }
        free(self, mask).simplify()
    }

    /// Apply `f` to every atom's value.
    pub fn map<W>(&self, f: &mut impl FnMut(V) -> W) -> Expr<W> {
        match self {
            Expr::True => Expr::True,
            Expr::False => Expr::False,
            Expr::Atom(a) => Expr::Atom(Atom {
                column: a.column,
                op: a.op,
                value: f(a.value),
            }),
            Expr::And(ps) => Expr::And(ps.iter().map(|p| p.map(f)).collect()),
            Expr::Or(ps) => Expr::Or(ps.iter().map(|p| p.map(f)).collect()),
        }
    }

    /// Fold `True`/`False` away (`a ∧ True = a`, `a ∨ True = True`, …) and flatten nested
    /// same-kind connectives. The result is `True`, `False`, or a tree with neither.
    pub fn simplify(&self) -> Self {
        match self {
            Expr::True | Expr::False | Expr::Atom(_) => self.clone(),
            Expr::And(ps) => {
                let mut out = Vec::with_capacity(ps.len());
                for p in ps {
                    match p.simplify() {
                        Expr::True => {}
                        Expr::False => return Expr::False,
                        Expr::And(qs) => out.extend(qs),
                        q => out.push(q),
                    }
                }
                match out.len() {
                    0 => Expr::True,
                    1 => out.pop().expect("one part"),
                    _ => Expr::And(out),
                }
            }
            Expr::Or(ps) => {
                let mut out = Vec::with_capacity(ps.len());
                for p in ps {
                    match p.simplify() {
                        Expr::False => {}
                        Expr::True => return Expr::True,
                        Expr::Or(qs) => out.extend(qs),
                        q => out.push(q),
                    }
                }
                match out.len() {
                    0 => Expr::False,
                    1 => out.pop().expect("one part"),
                    _ => Expr::Or(out),
                }
            }
        }
    }
}

impl Predicate {
    /// Does the tuple `row` (one value per column) satisfy the predicate? Columns past the row's end
    /// read as 0. (For tests and brute-force oracles; the lock manager never evaluates tuples.)
    pub fn eval(&self, row: &[i64]) -> bool {
        self.eval_by(&|c| row.get(usize::from(c)).copied().unwrap_or(0))
    }

    /// Does the tuple whose column `c` reads `value(c)` satisfy the predicate? (An engine's row
    /// filter: it reads only the columns the predicate names.)
    pub fn eval_by(&self, value: &impl Fn(ColumnId) -> i64) -> bool {
        match self {
            Expr::True => true,
            Expr::False => false,
            Expr::Atom(a) => a.op.holds(value(a.column), a.value),
            Expr::And(ps) => ps.iter().all(|p| p.eval_by(value)),
            Expr::Or(ps) => ps.iter().any(|p| p.eval_by(value)),
        }
    }

    /// Parse a predicate, columns named `a`…`z` (0…25) or `c0`…`c63`; see [`Prepared::parse_with`].
    pub fn parse(text: &str) -> Result<Self, Error> {
        Self::parse_with(text, default_column)
    }

    /// Parse a predicate with no parameters, columns resolved by `resolve`.
    pub fn parse_with(
        text: &str,
        resolve: impl Fn(&str) -> Option<ColumnId>,
    ) -> Result<Self, Error> {
        let prepared = Prepared::parse_with(text, resolve)?;
        let mut param = None;
        let bound = prepared.map(&mut |v| match v {
            Value::Const(c) => c,
            Value::Param(i) => {
                param.get_or_insert(i);
                0
            }
        });
        match param {
            Some(i) => Err(Error::Parse {
                at: 0,
                message: format!("parameter ${} in an ad hoc predicate", i + 1),
            }),
            None => Ok(bound),
        }
    }
}

impl Prepared {
    /// Parse a prepared predicate with the default column names (`a`…`z`, `cN`).
    pub fn parse(text: &str) -> Result<Self, Error> {
        Self::parse_with(text, default_column)
    }

    /// Parse `expr := conj (OR conj)*; conj := factor (AND factor)*; factor := ( expr ) | TRUE |
    /// FALSE | NOT factor | col op scalar | col BETWEEN scalar AND scalar`, where `op` is one of
    /// `< <= > >= = <> !=` and a scalar is an integer or `$n` (n ≥ 1). Keywords are
    /// case-insensitive.
    pub fn parse_with(
        text: &str,
        resolve: impl Fn(&str) -> Option<ColumnId>,
    ) -> Result<Self, Error> {
        let mut p = Parser {
            text,
            pos: 0,
            depth: 0,
            resolve: &resolve,
        };
        let e = p.expr()?;
        p.skip_ws();
        if p.pos < text.len() {
            return Err(p.error("unexpected text after the predicate"));
        }
        Ok(e)
    }

    /// Substitute `params` for the parameters. `None` if a parameter index is out of range.
    pub fn bind(&self, params: &[i64]) -> Option<Predicate> {
        let mut ok = true;
        let e = self.map(&mut |v| match v {
            Value::Const(c) => c,
            Value::Param(i) => params.get(usize::from(i)).copied().unwrap_or_else(|| {
                ok = false;
                0
            }),
        });
        ok.then_some(e)
    }

    /// One more than the largest parameter index used (0 with no parameters).
    pub fn arity(&self) -> usize {
        match self {
            Expr::True | Expr::False => 0,
            Expr::Atom(a) => match a.value {
                Value::Param(i) => usize::from(i) + 1,
                Value::Const(_) => 0,
            },
            Expr::And(ps) | Expr::Or(ps) => ps.iter().map(Self::arity).max().unwrap_or(0),
        }
    }
}

/// `a`…`z` are columns 0…25, `cN` is column N.
pub fn default_column(name: &str) -> Option<ColumnId> {
    let b = name.as_bytes();
    if b.len() == 1 && b[0].is_ascii_lowercase() {
        return Some(ColumnId::from(b[0] - b'a'));
    }
    name.strip_prefix('c').and_then(|n| n.parse().ok())
}

struct Parser<'a, F> {
    text: &'a str,
    pos: usize,
    depth: usize,
    resolve: &'a F,
}

impl<F: Fn(&str) -> Option<ColumnId>> Parser<'_, F> {
    fn error(&self, message: &str) -> Error {
        Error::Parse {
            at: self.pos,
            message: message.to_string(),
        }
    }

    fn skip_ws(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// The next word (identifier, keyword or number) without consuming it.
    fn peek_word(&mut self) -> &str {
        self.skip_ws();
        let rest = &self.text[self.pos..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '-'))
            .unwrap_or(rest.len());
        &rest[..end]
    }

    fn keyword(&mut self, kw: &str) -> bool {
        if self.peek_word().eq_ignore_ascii_case(kw) {
            self.pos += kw.len();
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> Result<Prepared, Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error::TooDeep(MAX_DEPTH));
        }
        let mut parts = vec![self.conj()?];
        while self.keyword("or") {
            parts.push(self.conj()?);
        }
        self.depth -= 1;
        Ok(if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            Expr::Or(parts)
        })
    }

    fn conj(&mut self) -> Result<Prepared, Error> {
        let mut parts = vec![self.factor()?];
        while self.keyword("and") {
            parts.push(self.factor()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            Expr::And(parts)
        })
    }

    fn factor(&mut self) -> Result<Prepared, Error> {
        self.skip_ws();
        if self.text[self.pos..].starts_with('(') {
            self.pos += 1;
            let e = self.expr()?;
            self.skip_ws();
            if !self.text[self.pos..].starts_with(')') {
                return Err(self.error("expected `)`"));
            }
            self.pos += 1;
            return Ok(e);
        }
        if self.keyword("true") {
            return Ok(Expr::True);
        }
        if self.keyword("false") {
            return Ok(Expr::False);
        }
        if self.keyword("not") {
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(Error::TooDeep(MAX_DEPTH));
            }
            let e = self.factor()?.negate();
            self.depth -= 1;
            return Ok(e);
        }
        let name = self.peek_word().to_string();
        if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return Err(self.error("expected a column, `(`, TRUE, FALSE or NOT"));
        }
        let column = (self.resolve)(&name).ok_or(Error::UnknownColumn(name.clone()))?;
        self.pos += name.len();
        if self.keyword("between") {
            let lo = self.scalar()?;
            if !self.keyword("and") {
                return Err(self.error("expected AND in BETWEEN"));
            }
            let hi = self.scalar()?;
            return Ok(Expr::between(column, lo, hi));
        }
        self.skip_ws();
        let rest = &self.text[self.pos..];
        let (op, len) = [
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("<>", Op::Ne),
            ("!=", Op::Ne),
            ("<", Op::Lt),
            (">", Op::Gt),
            ("=", Op::Eq),
        ]
        .iter()
        .find(|(s, _)| rest.starts_with(s))
        .map(|(s, op)| (*op, s.len()))
        .ok_or_else(|| self.error("expected a comparison operator"))?;
        self.pos += len;
        let value = self.scalar()?;
        Ok(Expr::atom(column, op, value))
    }

    fn scalar(&mut self) -> Result<Value, Error> {
        let word = self.peek_word().to_string();
        let value = if let Some(n) = word.strip_prefix('$') {
            match n.parse::<u16>() {
                Ok(i) if i >= 1 => Value::Param(i - 1),
                _ => return Err(self.error("expected a parameter $1, $2, …")),
            }
        } else {
            Value::Const(
                word.parse::<i64>()
                    .map_err(|_| self.error("expected an integer or $n"))?,
            )
        };
        self.pos += word.len();
        Ok(value)
    }
}

impl fmt::Display for Atom<i64> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "c{} {} {}", self.column, self.op.symbol(), self.value)
    }
}

impl fmt::Display for Atom<Value> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value {
            Value::Const(c) => write!(f, "c{} {} {}", self.column, self.op.symbol(), c),
            Value::Param(i) => write!(f, "c{} {} ${}", self.column, self.op.symbol(), i + 1),
        }
    }
}

impl<V> fmt::Display for Expr<V>
where
    Atom<V>: fmt::Display,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, ps: &[Expr<V>], sep: &str| {
            write!(f, "(")?;
            for (i, p) in ps.iter().enumerate() {
                if i > 0 {
                    write!(f, " {sep} ")?;
                }
                write!(f, "{p}")?;
            }
            write!(f, ")")
        };
        match self {
            Expr::True => write!(f, "TRUE"),
            Expr::False => write!(f, "FALSE"),
            Expr::Atom(a) => write!(f, "{a}"),
            Expr::And(ps) => list(f, ps, "AND"),
            Expr::Or(ps) => list(f, ps, "OR"),
        }
    }
}

/// The order-preserving key of a double: `x < y ⇔ float_key(x) < float_key(y)` for non-NaN values,
/// with `-0.0` and `0.0` mapped to one key (SQL compares them equal). NaN is refused.
pub fn float_key(x: f64) -> Result<i64, Error> {
    if x.is_nan() {
        return Err(Error::UnsupportedScalar("NaN".into()));
    }
    let x = if x == 0.0 { 0.0 } else { x };
    let bits = x.to_bits() as i64;
    // Negative doubles order backwards in their bits: flip all but the sign bit.
    Ok(bits ^ ((bits >> 63) & i64::MAX))
}

/// The string's first 8 bytes, big-endian, zero-padded, sign-flipped into `i64`'s order: monotone
/// (`s ≤ t ⇒ string_key(s) ≤ string_key(t)` in byte order) but not injective past 8 bytes.
pub fn string_key(s: &str) -> i64 {
    let mut b = [0u8; 8];
    let n = s.len().min(8);
    b[..n].copy_from_slice(&s.as_bytes()[..n]);
    (u64::from_be_bytes(b) ^ (1 << 63)) as i64
}

/// `column op s` over a string column whose values are stored as [`string_key`]s, widened so that
/// every string satisfying the comparison satisfies the result: `=` keeps the key (all strings with
/// the same prefix), `<`/`≤` become `≤ key`, `>`/`≥` become `≥ key`, `≠` becomes `TRUE`.
pub fn string_atom(column: ColumnId, op: Op, s: &str) -> Predicate {
    let k = string_key(s);
    match op {
        Op::Eq => Expr::atom(column, Op::Eq, k),
        Op::Lt | Op::Le => Expr::atom(column, Op::Le, k),
        Op::Gt | Op::Ge => Expr::atom(column, Op::Ge, k),
        Op::Ne => Expr::True,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_papers_shapes() {
        let p = Predicate::parse("a = 1 OR b > 2").unwrap();
        assert_eq!(p, Expr::or(vec![Expr::eq(0, 1), Expr::atom(1, Op::Gt, 2)]));
        let q = Predicate::parse("(a = 3) and b BETWEEN -4 AND 7").unwrap();
        assert_eq!(q, Expr::and(vec![Expr::eq(0, 3), Expr::between(1, -4, 7)]));
        let t = Prepared::parse("a = $1 OR b > $2").unwrap();
        assert_eq!(t.arity(), 2);
        assert_eq!(t.bind(&[1, 2]).unwrap(), p);
        assert_eq!(t.bind(&[1]), None);
        assert_eq!(Predicate::parse(&p.to_string()).unwrap(), p);
        assert_eq!(
            Predicate::parse("NOT (a < 1 AND b <> 2)").unwrap(),
            Predicate::parse("a >= 1 OR b = 2").unwrap()
        );
    }

    #[test]
    fn malformed_predicates_are_errors_not_panics() {
        for bad in [
            "",
            "a",
            "a =",
            "a = x",
            "(a = 1",
            "a = 1)",
            "a BETWEEN 1 2",
            "zz = 1",
            "a = $0",
            "a == 1",
            "a = 1 AND",
            "a = 99999999999999999999",
        ] {
            assert!(Predicate::parse(bad).is_err(), "{bad:?} parsed");
        }
        assert!(matches!(
            Predicate::parse("a = $1"),
            Err(Error::Parse { .. })
        ));
        assert_eq!(
            Predicate::parse("zz = 1"),
            Err(Error::UnknownColumn("zz".into()))
        );
        let deep = "(".repeat(200) + "a = 1" + &")".repeat(200);
        assert_eq!(Predicate::parse(&deep), Err(Error::TooDeep(MAX_DEPTH)));
        let nots = "NOT ".repeat(200) + "a = 1";
        assert_eq!(Predicate::parse(&nots), Err(Error::TooDeep(MAX_DEPTH)));
        assert_eq!(
            Predicate::and(vec![]).validate(4),
            Err(Error::EmptyConnective("AND"))
        );
        assert_eq!(
            Predicate::or(vec![Expr::True, Expr::or(vec![])]).validate(4),
            Err(Error::EmptyConnective("OR"))
        );
        assert_eq!(
            Predicate::eq(4, 1).validate(4),
            Err(Error::ColumnOutOfRange {
                column: 4,
                width: 4
            })
        );
        assert_eq!(
            Predicate::eq(64, 1).validate(100),
            Err(Error::ColumnOutOfRange {
                column: 64,
                width: 64
            })
        );
        let mut deep = Predicate::eq(0, 1);
        for _ in 0..100 {
            deep = Expr::and(vec![deep]);
        }
        assert_eq!(deep.validate(4), Err(Error::TooDeep(MAX_DEPTH)));
    }

    #[test]
    fn freed_drops_the_written_columns_and_only_widens() {
        let p = Predicate::parse("(c1 = 3 AND c0 = 7) OR c2 > 4").unwrap();
        assert_eq!(p.freed(0), p, "nothing written: unchanged");
        assert_eq!(p.freed(1 << 5), p, "a column it does not name: unchanged");
        assert_eq!(
            p.freed(1 << 1),
            Predicate::parse("c0 = 7 OR c2 > 4").unwrap()
        );
        assert_eq!(p.freed(1 << 2), Expr::True, "a freed disjunct covers all");
        // Every row the original covers, the freed one covers (a small exhaustive check).
        for mask in 0..8u64 {
            let f = p.freed(mask);
            for r in 0..512 {
                let row = [r % 8, (r / 8) % 8, (r / 64) % 8];
                assert!(
                    !p.eval(&row) || f.eval(&row),
                    "{p} freed {mask:b} = {f} on {row:?}"
                );
            }
        }
    }

    #[test]
    fn simplify_folds_constants() {
        let p = Predicate::parse("(a = 1 AND TRUE) OR (b = 2 AND FALSE)").unwrap();
        assert_eq!(p.simplify(), Expr::eq(0, 1));
        assert_eq!(
            Predicate::parse("a = 1 OR TRUE").unwrap().simplify(),
            Expr::True
        );
        assert_eq!(
            Predicate::parse("a = 1 AND (b = 1 AND c = 1)")
                .unwrap()
                .simplify(),
            Predicate::parse("a = 1 AND b = 1 AND c = 1").unwrap()
        );
    }

    #[test]
    fn encodings_preserve_order() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -1.0,
            -0.0,
            0.0,
            1e-300,
            1.0,
            2.5,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(
                float_key(w[0]).unwrap() <= float_key(w[1]).unwrap(),
                "{w:?}"
            );
        }
        assert_eq!(float_key(-0.0), float_key(0.0));
        assert!(float_key(f64::NAN).is_err());
        let ss = ["", "a", "ab", "abcdefgh", "abcdefghz", "b", "zzz"];
        for w in ss.windows(2) {
            assert!(string_key(w[0]) <= string_key(w[1]), "{w:?}");
        }
        // Widened comparisons cover every string that satisfies the original one.
        let lock = string_atom(0, Op::Lt, "abcdefghij");
        assert!(lock.eval(&[string_key("abcdefghaa")]));
        assert_eq!(string_atom(0, Op::Ne, "x"), Expr::True);
    }
}
