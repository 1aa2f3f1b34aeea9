//! The kiss3d scene: the simulated character (shaded capsules), its mocap ghost, the
//! ground with its grid, the balls and their contact flashes, the light, and the orbit
//! camera that follows the pelvis.

use super::convert::{quat_to_glam, to_glam};
use crate::sim::BodyPose;
use crate::sim::balls::Ball;
use crate::skeleton::Model;
use kiss3d::prelude::*;
use nalgebra::{UnitQuaternion, Vector3};

/// Colour of the simulated character's capsules (a steel blue).
pub const FIGURE_COLOR: Color = Color::new(0.30, 0.50, 0.85, 1.0);
/// Colour of the mocap ghost: a pale, slim, opaque copy of the figure (transparency
/// goes through kiss3d's order-independent pass, which halves the frame rate of
/// software rendering).
pub const GHOST_COLOR: Color = Color::new(0.93, 0.93, 0.88, 1.0);
/// Radius of the ghost's capsules relative to the figure's.
const GHOST_RADIUS_SCALE: f64 = 0.45;
/// Colour of the balls (orange: no other object in the scene has it).
pub const BALL_COLOR: Color = Color::new(1.0, 0.45, 0.0, 1.0);
/// Colour of a contact flash.
pub const FLASH_COLOR: Color = Color::new(1.0, 0.95, 0.3, 1.0);
/// Background (a dark neutral grey).
pub const BACKGROUND: Color = Color::new(0.13, 0.13, 0.15, 1.0);
/// How long a contact flash stays visible after the hit, s.
pub const FLASH_DURATION_S: f64 = 0.15;
/// Half the side of the ground square and its grid, m.
const GROUND_HALF_SIZE: f32 = 10.0;
/// Grid spacing, m.
const GRID_SPACING: f32 = 0.5;

/// One capsule of one body, in the body's COM frame.
struct Part {
    body: usize,
    /// Capsule centre, m, body frame.
    centre: Vector3<f64>,
    /// Rotation taking the Y axis onto the capsule axis, body frame.
    axis: UnitQuaternion<f64>,
    /// Cap centres, m, body frame.
    ends: [Vector3<f64>; 2],
    /// Length between the cap centres, m.
    length: f64,
    /// Radius, m.
    radius: f64,
}

/// Every capsule of a model drawn as two instanced meshes: a unit cylinder per capsule
/// and a unit sphere per cap. Software renderers pay per object drawn (about 16 ms per
/// object on lavapipe here), so one object per capsule would cost seconds per frame.
struct Figure {
    cylinders: SceneNode3d,
    spheres: SceneNode3d,
    parts: Vec<Part>,
    color: Color,
    cylinder_instances: Vec<InstanceData3d>,
    sphere_instances: Vec<InstanceData3d>,
}

impl Figure {
    fn new(
        scene: &mut SceneNode3d,
        model: &Model,
        color: Color,
        radius_scale: f64,
        casts_shadows: bool,
    ) -> Self {
        let mut parts = vec![];
        for (b, body) in model.bodies.iter().enumerate() {
            for c in &body.capsules {
                let d = c.b - c.a;
                let length = d.norm();
                let axis = if length > 1e-9 {
                    UnitQuaternion::rotation_between(&Vector3::y(), &d).unwrap_or_else(|| {
                        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI)
                    })
                } else {
                    UnitQuaternion::identity()
                };
                parts.push(Part {
                    body: b,
                    centre: (c.a + c.b) * 0.5,
                    axis,
                    ends: [c.a, c.b],
                    length,
                    radius: c.radius * radius_scale,
                });
            }
        }
        let mut cylinders = scene.add_cylinder_with_subdiv(1.0, 1.0, 20);
        let mut spheres = scene.add_sphere_with_subdiv(1.0, 20, 10);
        for n in [&mut cylinders, &mut spheres] {
            n.set_color(WHITE);
            n.set_casts_shadows(casts_shadows);
        }
        Figure {
            cylinders,
            spheres,
            parts,
            color,
            cylinder_instances: vec![],
            sphere_instances: vec![],
        }
    }

    fn set_visible(&mut self, visible: bool) {
        self.cylinders.set_visible(visible);
        self.spheres.set_visible(visible);
    }

    fn pose(&mut self, poses: &[BodyPose]) {
        self.cylinder_instances.clear();
        self.sphere_instances.clear();
        for p in &self.parts {
            let Some(pose) = poses.get(p.body) else {
                continue;
            };
            let r = p.radius as f32;
            self.cylinder_instances.push(InstanceData3d {
                position: to_glam(&(pose.x + pose.q * p.centre)),
                deformation: Mat3::from_quat(quat_to_glam(&(pose.q * p.axis)))
                    * Mat3::from_diagonal(Vec3::new(r, p.length as f32, r)),
                color: self.color,
                ..Default::default()
            });
            for e in &p.ends {
                self.sphere_instances.push(InstanceData3d {
                    position: to_glam(&(pose.x + pose.q * e)),
                    deformation: Mat3::from_diagonal(Vec3::splat(r)),
                    color: self.color,
                    ..Default::default()
                });
            }
        }
        self.cylinders.set_instances(&self.cylinder_instances);
        self.spheres.set_instances(&self.sphere_instances);
    }
}

/// What one displayed frame shows.
pub struct FrameView<'a> {
    /// Simulated body poses.
    pub poses: &'a [BodyPose],
    /// Reference (mocap) body poses, for the ghost.
    pub ghost: &'a [BodyPose],
    /// Ball centres (m), `None` before launch; one per ball.
    pub balls: &'a [Option<Vector3<f64>>],
    /// The simulation's balls (radius, hit times), one per entry of `balls` or more.
    pub ball_state: &'a [Ball],
    /// Time shown, s.
    pub time: f64,
}

/// The viewer's scene graph.
pub struct ViewerScene {
    /// Root of everything drawn.
    pub root: SceneNode3d,
    figure: Figure,
    ghost: Figure,
    /// Every launched ball: one instanced unit sphere.
    balls: SceneNode3d,
    /// Every recent hit: one instanced unit sphere (opaque: transparency costs a pass).
    flashes: SceneNode3d,
    ball_instances: Vec<InstanceData3d>,
    flash_instances: Vec<InstanceData3d>,
    /// Ground height, m.
    pub ground_y: f64,
    ghost_visible: bool,
}

impl ViewerScene {
    /// Build the scene for a model; `ground_y` is the floor height (m).
    pub fn new(model: &Model, ground_y: f64) -> Self {
        let mut root = SceneNode3d::empty();
        root.add_light(Light::directional(Vec3::new(-0.4, -1.0, -0.3)).with_intensity(2.5));
        let mut ground = root.add_cube(2.0 * GROUND_HALF_SIZE, 0.02, 2.0 * GROUND_HALF_SIZE);
        ground.set_color(Color::new(0.42, 0.42, 0.40, 1.0));
        ground.set_position(Vec3::new(0.0, ground_y as f32 - 0.011, 0.0));
        let figure = Figure::new(&mut root, model, FIGURE_COLOR, 1.0, true);
        let ghost = Figure::new(&mut root, model, GHOST_COLOR, GHOST_RADIUS_SCALE, false);
        let mut balls = root.add_sphere_with_subdiv(1.0, 24, 16);
        balls.set_color(WHITE);
        balls.set_visible(false);
        let mut flashes = root.add_sphere_with_subdiv(1.0, 12, 8);
        flashes.set_color(WHITE);
        flashes.set_emissive(FLASH_COLOR);
        flashes.set_casts_shadows(false);
        flashes.set_visible(false);
        ViewerScene {
            root,
            figure,
            ghost,
            balls,
            flashes,
            ball_instances: vec![],
            flash_instances: vec![],
            ground_y,
            ghost_visible: true,
        }
    }

    /// Show or hide the mocap ghost.
    pub fn set_ghost_visible(&mut self, visible: bool) {
        self.ghost_visible = visible;
        self.ghost.set_visible(visible);
    }

    /// Is the ghost shown?
    pub fn ghost_visible(&self) -> bool {
        self.ghost_visible
    }

    /// Move every node to the frame's poses.
    pub fn update(&mut self, frame: &FrameView) {
        self.figure.pose(frame.poses);
        if self.ghost_visible {
            self.ghost.pose(frame.ghost);
        }
        self.ball_instances.clear();
        self.flash_instances.clear();
        for (i, x) in frame.balls.iter().enumerate() {
            let Some(x) = x else { continue };
            let ball = frame.ball_state.get(i);
            let r = ball.map_or(crate::sim::scenario::DEFAULT_RADIUS, |b| b.params.radius) as f32;
            self.ball_instances.push(InstanceData3d {
                position: to_glam(x),
                deformation: Mat3::from_diagonal(Vec3::splat(r)),
                color: BALL_COLOR,
                ..Default::default()
            });
            // a flash shrinks onto the ball over FLASH_DURATION_S after each hit
            let since = ball
                .and_then(|b| {
                    b.hits
                        .iter()
                        .filter(|h| h.t <= frame.time)
                        .map(|h| frame.time - h.t)
                        .reduce(f64::min)
                })
                .filter(|s| *s < FLASH_DURATION_S);
            if let Some(s) = since {
                let grow = r * (1.8 - 0.7 * (s / FLASH_DURATION_S) as f32);
                self.flash_instances.push(InstanceData3d {
                    position: to_glam(x),
                    deformation: Mat3::from_diagonal(Vec3::splat(grow)),
                    color: FLASH_COLOR,
                    ..Default::default()
                });
            }
        }
        for (node, instances) in [
            (&mut self.balls, &self.ball_instances),
            (&mut self.flashes, &self.flash_instances),
        ] {
            node.set_visible(!instances.is_empty());
            if !instances.is_empty() {
                node.set_instances(instances);
            }
        }
    }

    /// Draw the ground grid (immediate-mode lines, once per frame) around `centre` (m).
    pub fn draw_grid(&self, window: &mut Window, centre: &Vector3<f64>) {
        let y = self.ground_y as f32 + 0.002;
        let snap = |v: f64| ((v as f32) / GRID_SPACING).round() * GRID_SPACING;
        let (cx, cz) = (snap(centre.x), snap(centre.z));
        let n = (GROUND_HALF_SIZE / GRID_SPACING) as i32;
        let color = Color::new(0.62, 0.62, 0.60, 1.0);
        let h = GROUND_HALF_SIZE;
        for i in -n..=n {
            let o = i as f32 * GRID_SPACING;
            window.draw_line(
                Vec3::new(cx + o, y, cz - h),
                Vec3::new(cx + o, y, cz + h),
                color,
                1.5,
                false,
            );
            window.draw_line(
                Vec3::new(cx - h, y, cz + o),
                Vec3::new(cx + h, y, cz + o),
                color,
                1.5,
                false,
            );
        }
    }
}

/// An orbit camera whose focus follows the pelvis smoothly.
pub struct FollowCamera {
    /// The kiss3d camera (rotate: left drag, zoom: wheel, pan: middle drag).
    pub camera: OrbitCamera3d,
    /// Smoothed focus, m.
    focus: Vector3<f64>,
    /// Time constant of the smoothing, s.
    pub smoothing_s: f64,
}

impl FollowCamera {
    /// A camera looking at `focus` (m) from `distance` m away, from the side the figure
    /// faces (`facing`, horizontal unit vector) turned by 35° and a little from above.
    pub fn new(focus: Vector3<f64>, facing: Vector3<f64>, distance: f64) -> Self {
        let (eye, focus) = Self::framing(focus, facing, distance);
        let mut camera = OrbitCamera3d::new(to_glam(&eye), to_glam(&focus));
        // right click throws, so panning moves to the middle button; Shift+left throws,
        // so rotating takes the left button without modifiers
        camera.rebind_drag_button(Some(MouseButton::Button3));
        camera.set_rotate_modifiers(Some(Modifiers::empty()));
        camera.rebind_reset_key(None);
        FollowCamera {
            camera,
            focus,
            smoothing_s: 0.3,
        }
    }

    fn framing(
        focus: Vector3<f64>,
        facing: Vector3<f64>,
        distance: f64,
    ) -> (Vector3<f64>, Vector3<f64>) {
        let dir = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 35f64.to_radians()) * facing;
        let eye = focus + dir * distance + Vector3::new(0.0, 0.35 * distance, 0.0);
        (eye, focus)
    }

    /// Look at `focus` (m) again from the front-side view [`FollowCamera::new`] uses.
    pub fn reframe(&mut self, focus: Vector3<f64>, facing: Vector3<f64>, distance: f64) {
        let (eye, focus) = Self::framing(focus, facing, distance);
        self.camera.look_at(to_glam(&eye), to_glam(&focus));
        self.focus = focus;
    }

    /// Move the focus toward `target` (m) over `dt` s (exponential smoothing).
    pub fn follow(&mut self, target: &Vector3<f64>, dt: f64) {
        let a = if self.smoothing_s > 0.0 {
            1.0 - (-dt.max(0.0) / self.smoothing_s).exp()
        } else {
            1.0
        };
        self.focus += (target - self.focus) * a;
        self.camera.set_at(to_glam(&self.focus));
    }

    /// Eye position, m.
    pub fn eye(&self) -> Vector3<f64> {
        super::convert::from_glam(self.camera.eye())
    }
}
