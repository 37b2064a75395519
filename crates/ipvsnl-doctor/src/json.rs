//! The report as JSON for programs: serde `Serialize` impls that add the
//! verdicts computed from the data (`usable`, `matches_kernel`,
//! `errno_name`, `family_registered`), and the forms the fields take
//! (paths as text, the capability mask in hexadecimal). The matching
//! `Deserialize` derives are on the types in `report.rs`; they skip the
//! computed fields, which the methods of the types give back.

use std::path::Path;

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::load::errno_name;
use crate::report::{
    LoadAttempt, ModuleReport, ModulesTree, ProbeOutcome, Report, Sysctl, SysctlValue,
};

impl Report {
    /// The report as a JSON document (pretty-printed, ending in a newline).
    /// [`Report`] is `Serialize` and `Deserialize`: a program reading the
    /// document gets the type back.
    ///
    /// ```no_run
    /// let report = ipvsnl_doctor::diagnose(&ipvsnl_doctor::Options::new());
    /// let json = report.to_json();
    /// let read: ipvsnl_doctor::Report = serde_json::from_str(&json).unwrap();
    /// assert_eq!(read, report);
    /// ```
    pub fn to_json(&self) -> String {
        // Every map key is a string and every value serializes: writing
        // to memory cannot fail.
        let mut out = serde_json::to_string_pretty(self).expect("the report serializes");
        out.push('\n');
        out
    }
}

/// A path as text (lossily, as it is displayed: JSON strings are UTF-8).
pub(crate) fn path_text<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&path.display())
}

struct PathText<'a>(&'a Path);

impl Serialize for PathText<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        path_text(self.0, s)
    }
}

impl Serialize for Report {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut doc = s.serialize_struct("Report", 15)?;
        doc.serialize_field("usable", &self.usable())?;
        doc.serialize_field("kernel_release", &self.kernel_release)?;
        doc.serialize_field("namespace", &self.namespace.as_deref().map(PathText))?;
        doc.serialize_field("namespace_error", &self.namespace_error)?;
        doc.serialize_field("probe", &self.probe)?;
        doc.serialize_field("modules_tree", &self.modules_tree)?;
        doc.serialize_field("proc_modules_readable", &self.proc_modules_readable)?;
        doc.serialize_field("ip_vs_loaded_at_start", &self.ip_vs_loaded_at_start)?;
        doc.serialize_field("ip_vs", &self.ip_vs)?;
        doc.serialize_field("schedulers", &self.schedulers)?;
        doc.serialize_field("nf_conntrack", &self.nf_conntrack)?;
        doc.serialize_field("sysctls", &self.sysctls)?;
        doc.serialize_field("privileges", &self.privileges)?;
        doc.serialize_field("load_attempts", &self.load_attempts)?;
        doc.serialize_field("problems", &self.problems)?;
        doc.end()
    }
}

impl Serialize for ModuleReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut doc = s.serialize_struct("ModuleReport", 8)?;
        doc.serialize_field("name", &self.name)?;
        doc.serialize_field("state", &self.state)?;
        doc.serialize_field("usable", &self.usable())?;
        doc.serialize_field("file", &self.file)?;
        doc.serialize_field("depends_on", &self.depends_on)?;
        doc.serialize_field("missing_dependencies", &self.missing_dependencies)?;
        doc.serialize_field("loaded_by_probe", &self.loaded_by_probe)?;
        doc.serialize_field("loaded_by_doctor", &self.loaded_by_doctor)?;
        doc.end()
    }
}

impl Serialize for ModulesTree {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut doc = s.serialize_struct("ModulesTree", 8)?;
        doc.serialize_field("root", &PathText(&self.root))?;
        doc.serialize_field("release_dir", &PathText(&self.release_dir))?;
        doc.serialize_field("release_dir_exists", &self.release_dir_exists)?;
        doc.serialize_field("releases_present", &self.releases_present)?;
        doc.serialize_field("has_modules_dep", &self.has_modules_dep)?;
        doc.serialize_field("has_modules_builtin", &self.has_modules_builtin)?;
        doc.serialize_field("foreign_vermagic_releases", &self.foreign_vermagic_releases)?;
        doc.serialize_field("matches_kernel", &self.matches_kernel())?;
        doc.end()
    }
}

impl Serialize for ProbeOutcome {
    /// `result` names the outcome, `family_registered` says whether the
    /// "IPVS" family is known to be there (null: not known), and the
    /// outcome's own fields follow.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let family_registered = match self {
            ProbeOutcome::Reachable { .. } | ProbeOutcome::PermissionDenied => Some(true),
            ProbeOutcome::NotRegistered => Some(false),
            ProbeOutcome::Skipped | ProbeOutcome::Failed { .. } => None,
        };
        let mut doc = s.serialize_map(None)?;
        let result = match self {
            ProbeOutcome::Skipped => "skipped",
            ProbeOutcome::Reachable { .. } => "reachable",
            ProbeOutcome::NotRegistered => "not_registered",
            ProbeOutcome::PermissionDenied => "permission_denied",
            ProbeOutcome::Failed { .. } => "failed",
        };
        doc.serialize_entry("result", result)?;
        doc.serialize_entry("family_registered", &family_registered)?;
        match self {
            ProbeOutcome::Reachable {
                version,
                conn_tab_size,
            } => {
                doc.serialize_entry("version", version)?;
                doc.serialize_entry("conn_tab_size", conn_tab_size)?;
            }
            ProbeOutcome::Failed { errno, message } => {
                doc.serialize_entry("errno", errno)?;
                doc.serialize_entry("message", message)?;
            }
            _ => {}
        }
        doc.end()
    }
}

impl Serialize for Sysctl {
    /// `value` is the value when there is one; `note` says otherwise why
    /// there is none (`absent: ...`, `unreadable: ...`).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (value, note) = match &self.value {
            SysctlValue::Value(v) => (Some(v.clone()), None),
            SysctlValue::Absent(why) => (None, Some(format!("{ABSENT}{why}"))),
            SysctlValue::Unreadable(why) => (None, Some(format!("{UNREADABLE}{why}"))),
        };
        let mut doc = s.serialize_struct("Sysctl", 5)?;
        doc.serialize_field("name", &self.name)?;
        doc.serialize_field("value", &value)?;
        doc.serialize_field("note", &note)?;
        doc.serialize_field("recommended", &self.recommended)?;
        doc.serialize_field("why", &self.why)?;
        doc.end()
    }
}

const ABSENT: &str = "absent: ";
const UNREADABLE: &str = "unreadable: ";

/// A sysctl as the JSON has it, read back into a [`Sysctl`].
#[derive(Deserialize)]
pub(crate) struct SysctlJson {
    name: String,
    value: Option<String>,
    note: Option<String>,
    recommended: Option<String>,
    why: String,
}

impl TryFrom<SysctlJson> for Sysctl {
    type Error = String;

    fn try_from(json: SysctlJson) -> Result<Self, String> {
        let value = match (json.value, json.note) {
            (Some(v), _) => SysctlValue::Value(v),
            (None, Some(note)) => {
                if let Some(why) = note.strip_prefix(ABSENT) {
                    SysctlValue::Absent(why.to_owned())
                } else if let Some(why) = note.strip_prefix(UNREADABLE) {
                    SysctlValue::Unreadable(why.to_owned())
                } else {
                    return Err(format!(
                        "sysctl {}: note {note:?} is neither \"{ABSENT}...\" nor \"{UNREADABLE}...\"",
                        json.name
                    ));
                }
            }
            (None, None) => {
                return Err(format!("sysctl {}: neither a value nor a note", json.name))
            }
        };
        Ok(Sysctl {
            name: json.name,
            value,
            recommended: json.recommended,
            why: json.why,
        })
    }
}

impl Serialize for LoadAttempt {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut doc = s.serialize_struct("LoadAttempt", 7)?;
        doc.serialize_field("module", &self.module)?;
        doc.serialize_field("command", &self.command)?;
        doc.serialize_field("exit_status", &self.exit_status)?;
        doc.serialize_field("success", &self.success)?;
        doc.serialize_field("errno", &self.errno)?;
        doc.serialize_field("errno_name", &self.errno.and_then(errno_name))?;
        doc.serialize_field("output", &self.output)?;
        doc.end()
    }
}

/// The capability mask as 16 hexadecimal digits (as `/proc/self/status`
/// shows it), or null.
pub(crate) mod hex_mask {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(mask: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match mask {
            Some(m) => s.collect_str(&format_args!("{m:016x}")),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(text) => u64::from_str_radix(&text, 16).map(Some).map_err(|_| {
                serde::de::Error::custom(format!("cap_eff {text:?} is not a hexadecimal mask"))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modfile::Compression;
    use crate::report::{ModuleState, Privileges, ProblemKind, Severity};

    fn text<T: Serialize>(value: T) -> String {
        serde_json::to_string(&value).unwrap()
    }

    /// The words in the JSON are the ones `as_str` gives (and the text
    /// report prints), and they read back.
    #[test]
    fn words_are_the_as_str_words() {
        use ProblemKind as K;
        let kinds = [
            K::UnknownRelease,
            K::ModulesDirMissing,
            K::ModulesDepMissing,
            K::ModuleForOtherKernel,
            K::IpvsUnavailable,
            K::IpvsNotLoaded,
            K::FamilyNotRegistered,
            K::SchedulerUnavailable,
            K::DependencyMissing,
            K::ConntrackUnavailable,
            K::NoCapNetAdmin,
            K::NotInitialUserNamespace,
            K::PermissionDenied,
            K::ProbeFailed,
            K::LoadFailed,
            K::NamespaceUnreadable,
            K::SysctlValue,
        ];
        for k in kinds {
            assert_eq!(text(k), format!("\"{}\"", k.as_str()));
            assert_eq!(serde_json::from_str::<K>(&text(k)).unwrap(), k);
        }
        for s in [
            ModuleState::BuiltIn,
            ModuleState::Loaded,
            ModuleState::OnDisk,
            ModuleState::Missing,
        ] {
            assert_eq!(text(s), format!("\"{}\"", s.as_str()));
        }
        for s in [Severity::Error, Severity::Warning] {
            assert_eq!(text(s), format!("\"{}\"", s.as_str()));
        }
        for c in [
            Compression::None,
            Compression::Xz,
            Compression::Zstd,
            Compression::Gzip,
        ] {
            assert_eq!(text(c), format!("\"{}\"", c.as_str()));
        }
    }

    #[test]
    fn the_capability_mask_is_hexadecimal_both_ways() {
        let privileges = Privileges {
            euid: Some(0),
            cap_eff: Some(0x1000),
            cap_net_admin: Some(true),
            initial_user_namespace: None,
        };
        let json = text(&privileges);
        assert!(json.contains(r#""cap_eff":"0000000000001000""#), "{json}");
        assert_eq!(
            serde_json::from_str::<Privileges>(&json).unwrap(),
            privileges
        );
        let bad = json.replace("0000000000001000", "zz");
        let e = serde_json::from_str::<Privileges>(&bad).unwrap_err();
        assert!(
            e.to_string().contains("\"zz\" is not a hexadecimal mask"),
            "{e}"
        );
    }

    #[test]
    fn a_sysctl_without_a_value_says_why_both_ways() {
        for value in [
            SysctlValue::Value("1".into()),
            SysctlValue::Absent("no such file".into()),
            SysctlValue::Unreadable("permission denied".into()),
        ] {
            let sysctl = Sysctl {
                name: "net.ipv4.vs.conntrack".into(),
                value,
                recommended: Some("1".into()),
                why: "NAT needs it".into(),
            };
            let json = text(&sysctl);
            assert_eq!(
                serde_json::from_str::<Sysctl>(&json).unwrap(),
                sysctl,
                "{json}"
            );
        }
        let odd = r#"{"name":"x","value":null,"note":"gone","recommended":null,"why":""}"#;
        let e = serde_json::from_str::<Sysctl>(odd).unwrap_err().to_string();
        assert!(e.contains("sysctl x: note \"gone\""), "{e}");
    }

    #[test]
    fn each_probe_outcome_reads_back() {
        for probe in [
            ProbeOutcome::Skipped,
            ProbeOutcome::Reachable {
                version: "1.2.1".into(),
                conn_tab_size: 4096,
            },
            ProbeOutcome::NotRegistered,
            ProbeOutcome::PermissionDenied,
            ProbeOutcome::Failed {
                errno: Some(5),
                message: "I/O error".into(),
            },
        ] {
            let json = text(&probe);
            assert_eq!(
                serde_json::from_str::<ProbeOutcome>(&json).unwrap(),
                probe,
                "{json}"
            );
        }
        assert_eq!(
            text(ProbeOutcome::NotRegistered),
            r#"{"result":"not_registered","family_registered":false}"#
        );
    }
}
