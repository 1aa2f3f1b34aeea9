//! Balance and letting go (METHOD §12.4): when a hit has put the standing character out of
//! balance, the hand of god lets go and the figure falls under gravity and its contacts.
//!
//! A person standing still keeps the extrapolated centre of mass ξ = c + ċ/ω₀ (Hof,
//! Gazendam & Sinke 2005; ω₀ = √(g/l), l the COM height above the floor) inside the
//! support region. Walking is controlled falling (ξ leaves the stance foot every step),
//! so a hit is judged by what it changed: Δξ = ξ − ξ_ref against the reference at the same
//! time. Ankles and hips absorb |Δξ| up to about half a foot length; beyond it only a
//! step saves a person, and this controller does not step. So the character lets go when
//! |Δξ| stays above [`FallOptions::capture_margin_per_stature`] of its stature, or the
//! root spring pulls harder than [`FallOptions::spring_force_bw`] body weights, for
//! [`FallOptions::hold_s`], within [`FallOptions::after_hit_s`] of a hit; or, at any time
//! after a hit, when |Δξ| stays above [`FallOptions::toppled_margin_per_stature`] (a slow
//! topple, which a root spring softer than gravity's toppling rate lets happen seconds
//! later).
//!
//! The margins are lengths of the figure (a foot is ~15 % of a person's stature), so they
//! scale with it. As absolute lengths, the 10 cm and 30 cm they are on a 1.75 m adult were
//! a thousandth of a 90 m figure (a clip in centimetres read at `--scale 0.5`), which
//! every handball then knocked down ~0.1 s after it touched (the reflex's yielding alone
//! sags a figure by a share of its size), and the whole foot of a 0.7 m one.

use crate::skeleton::Model;
use nalgebra::Vector3;

/// When and how the character falls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FallOptions {
    /// Let go when out of balance (`--no-falls` clears it: the hand of god then holds the
    /// figure up whatever happens).
    pub allowed: bool,
    /// Largest recoverable change of the extrapolated COM, as a fraction of the figure's
    /// stature (about half a foot length: what ankle and hip strategies absorb without a
    /// step; 10 cm on a 1.75 m adult).
    pub capture_margin_per_stature: f64,
    /// Largest plausible pull of the root spring, in body weights (METHOD §12.4's
    /// F_max ≈ 0.5 m g: beyond it the hand of god would be visibly holding the figure up).
    pub spring_force_bw: f64,
    /// How long either limit must be exceeded before letting go, s (a brief spike while a
    /// ball is in contact is not a loss of balance).
    pub hold_s: f64,
    /// The feedforward fades out over this time after letting go, s (no jump in the
    /// joint torques).
    pub fade_s: f64,
    /// Stiffness of the protective pose, as a fraction of the joints' stiffness when the
    /// figure lets go: braced but yielding, so it folds onto the floor instead of falling
    /// like a plank.
    pub protective_stiffness: f64,
    /// A fall must start within this time of a ball's last contact with the character, s:
    /// a push topples a person within about half a second, while a drift from the mocap
    /// that builds up seconds after a light hit is the tracking's, not a loss of balance
    /// (random handballs otherwise let a kick and a salsa clip go 2–5 s after an arm hit).
    pub after_hit_s: f64,
    /// Beyond this change of the extrapolated COM the figure has toppled, however long
    /// after a hit, as a fraction of its stature (30 cm on a 1.75 m adult). Far above what
    /// the tracking drifts: over 160 random throws at the default gains no run that stayed
    /// up went past 0.13 m, while with the root spring at 0.3 Hz (`--root-hz 0.3`, below
    /// gravity's toppling rate) hit figures wandered off by a metre and ended on the
    /// floor, seconds after `after_hit_s`, still reported up.
    pub toppled_margin_per_stature: f64,
}

/// The stature the margins' defaults were measured at, m (their values in metres there:
/// [`FallOptions::capture_margin_per_stature`] 0.10, [`FallOptions::toppled_margin_per_stature`]
/// 0.30).
pub const REFERENCE_STATURE_M: f64 = 1.75;

impl Default for FallOptions {
    fn default() -> Self {
        FallOptions {
            allowed: true,
            capture_margin_per_stature: 0.10 / REFERENCE_STATURE_M,
            spring_force_bw: 0.5,
            hold_s: 0.05,
            fade_s: 0.2,
            protective_stiffness: 0.3,
            after_hit_s: 1.0,
            toppled_margin_per_stature: 0.30 / REFERENCE_STATURE_M,
        }
    }
}

impl FallOptions {
    /// Check the numbers (finite and positive; the stiffness fraction in (0, 1]).
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            (
                "capture margin (per stature)",
                self.capture_margin_per_stature,
            ),
            ("spring force limit (body weights)", self.spring_force_bw),
            ("fade time (s)", self.fade_s),
            ("time after a hit (s)", self.after_hit_s),
            (
                "toppled margin (per stature)",
                self.toppled_margin_per_stature,
            ),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("fall {name} must be positive, got {v}"));
            }
        }
        if !(self.hold_s.is_finite() && self.hold_s >= 0.0) {
            return Err(format!(
                "fall hold time must be non-negative, got {} s",
                self.hold_s
            ));
        }
        if !(self.protective_stiffness > 0.0 && self.protective_stiffness <= 1.0) {
            return Err(format!(
                "protective stiffness must be in (0, 1], got {}",
                self.protective_stiffness
            ));
        }
        Ok(())
    }

    /// The capture margin of a figure `stature_m` m tall, m.
    pub fn capture_margin_m(&self, stature_m: f64) -> f64 {
        self.capture_margin_per_stature * stature_m
    }

    /// The toppled margin of a figure `stature_m` m tall, m.
    pub fn toppled_margin_m(&self, stature_m: f64) -> f64 {
        self.toppled_margin_per_stature * stature_m
    }

    /// The fraction of the feedforward still applied `since` s after letting go.
    pub fn feedforward_fade(&self, since: f64) -> f64 {
        (1.0 - since / self.fade_s).clamp(0.0, 1.0)
    }
}

/// The unit vector against `gravity` (world up; +y without gravity).
pub fn up_direction(gravity: &Vector3<f64>) -> Vector3<f64> {
    let g = gravity.norm();
    if g > 0.0 { -gravity / g } else { Vector3::y() }
}

/// The horizontal extrapolated centre of mass ξ = c + ċ/ω₀ of bodies with positions and
/// velocities `body(b) = (x, v)` (m, m/s; world), over a floor at `floor_y` m, under
/// `gravity` (m/s²). Its vertical component (along gravity) is zero.
pub fn extrapolated_com(
    model: &Model,
    floor_y: f64,
    body: impl Fn(usize) -> (Vector3<f64>, Vector3<f64>),
) -> Vector3<f64> {
    let (mut c, mut cv, mut m) = (Vector3::zeros(), Vector3::zeros(), 0.0);
    for (b, bd) in model.bodies.iter().enumerate() {
        let (x, v) = body(b);
        c += x * bd.mass;
        cv += v * bd.mass;
        m += bd.mass;
    }
    let (c, cv) = (c / m, cv / m);
    let g = model.gravity.norm();
    let up = up_direction(&model.gravity);
    // l ≥ 5 cm: a figure lying on the floor has no pendulum to speak of
    let l = (c.dot(&up) - floor_y).max(0.05);
    let omega0 = (g.max(1e-9) / l).sqrt();
    let xi = c + cv / omega0;
    xi - up * xi.dot(&up)
}

/// Watches a standing run for a loss of balance.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Balance {
    /// Since when (s) a limit has been exceeded without a break.
    over_since: Option<f64>,
    /// When the character let go, s.
    pub fell_at: Option<f64>,
    /// Largest |Δξ| seen, m.
    pub peak_xcom_change_m: f64,
}

impl Balance {
    /// Observe the state at time `t` (s) of a figure `stature_m` m tall: its change of
    /// extrapolated COM from the reference's `xcom_change_m` (m), the root spring's pull
    /// `spring_force_bw` (body weights), and when a ball last touched the character,
    /// `last_hit` (s; `None`: never). True when the character has just lost its balance.
    pub fn observe(
        &mut self,
        opts: &FallOptions,
        t: f64,
        stature_m: f64,
        xcom_change_m: f64,
        spring_force_bw: f64,
        last_hit: Option<f64>,
    ) -> bool {
        self.peak_xcom_change_m = self.peak_xcom_change_m.max(xcom_change_m);
        if self.fell_at.is_some() {
            return false;
        }
        let hit_recently = last_hit.is_some_and(|th| t - th <= opts.after_hit_s);
        let over = (hit_recently
            && (xcom_change_m > opts.capture_margin_m(stature_m)
                || spring_force_bw > opts.spring_force_bw))
            || (last_hit.is_some() && xcom_change_m > opts.toppled_margin_m(stature_m));
        if !over {
            self.over_since = None;
            return false;
        }
        let since = *self.over_since.get_or_insert(t);
        if opts.allowed && t - since >= opts.hold_s - 1e-12 {
            self.fell_at = Some(t);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HIT: Option<f64> = Some(0.0);
    /// The stature the tests' figures have, m.
    const H: f64 = REFERENCE_STATURE_M;

    #[test]
    fn a_limit_must_hold_before_letting_go_and_a_break_restarts_the_clock() {
        let opts = FallOptions::default();
        let mut b = Balance::default();
        assert!(!b.observe(&opts, 0.00, H, 0.2, 0.0, HIT));
        assert!(!b.observe(&opts, 0.03, H, 0.2, 0.0, HIT));
        // back inside: the clock restarts
        assert!(!b.observe(&opts, 0.04, H, 0.05, 0.1, HIT));
        assert!(!b.observe(&opts, 0.05, H, 0.0, 0.9, HIT));
        assert!(!b.observe(&opts, 0.09, H, 0.0, 0.9, HIT));
        assert!(b.observe(&opts, 0.10, H, 0.0, 0.9, HIT));
        assert_eq!(b.fell_at, Some(0.10));
        // once fallen, never again
        assert!(!b.observe(&opts, 0.2, H, 1.0, 1.0, HIT));
        assert!((b.peak_xcom_change_m - 1.0).abs() < 1e-15);
    }

    #[test]
    fn with_falls_off_the_character_never_lets_go() {
        let opts = FallOptions {
            allowed: false,
            ..Default::default()
        };
        let mut b = Balance::default();
        for i in 0..100 {
            assert!(!b.observe(&opts, i as f64 * 0.01, H, 1.0, 2.0, HIT));
        }
        assert_eq!(b.fell_at, None);
    }

    #[test]
    fn only_a_recent_hit_can_knock_the_character_down() {
        // past the capture margin and the spring limit, short of the toppled margin
        let opts = FallOptions::default();
        let drift = 0.2;
        assert!(drift > opts.capture_margin_m(H) && drift < opts.toppled_margin_m(H));
        let mut never = Balance::default();
        let mut long_ago = Balance::default();
        for i in 0..100 {
            let t = 2.0 + i as f64 * 0.01;
            assert!(!never.observe(&opts, t, H, drift, 2.0, None));
            assert!(!long_ago.observe(&opts, t, H, drift, 2.0, Some(0.5)));
        }
        let mut recent = Balance::default();
        assert!(!recent.observe(&opts, 2.0, H, drift, 2.0, Some(1.9)));
        assert!(recent.observe(&opts, 2.05, H, drift, 2.0, Some(1.9)));
    }

    #[test]
    fn a_topple_long_after_a_hit_still_lets_go_but_never_without_one() {
        let opts = FallOptions::default();
        let far = opts.toppled_margin_m(H) + 0.05;
        let mut never = Balance::default();
        let mut long_ago = Balance::default();
        let mut fell = None;
        for i in 0..100 {
            let t = 5.0 + i as f64 * 0.01;
            assert!(!never.observe(&opts, t, H, far, 0.0, None));
            if long_ago.observe(&opts, t, H, far, 0.0, Some(0.5)) {
                fell = Some(t);
            }
        }
        // after holding past the margin for `hold_s`
        let t = fell.expect("a toppled figure lets go");
        assert!((t - 5.0 - opts.hold_s).abs() < 0.011, "let go at {t} s");
        assert_eq!(long_ago.fell_at, Some(t));
        // and a brief excursion does not
        let mut brief = Balance::default();
        assert!(!brief.observe(&opts, 5.0, H, far, 0.0, Some(0.5)));
        assert!(!brief.observe(&opts, 5.01, H, 0.0, 0.0, Some(0.5)));
        assert!(!brief.observe(&opts, 5.06, H, far, 0.0, Some(0.5)));
    }

    #[test]
    fn the_margins_scale_with_the_figure() {
        let opts = FallOptions::default();
        // the defaults as measured on an adult
        assert!((opts.capture_margin_m(1.75) - 0.10).abs() < 1e-15);
        assert!((opts.toppled_margin_m(1.75) - 0.30).abs() < 1e-15);
        // Δξ of 0.2 m shortly after a hit: an adult lets go, a figure ten times its size
        // (a clip read at ten times its units) has moved a tenth as far for its size
        let (mut adult, mut giant) = (Balance::default(), Balance::default());
        for i in 0..20 {
            let t = 1.0 + i as f64 * 0.01;
            adult.observe(&opts, t, 1.75, 0.2, 0.0, Some(0.9));
            giant.observe(&opts, t, 17.5, 0.2, 0.0, Some(0.9));
        }
        assert!(adult.fell_at.is_some());
        assert_eq!(giant.fell_at, None);
        // and a 0.7 m figure goes at 5 cm, which an adult absorbs
        let (mut adult, mut small) = (Balance::default(), Balance::default());
        for i in 0..20 {
            let t = 1.0 + i as f64 * 0.01;
            adult.observe(&opts, t, 1.75, 0.05, 0.0, Some(0.9));
            small.observe(&opts, t, 0.7, 0.05, 0.0, Some(0.9));
        }
        assert_eq!(adult.fell_at, None);
        assert!(small.fell_at.is_some());
    }

    #[test]
    fn fade_runs_from_one_to_zero() {
        let opts = FallOptions::default();
        assert_eq!(opts.feedforward_fade(0.0), 1.0);
        assert!((opts.feedforward_fade(0.1) - 0.5).abs() < 1e-12);
        assert_eq!(opts.feedforward_fade(0.5), 0.0);
    }
}
