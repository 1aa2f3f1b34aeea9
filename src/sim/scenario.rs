//! Throw scenarios: the balls thrown at a character, as TOML files (`[[ball]]` tables),
//! as `--ball` flags, and resolved into launches (origin, velocity, launch time).
//!
//! A ball is given either by its **target** (body name or role, arrival time `t`, `speed`,
//! optional launch point `from`) or by its **launch** (`from` + `velocity`, launched at `t`):
//!
//! ```toml
//! [[ball]]
//! t = 1.2                       # s, arrival time at the target
//! target = "right_forearm"      # body name or role
//! speed = 12.0                  # m/s
//! from = [0.0, 1.5, 3.0]        # m, launch point (optional)
//! mass = 0.45                   # kg
//! radius = 0.095                # m
//!
//! [[ball]]
//! t = 2.0                       # s, launch time
//! from = [0.0, 1.5, 3.0]        # m
//! velocity = [0.0, 0.0, -12.0]  # m/s
//! ```
//!
//! Targets are checked against a model only when the scenario is resolved
//! ([`Scenario::launches`]), so the same file can be used with several clips.

use super::aim;
use super::support::ClipFloor;
use crate::motion::kinematics::BodyKinematics;
use crate::motion::reference::{Reference, ReferenceScratch};
use crate::skeleton::{Model, Role};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

/// Default ball mass, kg (a football).
pub const DEFAULT_MASS: f64 = 0.45;
/// Default ball radius, m.
pub const DEFAULT_RADIUS: f64 = 0.095;
/// Default ball speed when a target is given, m/s.
pub const DEFAULT_SPEED: f64 = 12.0;
/// Horizontal distance of the default launch point in front of the target, m.
pub const DEFAULT_DISTANCE: f64 = 3.0;

/// The keys a ball accepts (TOML tables and `--ball` flags).
pub const BALL_KEYS: [&str; 7] = ["t", "target", "speed", "from", "velocity", "mass", "radius"];

fn default_mass() -> f64 {
    DEFAULT_MASS
}

fn default_radius() -> f64 {
    DEFAULT_RADIUS
}

/// One thrown ball, as written in a scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BallSpec {
    /// s: arrival time at the target, or launch time when `velocity` is given.
    pub t: f64,
    /// Body name or role aimed at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Launch speed, m/s (targeted balls; default [`DEFAULT_SPEED`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// Launch point, m, world frame (Y up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<[f64; 3]>,
    /// Launch velocity, m/s (with `from`: the ball is launched at `t` from `from`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<[f64; 3]>,
    /// Mass, kg.
    #[serde(default = "default_mass")]
    pub mass: f64,
    /// Radius, m.
    #[serde(default = "default_radius")]
    pub radius: f64,
}

/// A set of throws (a scenario file holds `[[ball]]` tables).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The balls, in file order.
    #[serde(default, rename = "ball")]
    pub balls: Vec<BallSpec>,
}

/// A ball resolved against a model: where and when it leaves, and how fast.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Launch {
    /// Launch time, s.
    pub t: f64,
    /// Launch point (ball centre), m, world frame.
    pub origin: Vector3<f64>,
    /// Launch velocity, m/s.
    pub velocity: Vector3<f64>,
    /// Mass, kg.
    pub mass: f64,
    /// Radius, m.
    pub radius: f64,
    /// The body a targeted ball was aimed at (`None` for a launched ball).
    pub aimed_at: Option<usize>,
    /// The body the ball's free flight first meets on the reference motion (the one it
    /// will hit unless an earlier ball changed the figure's pose); `None`: a predicted miss.
    pub predicted_hit: Option<usize>,
}

impl Launch {
    /// A warning when a targeted ball is predicted to meet another body than its target
    /// (or none): which body it will hit instead.
    pub fn aim_warning(&self, model: &Model) -> Option<String> {
        let aimed = self.aimed_at?;
        if self.predicted_hit == Some(aimed) {
            return None;
        }
        let name = |b: usize| model.bodies[b].name.as_str();
        Some(match self.predicted_hit {
            Some(b) => format!(
                "no approach around the figure reaches `{}` unobstructed at the arrival \
                 time: the ball will hit `{}` first",
                name(aimed),
                name(b)
            ),
            None => format!(
                "the ball aimed at `{}` is predicted to miss it",
                name(aimed)
            ),
        })
    }
}

/// What is wrong with a scenario, a `--ball` flag or a ball's target.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// A scenario file does not parse or holds an invalid ball.
    #[error("scenario {file}: {message}")]
    File {
        /// The file (as given by the caller).
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A `--ball` flag is malformed.
    #[error("--ball `{arg}`: {message}")]
    Flag {
        /// The flag's value.
        arg: String,
        /// What is wrong.
        message: String,
    },
    /// A ball cannot be resolved against the model (unknown target, launch before 0 s).
    #[error("{origin}: {message}")]
    Resolve {
        /// Which ball (`scenario F, ball 2` or `--ball …`).
        origin: String,
        /// What is wrong.
        message: String,
    },
}

fn finite3(v: &[f64; 3]) -> bool {
    v.iter().all(|x| x.is_finite())
}

fn fmt3(v: &[f64; 3]) -> String {
    format!("[{}, {}, {}]", v[0], v[1], v[2])
}

impl BallSpec {
    /// A ball launched from `from` with `velocity` at time `t` (what the viewer records).
    pub fn launched(
        t: f64,
        from: Vector3<f64>,
        velocity: Vector3<f64>,
        mass: f64,
        radius: f64,
    ) -> Self {
        BallSpec {
            t,
            target: None,
            speed: None,
            from: Some([from.x, from.y, from.z]),
            velocity: Some([velocity.x, velocity.y, velocity.z]),
            mass,
            radius,
        }
    }

    /// A ball with nothing given yet (`t` NaN, the default mass and radius): what a parser
    /// fills in key by key before [`BallSpec::validate`].
    pub fn unset() -> Self {
        BallSpec {
            t: f64::NAN,
            target: None,
            speed: None,
            from: None,
            velocity: None,
            mass: DEFAULT_MASS,
            radius: DEFAULT_RADIUS,
        }
    }

    /// Check the numbers and that the ball is either targeted or launched.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.t.is_finite() && self.t >= 0.0) {
            return Err(format!("`t` must be a time ≥ 0 s, got {}", self.t));
        }
        if !(self.mass.is_finite() && self.mass > 0.0) {
            return Err(format!("`mass` must be positive (kg), got {}", self.mass));
        }
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return Err(format!(
                "`radius` must be positive (m), got {}",
                self.radius
            ));
        }
        if let Some(s) = self.speed
            && !(s.is_finite() && s > 0.0)
        {
            return Err(format!("`speed` must be positive (m/s), got {s}"));
        }
        if let Some(f) = &self.from
            && !finite3(f)
        {
            return Err(format!("`from` must be finite, got {}", fmt3(f)));
        }
        match (&self.velocity, &self.target) {
            (Some(v), _) if !finite3(v) => {
                Err(format!("`velocity` must be finite, got {}", fmt3(v)))
            }
            (Some(_), Some(_)) => Err(
                "give either `target` (aimed ball) or `velocity` (launched ball), not both".into(),
            ),
            (Some(_), None) if self.speed.is_some() => {
                Err("`speed` is implied by `velocity`; give only one".into())
            }
            (Some(_), None) if self.from.is_none() => {
                Err("a ball with `velocity` needs `from` (its launch point)".into())
            }
            (None, None) => {
                Err("a ball needs `target` (body name or role) or `from` + `velocity`".into())
            }
            (None, Some(t)) if t.trim().is_empty() => Err("`target` is empty".into()),
            _ => Ok(()),
        }
    }

    /// Parse a `--ball` flag: `t=1.2,target=right_forearm,speed=12[,from=x,y,z][,mass=…]`.
    /// Vector values (`from`, `velocity`) take three comma-separated numbers.
    pub fn from_flag(arg: &str) -> Result<Self, ScenarioError> {
        let err = |message: String| ScenarioError::Flag {
            arg: arg.into(),
            message,
        };
        let valid = || BALL_KEYS.join(", ");
        // Split on commas; a token without `=` continues the previous vector value.
        let mut pairs: Vec<(String, Vec<String>)> = vec![];
        for tok in arg.split(',') {
            let tok = tok.trim();
            match tok.split_once('=') {
                Some((k, v)) => pairs.push((k.trim().to_string(), vec![v.trim().to_string()])),
                None => match pairs.last_mut() {
                    Some((k, vals)) if k == "from" || k == "velocity" => vals.push(tok.into()),
                    _ if tok.is_empty() => {}
                    _ => {
                        return Err(err(format!(
                            "`{tok}` is not `key=value`; valid keys: {}",
                            valid()
                        )));
                    }
                },
            }
        }
        let mut spec = BallSpec::unset();
        let mut seen: Vec<String> = vec![];
        let num = |k: &str, v: &str| -> Result<f64, ScenarioError> {
            v.parse::<f64>()
                .map_err(|_| err(format!("`{k}` needs a number, got `{v}`")))
        };
        for (k, vals) in &pairs {
            if !BALL_KEYS.contains(&k.as_str()) {
                return Err(err(format!("unknown key `{k}`; valid keys: {}", valid())));
            }
            if seen.contains(k) {
                return Err(err(format!("`{k}` is given twice")));
            }
            seen.push(k.clone());
            let vec3 = || -> Result<[f64; 3], ScenarioError> {
                if vals.len() != 3 {
                    return Err(err(format!(
                        "`{k}` needs 3 numbers (x,y,z in m or m/s), got {}",
                        vals.len()
                    )));
                }
                Ok([num(k, &vals[0])?, num(k, &vals[1])?, num(k, &vals[2])?])
            };
            let one = || -> Result<&str, ScenarioError> {
                if vals.len() != 1 {
                    return Err(err(format!("`{k}` takes one value")));
                }
                Ok(vals[0].as_str())
            };
            match k.as_str() {
                "t" => spec.t = num(k, one()?)?,
                "target" => spec.target = Some(one()?.to_string()),
                "speed" => spec.speed = Some(num(k, one()?)?),
                "mass" => spec.mass = num(k, one()?)?,
                "radius" => spec.radius = num(k, one()?)?,
                "from" => spec.from = Some(vec3()?),
                "velocity" => spec.velocity = Some(vec3()?),
                // (every key of BALL_KEYS has its arm; an error, not a panic, if one
                // were ever added without it)
                _ => return Err(err(format!("unknown key `{k}`; valid keys: {}", valid()))),
            }
        }
        if !seen.iter().any(|k| k == "t") {
            return Err(err(format!(
                "`t` (time, s) is required; valid keys: {}",
                valid()
            )));
        }
        spec.validate().map_err(err)?;
        Ok(spec)
    }

    /// The flag form of this ball (inverse of [`BallSpec::from_flag`]).
    pub fn to_flag(&self) -> String {
        let mut s = format!("t={}", self.t);
        if let Some(t) = &self.target {
            s += &format!(",target={t}");
        }
        if let Some(v) = self.speed {
            s += &format!(",speed={v}");
        }
        if let Some(f) = &self.from {
            s += &format!(",from={},{},{}", f[0], f[1], f[2]);
        }
        if let Some(v) = &self.velocity {
            s += &format!(",velocity={},{},{}", v[0], v[1], v[2]);
        }
        s + &format!(",mass={},radius={}", self.mass, self.radius)
    }

    /// Resolve against a model: launch time, point and velocity. A targeted ball is aimed
    /// at the target body's centre of mass at time `t` (reference motion), from `from` or
    /// from [`DEFAULT_DISTANCE`] in front of the figure at the target's height; its flight
    /// time is distance / speed and its launch velocity compensates gravity, so it arrives
    /// at `t` exactly. Without `from`, when another body is in the way of the default
    /// approach or the ball would meet the target at a slant, the directions of
    /// [`aim::APPROACHES_DEG`] around the figure are tried in turn, at the centre of mass
    /// and then at points along the body's capsules, and the first that reaches the target
    /// unobstructed and head-on (within [`aim::HEAD_ON_DEG`] of the contact normal) is
    /// used; failing that the first that reaches it unobstructed; if none does, the
    /// default approach is kept and [`Launch::aim_warning`] names the body it will hit.
    pub fn launch(&self, model: &Model, reference: &Reference) -> Result<Launch, String> {
        self.validate()?;
        if self.t > reference.duration {
            // it would fly after the motion is over and touch nothing: say so instead of
            // reporting a miss (and a figure "not back within 2°" of a hit it never had)
            return Err(format!(
                "t={} s is after the clip's end ({:.3} s): the ball would fly after the \
                 motion is over; give a time within the clip",
                self.t, reference.duration
            ));
        }
        if let (Some(v), Some(f)) = (&self.velocity, &self.from) {
            let (origin, velocity) = (Vector3::from(*f), Vector3::from(*v));
            // A launched ball is checked for half a second of flight past its launch.
            let predicted_hit = aim::first_body_on_flight(
                model,
                reference,
                self.t,
                &origin,
                &velocity,
                self.radius,
                self.t + 0.5,
                None,
                &mut aim::FlightPoses::default(),
            )
            .map(|c| c.body);
            return Ok(Launch {
                t: self.t,
                origin,
                velocity,
                mass: self.mass,
                radius: self.radius,
                aimed_at: None,
                predicted_hit,
            });
        }
        let name = self.target.as_deref().unwrap_or_default();
        let Some(b) = model.find_body(name) else {
            return Err(unknown_target(model, name));
        };
        let mut kin = vec![BodyKinematics::default(); model.num_bodies()];
        let mut scratch = ReferenceScratch::default();
        let t = self.t.min(reference.duration);
        reference.sample(model, t, &mut scratch, &mut kin);
        let target = kin[b].x;
        let speed = self.speed.unwrap_or(DEFAULT_SPEED);
        // the launch, and whether it meets the target head-on (aim::HEAD_ON_DEG)
        // every approach arrives at self.t: their flights share the figure's poses there
        let mut poses = aim::FlightPoses::default();
        let mut launch_from =
            |from: Vector3<f64>, point: Vector3<f64>| -> Result<(Launch, bool), String> {
                let (t0, velocity) = aim(&from, &point, speed, self.t, &model.gravity)?;
                let contact = aim::first_body_on_flight(
                    model,
                    reference,
                    t0,
                    &from,
                    &velocity,
                    self.radius,
                    self.t,
                    Some(b),
                    &mut poses,
                );
                let launch = Launch {
                    t: t0,
                    origin: from,
                    velocity,
                    mass: self.mass,
                    radius: self.radius,
                    aimed_at: Some(b),
                    predicted_hit: contact.map(|c| c.body),
                };
                let head_on = contact.is_some_and(|c| c.obliquity_deg <= aim::HEAD_ON_DEG);
                Ok((launch, head_on))
            };
        if let Some(f) = &self.from {
            return launch_from(Vector3::from(*f), target).map(|(l, _)| l);
        }
        let up = -model.gravity.try_normalize(1e-12).unwrap_or(-Vector3::y());
        let facing = facing(model, &kin);
        // Aim points: the centre of mass first, then points along the body's capsule axes
        // (a pelvis whose centre lies inside the abdomen's capsule is still reached at a
        // hip). Every approach for one point before the next point.
        let mut points = vec![target];
        for cap in &model.bodies[b].capsules {
            for s in [0.5, 0.0, 1.0, 0.25, 0.75] {
                points.push(kin[b].x + kin[b].q * cap.a.lerp(&cap.b, s));
            }
        }
        // A ball thrown from below leaves no lower than the figure's lowest point (its
        // rising flight is lowest at the launch): never from under the floor.
        let lowest = lowest_point(model, &kin, &up);
        // The first approach that meets the target head-on; else the first that meets it
        // at all (a graze), else the default approach.
        let (mut glancing, mut default) = (None, None);
        for point in points {
            for (azimuth, elevation) in aim::APPROACHES_DEG {
                let dir = aim::approach_direction(&facing, &up, azimuth, elevation);
                let from = point + dir * DEFAULT_DISTANCE;
                if elevation < 0.0 && from.dot(&up) < lowest + self.radius {
                    continue;
                }
                let (l, head_on) = launch_from(from, point)?;
                if l.predicted_hit == Some(b) {
                    if head_on {
                        return Ok(l);
                    }
                    glancing.get_or_insert(l);
                } else {
                    default.get_or_insert(l);
                }
            }
        }
        glancing
            .or(default)
            .ok_or_else(|| "no approach direction".to_string())
    }
}

/// Height along `up` (m) of the lowest point of the figure posed by `kin`: the lowest
/// capsule surface.
fn lowest_point(model: &Model, kin: &[BodyKinematics], up: &Vector3<f64>) -> f64 {
    model
        .bodies
        .iter()
        .zip(kin)
        .flat_map(|(body, k)| {
            body.capsules
                .iter()
                .flat_map(move |c| [c.a, c.b].map(|e| (k.x + k.q * e).dot(up) - c.radius))
        })
        .fold(f64::INFINITY, f64::min)
}

/// Flight time |target − from| / speed and the launch velocity that carries a ball from
/// `from` to `target` in that time under gravity `g`; `None` when the points coincide.
pub fn launch_velocity(
    from: &Vector3<f64>,
    target: &Vector3<f64>,
    speed: f64,
    g: &Vector3<f64>,
) -> Option<(f64, Vector3<f64>)> {
    let d = target - from;
    let dist = d.norm();
    if dist < 1e-6 || !(speed.is_finite() && speed > 0.0) {
        return None;
    }
    let flight = dist / speed;
    Some((flight, (d - 0.5 * g * flight * flight) / flight))
}

/// Launch time and velocity of a ball leaving `from` that reaches `target` at time `t`,
/// with the flight time |target − from| / speed, under gravity `g`.
pub fn aim(
    from: &Vector3<f64>,
    target: &Vector3<f64>,
    speed: f64,
    t: f64,
    g: &Vector3<f64>,
) -> Result<(f64, Vector3<f64>), String> {
    let Some((flight, v)) = launch_velocity(from, target, speed, g) else {
        return Err("`from` is at the target".into());
    };
    let t0 = t - flight;
    if t0 < -1e-9 {
        return Err(format!(
            "the ball needs {flight:.3} s to fly {:.2} m at {speed} m/s, so it would leave at \
             {t0:.3} s, before the clip starts; arrive later, throw faster or from closer",
            (target - from).norm()
        ));
    }
    Ok((t0.max(0.0), v))
}

fn unknown_target(model: &Model, name: &str) -> String {
    let roles: Vec<&str> = Role::ALL
        .iter()
        .filter(|r| model.bodies.iter().any(|b| b.role == Some(**r)))
        .map(|r| r.name())
        .collect();
    let bodies: Vec<&str> = model.bodies.iter().map(|b| b.name.as_str()).collect();
    format!(
        "unknown target `{name}`; roles: {}; bodies: {}",
        roles.join(", "),
        bodies.join(", ")
    )
}

/// Horizontal unit vector the figure faces, from the left–right axis through its hip
/// joints (or shoulder joints), which a stride does not tilt; +Z when the model has no
/// left/right roles.
pub fn facing(model: &Model, kin: &[BodyKinematics]) -> Vector3<f64> {
    let up = -model.gravity.try_normalize(1e-12).unwrap_or(-Vector3::y());
    let joint_point = |b: usize| kin[b].x - kin[b].q * model.bodies[b].com;
    for (l, r) in [
        (Role::LeftThigh, Role::RightThigh),
        (Role::LeftUpperArm, Role::RightUpperArm),
    ] {
        let find = |role| model.bodies.iter().position(|b| b.role == Some(role));
        if let (Some(l), Some(r)) = (find(l), find(r)) {
            let side = joint_point(l) - joint_point(r);
            let fwd = side.cross(&up);
            let fwd = fwd - up * fwd.dot(&up);
            if let Some(f) = fwd.try_normalize(1e-9) {
                return f;
            }
        }
    }
    Vector3::z()
}

impl Scenario {
    /// Parse TOML text; `file` names the source in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<Self, ScenarioError> {
        let scenario: Scenario = toml::from_str(text).map_err(|e| ScenarioError::File {
            file: file.into(),
            message: e.to_string().trim_end().to_string(),
        })?;
        for (i, b) in scenario.balls.iter().enumerate() {
            b.validate().map_err(|m| ScenarioError::File {
                file: file.into(),
                message: format!("ball {} (t = {} s): {m}", i + 1, b.t),
            })?;
        }
        Ok(scenario)
    }

    /// Read and parse a scenario file.
    pub fn load(path: &std::path::Path) -> Result<Self, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::File {
            file: file.clone(),
            message: e.to_string(),
        })?;
        Self::from_toml(&text, &file)
    }

    /// TOML text of the scenario (`[[ball]]` tables), readable by [`Scenario::from_toml`].
    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).unwrap_or_else(|e| format!("# cannot serialise: {e}\n"));
        format!(
            "# jostle throw scenario: t = arrival time at `target` (s), or launch time when\n\
             # `from` + `velocity` are given; SI units (m, m/s, kg), world frame, Y up.\n\n{body}"
        )
    }

    /// Resolve every ball against a model; `origin` names the source in errors. A ball
    /// whose `from` lies below the clip's floor ([`ClipFloor`]: `from` is a world position)
    /// is an error: it would meet the floor before anything else, and the run report a
    /// miss.
    pub fn launches(
        &self,
        model: &Model,
        reference: &Reference,
        origin: &str,
    ) -> Result<Vec<Launch>, ScenarioError> {
        // the floor only when a ball has a `from` (posing the clip every 20 ms)
        let mut floor: Option<f64> = None;
        self.balls
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let resolve = |message| ScenarioError::Resolve {
                    origin: format!("{origin}, ball {} (t = {} s)", i + 1, b.t),
                    message,
                };
                let launch = b.launch(model, reference).map_err(resolve)?;
                let Some(from) = b.from else {
                    return Ok(launch);
                };
                let floor = *floor.get_or_insert_with(|| ClipFloor::of(model, reference).height);
                let up = -model.gravity.try_normalize(1e-12).unwrap_or(-Vector3::y());
                let below = floor - launch.origin.dot(&up);
                if below > 0.0 {
                    return Err(resolve(format!(
                        "from = {:?} m starts the ball {below:.3} m below the floor (the \
                         clip's floor is at {floor:.3} m): `from` is a world position in \
                         metres, y up; start the ball above the floor",
                        from
                    )));
                }
                Ok(launch)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
[[ball]]
t = 1.2
target = "right_forearm"
speed = 12.0
from = [0.0, 1.5, 3.0]
mass = 0.45
radius = 0.095

[[ball]]
t = 2.0
from = [0.0, 1.5, 3.0]
velocity = [0.0, 0.0, -12.0]
"#;

    #[test]
    fn toml_parses_both_kinds_and_fills_defaults() {
        let s = Scenario::from_toml(EXAMPLE, "ex.toml").unwrap();
        assert_eq!(s.balls.len(), 2);
        assert_eq!(s.balls[0].target.as_deref(), Some("right_forearm"));
        assert_eq!(s.balls[0].from, Some([0.0, 1.5, 3.0]));
        assert_eq!(s.balls[1].velocity, Some([0.0, 0.0, -12.0]));
        assert_eq!(s.balls[1].mass, DEFAULT_MASS);
        assert_eq!(s.balls[1].radius, DEFAULT_RADIUS);
        assert_eq!(
            Scenario::from_toml("", "empty.toml").unwrap().balls.len(),
            0
        );
    }

    #[test]
    fn toml_round_trips() {
        let s = Scenario::from_toml(EXAMPLE, "ex.toml").unwrap();
        let mut s2 = s.clone();
        s2.balls.push(BallSpec::launched(
            0.1 + 0.2,
            Vector3::new(1.0 / 3.0, 1.7, -2.5),
            Vector3::new(-0.1, 2.0, 1e-7),
            0.3,
            0.05,
        ));
        let text = s2.to_toml();
        assert!(text.contains("[[ball]]"), "{text}");
        let back = Scenario::from_toml(&text, "saved.toml").unwrap();
        assert_eq!(back, s2, "{text}");
    }

    #[test]
    fn toml_errors_name_the_file_and_ball() {
        let e = Scenario::from_toml("[[ball]]\nt = 1.0\nspeed = 3\n", "a.toml").unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("a.toml") && m.contains("ball 1") && m.contains("target"),
            "{m}"
        );
        let e = Scenario::from_toml("[[ball]]\nt = 1.0\ntraget = \"x\"\n", "b.toml").unwrap_err();
        let m = e.to_string();
        assert!(m.contains("b.toml") && m.contains("traget"), "{m}");
        let e =
            Scenario::from_toml("[[ball]]\nt = -1.0\ntarget = \"head\"\n", "c.toml").unwrap_err();
        assert!(e.to_string().contains("`t`"), "{e}");
        let e = Scenario::from_toml(
            "[[ball]]\nt = 1\nfrom = [0, 1, 2]\nvelocity = [1, 0, 0]\ntarget = \"head\"\n",
            "d.toml",
        )
        .unwrap_err();
        assert!(e.to_string().contains("not both"), "{e}");
        let e =
            Scenario::from_toml("[[ball]]\nt = 1\nvelocity = [1, 0, 0]\n", "e.toml").unwrap_err();
        assert!(e.to_string().contains("needs `from`"), "{e}");
        let e = Scenario::from_toml("[[ball]\nt = 1\n", "f.toml").unwrap_err();
        assert!(e.to_string().starts_with("scenario f.toml:"), "{e}");
    }

    #[test]
    fn ball_flag_parses() {
        let b = BallSpec::from_flag("t=1.2,target=right_forearm,speed=12").unwrap();
        assert_eq!(b.t, 1.2);
        assert_eq!(b.target.as_deref(), Some("right_forearm"));
        assert_eq!(b.speed, Some(12.0));
        assert_eq!(b.mass, DEFAULT_MASS);
        let b =
            BallSpec::from_flag("t=0.5, target=head, from=0,1.5,3, mass=0.2, radius=0.05").unwrap();
        assert_eq!(b.from, Some([0.0, 1.5, 3.0]));
        assert_eq!((b.mass, b.radius), (0.2, 0.05));
        let b = BallSpec::from_flag("t=2,from=1,2,3,velocity=-1,0,-10").unwrap();
        assert_eq!(b.velocity, Some([-1.0, 0.0, -10.0]));
        assert_eq!(BallSpec::from_flag(&b.to_flag()).unwrap(), b);
    }

    #[test]
    fn ball_flag_errors_list_valid_keys() {
        for (arg, want) in [
            (
                "t=1,target=head,sped=3",
                "valid keys: t, target, speed, from, velocity, mass, radius",
            ),
            ("target=head", "`t`"),
            ("t=1,target=head,from=1,2", "3 numbers"),
            ("t=x,target=head", "needs a number"),
            ("t=1,t=2,target=head", "twice"),
            ("t=1,head", "not `key=value`"),
            ("t=1,target=head,speed=-3", "`speed` must be positive"),
            ("t=1", "needs `target`"),
        ] {
            let e = BallSpec::from_flag(arg).unwrap_err().to_string();
            assert!(e.contains(want), "{arg}: {e}");
            assert!(e.starts_with(&format!("--ball `{arg}`")), "{e}");
        }
    }

    #[test]
    fn aim_arrives_on_time_under_gravity() {
        let g = Vector3::new(0.0, -9.81, 0.0);
        let from = Vector3::new(0.0, 1.5, 3.0);
        let target = Vector3::new(0.2, 1.0, 0.0);
        let (t0, v) = aim(&from, &target, 10.0, 1.0, &g).unwrap();
        let flight = 1.0 - t0;
        let p = from + v * flight + 0.5 * g * flight * flight;
        assert!((p - target).norm() < 1e-12);
        assert!((flight - (target - from).norm() / 10.0).abs() < 1e-12);
        assert!(
            aim(&from, &target, 10.0, 0.1, &g)
                .unwrap_err()
                .contains("before the clip")
        );
    }
}
