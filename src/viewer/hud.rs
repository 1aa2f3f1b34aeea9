//! The heads-up display: time, frame, fps, balls, deviation from the mocap, play state,
//! throw settings, messages and the help page.

use super::input::{CONTROLS, ThrowSettings};
use super::playback::Playback;
use kiss3d::prelude::*;
use std::sync::Arc;

/// Text of the HUD for the shown frame, one string per line.
pub fn hud_lines(playback: &Playback, throw: &ThrowSettings, fps: f64, ghost: bool) -> Vec<String> {
    let c = playback.character();
    let step = playback.shown_step();
    let h = playback.step_length();
    let frame_time = c.clip.frame_time;
    let frame = (step as f64 * h / frame_time).round() as usize;
    let frames = c.clip.num_frames() - c.model.figure.first_frame;
    let (dev, body) = playback.max_error_deg(step);
    let body_name = c.model.bodies.get(body).map_or("-", |b| b.name.as_str());
    let state = if playback.playing {
        "playing"
    } else {
        "paused"
    };
    let catching_up = if playback.wanted_step() > playback.frontier() {
        "  (simulating…)"
    } else {
        ""
    };
    let mut lines = vec![
        format!(
            "t {:6.3} / {:.2} s   frame {frame} / {frames}   step {step}{}",
            step as f64 * h,
            playback.duration(),
            if fps > 0.0 {
                format!("   {fps:4.1} fps")
            } else {
                String::new()
            }
        ),
        format!(
            "{state} {:.2}x{}   ghost {}{catching_up}",
            playback.speed(),
            if playback.looping { "  loop" } else { "" },
            if ghost { "on" } else { "off" },
        ),
        format!(
            "balls thrown {}   max deviation {dev:5.1} deg ({body_name})",
            playback.throws().len()
        ),
        format!(
            "throw: {:.0} m/s, {:.2} kg   right click throws   H help",
            throw.speed, throw.mass
        ),
    ];
    if let Some(e) = playback.error() {
        lines.push(format!("SIMULATION STOPPED: {e}"));
    }
    lines
}

/// Draws text lines in the window's top-left corner.
pub struct Hud {
    font: Arc<Font>,
    /// Text height, pixels.
    pub size: f32,
}

impl Default for Hud {
    fn default() -> Self {
        Hud {
            font: Font::default(),
            size: 22.0,
        }
    }
}

impl Hud {
    /// Queue the lines (and, when `help` is set, the controls) for the next frame.
    pub fn draw(&self, window: &mut Window, lines: &[String], message: Option<&str>, help: bool) {
        let mut y = 6.0;
        let mut put = |window: &mut Window, text: &str, color: Color| {
            window.draw_text(text, Vec2::new(10.0, y), self.size, &self.font, color);
            y += self.size * 1.05;
        };
        for l in lines {
            let color = if l.starts_with("SIMULATION STOPPED") {
                Color::new(1.0, 0.35, 0.3, 1.0)
            } else {
                Color::new(0.92, 0.92, 0.92, 1.0)
            };
            put(window, l, color);
        }
        if let Some(m) = message {
            put(window, m, Color::new(1.0, 0.85, 0.4, 1.0));
        }
        if help {
            for l in CONTROLS.lines() {
                put(window, l, Color::new(0.75, 0.85, 1.0, 1.0));
            }
        }
    }
}
