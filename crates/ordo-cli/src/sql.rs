//! `ordo sql [--protocol P] [-c SQL]`: an SQL shell over one protocol.
//!
//! Interactive on a terminal (line editing and history through `rustyline`, `\timing`, `\q`);
//! otherwise it reads statements from standard input, or runs `-c`. Results print as psql prints them;
//! errors as `ERROR:  message` with the SQLSTATE. Exit code: 0, 1 if a statement failed, 2 if one did
//! not parse.

use crate::{Error, Result};
use clap::Args;
use ordo::protocols::ProtocolConfig;
use ordo_sql::exec::Output;
use ordo_sql::session::{self, Reply, Session};
use ordo_sql::spec::isolation;
use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct SqlArgs {
    /// Protocol (default: the one serializable maps to, see `ordo spec`).
    #[arg(short, long)]
    pub protocol: Option<String>,
    /// Run this SQL and exit.
    #[arg(short = 'c', long = "command")]
    pub command: Option<String>,
}

/// Prints a reply; returns the worst outcome (0 ok, 1 error, 2 syntax error).
fn print(reply: &Reply) -> u8 {
    let mut worst = 0;
    for r in &reply.results {
        match &r.result {
            Ok(Output::Rows(rs)) => print!("{}", ordo_sql::format::psql_table(rs)),
            Ok(Output::Command(tag)) => println!("{tag}"),
            Err(e) => {
                eprintln!("ERROR:  {} (SQLSTATE {})", e.message, e.code);
                if let Some((l, c)) = e.position {
                    eprintln!("LINE {l}, column {c}");
                }
                worst = worst.max(if e.code == "42601" { 2 } else { 1 });
            }
        }
    }
    worst
}

/// Whether `buf` ends a statement: a `;` outside quotes at its end.
fn complete(buf: &str) -> bool {
    let mut quote = None;
    let mut last = ' ';
    for c in buf.chars() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        if !c.is_whitespace() {
            last = c;
        }
    }
    quote.is_none() && last == ';'
}

pub fn run(args: SqlArgs) -> Result<ExitCode> {
    let protocol = match &args.protocol {
        Some(p) => p.clone(),
        None => isolation::protocol_for("serializable").0.to_string(),
    };
    // A protocol that runs whole programs only has no interactive transactions to give SQL.
    if let Some(why) = isolation::refusal(&protocol, ordo::protocols::Interactive::OneAtATime) {
        return Err(Error::InvalidInput(why));
    }
    let engine = session::open(&protocol, ProtocolConfig::default(), false)?;
    let s = engine.session(0);
    if let Some(c) = args.command {
        return Ok(ExitCode::from(print(&s.execute(&c))));
    }
    if !std::io::stdin().is_terminal() {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(Error::Stdin)?;
        let mut worst = 0;
        let mut buf = String::new();
        for line in text.lines() {
            buf.push_str(line);
            buf.push('\n');
            if complete(&buf) {
                worst = worst.max(print(&s.execute(&buf)));
                buf.clear();
            }
        }
        if !buf.trim().is_empty() {
            worst = worst.max(print(&s.execute(&buf)));
        }
        return Ok(ExitCode::from(worst));
    }
    shell(&s, &protocol);
    Ok(ExitCode::SUCCESS)
}

fn shell(s: &Session, protocol: &str) {
    println!("ordo sql on protocol {protocol}. End statements with `;`; \\timing toggles timing, \\q quits.");
    let Ok(mut rl) = rustyline::DefaultEditor::new() else {
        eprintln!("error: no line editor available");
        return;
    };
    let history =
        std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".ordo_sql_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    let mut timing = false;
    let mut buf = String::new();
    loop {
        let prompt = if buf.is_empty() { "ordo=> " } else { "ordo-> " };
        let line = match rl.readline(prompt) {
            Ok(l) => l,
            Err(rustyline::error::ReadlineError::Interrupted) => {
                buf.clear();
                continue;
            }
            Err(_) => break,
        };
        let trimmed = line.trim();
        if buf.is_empty() && trimmed.starts_with('\\') {
            let _ = rl.add_history_entry(trimmed);
            match trimmed {
                "\\q" => break,
                "\\timing" => {
                    timing = !timing;
                    println!("Timing is {}.", if timing { "on" } else { "off" });
                }
                other => eprintln!("invalid command {other} (known: \\timing, \\q)"),
            }
            continue;
        }
        buf.push_str(&line);
        buf.push('\n');
        if complete(&buf) {
            let _ = rl.add_history_entry(buf.trim());
            let t = Instant::now();
            print(&s.execute(&buf));
            if timing {
                println!("Time: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
            }
            buf.clear();
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
}
