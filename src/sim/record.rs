//! What a run recorded: per step the poses, the tracking and constraint errors, the
//! root's offset, the balls and the contacts (filled after every step), and the recorded
//! run resampled at the clip's frame times for export.

use crate::dynamics::state::rotation_angle;
use crate::motion::reference::ReferenceScratch;
use crate::sim::balls::ContactReport;
use crate::sim::ground::{PLANTED_LOAD_SHARE, foot_slip, loaded_foot_slip};
use crate::sim::root::RootMode;
use crate::sim::run::Simulation;
use crate::sim::{BallTrack, BodyPose, Trajectory};
use nalgebra::Vector3;

/// Per-step record of a run.
#[derive(Clone, Debug, Default)]
pub struct Record {
    /// Step end times, s.
    pub times: Vec<f64>,
    /// Body poses at each step end; empty before the run's start
    /// ([`Feedforward::first_step`](crate::sim::Feedforward::first_step)), where the run
    /// is the reference ([`Simulation::trajectory`] samples it there), and, in a run that
    /// [keeps only its frames' poses](Simulation::keep_frame_poses_only), at the steps no
    /// frame reads (the latest step's is always there).
    pub poses: Vec<Vec<BodyPose>>,
    /// Per step: RMS over joints of the joint-angle error vs the reference, degrees.
    pub rms_error_deg: Vec<f64>,
    /// Per step: largest joint-angle error and its body, degrees.
    pub max_error_deg: Vec<(f64, usize)>,
    /// Per step: largest joint separation, m.
    pub constraint_error_m: Vec<f64>,
    /// Per step: distance of the root's COM from its reference position, m.
    pub root_offset_m: Vec<f64>,
    /// Per step: angle between the root's orientation and its reference, degrees.
    pub root_tilt_deg: Vec<f64>,
    /// Per step: every ball's centre (m), `None` before launch.
    pub balls: Vec<Vec<Option<Vector3<f64>>>>,
    /// Per step: the contact phase's report.
    pub contacts: Vec<ContactReport>,
    /// Per step: the character's bodies that received a contact impulse (floor or ball),
    /// each once, in increasing order.
    pub contact_bodies: Vec<Vec<usize>>,
    /// Per step: the deepest any capsule end lies below the floor beyond where the
    /// reference puts it, m (spring-held root; empty otherwise).
    pub ground_penetration_m: Vec<f64>,
    /// Per step: the horizontal offset from the reference (m) of each capsule end the
    /// reference supports that is down (spring-held root; empty otherwise). See
    /// [`Record::foot_slip_m`] and [`Ground::measure`](crate::sim::ground::Ground::measure).
    pub support_offsets: Vec<Vec<(usize, [f64; 2])>>,
    /// Per step, per entry of `support_offsets`: the share of the body weight (0–1) the
    /// point's body carries in the reference's support split of the step. See
    /// [`Record::loaded_foot_slip_m`].
    pub support_loads: Vec<Vec<f64>>,
}

impl Record {
    /// Largest horizontal drift of a foot while the reference holds it planted and the foot
    /// is down, m.
    pub fn foot_slip_m(&self) -> f64 {
        foot_slip(&self.support_offsets)
    }

    /// [`foot_slip_m`](Self::foot_slip_m) of the feet the reference puts at least
    /// [`PLANTED_LOAD_SHARE`] of the body weight on (weight-bearing feet, not a toe that
    /// touches the floor), each measured from when it became loaded, m.
    pub fn loaded_foot_slip_m(&self) -> f64 {
        loaded_foot_slip(
            &self.support_offsets,
            &self.support_loads,
            PLANTED_LOAD_SHARE,
        )
    }

    /// Deepest ground penetration of the run, m.
    pub fn max_ground_penetration_m(&self) -> f64 {
        self.ground_penetration_m
            .iter()
            .copied()
            .fold(0.0, f64::max)
    }

    /// The largest joint-angle error of the run: (step index, degrees, body).
    pub fn peak_error(&self) -> (usize, f64, usize) {
        self.max_error_deg
            .iter()
            .enumerate()
            .fold(
                (0, 0.0, 0),
                |acc, (k, x)| if x.0 > acc.1 { (k, x.0, x.1) } else { acc },
            )
    }

    /// Cut the record to its first `k` steps.
    pub(super) fn truncate(&mut self, k: usize) {
        let r = self;
        r.times.truncate(k);
        r.poses.truncate(k);
        r.rms_error_deg.truncate(k);
        r.max_error_deg.truncate(k);
        r.constraint_error_m.truncate(k);
        r.root_offset_m.truncate(k);
        r.root_tilt_deg.truncate(k);
        r.balls.truncate(k);
        r.contacts.truncate(k);
        r.contact_bodies.truncate(k);
        r.ground_penetration_m.truncate(k);
        r.support_offsets.truncate(k);
        r.support_loads.truncate(k);
    }
}

impl Simulation<'_> {
    /// Joint-angle errors vs the reference at the state's time (kinematics in self.kin),
    /// and the rest of the state's record; `separation` is its largest joint separation
    /// (m) when the step measured it already.
    pub(super) fn record_state(&mut self, separation: Option<f64>) {
        let model = &self.character.model;
        let (mut sq, mut cnt, mut worst) = (0.0, 0usize, (0.0f64, 0usize));
        for (b, body) in model.bodies.iter().enumerate().skip(1) {
            let Some(a) = body.parent else { continue };
            let sim_rel = self.state.bodies[a].q.inverse() * self.state.bodies[b].q;
            let err = rotation_angle(&(self.targets.q_rel[b].inverse() * sim_rel)).to_degrees();
            sq += err * err;
            cnt += 1;
            if err > worst.0 {
                worst = (err, b);
            }
        }
        self.record.times.push(self.time());
        // the previous step's pose goes if no frame reads it (see `keep_frame_poses_only`);
        // the latest is always kept, so a record cut short still ends on its pose
        if let Some(read) = &self.frame_poses
            && let Some(prev) = self.k.checked_sub(1).filter(|&i| i > 0)
            && !read.get(prev).copied().unwrap_or(true)
            && let Some(p) = self.record.poses.get_mut(prev - 1)
        {
            *p = Vec::new();
        }
        self.record.poses.push(
            self.state
                .bodies
                .iter()
                .map(|s| BodyPose { x: s.x, q: s.q })
                .collect(),
        );
        self.record.rms_error_deg.push(if cnt > 0 {
            (sq / cnt as f64).sqrt()
        } else {
            0.0
        });
        self.record.max_error_deg.push(worst);
        // a computed step's post-stabilisation measured it (the same function, to the
        // bit); a replayed step's is measured here
        let separation = separation.unwrap_or_else(|| self.state.max_joint_separation(model));
        self.record.constraint_error_m.push(separation);
        // self.kin holds the reference at the state's time (see prepare_step)
        let (root, reference) = (&self.state.bodies[0], &self.kin[0]);
        self.record
            .root_offset_m
            .push((root.x - reference.x).norm());
        self.record
            .root_tilt_deg
            .push(rotation_angle(&(reference.q.inverse() * root.q)).to_degrees());
        self.record
            .balls
            .push(self.balls.iter().map(|b| b.active.then_some(b.x)).collect());
        if let Some(g) = &self.ground {
            let let_go = self.protective.is_some();
            let support = self
                .k
                .checked_sub(1)
                .filter(|_| !let_go)
                .and_then(|k| self.feedforward.support.get(k))
                .map_or(&[][..], |v| v);
            let mut offsets = Vec::with_capacity(support.len());
            let deepest = g.measure(&self.state, &self.kin, support, let_go, &mut offsets);
            // the root spring's target follows the planted feet once a ball has moved them
            if let RootMode::Spring(tuning) = &self.opts.root
                && !let_go
                && self.touched_by_a_ball()
            {
                self.feet_shift
                    .update(tuning, &offsets, support, self.opts.step);
            }
            let mut loads = Vec::with_capacity(offsets.len());
            g.support_loads(support, &offsets, self.opts.step, &mut loads);
            self.record.ground_penetration_m.push(deepest);
            self.record.support_offsets.push(offsets);
            self.record.support_loads.push(loads);
        }
    }

    /// Record the first `steps` steps as the reference itself (a run started later, see
    /// [`Simulation::new_from`]): no errors, no balls, no contacts, and no poses (empty:
    /// [`Simulation::trajectory`] samples the reference there, at the frames' times,
    /// instead of every step's end here).
    pub(super) fn record_reference_steps(&mut self, steps: usize) {
        let h = self.opts.step;
        let r = &mut self.record;
        for k in 0..steps {
            let t = (k + 1) as f64 * h;
            r.times.push(t);
            r.poses.push(Vec::new());
            r.rms_error_deg.push(0.0);
            r.max_error_deg.push((0.0, 0));
            r.constraint_error_m.push(0.0);
            r.root_offset_m.push(0.0);
            r.root_tilt_deg.push(0.0);
            r.balls.push(Vec::new());
            r.contacts.push(ContactReport::default());
            r.contact_bodies.push(Vec::new());
            if self.ground.is_some() {
                r.ground_penetration_m.push(0.0);
                r.support_offsets.push(Vec::new());
                r.support_loads.push(Vec::new());
            }
        }
    }

    /// Keep in the record only the step poses [`trajectory`](Self::trajectory) reads (the
    /// two steps around each frame time, and the latest), not every step's: a 30 fps clip
    /// at the default 1/240 s step needs 2 of every 8. The record's other poses are then
    /// empty. The exported trajectory is the same to the bit; what is saved is memory
    /// the run would touch for the first time (0.95 kB a step on the CMU figure; a page's
    /// first touch costs 2–5 µs on the 2-core test machine). Runs whose every step is
    /// looked at (the viewer) keep the default.
    pub fn keep_frame_poses_only(&mut self) {
        let last = self.num_steps();
        let mut read = vec![false; last + 1];
        for (_, i, _) in frame_steps(
            self.frame_count(),
            self.character.clip.frame_time,
            self.opts.step,
            last,
        ) {
            read[i] = true;
            read[(i + 1).min(last)] = true;
        }
        self.frame_poses = Some(read);
    }

    /// The clip's frames the trajectory has (frame 0 = the initial state).
    fn frame_count(&self) -> usize {
        self.character.clip.num_frames() - self.character.model.figure.first_frame
    }

    /// The recorded run resampled at the clip's frame times (frame 0 = the initial
    /// state), for export.
    pub fn trajectory(&self) -> Trajectory {
        let model = &self.character.model;
        let dt = self.character.clip.frame_time;
        let frames = self.frame_count();
        let h = self.opts.step;
        // the reference's poses only (`sample_pose`: bit for bit a full sample's x and q)
        let mut scratch = ReferenceScratch::default();
        let mut reference_pose = |t: f64| -> Vec<BodyPose> {
            let mut pose = vec![BodyPose::default(); model.num_bodies()];
            self.character
                .reference
                .sample_pose(model, t, &mut scratch, &mut pose);
            pose
        };
        let initial = reference_pose(0.0);
        // A run started later (`Feedforward::first_step`) recorded no poses before its
        // start: there it is the reference, sampled at the frames' own times, and at the
        // start the reference's state it started from.
        let first = self.start_step;
        let start = if first > 0 {
            reference_pose(first as f64 * h)
        } else {
            Vec::new()
        };
        let pose_at = |i: usize| {
            if i == 0 {
                &initial
            } else if i == first {
                &start
            } else {
                &self.record.poses[(i - 1).min(self.record.poses.len().saturating_sub(1))]
            }
        };
        let last = self.record.poses.len();
        let poses = frame_steps(frames, dt, h, last)
            .map(|(f, i, a)| {
                if i < first {
                    return reference_pose(f as f64 * dt);
                }
                let (p0, p1) = (pose_at(i), pose_at((i + 1).min(last)));
                p0.iter()
                    .zip(p1)
                    .map(|(x0, x1)| BodyPose {
                        x: x0.x * (1.0 - a) + x1.x * a,
                        q: x0.q.slerp(&x1.q, a),
                    })
                    .collect()
            })
            .collect();
        let balls = self
            .balls
            .iter()
            .enumerate()
            .map(|(i, b)| BallTrack {
                radius: b.params.radius,
                positions: (0..frames)
                    .map(|f| {
                        let s = (f as f64 * dt / h).round() as usize;
                        if s == 0 {
                            None
                        } else {
                            self.record
                                .balls
                                .get(s - 1)
                                .and_then(|v| v.get(i).copied().flatten())
                        }
                    })
                    .collect(),
            })
            .collect();
        Trajectory {
            frame_time: dt,
            poses,
            balls,
        }
    }
}

/// For each of `frames` frames `dt` s apart: (frame, the step count i at or before its
/// time, the fraction a of the next step past it), with `h` s steps and at most `last`
/// steps: the poses after i and i + 1 steps (at most `last`) interpolate the frame.
fn frame_steps(
    frames: usize,
    dt: f64,
    h: f64,
    last: usize,
) -> impl Iterator<Item = (usize, usize, f64)> {
    (0..frames).map(move |f| {
        let s = (f as f64 * dt / h).min(last as f64);
        let i = s.floor() as usize;
        (f, i, s - i as f64)
    })
}
