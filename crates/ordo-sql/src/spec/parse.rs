//! The isolationtester spec format.
//!
//! ```text
//! spec        := setup* teardown? session+ permutation*
//! setup       := "setup" sqlblock            teardown := "teardown" sqlblock
//! session     := "session" name setup? step+ teardown?
//! step        := "step" name sqlblock
//! permutation := "permutation" (name annotation?)+
//! sqlblock    := "{" any text without "}" "}"
//! name        := identifier | "double-quoted"
//! ```
//! `#` starts a comment to the end of the line. Step annotations in permutations (`s1a(s2b)`,
//! `s1a(*)`) are accepted and ignored: this runner learns blocking from the protocol. Every SQL block
//! is parsed when the spec is read, so a syntax error is reported with the spec's file and line.

use crate::session;
use std::fmt;

/// A spec error: where and what.
#[derive(Debug, Clone)]
pub struct SpecError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for SpecError {}

/// SQL text and the line it starts on.
#[derive(Debug, Clone)]
pub struct Block {
    pub sql: String,
    pub line: usize,
}

#[derive(Debug, Clone)]
pub struct Step {
    pub name: String,
    pub sql: Block,
}

#[derive(Debug, Clone)]
pub struct SessionSpec {
    pub name: String,
    pub setup: Option<Block>,
    pub steps: Vec<Step>,
    pub teardown: Option<Block>,
}

/// A parsed spec.
#[derive(Debug, Clone)]
pub struct Spec {
    pub setup: Vec<Block>,
    pub teardown: Option<Block>,
    pub sessions: Vec<SessionSpec>,
    /// Permutations as `(session, step)` indices; empty: every interleaving.
    pub permutations: Vec<Vec<(usize, usize)>>,
}

impl Spec {
    /// Every SQL text of the spec (to find isolation levels).
    pub fn all_sql(&self) -> String {
        let mut s = String::new();
        for b in self.setup.iter().chain(&self.teardown) {
            s.push_str(&b.sql);
        }
        for ss in &self.sessions {
            for b in ss.setup.iter().chain(&ss.teardown) {
                s.push_str(&b.sql);
                s.push('\n');
            }
            for st in &ss.steps {
                s.push_str(&st.sql.sql);
                s.push('\n');
            }
        }
        s
    }
    /// The permutations to run.
    pub fn permutations(&self) -> Vec<Vec<(usize, usize)>> {
        if self.permutations.is_empty() {
            let steps: Vec<usize> = self.sessions.iter().map(|s| s.steps.len()).collect();
            super::permute::interleavings(&steps)
        } else {
            self.permutations.clone()
        }
    }
    pub fn step(&self, (s, i): (usize, usize)) -> &Step {
        &self.sessions[s].steps[i]
    }
}

#[derive(Debug, PartialEq)]
enum Tok {
    Word(String),
    Quoted(String),
    Sql(String),
    Annotation,
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    line: usize,
    file: &'a str,
}

impl Lexer<'_> {
    fn err(&self, line: usize, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.to_string(),
            line,
            message: message.into(),
        }
    }
    fn bump(&mut self) -> u8 {
        let c = self.src[self.pos];
        self.pos += 1;
        if c == b'\n' {
            self.line += 1;
        }
        c
    }
    /// The next token and its line.
    fn next(&mut self) -> Result<Option<(Tok, usize)>, SpecError> {
        loop {
            while self.pos < self.src.len() && self.src[self.pos].is_ascii_whitespace() {
                self.bump();
            }
            if self.pos < self.src.len() && self.src[self.pos] == b'#' {
                while self.pos < self.src.len() && self.src[self.pos] != b'\n' {
                    self.bump();
                }
                continue;
            }
            break;
        }
        if self.pos >= self.src.len() {
            return Ok(None);
        }
        let line = self.line;
        let start = self.pos;
        let tok = match self.bump() {
            b'{' => {
                let body_start = self.pos;
                while self.pos < self.src.len() && self.src[self.pos] != b'}' {
                    self.bump();
                }
                if self.pos >= self.src.len() {
                    return Err(self.err(line, "unterminated SQL block: missing `}`"));
                }
                let body = String::from_utf8_lossy(&self.src[body_start..self.pos]).into_owned();
                self.bump();
                Tok::Sql(body)
            }
            b'"' => {
                let s = self.pos;
                while self.pos < self.src.len() && self.src[self.pos] != b'"' {
                    self.bump();
                }
                if self.pos >= self.src.len() {
                    return Err(self.err(line, "unterminated quoted name"));
                }
                let name = String::from_utf8_lossy(&self.src[s..self.pos]).into_owned();
                self.bump();
                Tok::Quoted(name)
            }
            b'(' => {
                while self.pos < self.src.len() && self.src[self.pos] != b')' {
                    self.bump();
                }
                if self.pos >= self.src.len() {
                    return Err(self.err(line, "unterminated step annotation: missing `)`"));
                }
                self.bump();
                Tok::Annotation
            }
            c if c.is_ascii_alphanumeric() || c == b'_' => {
                while self.pos < self.src.len()
                    && (self.src[self.pos].is_ascii_alphanumeric() || self.src[self.pos] == b'_')
                {
                    self.bump();
                }
                Tok::Word(String::from_utf8_lossy(&self.src[start..self.pos]).into_owned())
            }
            c => return Err(self.err(line, format!("unexpected character `{}`", c as char))),
        };
        Ok(Some((tok, line)))
    }
}

/// Parses spec text; `file` names it in errors.
pub fn parse_spec(file: &str, text: &str) -> Result<Spec, SpecError> {
    let mut lx = Lexer {
        src: text.as_bytes(),
        pos: 0,
        line: 1,
        file,
    };
    let mut toks = Vec::new();
    while let Some(t) = lx.next()? {
        toks.push(t);
    }
    let mut spec = Spec {
        setup: Vec::new(),
        teardown: None,
        sessions: Vec::new(),
        permutations: Vec::new(),
    };
    let mut raw_perms: Vec<Vec<(String, usize)>> = Vec::new();
    let mut i = 0;
    let last_line = lx.line;
    let err = |line: usize, m: String| SpecError {
        file: file.to_string(),
        line,
        message: m,
    };
    let block = |i: &mut usize, what: &str, line: usize| -> Result<Block, SpecError> {
        match toks.get(*i) {
            Some((Tok::Sql(s), l)) => {
                *i += 1;
                check_sql(file, s, *l)?;
                Ok(Block {
                    sql: s.clone(),
                    line: *l,
                })
            }
            Some((_, l)) => Err(err(*l, format!("expected `{{ SQL }}` after {what}"))),
            None => Err(err(line, format!("expected `{{ SQL }}` after {what}"))),
        }
    };
    let name = |i: &mut usize, what: &str, line: usize| -> Result<String, SpecError> {
        match toks.get(*i) {
            Some((Tok::Word(w) | Tok::Quoted(w), _)) => {
                *i += 1;
                Ok(w.clone())
            }
            Some((_, l)) => Err(err(*l, format!("expected a name after {what}"))),
            None => Err(err(line, format!("expected a name after {what}"))),
        }
    };
    while i < toks.len() {
        let (tok, line) = &toks[i];
        let line = *line;
        i += 1;
        let Tok::Word(w) = tok else {
            return Err(err(
                line,
                "expected setup, teardown, session, step or permutation".into(),
            ));
        };
        match w.as_str() {
            "setup" if spec.sessions.is_empty() => spec.setup.push(block(&mut i, "setup", line)?),
            "teardown" if spec.sessions.is_empty() => {
                if spec.teardown.is_some() {
                    return Err(err(line, "more than one teardown block".into()));
                }
                spec.teardown = Some(block(&mut i, "teardown", line)?);
            }
            "session" if raw_perms.is_empty() => {
                let n = name(&mut i, "session", line)?;
                if spec.sessions.iter().any(|s| s.name == n) {
                    return Err(err(line, format!("session `{n}` defined twice")));
                }
                spec.sessions.push(SessionSpec {
                    name: n,
                    setup: None,
                    steps: Vec::new(),
                    teardown: None,
                });
            }
            "setup" | "step" | "teardown" if raw_perms.is_empty() => {
                let s = spec.sessions.last_mut().expect("guarded: sessions exist");
                match w.as_str() {
                    "setup" if s.steps.is_empty() && s.setup.is_none() => {
                        s.setup = Some(block(&mut i, "setup", line)?)
                    }
                    "step" if s.teardown.is_none() => {
                        let n = name(&mut i, "step", line)?;
                        let b = block(&mut i, "step", line)?;
                        let s = spec.sessions.last_mut().expect("exists");
                        s.steps.push(Step { name: n, sql: b });
                    }
                    "teardown" if s.teardown.is_none() && !s.steps.is_empty() => {
                        s.teardown = Some(block(&mut i, "teardown", line)?)
                    }
                    _ => return Err(err(line, format!("`{w}` is out of place here"))),
                }
            }
            "permutation" => {
                let mut p = Vec::new();
                while let Some((Tok::Word(n) | Tok::Quoted(n), l)) = toks.get(i) {
                    if matches!(n.as_str(), "permutation") && matches!(toks[i].0, Tok::Word(_)) {
                        break;
                    }
                    p.push((n.clone(), *l));
                    i += 1;
                    if let Some((Tok::Annotation, _)) = toks.get(i) {
                        i += 1;
                    }
                }
                if p.is_empty() {
                    return Err(err(line, "a permutation needs at least one step".into()));
                }
                raw_perms.push(p);
            }
            _ => return Err(err(line, format!("unexpected `{w}`"))),
        }
    }
    if spec.sessions.is_empty() {
        return Err(err(last_line, "a spec needs at least one session".into()));
    }
    for s in &spec.sessions {
        if s.steps.is_empty() {
            return Err(err(last_line, format!("session `{}` has no steps", s.name)));
        }
    }
    for p in raw_perms {
        let mut perm = Vec::new();
        for (n, l) in p {
            let found =
                spec.sessions.iter().enumerate().find_map(|(si, s)| {
                    s.steps.iter().position(|st| st.name == n).map(|k| (si, k))
                });
            perm.push(found.ok_or_else(|| err(l, format!("undefined step `{n}` in permutation")))?);
        }
        spec.permutations.push(perm);
    }
    let mut names: Vec<&str> = spec
        .sessions
        .iter()
        .flat_map(|s| s.steps.iter().map(|st| st.name.as_str()))
        .collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(err(1, format!("step name `{}` used twice", w[0])));
    }
    Ok(spec)
}

/// Parses a block's SQL so syntax errors point into the spec file.
fn check_sql(file: &str, sql: &str, line: usize) -> Result<(), SpecError> {
    match session::parse(sql) {
        Ok(_) => Ok(()),
        Err(e) => {
            let (l, c) = e.position.unwrap_or((1, 1));
            Err(SpecError {
                file: file.to_string(),
                line: line + l as usize - 1,
                message: format!("{} (column {c} of the SQL block)", e.message),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"
# a comment
setup { CREATE TABLE t (k INT PRIMARY KEY); }
teardown { DROP TABLE t; }
session s1
setup { BEGIN; }
step "s1a" { SELECT * FROM t; }
step s1b { COMMIT; }
session "s2"
step s2a { INSERT INTO t VALUES (1); }
permutation s1a s2a(s1a) s1b
permutation "s2a" s1a s1b
"#;

    #[test]
    fn reads_every_part() {
        let s = parse_spec("x.spec", SPEC).unwrap();
        assert_eq!(s.setup.len(), 1);
        assert!(s.teardown.is_some());
        assert_eq!(s.sessions.len(), 2);
        assert!(s.sessions[0].setup.is_some());
        assert_eq!(s.sessions[0].steps[1].name, "s1b");
        assert_eq!(
            s.permutations,
            vec![vec![(0, 0), (1, 0), (0, 1)], vec![(1, 0), (0, 0), (0, 1)]]
        );
        assert_eq!(s.step((1, 0)).sql.line, 10);
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let e = parse_spec(
            "bad.spec",
            "session s1\nstep a { SELECT 1; }\nstep b { SELEC 2; }\n",
        )
        .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("bad.spec", 3), "{e}");
        let e = parse_spec(
            "bad.spec",
            "session s1\nstep a { SELECT 1; }\npermutation a zz\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("undefined step `zz`"));
        let e = parse_spec("bad.spec", "session s1\nstep a { SELECT 1;\n").unwrap_err();
        assert!(e.message.contains("unterminated"), "{e}");
        let e = parse_spec("bad.spec", "setup { SELECT 1; }\n").unwrap_err();
        assert!(e.message.contains("at least one session"), "{e}");
    }
}
