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

/// ζ(n, θ) = Σ_{i=1..n} 1 / i^θ.
pub fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| (i as f64).powf(-theta)).sum()
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
