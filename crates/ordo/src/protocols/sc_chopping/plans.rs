//! What `sc-chopping` knows of the workload: each transaction type's learnt shape and the
//! chopping [`chop`] made of all of them.
//!
//! **Learning.** As in `callas`, a type seen for the first time — or one whose piece declares
//! something its shape does not cover — runs alone (nothing else in flight), and what it declared
//! widens its shape; the chopping of every type is then redone (a new type can tie the pieces of
//! any other) and published under a new version. Workers keep the plans they use and look again
//! when the version moves. Since a plan changes only while nothing runs, every transaction in
//! flight was chopped against one set of shapes.

use crate::protocols::kit::chopping::{chop, Chopping, ScOpts};
use crate::protocols::kit::shape::TypeShape;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A transaction type as the workers see it.
#[derive(Debug)]
pub struct Known {
    pub shape: TypeShape,
    /// Its chops, in the order they run (each a list of pieces, in program order).
    pub chops: Vec<Vec<usize>>,
}

#[derive(Debug, Default)]
struct Inner {
    shapes: BTreeMap<&'static str, TypeShape>,
    known: BTreeMap<&'static str, Arc<Known>>,
    chopping: Chopping,
}

/// Shapes and choppings (see the module docs).
#[derive(Debug)]
pub struct Plans {
    opts: ScOpts,
    inner: RwLock<Inner>,
    version: AtomicU64,
}

impl Plans {
    pub fn new(opts: ScOpts) -> Self {
        Plans {
            opts,
            inner: RwLock::new(Inner::default()),
            version: AtomicU64::new(0),
        }
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

    /// The chopping of every type learnt so far (`ordo analyze`, tests).
    pub fn chopping(&self) -> Chopping {
        self.inner.read().chopping.clone()
    }

    /// Widens the shape of `shape.name` with `shape` and redoes the chopping. Call only while no
    /// other transaction runs.
    pub fn learn(&self, shape: TypeShape) {
        let mut inner = self.inner.write();
        match inner.shapes.get_mut(shape.name) {
            Some(old) => old.widen(&shape),
            None => {
                inner.shapes.insert(shape.name, shape);
            }
        }
        let types: Vec<TypeShape> = inner.shapes.values().cloned().collect();
        let chopping = chop(&types, self.opts);
        for (ty, c) in types.into_iter().zip(&chopping.types) {
            let known = Known {
                chops: c.chops.clone(),
                shape: ty,
            };
            inner.known.insert(c.name, Arc::new(known));
        }
        inner.chopping = chopping;
        self.version.fetch_add(1, Ordering::Release);
    }
}
