//! Zipfian key generators.
//!
//! For θ < 1 this is the generator of Gray et al., "Quickly Generating Billion-Record Synthetic
//! Databases" (SIGMOD 1994) — the one YCSB and DBx1000 use, so skew means the same thing here as in the
//! papers' figures: key 0 is the hottest, P(k) ∝ 1 / (k+1)^θ. It needs ζ(n, θ) = Σ 1/i^θ, computed once
//! per (n, θ). For θ ≥ 1 Gray's closed form breaks down (α = 1/(1−θ)), and the same distribution is drawn
//! by rejection-inversion sampling (Hörmann & Derflinger 1996, as `rand_distr::Zipf` implements it).
//! θ = 0 is uniform.

use rand::Rng;

/// Draws keys in `0..n` with Zipfian skew θ.
#[derive(Clone, Debug)]
pub enum Zipf {
    Uniform {
        n: u64,
    },
    Gray {
        n: u64,
        alpha: f64,
        zetan: f64,
        eta: f64,
        half_pow_theta: f64,
    },
    Rejection {
        dist: rand_distr::Zipf<f64>,
    },
}

/// Terms of a sum of 1/i^θ added one by one: past them [`zeta`] integrates the rest and
/// [`distinct_draws_bound`] leaves it out.
const EXACT_TERMS: u64 = 1 << 20;

/// Σ_{i=lo..=hi} 1 / i^θ, term by term.
fn power_sum(lo: u64, hi: u64, theta: f64) -> f64 {
    (lo..=hi).map(|i| (i as f64).powf(-theta)).sum()
}

/// ζ(n, θ) = Σ_{i=1..n} 1 / i^θ: term by term up to `EXACT_TERMS`, and beyond by the
/// Euler–Maclaurin formula, Σ_{i=a..n} f(i) ≈ ∫_a^n f + (f(a) + f(n)) / 2 + (f′(n) − f′(a)) / 12,
/// whose error there is below 10^-20 of the sum — so a billion-row table's generator is made in
/// milliseconds, not seconds (and 10^14 rows do not hang).
pub fn zeta(n: u64, theta: f64) -> f64 {
    let head = power_sum(1, n.min(EXACT_TERMS), theta);
    if n <= EXACT_TERMS {
        return head;
    }
    let (a, b) = ((EXACT_TERMS + 1) as f64, n as f64);
    let f = |x: f64| x.powf(-theta);
    let df = |x: f64| -theta * x.powf(-theta - 1.0);
    let integral = if (theta - 1.0).abs() < 1e-12 {
        (b / a).ln()
    } else {
        (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
    };
    head + integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0
}

/// An upper bound on the expected number of draws that collect `k` distinct keys from a Zipfian over
/// `0..n` with skew θ (a YCSB transaction's keys): holding `i` keys, a draw is new with probability
/// at least the mass outside the `i` hottest keys, T(i) / ζ(n, θ), so the wait for the next new key is
/// at most ζ / T(i) draws. A large θ puts nearly all the mass on a few keys and the bound grows
/// without limit (infinite where 1/i^θ underflows): collecting the keys would never end. Tail sums
/// stop after `EXACT_TERMS` terms past the k-th, which only makes the bound larger.
pub fn distinct_draws_bound(n: u64, k: usize, theta: f64) -> f64 {
    let k = k as u64;
    if k > n {
        return f64::INFINITY;
    }
    // Mass beyond the k hottest keys.
    let beyond = power_sum(k + 1, n.min(k.saturating_add(EXACT_TERMS)), theta);
    // Walking i down from k − 1: T(i) = Σ_{j=i+1..k} 1/j^θ + beyond, and the head H(i) = ζ − T(i)
    // with ζ = H(k) + beyond.
    let zeta = power_sum(1, k, theta) + beyond;
    let mut tail = beyond;
    let mut bound = 0.0;
    for i in (0..k).rev() {
        tail += ((i + 1) as f64).powf(-theta);
        bound += zeta / tail;
    }
    bound
}

impl Zipf {
    /// A generator over `0..n` (n ≥ 1, θ ≥ 0 and finite; checked by the caller's option parsing).
    pub fn new(n: u64, theta: f64) -> Self {
        assert!(
            n >= 1 && theta >= 0.0 && theta.is_finite(),
            "zipf: n = {n}, theta = {theta}"
        );
        if theta == 0.0 {
            Zipf::Uniform { n }
        } else if theta < 1.0 {
            let zetan = zeta(n, theta);
            let zeta2 = zeta(2, theta);
            let alpha = 1.0 / (1.0 - theta);
            let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
            Zipf::Gray {
                n,
                alpha,
                zetan,
                eta,
                half_pow_theta: 0.5f64.powf(theta),
            }
        } else {
            Zipf::Rejection {
                dist: rand_distr::Zipf::new(n, theta).expect("zipf parameters"),
            }
        }
    }

    /// The next key, in `0..n`.
    #[inline]
    pub fn next<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match self {
            Zipf::Uniform { n } => rng.gen_range(0..*n),
            Zipf::Gray {
                n,
                alpha,
                zetan,
                eta,
                half_pow_theta,
            } => {
                let u: f64 = rng.gen();
                let uz = u * zetan;
                if uz < 1.0 {
                    0
                } else if uz < 1.0 + half_pow_theta {
                    1
                } else {
                    ((*n as f64) * (eta * u - eta + 1.0).powf(*alpha)) as u64 % *n
                }
            }
            Zipf::Rejection { dist } => (rng.sample(dist) as u64)
                .saturating_sub(1)
                .min(u64::MAX - 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn histogram(z: &Zipf, n: usize, draws: usize) -> Vec<u64> {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut h = vec![0u64; n];
        for _ in 0..draws {
            let k = z.next(&mut rng) as usize;
            assert!(k < n);
            h[k] += 1;
        }
        h
    }

    #[test]
    fn frequencies_follow_the_power_law() {
        for theta in [0.6, 0.9, 0.99, 1.5] {
            let n = 1000;
            let draws = 400_000;
            let h = histogram(&Zipf::new(n as u64, theta), n, draws);
            let z = zeta(n as u64, theta);
            for k in [0usize, 1, 4, 9] {
                let expect = draws as f64 / ((k + 1) as f64).powf(theta) / z;
                let got = h[k] as f64;
                assert!(
                    (got - expect).abs() < 0.1 * expect + 50.0,
                    "theta {theta} key {k}: got {got}, expected {expect}"
                );
            }
        }
    }

    #[test]
    fn zeta_past_its_exact_terms_matches_the_exact_sum() {
        for theta in [0.0, 0.5, 0.6, 0.99, 1.0, 1.5] {
            for n in [
                EXACT_TERMS,
                EXACT_TERMS + 1,
                EXACT_TERMS + 2,
                3 * EXACT_TERMS + 17,
            ] {
                let (z, e) = (zeta(n, theta), power_sum(1, n, theta));
                assert!((z - e).abs() <= 1e-9 * e, "n {n} θ {theta}: {z} vs {e}");
            }
        }
        // 10^14 rows: done at once, and between the sums it must lie between.
        let z = zeta(100_000_000_000_000, 0.6);
        assert!(z.is_finite() && z > zeta(1 << 30, 0.6));
    }

    #[test]
    fn the_distinct_draws_bound_is_exact_when_uniform_and_grows_with_skew() {
        // Uniform: the coupon collector's n/n + n/(n−1) + … exactly.
        let exact: f64 = (0..4).map(|i| 10.0 / (10 - i) as f64).sum();
        assert!((distinct_draws_bound(10, 4, 0.0) - exact).abs() < 1e-9);
        // Every key of a 2-key space at θ = 1: 1 + ζ / (1/2) = 1 + 3.
        assert!((distinct_draws_bound(2, 2, 1.0) - 4.0).abs() < 1e-9);
        let mut last = 0.0;
        for theta in [0.0, 0.6, 0.99, 1.5, 3.0, 5.0] {
            let b = distinct_draws_bound(1_000_000, 16, theta);
            assert!(b >= last && b >= 16.0, "θ {theta}: {b}");
            last = b;
        }
        assert!(distinct_draws_bound(1_000_000, 16, 0.99) < 20.0);
        assert!(distinct_draws_bound(1_000_000, 16, 5.0) > 5e5);
        assert_eq!(distinct_draws_bound(1000, 16, 1e14), f64::INFINITY);
        assert_eq!(distinct_draws_bound(5, 6, 0.5), f64::INFINITY);
    }

    #[test]
    fn theta_zero_is_uniform() {
        let h = histogram(&Zipf::new(10, 0.0), 10, 100_000);
        assert!(h.iter().all(|&c| (9_000..11_000).contains(&c)), "{h:?}");
    }

    #[test]
    fn single_key_always_zero() {
        let mut rng = SmallRng::seed_from_u64(3);
        for theta in [0.0, 0.5, 2.0] {
            let z = Zipf::new(1, theta);
            assert!((0..100).all(|_| z.next(&mut rng) == 0));
        }
    }
}
