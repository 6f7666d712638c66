//! `-w tpcc`'s and `-w tpcc++`'s options (the same ones), and their defaults for a benchmark or a
//! verification run ([`Tpcc::from_settings`], [`Tpcc::plus_plus_from_settings`]).
//!
//! `--warehouses` and `--remote-new-order` sweep: given as a list in `ordo bench`, the run is
//! repeated for each value.
//!
//! The PWV paper's TPC-C (§5.3, Fig. 5): `--mix pwv` (New-Order and Payment, 50/50) over
//! `--warehouses 1` (contended) or as many warehouses as threads, where "~10% of NewOrders touch a
//! remote warehouse's Stock" — what the specification's 1% of order lines already gives on
//! average; `--remote-new-order 10` makes it exactly 10% of New-Orders, one remote line each.

use super::base;
use super::mix::Mix;
use super::schema::MAX_WAREHOUSES;
use super::{Tpcc, TpccConfig};
use crate::base_ified::{BaseIfied, BASE_IFIED};
use crate::{Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const WAREHOUSES: OptionSpec = OptionSpec::new(
    "warehouses",
    "N",
    ValueKind::Int {
        min: 1,
        max: MAX_WAREHOUSES as u64 - 1,
    },
    "TPC-C: number of warehouses.",
)
.sweeps();
pub const TINY: OptionSpec = OptionSpec::flag(
    "tiny",
    "TPC-C: tiny scale (customers per district / 30, items / 100, as in Cahill's SSI thesis).",
);
pub const MIX: OptionSpec = OptionSpec::new(
    "mix",
    "MIX",
    ValueKind::Text,
    "TPC-C: transaction mix — standard, vll, new-order-payment (pwv), tpcc++, stock-level, \
     dbx1000 (New-Order + Payment doing exactly DBx1000's work: no inserts, no rollbacks), or a \
     custom no=45,p=43,os=4,d=4,sl=4,cc=0 in percent summing to 100 (default: standard; tpcc++ \
     for -w tpcc++).",
);
pub const NO_YTD: OptionSpec = OptionSpec::flag(
    "no-ytd",
    "TPC-C: Payment skips the w_ytd / d_ytd updates (SSI thesis option).",
);

pub const REMOTE_NEW_ORDER: OptionSpec = OptionSpec::new(
    "remote-new-order",
    "PCT",
    ValueKind::Float {
        min: 0.0,
        max: 100.0,
    },
    "TPC-C: percent of New-Orders that take one of their lines from a remote warehouse, the \
     others none (the PWV paper's ~10%); default: the specification's 1% of order lines, each \
     on its own (about 10% of New-Orders). No effect with one warehouse.",
)
.sweeps();

pub const HOME_WAREHOUSE: OptionSpec = OptionSpec::new(
    "home-warehouse",
    "HOME",
    ValueKind::Choice(&["bound", "random"]),
    "TPC-C: bound (each worker a terminal of one home warehouse, worker t of warehouse t mod W + \
     1, as the specification and DBx1000 bind them; the default) or random (each transaction \
     draws its home warehouse uniformly, as every run before 2026-11-28 did).",
);

/// Every option of `-w tpcc` and `-w tpcc++`.
pub const OPTIONS: &[&OptionSpec] = &[
    &WAREHOUSES,
    &TINY,
    &MIX,
    &NO_YTD,
    &REMOTE_NEW_ORDER,
    &HOME_WAREHOUSE,
    &BASE_IFIED,
];

/// The configuration when no option is given: one full-size warehouse for benchmarks; one tiny
/// warehouse (every transaction of a district meets at the same rows) for verification. TPC-C++
/// (`plus_plus`) runs its own mix.
pub fn defaults(purpose: Purpose, plus_plus: bool) -> TpccConfig {
    let mix = if plus_plus {
        Mix::parse("tpcc++").expect("a named mix")
    } else {
        Mix::STANDARD
    };
    match purpose {
        Purpose::Bench => TpccConfig {
            mix,
            ..TpccConfig::default()
        },
        Purpose::Verify => TpccConfig {
            warehouses: 1,
            tiny: true,
            mix,
            ..TpccConfig::default()
        },
    }
}

impl Tpcc {
    /// `-w tpcc`: the workload `settings` describe, the others at `purpose`'s [`defaults`]. Every
    /// option must have one value (a sweep's point: see [`Settings::sweep`]).
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<Tpcc> {
        configure(settings, defaults(purpose, false))
    }

    /// `-w tpcc++`: as [`Tpcc::from_settings`], with the TPC-C++ mix unless `--mix` says otherwise.
    pub fn plus_plus_from_settings(settings: &Settings, purpose: Purpose) -> Result<Tpcc> {
        configure(settings, defaults(purpose, true))
    }
}

fn configure(settings: &Settings, d: TpccConfig) -> Result<Tpcc> {
    let mix = match settings.text(&MIX)? {
        Some(m) => Mix::parse(&m)?,
        None => d.mix,
    };
    Tpcc::new(TpccConfig {
        warehouses: settings.int_as(&WAREHOUSES)?.unwrap_or(d.warehouses),
        tiny: settings.flag(&TINY) || d.tiny,
        mix,
        no_ytd: settings.flag(&NO_YTD) || d.no_ytd,
        remote_new_order: settings.float(&REMOTE_NEW_ORDER)?.or(d.remote_new_order),
        random_home: match settings.text(&HOME_WAREHOUSE)? {
            Some(h) => h == "random",
            None => d.random_home,
        },
        base_ified: BaseIfied::from_settings(
            settings,
            d.base_ified,
            base::ORDER.len() as u8,
            "tpcc",
        )?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::given;

    #[test]
    fn a_warehouse_list_is_a_sweep() {
        let list = given(&[(&WAREHOUSES, "1,4"), (&TINY, "")]);
        let runs = list.sweep().unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1].0.as_ref().unwrap().to_string(), "warehouses=4");
        assert_eq!(runs[1].1.int(&WAREHOUSES), Ok(Some(4)));
        assert!(runs[1].1.flag(&TINY));
        let w = Tpcc::from_settings(&runs[1].1, Purpose::Bench).unwrap();
        assert_eq!(w.config().warehouses, 4);
        assert!(Tpcc::from_settings(&list, Purpose::Bench).is_err());
        assert_eq!(Settings::new().sweep().map(|s| s.len()).ok(), Some(1));
        let twice = WAREHOUSES.parse("2,1,2").unwrap_err();
        assert!(twice.0.contains("twice"), "{twice}");
    }

    #[test]
    fn verify_defaults_are_small_and_tpccpp_has_its_mix() {
        let w = Tpcc::plus_plus_from_settings(&Settings::new(), Purpose::Verify).unwrap();
        assert!(w.config().tiny);
        assert_eq!(w.config().warehouses, 1);
        assert_eq!(w.config().mix, Mix::parse("tpcc++").unwrap());
        let standard = given(&[(&MIX, "standard")]);
        let w = Tpcc::plus_plus_from_settings(&standard, Purpose::Verify).unwrap();
        assert_eq!(w.config().mix, Mix::STANDARD, "--mix wins");
    }

    #[test]
    fn remote_new_order_sweeps_and_is_refused_out_of_range() {
        let points = given(&[(&REMOTE_NEW_ORDER, "0,10,50"), (&WAREHOUSES, "4")])
            .sweep()
            .unwrap();
        assert_eq!(
            points[1].0.as_ref().unwrap().to_string(),
            "remote-new-order=10"
        );
        let pcts: Vec<Option<f64>> = points
            .iter()
            .map(|(_, one)| {
                Tpcc::from_settings(one, Purpose::Bench)
                    .unwrap()
                    .config()
                    .remote_new_order
            })
            .collect();
        assert_eq!(pcts, [Some(0.0), Some(10.0), Some(50.0)]);
        assert_eq!(
            Tpcc::from_settings(&Settings::new(), Purpose::Bench)
                .unwrap()
                .config()
                .remote_new_order,
            None,
            "the specification's behaviour unless given"
        );
        for bad in ["-1", "101", "x", "5,5"] {
            assert!(REMOTE_NEW_ORDER.parse(bad).is_err(), "{bad}");
        }
        // Taken (to no effect) with one warehouse, so that a --warehouses sweep can start at 1.
        assert!(Tpcc::from_settings(&given(&[(&REMOTE_NEW_ORDER, "10")]), Purpose::Verify).is_ok());
    }

    #[test]
    fn a_bad_mix_names_the_option() {
        let e = Tpcc::from_settings(&given(&[(&MIX, "nosuch")]), Purpose::Bench)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("--mix: unknown mix `nosuch`"), "{e}");
    }
}
