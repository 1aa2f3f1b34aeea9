//! Rendering with no window system: one frame to a PNG (`--screenshot`), and the
//! per-frame cost measurement (`--bench`), both through kiss3d's offscreen surface.

use super::{App, ViewerError, ViewerOptions, guarded, hud, scene};
use crate::viewer::playback::Playback;
use kiss3d::prelude::*;
use kiss3d::window::NumSamples;
use std::time::Instant;

fn open_surface(opts: &ViewerOptions) -> Result<OffscreenSurface, ViewerError> {
    opts.validate()?;
    let (w, h, setup) = (opts.width, opts.height, opts.canvas_setup());
    let mut surface =
        guarded(|| kiss3d::pollster::block_on(OffscreenSurface::with_setup(w, h, setup)))?;
    surface.set_background_color(scene::BACKGROUND);
    surface.set_ambient(0.35);
    surface.set_shadows_enabled(opts.shadows);
    Ok(surface)
}

/// Queue the frame's immediate-mode drawing (grid, HUD) on the surface.
fn queue_overlays(surface: &mut OffscreenSurface, app: &App, opts: &ViewerOptions, fps: f64) {
    let root = app.root_position();
    app.scene.draw_grid(surface.window_mut(), &root);
    if opts.hud {
        let lines = hud::hud_lines(&app.playback, &app.throw, fps, app.scene.ghost_visible());
        hud::Hud::default().draw(surface.window_mut(), &lines, None, false);
    }
}

/// Simulate to `at` seconds and render that frame to PNG bytes, with no display.
pub fn screenshot(
    playback: Playback,
    opts: &ViewerOptions,
    at: f64,
) -> Result<Vec<u8>, ViewerError> {
    if !(at.is_finite() && at >= 0.0 && at <= playback.duration()) {
        return Err(ViewerError::Settings(format!(
            "--at {at} s must be within the clip (0..{:.3} s)",
            playback.duration()
        )));
    }
    let mut surface = open_surface(opts)?;
    let mut app = App::new(playback, opts);
    app.playback.seek(at);
    app.playback.catch_up_fully();
    if let Some(e) = app.playback.error() {
        return Err(ViewerError::Stopped(e.to_string()));
    }
    app.sync_scene();
    let (_, facing) = super::view_of(&app.playback, at);
    let distance = super::camera_distance(&app.playback);
    app.camera.reframe(app.root_position(), facing, distance);
    // the first frame sizes the camera's projection to the surface
    queue_overlays(&mut surface, &app, opts, 0.0);
    kiss3d::pollster::block_on(surface.render_3d(&mut app.scene.root, &mut app.camera.camera));
    queue_overlays(&mut surface, &app, opts, 0.0);
    let image = kiss3d::pollster::block_on(
        surface.render_image_3d(&mut app.scene.root, &mut app.camera.camera),
    );
    let mut png = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut png, image::ImageFormat::Png)
        .map_err(|e| ViewerError::Encode(e.to_string()))?;
    Ok(png.into_inner())
}

/// What `--bench` measured.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BenchReport {
    /// Displayed frames (at 60 frames per second of clip time).
    pub frames: usize,
    /// Simulation steps done.
    pub steps: usize,
    /// Viewer work per frame (simulate that frame's steps + move the nodes), mean, ms.
    pub mean_ms: f64,
    /// 95th percentile, ms.
    pub p95_ms: f64,
    /// Worst frame, ms.
    pub max_ms: f64,
    /// Offscreen render rate with 1 sample per pixel, frames/s.
    pub render_fps_1x: f64,
    /// Offscreen render rate with 4× MSAA, frames/s.
    pub render_fps_4x: f64,
    /// Image size, pixels.
    pub size: (u32, u32),
}

/// Frames rendered before timing (pipeline compilation happens on the first ones).
const WARM_UP_FRAMES: usize = 3;
/// Frames timed.
const TIMED_FRAMES: usize = 20;

fn render_rate(surface: &mut OffscreenSurface, app: &mut App, opts: &ViewerOptions) -> f64 {
    let mut t0 = Instant::now();
    for i in 0..WARM_UP_FRAMES + TIMED_FRAMES {
        if i == WARM_UP_FRAMES {
            let _ = surface.snap_image(); // wait for the GPU
            t0 = Instant::now();
        }
        app.playback.seek(i as f64 * 0.05);
        app.update(0.0);
        queue_overlays(surface, app, opts, 0.0);
        kiss3d::pollster::block_on(surface.render_3d(&mut app.scene.root, &mut app.camera.camera));
    }
    let _ = surface.snap_image();
    TIMED_FRAMES as f64 / t0.elapsed().as_secs_f64()
}

/// Play the whole clip headless at 60 displayed frames per second of clip time, timing
/// the viewer's own work per frame, then measure the offscreen render rate.
pub fn bench(playback: Playback, opts: &ViewerOptions) -> Result<BenchReport, ViewerError> {
    let mut surface = open_surface(opts)?;
    let mut app = App::new(playback, opts);
    app.playback.set_speed(1.0);
    app.playback.looping = false;
    app.playback.playing = true;
    let dt = 1.0 / 60.0;
    let mut times = vec![];
    let mut steps = 0;
    while app.playback.playing {
        let t0 = Instant::now();
        steps += app.update(dt);
        times.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    if let Some(e) = app.playback.error() {
        return Err(ViewerError::Stopped(e.to_string()));
    }
    let frames = times.len();
    let mean_ms = times.iter().sum::<f64>() / frames.max(1) as f64;
    times.sort_by(f64::total_cmp);
    let p95_ms = times
        .get(((frames as f64 * 0.95).ceil() as usize).saturating_sub(1))
        .copied()
        .unwrap_or(0.0);
    let max_ms = times.last().copied().unwrap_or(0.0);
    let render_fps_1x = render_rate(&mut surface, &mut app, opts);
    surface.set_samples(NumSamples::Four);
    let render_fps_4x = render_rate(&mut surface, &mut app, opts);
    Ok(BenchReport {
        frames,
        steps,
        mean_ms,
        p95_ms,
        max_ms,
        render_fps_1x,
        render_fps_4x,
        size: (opts.width, opts.height),
    })
}
