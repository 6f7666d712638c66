//! Sessions: each one a thread with its own protocol worker and, between `BEGIN` and `COMMIT`, its own
//! open transaction.
//!
//! A transaction of Ordo's interactive API borrows its protocol and worker (`P::Tx<'w>`), so it lives
//! in a stack frame of the session's thread, and statements arrive over a channel: a [`Session`] handle
//! sends SQL text, the thread runs it and sends a [`Reply`]. The thread installs a
//! [`ordo::txn::wait::WaitObserver`], so whoever drives the session sees from the
//! protocol itself when a statement is blocked on a lock ([`Session::observer`]).
//!
//! Transaction semantics follow PostgreSQL: a statement outside `BEGIN ... COMMIT` runs in its own
//! transaction; any error inside a block aborts the transaction and later statements fail with
//! `25P02` until `COMMIT` (which then reports `ROLLBACK`) or `ROLLBACK`.
//!
//! A statement blocked in the protocol can be cancelled ([`WaitObserver::cancel`] on
//! [`Session::observer`]), as PostgreSQL's `pg_cancel_backend`: the protocol gives up the wait, and
//! the statement fails with `57014 canceling statement due to user request`, which aborts its
//! transaction like any other error.

use crate::catalog::Catalog;
use crate::ddl;
use crate::engine::{self, Engine, Instance, MAX_SESSIONS};
use crate::error::{SqlError, SqlResult};
use crate::exec::{self, Output};
use crate::value::Datum;
use ordo::check::TxnRecord;
use ordo::protocols::{Protocol, ProtocolConfig, ProtocolVisitor};
use ordo::txn::predicate::Isolation;
use ordo::txn::wait::{self, WaitObserver};
use ordo::txn::Tx;
use sqlparser::ast::{self, Statement};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};
use std::collections::{HashMap, VecDeque};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Parses SQL text into statements (PostgreSQL dialect), first rewriting what PostgreSQL accepts
/// and sqlparser does not (see [`rewrite`]).
pub fn parse(sql: &str) -> SqlResult<Vec<Statement>> {
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(ParserError::from)?;
    if begins_base(&tokens) {
        return Err(SqlError::unsupported(
            "BEGIN BASE: Salt's BASE transactions (Xie 2016, Ch. 3) are programs whose pieces are \
             grouped into alkaline subtransactions (`Program::alkaline_starts`; `ordo bench -p salt \
             --base-ified`); every SQL transaction runs as an ACID one",
        ));
    }
    Ok(Parser::new(&dialect)
        .with_tokens_with_locations(rewrite(tokens))
        .parse_statements()?)
}

/// Whether `t` is the unquoted word `name` (any case).
fn is_word(t: &TokenWithSpan, name: &str) -> bool {
    matches!(&t.token, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(name))
}

/// Whether a statement of `tokens` starts `BEGIN BASE` (Salt's spelling of a BASE transaction),
/// which sqlparser would only call a syntax error.
fn begins_base(tokens: &[TokenWithSpan]) -> bool {
    let sig: Vec<&TokenWithSpan> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    (0..sig.len()).any(|i| {
        (i == 0 || sig[i - 1].token == Token::SemiColon)
            && is_word(sig[i], "begin")
            && sig.get(i + 1).is_some_and(|t| is_word(t, "base"))
    })
}

/// PostgreSQL's spellings sqlparser lacks, rewritten token by token, statement by statement:
///
/// * `ABORT [WORK | TRANSACTION]` is `ROLLBACK`;
/// * `DEFERRABLE` and `NOT DEFERRABLE` among the modes of `BEGIN`, `START TRANSACTION` and
///   `SET [SESSION CHARACTERISTICS AS] TRANSACTION` are dropped (with a comma beside them).
///   PostgreSQL uses `DEFERRABLE` only for a `SERIALIZABLE READ ONLY` transaction, which then waits
///   for a snapshot that cannot fail; Ordo's protocols have no such wait, so it has no effect.
fn rewrite(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let word = is_word;
    let mut keep = vec![true; tokens.len()];
    let mut out_tokens = tokens;
    let mut start = 0;
    while start < out_tokens.len() {
        let end = (start..out_tokens.len())
            .find(|&i| out_tokens[i].token == Token::SemiColon)
            .unwrap_or(out_tokens.len());
        // The statement's significant tokens.
        let sig: Vec<usize> = (start..end)
            .filter(|&i| !matches!(out_tokens[i].token, Token::Whitespace(_)))
            .collect();
        let nth = |n: usize, w: &str| sig.get(n).is_some_and(|&i| word(&out_tokens[i], w));
        let transaction = nth(0, "begin")
            || nth(0, "start")
            || (nth(0, "set") && (nth(1, "transaction") || nth(1, "session")));
        if nth(0, "abort") {
            out_tokens[sig[0]].token = Token::make_keyword("ROLLBACK");
        }
        if transaction {
            for (j, &i) in sig.iter().enumerate() {
                if !word(&out_tokens[i], "deferrable") {
                    continue;
                }
                let from = if j > 0 && word(&out_tokens[sig[j - 1]], "not") {
                    j - 1
                } else {
                    j
                };
                for &k in &sig[from..=j] {
                    keep[k] = false;
                }
                let comma = |k: usize| out_tokens[sig[k]].token == Token::Comma && keep[sig[k]];
                if from > 0 && comma(from - 1) {
                    keep[sig[from - 1]] = false;
                } else if j + 1 < sig.len() && comma(j + 1) {
                    keep[sig[j + 1]] = false;
                }
            }
        }
        start = end + 1;
    }
    out_tokens
        .into_iter()
        .zip(keep)
        .filter_map(|(t, k)| k.then_some(t))
        .collect()
}

/// One statement's outcome.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StmtResult {
    pub sql: String,
    pub result: Result<Output, SqlError>,
}

/// How a transaction ended.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnEnd {
    Committed,
    RolledBack,
    Aborted(SqlError),
}

/// What a session sends back for one request.
#[derive(Debug, Default)]
pub struct Reply {
    pub results: Vec<StmtResult>,
    /// Transactions that ended while running the request.
    pub ends: Vec<TxnEnd>,
    /// For a history request: the recorded transactions since the last one.
    pub history: Vec<TxnRecord>,
}

enum Request {
    Sql(String),
    History,
    Checkpoint,
}

/// A handle to a session thread.
pub struct Session {
    tx: Option<Sender<Request>>,
    rx: Receiver<Reply>,
    observer: WaitObserver,
    thread: Option<JoinHandle<()>>,
}

/// An engine of any protocol, as sessions see it.
pub trait AnyEngine: Send + Sync {
    /// Starts session `id` (a protocol worker id: distinct, below [`MAX_SESSIONS`]).
    fn session(self: Arc<Self>, id: u32) -> Session;
    /// The protocol's name.
    fn protocol(&self) -> &'static str;
}

impl<P: Protocol> AnyEngine for Engine<P> {
    fn session(self: Arc<Self>, id: u32) -> Session {
        assert!((id as usize) < MAX_SESSIONS, "session id {id} out of range");
        let (req_tx, req_rx) = channel();
        let (rep_tx, rep_rx) = channel();
        let observer = WaitObserver::new();
        let obs = observer.clone();
        let thread = std::thread::Builder::new()
            .name(format!("sql-session-{id}"))
            .spawn(move || {
                wait::observe(Some(obs));
                session_main(self, id, req_rx, rep_tx);
            })
            .expect("spawn session thread");
        Session {
            tx: Some(req_tx),
            rx: rep_rx,
            observer,
            thread: Some(thread),
        }
    }
    fn protocol(&self) -> &'static str {
        P::INFO.name
    }
}

/// Opens an empty engine under the protocol called `name`.
pub fn open(
    name: &str,
    config: ProtocolConfig,
    recording: bool,
) -> Result<Arc<dyn AnyEngine>, ordo::protocols::UnknownProtocol> {
    struct Open(ProtocolConfig, bool);
    impl ProtocolVisitor for Open {
        type Output = Arc<dyn AnyEngine>;
        fn visit<P: Protocol>(self) -> Arc<dyn AnyEngine> {
            Arc::new(Engine::<P>::new(self.0, self.1))
        }
    }
    ordo::protocols::with_protocol(name, Open(config, recording))
}

impl Session {
    /// Sends SQL text (one or more statements) without waiting.
    pub fn send(&self, sql: &str) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Request::Sql(sql.to_string()));
        }
    }
    /// Asks for the recorded history (reply in [`Reply::history`]).
    pub fn send_history(&self) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Request::History);
        }
    }
    /// Rebuilds the engine's instance with the catalog unchanged, so every row becomes a loaded row
    /// (version 0) and histories recorded afterwards stand on their own (see [`crate::engine`]).
    pub fn checkpoint(&self) -> SqlResult<()> {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Request::Checkpoint);
        }
        match self.reply().results.pop() {
            Some(StmtResult { result: Err(e), .. }) => Err(e),
            _ => Ok(()),
        }
    }
    /// The reply to an earlier request, if it is ready.
    pub fn try_reply(&self) -> Option<Reply> {
        match self.rx.try_recv() {
            Ok(r) => Some(r),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Reply::default()),
        }
    }
    /// Waits for the reply to an earlier request.
    pub fn reply(&self) -> Reply {
        self.rx.recv().unwrap_or_default()
    }
    /// Runs SQL text and waits for the outcome.
    pub fn execute(&self, sql: &str) -> Reply {
        self.send(sql);
        self.reply()
    }
    /// Whether the session thread is blocked inside the protocol, and how many wait rounds it has
    /// reported (see [`ordo::txn::wait`]).
    pub fn observer(&self) -> &WaitObserver {
        &self.observer
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A unit of work for the session thread.
enum Item {
    Stmt(Box<Statement>),
    Failed(SqlError),
    /// The end of a request: send the reply.
    End,
    History,
    Checkpoint,
}

/// The channel side of a session thread.
struct Conn {
    rx: Receiver<Request>,
    tx: Sender<Reply>,
    pending: VecDeque<Item>,
    reply: Reply,
    prepared: HashMap<String, Statement>,
    /// `SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY`: transactions start read-only.
    default_read_only: bool,
}

impl Conn {
    fn next(&mut self) -> Option<Item> {
        if let Some(i) = self.pending.pop_front() {
            return Some(i);
        }
        match self.rx.recv().ok()? {
            Request::History => Some(Item::History),
            Request::Checkpoint => Some(Item::Checkpoint),
            Request::Sql(text) => {
                // A cancel meant for the previous request, too late to end its wait, must not end
                // one of this request's.
                wait::take_cancel();
                match parse(&text) {
                    Ok(stmts) => self
                        .pending
                        .extend(stmts.into_iter().map(|s| Item::Stmt(Box::new(s)))),
                    Err(e) => self.pending.push_back(Item::Failed(e)),
                }
                self.pending.push_back(Item::End);
                self.pending.pop_front()
            }
        }
    }
    /// Drops the rest of the current request (after an error, as PostgreSQL does).
    fn skip_request(&mut self) {
        while let Some(i) = self.pending.front() {
            if matches!(i, Item::End) {
                break;
            }
            self.pending.pop_front();
        }
    }
    fn push(&mut self, stmt: &Statement, result: SqlResult<Output>) {
        let failed = result.is_err();
        self.reply.results.push(StmtResult {
            sql: stmt.to_string(),
            result,
        });
        if failed {
            self.skip_request();
        }
    }
    fn push_err(&mut self, e: SqlError) {
        self.reply.results.push(StmtResult {
            sql: String::new(),
            result: Err(e),
        });
        self.skip_request();
    }
    fn send(&mut self) {
        let _ = self.tx.send(std::mem::take(&mut self.reply));
    }
}

/// A session thread's state.
struct State<P: Protocol> {
    engine: Arc<Engine<P>>,
    id: u32,
    inst: Arc<Instance<P>>,
    worker: P::Worker,
}

impl<P: Protocol> State<P> {
    /// Moves to the engine's current instance if a rebuild happened.
    fn refresh(&mut self) {
        let cur = self.engine.current();
        if cur.generation != self.inst.generation {
            self.worker = cur.protocol.worker(self.id, self.engine.recording());
            self.inst = cur;
        }
    }
}

/// What kind of statement, for the transaction state machine.
enum Kind {
    Begin,
    Commit,
    Rollback,
    Ddl,
    /// Runs no transaction (SET, PREPARE, DEALLOCATE).
    Local,
    /// DML or a query (possibly through EXECUTE), with its parameters.
    Dml(Box<Statement>, Vec<Datum>),
}

fn classify(stmt: &Statement, prepared: &HashMap<String, Statement>) -> SqlResult<Kind> {
    Ok(match stmt {
        Statement::StartTransaction { statements, .. } if statements.is_empty() => Kind::Begin,
        Statement::Commit { chain: false, .. } => Kind::Commit,
        Statement::Rollback {
            chain: false,
            savepoint: None,
        } => Kind::Rollback,
        Statement::CreateTable(_)
        | Statement::CreateIndex(_)
        | Statement::AlterTable { .. }
        | Statement::Drop { .. } => Kind::Ddl,
        Statement::Set(_) | Statement::Prepare { .. } | Statement::Deallocate { .. } => Kind::Local,
        Statement::Execute {
            name: Some(name),
            parameters,
            immediate: false,
            ..
        } => {
            let n = crate::expr::object_name(name)?;
            let inner = prepared.get(&n).ok_or_else(|| {
                SqlError::new(
                    "26000",
                    format!("prepared statement \"{n}\" does not exist"),
                )
            })?;
            let params = parameters
                .iter()
                .map(engine::constant)
                .collect::<SqlResult<_>>()?;
            Kind::Dml(Box::new(inner.clone()), params)
        }
        other => Kind::Dml(Box::new(other.clone()), Vec::new()),
    })
}

fn local(stmt: &Statement, conn: &mut Conn) -> SqlResult<Output> {
    match stmt {
        Statement::Prepare {
            name, statement, ..
        } => {
            conn.prepared
                .insert(crate::expr::column_name(name), (**statement).clone());
            Ok(Output::Command("PREPARE".into()))
        }
        Statement::Deallocate { name, .. } => {
            conn.prepared.remove(&crate::expr::column_name(name));
            Ok(Output::Command("DEALLOCATE".into()))
        }
        // The default access mode of later transactions.
        Statement::Set(ast::Set::SetTransaction {
            modes,
            session: true,
            ..
        }) => {
            if let Some(r) = modes_of(modes).read_only {
                conn.default_read_only = r;
            }
            Ok(Output::Command("SET".into()))
        }
        // SET TRANSACTION outside a block (PostgreSQL: a WARNING and no effect), SET SESSION
        // CHARACTERISTICS' isolation level and planner settings: accepted; the protocol decides
        // isolation.
        _ => Ok(Output::Command("SET".into())),
    }
}

fn ddl_catalog(stmt: &Statement, cat: &Catalog) -> SqlResult<(Option<Catalog>, &'static str)> {
    match stmt {
        Statement::CreateTable(ct) => Ok((ddl::create_table(cat, ct)?, "CREATE TABLE")),
        Statement::CreateIndex(ci) => Ok((ddl::create_index(cat, ci)?, "CREATE INDEX")),
        Statement::AlterTable {
            name,
            if_exists,
            operations,
            ..
        } => Ok((
            ddl::alter_table(cat, name, *if_exists, operations)?,
            "ALTER TABLE",
        )),
        Statement::Drop {
            object_type,
            if_exists,
            names,
            ..
        } => Ok((
            ddl::drop(cat, object_type, names, *if_exists)?,
            if *object_type == ast::ObjectType::Index {
                "DROP INDEX"
            } else {
                "DROP TABLE"
            },
        )),
        _ => unreachable!("classified as DDL"),
    }
}

fn session_main<P: Protocol>(
    engine: Arc<Engine<P>>,
    id: u32,
    rx: Receiver<Request>,
    tx: Sender<Reply>,
) {
    let inst = engine.current();
    let worker = inst.protocol.worker(id, engine.recording());
    let mut st = State {
        engine,
        id,
        inst,
        worker,
    };
    let mut conn = Conn {
        rx,
        tx,
        pending: VecDeque::new(),
        reply: Reply::default(),
        prepared: HashMap::new(),
        default_read_only: false,
    };
    while let Some(item) = conn.next() {
        match item {
            Item::End => conn.send(),
            Item::History => {
                conn.reply.history = P::recorder(&mut st.worker).take();
                conn.send();
            }
            Item::Checkpoint => {
                st.refresh();
                let cat = st.inst.catalog.clone();
                if let Err(e) = st.engine.rebuild(&mut st.worker, cat) {
                    conn.push_err(e);
                }
                st.refresh();
                // Start the new instance with an empty history.
                let _ = P::recorder(&mut st.worker).take();
                conn.send();
            }
            Item::Failed(e) => conn.push_err(e),
            Item::Stmt(stmt) => outside_block(&mut st, &mut conn, stmt),
        }
    }
}

/// A statement outside a transaction block.
fn outside_block<P: Protocol>(st: &mut State<P>, conn: &mut Conn, stmt: Box<Statement>) {
    let kind = match classify(&stmt, &conn.prepared) {
        Ok(k) => k,
        Err(e) => {
            conn.push(&stmt, Err(e));
            return;
        }
    };
    match kind {
        Kind::Begin => {
            conn.push(&stmt, Ok(Output::Command("BEGIN".into())));
            let modes = transaction_modes(&stmt).unwrap_or_default();
            let read_only = modes.read_only.unwrap_or(conn.default_read_only);
            block(st, conn, modes.isolation, read_only);
        }
        Kind::Commit | Kind::Rollback => {
            // PostgreSQL: a WARNING (no transaction in progress), not an error.
            let tag = if matches!(kind_of(&stmt), "COMMIT") {
                "COMMIT"
            } else {
                "ROLLBACK"
            };
            conn.push(&stmt, Ok(Output::Command(tag.into())));
        }
        Kind::Local => {
            let r = local(&stmt, conn);
            conn.push(&stmt, r);
        }
        Kind::Ddl => {
            st.refresh();
            let r = ddl_catalog(&stmt, &st.inst.catalog).and_then(|(next, tag)| {
                if let Some(next) = next {
                    st.engine.rebuild(&mut st.worker, next)?;
                }
                Ok(Output::Command(tag.into()))
            });
            conn.push(&stmt, r);
        }
        Kind::Dml(inner, _) if conn.default_read_only && exec::write_command(&inner).is_some() => {
            conn.push(&stmt, Err(read_only_error(&inner)));
        }
        Kind::Dml(inner, params) => {
            let engine = st.engine.clone();
            let _shared = engine.gate.read().expect("gate");
            st.refresh();
            let inst = st.inst.clone();
            let mut tx = inst.protocol.begin(&mut st.worker);
            let r = exec::execute(&mut tx, &inst.catalog, &inner, &params);
            let r = match r {
                Ok(out) => tx.commit().map(|()| out).map_err(SqlError::from),
                Err(e) => {
                    tx.abort();
                    Err(e)
                }
            }
            .map_err(canceled_or);
            conn.reply.ends.push(match &r {
                Ok(_) => TxnEnd::Committed,
                Err(e) => TxnEnd::Aborted(e.clone()),
            });
            conn.push(&stmt, r);
        }
    }
}

/// `e`, or the cancel error if the statement failed because its wait was cancelled (see the module
/// docs).
fn canceled_or(e: SqlError) -> SqlError {
    if wait::take_cancel() {
        SqlError::new("57014", "canceling statement due to user request")
    } else {
        e
    }
}

fn kind_of(stmt: &Statement) -> &'static str {
    match stmt {
        Statement::Commit { .. } => "COMMIT",
        _ => "ROLLBACK",
    }
}

/// The modes `BEGIN …` or `SET TRANSACTION …` names.
#[derive(Clone, Copy, Debug, Default)]
struct Modes {
    /// The isolation level (`SNAPSHOT` as repeatable read).
    isolation: Option<Isolation>,
    /// `READ ONLY` (true) or `READ WRITE` (false); the last one named wins, as in PostgreSQL.
    read_only: Option<bool>,
}

/// The modes of `BEGIN`, `START TRANSACTION` or `SET TRANSACTION` (not `SET SESSION
/// CHARACTERISTICS`); `None` for any other statement.
fn transaction_modes(stmt: &Statement) -> Option<Modes> {
    let modes = match stmt {
        Statement::StartTransaction { modes, .. } => modes,
        Statement::Set(ast::Set::SetTransaction {
            modes,
            session: false,
            ..
        }) => modes,
        _ => return None,
    };
    Some(modes_of(modes))
}

fn modes_of(modes: &[ast::TransactionMode]) -> Modes {
    let mut out = Modes::default();
    for m in modes {
        match m {
            ast::TransactionMode::IsolationLevel(l) => {
                out.isolation = Some(match l {
                    ast::TransactionIsolationLevel::ReadUncommitted => Isolation::ReadUncommitted,
                    ast::TransactionIsolationLevel::ReadCommitted => Isolation::ReadCommitted,
                    ast::TransactionIsolationLevel::RepeatableRead
                    | ast::TransactionIsolationLevel::Snapshot => Isolation::RepeatableRead,
                    ast::TransactionIsolationLevel::Serializable => Isolation::Serializable,
                })
            }
            ast::TransactionMode::AccessMode(a) => {
                out.read_only = Some(*a == ast::TransactionAccessMode::ReadOnly)
            }
        }
    }
    out
}

/// `25006`: a write in a read-only transaction.
fn read_only_error(stmt: &Statement) -> SqlError {
    SqlError::new(
        "25006",
        format!(
            "cannot execute {} in a read-only transaction",
            exec::write_command(stmt).unwrap_or("this statement")
        ),
    )
}

/// Runs statements inside `BEGIN ... COMMIT/ROLLBACK`, across requests. The level `BEGIN` asked
/// for (or a `SET TRANSACTION` before the first query) goes to the protocol
/// ([`Tx::request_isolation`]: DIBS takes it, every other protocol runs at its own level), and the
/// protocol hears of each statement's end ([`Tx::end_statement`]).
///
/// A `READ ONLY` transaction (from `BEGIN`, `SET TRANSACTION` or the session's characteristics)
/// refuses INSERT, UPDATE, DELETE and SELECT FOR UPDATE/SHARE with `25006`, as PostgreSQL does.
fn block<P: Protocol>(
    st: &mut State<P>,
    conn: &mut Conn,
    level: Option<Isolation>,
    mut read_only: bool,
) {
    let engine = st.engine.clone();
    let _shared = engine.gate.read().expect("gate");
    st.refresh();
    let inst = st.inst.clone();
    let mut tx = Some(inst.protocol.begin(&mut st.worker));
    if let (Some(t), Some(l)) = (tx.as_mut(), level) {
        t.request_isolation(l);
    }
    let mut queried = false;
    loop {
        let Some(item) = conn.next() else { return };
        let stmt = match item {
            Item::End => {
                conn.send();
                continue;
            }
            Item::History | Item::Checkpoint => {
                // Not available while a transaction is open.
                conn.push_err(SqlError::new(
                    "25001",
                    "not available inside a transaction block",
                ));
                conn.send();
                continue;
            }
            Item::Failed(e) => {
                if let Some(t) = tx.take() {
                    t.abort();
                    conn.reply.ends.push(TxnEnd::Aborted(e.clone()));
                }
                conn.push_err(e);
                continue;
            }
            Item::Stmt(s) => s,
        };
        let kind = classify(&stmt, &conn.prepared);
        let result = match kind {
            Ok(Kind::Commit) => {
                let r = match tx.take() {
                    Some(t) => match t.commit() {
                        Ok(()) => {
                            conn.reply.ends.push(TxnEnd::Committed);
                            Ok(Output::Command("COMMIT".into()))
                        }
                        Err(a) => {
                            let e = canceled_or(SqlError::from(a));
                            conn.reply.ends.push(TxnEnd::Aborted(e.clone()));
                            Err(e)
                        }
                    },
                    None => Ok(Output::Command("ROLLBACK".into())),
                };
                conn.push(&stmt, r);
                return;
            }
            Ok(Kind::Rollback) => {
                if let Some(t) = tx.take() {
                    t.abort();
                    conn.reply.ends.push(TxnEnd::RolledBack);
                }
                conn.push(&stmt, Ok(Output::Command("ROLLBACK".into())));
                return;
            }
            _ if tx.is_none() => Err(SqlError::in_failed_transaction()),
            // PostgreSQL: a WARNING (already in progress).
            Ok(Kind::Begin) => Ok(Output::Command("BEGIN".into())),
            Ok(Kind::Local) => match transaction_modes(&stmt) {
                Some(m) if m.isolation.is_some() && queried => Err(SqlError::new(
                    "25001",
                    "SET TRANSACTION ISOLATION LEVEL must be called before any query",
                )),
                Some(m) if m.read_only == Some(false) && read_only && queried => {
                    Err(SqlError::new(
                        "25001",
                        "transaction read-write mode must be set before any query",
                    ))
                }
                Some(m) => {
                    if let (Some(t), Some(l)) = (tx.as_mut(), m.isolation) {
                        t.request_isolation(l);
                    }
                    read_only = m.read_only.unwrap_or(read_only);
                    Ok(Output::Command("SET".into()))
                }
                None => local(&stmt, conn),
            },
            Ok(Kind::Ddl) => Err(SqlError::unsupported(
                "DDL inside a transaction block (Ordo rebuilds the protocol instance on DDL)",
            )),
            Ok(Kind::Dml(inner, _)) if read_only && exec::write_command(&inner).is_some() => {
                Err(read_only_error(&inner))
            }
            Ok(Kind::Dml(inner, params)) => {
                queried = true;
                let t = tx.as_mut().expect("checked above");
                let r = exec::execute(t, &inst.catalog, &inner, &params);
                t.end_statement();
                r
            }
            Err(e) => Err(e),
        }
        .map_err(canceled_or);
        if let Err(e) = &result {
            // Any error aborts the transaction, as in PostgreSQL.
            if let Some(t) = tx.take() {
                t.abort();
                conn.reply.ends.push(TxnEnd::Aborted(e.clone()));
            }
        }
        conn.push(&stmt, result);
    }
}
