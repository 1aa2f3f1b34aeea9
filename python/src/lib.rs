//! `jostle._jostle`: the Rust side of the `jostle` Python package. The Python side
//! (`python/jostle/__init__.py`) adds `Ball`, the keyword-argument signature of `perturb`
//! and the docstrings; everything that computes lives here.
//!
//! Options reach the library through the same clap definitions as the command line
//! ([`jostle::options`]): a keyword `k_s=0.5` becomes the flag `--k-s=0.5`, so the names,
//! defaults, ranges and error messages are the CLI's.

use clap::error::{ContextKind, ContextValue};
use clap::{ArgAction, Parser};
use jostle::batch::job::{
    JobError, Outputs, metrics_json, run_variations_cancellable, timing_json,
};
use jostle::export::npz::{ArrayData, DatasetArrays, name_width, npz_bytes};
use jostle::mocap::{BvhError as LibBvhError, load_bvh};
use jostle::options::{GltfLayoutArg, LoadArgs, OptionsError, SimArgs};
use jostle::sim::SimError;
use jostle::sim::random_throws::random_scenario;
use jostle::sim::scenario::{BALL_KEYS, BallSpec, Scenario};
use jostle::{Character, CharacterError};
use numpy::{PyArray, PyReadonlyArrayDyn};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

create_exception!(
    _jostle,
    BvhError,
    PyValueError,
    "A BVH file that is not valid BVH; the message names the file and line."
);
create_exception!(
    _jostle,
    SimulationError,
    PyRuntimeError,
    "The simulation blew up or its contact solver failed; the message names the time and body."
);

/// How often a running simulation looks for Ctrl-C (it takes the GIL for that moment).
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// The keyword options of `perturb` (the CLI's `perturb` options but the balls and outputs).
#[derive(Parser, Debug)]
#[command(
    name = "jostle.perturb",
    no_binary_name = true,
    disable_help_flag = true
)]
struct PerturbOptions {
    #[command(flatten)]
    sim: SimArgs,
    #[command(flatten)]
    load: LoadArgs,
    /// Layout of the .glb (`skinned` or `nodes`).
    #[arg(long, value_enum, default_value_t = GltfLayoutArg::Skinned)]
    gltf_layout: GltfLayoutArg,
}

/// The keyword options of `info` and `load` (the clip-loading ones).
#[derive(Parser, Debug)]
#[command(name = "jostle.info", no_binary_name = true, disable_help_flag = true)]
struct LoadOptions {
    #[command(flatten)]
    load: LoadArgs,
}

/// An OSError (FileNotFoundError for a missing file) naming `path`.
fn os_error(path: &Path, e: &std::io::Error) -> PyErr {
    let text = e.to_string();
    // strip std's " (os error N)": Python's OSError prints its own errno
    let text = text.split(" (os error").next().unwrap_or(&text).to_string();
    let errno = e.raw_os_error().unwrap_or(0);
    PyOSError::new_err((errno, text, path.display().to_string()))
}

fn bvh_error(e: LibBvhError) -> PyErr {
    match &e {
        LibBvhError::Io { path, source } => os_error(path, source),
        LibBvhError::Parse { .. } => BvhError::new_err(e.to_string()),
    }
}

fn character_error(e: CharacterError) -> PyErr {
    match e {
        CharacterError::Bvh(b) => bvh_error(b),
        // valid BVH that makes no character (one frame, no size): the input's fault
        e => PyValueError::new_err(e.to_string()),
    }
}

fn options_error(e: OptionsError) -> PyErr {
    match &e {
        OptionsError::Invalid { option, message } => {
            PyValueError::new_err(format!("option `{}`: {message}", keyword(option)))
        }
        OptionsError::SkeletonFile { path, source } => os_error(path, source),
        OptionsError::SkeletonSpec(_) => PyValueError::new_err(format!("option `skeleton`: {e}")),
    }
}

fn job_error(e: JobError, interrupt: &mut Option<PyErr>) -> PyErr {
    match e {
        JobError::Character(c) => character_error(c),
        JobError::Scenario(s) => PyValueError::new_err(s.to_string()),
        JobError::Sim(SimError::Cancelled { path }) => interrupt
            .take()
            .unwrap_or_else(|| PyRuntimeError::new_err(format!("{path}: cancelled"))),
        JobError::Sim(s) => SimulationError::new_err(s.to_string()),
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

/// The Python keyword of a flag: `--k-s` → `k_s`.
fn keyword(flag: &str) -> String {
    flag.trim_start_matches('-').replace('-', "_")
}

/// Turn keyword options into flags and parse them as the CLI does. `None` values are left
/// out (the CLI's default); a flag without value takes `True`/`False`.
fn parse_options<P: Parser>(options: Option<&Bound<'_, PyDict>>) -> PyResult<P> {
    let command = P::command();
    let mut argv: Vec<String> = vec![];
    for (key, value) in options.into_iter().flat_map(|d| d.iter()) {
        let key: String = key
            .extract()
            .map_err(|_| PyValueError::new_err("option names must be strings"))?;
        let flag = key.replace('_', "-");
        let Some(arg) = command
            .get_arguments()
            .find(|a| a.get_long() == Some(flag.as_str()))
        else {
            let mut valid: Vec<String> = command
                .get_arguments()
                .filter_map(|a| a.get_long().map(keyword))
                .collect();
            valid.sort();
            return Err(PyValueError::new_err(format!(
                "unknown option `{key}`; valid options: {}",
                valid.join(", ")
            )));
        };
        if value.is_none() {
            continue;
        }
        if matches!(arg.get_action(), ArgAction::SetTrue) {
            let on: bool = value.extract().map_err(|_| {
                PyValueError::new_err(format!(
                    "option `{key}` takes True or False, got {}",
                    repr(&value)
                ))
            })?;
            if on {
                argv.push(format!("--{flag}"));
            }
        } else {
            if value.is_instance_of::<pyo3::types::PyBool>() {
                return Err(PyValueError::new_err(format!(
                    "option `{key}` takes a value, not {value}"
                )));
            }
            // `--k-s=-1` (not `--k-s -1`): a negative number must reach the range check
            argv.push(format!("--{flag}={}", value.str()?));
        }
    }
    P::try_parse_from(&argv).map_err(|e| {
        let key = match e.get(ContextKind::InvalidArg) {
            Some(ContextValue::String(s)) => s.split_whitespace().next().map(keyword),
            _ => None,
        };
        let rendered = e.render().to_string();
        let text: Vec<&str> = rendered
            .trim_start_matches("error: ")
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .collect();
        let text = text.join("\n");
        PyValueError::new_err(match key {
            Some(k) => format!("option `{k}`: {text}"),
            None => text,
        })
    })
}

/// One ball from a dict with the CLI's ball keys; errors name the ball and the key.
fn ball_spec(i: usize, ball: &Bound<'_, PyAny>) -> PyResult<BallSpec> {
    let which = format!("ball {}", i + 1);
    let err = |m: String| PyValueError::new_err(format!("{which}: {m}"));
    let dict = ball.cast::<PyDict>().map_err(|_| {
        err(format!(
            "a ball is a dict with the keys {} (or a jostle.Ball), got {}",
            BALL_KEYS.join(", "),
            ball.get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })?;
    let mut spec = BallSpec::unset();
    let mut has_t = false;
    for (key, value) in dict.iter() {
        let key: String = key
            .extract()
            .map_err(|_| err("ball keys must be strings".into()))?;
        if value.is_none() {
            continue;
        }
        let num = || -> PyResult<f64> {
            if value.is_instance_of::<pyo3::types::PyBool>() {
                return Err(err(format!("`{key}` needs a number, got {value}")));
            }
            value
                .extract::<f64>()
                .map_err(|_| err(format!("`{key}` needs a number, got {}", repr(&value))))
        };
        let vec3 = || -> PyResult<[f64; 3]> {
            let v: Vec<f64> = value.extract().map_err(|_| {
                err(format!(
                    "`{key}` needs 3 numbers (x, y, z), got {}",
                    repr(&value)
                ))
            })?;
            <[f64; 3]>::try_from(v.as_slice()).map_err(|_| {
                err(format!(
                    "`{key}` needs 3 numbers (x, y, z), got {}",
                    v.len()
                ))
            })
        };
        match key.as_str() {
            "t" => {
                spec.t = num()?;
                has_t = true;
            }
            "target" => {
                spec.target = Some(value.extract().map_err(|_| {
                    err(format!("`target` needs a body name, got {}", repr(&value)))
                })?)
            }
            "speed" => spec.speed = Some(num()?),
            "mass" => spec.mass = num()?,
            "radius" => spec.radius = num()?,
            "from" => spec.from = Some(vec3()?),
            "velocity" => spec.velocity = Some(vec3()?),
            _ => {
                return Err(err(format!(
                    "unknown key `{key}`; valid keys: {}",
                    BALL_KEYS.join(", ")
                )));
            }
        }
    }
    if !has_t {
        return Err(err(format!(
            "`t` (time, s) is required; valid keys: {}",
            BALL_KEYS.join(", ")
        )));
    }
    spec.validate().map_err(err)?;
    Ok(spec)
}

fn repr(v: &Bound<'_, PyAny>) -> String {
    v.repr().map_or_else(|_| "?".into(), |r| r.to_string())
}

/// Write `bytes` to `path` as the CLI does: the folder created, a temporary file renamed.
fn save(path: PathBuf, bytes: &[u8]) -> PyResult<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| os_error(dir, &e))?;
    }
    jostle::export::write_atomic(&path, bytes).map_err(|e| os_error(&path, &e))
}

/// One dataset array as a NumPy array (a copy: the Rust one stays for `save_npz`).
fn numpy_array<'py>(py: Python<'py>, a: &ArrayData) -> PyResult<Bound<'py, PyAny>> {
    Ok(match a {
        ArrayData::F64(a) => PyArray::from_array(py, a).into_any(),
        ArrayData::F32(a) => PyArray::from_array(py, a).into_any(),
        ArrayData::I32(a) => PyArray::from_array(py, a).into_any(),
        ArrayData::Bool(a) => PyArray::from_array(py, a).into_any(),
        // `<U{N}` of the width the .npz uses, so `np.load` and this agree on the dtype too
        ArrayData::Str(names) => {
            let width = name_width(names).map_err(|e| PyValueError::new_err(e.to_string()))?;
            py.import("numpy")?
                .getattr("array")?
                .call1((PyList::new(py, names)?, format!("<U{width}")))?
        }
    })
}

/// A dataset array back from NumPy (`name` for messages): its dtype picks the variant.
fn array_data(name: &str, a: &Bound<'_, PyAny>) -> PyResult<ArrayData> {
    fn owned<T: numpy::Element + Clone>(
        name: &str,
        a: &Bound<'_, PyAny>,
    ) -> PyResult<ndarray::ArrayD<T>> {
        let view: PyReadonlyArrayDyn<'_, T> = a
            .extract()
            .map_err(|e: PyErr| PyValueError::new_err(format!("array `{name}`: {e}")))?;
        Ok(view.as_array().to_owned())
    }
    let dtype: String = a.getattr("dtype")?.getattr("str")?.extract()?;
    Ok(match dtype.as_str() {
        "<f8" => ArrayData::F64(owned(name, a)?),
        "<f4" => ArrayData::F32(owned(name, a)?),
        "<i4" => ArrayData::I32(owned(name, a)?),
        "|b1" => ArrayData::Bool(owned(name, a)?),
        d if d.starts_with("<U") => ArrayData::Str(a.call_method0("tolist")?.extract()?),
        d => {
            return Err(PyValueError::new_err(format!(
                "array `{name}`: unexpected dtype {d}"
            )));
        }
    })
}

/// A perturbed clip: the dataset arrays as attributes, the metrics, and the outputs.
#[pyclass(module = "jostle", frozen)]
struct Perturbation {
    glb: Vec<u8>,
    bvh: String,
    dataset: DatasetArrays,
    /// name → NumPy array, built once.
    arrays: Py<PyDict>,
    metrics: Py<PyDict>,
}

#[pymethods]
impl Perturbation {
    /// The metrics dict (the CLI's `--metrics` JSON without `out`).
    #[getter]
    fn metrics(&self, py: Python<'_>) -> Py<PyDict> {
        self.metrics.clone_ref(py)
    }

    /// The dataset arrays, name → NumPy array (the same objects as the attributes).
    #[getter]
    fn arrays<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.arrays.bind(py).copy()
    }

    /// The .glb bytes.
    #[getter]
    fn glb<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.glb)
    }

    /// The perturbed motion as BVH text.
    #[getter]
    fn bvh(&self) -> &str {
        &self.bvh
    }

    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.arrays.bind(py).get_item(name)?.ok_or_else(|| {
            pyo3::exceptions::PyAttributeError::new_err(format!(
                "'Perturbation' object has no attribute '{name}'"
            ))
        })
    }

    fn __dir__(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .dataset
            .arrays
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        names.extend(
            [
                "metrics", "arrays", "glb", "bvh", "save_glb", "save_bvh", "save_npz",
            ]
            .map(String::from),
        );
        names
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let m = self.metrics.bind(py);
        let get = |k: &str| {
            m.get_item(k)
                .ok()
                .flatten()
                .map_or_else(|| "?".into(), |v| v.to_string())
        };
        format!(
            "<jostle.Perturbation {}: {} steps, peak deviation {}°>",
            get("clip"),
            get("steps"),
            get("peak_deviation_deg")
        )
    }

    /// Pickling (a DataLoader worker process hands its results back this way): the outputs,
    /// the arrays as they are now, the metrics.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let restore = py.import("jostle._jostle")?.getattr("_restore")?;
        let state = (
            PyBytes::new(py, &self.glb),
            &self.bvh,
            self.arrays.bind(py),
            self.metrics.bind(py),
        )
            .into_pyobject(py)?
            .into_any();
        Ok((restore, state))
    }

    /// Write the .glb (the CLI's `--out` bytes), via a temporary file renamed.
    fn save_glb(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| save(path, &self.glb))
    }

    /// Write the BVH (the CLI's `--bvh` bytes), via a temporary file renamed.
    fn save_bvh(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| save(path, self.bvh.as_bytes()))
    }

    /// Write the dataset arrays as .npz (the CLI's `--npz` bytes), via a temporary file
    /// renamed. Written from the arrays as simulated, whatever was done to the attributes.
    fn save_npz(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| {
            let bytes =
                npz_bytes(&self.dataset).map_err(|e| PyValueError::new_err(e.to_string()))?;
            save(path, &bytes)
        })
    }
}

/// Unpickle a [`Perturbation`] (see its `__reduce__`).
#[pyfunction]
fn _restore(
    glb: &Bound<'_, PyBytes>,
    bvh: String,
    arrays: &Bound<'_, PyDict>,
    metrics: &Bound<'_, PyDict>,
) -> PyResult<Perturbation> {
    let mut dataset = DatasetArrays::default();
    for (name, _, _) in jostle::export::npz::DATASET_ARRAYS {
        let a = arrays
            .get_item(name)?
            .ok_or_else(|| PyValueError::new_err(format!("no array `{name}`")))?;
        dataset.arrays.push((name, array_data(name, &a)?));
    }
    Ok(Perturbation {
        glb: glb.as_bytes().to_vec(),
        bvh,
        dataset,
        arrays: arrays.copy()?.unbind(),
        metrics: metrics.copy()?.unbind(),
    })
}

/// Parse a JSON value into Python objects (through the `json` module: one call).
fn py_json<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.getattr("loads")?.call1((v.to_string(),))
}

/// Why a `perturb` call failed, before it becomes a Python exception.
enum RunError {
    Job(JobError),
    Other(String),
}

impl From<JobError> for RunError {
    fn from(e: JobError) -> Self {
        RunError::Job(e)
    }
}

/// See `jostle.perturb` (python/jostle/__init__.py).
#[pyfunction]
#[pyo3(signature = (path, balls, random_balls, seed, options))]
fn perturb(
    py: Python<'_>,
    path: PathBuf,
    balls: &Bound<'_, PyAny>,
    random_balls: usize,
    seed: u64,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Perturbation> {
    let parsed: PerturbOptions = parse_options(options)?;
    let sim_opts = parsed.sim.options().map_err(options_error)?;
    let load_opts = parsed.load.options().map_err(options_error)?;
    let mut scenario = Scenario::default();
    for (i, b) in balls.try_iter()?.enumerate() {
        scenario.balls.push(ball_spec(i, &b?)?);
    }
    let outputs = Outputs {
        layout: parsed.gltf_layout.into(),
        bvh: true,
        npz: false,
        arrays: true,
        // (the arrays need every frame simulated, whatever this says: see
        // `Outputs::from_clip_start`)
        from_clip_start: true,
    };
    let mut interrupt: Option<PyErr> = None;
    let result = py.detach(|| {
        let t_load = Instant::now();
        let c = Character::load(&path, &load_opts).map_err(JobError::from)?;
        if random_balls > 0 {
            scenario
                .balls
                .extend(random_scenario(&c.model, c.reference.duration, random_balls, seed).balls);
        }
        let load_s = t_load.elapsed().as_secs_f64();
        let label = c.path.display().to_string();
        let mut last = Instant::now();
        // Ctrl-C: Python's handler only sets a flag; look at it now and then, GIL held briefly
        let mut cancelled = || {
            if last.elapsed() < SIGNAL_CHECK {
                return false;
            }
            last = Instant::now();
            match Python::attach(|py| py.check_signals()) {
                Ok(()) => false,
                Err(e) => {
                    interrupt = Some(e);
                    true
                }
            }
        };
        let (timing, mut runs) = run_variations_cancellable(
            &c,
            sim_opts,
            std::slice::from_ref(&scenario),
            &label,
            outputs,
            &mut cancelled,
        )?;
        let run = runs
            .pop()
            .ok_or_else(|| RunError::Other(format!("{label}: no run")))?;
        let mut metrics =
            metrics_json(&c, &run.metrics).map_err(|e| RunError::Other(e.to_string()))?;
        metrics["timing"] = timing_json(load_s, &timing, &run);
        Ok::<_, RunError>((run, metrics))
    });
    let (run, metrics) = result.map_err(|e| match e {
        RunError::Job(e) => job_error(e, &mut interrupt),
        RunError::Other(m) => PyRuntimeError::new_err(m),
    })?;
    let dataset = run.arrays.unwrap_or_default();
    let arrays = PyDict::new(py);
    for (name, a) in &dataset.arrays {
        arrays.set_item(*name, numpy_array(py, a)?)?;
    }
    let metrics = py_json(py, &metrics)?.cast_into::<PyDict>()?.unbind();
    Ok(Perturbation {
        glb: run.glb,
        bvh: run.bvh.unwrap_or_default(),
        dataset,
        arrays: arrays.unbind(),
        metrics,
    })
}

/// A parsed BVH clip: the file's hierarchy and raw channel values (file units, degrees).
#[pyclass(module = "jostle", frozen, get_all)]
struct Clip {
    /// The file.
    path: String,
    /// Frames per second (1 / frame time).
    fps: f64,
    /// Seconds per frame.
    frame_time: f64,
    /// Number of frames.
    frames: usize,
    /// Joint names in file (hierarchy) order.
    joint_names: Vec<String>,
    /// Parent index of each joint (int32), -1 for the root.
    parents: Py<PyAny>,
    /// Joint offsets from the parent (J, 3) float64, file units.
    offsets: Py<PyAny>,
    /// `Joint.Channel` for every column of `channels`.
    channel_names: Vec<String>,
    /// The raw motion (frames, channels) float64: positions in file units, rotations in
    /// degrees, in the file's channel order.
    channels: Py<PyAny>,
}

#[pymethods]
impl Clip {
    fn __repr__(&self) -> String {
        format!(
            "<jostle.Clip {}: {} frames at {} fps, {} joints>",
            self.path,
            self.frames,
            self.fps,
            self.joint_names.len()
        )
    }
}

/// See `jostle.load`.
#[pyfunction]
fn load(py: Python<'_>, path: PathBuf) -> PyResult<Clip> {
    let clip = py.detach(|| load_bvh(&path)).map_err(bvh_error)?;
    let (nf, nc) = (clip.num_frames(), clip.num_channels);
    let parents: Vec<i32> = clip
        .joints
        .iter()
        .map(|j| j.parent.map_or(-1, |p| p as i32))
        .collect();
    let offsets: Vec<f64> = clip
        .joints
        .iter()
        .flat_map(|j| [j.offset.x, j.offset.y, j.offset.z])
        .collect();
    let mut channel_names = vec![String::new(); nc];
    for j in &clip.joints {
        for (k, ch) in j.channels.iter().enumerate() {
            channel_names[j.first_column + k] = format!("{}.{}", j.name, ch.keyword());
        }
    }
    let shape_err = |e: ndarray::ShapeError| PyValueError::new_err(e.to_string());
    let nj = clip.joints.len();
    Ok(Clip {
        path: path.display().to_string(),
        fps: 1.0 / clip.frame_time,
        frame_time: clip.frame_time,
        frames: nf,
        joint_names: clip.joints.iter().map(|j| j.name.clone()).collect(),
        parents: PyArray::from_vec(py, parents).into_any().unbind(),
        offsets: PyArray::from_owned_array(
            py,
            ndarray::Array2::from_shape_vec((nj, 3), offsets).map_err(shape_err)?,
        )
        .into_any()
        .unbind(),
        channel_names,
        channels: PyArray::from_owned_array(
            py,
            ndarray::Array2::from_shape_vec((nf, nc), clip.values).map_err(shape_err)?,
        )
        .into_any()
        .unbind(),
    })
}

/// See `jostle.info`.
#[pyfunction]
#[pyo3(signature = (path, options))]
fn info<'py>(
    py: Python<'py>,
    path: PathBuf,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let parsed: LoadOptions = parse_options(options)?;
    let opts = parsed.load.options().map_err(options_error)?;
    let value = py
        .detach(|| jostle::info::describe(&path, &opts))
        .map_err(character_error)?;
    py_json(py, &value)
}

/// The `jostle._jostle` extension module.
#[pymodule]
fn _jostle(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("BvhError", py.get_type::<BvhError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add(
        "DATASET_ARRAYS",
        jostle::export::npz::DATASET_ARRAYS.to_vec(),
    )?;
    m.add("BALL_KEYS", BALL_KEYS.to_vec())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Perturbation>()?;
    m.add_class::<Clip>()?;
    m.add_function(wrap_pyfunction!(perturb, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(_restore, m)?)?;
    Ok(())
}
