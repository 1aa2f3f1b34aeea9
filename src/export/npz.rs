//! A run as arrays for learning (NumPy `.npz`, `np.load` opens it): the perturbed and the
//! original motion per frame and clip joint, the balls, which body was hit and when, the
//! simulation's own contacts and the deviation. Every array, its units and frame are listed
//! in [`DATASET_ARRAYS`] (and the README).
//!
//! Written with `ndarray-npy` (no compression, as `numpy.savez`); the zip entries carry a
//! fixed timestamp, so the same run gives the same bytes.

use super::pose::{Transform, joint_world_transforms_over, local_transforms, mocap_world_frames};
use crate::sim::metrics::PerturbMetrics;
use crate::sim::{Simulation, Trajectory};
use crate::skeleton::ClipFrames;
use nalgebra::UnitQuaternion;
use ndarray::{Array, Array0, Array1, Array2, ArrayD, Dimension};
use ndarray_npy::{NpzWriter, WritableElement, WriteDataError, WriteNpzError};
use std::io::{Cursor, Write};
use thiserror::Error;

/// What goes wrong writing the arrays.
#[derive(Debug, Error)]
pub enum NpzError {
    /// The npz writer failed.
    #[error("writing the .npz arrays: {0}")]
    Write(#[from] WriteNpzError),
    /// A name too long to store.
    #[error("a name of {chars} characters is longer than the {max} a dataset array holds: {name}")]
    NameTooLong {
        /// The name.
        name: String,
        /// Its length in characters.
        chars: usize,
        /// The longest name stored.
        max: usize,
    },
    /// An array's data did not fill its shape (a bug).
    #[error("an array's data does not fill its shape: {0}")]
    Shape(String),
    /// The run holds no frames.
    #[error("the run has no frames to write")]
    Empty,
}

/// The arrays of a dataset `.npz`: (name, dtype and shape, meaning). F frames, J clip
/// joints, N bodies of the simulated model, B balls. World frame: metres, Y up, the floor
/// at `floor_height`; quaternions are (x, y, z, w).
pub const DATASET_ARRAYS: &[(&str, &str, &str)] = &[
    (
        "fps",
        "float64 ()",
        "frames per second of every per-frame array",
    ),
    ("step_s", "float64 ()", "simulation step, s"),
    (
        "joint_names",
        "str (J,)",
        "the clip's joints, in file (hierarchy) order",
    ),
    (
        "parents",
        "int32 (J,)",
        "each joint's parent index, -1 for the root",
    ),
    (
        "positions",
        "float32 (F, J, 3)",
        "perturbed: each joint's world position, m",
    ),
    (
        "rotations",
        "float32 (F, J, 4)",
        "perturbed: each joint's rotation relative to its parent (the root's to the world), xyzw",
    ),
    (
        "original_positions",
        "float32 (F, J, 3)",
        "the mocap's, as positions",
    ),
    (
        "original_rotations",
        "float32 (F, J, 4)",
        "the mocap's, as rotations",
    ),
    (
        "root_positions",
        "float32 (F, 3)",
        "perturbed root joint's world position, m",
    ),
    (
        "deviation_deg",
        "float32 (F, J)",
        "angle between each joint's perturbed and original rotation, degrees",
    ),
    ("body_names", "str (N,)", "the simulated bodies"),
    (
        "body_joints",
        "int32 (N,)",
        "the clip joint each body's pose drives",
    ),
    (
        "contact",
        "bool (F, N)",
        "body received a contact impulse (floor or ball) in a simulation step since the previous frame",
    ),
    ("floor_height", "float64 ()", "the floor's height, m"),
    (
        "balls",
        "float32 (F, B, 3)",
        "ball centres, m; NaN before launch",
    ),
    ("ball_radius", "float64 (B,)", "m"),
    ("ball_mass", "float64 (B,)", "kg"),
    ("ball_launch_time", "float64 (B,)", "s"),
    (
        "ball_launch_position",
        "float64 (B, 3)",
        "centre at launch, m",
    ),
    ("ball_launch_velocity", "float64 (B, 3)", "m/s"),
    ("ball_hit", "bool (B,)", "the ball touched the character"),
    (
        "ball_hit_body",
        "int32 (B,)",
        "first body it touched (index into body_names), -1 if none",
    ),
    (
        "ball_hit_time",
        "float64 (B,)",
        "first contact with the character, s; NaN if none",
    ),
    (
        "ball_impulse",
        "float64 (B,)",
        "magnitude of the impulse it gave the character, N·s",
    ),
    ("fell", "bool ()", "a hit knocked the character down"),
    (
        "fall_time",
        "float64 ()",
        "when it let go of the mocap, s; NaN if it did not",
    ),
    (
        "recovery_time",
        "float64 ()",
        "from the last impact until every joint is back within 2° for good, s; NaN if never or fallen",
    ),
    (
        "after_last_hit",
        "float64 ()",
        "the clip's time left after the last impact, s (under 2 s with recovery_time NaN and not fallen: the clip ended too soon to tell); NaN without a hit",
    ),
];

/// The longest joint or body name an array holds, in characters.
const MAX_NAME_CHARS: usize = 256;

/// A fixed-width UTF-32 string, NumPy's `<U{N}` (what `np.load` gives back as `str`).
#[derive(Clone, Copy)]
struct Utf32<const N: usize>([u32; N]);

impl<const N: usize> WritableElement for Utf32<N> {
    fn type_descriptor() -> py_literal::Value {
        py_literal::Value::String(format!("<U{N}"))
    }
    fn write<W: Write>(&self, mut writer: W) -> Result<(), WriteDataError> {
        for c in self.0 {
            writer.write_all(&c.to_le_bytes())?;
        }
        Ok(())
    }
    fn write_slice<W: Write>(slice: &[Self], mut writer: W) -> Result<(), WriteDataError> {
        for s in slice {
            s.write(&mut writer)?;
        }
        Ok(())
    }
}

/// The width N of the NumPy `<U{N}` array that holds `names`: the smallest of 16, 32, …,
/// 256 that fits the longest (in characters).
pub fn name_width(names: &[String]) -> Result<usize, NpzError> {
    if let Some(s) = names.iter().find(|s| s.chars().count() > MAX_NAME_CHARS) {
        return Err(NpzError::NameTooLong {
            name: s.clone(),
            chars: s.chars().count(),
            max: MAX_NAME_CHARS,
        });
    }
    let longest = names.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    Ok(longest.max(1).next_power_of_two().max(16))
}

/// Write `names` as a `<U{N}` array, N from [`name_width`].
fn add_names<W: Write + std::io::Seek>(
    npz: &mut NpzWriter<W>,
    key: &str,
    names: &[String],
) -> Result<(), NpzError> {
    fn put<W: Write + std::io::Seek, const N: usize>(
        npz: &mut NpzWriter<W>,
        key: &str,
        names: &[String],
    ) -> Result<(), NpzError> {
        let coded: Vec<Utf32<N>> = names
            .iter()
            .map(|s| {
                let mut c = [0u32; N];
                for (slot, ch) in c.iter_mut().zip(s.chars()) {
                    *slot = ch as u32;
                }
                Utf32(c)
            })
            .collect();
        npz.add_array(key, &Array1::from(coded))?;
        Ok(())
    }
    match name_width(names)? {
        16 => put::<W, 16>(npz, key, names),
        32 => put::<W, 32>(npz, key, names),
        64 => put::<W, 64>(npz, key, names),
        128 => put::<W, 128>(npz, key, names),
        _ => put::<W, MAX_NAME_CHARS>(npz, key, names),
    }
}

/// The values of one dataset array (its dtype in the variant).
#[derive(Clone, Debug, PartialEq)]
pub enum ArrayData {
    /// `float64`.
    F64(ArrayD<f64>),
    /// `float32`.
    F32(ArrayD<f32>),
    /// `int32`.
    I32(ArrayD<i32>),
    /// `bool`.
    Bool(ArrayD<bool>),
    /// `str`, a 1-D NumPy `<U{N}` array (N from [`name_width`]).
    Str(Vec<String>),
}

macro_rules! array_data_from {
    ($($t:ty => $variant:ident),*) => {$(
        impl<D: Dimension> From<Array<$t, D>> for ArrayData {
            fn from(a: Array<$t, D>) -> Self {
                ArrayData::$variant(a.into_dyn())
            }
        }
    )*};
}
array_data_from!(f64 => F64, f32 => F32, i32 => I32, bool => Bool);

/// A run's dataset arrays, named and in [`DATASET_ARRAYS`] order: what the `.npz` holds
/// (see [`npz_bytes`]) and what the Python package hands over as NumPy arrays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DatasetArrays {
    /// (name, values), in [`DATASET_ARRAYS`] order.
    pub arrays: Vec<(&'static str, ArrayData)>,
}

impl DatasetArrays {
    fn add(&mut self, name: &'static str, a: impl Into<ArrayData>) {
        self.arrays.push((name, a.into()));
    }

    /// The array called `name`.
    pub fn get(&self, name: &str) -> Option<&ArrayData> {
        self.arrays.iter().find(|(n, _)| *n == name).map(|(_, a)| a)
    }
}

/// The `.npz` bytes of `arrays` (no compression, fixed timestamps: same arrays, same bytes).
pub fn npz_bytes(arrays: &DatasetArrays) -> Result<Vec<u8>, NpzError> {
    let mut npz = NpzWriter::new_with_options(
        Cursor::new(Vec::new()),
        zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .last_modified_time(zip::DateTime::default()),
    );
    for (name, a) in &arrays.arrays {
        match a {
            ArrayData::F64(a) => npz.add_array(*name, a)?,
            ArrayData::F32(a) => npz.add_array(*name, a)?,
            ArrayData::I32(a) => npz.add_array(*name, a)?,
            ArrayData::Bool(a) => npz.add_array(*name, a)?,
            ArrayData::Str(names) => add_names(&mut npz, name, names)?,
        }
    }
    Ok(npz.finish()?.into_inner())
}

/// An array of `shape` from row-major `data`.
fn shaped<T, Sh: ndarray::ShapeBuilder<Dim = D>, D: Dimension>(
    shape: Sh,
    data: Vec<T>,
) -> Result<Array<T, D>, NpzError> {
    Array::from_shape_vec(shape, data).map_err(|e| NpzError::Shape(e.to_string()))
}

/// One motion's joints per frame: world transforms and local (parent-relative) rotations.
struct JointFrames {
    world: Vec<Vec<Transform>>,
    local: Vec<Vec<UnitQuaternion<f64>>>,
}

impl JointFrames {
    fn new(clip: &crate::mocap::Clip, world: Vec<Vec<Transform>>) -> Self {
        let local = world
            .iter()
            .map(|w| {
                local_transforms(clip, w)
                    .into_iter()
                    .map(|(_, q)| q)
                    .collect()
            })
            .collect();
        JointFrames { world, local }
    }

    /// World positions (m) and local rotations (xyzw), f32, row-major (F, J, 3|4).
    fn arrays(&self) -> (Vec<f32>, Vec<f32>) {
        let pos = self
            .world
            .iter()
            .flatten()
            .flat_map(|(x, _)| [x.x as f32, x.y as f32, x.z as f32])
            .collect();
        let rot = self
            .local
            .iter()
            .flatten()
            .flat_map(|q| {
                let c = q.coords; // (i, j, k, w)
                [c.x as f32, c.y as f32, c.z as f32, c.w as f32]
            })
            .collect();
        (pos, rot)
    }
}

/// The `.npz` bytes of a finished run: `traj` its trajectory at the clip's frames (as
/// [`Simulation::trajectory`] gives it), `metrics` its metrics.
pub fn dataset_npz(
    sim: &Simulation,
    traj: &Trajectory,
    metrics: &PerturbMetrics,
) -> Result<Vec<u8>, NpzError> {
    npz_bytes(&dataset_arrays(sim, traj, metrics)?)
}

/// The dataset arrays of a finished run (see [`dataset_npz`] for the arguments).
pub fn dataset_arrays(
    sim: &Simulation,
    traj: &Trajectory,
    metrics: &PerturbMetrics,
) -> Result<DatasetArrays, NpzError> {
    let character = sim.character;
    let (model, clip) = (&character.model, &character.clip);
    let frames = ClipFrames::from_figure(clip, &model.figure);
    let nf = traj.num_frames().min(frames.num_frames());
    if nf == 0 {
        return Err(NpzError::Empty);
    }
    let (nj, nb, nballs) = (clip.joints.len(), model.num_bodies(), sim.balls.len());
    // the mocap's world transforms as the character's build computed them, for both
    // animations
    let mocap = mocap_world_frames(Some(&character.mocap_world), &frames, nf).into_owned();
    let perturbed = JointFrames::new(
        clip,
        mocap
            .iter()
            .zip(&traj.poses)
            .map(|(m, p)| joint_world_transforms_over(model, clip, m, p))
            .collect(),
    );
    let original = JointFrames::new(clip, mocap);
    let (pos, rot) = perturbed.arrays();
    let (opos, orot) = original.arrays();
    let deviation: Vec<f32> = perturbed
        .local
        .iter()
        .flatten()
        .zip(original.local.iter().flatten())
        .map(|(qp, qo)| qp.angle_to(qo).to_degrees() as f32)
        .collect();
    let root: Vec<f32> = perturbed
        .world
        .iter()
        .flat_map(|w| [w[0].0.x as f32, w[0].0.y as f32, w[0].0.z as f32])
        .collect();
    // contact per frame: any step ending in (t_{f-1}, t_f]
    let dt = traj.frame_time;
    let mut contact = vec![false; nf * nb];
    for (t, bodies) in sim.record.times.iter().zip(&sim.record.contact_bodies) {
        let f = (t / dt - 1e-9).ceil().max(0.0) as usize;
        if f < nf {
            for &b in bodies {
                contact[f * nb + b] = true;
            }
        }
    }
    let mut ball_pos = vec![f32::NAN; nf * nballs * 3];
    for (i, track) in traj.balls.iter().enumerate() {
        for (f, p) in track.positions.iter().enumerate().take(nf) {
            if let Some(p) = p {
                let at = (f * nballs + i) * 3;
                ball_pos[at..at + 3].copy_from_slice(&[p.x as f32, p.y as f32, p.z as f32]);
            }
        }
    }
    let body_index = |name: &Option<String>| {
        name.as_ref()
            .and_then(|n| model.bodies.iter().position(|b| &b.name == n))
            .map_or(-1, |i| i as i32)
    };
    let mut out = DatasetArrays::default();
    let scalar = |v: f64| -> Array0<f64> { ndarray::arr0(v) };
    let nan_if_none = |v: Option<f64>| v.unwrap_or(f64::NAN);
    out.add("fps", scalar(1.0 / dt));
    out.add("step_s", scalar(sim.opts.step));
    let joint_names: Vec<String> = clip.joints.iter().map(|j| j.name.clone()).collect();
    out.add("joint_names", ArrayData::Str(joint_names));
    let parents: Vec<i32> = clip
        .joints
        .iter()
        .map(|j| j.parent.map_or(-1, |p| p as i32))
        .collect();
    out.add("parents", Array1::from(parents));
    out.add("positions", shaped((nf, nj, 3), pos)?);
    out.add("rotations", shaped((nf, nj, 4), rot)?);
    out.add("original_positions", shaped((nf, nj, 3), opos)?);
    out.add("original_rotations", shaped((nf, nj, 4), orot)?);
    out.add("root_positions", shaped((nf, 3), root)?);
    out.add("deviation_deg", shaped((nf, nj), deviation)?);
    let body_names: Vec<String> = model.bodies.iter().map(|b| b.name.clone()).collect();
    out.add("body_names", ArrayData::Str(body_names));
    let body_joints: Vec<i32> = model.bodies.iter().map(|b| b.bvh_joint as i32).collect();
    out.add("body_joints", Array1::from(body_joints));
    out.add("contact", shaped((nf, nb), contact)?);
    out.add("floor_height", scalar(sim.floor_height()));
    out.add("balls", shaped((nf, nballs, 3), ball_pos)?);
    let per_ball = |f: &dyn Fn(&crate::sim::balls::Ball) -> f64| -> Array1<f64> {
        sim.balls.iter().map(f).collect()
    };
    out.add("ball_radius", per_ball(&|b| b.params.radius));
    out.add("ball_mass", per_ball(&|b| b.params.mass));
    out.add("ball_launch_time", per_ball(&|b| b.launch_t));
    let rows3 = |f: &dyn Fn(&crate::sim::balls::Ball) -> nalgebra::Vector3<f64>| {
        shaped(
            (nballs, 3),
            sim.balls
                .iter()
                .flat_map(|b| {
                    let v = f(b);
                    [v.x, v.y, v.z]
                })
                .collect(),
        )
    };
    let launch_x: Array2<f64> = rows3(&|b| b.launch_x)?;
    let launch_v: Array2<f64> = rows3(&|b| b.launch_v)?;
    out.add("ball_launch_position", launch_x);
    out.add("ball_launch_velocity", launch_v);
    let hits = &metrics.balls;
    out.add(
        "ball_hit",
        hits.iter().map(|b| b.hit).collect::<Array1<bool>>(),
    );
    out.add(
        "ball_hit_body",
        hits.iter()
            .map(|b| body_index(&b.body))
            .collect::<Array1<i32>>(),
    );
    out.add(
        "ball_hit_time",
        hits.iter()
            .map(|b| nan_if_none(b.first_contact_s))
            .collect::<Array1<f64>>(),
    );
    out.add(
        "ball_impulse",
        hits.iter().map(|b| b.impulse_ns).collect::<Array1<f64>>(),
    );
    out.add("fell", ndarray::arr0(metrics.fell));
    out.add("fall_time", scalar(nan_if_none(metrics.fall_time_s)));
    out.add(
        "recovery_time",
        scalar(nan_if_none(metrics.recovery_time_s)),
    );
    out.add(
        "after_last_hit",
        scalar(nan_if_none(metrics.after_last_hit_s)),
    );
    Ok(out)
}
