//! Contact primitives: one swept sphere–capsule query (handball vs forearm, one 1/120 s
//! step) and Lemke on a 5-contact friction LCP (4 directions: 25 impulses + 5 cone
//! slacks = 30 variables).

use criterion::{Criterion, criterion_group, criterion_main};
use jostle::contact::{
    FrictionLayout, Sphere, WorldCapsule, contact_row, friction_lcp, lemke, sweep_sphere_capsule,
    tangent_directions,
};
use nalgebra::{DMatrix, DVector, Matrix3, UnitQuaternion, Vector3};
use std::hint::black_box;

type V3 = Vector3<f64>;

fn sweeps(c: &mut Criterion) {
    let h = 1.0 / 120.0;
    let arm = WorldCapsule::new(V3::zeros(), V3::new(0.26, 0.0, 0.0), 0.03);
    let z = V3::zeros();
    // Rotating about its end at 8 rad/s (about Y): tip velocity ω × tip.
    let vb = V3::new(0.0, 8.0, 0.0).cross(&arm.b);
    let v = V3::new(0.0, 0.0, 40.0);
    // Ball 0.2 m before contact: hits within this step.
    let hit = Sphere::new(V3::new(0.15, 0.0, -0.325), 0.095);
    // Ball passing 1 cm beyond the tip.
    let near = Sphere::new(V3::new(0.26 + 0.125 + 0.01, 0.0, -0.2), 0.095);
    // Ball 3 m away: rejected by the first bound.
    let far = Sphere::new(V3::new(0.15, 0.0, -3.0), 0.095);
    let mut g = c.benchmark_group("sweep_sphere_capsule");
    for (name, s, vb) in [
        ("hit, static arm", hit, z),
        ("hit, rotating arm", hit, vb),
        ("1 cm miss, rotating arm", near, vb),
        ("far, rotating arm", far, vb),
    ] {
        let r = sweep_sphere_capsule(&s, &v, &arm, &z, &vb, h);
        eprintln!("{name}: {:?}", r.map(|h| (h.toi, h.iterations)));
        g.bench_function(name, |b| {
            b.iter(|| sweep_sphere_capsule(black_box(&s), &v, black_box(&arm), &z, &vb, h))
        });
    }
    g.finish();
}

/// SplitMix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    fn vec3(&mut self, s: f64) -> V3 {
        V3::new(
            self.uniform(-s, s),
            self.uniform(-s, s),
            self.uniform(-s, s),
        )
    }
}

/// 5 rigid bodies + the ground, 5 contacts forming a tree, random points, normals, μ, e.
fn friction_scene(rng: &mut Rng) -> (DMatrix<f64>, DVector<f64>) {
    let nb = 6;
    let mut w = DMatrix::zeros(6 * nb, 6 * nb);
    for i in 1..nb {
        let m = rng.uniform(0.3, 10.0);
        let r = UnitQuaternion::from_scaled_axis(rng.vec3(3.0)).to_rotation_matrix();
        let d = Matrix3::from_diagonal(&V3::new(
            1.0 / (m * rng.uniform(0.002, 0.05)),
            1.0 / (m * rng.uniform(0.002, 0.05)),
            1.0 / (m * rng.uniform(0.002, 0.05)),
        ));
        for k in 0..3 {
            w[(6 * i + k, 6 * i + k)] = 1.0 / m;
        }
        w.view_mut((6 * i + 3, 6 * i + 3), (3, 3))
            .copy_from(&(r.matrix() * d * r.matrix().transpose()));
    }
    let u = DVector::from_fn(
        6 * nb,
        |i, _| if i < 6 { 0.0 } else { rng.uniform(-5.0, 5.0) },
    );
    let layout = FrictionLayout {
        contacts: 5,
        directions: 4,
    };
    let mut j = DMatrix::zeros(layout.rows(), 6 * nb);
    let mut e = Vec::new();
    let mut mu = Vec::new();
    for i in 0..5 {
        let (a, b) = (((rng.next() * (i + 1) as f64) as usize).min(i), i + 1);
        let (ra, rb, n) = (rng.vec3(0.3), rng.vec3(0.3), rng.vec3(1.0).normalize());
        let mut put = |row: usize, dir: &V3| {
            let r = contact_row(&ra, &rb, dir);
            for k in 0..6 {
                j[(row, 6 * a + k)] += r[k];
                j[(row, 6 * b + k)] += r[6 + k];
            }
        };
        put(layout.normal(i), &n);
        for (k, t) in tangent_directions(&n, 4).iter().enumerate() {
            put(layout.tangent(i, k), t);
        }
        e.push(rng.uniform(0.0, 0.8));
        mu.push(rng.uniform(0.1, 1.0));
    }
    let delassus = &j * &w * j.transpose();
    let mut free = &j * &u;
    for (i, e) in e.iter().enumerate() {
        free[i] += e * free[i].min(0.0);
    }
    friction_lcp(layout, &delassus, &free, &mu).expect("dimensions")
}

fn lcps(c: &mut Criterion) {
    let mut rng = Rng(4242);
    let scenes: Vec<_> = (0..64).map(|_| friction_scene(&mut rng)).collect();
    let pivots: Vec<usize> = scenes
        .iter()
        .map(|(m, q)| lemke(m, q).expect("solves").pivots)
        .collect();
    eprintln!(
        "64 scenes: mean {:.1} pivots, max {}",
        pivots.iter().sum::<usize>() as f64 / 64.0,
        pivots.iter().max().unwrap()
    );
    let mut g = c.benchmark_group("lemke");
    let mut k = 0;
    g.bench_function(
        "5-contact friction LCP (30 variables, mean over 64 scenes)",
        |b| {
            b.iter(|| {
                k = (k + 1) % scenes.len();
                let (m, q) = &scenes[k];
                lemke(black_box(m), black_box(q)).expect("solves")
            })
        },
    );
    // The largest size the solver is meant for: a 60×60 SPD P-matrix.
    let a = DMatrix::from_fn(60, 60, |_, _| rng.uniform(-1.0, 1.0));
    let m = a.transpose() * &a + DMatrix::identity(60, 60) * 0.1;
    let q = DVector::from_fn(60, |_, _| rng.uniform(-1.0, 1.0));
    eprintln!(
        "60×60 SPD: {} pivots",
        lemke(&m, &q).expect("solves").pivots
    );
    g.bench_function("60x60 SPD", |b| {
        b.iter(|| lemke(black_box(&m), black_box(&q)).expect("solves"))
    });
    g.finish();
}

criterion_group!(benches, sweeps, lcps);
criterion_main!(benches);
