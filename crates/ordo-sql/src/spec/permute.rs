//! Permutations: every interleaving of the sessions' steps that keeps each session's own order.
//!
//! With sessions of `n₁, n₂, …` steps there are `(Σnᵢ)! / Πnᵢ!` of them (20 for two sessions of
//! three steps), enumerated in lexicographic order of session index.

/// Every interleaving of sessions with `steps[i]` steps each, as sequences of `(session, step)`.
pub fn interleavings(steps: &[usize]) -> Vec<Vec<(usize, usize)>> {
    fn go(
        steps: &[usize],
        next: &mut Vec<usize>,
        cur: &mut Vec<(usize, usize)>,
        out: &mut Vec<Vec<(usize, usize)>>,
    ) {
        let mut any = false;
        for s in 0..steps.len() {
            if next[s] < steps[s] {
                any = true;
                cur.push((s, next[s]));
                next[s] += 1;
                go(steps, next, cur, out);
                next[s] -= 1;
                cur.pop();
            }
        }
        if !any {
            out.push(cur.clone());
        }
    }
    let mut out = Vec::new();
    go(steps, &mut vec![0; steps.len()], &mut Vec::new(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_order_are_right() {
        let p = interleavings(&[3, 3]);
        assert_eq!(p.len(), 20);
        assert_eq!(p[0], vec![(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
        for perm in &p {
            for s in 0..2 {
                let order: Vec<usize> = perm.iter().filter(|x| x.0 == s).map(|x| x.1).collect();
                assert_eq!(order, vec![0, 1, 2]);
            }
        }
        assert_eq!(interleavings(&[2, 1, 1]).len(), 12);
    }
}
