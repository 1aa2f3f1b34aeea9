//! The interactive viewer (feature `viewer`): the character plays its clip under physics
//! in a kiss3d window and the user throws balls at it with the mouse (thesis §4.7: the
//! ball flies along the ray from the eye through the clicked pixel).
//!
//! - [`playback`]: the simulation with its history and VCR controls (no rendering types;
//!   unit-tested without a GPU);
//! - [`scene`]: kiss3d nodes (capsules, ghost, ground grid, balls, contact flashes) and
//!   the orbit camera that follows the pelvis;
//! - [`input`]: key bindings, throw settings, click → throw;
//! - [`hud`]: the text overlay;
//! - [`headless`]: `--screenshot` and `--bench` through kiss3d's offscreen surface (no
//!   display needed);
//! - [`convert`]: nalgebra f64 ⇄ glam f32, the only place the two meet.
//!
//! Rendering needs a GPU adapter; on a machine without one, Mesa's software Vulkan
//! (lavapipe, Debian `mesa-vulkan-drivers libvulkan1`) or GL (llvmpipe) serves.

pub mod convert;
pub mod headless;
pub mod hud;
pub mod input;
pub mod playback;
pub mod scene;

use crate::motion::kinematics::BodyKinematics;
use crate::motion::reference::ReferenceScratch;
use crate::sim::scenario::facing;
use crate::sim::{BodyPose, SimError};
use input::{Command, ThrowSettings};
use kiss3d::prelude::*;
use kiss3d::window::NumSamples;
use nalgebra::Vector3;
use playback::Playback;
use scene::{FollowCamera, FrameView, ViewerScene};
use std::path::PathBuf;
use std::time::Instant;

/// Window and rendering settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewerOptions {
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
    /// Wait for the display's vertical sync (off suits software rendering).
    pub vsync: bool,
    /// Samples per pixel: 1 (no antialiasing) or 4.
    pub msaa: u32,
    /// Show the mocap ghost.
    pub ghost: bool,
    /// Playback rate, × real time.
    pub speed: f64,
    /// Draw the HUD text.
    pub hud: bool,
    /// Cast shadows (costs about a third of a software-rendered frame).
    pub shadows: bool,
    /// Where `S` saves the session's throws.
    pub scenario_path: PathBuf,
}

impl Default for ViewerOptions {
    fn default() -> Self {
        ViewerOptions {
            width: 800,
            height: 600,
            vsync: false,
            msaa: 1,
            ghost: true,
            speed: 1.0,
            hud: true,
            shadows: true,
            scenario_path: PathBuf::from("session.scenario.toml"),
        }
    }
}

/// Why the viewer could not run.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    /// No GPU adapter (or window system) to render with.
    #[error(
        "cannot render: {0} (no GPU adapter? on Debian, software rendering needs `mesa-vulkan-drivers libvulkan1`; a window also needs a display, e.g. `xvfb-run`)"
    )]
    NoRenderer(String),
    /// Bad settings.
    #[error("invalid viewer settings: {0}")]
    Settings(String),
    /// The simulation could not start or stopped before the requested time.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// The simulation failed while running (blow-up): the message of its error.
    #[error("{0}")]
    Stopped(String),
    /// The image could not be encoded.
    #[error("cannot encode the PNG: {0}")]
    Encode(String),
}

impl ViewerOptions {
    /// Check the numbers.
    pub fn validate(&self) -> Result<(), ViewerError> {
        if self.width < 16 || self.height < 16 || self.width > 8192 || self.height > 8192 {
            return Err(ViewerError::Settings(format!(
                "size {}x{} must be within 16..8192 pixels each way",
                self.width, self.height
            )));
        }
        if self.samples().is_none() {
            return Err(ViewerError::Settings(format!(
                "--msaa {} must be 1 or 4",
                self.msaa
            )));
        }
        if !(self.speed.is_finite()
            && (playback::MIN_SPEED..=playback::MAX_SPEED).contains(&self.speed))
        {
            return Err(ViewerError::Settings(format!(
                "--speed {} must be within {}..{}",
                self.speed,
                playback::MIN_SPEED,
                playback::MAX_SPEED
            )));
        }
        Ok(())
    }

    fn samples(&self) -> Option<NumSamples> {
        NumSamples::from_u32(self.msaa)
    }

    fn canvas_setup(&self) -> CanvasSetup {
        CanvasSetup {
            vsync: self.vsync,
            samples: self.samples().unwrap_or(NumSamples::One),
            ..Default::default()
        }
    }
}

/// Run a kiss3d constructor that panics when no adapter is found, turning the panic
/// into [`ViewerError::NoRenderer`] (its message, without the panic report).
fn guarded<T>(make: impl FnOnce() -> T) -> Result<T, ViewerError> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(make));
    std::panic::set_hook(hook);
    made.map_err(|p| {
        let message = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "the renderer failed to start".into());
        ViewerError::NoRenderer(message)
    })
}

/// The viewer's per-frame state: playback, scene and camera. Needs a kiss3d window or
/// offscreen surface to exist (meshes live on its GPU device).
pub struct App<'c> {
    /// The timeline.
    pub playback: Playback<'c>,
    /// The scene graph.
    pub scene: ViewerScene,
    /// The camera.
    pub camera: FollowCamera,
    /// Settings of the next interactive throw.
    pub throw: ThrowSettings,
    ghost_pose: Vec<BodyPose>,
}

impl<'c> App<'c> {
    /// Build the scene for the playback's character, the camera framing its start pose.
    pub fn new(playback: Playback<'c>, opts: &ViewerOptions) -> Self {
        let c = playback.character();
        let ground = playback.simulation().contact.ground_y.unwrap_or(0.0);
        let mut scene = ViewerScene::new(&c.model, ground);
        scene.set_ghost_visible(opts.ghost);
        let (focus, facing) = view_of(&playback, 0.0);
        let camera = FollowCamera::new(focus, facing, camera_distance(&playback));
        let mut playback = playback;
        playback.set_speed(opts.speed);
        let mut app = App {
            playback,
            scene,
            camera,
            throw: ThrowSettings::default(),
            ghost_pose: vec![],
        };
        app.sync_scene();
        app
    }

    /// Position every node for the shown step.
    pub fn sync_scene(&mut self) {
        let step = self.playback.shown_step();
        let t = self.playback.shown_time();
        if self.scene.ghost_visible() {
            let mut ghost = std::mem::take(&mut self.ghost_pose);
            self.playback.reference_pose(t, &mut ghost);
            self.ghost_pose = ghost;
        }
        let balls = self.playback.ball_positions(step);
        let Some(poses) = self.playback.pose(step) else {
            return;
        };
        self.scene.update(&FrameView {
            poses,
            ghost: &self.ghost_pose,
            balls: &balls,
            ball_state: &self.playback.simulation().balls,
            time: t,
        });
    }

    /// Pelvis position of the shown step, m.
    pub fn root_position(&self) -> Vector3<f64> {
        self.playback
            .pose(self.playback.shown_step())
            .and_then(|p| p.first())
            .map_or_else(Vector3::zeros, |p| p.x)
    }

    /// The viewer's own work for one displayed frame: advance the playback by `wall_dt`
    /// seconds of real time (simulating the steps it needs), move the nodes and the
    /// camera focus. Returns the steps simulated.
    pub fn update(&mut self, wall_dt: f64) -> usize {
        let steps = self.playback.advance(wall_dt);
        self.sync_scene();
        let root = self.root_position();
        self.camera.follow(&root, wall_dt);
        steps
    }

    /// Throw a ball from the eye through window pixel (`x`, `y`) (top-left origin) of a
    /// `width`×`height` window, at the shown time.
    pub fn throw_through_pixel(&mut self, x: f64, y: f64, width: f64, height: f64) {
        let (_, dir) = self.camera.camera.unproject(
            Vec2::new(x as f32, y as f32),
            Vec2::new(width as f32, height as f32),
        );
        let eye = self.camera.eye();
        let t = self.playback.shown_time();
        if let Some(th) = self.throw.throw_along(t, &eye, &convert::from_glam(dir)) {
            self.playback.throw(th);
        }
    }
}

/// The reference pelvis position (m) at `t` (s) and the horizontal direction the figure
/// faces then: what the camera frames.
fn view_of(playback: &Playback, t: f64) -> (Vector3<f64>, Vector3<f64>) {
    let c = playback.character();
    let mut kin = vec![BodyKinematics::default(); c.model.num_bodies()];
    c.reference
        .sample(&c.model, t, &mut ReferenceScratch::default(), &mut kin);
    (kin[0].x, facing(&c.model, &kin))
}

/// Camera distance that frames the whole figure, m.
fn camera_distance(playback: &Playback) -> f64 {
    2.2 * playback.character().model.figure.height_m.max(0.5)
}

/// Open a window and run the viewer until it is closed.
pub fn run_window(playback: Playback, opts: &ViewerOptions) -> Result<(), ViewerError> {
    opts.validate()?;
    let (w, h) = (opts.width, opts.height);
    let setup = opts.canvas_setup();
    let mut window =
        guarded(|| kiss3d::pollster::block_on(Window::new_with_setup("jostle", w, h, setup)))?;
    window.set_background_color(scene::BACKGROUND);
    window.set_ambient(0.35);
    window.set_shadows_enabled(opts.shadows);
    window.rebind_close_key(Some(Key::Escape));
    let mut app = App::new(playback, opts);
    let hud = hud::Hud::default();
    let mut help = false;
    let mut message: Option<(String, Instant)> = None;
    let mut last = Instant::now();
    let mut fps = 0.0;
    let started = Instant::now();
    let mut work_ms: Vec<f64> = vec![];
    loop {
        let rendering = kiss3d::pollster::block_on(
            window.render_3d(&mut app.scene.root, &mut app.camera.camera),
        );
        if !rendering {
            break;
        }
        let now = Instant::now();
        // a slow frame (software rendering) still advances the clip in real time, up
        // to the steps one frame may simulate
        let dt = (now - last).as_secs_f64().min(0.25);
        last = now;
        if dt > 0.0 {
            fps = if fps == 0.0 {
                1.0 / dt
            } else {
                0.9 * fps + 0.1 / dt
            };
        }
        for mut ev in window.events().iter() {
            match ev.value {
                WindowEvent::MouseButton(MouseButton::Button2, Action::Press, _) => {
                    ev.inhibited = true;
                    throw_at_cursor(&mut app, &window);
                }
                WindowEvent::MouseButton(MouseButton::Button1, Action::Press, m)
                    if m.contains(Modifiers::Shift) =>
                {
                    ev.inhibited = true;
                    throw_at_cursor(&mut app, &window);
                }
                WindowEvent::Key(key, Action::Press, _) => {
                    let Some(cmd) = input::command_for(key) else {
                        continue;
                    };
                    ev.inhibited = true;
                    if input::apply(cmd, &mut app.playback, &mut app.throw) {
                        continue;
                    }
                    match cmd {
                        Command::ToggleGhost => {
                            let g = !app.scene.ghost_visible();
                            app.scene.set_ghost_visible(g);
                        }
                        Command::ToggleHelp => help = !help,
                        Command::SaveScenario => {
                            let text = save_scenario(&app.playback, &opts.scenario_path);
                            println!("{text}");
                            message = Some((text, Instant::now()));
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        let work = Instant::now();
        app.update(dt);
        work_ms.push(work.elapsed().as_secs_f64() * 1e3);
        if let Some(e) = app.playback.error()
            && message.is_none()
        {
            eprintln!("jostle view: {e}");
            message = Some((format!("simulation stopped: {e}"), Instant::now()));
        }
        if message
            .as_ref()
            .is_some_and(|(_, at)| at.elapsed().as_secs_f64() > 4.0)
        {
            message = None;
        }
        app.scene.draw_grid(&mut window, &app.root_position());
        if opts.hud {
            let lines = hud::hud_lines(&app.playback, &app.throw, fps, app.scene.ghost_visible());
            hud.draw(
                &mut window,
                &lines,
                message.as_ref().map(|m| m.0.as_str()),
                help,
            );
        }
    }
    let frames = work_ms.len().max(1);
    println!(
        "{} frames in {:.1} s ({:.1} fps, {}x{}, vsync {}, {} sample(s)); viewer work per frame: mean {:.3} ms, max {:.3} ms",
        work_ms.len(),
        started.elapsed().as_secs_f64(),
        work_ms.len() as f64 / started.elapsed().as_secs_f64(),
        opts.width,
        opts.height,
        if opts.vsync { "on" } else { "off" },
        opts.msaa,
        work_ms.iter().sum::<f64>() / frames as f64,
        work_ms.iter().copied().fold(0.0, f64::max),
    );
    Ok(())
}

fn throw_at_cursor(app: &mut App, window: &Window) {
    if let Some((x, y)) = window.cursor_pos() {
        app.throw_through_pixel(x, y, window.width() as f64, window.height() as f64);
    }
}

/// Write the session's throws to `path` (atomically); returns what happened, for the HUD.
pub fn save_scenario(playback: &Playback, path: &std::path::Path) -> String {
    let text = playback.scenario().to_toml();
    match crate::export::write_atomic(path, text.as_bytes()) {
        Ok(()) => format!(
            "saved {} throw(s) to {} (jostle perturb CLIP --scenario {})",
            playback.throws().len(),
            path.display(),
            path.display()
        ),
        Err(e) => format!("cannot write {}: {e}", path.display()),
    }
}
