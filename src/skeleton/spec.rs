//! Skeleton specs (`skeletons/*.toml`): which clip joint plays which role, joint types,
//! radii, forced merges. Built-in specs are compiled in; users can pass their own file.

use super::roles::{JointType, Role};
use crate::mocap::Clip;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A skeleton spec as read from TOML.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkeletonSpec {
    /// Short identifier (`cmu31`).
    pub name: String,
    /// What family of files it describes.
    #[serde(default)]
    pub description: String,
    /// Role name → joint name in the clip (prefixes up to the last `:` are ignored when matching).
    pub roles: BTreeMap<String, String>,
    /// Role or joint name → `ball` | `hinge` | `universal` (overrides the role defaults).
    #[serde(default)]
    pub joint_types: BTreeMap<String, JointType>,
    /// Role or joint name → capsule radius in metres for a 1.75 m figure (scaled with
    /// √stature). Overrides the radius fitted to the body's mass; the mass stays the
    /// table's.
    #[serde(default)]
    pub radius: BTreeMap<String, f64>,
    /// Joint names merged into their parent body regardless of size.
    #[serde(default)]
    pub merge: Vec<String>,
}

/// The specs shipped in `skeletons/`.
pub const BUILTIN_SPECS: [(&str, &str); 8] = [
    ("cmu31", include_str!("../../skeletons/cmu31.toml")),
    ("mixamo", include_str!("../../skeletons/mixamo.toml")),
    ("bandai", include_str!("../../skeletons/bandai.toml")),
    ("iclone_cc", include_str!("../../skeletons/iclone_cc.toml")),
    ("biovision", include_str!("../../skeletons/biovision.toml")),
    // MocapBank's trunk is two segments, Chest (the abdomen) and Chest2 (the chest): with
    // `biovision` alone a "chest" ball struck the lower one near its joint
    (
        "biovision_chest2",
        include_str!("../../skeletons/biovision_chest2.toml"),
    ),
    ("daz_cmu", include_str!("../../skeletons/daz_cmu.toml")),
    ("pymo_av", include_str!("../../skeletons/pymo_av.toml")),
];

/// Error in a skeleton spec file.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// TOML syntax or schema error.
    #[error("skeleton spec {file}: {message}")]
    Invalid {
        /// Spec file name.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// Strip an exporter namespace (`mixamorig:Hips` → `Hips`).
pub fn base_name(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

impl SkeletonSpec {
    /// Parse a spec from TOML text; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<Self, SpecError> {
        let spec: SkeletonSpec = toml::from_str(text).map_err(|e| SpecError::Invalid {
            file: file.into(),
            message: e.to_string(),
        })?;
        for role in spec.roles.keys() {
            if Role::from_name(role).is_none() {
                let valid: Vec<&str> = Role::ALL.iter().map(|r| r.name()).collect();
                return Err(SpecError::Invalid {
                    file: file.into(),
                    message: format!("unknown role `{role}`; valid roles: {}", valid.join(", ")),
                });
            }
        }
        for (k, r) in &spec.radius {
            if !(r.is_finite() && *r > 0.0) {
                return Err(SpecError::Invalid {
                    file: file.into(),
                    message: format!("radius of `{k}` must be a positive number of metres"),
                });
            }
        }
        Ok(spec)
    }

    /// The built-in specs, parsed.
    pub fn builtin() -> Vec<SkeletonSpec> {
        BUILTIN_SPECS
            .iter()
            .filter_map(|(name, text)| SkeletonSpec::from_toml(text, name).ok())
            .collect()
    }

    /// Map roles to clip joint indices; `None` unless every joint the spec names exists.
    pub fn match_clip(&self, clip: &Clip) -> Option<BTreeMap<Role, usize>> {
        let mut out = BTreeMap::new();
        for (role, joint) in &self.roles {
            let role = Role::from_name(role)?;
            let idx = clip
                .joints
                .iter()
                .position(|j| base_name(&j.name) == base_name(joint))?;
            out.insert(role, idx);
        }
        Some(out)
    }

    /// Joint type configured for a role or joint name, if any.
    pub fn joint_type_for(&self, role: Option<Role>, joint_name: &str) -> Option<JointType> {
        self.joint_types
            .get(base_name(joint_name))
            .or_else(|| role.and_then(|r| self.joint_types.get(r.name())))
            .copied()
    }

    /// Radius configured for a role or joint name (1.75 m figure), if any.
    pub fn radius_for(&self, role: Option<Role>, joint_name: &str) -> Option<f64> {
        self.radius
            .get(base_name(joint_name))
            .or_else(|| role.and_then(|r| self.radius.get(r.name())))
            .copied()
    }

    /// True if the spec forces this joint to merge into its parent.
    pub fn forces_merge(&self, joint_name: &str) -> bool {
        self.merge
            .iter()
            .any(|m| base_name(m) == base_name(joint_name))
    }
}

/// Pick the built-in spec that names the most roles among those that fully match the clip.
pub fn choose_spec(specs: &[SkeletonSpec], clip: &Clip) -> Option<(usize, BTreeMap<Role, usize>)> {
    specs
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.match_clip(clip).map(|m| (i, m)))
        // most roles wins; on a tie, the spec listed first
        .max_by_key(|(i, m)| (m.len(), std::cmp::Reverse(*i)))
}
