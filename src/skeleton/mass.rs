//! Body masses, centres of mass, inertia and capsule radii from the anthropometric tables
//! (METHOD §3, [`super::anthropometry`]).
//!
//! 1. **Masses.** Each de Leva segment's mass (a fraction of the total) goes to the bodies
//!    whose roles stand for it ([`segment_of`]; a body holding several roles — merged
//!    joints — sums them). A segment with no body of its own goes to its neighbour towards
//!    the trunk (a missing hand to the forearm); a missing trunk part is split among the
//!    trunk parts that have bodies. A body without a role shares its nearest roled
//!    ancestor's mass by volume (a Mixamo `Spine1` shares the abdomen's); bodies with no
//!    roled ancestor share what is left by volume.
//! 2. **Centre of mass and inertia** of a roled body come from its table segment, laid
//!    along the body's own bones: the proximal → distal joint line for the limbs (the
//!    figure's own length, radii of gyration as fractions of it), the hip-joint centre →
//!    abdomen joint line for the pelvis, the body's joint → the next joint up for abdomen
//!    and chest (table lengths for the radii: a rig's trunk joints mark no landmarks), the
//!    head joint → vertex for the head, ankle → toe tip for the foot. Limbs and the head are
//!    treated as symmetric about their long axis (de Leva's two transverse radii differ by
//!    ≤ 5 % there); trunk parts get all three radii, the medio-lateral axis from the hip
//!    (pelvis, abdomen) or shoulder (chest) joints, so the tensor is symmetric left/right.
//!    Bodies without a table placement (neck, clavicles, bodies without a role, odd
//!    geometry) get the inertia of their capsules at uniform density, scaled to their mass.
//! 3. **Capsules** keep the bones' layout; their radius is the one at which they hold the
//!    body's mass at [`SHAPE_DENSITY`] (a skeleton spec's `radius` overrides it).

use super::anthropometry::{
    SHAPE_DENSITY, Segment, SegmentParameters, SegmentSlot, Side,
    VERTEX_ABOVE_HEAD_JOINT_PER_STATURE, averaged, segment_of,
};
use super::model::{Body, SegmentShare};
use super::roles::Role;
use super::shape::MassAccumulator;
use nalgebra::{Matrix3, Vector3};
use std::collections::BTreeMap;

/// Length from the wrist joint to the tip of the middle finger, fraction of stature: de
/// Leva's alternative hand row (187.9 mm of 1741, 170.1 mm of 1735), averaged. A hand that
/// the rig gives no bones gets a capsule reaching this far along the forearm.
const HAND_WITH_FINGERS_PER_STATURE: f64 = (187.9 / 1741.0 + 170.1 / 1735.0) / 2.0;

/// The ankle lies about a fifth of the foot's length in front of the heel; de Leva's foot
/// runs heel → toe tip and a rig has no heel, so the foot's heel is put this fraction of
/// the table's foot length behind the ankle, on the ankle → toe-tip line.
const HEEL_BEHIND_ANKLE_PER_FOOT_LENGTH: f64 = 0.2;

/// One capsule axis of a body's shape, body frame (joint at the origin), m.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShapeSegment {
    /// Start.
    pub a: Vector3<f64>,
    /// End.
    pub b: Vector3<f64>,
    /// A half sphere closes the end (a leaf bone of this body).
    pub cap: bool,
    /// A helper bone: its radius is at most a fifth of its length.
    pub thin: bool,
}

/// What [`distribute`] needs to know about the figure.
pub(crate) struct FigureBodies<'a> {
    /// The bodies (tree, names, clip joints).
    pub bodies: &'a [Body],
    /// Per body, every role it holds (its own joint's first, then merged joints').
    pub roles: &'a [Vec<Role>],
    /// Per body, its bones as capsule axes (joint at the origin).
    pub shapes: &'a [Vec<ShapeSegment>],
    /// Per body, the radius used to compare volumes before masses are known, m.
    pub provisional_radius: &'a [f64],
    /// Per body, a radius the skeleton spec imposes, m.
    pub spec_radius: &'a [Option<f64>],
    /// The clip joint playing each role.
    pub role_joint: &'a BTreeMap<Role, usize>,
    /// Mean position of a clip joint (second argument) in a body's frame (first), m.
    pub point_in_body: &'a dyn Fn(usize, usize) -> Vector3<f64>,
    /// The clip parent of a clip joint.
    pub clip_parent: &'a dyn Fn(usize) -> Option<usize>,
    /// Stature, m.
    pub stature: f64,
    /// Total mass, kg.
    pub total_mass: f64,
}

/// Mass properties and shapes of one body.
#[derive(Clone, Debug)]
pub(crate) struct BodyMass {
    /// kg.
    pub mass: f64,
    /// Centre of mass, body frame (joint at the origin), m.
    pub com: Vector3<f64>,
    /// Inertia about the COM, body frame, kg·m².
    pub inertia: Matrix3<f64>,
    /// Capsules (a, b, radius), body frame (joint at the origin), m.
    pub capsules: Vec<(Vector3<f64>, Vector3<f64>, f64)>,
    /// De Leva segments carried.
    pub segments: Vec<SegmentShare>,
}

/// Masses, COMs, inertia and capsules of every body, and notes on what fell back to
/// volume. Same inputs, same outputs (ordered maps only).
pub(crate) fn distribute(fig: &FigureBodies) -> (Vec<BodyMass>, Vec<String>) {
    let n = fig.bodies.len();
    let mut notes = vec![];
    let slot_mass = |s: SegmentSlot| fig.total_mass * averaged(s.segment).mass_fraction;
    let provisional_volume: Vec<f64> = (0..n)
        .map(|b| shape_volume(&fig.shapes[b], None, fig.provisional_radius[b]))
        .collect();

    // 1a. Which bodies hold each segment, with the role shares renormalised over the roles
    // that have bodies (no neck body: the head keeps all of head+neck).
    let mut holders: BTreeMap<SegmentSlot, BTreeMap<usize, f64>> = BTreeMap::new();
    for (b, roles) in fig.roles.iter().enumerate() {
        for &r in roles {
            let (slot, share) = segment_of(r);
            *holders.entry(slot).or_default().entry(b).or_default() += share;
        }
    }
    for h in holders.values_mut() {
        let total: f64 = h.values().sum();
        h.values_mut().for_each(|w| *w /= total);
    }
    let mut shares: Vec<BTreeMap<SegmentSlot, f64>> = vec![BTreeMap::new(); n];
    for (slot, h) in &holders {
        for (&b, &w) in h {
            *shares[b].entry(*slot).or_default() += w;
        }
    }

    // 1b. Segments without a body: to the neighbour towards the trunk, or the trunk parts.
    let trunk = [
        Segment::LowerTrunk,
        Segment::MiddleTrunk,
        Segment::UpperTrunk,
    ];
    let is_trunk = |s: SegmentSlot| trunk.contains(&s.segment);
    let trunk_present: Vec<SegmentSlot> = trunk
        .iter()
        .map(|&segment| SegmentSlot {
            segment,
            side: Side::Middle,
        })
        .filter(|s| holders.contains_key(s))
        .collect();
    let route = |slot: SegmentSlot| -> Vec<(SegmentSlot, f64)> {
        let mut s = slot;
        loop {
            if is_trunk(s) {
                if holders.contains_key(&s) {
                    return vec![(s, 1.0)];
                }
                let k = trunk_present.len() as f64;
                return trunk_present.iter().map(|&t| (t, 1.0 / k)).collect();
            }
            match s.proximal() {
                Some(p) if holders.contains_key(&p) => return vec![(p, 1.0)],
                Some(p) => s = p,
                None => return vec![],
            }
        }
    };
    let mut left = 0.0;
    for slot in SegmentSlot::all() {
        if holders.contains_key(&slot) {
            continue;
        }
        let targets = route(slot);
        if targets.is_empty() {
            left += slot_mass(slot);
            notes.push(format!(
                "no body plays the {}: its mass is shared by the bodies without a role",
                slot.name().replace('_', " ")
            ));
            continue;
        }
        // The neighbour's main body takes it (the chest, not the clavicles).
        let mut names = vec![];
        for (t, f) in &targets {
            let main = holders[t]
                .iter()
                .max_by(|x, y| x.1.total_cmp(y.1).then(y.0.cmp(x.0)))
                .map(|(&b, _)| b);
            if let Some(b) = main {
                *shares[b].entry(slot).or_default() += f;
                names.push(format!("`{}`", fig.bodies[b].name));
            }
        }
        notes.push(format!(
            "no body plays the {}: its mass goes to {}",
            slot.name().replace('_', " "),
            names.join(" and ")
        ));
    }
    let mut mass: Vec<f64> = shares
        .iter()
        .map(|s| s.iter().map(|(slot, f)| f * slot_mass(*slot)).sum())
        .collect();

    // 1c. Bodies without a role: share the nearest roled ancestor's mass by volume, or
    // (no roled ancestor) what is left.
    let roled = |b: usize| !fig.roles[b].is_empty();
    let mut helpers: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut free = vec![];
    for b in (0..n).filter(|&b| !roled(b)) {
        let mut a = fig.bodies[b].parent;
        while let Some(p) = a.filter(|&p| !roled(p)) {
            a = fig.bodies[p].parent;
        }
        match a {
            Some(p) => helpers.entry(p).or_default().push(b),
            None => free.push(b),
        }
    }
    for (&a, hs) in &helpers {
        let total_volume: f64 =
            provisional_volume[a] + hs.iter().map(|&h| provisional_volume[h]).sum::<f64>();
        let group_mass = mass[a];
        let group_shares = shares[a].clone();
        for &b in std::iter::once(&a).chain(hs) {
            let k = provisional_volume[b] / total_volume;
            mass[b] = group_mass * k;
            shares[b] = group_shares.iter().map(|(s, f)| (*s, f * k)).collect();
        }
        let names: Vec<String> = hs
            .iter()
            .map(|&h| {
                format!(
                    "`{}` ({:.0} %)",
                    fig.bodies[h].name,
                    100.0 * provisional_volume[h] / total_volume
                )
            })
            .collect();
        notes.push(format!(
            "no role for {}: share `{}`'s mass by volume",
            names.join(", "),
            fig.bodies[a].name
        ));
    }
    if !free.is_empty() || left > 0.0 {
        let takers: Vec<usize> = if free.is_empty() {
            (0..n).collect()
        } else {
            free.clone()
        };
        let volume: f64 = takers.iter().map(|&b| provisional_volume[b]).sum();
        // Nothing left (every segment has a roled body): the free bodies weigh what their
        // shapes hold, and every mass is rescaled below so the total stays.
        let pool = if left > 0.0 {
            left
        } else {
            SHAPE_DENSITY * volume
        };
        for &b in &takers {
            mass[b] += pool * provisional_volume[b] / volume;
        }
        if !free.is_empty() {
            let names: Vec<&str> = free.iter().map(|&b| fig.bodies[b].name.as_str()).collect();
            notes.push(format!(
                "mass by volume (no role above them): {}",
                names.join(", ")
            ));
        }
    }
    let sum: f64 = mass.iter().sum();
    if sum > 0.0 && (sum - fig.total_mass).abs() > 1e-9 * fig.total_mass {
        mass.iter_mut().for_each(|m| *m *= fig.total_mass / sum);
    }

    // 2–3. Placement of each body's mass, then its capsules.
    let mut out = Vec::with_capacity(n);
    for b in 0..n {
        let primary = fig.roles[b].iter().copied().max_by(|x, y| {
            let m = |r: Role| segment_of(r).1 * averaged(segment_of(r).0.segment).mass_fraction;
            m(*x).total_cmp(&m(*y))
        });
        let placement = primary.and_then(|r| place(fig, b, r));
        if primary
            .is_some_and(|r| !matches!(r, Role::Neck | Role::LeftClavicle | Role::RightClavicle))
            && placement.is_none()
        {
            notes.push(format!(
                "`{}`: its bones do not show the segment's ends; centre of mass and inertia from its capsules",
                fig.bodies[b].name
            ));
        }
        let reach = placement.as_ref().and_then(|p| p.reach);
        let radius = fig.spec_radius[b]
            .unwrap_or_else(|| radius_for_mass(&fig.shapes[b], reach, mass[b] / SHAPE_DENSITY));
        let capsules = capsule_list(&fig.shapes[b], reach, radius);
        let (com, inertia) = match placement {
            Some(p) => (p.com, p.inertia_per_kg * mass[b]),
            None => {
                let mut acc = MassAccumulator::default();
                acc.add_sphere(Vector3::zeros(), radius, 1.0);
                for &(a, e, r, cap) in &capsules {
                    acc.add_cylinder(a, e, r);
                    if cap {
                        acc.add_sphere(e, r, 0.5);
                    }
                }
                let (m, com, inertia) = acc.finish();
                (com, inertia * (mass[b] / m))
            }
        };
        out.push(BodyMass {
            mass: mass[b],
            com,
            inertia: (inertia + inertia.transpose()) * 0.5,
            capsules: capsules.into_iter().map(|(a, e, r, _)| (a, e, r)).collect(),
            segments: shares[b]
                .iter()
                .map(|(slot, fraction)| SegmentShare {
                    slot: *slot,
                    fraction: *fraction,
                })
                .collect(),
        });
    }
    (out, notes)
}

/// Where a table segment sits in a body: its centre of mass and inertia per kg (body
/// frame), and, for the head and a bone-less hand, a capsule reaching along a direction.
struct Placement {
    com: Vector3<f64>,
    inertia_per_kg: Matrix3<f64>,
    reach: Option<Reach>,
}

/// A capsule from the body's joint along `dir` whose surface reaches `distance` (m): the
/// head up to the vertex, a hand without bones to the finger tips.
#[derive(Clone, Copy, Debug)]
struct Reach {
    dir: Vector3<f64>,
    distance: f64,
    /// The head's capsule replaces its bones (End Site, facial helpers).
    replaces_bones: bool,
}

/// The limb joint after a limb role's (thigh → shin, …): the distal end of its segment.
fn next_limb_role(role: Role) -> Option<Role> {
    Some(match role {
        Role::LeftThigh => Role::LeftShin,
        Role::RightThigh => Role::RightShin,
        Role::LeftShin => Role::LeftFoot,
        Role::RightShin => Role::RightFoot,
        Role::LeftUpperArm => Role::LeftForearm,
        Role::RightUpperArm => Role::RightForearm,
        Role::LeftForearm => Role::LeftHand,
        Role::RightForearm => Role::RightHand,
        _ => return None,
    })
}

/// The farthest end of a body's bones from its joint (body frame).
fn farthest_end(shape: &[ShapeSegment]) -> Option<Vector3<f64>> {
    shape
        .iter()
        .flat_map(|s| [s.a, s.b])
        .max_by(|x, y| x.norm().total_cmp(&y.norm()))
        .filter(|e| e.norm() > 0.0)
}

/// Inertia per kg of a segment symmetric about `axis` (unit): radii of gyration
/// `r_transverse`, `r_long` (m).
fn axisymmetric(axis: &Vector3<f64>, r_transverse: f64, r_long: f64) -> Matrix3<f64> {
    let uu = axis * axis.transpose();
    (Matrix3::identity() - uu) * r_transverse.powi(2) + uu * r_long.powi(2)
}

/// Transverse radius of a segment treated as axisymmetric: the root mean square of the
/// sagittal and transverse radii (the mean of the two moments).
fn mean_transverse(p: &SegmentParameters) -> f64 {
    ((p.r_sagittal.powi(2) + p.r_transverse.powi(2)) / 2.0).sqrt()
}

/// Table placement of body `b`'s mass for its role `role`, or `None` when its bones do
/// not show the segment's ends.
fn place(fig: &FigureBodies, b: usize, role: Role) -> Option<Placement> {
    // The neck and clavicles carry shares of a table segment laid out elsewhere (head,
    // chest): their own capsules place their mass.
    if matches!(role, Role::Neck | Role::LeftClavicle | Role::RightClavicle) {
        return None;
    }
    let h = fig.stature;
    let (slot, _) = segment_of(role);
    let p = averaged(slot.segment);
    let joint_of = |r: Role| fig.role_joint.get(&r).copied();
    let point = |j: usize| (fig.point_in_body)(b, j);
    let shape = &fig.shapes[b];
    let body = &fig.bodies[b];
    let tiny = 1e-3 * h;
    let unit = |v: Vector3<f64>| (v.norm() > tiny).then(|| v.normalize());
    match slot.segment {
        Segment::UpperArm | Segment::Forearm | Segment::Thigh | Segment::Shank => {
            let distal = next_limb_role(role)
                .and_then(joint_of)
                .map(point)
                .filter(|d| d.norm() > tiny)
                .or_else(|| farthest_end(shape))?;
            let length = distal.norm();
            let axis = unit(distal)?;
            Some(Placement {
                com: distal * p.com_from_origin,
                inertia_per_kg: axisymmetric(
                    &axis,
                    mean_transverse(&p) * length,
                    p.r_longitudinal * length,
                ),
                reach: None,
            })
        }
        Segment::Hand => {
            let length = p.length_per_stature * h;
            let bones = farthest_end(shape).filter(|e| e.norm() >= 0.5 * length);
            // No hand bones (Bandai's hand ends at the wrist): the hand continues the
            // forearm.
            let elbow = [Role::LeftForearm, Role::RightForearm]
                .into_iter()
                .filter(|r| segment_of(*r).0.side == slot.side)
                .find_map(joint_of)
                .or_else(|| (fig.clip_parent)(body.bvh_joint))
                .map(point);
            let dir = match bones {
                Some(e) => unit(e)?,
                None => unit(-elbow?)?,
            };
            Some(Placement {
                com: dir * (p.com_from_origin * length),
                inertia_per_kg: axisymmetric(
                    &dir,
                    mean_transverse(&p) * length,
                    p.r_longitudinal * length,
                ),
                reach: bones.is_none().then_some(Reach {
                    dir,
                    distance: HAND_WITH_FINGERS_PER_STATURE * h,
                    replaces_bones: false,
                }),
            })
        }
        Segment::Foot => {
            let table_length = p.length_per_stature * h;
            let tip = farthest_end(shape).filter(|e| e.norm() >= 0.3 * table_length)?;
            let dir = unit(tip)?;
            let heel = -dir * (HEEL_BEHIND_ANKLE_PER_FOOT_LENGTH * table_length);
            let length = (tip - heel).norm();
            Some(Placement {
                com: heel + (tip - heel) * p.com_from_origin,
                inertia_per_kg: axisymmetric(
                    &dir,
                    mean_transverse(&p) * length,
                    p.r_longitudinal * length,
                ),
                reach: None,
            })
        }
        Segment::HeadNeck => {
            // Vertex above the head joint; the segment runs vertex → C7.
            let to_vertex = VERTEX_ABOVE_HEAD_JOINT_PER_STATURE * h;
            let up = farthest_end(shape)
                .filter(|e| e.norm() >= 0.3 * to_vertex)
                .or_else(|| (fig.clip_parent)(body.bvh_joint).map(|j| -point(j)))
                .and_then(unit)?;
            let length = p.length_per_stature * h;
            let reach = farthest_end(shape).map_or(0.0, |e| e.norm()).max(to_vertex);
            Some(Placement {
                com: up * (to_vertex - p.com_from_origin * length),
                inertia_per_kg: axisymmetric(
                    &up,
                    mean_transverse(&p) * length,
                    p.r_longitudinal * length,
                ),
                reach: Some(Reach {
                    dir: up,
                    distance: reach,
                    replaces_bones: true,
                }),
            })
        }
        Segment::LowerTrunk | Segment::MiddleTrunk | Segment::UpperTrunk => {
            // The segment's top: the first joint above the body's own on the way to the
            // next body up (a chest that merged the neck ends at the neck's base).
            let mut top = None;
            let mut j = upward_child(fig, b);
            while let Some(k) = j.filter(|&k| k != body.bvh_joint) {
                if point(k).norm() > 0.01 * h {
                    top = Some(point(k));
                }
                j = (fig.clip_parent)(k);
            }
            let top = top?;
            let bottom = if slot.segment == Segment::LowerTrunk {
                let hips: Vec<Vector3<f64>> = [Role::LeftThigh, Role::RightThigh]
                    .into_iter()
                    .filter_map(joint_of)
                    .map(point)
                    .collect();
                if hips.is_empty() {
                    Vector3::zeros()
                } else {
                    hips.iter().sum::<Vector3<f64>>() / hips.len() as f64
                }
            } else {
                Vector3::zeros()
            };
            let long = unit(top - bottom)?;
            let (left, right) = if slot.segment == Segment::UpperTrunk
                && joint_of(Role::LeftUpperArm).is_some()
                && joint_of(Role::RightUpperArm).is_some()
            {
                (Role::LeftUpperArm, Role::RightUpperArm)
            } else {
                (Role::LeftThigh, Role::RightThigh)
            };
            let lateral_hint = match (joint_of(left), joint_of(right)) {
                (Some(l), Some(r)) => point(l) - point(r),
                _ => Vector3::x(),
            };
            let lateral = perpendicular(&long, &lateral_hint);
            let front = long.cross(&lateral);
            let length = p.length_per_stature * h;
            let inertia = (front * front.transpose()) * (p.r_sagittal * length).powi(2)
                + (lateral * lateral.transpose()) * (p.r_transverse * length).powi(2)
                + (long * long.transpose()) * (p.r_longitudinal * length).powi(2);
            Some(Placement {
                com: top + (bottom - top) * p.com_from_origin,
                inertia_per_kg: inertia,
                reach: None,
            })
        }
    }
}

/// The clip joint where a trunk body ends on its way to the head: the joint of the child
/// body that leads to the head (or holds the next trunk, neck or head role).
fn upward_child(fig: &FigureBodies, b: usize) -> Option<usize> {
    let head_body = (0..fig.bodies.len()).find(|&x| fig.roles[x].contains(&Role::Head));
    let leads_to = |c: usize, target: usize| {
        let mut a = Some(target);
        while let Some(x) = a {
            if x == c {
                return true;
            }
            a = fig.bodies[x].parent;
        }
        false
    };
    let children = &fig.bodies[b].children;
    children
        .iter()
        .copied()
        .find(|&c| head_body.is_some_and(|hb| leads_to(c, hb)))
        .or_else(|| {
            children.iter().copied().find(|&c| {
                fig.roles[c]
                    .iter()
                    .any(|r| matches!(r, Role::Abdomen | Role::Chest | Role::Neck | Role::Head))
            })
        })
        .map(|c| fig.bodies[c].bvh_joint)
}

/// A unit vector perpendicular to the unit `axis`, as close to `hint` as possible (any
/// perpendicular if `hint` is parallel to it).
fn perpendicular(axis: &Vector3<f64>, hint: &Vector3<f64>) -> Vector3<f64> {
    let v = hint - axis * axis.dot(hint);
    if v.norm() > 1e-9 * hint.norm().max(1.0) {
        return v.normalize();
    }
    let least = (0..3)
        .min_by(|&i, &j| axis[i].abs().total_cmp(&axis[j].abs()))
        .unwrap_or(0);
    let mut e = Vector3::zeros();
    e[least] = 1.0;
    (e - axis * axis.dot(&e)).normalize()
}

/// The capsules of a body at radius `r`: its bones (helper bones at most a fifth of their
/// length thick) and the reach capsule (far end at `distance`, so the capsule's surface
/// reaches it). Each entry: (a, b, radius, end cap).
fn capsule_list(
    shape: &[ShapeSegment],
    reach: Option<Reach>,
    r: f64,
) -> Vec<(Vector3<f64>, Vector3<f64>, f64, bool)> {
    let bones = if reach.is_some_and(|x| x.replaces_bones) {
        &[][..]
    } else {
        shape
    };
    let mut v: Vec<_> = bones
        .iter()
        .map(|s| {
            let rr = if s.thin {
                r.min(0.2 * (s.b - s.a).norm())
            } else {
                r
            };
            (s.a, s.b, rr, s.cap)
        })
        .collect();
    if let Some(x) = reach
        && x.distance > r
    {
        v.push((Vector3::zeros(), x.dir * (x.distance - r), r, true));
    }
    if v.is_empty() {
        v.push((Vector3::zeros(), Vector3::zeros(), r, false));
    }
    v
}

/// Volume of a body's capsules at radius `r`, m³, counted as the mass accumulator does:
/// a sphere at the joint, a cylinder per bone, a half sphere per capped end.
fn shape_volume(shape: &[ShapeSegment], reach: Option<Reach>, r: f64) -> f64 {
    use std::f64::consts::PI;
    let mut v = 4.0 / 3.0 * PI * r.powi(3);
    for (a, b, rr, cap) in capsule_list(shape, reach, r) {
        v += PI * rr * rr * (b - a).norm();
        if cap {
            v += 2.0 / 3.0 * PI * rr.powi(3);
        }
    }
    v
}

/// The radius at which a body's capsules hold `volume` (m³), m: the volume grows
/// monotonically with the radius, so bisection finds it.
fn radius_for_mass(shape: &[ShapeSegment], reach: Option<Reach>, volume: f64) -> f64 {
    if !(volume.is_finite() && volume > 0.0) {
        return 1e-3;
    }
    let (mut lo, mut hi) = (0.0, 0.05);
    while shape_volume(shape, reach, hi) < volume && hi < 10.0 {
        hi *= 2.0;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if shape_volume(shape, reach, mid) < volume {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}
