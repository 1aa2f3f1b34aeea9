//! Lemke's algorithm: random P-matrix LCPs (checked against brute-force enumeration for
//! small n), degenerate and unsolvable problems, frictional contact LCPs of a ball on the
//! ground against hand computations, random multi-contact friction LCPs, and the
//! single-contact LCP against the closed-form impulse.

use jostle::contact::{
    FrictionLayout, LcpError, LcpSolution, LemkeOptions, SupportRules, SupportScratch, contact_row,
    effective_inverse_mass, friction_lcp, lemke, lemke_with, single_contact_impulse,
    solve_from_support, solve_from_support_in, tangent_directions,
};
use nalgebra::{DMatrix, DVector, Matrix3, UnitQuaternion, Vector3};

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
    fn int(&mut self, lo: i32, hi: i32) -> f64 {
        (lo + (self.next() * (hi - lo + 1) as f64) as i32).min(hi) as f64
    }
    fn vec3(&mut self, s: f64) -> Vector3<f64> {
        Vector3::new(
            self.uniform(-s, s),
            self.uniform(-s, s),
            self.uniform(-s, s),
        )
    }
    fn matrix(&mut self, r: usize, c: usize, s: f64) -> DMatrix<f64> {
        DMatrix::from_fn(r, c, |_, _| self.uniform(-s, s))
    }
}

/// The LCP conditions: z, w ≥ −1e-10, |zᵀw| ≤ 1e-9·scale, |Mz + q − w| ≤ 1e-9·scale.
fn assert_solves(m: &DMatrix<f64>, q: &DVector<f64>, s: &LcpSolution, what: &str) {
    let scale = 1.0 + m.amax() * s.z.amax() + q.amax();
    let resid = (m * &s.z + q - &s.w).amax();
    assert!(s.z.min() >= -1e-10, "{what}: z min {}", s.z.min());
    assert!(s.w.min() >= -1e-10, "{what}: w min {}", s.w.min());
    assert!(
        s.z.dot(&s.w).abs() <= 1e-9 * scale,
        "{what}: zᵀw {}",
        s.z.dot(&s.w)
    );
    assert!(resid <= 1e-9 * scale, "{what}: residual {resid}");
}

/// Brute force for small n: try all 2ⁿ complementary bases (z_i basic or w_i basic),
/// return the z of a feasible one.
fn enumerate(m: &DMatrix<f64>, q: &DVector<f64>) -> Option<DVector<f64>> {
    let n = q.len();
    for mask in 0u32..(1 << n) {
        // Columns: z_i basic → −M e_i, else w_i basic → e_i;  B x = q.
        let b = DMatrix::from_fn(n, n, |r, c| {
            if mask >> c & 1 == 1 {
                -m[(r, c)]
            } else if r == c {
                1.0
            } else {
                0.0
            }
        });
        if let Some(x) = b.lu().solve(q)
            && x.iter().all(|&v| v >= -1e-9)
        {
            return Some(DVector::from_fn(n, |i, _| {
                if mask >> i & 1 == 1 { x[i] } else { 0.0 }
            }));
        }
    }
    None
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    /// AᵀA + diag(δ): symmetric positive definite.
    Spd,
    /// Random off-diagonal, diagonal > row sum of |off-diagonal|: non-symmetric P-matrix.
    DiagDominant,
    /// SPD + skew-symmetric: xᵀMx > 0, non-symmetric P-matrix.
    SpdPlusSkew,
}

fn p_matrix(rng: &mut Rng, n: usize, kind: Kind) -> DMatrix<f64> {
    match kind {
        Kind::Spd => {
            let a = rng.matrix(n, n, 1.0);
            let mut m = a.transpose() * a;
            for i in 0..n {
                m[(i, i)] += rng.uniform(1e-3, 0.5);
            }
            m
        }
        Kind::DiagDominant => {
            let mut m = rng.matrix(n, n, 1.0);
            for i in 0..n {
                let off: f64 = (0..n).filter(|&j| j != i).map(|j| m[(i, j)].abs()).sum();
                m[(i, i)] = off + rng.uniform(0.05, 1.0);
            }
            m
        }
        Kind::SpdPlusSkew => {
            let a = rng.matrix(n, n, 1.0);
            let k = rng.matrix(n, n, 1.0);
            let mut m = a.transpose() * a + (&k - k.transpose());
            for i in 0..n {
                m[(i, i)] += rng.uniform(1e-2, 0.5);
            }
            m
        }
    }
}

#[test]
fn random_p_matrices_sizes_1_to_40() {
    let mut rng = Rng(2024);
    let (mut worst_resid, mut worst_neg, mut worst_comp) = (0.0f64, 0.0f64, 0.0f64);
    for kind in [Kind::Spd, Kind::DiagDominant, Kind::SpdPlusSkew] {
        let mut report = Vec::new();
        for n in 1..=40 {
            let mut max_pivots = 0;
            for trial in 0..6 {
                let m = p_matrix(&mut rng, n, kind);
                let q = DVector::from_fn(n, |_, _| rng.uniform(-1.0, 1.0));
                let s = lemke(&m, &q).unwrap_or_else(|e| panic!("{kind:?} n {n}: {e}"));
                assert_solves(&m, &q, &s, &format!("{kind:?} n {n} trial {trial}"));
                max_pivots = max_pivots.max(s.pivots);
                worst_resid = worst_resid.max((&m * &s.z + &q - &s.w).amax());
                worst_neg = worst_neg.min(s.z.min()).min(s.w.min());
                worst_comp = worst_comp.max(s.z.dot(&s.w).abs());
                // P-matrix: the solution is unique, so brute force must agree.
                if n <= 8 {
                    let z = enumerate(&m, &q).expect("a P-matrix LCP has a solution");
                    assert!(
                        (&z - &s.z).amax() < 1e-9,
                        "{kind:?} n {n}: differs from enumeration"
                    );
                }
            }
            if n % 10 == 0 || n == 1 {
                report.push(format!("n={n}: ≤{max_pivots}"));
            }
        }
        eprintln!("{kind:?} pivots: {}", report.join(", "));
    }
    eprintln!(
        "P-matrices: max |Mz + q − w| {worst_resid:.1e}, min(z, w) {worst_neg:.1e}, max |zᵀw| {worst_comp:.1e}"
    );
}

/// The basis refactorisation (B⁻¹ rebuilt from its dense block of basic z's and z0, the
/// unit columns of basic w's eliminated by hand) against the product-form updates alone:
/// refactoring after every pivot and never give the same (unique, P-matrix) solution,
/// and each solves the LCP. A wrong block inverse would send the pivots astray.
#[test]
fn refactoring_the_basis_every_pivot_changes_no_answer() {
    let mut rng = Rng(77);
    let every = LemkeOptions {
        refactor_every: 1,
        ..LemkeOptions::default()
    };
    let never = LemkeOptions {
        refactor_every: 0,
        ..LemkeOptions::default()
    };
    let mut refactored_pivots = 0;
    for kind in [Kind::Spd, Kind::DiagDominant, Kind::SpdPlusSkew] {
        for n in [1, 2, 5, 12, 30, 48] {
            for trial in 0..4 {
                let m = p_matrix(&mut rng, n, kind);
                let q = DVector::from_fn(n, |_, _| rng.uniform(-1.0, 1.0));
                let what = format!("{kind:?} n {n} trial {trial}");
                let a = lemke_with(&m, &q, &every).unwrap_or_else(|e| panic!("{what}: {e}"));
                let b = lemke_with(&m, &q, &never).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_solves(&m, &q, &a, &what);
                assert_solves(&m, &q, &b, &what);
                let scale = 1.0 + b.z.amax();
                assert!(
                    (&a.z - &b.z).amax() <= 1e-9 * scale,
                    "{what}: refactored z differs by {:e}",
                    (&a.z - &b.z).amax()
                );
                refactored_pivots += a.pivots;
            }
        }
    }
    assert!(
        refactored_pivots > 500,
        "the test must refactor: {refactored_pivots} pivots"
    );
}

#[test]
fn badly_scaled_spd() {
    // Inverse masses of a 0.45 kg ball next to a 70 kg body, impulses of ~1e-3 N·s.
    let mut rng = Rng(5);
    for n in [3, 10, 25] {
        let a = rng.matrix(n, n, 1.0);
        let d = DMatrix::from_diagonal(&DVector::from_fn(
            n,
            |i, _| if i % 2 == 0 { 1e-2 } else { 3.0 },
        ));
        let m = &d * (a.transpose() * &a + DMatrix::identity(n, n) * 0.1) * &d;
        let q = DVector::from_fn(n, |_, _| rng.uniform(-1e-3, 1e-3));
        let s = lemke(&m, &q).expect("solves");
        assert_solves(&m, &q, &s, &format!("scaled n {n}"));
    }
}

#[test]
fn degenerate_problems_terminate_with_valid_solutions() {
    // Repeated rows, tied minimum in q.
    let m = DMatrix::from_row_slice(2, 2, &[1.0, 1.0, 1.0, 1.0]);
    let q = DVector::from_vec(vec![-1.0, -1.0]);
    let s = lemke(&m, &q).expect("solves");
    assert_solves(&m, &q, &s, "[[1,1],[1,1]]");
    assert!((s.z.sum() - 1.0).abs() < 1e-15);

    // Zeros in q, rank-deficient M with repeated rows.
    let m = DMatrix::from_row_slice(
        4,
        4,
        &[
            1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 0.0, 0.0, 2.0, 2.0,
        ],
    );
    let q = DVector::from_vec(vec![0.0, -1.0, 0.0, -1.0]);
    let s = lemke(&m, &q).expect("solves");
    assert_solves(&m, &q, &s, "block repeated rows");

    // Many random degenerate instances: small-integer rank-deficient PSD M and
    // q = w* − M z* with z*, w* complementary and sharing zeros (degenerate solutions),
    // so a solution exists and ties are everywhere.
    let mut rng = Rng(77);
    let mut worst = 0;
    for trial in 0..500 {
        let n = 2 + trial % 12;
        let k = 1 + trial % n;
        let b = DMatrix::from_fn(k, n, |_, _| rng.int(-2, 2));
        let m = b.transpose() * b + DMatrix::identity(n, n) * rng.int(0, 1);
        let mut z = DVector::zeros(n);
        let mut w = DVector::zeros(n);
        for i in 0..n {
            match rng.int(0, 2) as i32 {
                0 => z[i] = rng.int(1, 2),
                1 => w[i] = rng.int(1, 2),
                _ => {}
            }
        }
        let q = &w - &m * &z;
        let s = lemke(&m, &q).unwrap_or_else(|e| panic!("trial {trial}: {e}\nM={m}q={q}"));
        assert_solves(&m, &q, &s, &format!("degenerate trial {trial}"));
        worst = worst.max(s.pivots);
    }
    eprintln!("degenerate PSD instances: max pivots {worst}");
}

#[test]
fn unsolvable_problems_report_errors() {
    // w = −z + q with q < 0 needs z ≤ q < 0.
    let m = -DMatrix::<f64>::identity(3, 3);
    let q = DVector::from_vec(vec![-1.0, -2.0, -0.5]);
    assert_eq!(lemke(&m, &q), Err(LcpError::RayTermination));
    // w₁ = −z₂ − 1 < 0 always.
    let m = DMatrix::from_row_slice(2, 2, &[0.0, -1.0, 1.0, 0.0]);
    let q = DVector::from_vec(vec![-1.0, -1.0]);
    assert_eq!(lemke(&m, &q), Err(LcpError::RayTermination));
    // M = 0, q has a negative entry.
    assert_eq!(
        lemke(&DMatrix::zeros(2, 2), &DVector::from_vec(vec![1.0, -1.0])),
        Err(LcpError::RayTermination)
    );
    // Pivot limit.
    let mut rng = Rng(3);
    let m = p_matrix(&mut rng, 10, Kind::Spd);
    let q = DVector::from_element(10, -1.0);
    let opts = LemkeOptions {
        max_pivots: Some(2),
        ..Default::default()
    };
    assert_eq!(lemke_with(&m, &q, &opts), Err(LcpError::MaxPivots));
}

// ---------------------------------------------------------------- contact LCPs

/// A rigid body's inverse mass matrix blocks (world frame).
#[derive(Clone, Copy)]
struct Body {
    inv_m: f64,
    inv_i: Matrix3<f64>,
}

impl Body {
    fn fixed() -> Self {
        Body {
            inv_m: 0.0,
            inv_i: Matrix3::zeros(),
        }
    }
}

/// One contact between bodies `a` and `b` (indices), normal from a to b.
struct ContactSpec {
    a: usize,
    b: usize,
    r_a: Vector3<f64>,
    r_b: Vector3<f64>,
    n: Vector3<f64>,
    mu: f64,
    e: f64,
}

/// The frictional LCP for `contacts` with `d` directions, built the way METHOD §9 writes
/// it: rows J (normals, then tangents), W = M⁻¹, Delassus J W Jᵀ, free velocity J u plus
/// e·min(0, J_n u) on normal rows. Returns (layout, M, q, J, W).
fn build(
    bodies: &[Body],
    u: &DVector<f64>,
    contacts: &[ContactSpec],
    d: usize,
) -> (
    FrictionLayout,
    DMatrix<f64>,
    DVector<f64>,
    DMatrix<f64>,
    DMatrix<f64>,
) {
    let nb = bodies.len();
    let layout = FrictionLayout {
        contacts: contacts.len(),
        directions: d,
    };
    let mut w = DMatrix::zeros(6 * nb, 6 * nb);
    for (i, b) in bodies.iter().enumerate() {
        for k in 0..3 {
            w[(6 * i + k, 6 * i + k)] = b.inv_m;
        }
        w.view_mut((6 * i + 3, 6 * i + 3), (3, 3))
            .copy_from(&b.inv_i);
    }
    let mut j = DMatrix::zeros(layout.rows(), 6 * nb);
    let mut put = |row: usize, c: &ContactSpec, dir: &Vector3<f64>| {
        let r = contact_row(&c.r_a, &c.r_b, dir);
        for k in 0..6 {
            j[(row, 6 * c.a + k)] += r[k];
            j[(row, 6 * c.b + k)] += r[6 + k];
        }
    };
    for (i, c) in contacts.iter().enumerate() {
        put(layout.normal(i), c, &c.n);
        for (k, t) in tangent_directions(&c.n, d).iter().enumerate() {
            put(layout.tangent(i, k), c, t);
        }
    }
    let delassus = &j * &w * j.transpose();
    let mut free = &j * u;
    for (i, c) in contacts.iter().enumerate() {
        let vn = free[layout.normal(i)];
        free[layout.normal(i)] += c.e * vn.min(0.0);
    }
    let mu: Vec<f64> = contacts.iter().map(|c| c.mu).collect();
    let (m, q) = friction_lcp(layout, &delassus, &free, &mu).expect("dimensions");
    (layout, m, q, j, w)
}

/// Ball of mass m, radius R on the ground (body 0 fixed, body 1 the ball, normal +Y from
/// ground to ball), ball velocity v, spin ω. Returns the post-step ball velocity and
/// spin, the net friction impulse on the ball and γ.
fn ball_on_ground(
    m: f64,
    radius: f64,
    rotates: bool,
    v: Vector3<f64>,
    e: f64,
    mu: f64,
) -> (Vector3<f64>, Vector3<f64>, Vector3<f64>, f64, f64) {
    let inertia = 0.4 * m * radius * radius;
    let ball = Body {
        inv_m: 1.0 / m,
        inv_i: if rotates {
            Matrix3::identity() / inertia
        } else {
            Matrix3::zeros()
        },
    };
    let mut u = DVector::zeros(12);
    u.rows_mut(6, 3).copy_from(&v);
    let c = ContactSpec {
        a: 0,
        b: 1,
        r_a: Vector3::new(0.0, 0.0, 0.0),
        r_b: Vector3::new(0.0, -radius, 0.0),
        n: Vector3::y(),
        mu,
        e,
    };
    let (layout, mm, q, j, w) = build(&[Body::fixed(), ball], &u, &[c], 4);
    let s = lemke(&mm, &q).expect("friction LCP solves");
    assert_solves(&mm, &q, &s, "ball on ground");
    let lambda = s.z.rows(0, layout.rows()).into_owned();
    let up = &u + &w * j.transpose() * &lambda;
    let dirs = tangent_directions(&Vector3::y(), 4);
    let friction: Vector3<f64> = (0..4).map(|k| dirs[k] * lambda[layout.tangent(0, k)]).sum();
    (
        Vector3::new(up[6], up[7], up[8]),
        Vector3::new(up[9], up[10], up[11]),
        friction,
        lambda[layout.normal(0)],
        s.z[layout.slack(0)],
    )
}

#[test]
fn ball_on_ground_sticks_and_slides_as_computed_by_hand() {
    let (m, r, e, mu) = (0.45, 0.095, 0.6, 0.8);
    // Normal: λn = (1+e)·5·m = 3.6 N·s, so vy⁺ = +3 and the cone allows Σλf ≤ 2.88.
    // Sticking: stopping (1, ·, 0.5) needs |λx| + |λz| = 0.675 ≤ 2.88.
    let (vp, _, f, ln, g) = ball_on_ground(m, r, false, Vector3::new(1.0, -5.0, 0.5), e, mu);
    assert!((ln - 3.6).abs() < 1e-12);
    assert!((vp - Vector3::new(0.0, 3.0, 0.0)).amax() < 1e-12, "{vp}");
    assert!((f - Vector3::new(-0.45, 0.0, -0.225)).amax() < 1e-12);
    assert!(g.abs() < 1e-12);
    // Sliding along x: m·vx = 4.5 > 2.88: vx⁺ = 10 − 2.88/0.45 = 3.6 = γ.
    let (vp, _, f, _, g) = ball_on_ground(m, r, false, Vector3::new(10.0, -5.0, 0.0), e, mu);
    assert!((vp - Vector3::new(3.6, 3.0, 0.0)).amax() < 1e-12, "{vp}");
    assert!((f - Vector3::new(-2.88, 0.0, 0.0)).amax() < 1e-12);
    assert!((g - 3.6).abs() < 1e-12);
    // Diagonal slide on the 4-sided cone: −x alone would leave vz⁺ = 4 > γ = 3.6, so both
    // −x and −z act: λx + λz = 2.88, 10 − λx/m = 4 − λz/m ⇒ λx = 2.79, λz = 0.09,
    // vx⁺ = vz⁺ = γ = 3.8.
    let (vp, _, f, _, g) = ball_on_ground(m, r, false, Vector3::new(10.0, -5.0, 4.0), e, mu);
    assert!((vp - Vector3::new(3.8, 3.0, 3.8)).amax() < 1e-12, "{vp}");
    assert!((f - Vector3::new(-2.79, 0.0, -0.09)).amax() < 1e-12);
    assert!((g - 3.8).abs() < 1e-12);
    // Separating ball: no impulse at all.
    let (vp, _, f, ln, _) = ball_on_ground(m, r, false, Vector3::new(3.0, 1.0, 0.0), e, mu);
    assert_eq!((ln, f), (0.0, Vector3::zeros()));
    assert_eq!(vp, Vector3::new(3.0, 1.0, 0.0));
}

#[test]
fn rolling_ball_on_ground_as_computed_by_hand() {
    // A solid ball (I = 2/5 m R²): tangential effective inverse mass 1/m + R²/I = 3.5/m.
    let (m, r, e, mu) = (0.45, 0.095, 0.6, 0.3);
    // λn = 3.6, cone 1.08. Stopping the contact point of vx = 2 needs m·2/3.5 = 0.257:
    // sticks, and the ball leaves rolling at 5/7 of its speed.
    let (vp, wp, _, _, g) = ball_on_ground(m, r, true, Vector3::new(2.0, -5.0, 0.0), e, mu);
    assert!((vp.x - 10.0 / 7.0).abs() < 1e-12, "{vp}");
    assert!(
        (vp.x + wp.z * r).abs() < 1e-12,
        "contact point at rest: {vp} {wp}"
    );
    assert!(g.abs() < 1e-12);
    // vx = 10 needs 1.286 > 1.08: slides with vx⁺ = 10 − 1.08/0.45 = 7.6, spin
    // ωz = −1.08 R / I, slip = 7.6 + R ωz = 1.6 = γ.
    let (vp, wp, _, _, g) = ball_on_ground(m, r, true, Vector3::new(10.0, -5.0, 0.0), e, mu);
    assert!((vp - Vector3::new(7.6, 3.0, 0.0)).amax() < 1e-12, "{vp}");
    assert!((wp.z + 1.08 * r / (0.4 * m * r * r)).abs() < 1e-9, "{wp}");
    assert!((g - 1.6).abs() < 1e-12);
}

fn random_rotation(rng: &mut Rng) -> Matrix3<f64> {
    UnitQuaternion::from_scaled_axis(rng.vec3(3.0))
        .to_rotation_matrix()
        .into_inner()
}

fn random_inertia(rng: &mut Rng, m: f64) -> Matrix3<f64> {
    let r = random_rotation(rng);
    let d = Matrix3::from_diagonal(&Vector3::new(
        m * rng.uniform(0.002, 0.05),
        m * rng.uniform(0.002, 0.05),
        m * rng.uniform(0.002, 0.05),
    ));
    r * d * r.transpose()
}

#[test]
fn single_contact_lcp_equals_closed_form_impulse() {
    let mut rng = Rng(11);
    let mut worst = 0.0f64;
    for trial in 0..1000 {
        let (ma, mb) = (rng.uniform(0.1, 80.0), rng.uniform(0.1, 80.0));
        let (ia, ib) = (random_inertia(&mut rng, ma), random_inertia(&mut rng, mb));
        let (ra, rb) = (rng.vec3(0.5), rng.vec3(0.5));
        let n = rng.vec3(1.0).normalize();
        let e = rng.uniform(0.0, 1.0);
        let fixed_b = trial % 5 == 0; // against the ground
        let bodies = [
            Body {
                inv_m: 1.0 / ma,
                inv_i: ia.try_inverse().unwrap(),
            },
            if fixed_b {
                Body::fixed()
            } else {
                Body {
                    inv_m: 1.0 / mb,
                    inv_i: ib.try_inverse().unwrap(),
                }
            },
        ];
        let u = DVector::from_fn(12, |_, _| rng.uniform(-5.0, 5.0));
        let c = ContactSpec {
            a: 0,
            b: 1,
            r_a: ra,
            r_b: rb,
            n,
            mu: 0.0,
            e,
        };
        // One row: w = J u⁺ + e·min(0, J u), u⁺ = u + M⁻¹ Jᵀ λ  ⇒  w = (J M⁻¹ Jᵀ) λ + q.
        let j = contact_row(&ra, &rb, &n).transpose();
        let jm = DMatrix::from_row_slice(1, 12, j.as_slice());
        let mut w = DMatrix::zeros(12, 12);
        for (i, b) in bodies.iter().enumerate() {
            for k in 0..3 {
                w[(6 * i + k, 6 * i + k)] = b.inv_m;
            }
            w.view_mut((6 * i + 3, 6 * i + 3), (3, 3))
                .copy_from(&b.inv_i);
        }
        let vrel = (&jm * &u)[0];
        let m1 = &jm * &w * jm.transpose();
        let q = DVector::from_element(1, vrel + c.e * vrel.min(0.0));
        let s = lemke(&m1, &q).expect("1×1 LCP");
        let k = effective_inverse_mass(
            ma,
            &ia,
            &ra,
            if fixed_b { f64::INFINITY } else { mb },
            &ib,
            &rb,
            &n,
        )
        .expect("valid bodies");
        assert!(
            (k - m1[(0, 0)]).abs() <= 1e-12 * k,
            "k {k} vs {}",
            m1[(0, 0)]
        );
        let jc = single_contact_impulse(vrel, e, k);
        worst = worst.max((s.z[0] - jc).abs() / (1.0 + jc));
        assert!(
            (s.z[0] - jc).abs() <= 1e-12 * (1.0 + jc),
            "trial {trial}: LCP {} vs closed form {jc}",
            s.z[0]
        );
        // Newton's law after the impulse: v_rel⁺ = −e v_rel⁻ when approaching.
        let up = &u + &w * jm.transpose() * s.z[0];
        let vplus = (&jm * &up)[0];
        if vrel < 0.0 {
            assert!((vplus + e * vrel).abs() < 1e-10 * (1.0 + vrel.abs()));
        } else {
            assert_eq!(s.z[0], 0.0);
        }
    }
    eprintln!("single contact: max |λ_LCP − j| / (1 + j) = {worst:.1e}");
}

/// A random scene: `moving` rigid bodies plus the ground (body 0), 5 contacts with random
/// points, normals and μ, 4 friction directions: a 30-variable LCP (25 impulses + 5 cone
/// slacks). `tree`: contact i joins body i+1 to an earlier body or the ground, so no set
/// of contacts can squeeze a body between them; otherwise any pairs (loops allowed).
/// `restitution`: e ∈ [0, 0.8], else 0.
fn random_scene(
    rng: &mut Rng,
    moving: usize,
    tree: bool,
    restitution: bool,
) -> (FrictionLayout, DMatrix<f64>, DVector<f64>) {
    let mut bodies = vec![Body::fixed()];
    for _ in 0..moving {
        let m = rng.uniform(0.3, 10.0);
        bodies.push(Body {
            inv_m: 1.0 / m,
            inv_i: random_inertia(rng, m).try_inverse().unwrap(),
        });
    }
    let nb = bodies.len();
    let u = DVector::from_fn(
        6 * nb,
        |i, _| if i < 6 { 0.0 } else { rng.uniform(-5.0, 5.0) },
    );
    let contacts: Vec<ContactSpec> = (0..5)
        .map(|i| {
            let (a, b) = if tree {
                (((rng.next() * (i + 1) as f64) as usize).min(i), i + 1)
            } else {
                let a = ((rng.next() * moving as f64) as usize).min(moving - 1);
                let b = a + 1 + ((rng.next() * (moving - a) as f64) as usize).min(moving - a - 1);
                (a, b)
            };
            ContactSpec {
                a,
                b,
                r_a: rng.vec3(0.3),
                r_b: rng.vec3(0.3),
                n: rng.vec3(1.0).normalize(),
                mu: rng.uniform(0.1, 1.0),
                e: if restitution {
                    rng.uniform(0.0, 0.8)
                } else {
                    0.0
                },
            }
        })
        .collect();
    let (layout, m, q, _, _) = build(&bodies, &u, &contacts, 4);
    (layout, m, q)
}

fn solve_scenes(seed: u64, moving: usize, tree: bool, restitution: bool) -> (f64, usize) {
    let mut rng = Rng(seed);
    let (mut total, mut worst) = (0, 0);
    let trials = 2000;
    for trial in 0..trials {
        let (layout, m, q) = random_scene(&mut rng, moving, tree, restitution);
        let s = lemke(&m, &q).unwrap_or_else(|e| panic!("scene {trial}: {e}"));
        assert_solves(&m, &q, &s, &format!("scene {trial}"));
        for i in 0..layout.contacts {
            let ft: f64 = (0..layout.directions)
                .map(|k| s.z[layout.tangent(i, k)])
                .sum();
            let mu_ln = m[(layout.slack(i), layout.normal(i))] * s.z[layout.normal(i)];
            assert!(
                ft <= mu_ln + 1e-9,
                "scene {trial}: outside the friction cone"
            );
        }
        total += s.pivots;
        worst = worst.max(s.pivots);
    }
    (total as f64 / trials as f64, worst)
}

/// Without restitution, q = J u, and the Anitescu–Potra LCP is always solved by Lemke,
/// whatever the contacts (here 5 random contacts among 3 bodies and the ground,
/// loops included).
#[test]
fn random_friction_lcps_without_restitution_always_solve() {
    let (mean, worst) = solve_scenes(31337, 3, false, false);
    eprintln!("5 contacts on 3 bodies, e = 0 (30 variables): mean {mean:.1} pivots, max {worst}");
}

/// With restitution the normal rows ask for a separation speed e·|v⁻| at every contact,
/// which a body squeezed between contacts cannot give at all of them; without such loops
/// (contacts forming a tree rooted at the ground) every LCP is solved.
#[test]
fn random_friction_lcps_with_restitution_on_contact_trees_always_solve() {
    let (mean, worst) = solve_scenes(4242, 5, true, true);
    eprintln!("5 contacts, tree, e ∈ [0, 0.8] (30 variables): mean {mean:.1} pivots, max {worst}");
}

/// The known infeasible case, pinned down: a ball squeezed between two walls that are
/// driven together kinematically (infinite mass, prescribed velocity, like a mocap-driven
/// limb) cannot move away from both, even without restitution. Lemke must report it
/// instead of looping; the same walls standing still give a solution.
#[test]
fn ball_squeezed_by_kinematic_walls_reports_no_solution() {
    let ball = Body {
        inv_m: 1.0 / 0.45,
        inv_i: Matrix3::zeros(),
    };
    let scene = |closing: f64, e: f64| {
        // Bodies: 0 = left wall (+X at `closing` m/s), 1 = right wall (−X), 2 = ball at rest.
        let mut u = DVector::zeros(18);
        u[0] = closing;
        u[6] = -closing;
        let contacts = [
            ContactSpec {
                a: 0,
                b: 2,
                r_a: Vector3::zeros(),
                r_b: Vector3::new(-0.1, 0.0, 0.0),
                n: Vector3::x(),
                mu: 0.5,
                e,
            },
            ContactSpec {
                a: 1,
                b: 2,
                r_a: Vector3::zeros(),
                r_b: Vector3::new(0.1, 0.0, 0.0),
                n: -Vector3::x(),
                mu: 0.5,
                e,
            },
        ];
        let (_, m, q, _, _) = build(&[Body::fixed(), Body::fixed(), ball], &u, &contacts, 4);
        lemke(&m, &q)
    };
    assert_eq!(scene(1.0, 0.0).unwrap_err(), LcpError::RayTermination);
    assert_eq!(scene(1.0, 0.5).unwrap_err(), LcpError::RayTermination);
    let s = scene(0.0, 0.5).expect("walls at rest");
    assert_eq!(s.z.amax(), 0.0);
}

/// Small random integer LCPs (entries in −2..2, q in −2..1) are riddled with ties. With the
/// ratio-test ties broken by row index, ~0.85 % of them cycle until the pivot limit
/// (measured on 2·10⁶ instances while developing); the lexicographic rule never cycles:
/// every run ends in a solution or a ray, and every solution checks.
#[test]
fn lexicographic_rule_never_cycles_on_degenerate_integer_lcps() {
    let mut rng = Rng(1);
    let (mut solved, mut rays) = (0, 0);
    for trial in 0..200_000u64 {
        let n = 2 + (trial % 5) as usize;
        let m = DMatrix::from_fn(n, n, |_, _| rng.int(-2, 2));
        let q = DVector::from_fn(n, |_, _| rng.int(-2, 1));
        match lemke(&m, &q) {
            Ok(s) => {
                assert_solves(&m, &q, &s, &format!("integer trial {trial}"));
                solved += 1;
            }
            Err(LcpError::RayTermination) => rays += 1,
            Err(e) => panic!("trial {trial}: {e}\nM={m}q={q}"),
        }
    }
    eprintln!("integer LCPs: {solved} solved, {rays} rays, 0 cycles");
    // One that cycles under index tie-breaking (found by the search above).
    let m = DMatrix::from_row_slice(
        6,
        6,
        &[
            2.0, -2.0, 0.0, -1.0, 0.0, 2.0, //
            -2.0, 0.0, 0.0, 0.0, 1.0, 1.0, //
            0.0, -1.0, 0.0, 0.0, 0.0, -2.0, //
            -2.0, -1.0, -1.0, -2.0, 0.0, 0.0, //
            2.0, 2.0, -1.0, 2.0, 2.0, -1.0, //
            0.0, -1.0, 1.0, 0.0, 1.0, 1.0,
        ],
    );
    let q = DVector::from_vec(vec![1.0, -1.0, -1.0, 1.0, -1.0, -1.0]);
    let r = lemke(&m, &q);
    eprintln!(
        "the index-cycling instance: {:?}",
        r.as_ref().map(|s| s.pivots)
    );
    match r {
        Ok(s) => assert_solves(&m, &q, &s, "index-cycling instance"),
        Err(e) => assert_eq!(e, LcpError::RayTermination),
    }
}

#[test]
fn a_guessed_support_gives_lemkes_solution_or_nothing() {
    // On P-matrix LCPs (one solution): the exact support is accepted at once; a support
    // with one index wrong is either corrected in a few rounds or refused, never turned
    // into a wrong answer; a support off by everything is refused or right.
    let mut rng = Rng(77);
    let (mut exact, mut corrected, mut refused) = (0, 0, 0);
    for kind in [Kind::Spd, Kind::DiagDominant, Kind::SpdPlusSkew] {
        for n in 1..=24 {
            let m = p_matrix(&mut rng, n, kind);
            let q = DVector::from_fn(n, |_, _| rng.uniform(-1.0, 1.0));
            let want = lemke(&m, &q).expect("P-matrix LCPs are solvable");
            let support: Vec<bool> = want.z.iter().map(|&v| v > 0.0).collect();
            let got = solve_from_support(&m, &q, &support, &SupportRules::default(), 1e-12, 1)
                .expect("the exact support is accepted");
            assert_solves(&m, &q, &got, "exact support");
            assert!((&got.z - &want.z).amax() <= 1e-9 * (1.0 + want.z.amax()));
            exact += 1;
            let mut wrong = support.clone();
            let i = (rng.next() * n as f64) as usize % n;
            wrong[i] = !wrong[i];
            for guess in [wrong, support.iter().map(|b| !b).collect()] {
                match solve_from_support(&m, &q, &guess, &SupportRules::default(), 1e-12, 4) {
                    Some(s) => {
                        assert_solves(&m, &q, &s, "corrected support");
                        assert!((&s.z - &want.z).amax() <= 1e-9 * (1.0 + want.z.amax()));
                        corrected += 1;
                    }
                    None => refused += 1,
                }
            }
        }
    }
    eprintln!("guessed supports: {exact} exact, {corrected} corrected, {refused} refused");
    assert!(
        corrected > 0,
        "block pivoting corrects some one-index errors"
    );
    // dimensions that do not match are refused, not a panic
    let m = DMatrix::identity(2, 2);
    let q = DVector::from_vec(vec![-1.0, 1.0]);
    assert!(solve_from_support(&m, &q, &[true], &SupportRules::default(), 1e-12, 2).is_none());
    assert!(
        solve_from_support(
            &m,
            &q,
            &[true, false],
            &SupportRules {
                partner: vec![None],
                ..Default::default()
            },
            1e-12,
            2
        )
        .is_none()
    );
}

#[test]
fn a_reused_scratch_gives_a_fresh_calls_bits() {
    // The contact phase keeps one scratch for every step's warm start, its LCPs growing
    // and shrinking as feet land and lift: each call must be as if the scratch were new
    // (nothing from the last problem, larger or smaller, leaks into it). Friction LCPs
    // with their cone rules (partners, whose last-round memory is scratch too) from a
    // guess a few flips off Lemke's support, between P-matrix LCPs of other sizes.
    let mut rng = Rng(5);
    let mut scratch = SupportScratch::default();
    let (mut accepted, mut refused, mut several_rounds) = (0, 0, 0);
    for trial in 0..400 {
        let (m, q, rules, guess) = if trial % 2 == 0 {
            let (layout, m, q) = random_scene(&mut rng, 3, false, false);
            let Ok(exact) = lemke(&m, &q) else {
                continue;
            };
            let mut guess: Vec<bool> = exact.z.iter().map(|&v| v > 0.0).collect();
            for _ in 0..3 {
                let i = (rng.next() * guess.len() as f64) as usize % guess.len();
                guess[i] = !guess[i];
            }
            (m, q, layout.support_rules(), guess)
        } else {
            let n = 1 + (rng.next() * 40.0) as usize;
            let m = p_matrix(&mut rng, n, Kind::SpdPlusSkew);
            let q = DVector::from_fn(n, |_, _| rng.uniform(-1.0, 1.0));
            let guess = (0..n).map(|_| rng.next() < 0.5).collect();
            (m, q, SupportRules::default(), guess)
        };
        let fresh = solve_from_support(&m, &q, &guess, &rules, 1e-12, 8);
        let reused = solve_from_support_in(&m, &q, &guess, &rules, 1e-12, 8, &mut scratch);
        match (fresh, reused) {
            (Some(f), Some(rounds)) => {
                assert_eq!(f.pivots, rounds, "trial {trial}");
                let bits = |v: &DVector<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&f.z), bits(&scratch.z), "z, trial {trial}");
                assert_eq!(bits(&f.w), bits(&scratch.w), "w, trial {trial}");
                accepted += 1;
                if rounds > 1 {
                    several_rounds += 1;
                }
            }
            (None, None) => refused += 1,
            (f, r) => panic!(
                "trial {trial}: fresh {:?}, reused {r:?}",
                f.map(|s| s.pivots)
            ),
        }
    }
    eprintln!("{accepted} accepted ({several_rounds} after 2+ rounds), {refused} refused");
    assert!(accepted > 50 && several_rounds > 10 && refused > 0);
}

/// The warm start on what a run gives it: the previous step's support for an LCP whose
/// velocities moved a little (5 random contacts in a tree on the ground, friction
/// pyramids). Every answer it accepts solves the LCP and stays in the friction cones; it
/// accepts most of them, and the exact support of Lemke's answer nearly always, including
/// answers with an unloaded sliding contact (γ > 0 with no normal impulse: M_BB singular,
/// refused before). On these random scenes the cone rules accept a few per cent fewer
/// than the generic rules; on the CMU jumps they take the acceptance from 93 % to 97 %.
#[test]
fn a_friction_warm_start_follows_nearby_lcps() {
    let mut rng = Rng(2024);
    let trials = 1500;
    let (mut accepted, mut plain_accepted, mut unloaded_sliding) = (0, 0, 0);
    let (mut exact_accepted, mut lcps, mut unloaded_sliding_accepted) = (0, 0, 0);
    for trial in 0..trials {
        let moving = 4;
        let mut bodies = vec![Body::fixed()];
        for _ in 0..moving {
            let m = rng.uniform(0.3, 10.0);
            bodies.push(Body {
                inv_m: 1.0 / m,
                inv_i: random_inertia(&mut rng, m).try_inverse().unwrap(),
            });
        }
        let contacts: Vec<ContactSpec> = (0..5)
            .map(|i| ContactSpec {
                // b on a body, a on one before it (the ground first): no self-contacts
                a: ((rng.next() * ((i % moving) + 1) as f64) as usize).min(i % moving),
                b: (i % moving) + 1,
                r_a: rng.vec3(0.3),
                r_b: rng.vec3(0.3),
                n: rng.vec3(1.0).normalize(),
                mu: rng.uniform(0.1, 1.0),
                e: 0.0,
            })
            .collect();
        let nb = bodies.len();
        let u0 = DVector::from_fn(
            6 * nb,
            |i, _| if i < 6 { 0.0 } else { rng.uniform(-2.0, 2.0) },
        );
        let (layout, m0, q0, _, _) = build(&bodies, &u0, &contacts, 4);
        let Ok(first) = lemke(&m0, &q0) else {
            continue;
        };
        let rules = layout.support_rules();
        let exact: Vec<bool> = first.z.iter().map(|&v| v > 0.0).collect();
        // (random scenes also make degenerate supports, two pyramid edges sliding at once
        // with M_BB singular: those may be refused, never answered wrongly)
        if let Some(again) = solve_from_support(&m0, &q0, &exact, &rules, 1e-12, 1) {
            assert_solves(&m0, &q0, &again, &format!("trial {trial}: exact support"));
            exact_accepted += 1;
        }
        lcps += 1;
        if (0..layout.contacts)
            .any(|c| first.z[layout.normal(c)] == 0.0 && first.z[layout.slack(c)] > 0.0)
        {
            unloaded_sliding += 1;
            if solve_from_support(&m0, &q0, &exact, &rules, 1e-12, 1).is_some() {
                unloaded_sliding_accepted += 1;
            }
        }
        // the next step: velocities changed by a few per cent
        let u1 = &u0
            + DVector::from_fn(
                6 * nb,
                |i, _| {
                    if i < 6 { 0.0 } else { rng.uniform(-0.05, 0.05) }
                },
            );
        let (_, m1, q1, _, _) = build(&bodies, &u1, &contacts, 4);
        if let Some(s) = solve_from_support(&m1, &q1, &exact, &rules, 1e-12, 8) {
            assert_solves(&m1, &q1, &s, &format!("trial {trial}: warm start"));
            for c in 0..layout.contacts {
                let ft: f64 = (0..4).map(|k| s.z[layout.tangent(c, k)]).sum();
                let mu_ln = m1[(layout.slack(c), layout.normal(c))] * s.z[layout.normal(c)];
                assert!(ft <= mu_ln + 1e-9, "trial {trial}: outside the cone");
            }
            accepted += 1;
        }
        if solve_from_support(&m1, &q1, &exact, &SupportRules::default(), 1e-12, 8).is_some() {
            plain_accepted += 1;
        }
    }
    eprintln!(
        "{lcps} LCPs: exact support accepted {exact_accepted} times ({unloaded_sliding_accepted} \
         of {unloaded_sliding} with an unloaded sliding contact); the next step's warm start \
         accepted {accepted} times with the cone rules, {plain_accepted} without"
    );
    assert!(unloaded_sliding > 0, "the singular case occurred");
    assert!(
        unloaded_sliding_accepted * 10 >= unloaded_sliding * 9,
        "unloaded sliding: {unloaded_sliding_accepted} of {unloaded_sliding}"
    );
    assert!(
        exact_accepted * 100 >= lcps * 95,
        "{exact_accepted} of {lcps}"
    );
    assert!(accepted * 10 >= lcps * 8, "{accepted} of {lcps} accepted");
}
