//! `ordo report FILE... -o DIR`: figures like the papers' from `ordo bench --json` results.
//!
//! Each figure plots throughput and aborts per commit against threads (or, for a sweep, against the
//! swept parameter), one line per protocol ([`figures`] groups the rows, [`plot`] draws an SVG,
//! [`html`] writes `index.html` with every figure and its run parameters). The same input gives the
//! same files, byte for byte.

mod figures;
mod html;
mod input;
mod plot;

use crate::UsageError;
use clap::Args;
use figures::{Axis, Figure};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result files written by `ordo bench --json`.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Directory to write the SVG figures and index.html into (created if missing).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Plot throughput as a multiple of this protocol's at the same point (e.g. `nocc`: the papers'
    /// "overhead against no locking"), in every figure that has a line for it.
    #[arg(long, value_name = "PROTOCOL")]
    pub relative: Option<String>,
}

/// The figure's title: workload, what varies, and what is fixed along it.
fn title(f: &Figure) -> String {
    let base = title_of(f);
    match &f.relative {
        None => base,
        Some(p) => format!("{base}, relative to {p}"),
    }
}

fn title_of(f: &Figure) -> String {
    match &f.axis {
        Axis::Threads => format!("{}: scaling with threads", f.workload),
        Axis::Param(_) => {
            let threads = f
                .fixed
                .iter()
                .find(|(k, _)| k == "threads")
                .map_or("?", |(_, v)| v.as_str());
            let s = if threads == "1" { "" } else { "s" };
            format!(
                "{}: {} sweep, {threads} thread{s}",
                f.workload,
                f.axis.label()
            )
        }
    }
}

/// A file name made of safe characters.
fn file_name(i: usize, f: &Figure) -> String {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect()
    };
    format!(
        "fig{}-{}-{}.svg",
        i + 1,
        safe(&f.workload),
        safe(f.axis.name())
    )
}

fn write(path: &Path, text: &str) -> Result<(), UsageError> {
    std::fs::write(path, text).map_err(|e| UsageError(format!("writing {}: {e}", path.display())))
}

pub fn run(args: ReportArgs) -> Result<ExitCode, UsageError> {
    let mut rows = Vec::new();
    for path in &args.files {
        rows.extend(input::read(path)?);
    }
    let mut figures = figures::group(&rows);
    if let Some(base) = &args.relative {
        if figures::relative_to(&mut figures, base) == 0 {
            return Err(UsageError(format!(
                "--relative {base}: no figure has a line for protocol `{base}`"
            )));
        }
    }
    let protocols = figures::protocols(&figures);
    let colour_of = |p: &str| protocols.iter().position(|q| q == p).unwrap_or(0);
    std::fs::create_dir_all(&args.out)
        .map_err(|e| UsageError(format!("creating {}: {e}", args.out.display())))?;
    let titles: Vec<String> = figures.iter().map(title).collect();
    let files: Vec<String> = figures
        .iter()
        .enumerate()
        .map(|(i, f)| file_name(i, f))
        .collect();
    for ((f, t), name) in figures.iter().zip(&titles).zip(&files) {
        let svg =
            plot::svg(f, t, &colour_of).map_err(|e| UsageError(format!("drawing {name}: {e}")))?;
        write(&args.out.join(name), &svg)?;
    }
    let index = args.out.join("index.html");
    write(&index, &html::page(&figures, &titles, &files, &colour_of))?;
    println!(
        "{} figure{} from {} result{} in {}",
        figures.len(),
        if figures.len() == 1 { "" } else { "s" },
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        index.display()
    );
    Ok(ExitCode::SUCCESS)
}
