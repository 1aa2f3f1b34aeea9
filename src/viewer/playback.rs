//! The viewer's timeline: a [`Simulation`] with its history, driven like a video player.
//!
//! Every simulated step's poses stay in the simulation's [`Record`](crate::sim::Record), so
//! scrubbing back shows recorded frames without simulating. A [`Snapshot`] of the full
//! simulation state is kept every [`Playback::snapshot_every`] steps; a throw added behind
//! the simulated frontier cuts the history back to the nearest snapshot before its launch
//! and the simulation is re-run lazily, a bounded number of steps per displayed frame
//! ([`Playback::catch_up`]), so the window stays responsive. No rendering types here.

use crate::Character;
use crate::motion::kinematics::BodyKinematics;
use crate::motion::reference::ReferenceScratch;
use crate::sim::balls::Ball;
use crate::sim::scenario::{BallSpec, Launch, Scenario};
use crate::sim::{BodyPose, SimError, SimOptions, Simulation, Snapshot};
use nalgebra::Vector3;

/// Seconds of simulated time between stored snapshots.
pub const SNAPSHOT_INTERVAL_S: f64 = 0.25;
/// Slowest playback rate (× real time).
pub const MIN_SPEED: f64 = 0.1;
/// Fastest playback rate (× real time).
pub const MAX_SPEED: f64 = 2.0;

/// A throw of the session: how it was written (for saving) and how it flies.
#[derive(Clone, Debug, PartialEq)]
pub struct Throw {
    /// The ball as a scenario entry.
    pub spec: BallSpec,
    /// The resolved launch (time s, origin m, velocity m/s, mass kg, radius m).
    pub launch: Launch,
}

/// A simulation with history and VCR controls: play/pause, step, scrub, speed, loop.
pub struct Playback<'c> {
    sim: Simulation<'c>,
    /// Every throw of the session in the order it was added (ball index = throw index).
    throws: Vec<Throw>,
    /// Snapshots sorted by step, the first at step 0.
    snapshots: Vec<Snapshot>,
    /// Steps between snapshots.
    snapshot_every: usize,
    /// Body poses at t = 0 (the reference's first pose).
    initial: Vec<BodyPose>,
    /// Displayed time, s (may run ahead of the frontier while it catches up).
    time: f64,
    /// Playing (true) or paused.
    pub playing: bool,
    /// Playback rate, × real time, in [`MIN_SPEED`, `MAX_SPEED`].
    speed: f64,
    /// Wrap to the start at the end of the clip.
    pub looping: bool,
    /// Most steps simulated per call to [`Playback::catch_up`].
    pub max_steps_per_frame: usize,
    /// Why the simulation stopped, if it did (shown in the HUD).
    error: Option<String>,
    scratch: ReferenceScratch,
    kin: Vec<BodyKinematics>,
}

impl<'c> Playback<'c> {
    /// A paused playback at t = 0 with the given pre-loaded throws (not simulated yet).
    pub fn new(
        character: &'c Character,
        opts: SimOptions,
        throws: Vec<Throw>,
    ) -> Result<Self, SimError> {
        let mut sim = Simulation::new(character, opts)?;
        for t in &throws {
            sim.throw(Ball::from_launch(&t.launch));
        }
        let initial = sim
            .state
            .bodies
            .iter()
            .map(|b| BodyPose { x: b.x, q: b.q })
            .collect();
        let snapshot_every = ((SNAPSHOT_INTERVAL_S / opts.step).round() as usize).max(1);
        let n = character.model.num_bodies();
        Ok(Playback {
            snapshots: vec![sim.snapshot()],
            sim,
            throws,
            snapshot_every,
            initial,
            time: 0.0,
            playing: false,
            speed: 1.0,
            looping: true,
            max_steps_per_frame: 64,
            error: None,
            scratch: ReferenceScratch::default(),
            kin: vec![BodyKinematics::default(); n],
        })
    }

    /// The simulation (its balls, record and settings).
    pub fn simulation(&self) -> &Simulation<'c> {
        &self.sim
    }

    /// The character being simulated.
    pub fn character(&self) -> &'c Character {
        self.sim.character
    }

    /// Step length h, s.
    pub fn step_length(&self) -> f64 {
        self.sim.opts.step
    }

    /// Number of steps in the clip.
    pub fn num_steps(&self) -> usize {
        self.sim.num_steps()
    }

    /// Duration of the clip, s.
    pub fn duration(&self) -> f64 {
        self.num_steps() as f64 * self.step_length()
    }

    /// Steps simulated so far (the frontier): poses exist for steps 0..=frontier.
    pub fn frontier(&self) -> usize {
        self.sim.k
    }

    /// Steps between stored snapshots.
    pub fn snapshot_every(&self) -> usize {
        self.snapshot_every
    }

    /// Number of stored snapshots.
    pub fn num_snapshots(&self) -> usize {
        self.snapshots.len()
    }

    /// The step the displayed time asks for, 0..=num_steps.
    pub fn wanted_step(&self) -> usize {
        ((self.time / self.step_length()).round().max(0.0) as usize).min(self.num_steps())
    }

    /// The step shown: the wanted step, or the frontier while the simulation catches up.
    pub fn shown_step(&self) -> usize {
        self.wanted_step().min(self.frontier())
    }

    /// Time of the shown step, s.
    pub fn shown_time(&self) -> f64 {
        self.shown_step() as f64 * self.step_length()
    }

    /// Playback rate, × real time.
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Set the playback rate, clamped to [`MIN_SPEED`, `MAX_SPEED`].
    pub fn set_speed(&mut self, speed: f64) {
        self.speed = if speed.is_finite() {
            speed.clamp(MIN_SPEED, MAX_SPEED)
        } else {
            1.0
        };
    }

    /// Why the simulation stopped, if it did.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The session's throws, in the order they were added.
    pub fn throws(&self) -> &[Throw] {
        &self.throws
    }

    /// The session's throws as a scenario file (`perturb --scenario` reads it).
    pub fn scenario(&self) -> Scenario {
        Scenario {
            balls: self.throws.iter().map(|t| t.spec.clone()).collect(),
        }
    }

    /// Body poses after `step` steps (step 0: the initial pose), if simulated.
    pub fn pose(&self, step: usize) -> Option<&[BodyPose]> {
        if step == 0 {
            Some(&self.initial)
        } else {
            self.sim.record.poses.get(step - 1).map(Vec::as_slice)
        }
    }

    /// Ball centres after `step` steps (`None`: not launched), one per throw.
    pub fn ball_positions(&self, step: usize) -> Vec<Option<Vector3<f64>>> {
        match step
            .checked_sub(1)
            .and_then(|i| self.sim.record.balls.get(i))
        {
            Some(b) => b.clone(),
            None => vec![None; self.throws.len()],
        }
    }

    /// Largest joint-angle deviation from the mocap after `step` steps: (degrees, body).
    pub fn max_error_deg(&self, step: usize) -> (f64, usize) {
        step.checked_sub(1)
            .and_then(|i| self.sim.record.max_error_deg.get(i).copied())
            .unwrap_or((0.0, 0))
    }

    /// The mocap reference's body poses at time `t` (s): the ghost.
    pub fn reference_pose(&mut self, t: f64, out: &mut Vec<BodyPose>) {
        let c = self.sim.character;
        c.reference
            .sample(&c.model, t, &mut self.scratch, &mut self.kin);
        out.clear();
        out.extend(self.kin.iter().map(|k| BodyPose { x: k.x, q: k.q }));
    }

    /// Advance the displayed time by `wall_dt` seconds of real time × speed when playing
    /// (wrapping or pausing at the end), then simulate toward it. Returns the steps
    /// simulated.
    pub fn advance(&mut self, wall_dt: f64) -> usize {
        if self.playing && wall_dt.is_finite() && wall_dt > 0.0 {
            // don't run ahead of a simulation that is catching up
            let behind =
                self.wanted_step() > self.frontier().saturating_add(self.max_steps_per_frame);
            if !behind {
                self.time += wall_dt * self.speed;
            }
            if self.time >= self.duration() {
                if self.looping && self.error.is_none() {
                    self.time = 0.0;
                } else {
                    self.time = self.duration();
                    self.playing = false;
                }
            }
        }
        self.catch_up(self.max_steps_per_frame)
    }

    /// Simulate at most `max_steps` steps toward the wanted step. Returns the steps done.
    /// A failed step stops the simulation and is kept in [`Playback::error`].
    pub fn catch_up(&mut self, max_steps: usize) -> usize {
        let mut done = 0;
        while done < max_steps && self.error.is_none() && self.frontier() < self.wanted_step() {
            if let Err(e) = self.sim.step(None) {
                self.error = Some(e.to_string());
                self.playing = false;
                break;
            }
            done += 1;
            if self.sim.k.is_multiple_of(self.snapshot_every) {
                self.snapshots.push(self.sim.snapshot());
            }
        }
        done
    }

    /// Simulate to the wanted step however many steps that takes.
    pub fn catch_up_fully(&mut self) {
        while self.frontier() < self.wanted_step() && self.error.is_none() {
            self.catch_up(usize::MAX);
        }
    }

    /// Toggle play/pause (playing from the end restarts).
    pub fn toggle_play(&mut self) {
        self.playing = !self.playing;
        if self.playing && self.wanted_step() >= self.num_steps() {
            self.time = 0.0;
        }
    }

    /// Show the time `t` (s), clamped to the clip; pauses nothing (scrubbing).
    pub fn seek(&mut self, t: f64) {
        self.time = if t.is_finite() {
            t.clamp(0.0, self.duration())
        } else {
            0.0
        };
    }

    /// Pause and show the next step.
    pub fn step_forward(&mut self) {
        self.playing = false;
        let s = (self.shown_step() + 1).min(self.num_steps());
        self.time = s as f64 * self.step_length();
    }

    /// Pause and show the previous step.
    pub fn step_back(&mut self) {
        self.playing = false;
        let s = self.shown_step().saturating_sub(1);
        self.time = s as f64 * self.step_length();
    }

    /// Back to t = 0 (the history is kept).
    pub fn restart(&mut self) {
        self.time = 0.0;
    }

    /// Add a throw. A launch behind the simulated frontier cuts the history back to the
    /// nearest snapshot at or before the launch step; the simulation then re-runs from
    /// there on the following calls to [`Playback::catch_up`].
    pub fn throw(&mut self, throw: Throw) {
        let h = self.step_length();
        let launch_step = (throw.launch.t / h).floor().max(0.0) as usize;
        if self.frontier() > launch_step {
            let keep = self
                .snapshots
                .iter()
                .rposition(|s| s.k <= launch_step)
                .unwrap_or(0);
            self.snapshots.truncate(keep + 1);
            self.sim.restore(&self.snapshots[keep]);
            self.error = None;
        }
        // the ball is unlaunched in every kept snapshot (all at or before its launch)
        let ball = Ball::from_launch(&throw.launch);
        for s in &mut self.snapshots {
            s.balls.push(ball.clone());
        }
        self.sim.throw(ball);
        self.throws.push(throw);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CharacterOptions;

    fn demo() -> Character {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mocap/demo_walk.bvh");
        Character::load(&path, &CharacterOptions::default()).expect("demo clip loads")
    }

    /// A ball launched at `t` from 2 m in front of the pelvis toward it.
    fn throw_at(c: &Character, t: f64) -> Throw {
        let mut kin = vec![BodyKinematics::default(); c.model.num_bodies()];
        c.reference
            .sample(&c.model, t, &mut ReferenceScratch::default(), &mut kin);
        let from = kin[0].x + Vector3::new(0.0, 0.2, 2.0);
        let velocity = Vector3::new(0.0, 0.0, -10.0);
        let spec = BallSpec::launched(t, from, velocity, 0.45, 0.095);
        let launch = spec.launch(&c.model, &c.reference).unwrap();
        Throw { spec, launch }
    }

    fn poses_of(p: &Playback, upto: usize) -> Vec<Vec<BodyPose>> {
        (0..=upto).map(|s| p.pose(s).unwrap().to_vec()).collect()
    }

    #[test]
    fn scrubbing_shows_recorded_frames_without_simulating() {
        let c = demo();
        let mut p = Playback::new(&c, SimOptions::default(), vec![]).unwrap();
        p.seek(1.0);
        p.catch_up_fully();
        let frontier = p.frontier();
        assert_eq!(frontier, p.wanted_step());
        let at_half = p.pose(120).unwrap().to_vec();
        p.seek(0.5);
        assert_eq!(p.catch_up(100), 0, "going back simulates nothing");
        assert_eq!(p.shown_step(), 120);
        assert_eq!(p.pose(p.shown_step()).unwrap(), at_half.as_slice());
        p.step_back();
        assert_eq!(p.shown_step(), 119);
        p.step_forward();
        p.step_forward();
        assert_eq!(p.shown_step(), 121);
        assert_eq!(p.frontier(), frontier, "history kept");
        // scrubbing ahead of the frontier simulates lazily, a bounded number of steps
        p.seek(2.0);
        assert_eq!(p.catch_up(10), 10);
        assert_eq!(p.shown_step(), frontier + 10);
        assert!(p.num_snapshots() >= 4);
    }

    #[test]
    fn playing_advances_time_by_speed_and_loops() {
        let c = demo();
        let mut p = Playback::new(&c, SimOptions::default(), vec![]).unwrap();
        p.set_speed(5.0);
        assert_eq!(p.speed(), MAX_SPEED);
        p.set_speed(0.5);
        p.toggle_play();
        p.advance(0.1);
        assert_eq!(p.shown_step(), 12); // 0.05 s at 240 Hz
        p.looping = false;
        p.seek(p.duration() - 0.001);
        p.advance(0.1);
        assert!(p.playing, "the clock waits while the simulation catches up");
        p.catch_up_fully();
        p.advance(0.1);
        assert!(!p.playing, "stops at the end");
        assert_eq!(p.shown_step(), p.num_steps());
        p.looping = true;
        p.toggle_play();
        assert_eq!(p.wanted_step(), 0, "play from the end restarts");
    }

    #[test]
    fn a_throw_in_the_past_resimulates_like_a_fresh_run() {
        let c = demo();
        let end = 1.6;
        // interactive: simulate to 1.6 s, then throw at 0.8 s (behind the frontier)
        let mut p = Playback::new(&c, SimOptions::default(), vec![]).unwrap();
        p.seek(end);
        p.catch_up_fully();
        let before = poses_of(&p, p.frontier());
        p.seek(0.8);
        let throw = throw_at(&c, p.shown_time());
        p.throw(throw.clone());
        assert!(
            p.frontier() <= 192,
            "history cut back to a snapshot before the launch"
        );
        assert!(p.frontier() > 0);
        assert_eq!(poses_of(&p, p.frontier())[..], before[..=p.frontier()]);
        p.seek(end);
        while p.frontier() < p.wanted_step() {
            assert!(p.catch_up(16) <= 16);
        }
        // fresh: the same throw pre-loaded from the start
        let mut q = Playback::new(&c, SimOptions::default(), vec![throw]).unwrap();
        q.seek(end);
        q.catch_up_fully();
        assert_eq!(p.frontier(), q.frontier());
        assert_eq!(poses_of(&p, p.frontier()), poses_of(&q, q.frontier()));
        let s = p.frontier();
        assert_eq!(p.ball_positions(s), q.ball_positions(s));
        assert!(p.ball_positions(s)[0].is_some());
        assert_ne!(
            poses_of(&p, s),
            before,
            "the ball changed the motion (it hit)"
        );
        assert_eq!(p.simulation().balls, q.simulation().balls);
        assert_eq!(p.scenario().balls.len(), 1);
    }

    #[test]
    fn saved_throws_read_back_as_the_same_launches() {
        let c = demo();
        let mut p = Playback::new(&c, SimOptions::default(), vec![]).unwrap();
        p.throw(throw_at(&c, 0.5));
        p.throw(throw_at(&c, 1.0 / 3.0));
        let text = p.scenario().to_toml();
        let back = Scenario::from_toml(&text, "saved").unwrap();
        assert_eq!(back, p.scenario());
        let mut launches = back.launches(&c.model, &c.reference, "saved").unwrap();
        // a click's launch carries no flight prediction (the window shows what it meets)
        for l in &mut launches {
            l.predicted_hit = None;
        }
        let original: Vec<Launch> = p
            .throws()
            .iter()
            .map(|t| Launch {
                predicted_hit: None,
                ..t.launch
            })
            .collect();
        assert_eq!(launches, original);
    }
}
