//! Body-segment parameters of adults: the tables the model's stature, masses, centres of
//! mass and inertia come from.
//!
//! Sources:
//! - P. de Leva (1996), "Adjustments to Zatsiorsky–Seluyanov's segment inertia
//!   parameters", *Journal of Biomechanics* 29(9), 1223–1230, Table 4: segment lengths,
//!   masses, centre-of-mass positions and radii of gyration of young adults (male sample
//!   1741 mm / 73.0 kg, female 1735 mm / 61.9 kg), segments delimited by joint centres
//!   and landmarks.
//! - D. A. Winter (2009), *Biomechanics and Motor Control of Human Movement*, 4th ed.,
//!   Fig. 4.1 (after Drillis & Contini, 1966): the ankle's height above the sole.
//!
//! **Which table.** A BVH file says nothing about the actor's sex, and a library mixes
//! actors, so jostle uses the mean of de Leva's male and female values ([`averaged`]).
//! The two tables differ most in the forearm (1.62 % vs 1.38 % of body mass) and the
//! thigh (14.16 % vs 14.78 %; hip→knee 0.243 vs 0.212 of stature); the mean is within
//! 9 % of either table in every mass fraction, where picking one table would put the
//! other sex's forearm 17 % off.
//!
//! **Axes.** de Leva's "sagittal" radius of gyration is about the sagittal
//! (antero-posterior) axis, the "transverse" one about the transverse (medio-lateral)
//! axis and the "longitudinal" one about the segment's long axis; all are fractions of the
//! segment's length. The centre of mass is a fraction of the length from the segment's
//! *origin*: the upper end for the head and trunk segments (vertex, suprasternale,
//! xiphoid, omphalion), the proximal joint for the limbs and the heel for the foot.

use super::roles::Role;
use serde::Serialize;

/// Body-mass index of the default mass, kg/m²: mass = 23 × stature² (the middle of the
/// WHO "normal" range 18.5–25, near the means of adult samples).
pub const DEFAULT_BMI: f64 = 23.0;

/// Height of the ankle joint above the sole, fraction of stature (Winter 2009, Fig. 4.1).
pub const ANKLE_HEIGHT_PER_STATURE: f64 = 0.039;

/// Vertex (top of the skull) above the head joint of a rig, fraction of stature: de Leva's
/// head length from the vertex to the mid-gonion (jaw angles), 203.3 mm of 1741 mm (male)
/// and 200.2 mm of 1735 mm (female), averaged. A rig's head joint (top of the neck, C1)
/// sits at about the height of the jaw angles.
pub const VERTEX_ABOVE_HEAD_JOINT_PER_STATURE: f64 = (203.3 / 1741.0 + 200.2 / 1735.0) / 2.0;

/// Longest legs (hip → knee → ankle joint centres) an adult has, fraction of stature:
/// jostle's bound, the table's mean (0.477; 0.490 for men) plus about two standard
/// deviations of adults' leg-to-stature ratio (roughly 0.013, the spread of the
/// sitting-height ratio). A figure whose joint chain makes the legs longer than this has
/// trunk bones missing or short (cgspeed's CMU files have no thorax bone), and its stature
/// is taken as legs / this. The iClone CC rig, the longest-legged of the shared clips, has
/// legs 0.506 of its chain.
pub const MAX_LEG_LENGTH_PER_STATURE: f64 = 0.505;

/// Density of the collision capsules, kg/m³: the living body's mean, about 1.05 g/cm³
/// (segments range from ~1.0 g/cm³, the trunk with its lungs, to ~1.1 g/cm³, the limbs).
/// A capsule's radius is chosen so that it holds its body's mass at this density.
pub const SHAPE_DENSITY: f64 = 1050.0;

/// Share of the head+neck segment's mass given to a separate neck body (the rest stays
/// with the head). de Leva's head segment includes the neck; a neck cylinder about 11 cm
/// across and 10 cm long holds ~1 l of the segment's ~5 l. jostle's choice, not a table
/// value.
pub const NECK_SHARE_OF_HEAD_NECK: f64 = 0.15;

/// Share of the upper trunk's mass given to each clavicle body (the shoulder girdle:
/// clavicle, scapula and the muscles between them, ≈ 1 % of body mass a side). jostle's
/// choice, not a table value.
pub const CLAVICLE_SHARE_OF_UPPER_TRUNK: f64 = 0.06;

/// The segments of de Leva's Table 4 that jostle uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Segment {
    /// Head and neck, vertex → cervicale (C7).
    HeadNeck,
    /// Upper trunk, suprasternale → xiphoid.
    UpperTrunk,
    /// Middle trunk, xiphoid → omphalion (navel).
    MiddleTrunk,
    /// Lower trunk, omphalion → mid-point of the hip joint centres.
    LowerTrunk,
    /// Shoulder joint centre → elbow joint centre.
    UpperArm,
    /// Elbow joint centre → wrist joint centre.
    Forearm,
    /// Wrist joint centre → third metacarpale.
    Hand,
    /// Hip joint centre → knee joint centre.
    Thigh,
    /// Knee joint centre → lateral malleolus.
    Shank,
    /// Heel → tip of the longest toe.
    Foot,
}

impl Segment {
    /// Every segment, in table order.
    pub const ALL: [Segment; 10] = [
        Segment::HeadNeck,
        Segment::UpperTrunk,
        Segment::MiddleTrunk,
        Segment::LowerTrunk,
        Segment::UpperArm,
        Segment::Forearm,
        Segment::Hand,
        Segment::Thigh,
        Segment::Shank,
        Segment::Foot,
    ];

    /// snake_case name (`upper_trunk`).
    pub fn name(self) -> &'static str {
        match self {
            Segment::HeadNeck => "head_neck",
            Segment::UpperTrunk => "upper_trunk",
            Segment::MiddleTrunk => "middle_trunk",
            Segment::LowerTrunk => "lower_trunk",
            Segment::UpperArm => "upper_arm",
            Segment::Forearm => "forearm",
            Segment::Hand => "hand",
            Segment::Thigh => "thigh",
            Segment::Shank => "shank",
            Segment::Foot => "foot",
        }
    }

    /// True for the segments that come in pairs (limbs).
    pub fn is_paired(self) -> bool {
        !matches!(
            self,
            Segment::HeadNeck | Segment::UpperTrunk | Segment::MiddleTrunk | Segment::LowerTrunk
        )
    }
}

/// Which side of the body a segment is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// On the midline (head, trunk).
    Middle,
    /// Left.
    Left,
    /// Right.
    Right,
}

/// One of the figure's 16 de Leva segments: a segment and its side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SegmentSlot {
    /// The table segment.
    pub segment: Segment,
    /// Its side ([`Side::Middle`] for head and trunk).
    pub side: Side,
}

impl SegmentSlot {
    /// All 16 slots of a whole figure, in a stable order.
    pub fn all() -> Vec<SegmentSlot> {
        let mut v = vec![];
        for s in Segment::ALL {
            if s.is_paired() {
                v.push(SegmentSlot {
                    segment: s,
                    side: Side::Left,
                });
                v.push(SegmentSlot {
                    segment: s,
                    side: Side::Right,
                });
            } else {
                v.push(SegmentSlot {
                    segment: s,
                    side: Side::Middle,
                });
            }
        }
        v
    }

    /// Name as in JSON: `left_thigh`, `upper_trunk`.
    pub fn name(self) -> String {
        match self.side {
            Side::Middle => self.segment.name().to_string(),
            Side::Left => format!("left_{}", self.segment.name()),
            Side::Right => format!("right_{}", self.segment.name()),
        }
    }

    /// The slot next to this one towards the trunk (hand → forearm → upper arm → upper
    /// trunk; foot → shank → thigh → lower trunk; head+neck → upper trunk). A segment that
    /// has no body of its own gives its mass to this neighbour. `None` for the trunk.
    pub fn proximal(self) -> Option<SegmentSlot> {
        let same_side = |segment| SegmentSlot {
            segment,
            side: self.side,
        };
        let middle = |segment| SegmentSlot {
            segment,
            side: Side::Middle,
        };
        match self.segment {
            Segment::Hand => Some(same_side(Segment::Forearm)),
            Segment::Forearm => Some(same_side(Segment::UpperArm)),
            Segment::UpperArm | Segment::HeadNeck => Some(middle(Segment::UpperTrunk)),
            Segment::Foot => Some(same_side(Segment::Shank)),
            Segment::Shank => Some(same_side(Segment::Thigh)),
            Segment::Thigh => Some(middle(Segment::LowerTrunk)),
            Segment::UpperTrunk | Segment::MiddleTrunk | Segment::LowerTrunk => None,
        }
    }
}

/// The de Leva segment a role stands for, and the share of that segment's mass the role
/// carries when every role of the segment has a body (the neck and clavicles take their
/// shares from head+neck and the upper trunk).
pub fn segment_of(role: Role) -> (SegmentSlot, f64) {
    use Segment::*;
    let (segment, side, share) = match role {
        Role::Pelvis => (LowerTrunk, Side::Middle, 1.0),
        Role::Abdomen => (MiddleTrunk, Side::Middle, 1.0),
        Role::Chest => (
            UpperTrunk,
            Side::Middle,
            1.0 - 2.0 * CLAVICLE_SHARE_OF_UPPER_TRUNK,
        ),
        Role::LeftClavicle => (UpperTrunk, Side::Middle, CLAVICLE_SHARE_OF_UPPER_TRUNK),
        Role::RightClavicle => (UpperTrunk, Side::Middle, CLAVICLE_SHARE_OF_UPPER_TRUNK),
        Role::Neck => (HeadNeck, Side::Middle, NECK_SHARE_OF_HEAD_NECK),
        Role::Head => (HeadNeck, Side::Middle, 1.0 - NECK_SHARE_OF_HEAD_NECK),
        Role::LeftUpperArm => (UpperArm, Side::Left, 1.0),
        Role::RightUpperArm => (UpperArm, Side::Right, 1.0),
        Role::LeftForearm => (Forearm, Side::Left, 1.0),
        Role::RightForearm => (Forearm, Side::Right, 1.0),
        Role::LeftHand => (Hand, Side::Left, 1.0),
        Role::RightHand => (Hand, Side::Right, 1.0),
        Role::LeftThigh => (Thigh, Side::Left, 1.0),
        Role::RightThigh => (Thigh, Side::Right, 1.0),
        Role::LeftShin => (Shank, Side::Left, 1.0),
        Role::RightShin => (Shank, Side::Right, 1.0),
        Role::LeftFoot => (Foot, Side::Left, 1.0),
        Role::RightFoot => (Foot, Side::Right, 1.0),
    };
    (SegmentSlot { segment, side }, share)
}

/// One row of de Leva's Table 4, as printed (mm and %).
#[derive(Clone, Copy, Debug)]
struct TableRow {
    /// Segment length, mm.
    length_mm: f64,
    /// Mass, % of body mass.
    mass_percent: f64,
    /// Centre of mass from the segment's origin, % of its length.
    com_percent: f64,
    /// Radius of gyration about the sagittal (antero-posterior) axis, % of length.
    r_sagittal_percent: f64,
    /// Radius of gyration about the transverse (medio-lateral) axis, % of length.
    r_transverse_percent: f64,
    /// Radius of gyration about the long axis, % of length.
    r_longitudinal_percent: f64,
}

const fn row(l: f64, m: f64, c: f64, s: f64, t: f64, lo: f64) -> TableRow {
    TableRow {
        length_mm: l,
        mass_percent: m,
        com_percent: c,
        r_sagittal_percent: s,
        r_transverse_percent: t,
        r_longitudinal_percent: lo,
    }
}

/// Stature of de Leva's male and female samples, mm.
const MALE_STATURE_MM: f64 = 1741.0;
const FEMALE_STATURE_MM: f64 = 1735.0;

/// de Leva (1996) Table 4, male, in [`Segment::ALL`] order.
const MALE: [TableRow; 10] = [
    row(242.9, 6.94, 50.02, 30.3, 31.5, 26.1), // head+neck, VERT → CERV
    row(170.7, 15.96, 29.99, 71.6, 45.4, 65.9), // upper trunk, SUPR → XYPH
    row(215.5, 16.33, 45.02, 48.2, 38.3, 46.8), // middle trunk, XYPH → OMPH
    row(145.7, 11.17, 61.15, 61.5, 55.1, 58.7), // lower trunk, OMPH → MIDH
    row(281.7, 2.71, 57.72, 28.5, 26.9, 15.8), // upper arm, SJC → EJC
    row(268.9, 1.62, 45.74, 27.6, 26.5, 12.1), // forearm, EJC → WJC
    row(86.2, 0.61, 79.00, 62.8, 51.3, 40.1),  // hand, WJC → MET3
    row(422.2, 14.16, 40.95, 32.9, 32.9, 14.9), // thigh, HJC → KJC
    row(434.0, 4.33, 44.59, 25.5, 24.9, 10.3), // shank, KJC → LMAL
    row(258.1, 1.37, 44.15, 25.7, 24.5, 12.4), // foot, HEEL → TTIP
];

/// de Leva (1996) Table 4, female, in [`Segment::ALL`] order.
const FEMALE: [TableRow; 10] = [
    row(243.7, 6.68, 48.41, 27.1, 29.5, 26.1),
    row(142.5, 15.45, 20.77, 74.6, 50.2, 71.8),
    row(205.3, 14.65, 45.12, 43.3, 35.4, 41.5),
    row(181.5, 12.47, 49.20, 43.3, 40.2, 44.4),
    row(275.1, 2.55, 57.54, 27.8, 26.0, 14.8),
    row(264.3, 1.38, 45.59, 26.1, 25.7, 9.4),
    row(78.0, 0.56, 74.74, 53.1, 45.4, 33.5),
    row(368.5, 14.78, 36.12, 36.9, 36.4, 16.2),
    row(432.3, 4.81, 44.16, 27.1, 26.7, 9.3),
    row(228.3, 1.29, 40.14, 29.9, 27.9, 13.9),
];

/// Parameters of one segment, as fractions (dimensionless).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentParameters {
    /// Length, fraction of stature.
    pub length_per_stature: f64,
    /// Mass, fraction of body mass (the 10 segments of a figure, paired ones counted
    /// twice, sum to 1).
    pub mass_fraction: f64,
    /// Centre of mass from the segment's origin, fraction of its length.
    pub com_from_origin: f64,
    /// Radius of gyration about the sagittal (antero-posterior) axis, fraction of length.
    pub r_sagittal: f64,
    /// Radius of gyration about the transverse (medio-lateral) axis, fraction of length.
    pub r_transverse: f64,
    /// Radius of gyration about the long axis, fraction of length.
    pub r_longitudinal: f64,
}

fn parameters(r: &TableRow, stature_mm: f64) -> SegmentParameters {
    SegmentParameters {
        length_per_stature: r.length_mm / stature_mm,
        mass_fraction: r.mass_percent / 100.0,
        com_from_origin: r.com_percent / 100.0,
        r_sagittal: r.r_sagittal_percent / 100.0,
        r_transverse: r.r_transverse_percent / 100.0,
        r_longitudinal: r.r_longitudinal_percent / 100.0,
    }
}

/// de Leva's male parameters of `s`.
pub fn male(s: Segment) -> SegmentParameters {
    parameters(&MALE[s as usize], MALE_STATURE_MM)
}

/// de Leva's female parameters of `s`.
pub fn female(s: Segment) -> SegmentParameters {
    parameters(&FEMALE[s as usize], FEMALE_STATURE_MM)
}

/// The parameters jostle uses: the mean of de Leva's male and female values, mass
/// fractions rescaled so the whole figure sums to exactly 1 (the printed percentages sum
/// to 100.00 and 99.99).
pub fn averaged(s: Segment) -> SegmentParameters {
    let (m, f) = (male(s), female(s));
    let mean = |a: f64, b: f64| (a + b) / 2.0;
    let total: f64 = Segment::ALL
        .iter()
        .map(|&x| {
            let k = if x.is_paired() { 2.0 } else { 1.0 };
            k * mean(male(x).mass_fraction, female(x).mass_fraction)
        })
        .sum();
    SegmentParameters {
        length_per_stature: mean(m.length_per_stature, f.length_per_stature),
        mass_fraction: mean(m.mass_fraction, f.mass_fraction) / total,
        com_from_origin: mean(m.com_from_origin, f.com_from_origin),
        r_sagittal: mean(m.r_sagittal, f.r_sagittal),
        r_transverse: mean(m.r_transverse, f.r_transverse),
        r_longitudinal: mean(m.r_longitudinal, f.r_longitudinal),
    }
}

/// Mean leg length (hip → knee → ankle joint centres), fraction of stature: thigh plus
/// shank of the averaged table (0.477).
pub fn leg_length_per_stature() -> f64 {
    averaged(Segment::Thigh).length_per_stature + averaged(Segment::Shank).length_per_stature
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_table_sums_to_the_whole_body() {
        for table in [male, female, averaged] {
            let total: f64 = Segment::ALL
                .iter()
                .map(|&s| table(s).mass_fraction * if s.is_paired() { 2.0 } else { 1.0 })
                .sum();
            assert!((total - 1.0).abs() < 2e-4, "{total}");
        }
        let total: f64 = SegmentSlot::all()
            .iter()
            .map(|s| averaged(s.segment).mass_fraction)
            .sum();
        assert!((total - 1.0).abs() < 1e-12);
        // the three trunk parts make de Leva's whole trunk (43.46 % male, 42.57 % female)
        let trunk = |t: fn(Segment) -> SegmentParameters| {
            t(Segment::UpperTrunk).mass_fraction
                + t(Segment::MiddleTrunk).mass_fraction
                + t(Segment::LowerTrunk).mass_fraction
        };
        assert!((trunk(male) - 0.4346).abs() < 1e-9);
        assert!((trunk(female) - 0.4257).abs() < 1e-9);
    }

    #[test]
    fn averaged_values_by_hand() {
        let t = averaged(Segment::Thigh);
        assert!((t.length_per_stature - (422.2 / 1741.0 + 368.5 / 1735.0) / 2.0).abs() < 1e-12);
        assert!((t.mass_fraction - 0.1447 / 0.99995).abs() < 1e-9);
        assert!((t.com_from_origin - 0.38535).abs() < 1e-12);
        let h = averaged(Segment::HeadNeck);
        assert!((h.mass_fraction - 0.0681 / 0.99995).abs() < 1e-9);
        assert!((leg_length_per_stature() - 0.47667).abs() < 1e-4);
        // every averaged mass fraction lies within 9 % of both tables
        for s in Segment::ALL {
            let a = averaged(s).mass_fraction;
            for t in [male(s), female(s)] {
                assert!((a / t.mass_fraction - 1.0).abs() < 0.09, "{s:?}");
            }
        }
    }

    #[test]
    fn table_radii_give_physical_inertia() {
        // principal moments ∝ r²: each at most the sum of the other two
        for table in [male, female, averaged] {
            for s in Segment::ALL {
                let p = table(s);
                let m = [
                    p.r_sagittal.powi(2),
                    p.r_transverse.powi(2),
                    p.r_longitudinal.powi(2),
                ];
                for k in 0..3 {
                    assert!(m[k] <= m[(k + 1) % 3] + m[(k + 2) % 3], "{s:?}");
                }
            }
        }
    }

    #[test]
    fn roles_cover_each_segment_once() {
        for slot in SegmentSlot::all() {
            let share: f64 = Role::ALL
                .iter()
                .map(|&r| segment_of(r))
                .filter(|(s, _)| *s == slot)
                .map(|(_, k)| k)
                .sum();
            assert!((share - 1.0).abs() < 1e-12, "{}: {share}", slot.name());
        }
    }
}
