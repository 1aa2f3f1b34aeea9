//! Rotation ⇄ BVH Euler angles in any channel order (intrinsic, as BVH composes them).

use super::Channel;
use nalgebra::{Rotation3, Unit, UnitQuaternion, Vector3};

fn axis_index(c: Channel) -> usize {
    match c {
        Channel::Xrotation | Channel::Xposition => 0,
        Channel::Yrotation | Channel::Yposition => 1,
        Channel::Zrotation | Channel::Zposition => 2,
    }
}

/// Compose rotation channels (degrees) in file order: R = R_c1(θ1)·R_c2(θ2)·…
pub fn compose(order: &[Channel], degrees: &[f64]) -> UnitQuaternion<f64> {
    let mut q = UnitQuaternion::identity();
    for (c, a) in order.iter().zip(degrees) {
        q *= UnitQuaternion::from_axis_angle(&Unit::new_unchecked(c.axis()), a.to_radians());
    }
    q
}

/// Angles (degrees) in the given rotation-channel order that reproduce `q`, choosing among
/// the equivalent solutions (and 360° shifts) the one nearest `previous` (so curves stay
/// continuous and unwrapped clips stay unwrapped). Orders of three distinct axes are solved
/// in closed form; any other channel list (1, 2 or repeated axes) by Gauss–Newton from
/// `previous`.
pub fn decompose(q: &UnitQuaternion<f64>, order: &[Channel], previous: &[f64]) -> Vec<f64> {
    let mut angles = Vec::with_capacity(order.len());
    decompose_into(q, order, previous, &mut angles);
    angles
}

/// [`decompose`] into `angles` (cleared first; its storage reused: an export decomposes
/// every joint of every frame).
pub fn decompose_into(
    q: &UnitQuaternion<f64>,
    order: &[Channel],
    previous: &[f64],
    angles: &mut Vec<f64>,
) {
    angles.clear();
    let n = order.len();
    let distinct = n == 3 && {
        let (a, b, c) = (
            axis_index(order[0]),
            axis_index(order[1]),
            axis_index(order[2]),
        );
        a != b && b != c && a != c
    };
    if distinct {
        let (i, j, k) = (
            axis_index(order[0]),
            axis_index(order[1]),
            axis_index(order[2]),
        );
        // parity of the permutation (i, j, k): +1 for xyz, yzx, zxy
        let s = if (j + 3 - i) % 3 == 1 { 1.0 } else { -1.0 };
        let r = Rotation3::from(*q);
        let m = r.matrix();
        let b = (s * m[(i, k)]).clamp(-1.0, 1.0).asin();
        let mut a = (-s * m[(j, k)]).atan2(m[(k, k)]);
        if b.cos() < 1e-7 {
            // gimbal lock: only a ± c is defined; keep the previous first angle
            a = previous.first().copied().unwrap_or(0.0).to_radians();
        }
        let pi = std::f64::consts::PI;
        let axis = |c: Channel| Unit::new_unchecked(c.axis());
        // The last angle from the residual rotation, so that the three always compose to q.
        let last = |a: f64, b: f64| {
            let res = (UnitQuaternion::from_axis_angle(&axis(order[0]), a)
                * UnitQuaternion::from_axis_angle(&axis(order[1]), b))
            .inverse()
                * q;
            let v = Vector3::new(res.i, res.j, res.k).dot(&order[2].axis());
            2.0 * v.atan2(res.w)
        };
        let sols = [[a, b, last(a, b)], [a + pi, pi - b, last(a + pi, pi - b)]];
        let near = |x: f64, p: f64| x + 360.0 * ((p - x) / 360.0).round();
        let mut best: Option<(f64, [f64; 3])> = None;
        for sol in sols {
            let deg = sol.map(f64::to_degrees);
            let cand = [
                near(deg[0], previous.first().copied().unwrap_or(0.0)),
                near(deg[1], previous.get(1).copied().unwrap_or(0.0)),
                near(deg[2], previous.get(2).copied().unwrap_or(0.0)),
            ];
            let d: f64 = cand
                .iter()
                .zip(previous.iter().chain(std::iter::repeat(&0.0)))
                .map(|(x, p)| (x - p).powi(2))
                .sum();
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, cand));
            }
        }
        if let Some((_, best)) = best {
            angles.extend_from_slice(&best);
        }
        return;
    }
    // Generic: minimise the rotation error from the previous angles.
    let x = angles;
    x.extend((0..n).map(|i| previous.get(i).copied().unwrap_or(0.0)));
    for _ in 0..30 {
        let err = (compose(order, x).inverse() * q).scaled_axis();
        if err.norm() < 1e-13 {
            break;
        }
        // Jacobian of the body-frame error w.r.t. each angle (radians), numerically.
        let h: f64 = 1e-6;
        let mut jac = nalgebra::DMatrix::zeros(3, n);
        for i in 0..n {
            let mut xp = x.clone();
            xp[i] += h.to_degrees();
            let e2 = (compose(order, &xp).inverse() * q).scaled_axis();
            let col: Vector3<f64> = (e2 - err) / h;
            jac.set_column(i, &col);
        }
        let e = nalgebra::DVector::from_column_slice(err.as_slice());
        let Some(step) = jac.clone().svd(true, true).solve(&(-e), 1e-12).ok() else {
            break;
        };
        for i in 0..n {
            x[i] += step[i].to_degrees();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Channel::*;

    #[test]
    fn closed_form_round_trips_every_order() {
        let orders = [
            [Xrotation, Yrotation, Zrotation],
            [Xrotation, Zrotation, Yrotation],
            [Yrotation, Xrotation, Zrotation],
            [Yrotation, Zrotation, Xrotation],
            [Zrotation, Xrotation, Yrotation],
            [Zrotation, Yrotation, Xrotation],
        ];
        let mut seed = 1u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) * 340.0 - 170.0
        };
        for order in orders {
            for _ in 0..200 {
                let ang = [rnd(), rnd() * 0.5, rnd()];
                let q = compose(&order, &ang);
                let back = decompose(&q, &order, &ang);
                let q2 = compose(&order, &back);
                assert!(q.angle_to(&q2) < 1e-9, "{order:?} {ang:?} -> {back:?}");
                // nearest to previous: the same angles come back
                for (a, b) in ang.iter().zip(&back) {
                    assert!((a - b).abs() < 1e-6, "{order:?}: {ang:?} vs {back:?}");
                }
            }
        }
    }

    #[test]
    fn unwrapped_previous_angles_are_followed() {
        let order = [Zrotation, Yrotation, Xrotation];
        let q = compose(&order, &[10.0, 20.0, 30.0]);
        let back = decompose(&q, &order, &[370.0, 20.0, -330.0]);
        assert!(
            (back[0] - 370.0).abs() < 1e-6 && (back[2] + 330.0).abs() < 1e-6,
            "{back:?}"
        );
    }

    #[test]
    fn generic_solver_handles_two_channels() {
        let order = [Zrotation, Xrotation];
        let q = compose(&order, &[25.0, -40.0]);
        let back = decompose(&q, &order, &[20.0, -35.0]);
        assert!(
            (back[0] - 25.0).abs() < 1e-6 && (back[1] + 40.0).abs() < 1e-6,
            "{back:?}"
        );
    }
}
