//! Keyboard and mouse: which key does what, the throw settings, and turning a click
//! into a ball launched along the view ray.

use super::playback::{Playback, Throw};
use crate::sim::scenario::BallSpec;
use kiss3d::prelude::Key;
use nalgebra::Vector3;

/// The controls, one line each, for `--help`, the README and the HUD's help page.
pub const CONTROLS: &str = "\
right click      throw a ball through the clicked pixel (Shift+left click too)
left drag        orbit the camera; wheel: zoom; middle drag: pan
Space            play / pause
Right / Left     pause and step one simulation step forward / back (also . and ,)
Up / Down        scrub 0.25 s forward / back
Home / End       go to the start / the end of the clip
[ / ]            playback speed down / up (0.1x .. 2x)
L                loop on / off
R                restart from 0 s (the simulated history is kept)
G                mocap ghost on / off
+ / -            throw speed up / down (2 m/s steps)
M                cycle the ball mass (0.15, 0.45, 1, 3 kg)
S                save the session's throws as a scenario file (perturb --scenario)
H                show / hide the help
Esc              quit";

/// Ball masses M cycles through, kg.
pub const MASSES_KG: [f64; 4] = [0.15, 0.45, 1.0, 3.0];

/// How the next interactive throw flies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThrowSettings {
    /// Launch speed, m/s.
    pub speed: f64,
    /// Ball mass, kg.
    pub mass: f64,
    /// Ball radius, m.
    pub radius: f64,
    /// Distance from the eye to the launch point along the view ray, m.
    pub start_offset: f64,
}

impl Default for ThrowSettings {
    fn default() -> Self {
        ThrowSettings {
            speed: 12.0,
            mass: 0.45,
            radius: crate::sim::scenario::DEFAULT_RADIUS,
            start_offset: 0.3,
        }
    }
}

impl ThrowSettings {
    /// The ball leaving `eye` (m) along the unit direction `dir` at time `t` (s).
    pub fn throw_along(&self, t: f64, eye: &Vector3<f64>, dir: &Vector3<f64>) -> Option<Throw> {
        let dir = dir.try_normalize(1e-9)?;
        let from = eye + dir * self.start_offset;
        let spec = BallSpec::launched(t, from, dir * self.speed, self.mass, self.radius);
        let launch = crate::sim::scenario::Launch {
            t,
            origin: from,
            velocity: dir * self.speed,
            mass: self.mass,
            radius: self.radius,
            aimed_at: None,
            // a click throws along the eye ray: what it meets is seen in the window
            predicted_hit: None,
        };
        Some(Throw { spec, launch })
    }
}

/// What a key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Play / pause.
    TogglePlay,
    /// One step forward (pauses).
    StepForward,
    /// One step back (pauses).
    StepBack,
    /// Scrub forward 0.25 s.
    ScrubForward,
    /// Scrub back 0.25 s.
    ScrubBack,
    /// Go to 0 s.
    Start,
    /// Go to the end.
    End,
    /// Slower playback.
    SlowDown,
    /// Faster playback.
    SpeedUp,
    /// Loop on/off.
    ToggleLoop,
    /// Back to 0 s and play.
    Restart,
    /// Ghost on/off.
    ToggleGhost,
    /// Faster throws.
    ThrowFaster,
    /// Slower throws.
    ThrowSlower,
    /// Next ball mass.
    CycleMass,
    /// Save the throws as a scenario.
    SaveScenario,
    /// Help on/off.
    ToggleHelp,
}

/// The command bound to a key, if any.
pub fn command_for(key: Key) -> Option<Command> {
    use Command::*;
    Some(match key {
        Key::Space => TogglePlay,
        Key::Right | Key::Period => StepForward,
        Key::Left | Key::Comma => StepBack,
        Key::Up => ScrubForward,
        Key::Down => ScrubBack,
        Key::Home => Start,
        Key::End => End,
        Key::LBracket => SlowDown,
        Key::RBracket => SpeedUp,
        Key::L => ToggleLoop,
        Key::R => Restart,
        Key::G => ToggleGhost,
        Key::Equals | Key::Add => ThrowFaster,
        Key::Minus | Key::Subtract => ThrowSlower,
        Key::M => CycleMass,
        Key::S => SaveScenario,
        Key::H => ToggleHelp,
        _ => return None,
    })
}

/// Speeds `[` / `]` step through, × real time.
const SPEEDS: [f64; 7] = [0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0];

/// The next playback speed up (`up`) or down from `speed`.
pub fn next_speed(speed: f64, up: bool) -> f64 {
    if up {
        SPEEDS
            .iter()
            .copied()
            .find(|s| *s > speed + 1e-9)
            .unwrap_or(SPEEDS[SPEEDS.len() - 1])
    } else {
        SPEEDS
            .iter()
            .rev()
            .copied()
            .find(|s| *s < speed - 1e-9)
            .unwrap_or(SPEEDS[0])
    }
}

/// Apply a playback or throw-settings command. Returns true when it was one of those
/// (ghost, help and saving belong to the window loop).
pub fn apply(cmd: Command, playback: &mut Playback, throw: &mut ThrowSettings) -> bool {
    use Command::*;
    let t = playback.shown_time();
    match cmd {
        TogglePlay => playback.toggle_play(),
        StepForward => playback.step_forward(),
        StepBack => playback.step_back(),
        ScrubForward => playback.seek(t + 0.25),
        ScrubBack => playback.seek(t - 0.25),
        Start => playback.seek(0.0),
        End => playback.seek(playback.duration()),
        SlowDown => playback.set_speed(next_speed(playback.speed(), false)),
        SpeedUp => playback.set_speed(next_speed(playback.speed(), true)),
        ToggleLoop => playback.looping = !playback.looping,
        Restart => {
            playback.restart();
            playback.playing = true;
        }
        ThrowFaster => throw.speed = (throw.speed + 2.0).min(60.0),
        ThrowSlower => throw.speed = (throw.speed - 2.0).max(2.0),
        CycleMass => {
            let i = MASSES_KG
                .iter()
                .position(|m| (m - throw.mass).abs() < 1e-9)
                .map_or(0, |i| (i + 1) % MASSES_KG.len());
            throw.mass = MASSES_KG[i];
        }
        ToggleGhost | SaveScenario | ToggleHelp => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_steps_stay_in_range() {
        assert_eq!(next_speed(1.0, true), 1.5);
        assert_eq!(next_speed(2.0, true), 2.0);
        assert_eq!(next_speed(1.0, false), 0.75);
        assert_eq!(next_speed(0.1, false), 0.1);
        assert_eq!(next_speed(0.3, false), 0.25);
    }

    #[test]
    fn a_throw_starts_in_front_of_the_eye_along_the_ray() {
        let s = ThrowSettings::default();
        let eye = Vector3::new(1.0, 2.0, 3.0);
        let th = s
            .throw_along(0.5, &eye, &Vector3::new(0.0, 0.0, -2.0))
            .unwrap();
        assert_eq!(th.launch.origin, Vector3::new(1.0, 2.0, 2.7));
        assert_eq!(th.launch.velocity, Vector3::new(0.0, 0.0, -12.0));
        assert_eq!(th.spec.velocity, Some([0.0, 0.0, -12.0]));
        assert!(th.spec.validate().is_ok());
        assert!(s.throw_along(0.5, &eye, &Vector3::zeros()).is_none());
    }
}
