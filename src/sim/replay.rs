//! Replaying the unperturbed path: a step the feedforward precompute has already taken.
//!
//! The feedforward is computed along the integrator's own unperturbed path, through the
//! very phases a simulation step runs (`sim::feedforward`), so a run that has not been
//! touched yet repeats that path bit for bit. The precompute keeps it (per step: the
//! state, the contact LCP's warm start, the bodies the floor touched and the contact
//! report), and [`Simulation::step`] copies a step from it instead of computing it again
//! while the step's inputs are provably those of the precompute: the same settings, state
//! and warm start to the last bit, no extra wrenches, no ball in the air by the step's
//! end, not fallen. A perturbed run thus costs only from its first throw on (a batch's
//! variations share one precompute), and its output is unchanged (tested against a run
//! that computes every step).

use crate::dynamics::state::{BodyState, State};
use crate::sim::balls::{ContactOptions, ContactReport, WarmStart};
use crate::sim::run::{SimOptions, Simulation};

/// The feedforward precompute's path: what each of its steps started from and produced.
#[derive(Clone, Debug, Default)]
pub struct UnperturbedPath {
    /// The state at step k, k = 0..=steps.
    states: Vec<State>,
    /// The contact LCP's warm start before step k, k = 0..=steps.
    warm_starts: Vec<Option<WarmStart>>,
    /// The bodies the floor touched in step k.
    touching: Vec<Vec<usize>>,
    /// The contact report of step k.
    reports: Vec<ContactReport>,
    /// The settings the path was taken with: a simulation whose settings were changed
    /// since computes its steps.
    settings: Option<(SimOptions, ContactOptions)>,
    /// The step the path starts at (its entries are from there on).
    first: usize,
}

impl UnperturbedPath {
    /// Start a path at step `first`, its state and warm start there, taken with
    /// `settings`.
    pub(super) fn start(
        &mut self,
        first: usize,
        state: &State,
        warm_start: Option<&WarmStart>,
        settings: (SimOptions, ContactOptions),
    ) {
        *self = UnperturbedPath {
            settings: Some(settings),
            first,
            ..Default::default()
        };
        self.states.push(state.clone());
        self.warm_starts.push(warm_start.cloned());
    }

    /// Append a step's outcome.
    pub(super) fn push(
        &mut self,
        state: &State,
        warm_start: Option<&WarmStart>,
        touching: &[usize],
        report: ContactReport,
    ) {
        self.states.push(state.clone());
        self.warm_starts.push(warm_start.cloned());
        self.touching.push(touching.to_vec());
        self.reports.push(report);
    }

    /// The precompute restarted at the last step appended (see
    /// [`Feedforward::restart_steps`](crate::sim::Feedforward::restart_steps)): that step
    /// starts from `state` and `warm_start` instead of where the one before ended. A run
    /// replaying the step before takes the restart as its outcome.
    pub(super) fn restart(&mut self, state: &State, warm_start: Option<&WarmStart>) {
        if let (Some(s), Some(w)) = (self.states.last_mut(), self.warm_starts.last_mut()) {
            s.clone_from(state);
            *w = warm_start.cloned();
        }
    }

    /// The unperturbed state at step k, if the path was taken with `settings` and reaches
    /// that far.
    pub(super) fn state_at(
        &self,
        k: usize,
        settings: (SimOptions, ContactOptions),
    ) -> Option<&State> {
        (self.settings == Some(settings))
            .then(|| self.states.get(k.checked_sub(self.first)?))
            .flatten()
    }

    /// Number of steps kept.
    pub fn steps(&self) -> usize {
        self.reports.len()
    }

    /// Where step k's entries are, if the path took that step.
    fn index(&self, k: usize) -> Option<usize> {
        k.checked_sub(self.first)
            .filter(|&i| i < self.reports.len())
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
        let Some(i) = path.index(self.k) else {
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
        self.contact_ws.set_touching(&path.touching[i]);
        let report = path.reports[i];
        self.record_step(report, None);
        self.replayed_steps += 1;
        true
    }
}
