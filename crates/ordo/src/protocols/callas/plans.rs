//! What Callas knows of the workload: the groups, each transaction type's learnt shape, and the
//! plan the analysis made of it; and each group's rollback rate (safe or optimistic mode).
//!
//! **Learning.** Ordo's programs declare what a piece touches just before it runs. A type seen for
//! the first time — or whose piece declares something its shape does not cover — runs alone
//! (nothing else in flight), and what it declared widens its shape; the analysis of its group is
//! then redone and published under a new version. Workers keep the plans they use and look again
//! when the version moves. Since a plan only changes while nothing runs, every transaction in
//! flight uses one set of ranks.

use super::analysis::{analyze, GroupPlan, Opts, Stage, TypeShape};
use super::nexus::MAX_GROUPS;
use crate::protocols::kit::chopping::{chop, Chopping, ScOpts};
pub use crate::protocols::kit::shape::{shape_of, touch_of};
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// How transaction types form groups (`--callas-groups`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grouping {
    /// One pipelined group of every type.
    All,
    /// Each type its own pipelined group (up to the nexus locks' limit; later types share the last).
    Each,
    /// Named pipelined groups; every other type in one more group, unpipelined.
    Listed(Vec<Vec<String>>),
}

impl Grouping {
    /// `all`, `each`, or groups separated by `/` of types separated by `,` (empty items skipped;
    /// more than the nexus locks' limit of groups: the extra ones join the last).
    pub fn parse(text: &str) -> Grouping {
        match text.trim() {
            "" | "all" => Grouping::All,
            "each" => Grouping::Each,
            t => {
                let groups: Vec<Vec<String>> = t
                    .split('/')
                    .map(|g| {
                        g.split(',')
                            .map(|n| n.trim().to_string())
                            .filter(|n| !n.is_empty())
                            .collect::<Vec<_>>()
                    })
                    .filter(|g| !g.is_empty())
                    .collect();
                if groups.is_empty() {
                    Grouping::All
                } else {
                    Grouping::Listed(groups)
                }
            }
        }
    }
}

/// Rollback handling (`--callas-mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Optimistic,
    Safe,
    Adaptive,
}

/// One stage as a worker runs it.
#[derive(Clone, Debug)]
pub struct StageRun {
    pub pieces: Vec<usize>,
    /// Lowest and highest rank (`None`: no read-write node).
    pub ranks: Option<(u32, u32)>,
    /// Tables (bit = id mod 64) some piece of the stage writes: the stage locks their rows
    /// exclusive from the first access, so a later piece never needs an upgrade.
    pub writes: u64,
}

/// A transaction type as the workers see it.
#[derive(Debug)]
pub struct Known {
    pub group: u8,
    pub pipelined: bool,
    pub shape: TypeShape,
    pub stages: Vec<StageRun>,
    pub safe: Vec<StageRun>,
}

/// Rollbacks per group, over windows of transactions (the adaptive mode, §4.4.1).
#[derive(Debug, Default)]
pub struct Adapt {
    ended: AtomicU64,
    rolled_back: AtomicU64,
    safe: AtomicBool,
    windows_safe: AtomicU32,
}

/// Transactions per window of the adaptive mode.
pub const WINDOW: u64 = 512;
/// The rollback rate past which a group goes safe (the thesis's Fig. 4.14: 7%).
pub const SAFE_ABOVE: f64 = 0.07;
/// Windows a group stays safe before it tries optimism again.
pub const SAFE_WINDOWS: u32 = 8;
/// Transactions a worker tallies before it adds them to its group's window ([`Tally`]).
pub const TALLY: u64 = 16;

/// A worker's own count of its transactions' ends per group, added to the group's window every
/// [`TALLY`] transactions or at a rollback: one shared counter bumped by every transaction of
/// every worker was 5% of Callas's time on the nexus micro-benchmark (its cache line moving
/// between cores).
#[derive(Debug)]
pub struct Tally([(u64, u64); MAX_GROUPS]);

impl Default for Tally {
    fn default() -> Self {
        Tally([(0, 0); MAX_GROUPS])
    }
}

impl Adapt {
    fn ended(&self, ended: u64, rolled_back: u64) {
        if rolled_back > 0 {
            self.rolled_back.fetch_add(rolled_back, Ordering::Relaxed);
        }
        let n = self.ended.fetch_add(ended, Ordering::Relaxed) + ended;
        if n < WINDOW {
            return;
        }
        if self
            .ended
            .compare_exchange(n, 0, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let rb = self.rolled_back.swap(0, Ordering::Relaxed);
        if self.safe.load(Ordering::Relaxed) {
            if self.windows_safe.fetch_add(1, Ordering::Relaxed) + 1 >= SAFE_WINDOWS {
                self.windows_safe.store(0, Ordering::Relaxed);
                self.safe.store(false, Ordering::Relaxed);
            }
        } else if rb as f64 > SAFE_ABOVE * n as f64 {
            self.safe.store(true, Ordering::Relaxed);
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    shapes: BTreeMap<&'static str, TypeShape>,
    groups: BTreeMap<&'static str, (u8, bool)>,
    known: BTreeMap<&'static str, Arc<Known>>,
    analyses: BTreeMap<u8, GroupPlan>,
    choppings: BTreeMap<u8, Chopping>,
    next_each: u8,
}

/// Groups, shapes and plans (see the module docs).
#[derive(Debug)]
pub struct Plans {
    grouping: Grouping,
    opts: Opts,
    mode: Mode,
    /// `--callas-chopping sc`: the group's stages are its SC-cycle chopping, not ranked stages.
    sc: bool,
    inner: RwLock<Inner>,
    version: AtomicU64,
    adapt: Box<[Adapt]>,
}

/// One group as `ordo analyze` shows it.
#[derive(Clone, Debug)]
pub struct GroupView {
    pub group: u8,
    pub pipelined: bool,
    pub members: Vec<&'static str>,
    pub plan: GroupPlan,
    /// With `--callas-chopping sc`: the SC-cycle chopping of the group's members.
    pub chopping: Option<Chopping>,
}

impl Plans {
    pub fn new(grouping: Grouping, opts: Opts, mode: Mode) -> Self {
        Plans {
            grouping,
            opts,
            mode,
            sc: false,
            inner: RwLock::new(Inner::default()),
            version: AtomicU64::new(0),
            adapt: (0..MAX_GROUPS).map(|_| Adapt::default()).collect(),
        }
    }

    /// Chops each group by SC-cycle analysis over its members (Fig. 4.8's "grouping + SC-cycle
    /// chopping") instead of Runtime Pipelining's ranks: every stage unranked, rollback-safe.
    pub fn with_sc_chopping(mut self) -> Self {
        self.sc = true;
        self
    }

    /// The version of the plans (moves when a plan changes).
    #[inline]
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The plan of type `name`, if learnt.
    pub fn get(&self, name: &str) -> Option<Arc<Known>> {
        self.inner.read().known.get(name).cloned()
    }

    /// Whether the analysis drops C-edges between commuting writes (and the run time does not
    /// order them).
    pub fn commutativity(&self) -> bool {
        self.opts.commutativity
    }

    /// Whether group `group` runs its stages in safe mode now.
    #[inline]
    pub fn safe(&self, group: u8) -> bool {
        match self.mode {
            Mode::Optimistic => false,
            Mode::Safe => true,
            Mode::Adaptive => self.adapt[group as usize].safe.load(Ordering::Relaxed),
        }
    }

    /// A transaction of `group` ended: rolled back by its own logic or not (counted in the
    /// worker's `tally` first).
    #[inline]
    pub fn ended(&self, tally: &mut Tally, group: u8, rolled_back: bool) {
        if self.mode != Mode::Adaptive {
            return;
        }
        let t = &mut tally.0[group as usize];
        t.0 += 1;
        t.1 += rolled_back as u64;
        if t.0 >= TALLY || rolled_back {
            self.adapt[group as usize].ended(t.0, t.1);
            *t = (0, 0);
        }
    }

    /// The group of type `name`, and whether it is pipelined.
    fn group_of(&self, inner: &mut Inner, name: &'static str) -> (u8, bool) {
        if let Some(&g) = inner.groups.get(name) {
            return g;
        }
        let last = (MAX_GROUPS - 1) as u8;
        let g = match &self.grouping {
            Grouping::All => (0, true),
            Grouping::Each => {
                let g = inner.next_each.min(last);
                inner.next_each = inner.next_each.saturating_add(1);
                (g, true)
            }
            Grouping::Listed(groups) => {
                let listed = groups.len().min(MAX_GROUPS - 1);
                match groups.iter().position(|g| g.iter().any(|n| n == name)) {
                    Some(i) => ((i.min(listed - 1)) as u8, true),
                    None => (listed as u8, false),
                }
            }
        };
        inner.groups.insert(name, g);
        g
    }

    /// Widens the shape of `shape.name` with `shape`, and redoes its group's analysis. Call only
    /// while no other transaction runs.
    pub fn learn(&self, shape: TypeShape) {
        let mut inner = self.inner.write();
        let name = shape.name;
        let (group, pipelined) = self.group_of(&mut inner, name);
        match inner.shapes.get_mut(name) {
            Some(old) => old.widen(&shape),
            None => {
                inner.shapes.insert(name, shape);
            }
        }
        let members: Vec<TypeShape> = inner
            .shapes
            .values()
            .filter(|s| inner.groups.get(s.name).is_some_and(|g| g.0 == group))
            .cloned()
            .collect();
        let plan = analyze(&members, self.opts);
        let sc = self.sc.then(|| {
            let opts = ScOpts {
                column: self.opts.column,
                commutativity: self.opts.commutativity,
                uniqueness: self.opts.uniqueness,
                concurrent_self: true,
            };
            chop(&members, opts)
        });
        for ty in &members {
            let p = plan.plan(ty.name).expect("every member is planned");
            let chopped: Option<Vec<Stage>> = sc.as_ref().map(|c| {
                let chops = &c.of(ty.name).expect("every member is chopped").chops;
                chops
                    .iter()
                    .map(|pieces| Stage {
                        pieces: pieces.clone(),
                        ranks: None,
                    })
                    .collect()
            });
            let (stages, safe) = match &chopped {
                Some(s) => (s, s),
                None => (&p.stages, &p.safe),
            };
            // The tables (bit = id mod 64) some piece of `pieces` writes.
            let writes = |pieces: &[usize]| {
                pieces.iter().fold(0u64, |m, &i| {
                    ty.pieces[i]
                        .touches
                        .iter()
                        .filter(|(_, t)| t.write != 0)
                        .fold(m, |m, (&t, _)| m | 1 << (t as u64 % 64))
                })
            };
            let run = |stages: &[Stage]| -> Vec<StageRun> {
                if !pipelined {
                    let all: Vec<usize> = (0..ty.pieces.len()).collect();
                    return vec![StageRun {
                        writes: writes(&all),
                        pieces: all,
                        ranks: None,
                    }];
                }
                stages
                    .iter()
                    .map(|s| StageRun {
                        pieces: s.pieces.clone(),
                        ranks: s.ranks,
                        writes: writes(&s.pieces),
                    })
                    .collect()
            };
            let known = Known {
                group,
                pipelined,
                shape: ty.clone(),
                stages: run(stages),
                safe: run(safe),
            };
            inner.known.insert(ty.name, Arc::new(known));
        }
        inner.analyses.insert(group, plan);
        if let Some(c) = sc {
            inner.choppings.insert(group, c);
        }
        self.version.fetch_add(1, Ordering::Release);
    }

    /// Every group learnt so far, with its analysis.
    pub fn groups(&self) -> Vec<GroupView> {
        let inner = self.inner.read();
        inner
            .analyses
            .iter()
            .map(|(&group, plan)| GroupView {
                group,
                pipelined: inner
                    .groups
                    .values()
                    .find(|g| g.0 == group)
                    .is_some_and(|g| g.1),
                members: inner
                    .groups
                    .iter()
                    .filter(|(_, g)| g.0 == group)
                    .map(|(&n, _)| n)
                    .collect(),
                plan: plan.clone(),
                chopping: inner.choppings.get(&group).cloned(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groupings_parse() {
        assert_eq!(Grouping::parse("all"), Grouping::All);
        assert_eq!(Grouping::parse(" each "), Grouping::Each);
        assert_eq!(
            Grouping::parse("NewOrder, Payment/Delivery//"),
            Grouping::Listed(vec![
                vec!["NewOrder".into(), "Payment".into()],
                vec!["Delivery".into()]
            ])
        );
        assert_eq!(Grouping::parse(" / , "), Grouping::All);
    }

    #[test]
    fn listed_groups_pipeline_and_the_rest_share_one_plain_group() {
        let p = Plans::new(
            Grouping::parse("NewOrder,Payment/Delivery"),
            Opts::default(),
            Mode::Adaptive,
        );
        let mut inner = Inner::default();
        assert_eq!(p.group_of(&mut inner, "Payment"), (0, true));
        assert_eq!(p.group_of(&mut inner, "Delivery"), (1, true));
        assert_eq!(p.group_of(&mut inner, "StockLevel"), (2, false));
        assert_eq!(p.group_of(&mut inner, "OrderStatus"), (2, false));
        let e = Plans::new(Grouping::Each, Opts::default(), Mode::Adaptive);
        let mut inner = Inner::default();
        let gs: Vec<u8> = (0..20)
            .map(|i| {
                e.group_of(
                    &mut inner,
                    [
                        "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o",
                        "p", "q", "r", "s", "t",
                    ][i],
                )
                .0
            })
            .collect();
        assert_eq!(gs[..16], (0..16).collect::<Vec<u8>>()[..]);
        assert!(gs[16..].iter().all(|&g| g == 15));
    }

    #[test]
    fn a_high_rollback_rate_makes_the_group_safe_for_a_while() {
        let p = Plans::new(Grouping::All, Opts::default(), Mode::Adaptive);
        let mut t = Tally::default();
        // A window and one tally, so the worker's tally reaches the group whatever its phase.
        for i in 0..WINDOW + TALLY {
            p.ended(&mut t, 0, i % 10 == 0); // 10% > 7%
        }
        assert!(p.safe(0));
        assert!(!p.safe(1));
        for _ in 0..(SAFE_WINDOWS as u64 * WINDOW + TALLY) {
            p.ended(&mut t, 0, false);
        }
        assert!(!p.safe(0), "it tries optimism again");
        for i in 0..WINDOW + TALLY {
            p.ended(&mut t, 0, i % 20 == 0); // 5%
        }
        assert!(!p.safe(0));
    }
}
