//! Replaying the unperturbed path: a step the feedforward precompute has already taken.
//!
//! The feedforward is computed along the integrator's own unperturbed path, through the
//! very phases a simulation step runs (`sim::feedforward`), so a run that has not been
//! touched yet repeats that path bit for bit. The precompute keeps it (per step: the
//! state, the contact LCP's warm start, the bodies the floor touched and the contact
//! report; only in the stretches its runs will replay, when the caller knows them:
//! [`Precompute::replay_windows`](super::Precompute::replay_windows)), and
//! [`Simulation::step`] copies a step from it instead of computing it again
//! while the step's inputs are provably those of the precompute: the same settings, state
//! and warm start to the last bit, no extra wrenches, no ball in the air by the step's
//! end, not fallen. A perturbed run thus costs only from its first throw on (a batch's
//! variations share one precompute), and its output is unchanged (tested against a run
//! that computes every step).

use crate::dynamics::state::{BodyState, State};
use crate::sim::balls::{ContactOptions, ContactReport, WarmStart};
use crate::sim::run::{SimOptions, Simulation};
use nalgebra::Vector3;
use std::ops::Range;

/// The feedforward precompute's path: what each of its steps started from and produced,
/// kept for the steps a run may replay, and the reflex joints' feedback along it.
///
/// A state is 1.8 kB on the CMU skeleton, and fresh memory is dear (a first touch of a
/// page costs 2–5 µs on this project's VMs): kept for every step, the path cost the
/// precompute 1.4 µs a step (6 %). A run replays only from its start to its first
/// ball's launch, so a caller that knows its runs keeps those stretches alone
/// ([`Precompute::replay_windows`](super::Precompute::replay_windows)); a step outside
/// them is computed, with the same result.
#[derive(Clone, Debug, Default)]
pub struct UnperturbedPath {
    /// The kept stretches, merged and sorted: the steps k in `steps` may be replayed, and
    /// the states k ∈ steps.start..=steps.end are kept, from `states[state_at]` on, the
    /// steps' outcomes from `touching[step_at]` / `reports[step_at]` on.
    segments: Vec<Segment>,
    /// The kept states, segment by segment.
    states: Vec<State>,
    /// The contact LCP's warm start before each kept state's step.
    warm_starts: Vec<Option<WarmStart>>,
    /// The bodies the floor touched in each kept step.
    touching: Vec<Vec<usize>>,
    /// The contact report of each kept step.
    reports: Vec<ContactReport>,
    /// Per step k (from `first`), per reflex joint in turn: its full-gain feedback at the
    /// path's state k + 1 with the step's targets and stiffness (N·m, world), which the
    /// reflex delay holds on to (`Simulation::hold_unperturbed_path`).
    reflex_feedback: Vec<Vector3<f64>>,
    /// Reflex joints per step in `reflex_feedback`.
    reflex_joints: usize,
    /// The settings the path was taken with: a simulation whose settings were changed
    /// since computes its steps.
    settings: Option<(SimOptions, ContactOptions)>,
    /// The step the path starts at.
    first: usize,
    /// The step whose outcome the next [`UnperturbedPath::push`] gives.
    next: usize,
}

/// A stretch of kept steps (see [`UnperturbedPath::segments`]).
#[derive(Clone, Debug)]
struct Segment {
    steps: Range<usize>,
    state_at: usize,
    step_at: usize,
}

impl Segment {
    fn keeps_state(&self, k: usize) -> bool {
        (self.steps.start..=self.steps.end).contains(&k)
    }
}

impl UnperturbedPath {
    /// Start a path at step `first` of a clip of `steps` steps, its state and warm start
    /// there, taken with `settings`, keeping the steps in `keep` for replay (every step
    /// with `None`).
    pub(super) fn start(
        &mut self,
        first: usize,
        steps: usize,
        keep: Option<&[Range<usize>]>,
        state: &State,
        warm_start: Option<&WarmStart>,
        settings: (SimOptions, ContactOptions),
    ) {
        let all = first..steps;
        let mut wanted: Vec<Range<usize>> = keep
            .unwrap_or(std::slice::from_ref(&all))
            .iter()
            .map(|r| r.start.max(first)..r.end.min(steps))
            .filter(|r| !r.is_empty())
            .collect();
        wanted.sort_by_key(|r| r.start);
        // merged where they share a state
        let mut segments: Vec<Segment> = Vec::with_capacity(wanted.len());
        for r in wanted {
            match segments.last_mut() {
                Some(s) if r.start <= s.steps.end => s.steps.end = s.steps.end.max(r.end),
                _ => segments.push(Segment {
                    steps: r,
                    state_at: 0,
                    step_at: 0,
                }),
            }
        }
        let (mut states, mut outcomes) = (0, 0);
        for s in segments.iter_mut() {
            s.state_at = states;
            s.step_at = outcomes;
            states += s.steps.len() + 1;
            outcomes += s.steps.len();
        }
        *self = UnperturbedPath {
            segments,
            states: Vec::with_capacity(states),
            warm_starts: Vec::with_capacity(states),
            touching: Vec::with_capacity(outcomes),
            reports: Vec::with_capacity(outcomes),
            settings: Some(settings),
            first,
            next: first,
            ..Default::default()
        };
        if self.keeps_state(first) {
            self.states.push(state.clone());
            self.warm_starts.push(warm_start.cloned());
        }
    }

    /// Whether the state at step k is kept.
    fn keeps_state(&self, k: usize) -> bool {
        self.segments.iter().any(|s| s.keeps_state(k))
    }

    /// Append the outcome of the next step: the state it ended in, the warm start after
    /// it, the bodies the floor touched and its contact report.
    pub(super) fn push(
        &mut self,
        state: &State,
        warm_start: Option<&WarmStart>,
        touching: &[usize],
        report: ContactReport,
    ) {
        let k = self.next;
        self.next += 1;
        if self.segments.iter().any(|s| s.steps.contains(&k)) {
            self.touching.push(touching.to_vec());
            self.reports.push(report);
        }
        if self.keeps_state(k + 1) {
            self.states.push(state.clone());
            self.warm_starts.push(warm_start.cloned());
        }
    }

    /// The precompute restarted at the next step (see
    /// [`Feedforward::restart_steps`](crate::sim::Feedforward::restart_steps)): that step
    /// starts from `state` and `warm_start` instead of where the one before ended. A run
    /// replaying the step before takes the restart as its outcome.
    pub(super) fn restart(&mut self, state: &State, warm_start: Option<&WarmStart>) {
        if !self.keeps_state(self.next) {
            return;
        }
        if let (Some(s), Some(w)) = (self.states.last_mut(), self.warm_starts.last_mut()) {
            s.clone_from(state);
            *w = warm_start.cloned();
        }
    }

    /// Append the reflex joints' full-gain feedback at the state the last step pushed
    /// ended in (or a restart replaced), for that step (see
    /// [`UnperturbedPath::reflex_feedback_at`]).
    pub(super) fn push_reflex_feedback(
        &mut self,
        feedback: impl ExactSizeIterator<Item = Vector3<f64>>,
    ) {
        self.reflex_joints = feedback.len();
        self.reflex_feedback.extend(feedback);
    }

    /// Per reflex joint, its full-gain feedback at the unperturbed state k + 1 with the
    /// targets and stiffness of step k (N·m), if the path was taken with `settings` and
    /// reaches that far.
    pub(super) fn reflex_feedback_at(
        &self,
        k: usize,
        settings: (SimOptions, ContactOptions),
    ) -> Option<&[Vector3<f64>]> {
        if self.settings != Some(settings) {
            return None;
        }
        let n = self.reflex_joints;
        let i = k.checked_sub(self.first)? * n;
        self.reflex_feedback.get(i..i + n)
    }

    /// Where step k's entries are, if the path kept it: the index of its state (its
    /// outcome's is the next) and of its touching and report.
    fn index(&self, k: usize) -> Option<(usize, usize)> {
        let s = self.segments.iter().find(|s| s.steps.contains(&k))?;
        let i = k - s.steps.start;
        // (kept only if the precompute took the step)
        (s.step_at + i < self.reports.len()).then_some((s.state_at + i, s.step_at + i))
    }
}

/// Bit-for-bit equality of two states (`==` would take −0.0 for 0.0).
fn same_bits(a: &State, b: &State) -> bool {
    let bits = |s: &BodyState| {
        let (x, q, v, w) = (s.x, s.q.coords, s.v, s.w);
        [
            x.x, x.y, x.z, q.x, q.y, q.z, q.w, v.x, v.y, v.z, w.x, w.y, w.z,
        ]
        .map(f64::to_bits)
    };
    a.t.to_bits() == b.t.to_bits()
        && a.bodies.len() == b.bodies.len()
        && a.bodies
            .iter()
            .zip(&b.bodies)
            .all(|(s, t)| bits(s) == bits(t))
}

impl Simulation<'_> {
    /// Take step k from the unperturbed path if its inputs are the precompute's (see the
    /// module documentation); false if the step must be computed.
    pub(super) fn replay_step(&mut self) -> bool {
        let path = &self.feedforward.path;
        let h = self.opts.step;
        let t = self.time();
        let Some((i, j)) = path.index(self.k) else {
            return false;
        };
        if !self.replay_unperturbed
            || self.balance.fell_at.is_some()
            || self.protective.is_some()
            || self.feet_shift.offset != nalgebra::Vector3::zeros()
            || path.settings != Some((self.opts, self.contact))
            // a ball launched by the step's end enters its contact phase
            || self.balls.iter().any(|b| b.active || b.launch_t < t + h)
            || path.warm_starts[i].as_ref() != self.contact_ws.warm_start()
            || !same_bits(&path.states[i], &self.state)
        {
            return false;
        }
        // the reference and joint targets at t + h, as the computed step leaves them
        self.prepare_step();
        let path = &self.feedforward.path;
        self.state.clone_from(&path.states[i + 1]);
        self.contact_ws
            .set_warm_start(path.warm_starts[i + 1].clone());
        self.contact_ws.set_touching(&path.touching[j]);
        let report = path.reports[j];
        self.record_step(report, None);
        self.replayed_steps += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Range;

    /// A path over steps 5..40 keeping `keep`, each state's time its step and each
    /// report's contact count its step, with a restart at step 20.
    fn path_keeping(keep: Option<&[Range<usize>]>) -> UnperturbedPath {
        let state = |k: usize| State {
            bodies: vec![BodyState::default(); 2],
            t: k as f64,
        };
        let settings = (SimOptions::default(), ContactOptions::default());
        let mut path = UnperturbedPath::default();
        path.start(5, 40, keep, &state(5), None, settings);
        for k in 5..40 {
            if k == 20 {
                path.restart(&state(1000 + k), None);
            }
            let report = ContactReport {
                contacts: k,
                ..Default::default()
            };
            path.push(&state(k + 1), None, &[k], report);
            path.push_reflex_feedback([Vector3::new(k as f64, 0.0, 0.0)].into_iter());
        }
        path
    }

    /// Step k's entries, if kept: the times of its start and end states, its report's
    /// and touching's marks.
    fn entries(path: &UnperturbedPath, k: usize) -> Option<(f64, f64, usize, usize)> {
        let (i, j) = path.index(k)?;
        Some((
            path.states[i].t,
            path.states[i + 1].t,
            path.reports[j].contacts,
            path.touching[j][0],
        ))
    }

    #[test]
    fn kept_stretches_index_their_own_steps() {
        let all = path_keeping(None);
        // overlapping, sharing a state, apart, past the clip and before the path
        let keep = [12..15, 8..10, 10..11, 13..22, 30..33, 38..90, 0..6];
        let some = path_keeping(Some(&keep));
        let none = path_keeping(Some(&[]));
        let kept = |k: usize| keep.iter().any(|r| r.contains(&k));
        let settings = (SimOptions::default(), ContactOptions::default());
        for k in 0..45 {
            let expected = (5..40).contains(&k).then(|| {
                // the restart replaced the state at step 20
                let t = |k: usize| if k == 20 { 1020.0 } else { k as f64 };
                (t(k), t(k + 1), k, k)
            });
            assert_eq!(entries(&all, k), expected, "all kept, step {k}");
            let in_window = expected.filter(|_| kept(k));
            assert_eq!(entries(&some, k), in_window, "some kept, step {k}");
            assert_eq!(entries(&none, k), None, "none kept, step {k}");
            // the reflex feedback is kept for every step, whatever the states kept
            let held = some.reflex_feedback_at(k, settings).map(|f| f[0].x);
            assert_eq!(held, (5..40).contains(&k).then_some(k as f64), "step {k}");
        }
        // only the kept states are stored: those at the start and end of a kept step
        let states = (5..=40)
            .filter(|&k| (5..40).any(|s| kept(s) && (k == s || k == s + 1)))
            .count();
        assert_eq!(states, 24);
        assert_eq!(some.states.len(), states);
        assert_eq!(all.states.len(), 36);
        assert!(none.states.is_empty());
    }
}
