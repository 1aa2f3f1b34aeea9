//! C² cubic splines with analytic derivatives on uniform knots.
//!
//! Inverse dynamics needs accelerations, so the reference motion is a C² curve through
//! the (filtered) samples (METHOD §5). Many scalar channels share one knot vector so that
//! one segment lookup serves all of them: `eval` runs ~2 million times per clip.

/// The samples or knot spacing given to [`UniformCubicSpline::fit`] are unusable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SplineError {
    /// The knot spacing (frame time) is zero, negative or not finite.
    #[error("spline knot spacing dt must be finite and > 0 s, got {0}")]
    BadSpacing(f64),
    /// The start time is not finite, or the last knot time overflows.
    #[error("spline knot times must be finite, got start {t0} s with {n_knots} knots of {dt} s")]
    BadTimes {
        /// First knot time, s.
        t0: f64,
        /// Knot spacing, s.
        dt: f64,
        /// Number of knots.
        n_knots: usize,
    },
    /// `n_channels` is zero.
    #[error("a spline needs at least one channel, got n_channels = 0")]
    NoChannels,
    /// The sample count is not a multiple of the channel count.
    #[error("{len} samples cannot be split into rows of n_channels = {n_channels}")]
    LengthMismatch {
        /// Length of the sample slice.
        len: usize,
        /// Requested channel count.
        n_channels: usize,
    },
    /// No samples at all.
    #[error("a spline needs at least one knot, got no samples")]
    NoKnots,
    /// A sample is NaN or infinite.
    #[error("sample {knot} of channel {channel} is not finite ({value})")]
    NonFinite {
        /// Knot (frame) index.
        knot: usize,
        /// Channel index.
        channel: usize,
        /// The offending value.
        value: f64,
    },
    /// The samples are finite but a derivative overflows (dt tiny or values huge).
    #[error("spline derivatives overflow f64: dt = {dt} s is too small for the sample values")]
    Overflow {
        /// Knot spacing, s.
        dt: f64,
    },
}

/// Interpolating cubic spline on uniform knots `t0 + k·dt` for many scalar channels.
///
/// End conditions are *not-a-knot* (the third derivative is continuous at the second and
/// the second-to-last knot), which reproduces cubic polynomials exactly and is more
/// accurate at the ends than a natural spline. With 3 knots the curve is the parabola
/// through the points, with 2 the line, with 1 a constant.
///
/// Times are in seconds; values keep the samples' unit, the first derivative is in
/// unit/s and the second in unit/s².
#[derive(Debug, Clone)]
pub struct UniformCubicSpline {
    t0: f64,
    dt: f64,
    inv_dt: f64,
    t_end: f64,
    n_knots: usize,
    n_channels: usize,
    n_segments: usize,
    /// Per segment k a block of `4·n_channels` values: `a[..], b[..], c[..], d[..]`, each
    /// channels-contiguous (SIMD-friendly), for `s(u) = a + b u + c u² + d u³`,
    /// `u = t − t_k` in s.
    coeffs: Vec<f64>,
}

impl UniformCubicSpline {
    /// Fits the spline through `samples` at knot times `t0 + k·dt`.
    ///
    /// * `t0` — time of the first sample, s.
    /// * `dt` — knot spacing (frame time), s; finite and > 0.
    /// * `samples` — `n_knots` rows × `n_channels`, row-major: sample k of channel c is
    ///   at `k·n_channels + c`.
    ///
    /// O(n_knots · n_channels): the not-a-knot system is reduced to a constant
    /// tridiagonal one and solved by the Thomas algorithm for all channels at once.
    pub fn fit(t0: f64, dt: f64, n_channels: usize, samples: &[f64]) -> Result<Self, SplineError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(SplineError::BadSpacing(dt));
        }
        if n_channels == 0 {
            return Err(SplineError::NoChannels);
        }
        if samples.is_empty() {
            return Err(SplineError::NoKnots);
        }
        if !samples.len().is_multiple_of(n_channels) {
            return Err(SplineError::LengthMismatch {
                len: samples.len(),
                n_channels,
            });
        }
        let nc = n_channels;
        let n = samples.len() / nc;
        let t_end = t0 + dt * (n - 1) as f64;
        if !(t0.is_finite() && t_end.is_finite()) {
            return Err(SplineError::BadTimes { t0, dt, n_knots: n });
        }
        if let Some(i) = samples.iter().position(|v| !v.is_finite()) {
            return Err(SplineError::NonFinite {
                knot: i / nc,
                channel: i % nc,
                value: samples[i],
            });
        }

        let coeffs = if n == 1 {
            // Constant: a = y, b = c = d = 0.
            let mut c = vec![0.0; 4 * nc];
            c[..nc].copy_from_slice(samples);
            c
        } else {
            let m = scaled_second_derivatives(samples, n, nc);
            segment_coefficients(samples, &m, n, nc, dt)
        };
        if coeffs.iter().any(|v| !v.is_finite()) {
            return Err(SplineError::Overflow { dt });
        }
        Ok(Self {
            t0,
            dt,
            inv_dt: 1.0 / dt,
            t_end,
            n_knots: n,
            n_channels: nc,
            n_segments: (n - 1).max(1),
            coeffs,
        })
    }

    /// Number of scalar channels.
    pub fn n_channels(&self) -> usize {
        self.n_channels
    }

    /// Number of knots (samples per channel).
    pub fn n_knots(&self) -> usize {
        self.n_knots
    }

    /// Time of the first knot, s.
    pub fn t_start(&self) -> f64 {
        self.t0
    }

    /// Time of the last knot, s.
    pub fn t_end(&self) -> f64 {
        self.t_end
    }

    /// Value, first derivative (unit/s) and second derivative (unit/s²) of every
    /// channel at time `t` (s). `t` is clamped to `[t_start, t_end]`, so outside the
    /// range the end value and the end derivatives are returned; a NaN `t` gives NaN.
    /// Only the first `n_channels` entries of each output slice are written.
    /// Allocation-free.
    ///
    /// # Panics
    /// If an output slice is shorter than `n_channels` (a caller bug, not a data error).
    #[inline]
    pub fn eval(&self, t: f64, value: &mut [f64], d1: &mut [f64], d2: &mut [f64]) {
        let nc = self.n_channels;
        assert!(
            value.len() >= nc && d1.len() >= nc && d2.len() >= nc,
            "UniformCubicSpline::eval: output slices must hold n_channels = {nc} values"
        );
        let ([a, b, c, d], u) = self.segment(t);
        let (value, d1, d2) = (&mut value[..nc], &mut d1[..nc], &mut d2[..nc]);
        for i in 0..nc {
            let (ai, bi, ci, di) = (a[i], b[i], c[i], d[i]);
            value[i] = ai + u * (bi + u * (ci + u * di));
            d1[i] = bi + u * (2.0 * ci + u * (3.0 * di));
            d2[i] = 2.0 * ci + u * (6.0 * di);
        }
    }

    /// Values only (no derivatives) of every channel at time `t` (s), clamped like
    /// [`eval`](Self::eval) and bit for bit its `value`: for callers that need a pose,
    /// not its rates (aiming a ball, drawing a frame). Only the first `n_channels`
    /// entries of `value` are written. Allocation-free.
    ///
    /// # Panics
    /// If `value` is shorter than `n_channels` (a caller bug, not a data error).
    #[inline]
    pub fn eval_values(&self, t: f64, value: &mut [f64]) {
        let nc = self.n_channels;
        assert!(
            value.len() >= nc,
            "UniformCubicSpline::eval_values: the output slice must hold n_channels = {nc} values"
        );
        let ([a, b, c, d], u) = self.segment(t);
        for (i, v) in value[..nc].iter_mut().enumerate() {
            *v = a[i] + u * (b[i] + u * (c[i] + u * d[i]));
        }
    }

    /// Values of channels `first..first + N` at time `t` (s), bit for bit those of
    /// [`eval`](Self::eval).
    ///
    /// # Panics
    /// If the channels are out of range (a caller bug).
    #[inline]
    pub fn eval_channels<const N: usize>(&self, t: f64, first: usize) -> [f64; N] {
        let nc = self.n_channels;
        assert!(
            first + N <= nc,
            "UniformCubicSpline::eval_channels: channels out of range"
        );
        let ([a, b, c, d], u) = self.segment(t);
        std::array::from_fn(|k| {
            let i = first + k;
            a[i] + u * (b[i] + u * (c[i] + u * d[i]))
        })
    }

    /// The cubic coefficients of the segment holding `t` (per channel, the value, first
    /// derivative, half the second and a sixth of the third at the segment's start, as in
    /// `a + u (b + u (c + u d))`), and `u = t − t_seg` (s).
    #[inline]
    fn segment(&self, t: f64) -> ([&[f64]; 4], f64) {
        let nc = self.n_channels;
        let (seg, u) = self.locate(t);
        let block = &self.coeffs[seg * 4 * nc..(seg + 1) * 4 * nc];
        let (a, rest) = block.split_at(nc);
        let (b, rest) = rest.split_at(nc);
        let (c, d) = rest.split_at(nc);
        ([a, b, c, d], u)
    }

    /// Segment index and local time `u = t − t_seg` (s) for a clamped `t`.
    #[inline]
    fn locate(&self, t: f64) -> (usize, f64) {
        // t0 <= t_end and both finite (checked in fit), so clamp cannot panic; NaN stays
        // NaN, and `NaN as usize` is 0.
        let t = t.clamp(self.t0, self.t_end);
        let seg = (((t - self.t0) * self.inv_dt) as usize).min(self.n_segments - 1);
        (seg, t - (self.t0 + seg as f64 * self.dt))
    }
}

/// Second differences `y[k-1] − 2 y[k] + y[k+1]` of all channels at interior knot k.
#[inline]
fn second_difference(samples: &[f64], nc: usize, k: usize, c: usize) -> f64 {
    samples[(k - 1) * nc + c] - 2.0 * samples[k * nc + c] + samples[(k + 1) * nc + c]
}

/// Knot second derivatives times dt², `m_k = dt²·s''(t_k)`, for `n >= 2` knots,
/// row-major like the samples.
///
/// Uniform knots give `m[k-1] + 4 m[k] + m[k+1] = 6 Δ²y[k]` at interior knots. The
/// not-a-knot condition `m[0] − 2 m[1] + m[2] = 0` turns the first row into
/// `6 m[1] = 6 Δ²y[1]` (likewise at the other end), so `m[1]` and `m[n-2]` are known and the
/// rest is a constant, diagonally dominant tridiagonal system (Thomas, no pivoting).
fn scaled_second_derivatives(samples: &[f64], n: usize, nc: usize) -> Vec<f64> {
    let mut m = vec![0.0; n * nc];
    match n {
        // Line: zero curvature.
        2 => {}
        // Parabola through the three points.
        3 => {
            for c in 0..nc {
                let m1 = second_difference(samples, nc, 1, c);
                for k in 0..3 {
                    m[k * nc + c] = m1;
                }
            }
        }
        _ => {
            for c in 0..nc {
                m[nc + c] = second_difference(samples, nc, 1, c);
                m[(n - 2) * nc + c] = second_difference(samples, nc, n - 2, c);
            }
            // Unknowns m[2..=n-3]: forward elimination; row k stores d'_k in m.
            let mut cprime = vec![0.0; n];
            for k in 2..n.saturating_sub(2) {
                let w = 1.0 / (4.0 - cprime[k - 1]);
                cprime[k] = w;
                for c in 0..nc {
                    let mut rhs = 6.0 * second_difference(samples, nc, k, c);
                    // Known neighbours move to the right-hand side.
                    if k == n - 3 {
                        rhs -= m[(n - 2) * nc + c];
                    }
                    // Row 2 has m[1] known; later rows have d'_{k-1} (in m[k-1]).
                    m[k * nc + c] = (rhs - m[(k - 1) * nc + c]) * w;
                }
            }
            // Back substitution: m[k] = d'_k − c'_k m[k+1] (m[n-3] = d'_{n-3}).
            for k in (2..n.saturating_sub(3)).rev() {
                for c in 0..nc {
                    m[k * nc + c] -= cprime[k] * m[(k + 1) * nc + c];
                }
            }
            // Not-a-knot: curvature linear across the first and last two segments.
            for c in 0..nc {
                m[c] = 2.0 * m[nc + c] - m[2 * nc + c];
                m[(n - 1) * nc + c] = 2.0 * m[(n - 2) * nc + c] - m[(n - 3) * nc + c];
            }
        }
    }
    m
}

/// Power-basis coefficients of every segment from samples and scaled knot curvatures.
fn segment_coefficients(samples: &[f64], m: &[f64], n: usize, nc: usize, dt: f64) -> Vec<f64> {
    let inv_h = 1.0 / dt;
    let inv_h2 = inv_h * inv_h;
    let mut coeffs = vec![0.0; (n - 1) * 4 * nc];
    for (k, block) in coeffs.chunks_exact_mut(4 * nc).enumerate() {
        let (a, rest) = block.split_at_mut(nc);
        let (b, rest) = rest.split_at_mut(nc);
        let (cc, d) = rest.split_at_mut(nc);
        for c in 0..nc {
            let (y0, y1) = (samples[k * nc + c], samples[(k + 1) * nc + c]);
            let (m0, m1) = (m[k * nc + c], m[(k + 1) * nc + c]);
            a[c] = y0;
            b[c] = (y1 - y0) * inv_h - (2.0 * m0 + m1) * inv_h / 6.0;
            cc[c] = 0.5 * m0 * inv_h2;
            d[c] = (m1 - m0) * inv_h2 * inv_h / 6.0;
        }
    }
    coeffs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::motion::filter::lowpass_filtfilt;
    use std::f64::consts::PI;

    /// Deterministic pseudo-random numbers in [-1, 1) (no rand dependency).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
    }

    fn eval_vec(s: &UniformCubicSpline, t: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let nc = s.n_channels();
        let (mut v, mut d1, mut d2) = (vec![0.0; nc], vec![0.0; nc], vec![0.0; nc]);
        s.eval(t, &mut v, &mut d1, &mut d2);
        (v, d1, d2)
    }

    fn close(a: f64, b: f64, rel: f64, scale: f64) -> bool {
        (a - b).abs() <= rel * scale.max(1.0)
    }

    /// Polynomials of degree <= `deg` per channel, with value/d1/d2.
    fn poly_channels(deg: usize, nc: usize, rng: &mut Lcg) -> Vec<[f64; 4]> {
        (0..nc)
            .map(|_| {
                let mut p = [rng.next(), rng.next(), rng.next(), rng.next()];
                for v in p.iter_mut().skip(deg + 1) {
                    *v = 0.0;
                }
                p
            })
            .collect()
    }
    fn poly(p: &[f64; 4], t: f64) -> [f64; 3] {
        [
            p[0] + t * (p[1] + t * (p[2] + t * p[3])),
            p[1] + t * (2.0 * p[2] + t * 3.0 * p[3]),
            2.0 * p[2] + 6.0 * p[3] * t,
        ]
    }

    fn check_reproduces(deg: usize, n: usize) {
        let mut rng = Lcg(n as u64 * 31 + deg as u64);
        let nc = 5;
        let polys = poly_channels(deg, nc, &mut rng);
        let (t0, dt) = (-0.7, 0.13);
        let samples: Vec<f64> = (0..n)
            .flat_map(|k| polys.iter().map(move |p| poly(p, t0 + k as f64 * dt)[0]))
            .collect();
        let s = UniformCubicSpline::fit(t0, dt, nc, &samples).unwrap();
        let span = s.t_end() - s.t_start();
        for j in 0..=97 {
            let t = t0 + span * j as f64 / 97.0;
            let (v, d1, d2) = eval_vec(&s, t);
            for (c, p) in polys.iter().enumerate() {
                let e = poly(p, t);
                let scale = e.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
                assert!(close(v[c], e[0], 1e-9, scale), "deg {deg} n {n} value");
                assert!(close(d1[c], e[1], 1e-9, scale), "deg {deg} n {n} d1");
                assert!(close(d2[c], e[2], 1e-9, scale), "deg {deg} n {n} d2");
            }
        }
    }

    #[test]
    fn reproduces_cubics_exactly() {
        for n in [4, 5, 6, 7, 10, 51] {
            check_reproduces(3, n);
        }
        // Fewer knots: parabola through 3 points, line through 2.
        check_reproduces(2, 3);
        check_reproduces(1, 2);
    }

    #[test]
    fn interpolates_knots_and_is_c2() {
        let mut rng = Lcg(7);
        let (nc, n, t0, dt) = (3, 40, 1.5, 1.0 / 30.0);
        let samples: Vec<f64> = (0..n * nc).map(|_| rng.next()).collect();
        let s = UniformCubicSpline::fit(t0, dt, nc, &samples).unwrap();
        for k in 0..n {
            let tk = t0 + k as f64 * dt;
            let (v, _, _) = eval_vec(&s, tk);
            for c in 0..nc {
                assert!((v[c] - samples[k * nc + c]).abs() < 1e-12);
            }
        }
        // Left/right limits at interior knots: the segment polynomials evaluated at the
        // shared knot must agree in value, d1 and d2.
        for k in 1..n - 1 {
            let left = &s.coeffs[(k - 1) * 4 * nc..k * 4 * nc];
            let right = &s.coeffs[k * 4 * nc..(k + 1) * 4 * nc];
            for c in 0..nc {
                let (a, b, cc, d) = (left[c], left[nc + c], left[2 * nc + c], left[3 * nc + c]);
                let lv = a + dt * (b + dt * (cc + dt * d));
                let ld1 = b + dt * (2.0 * cc + 3.0 * dt * d);
                let ld2 = 2.0 * cc + 6.0 * d * dt;
                let (rv, rd1, rd2) = (right[c], right[nc + c], 2.0 * right[2 * nc + c]);
                assert!((lv - rv).abs() < 1e-12);
                assert!((ld1 - rd1).abs() < 1e-9 * rd1.abs().max(1.0));
                assert!(
                    (ld2 - rd2).abs() < 1e-9 * rd2.abs().max(1.0),
                    "d2 jump at {k}"
                );
            }
        }
        // Not-a-knot: the third derivative does not jump at knots 1 and n-2.
        for k in [1, n - 2] {
            for c in 0..nc {
                let dl = s.coeffs[(k - 1) * 4 * nc + 3 * nc + c];
                let dr = s.coeffs[k * 4 * nc + 3 * nc + c];
                assert!((dl - dr).abs() < 1e-9 * dl.abs().max(1.0));
            }
        }
    }

    #[test]
    fn clamps_outside_range() {
        let samples = [0.0, 1.0, 4.0, 2.0, -1.0, 3.0];
        let s = UniformCubicSpline::fit(2.0, 0.5, 1, &samples).unwrap();
        assert_eq!(s.t_end(), 4.5);
        assert_eq!(eval_vec(&s, -10.0), eval_vec(&s, 2.0));
        assert_eq!(eval_vec(&s, 1e300), eval_vec(&s, 4.5));
        assert_eq!(eval_vec(&s, f64::NEG_INFINITY), eval_vec(&s, 2.0));
        assert!((eval_vec(&s, 4.5).0[0] - 3.0).abs() < 1e-12);
        assert!(eval_vec(&s, f64::NAN).0[0].is_nan());
    }

    #[test]
    fn single_knot_is_constant() {
        let s = UniformCubicSpline::fit(0.3, 0.01, 2, &[1.5, -2.0]).unwrap();
        assert_eq!((s.t_start(), s.t_end()), (0.3, 0.3));
        for t in [0.0, 0.3, 5.0] {
            let (v, d1, d2) = eval_vec(&s, t);
            assert_eq!(v, vec![1.5, -2.0]);
            assert_eq!((d1, d2), (vec![0.0; 2], vec![0.0; 2]));
        }
    }

    #[test]
    fn rejects_bad_input() {
        use SplineError::*;
        let fit = |t0, dt, nc, s: &[f64]| UniformCubicSpline::fit(t0, dt, nc, s).err();
        assert_eq!(fit(0.0, 0.0, 1, &[1.0]), Some(BadSpacing(0.0)));
        assert!(matches!(fit(0.0, f64::NAN, 1, &[1.0]), Some(BadSpacing(_))));
        assert_eq!(fit(0.0, 0.1, 0, &[1.0]), Some(NoChannels));
        assert_eq!(fit(0.0, 0.1, 2, &[]), Some(NoKnots));
        assert!(matches!(
            fit(0.0, 0.1, 2, &[1.0; 3]),
            Some(LengthMismatch { .. })
        ));
        assert!(matches!(
            fit(0.0, 0.1, 2, &[1.0, 2.0, 3.0, f64::INFINITY]),
            Some(NonFinite {
                knot: 1,
                channel: 1,
                ..
            })
        ));
        assert!(matches!(
            fit(f64::NAN, 0.1, 1, &[1.0]),
            Some(BadTimes { .. })
        ));
        assert!(matches!(
            fit(0.0, 1e308, 1, &[1.0; 3]),
            Some(BadTimes { .. })
        ));
        assert!(matches!(
            fit(0.0, 1e-200, 1, &[0.0, 1.0, 0.0, 1.0]),
            Some(Overflow { .. })
        ));
        let msg = UniformCubicSpline::fit(0.0, -1.0, 1, &[1.0])
            .unwrap_err()
            .to_string();
        assert!(msg.contains("dt") && msg.contains("-1"), "{msg}");
    }

    /// Analytic trajectory below the cutoff: filter (8 Hz) + spline must give the
    /// acceleration to < 1 % of its peak, at 30 Hz and at 120 Hz sampling.
    #[test]
    fn filtered_spline_acceleration_accuracy() {
        let (w1, w2) = (2.0 * PI * 1.3, 2.0 * PI * 2.1);
        let x = |t: f64| 0.7 + 0.3 * (w1 * t).sin() + 0.1 * (w2 * t + 0.4).sin();
        let acc = |t: f64| -0.3 * w1 * w1 * (w1 * t).sin() - 0.1 * w2 * w2 * (w2 * t + 0.4).sin();
        let (duration, edge) = (4.0, 0.25);
        for fs in [30.0, 120.0] {
            let n = (duration * fs) as usize + 1;
            let dt = 1.0 / fs;
            let raw: Vec<f64> = (0..n).map(|k| x(k as f64 * dt)).collect();
            let filtered = lowpass_filtfilt(&raw, fs, 8.0);
            let s = UniformCubicSpline::fit(0.0, dt, 1, &filtered).unwrap();
            // The same spline on the unfiltered samples separates spline and filter error.
            let s_raw = UniformCubicSpline::fit(0.0, dt, 1, &raw).unwrap();

            // Dense evaluation: 20 points per frame (knots included).
            let m = (n - 1) * 20;
            let (mut peak, mut sq, mut sq_edge, mut n_edge) = (0.0_f64, 0.0, 0.0, 0usize);
            let (mut max_in, mut t_max_in, mut max_edge, mut max_raw_in) =
                (0.0_f64, 0.0, 0.0_f64, 0.0_f64);
            for j in 0..=m {
                let t = duration * j as f64 / m as f64;
                let a = acc(t);
                let e = (eval_vec(&s, t).2[0] - a).abs();
                peak = peak.max(a.abs());
                sq += e * e;
                if t < edge || t > duration - edge {
                    max_edge = max_edge.max(e);
                    sq_edge += e * e;
                    n_edge += 1;
                } else {
                    if e > max_in {
                        (max_in, t_max_in) = (e, t);
                    }
                    max_raw_in = max_raw_in.max((eval_vec(&s_raw, t).2[0] - a).abs());
                }
            }
            let rms = (sq / (m + 1) as f64).sqrt();
            let rms_edge = (sq_edge / n_edge as f64).sqrt();
            let pct = |v: f64| 100.0 * v / peak;
            eprintln!(
                "fs {fs:5.1} Hz, peak acc {peak:.3}: interior max err {:.3} % (at t = {t_max_in:.3} s; \
                 spline alone {:.3} %), whole-clip rms {:.3} %, first/last {edge} s: max {:.2} %, rms {:.2} %",
                pct(max_in),
                pct(max_raw_in),
                pct(rms),
                pct(max_edge),
                pct(rms_edge)
            );
            assert!(max_in < 0.01 * peak, "fs {fs}: interior max error {max_in}");
            assert!(rms < 0.01 * peak, "fs {fs}: rms error {rms}");
        }
    }
}
