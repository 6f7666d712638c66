//! Every workload by name: what it is, where it comes from, its options, and how to build it from
//! the options given (`ordo list`, `ordo bench -w NAME`, `ordo verify -w NAME`).
//!
//! ```text
//!   ordo bench -w vll-micro --ci 0.1,1 --long
//!        │  find("vll-micro") → Entry { options: vll_micro::options::OPTIONS, build, … }
//!        ▼
//!   Settings { ci → [0.1, 1], long } ──Settings::sweep──▶ { ci → [0.1], long }, { ci → [1], long }
//!        │                                                        │ Entry::build, each point
//!        │ Entry::check                                           ▼
//!        ▼                                      AnyWorkload::VllMicro ──visit──▶ the harness
//!   with --theta: "--theta is an option of -w ycsb, not of -w vll-micro"
//! ```
//!
//! A workload declares its options in its own module (`<workload>/options.rs`: [`OptionSpec`]s, the
//! defaults for each [`Purpose`], and a constructor from [`Settings`]); the catalogue below lists it
//! once. Adding a workload is its module and one entry here. Two workloads may share an option
//! (`-w vll-range` takes `-w vll-micro`'s `--long`, `-w pwv-micro` its `--records`, `-w
//! subscriber-scan` `-w tatp`'s `--subscribers`, `-w callas-micro` `-w salt-micro`'s `--variant`,
//! whose choices name both workloads' variants; `-w tpcc++` takes every `-w tpcc` option) by
//! listing the same declaration.

use crate::{
    callas_micro, front_accounting, pwv_micro, salt_micro, seats, sibench, smallbank,
    subscriber_scan, tatp, ticketing, tpcc, vll_micro, vll_range, ycsb,
};
use crate::{Error, Purpose, Result};
use ordo::options::{OptionSpec, Settings};

/// One workload of the catalogue.
pub struct Entry {
    /// Its name on the command line (`-w ycsb`) and in results.
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// Its options, declared in its module.
    pub options: &'static [&'static OptionSpec],
    build: fn(&Settings, Purpose) -> Result<AnyWorkload>,
}

impl Entry {
    /// The workload `settings` describe, for `purpose`. An option of another workload is refused
    /// (a mistake, not a no-op), and so is a list: a sweep's points are built one at a time
    /// ([`Settings::sweep`]).
    pub fn build(&self, settings: &Settings, purpose: Purpose) -> Result<AnyWorkload> {
        self.check(settings)?;
        (self.build)(settings, purpose)
    }

    /// Refuses an option of another workload in `settings` (what [`Entry::build`] does first; a
    /// command that sweeps calls it before splitting a list into points).
    pub fn check(&self, settings: &Settings) -> Result<()> {
        for (spec, _) in settings.given() {
            if !self.takes(spec.name) {
                return Err(match owner(spec.name) {
                    Some(owner) => Error::Foreign {
                        option: spec.name,
                        owner: owner.name,
                        workload: self.name,
                    },
                    None => Error::NotAnOption {
                        option: spec.name,
                        workload: self.name,
                    },
                });
            }
        }
        Ok(())
    }

    /// Whether `option` is one of this workload's.
    pub fn takes(&self, option: &str) -> bool {
        self.options.iter().any(|o| o.name == option)
    }
}

/// Something to do with whichever workload was chosen (see [`AnyWorkload::visit`]).
pub trait WorkloadVisitor {
    type Output;
    fn visit<W: ordo::harness::Workload>(self, workload: &W) -> Self::Output;
}

/// Declares the catalogue: one entry per workload, each a variant of [`AnyWorkload`] holding the
/// workload's type, and an [`Entry`] whose `build` makes that variant.
macro_rules! catalog {
    ($(
        $variant:ident($ty:ty) {
            name: $name:expr,
            summary: $summary:expr,
            source: $source:expr,
            options: $options:expr,
            build: $build:expr $(,)?
        }
    ),* $(,)?) => {
        /// A workload chosen by name, ready to run.
        pub enum AnyWorkload {
            $($variant($ty)),*
        }

        impl AnyWorkload {
            /// Calls `v` with the concrete workload.
            pub fn visit<V: WorkloadVisitor>(&self, v: V) -> V::Output {
                match self {
                    $(AnyWorkload::$variant(w) => v.visit(w)),*
                }
            }
        }

        /// Every workload, in listing order.
        pub const CATALOG: &[Entry] = &[$(
            Entry {
                name: $name,
                summary: $summary,
                source: $source,
                options: $options,
                build: |settings, purpose| $build(settings, purpose).map(AnyWorkload::$variant),
            }
        ),*];
    };
}

catalog! {
    Ycsb(ycsb::Ycsb) {
        name: "ycsb",
        summary: "key-value requests with Zipfian or hot-set skew",
        source: "Cooper et al. SoCC 2010; as configured in DBx1000, VLL, PWV, DIBS",
        options: ycsb::options::OPTIONS,
        build: ycsb::Ycsb::from_settings,
    },
    SmallBank(smallbank::SmallBank) {
        name: "smallbank",
        summary: "banking mix with SI write skew (WriteCheck pivot), hotspot option",
        source: "Alomari et al. ICDE 2008; Cahill thesis 2009 §5.1",
        options: smallbank::options::OPTIONS,
        build: smallbank::SmallBank::from_settings,
    },
    SiBench(sibench::SiBench) {
        name: "sibench",
        summary: "full-table min query vs single-row increments, I rows",
        source: "Cahill thesis 2009 §5.2",
        options: sibench::options::OPTIONS,
        build: sibench::SiBench::from_settings,
    },
    Tatp(tatp::Tatp) {
        name: "tatp",
        summary: "telecom HLR: 7 transactions, 80/20 read/write, NURand subscribers",
        source: "Neuvonen et al. TATP 2009; as run in DIBS",
        options: tatp::options::OPTIONS,
        build: tatp::Tatp::from_settings,
    },
    SubscriberScan(subscriber_scan::SubscriberScan) {
        name: "subscriber-scan",
        summary: "TATP's subscriber, 100K rows: 80% read / 20% update of the rows a disjunctive predicate on byte2_x names (--conjuncts)",
        source: "Gaffney, Claus, Patel PVLDB 2021 (DIBS), section 4.1 (Figs. 3c, 4)",
        options: subscriber_scan::options::OPTIONS,
        build: subscriber_scan::SubscriberScan::from_settings,
    },
    Seats(seats::Seats) {
        name: "seats",
        summary: "airline ticketing: 6 transactions (45% read-only), flight search by predicate, lookups by id string and frequent-flyer number (--scale)",
        source: "Stonebraker, Pavlo: SEATS; OLTP-Bench (Difallah et al. PVLDB 2013); as run in DIBS (Fig. 3b)",
        options: seats::options::OPTIONS,
        build: seats::Seats::from_settings,
    },
    VllMicro(vll_micro::VllMicro) {
        name: "vll-micro",
        summary: "10 read-modify-writes per transaction, 1 hot + 9 cold; contention index = 1 / hot records",
        source: "Ren, Thomson, Abadi VLDB J. 2015 (VLL), section 3.1.2",
        options: vll_micro::options::OPTIONS,
        build: vll_micro::VllMicro::from_settings,
    },
    VllRange(vll_range::VllRange) {
        name: "vll-range",
        summary: "one range of read-modify-writes per transaction, ends sharing --shared-prefix of 16 key bits",
        source: "Ren, Thomson, Abadi VLDB J. 2015 (VLL), section 3.4.2 (Fig. 15, VLLR vs VLL)",
        options: vll_range::options::OPTIONS,
        build: vll_range::VllRange::from_settings,
    },
    PwvMicro(pwv_micro::PwvMicro) {
        name: "pwv-micro",
        summary: "10 read-modify-writes, one on a single hot record; --hot-position = updates after it",
        source: "Faleiro, Abadi, Hellerstein PVLDB 2017 (PWV), section 2.3 (Fig. 1)",
        options: pwv_micro::options::OPTIONS,
        build: pwv_micro::PwvMicro::from_settings,
    },
    SaltMicro(salt_micro::SaltMicro) {
        name: "salt-micro",
        summary: "Salt's microbenchmarks, writers BASE-ified one update per alkaline subtransaction (--variant ratio|position|rw)",
        source: "Xie, PhD thesis 2016, section 3.6.3 (Figs. 3.10-3.12)",
        options: salt_micro::options::OPTIONS,
        build: salt_micro::SaltMicro::from_settings,
    },
    Ticketing(ticketing::Ticketing) {
        name: "ticketing",
        summary: "ticket booking after Fusion Ticket: one event, two categories of --seats seats; 11 transactions (reserve, checkout, pay, views, delete-order), CreateOrder BASE-ified (--base-ified N|raw)",
        source: "Xie, PhD thesis 2016, section 3.6 (Fusion Ticket set-up)",
        options: ticketing::options::OPTIONS,
        build: ticketing::Ticketing::from_settings,
    },
    FrontAccounting(front_accounting::FrontAccounting) {
        name: "front-accounting",
        summary: "a retail company's ERP after Front Accounting: 17 transactions (create-order, delivery, payment, pay-supplier = the bulk purchase, stock-adjustment; 12 queries), --goods 100",
        source: "Xie, PhD thesis 2016, section 4.6 (Front Accounting set-up, Fig. 4.7)",
        options: front_accounting::options::OPTIONS,
        build: front_accounting::FrontAccounting::from_settings,
    },
    CallasMicro(callas_micro::CallasMicro) {
        name: "callas-micro",
        summary: "Callas's microbenchmarks: nexus-lock overhead, frequency and contention across groups (T1, T2), application rollbacks (--variant nexus|frequency|contention|rollback)",
        source: "Xie, PhD thesis 2016, sections 4.6.4-4.6.6 (Figs. 4.11-4.14)",
        options: callas_micro::options::OPTIONS,
        build: callas_micro::CallasMicro::from_settings,
    },
    Tpcc(tpcc::Tpcc) {
        name: "tpcc",
        summary: "TPC-C: nine tables, five transactions (--warehouses, --tiny, --mix, --no-ytd, --remote-new-order)",
        source: "TPC-C rev. 5.11; mixes of VLL, PWV",
        options: tpcc::options::OPTIONS,
        build: tpcc::Tpcc::from_settings,
    },
    TpccPlusPlus(tpcc::Tpcc) {
        name: "tpcc++",
        summary: "TPC-C plus Credit Check (mix NO 41, P 43, CC/D/OS/SL 4; --mix stock-level)",
        source: "Cahill, SSI thesis 2009 §5.3",
        options: tpcc::options::OPTIONS,
        build: tpcc::Tpcc::plus_plus_from_settings,
    },
}

/// The workload called `name`.
pub fn find(name: &str) -> Result<&'static Entry> {
    CATALOG
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| Error::UnknownWorkload(name.to_string()))
}

/// The names of every workload.
pub fn names() -> Vec<&'static str> {
    CATALOG.iter().map(|e| e.name).collect()
}

/// The first workload (in listing order) that takes `option`.
pub fn owner(option: &str) -> Option<&'static Entry> {
    CATALOG.iter().find(|e| e.takes(option))
}

/// Every workload's options, each once (by name, in listing order): what the command line
/// declares. An option two workloads share is one declaration (see the tests).
pub fn options() -> Vec<&'static OptionSpec> {
    let mut all: Vec<&'static OptionSpec> = Vec::new();
    for spec in CATALOG.iter().flat_map(|e| e.options.iter().copied()) {
        if !all.iter().any(|o| o.name == spec.name) {
            all.push(spec);
        }
    }
    all
}

/// Settings with `options` given as the command line gives them (tests).
#[cfg(test)]
pub(crate) fn given(options: &[(&OptionSpec, &str)]) -> Settings {
    options.iter().fold(Settings::new(), |s, (spec, text)| {
        s.with(spec, text).expect("a valid value")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_two_workloads_share_is_declared_identically() {
        let all: Vec<&OptionSpec> = CATALOG
            .iter()
            .flat_map(|e| e.options.iter().copied())
            .collect();
        for a in &all {
            for b in &all {
                if a.name == b.name {
                    assert_eq!(a, b, "--{} is declared twice, differently", a.name);
                }
            }
        }
        assert!(options().iter().any(|o| o.name == "long"));
        assert_eq!(
            options().len(),
            {
                let mut names: Vec<&str> = all.iter().map(|o| o.name).collect();
                names.sort_unstable();
                names.dedup();
                names.len()
            },
            "each name once"
        );
    }

    #[test]
    fn names_are_unique_and_found() {
        let mut names = names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CATALOG.len());
        for e in CATALOG {
            assert_eq!(find(e.name).unwrap().name, e.name);
        }
        let e = find("nosuch").err().unwrap().to_string();
        assert!(
            e.starts_with("unknown workload `nosuch` (known: ycsb, "),
            "{e}"
        );
    }

    /// What the name a workload reports (`Workload::name`) is.
    struct Name;
    impl WorkloadVisitor for Name {
        type Output = &'static str;
        fn visit<W: ordo::harness::Workload>(self, w: &W) -> &'static str {
            w.name()
        }
    }

    #[test]
    fn every_workload_builds_with_no_options_for_both_purposes() {
        for e in CATALOG {
            for purpose in [Purpose::Bench, Purpose::Verify] {
                let w = e
                    .build(&Settings::new(), purpose)
                    .unwrap_or_else(|err| panic!("{} {purpose:?}: {err}", e.name));
                assert_eq!(w.visit(Name), e.name, "{purpose:?}");
            }
        }
    }

    #[test]
    fn an_option_of_another_workload_is_refused() {
        let theta = *ycsb::options::OPTIONS
            .iter()
            .find(|o| o.name == "theta")
            .unwrap();
        let s = given(&[(theta, "0.5")]);
        let e = find("smallbank")
            .unwrap()
            .build(&s, Purpose::Verify)
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "--theta is an option of -w ycsb, not of -w smallbank"
        );
        // Shared options are each workload's own.
        let long = given(&[(&vll_micro::options::LONG, "")]);
        assert!(find("vll-range")
            .unwrap()
            .build(&long, Purpose::Verify)
            .is_ok());
        let ci = given(&[(&vll_micro::options::CI, "0.1")]);
        let e = find("vll-range")
            .unwrap()
            .build(&ci, Purpose::Verify)
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "--ci is an option of -w vll-micro, not of -w vll-range"
        );
        let records = given(&[(&vll_micro::options::RECORDS, "100")]);
        assert!(find("pwv-micro")
            .unwrap()
            .build(&records, Purpose::Verify)
            .is_ok());
        let hot = given(&[(&pwv_micro::options::HOT_POSITION, "0")]);
        let e = find("vll-micro")
            .unwrap()
            .build(&hot, Purpose::Verify)
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "--hot-position is an option of -w pwv-micro, not of -w vll-micro"
        );
        let tiny = given(&[(&tpcc::options::TINY, "")]);
        assert!(find("tpcc++")
            .unwrap()
            .build(&tiny, Purpose::Verify)
            .is_ok());
        // An option no workload declares (a protocol's knob, say) is not a workload's.
        let knob = given(&[(&ordo::protocols::vll::BATCH_KNOB, "2")]);
        let e = find("ycsb")
            .unwrap()
            .build(&knob, Purpose::Verify)
            .err()
            .unwrap();
        assert_eq!(e.to_string(), "--vll-batch is not an option of -w ycsb");
    }
}
