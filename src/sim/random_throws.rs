//! Random throws for batch runs: deterministic from a seed, so the same seed gives the
//! same balls (and the same output bytes).

use super::scenario::{BallSpec, DEFAULT_DISTANCE, DEFAULT_MASS, DEFAULT_RADIUS, Scenario};
use crate::skeleton::{Model, Role};

/// SplitMix64: a small, fast, deterministic generator (no dependency needed).
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` balls aimed at random body parts (roles the model has, else any body) at random
/// times in [0.5 s, duration − 0.8 s] (a shorter window on short clips), 8–16 m/s, handball
/// mass and size. Every ball is launched after the clip starts: it arrives no earlier than
/// its flight time from [`DEFAULT_DISTANCE`], and on a clip too short for that it is thrown
/// faster.
pub fn random_scenario(model: &Model, duration: f64, n: usize, seed: u64) -> Scenario {
    let mut rng = SplitMix64(seed);
    let mut targets: Vec<String> = Role::ALL
        .iter()
        .filter(|r| model.bodies.iter().any(|b| b.role == Some(**r)))
        .map(|r| r.name().to_string())
        .collect();
    if targets.is_empty() {
        targets = model.bodies.iter().map(|b| b.name.clone()).collect();
    }
    let (lo, hi) = (
        0.5_f64.min(duration * 0.3),
        (duration - 0.8).max(duration * 0.5),
    );
    let balls = (0..n)
        .map(|_| {
            let t = rng.uniform(lo, hi.max(lo + 1e-3));
            let target = targets[(rng.next_u64() % targets.len() as u64) as usize].clone();
            let mut speed = rng.uniform(8.0, 16.0);
            // Leave 0.05 s between the clip's start and the launch.
            let earliest = DEFAULT_DISTANCE / speed + 0.05;
            let t = if t >= earliest {
                t
            } else if hi >= earliest {
                earliest + (t - lo) / (hi - lo).max(1e-9) * (hi - earliest)
            } else {
                let t = hi.max(0.1);
                speed = speed.max(DEFAULT_DISTANCE / (t - 0.05).max(0.05));
                t
            };
            BallSpec {
                t: (t * 1000.0).ceil() / 1000.0,
                target: Some(target),
                speed: Some((speed * 100.0).ceil() / 100.0),
                from: None,
                velocity: None,
                mass: DEFAULT_MASS,
                radius: DEFAULT_RADIUS,
            }
        })
        .collect();
    Scenario { balls }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skeleton::{ModelOptions, build_model};

    #[test]
    fn every_random_ball_launches_after_the_clip_starts() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/mocap/demo_walk.bvh");
        let clip = crate::mocap::load_bvh(std::path::Path::new(path)).unwrap();
        let model = build_model(&clip, &ModelOptions::default()).unwrap();
        for duration in [0.3, 0.6, 0.9, 1.5, 3.0, 20.0] {
            for seed in 0..200 {
                for b in random_scenario(&model, duration, 3, seed).balls {
                    let launch = b.t - DEFAULT_DISTANCE / b.speed.unwrap();
                    assert!(
                        launch >= 0.0,
                        "d = {duration}, seed {seed}: launch {launch}"
                    );
                    assert!(b.t <= duration.max(0.1) + 1e-9, "arrives after the end");
                }
            }
        }
        // Same seed, same balls.
        assert_eq!(
            random_scenario(&model, 5.0, 4, 9),
            random_scenario(&model, 5.0, 4, 9)
        );
    }
}
