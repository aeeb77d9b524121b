//! Which spec and PRD a spec review reads, and reading them.
//!
//! The spec is `--spec`, else the feature's `spec_path` (under
//! `.speed/shared/features/<feature>/` or `.speed/features/<feature>/`),
//! else `specs/product/<feature>.md`. The PRD is `--prd`, else the
//! feature's `prd.md` in either layout, else none. Both are drafts, so they
//! are read from the working tree; with `--rev REF`, at that commit. Paths
//! must stay inside the repository (a link leading out of it is refused),
//! files are capped in size, must be UTF-8, and are redacted of secrets
//! where they are read, so nothing later can see one.

use std::path::{Component, Path};

use super::{Error, Target};
use crate::git::Repository;
use crate::secrets::{self, Context, Redaction};
use crate::specs::{self, Document};

/// A spec or a PRD larger than this is refused: no spec review needs one.
pub const MAX_DOCUMENT_BYTES: usize = 2 * 1024 * 1024;

/// Which layout of the orchestrator the feature lives in: it decides the
/// events folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `.speed/shared/…`, the multi-player layout.
    Shared,
    /// `.speed/…`.
    Single,
}

/// The feature and the files a review reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub feature: String,
    /// Relative to the repository root.
    pub spec_path: String,
    pub prd_path: Option<String>,
    pub layout: Layout,
}

/// Where files are read: the working tree, or a commit.
pub enum Place<'r> {
    WorkingTree(&'r Path),
    Commit {
        repo: &'r Repository,
        /// The full id.
        commit: String,
        /// As the user wrote it, for messages.
        rev: String,
    },
}

impl Place<'_> {
    fn describe(&self, path: &str) -> String {
        match self {
            Place::WorkingTree(_) => format!("{path} in the working tree"),
            Place::Commit { rev, .. } => format!("{path} at {rev}"),
        }
    }

    /// The file's bytes; None when there is no such file.
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let bytes = match self {
            Place::Commit { repo, commit, .. } => repo.read_file(commit, path)?,
            Place::WorkingTree(root) => read_inside(root, path)?,
        };
        match bytes {
            Some(b) if b.len() > MAX_DOCUMENT_BYTES => Err(Error::Input(format!(
                "{} is {} bytes; a spec review reads documents of at most {MAX_DOCUMENT_BYTES}",
                self.describe(path),
                b.len()
            ))),
            other => Ok(other),
        }
    }

    fn exists(&self, path: &str) -> Result<bool, Error> {
        Ok(self.read(path)?.is_some())
    }
}

/// A working-tree file, refused when a link takes it out of `root`.
fn read_inside(root: &Path, path: &str) -> Result<Option<Vec<u8>>, Error> {
    let full = root.join(path);
    let real = match std::fs::canonicalize(&full) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::Input(format!("cannot read {path}: {e}"))),
    };
    let real_root = std::fs::canonicalize(root)
        .map_err(|e| Error::Input(format!("cannot read {}: {e}", root.display())))?;
    if !real.starts_with(&real_root) {
        return Err(Error::Input(format!(
            "{path} leads out of the repository (to {}): a spec review reads only files inside it",
            real.display()
        )));
    }
    if !real.is_file() {
        return Ok(None);
    }
    std::fs::read(&real)
        .map(Some)
        .map_err(|e| Error::Input(format!("cannot read {path}: {e}")))
}

/// A feature name becomes a file name: letters, digits, `.`, `-`, `_`, at
/// most 100, not starting with a dot.
pub fn valid_feature(name: &str) -> bool {
    (1..=100).contains(&name.len())
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// A path relative to the repository root that stays inside it.
fn relative_inside(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

/// With neither FEATURE nor --spec: the feature an `active_feature` file
/// names (either layout), when they name one.
fn active_feature(root: &Path) -> Result<String, Error> {
    let active = crate::tasks::Store::open(root)
        .active_features()
        .map_err(|e| Error::Input(format!("cannot read which feature is active: {e}")))?;
    match &active[..] {
        [feature] => Ok(feature.clone()),
        [] => Err(Error::Input(
            "name the feature whose spec to review, or the spec with --spec PATH (no .speed/active_feature names one)".to_string(),
        )),
        several => Err(Error::Input(format!(
            ".speed/active_feature and .speed/shared/active_feature name different features ({}): name the feature whose spec to review",
            several.join(" and ")
        ))),
    }
}

/// Finds the feature, the spec and the PRD. `root` is the working tree,
/// where the layout is read whatever `place` is.
pub fn locate(root: &Path, target: &Target, place: &Place<'_>) -> Result<Located, Error> {
    let feature = match (&target.feature, &target.spec) {
        (Some(feature), _) => feature.clone(),
        (None, Some(spec)) => Path::new(spec)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        (None, None) => active_feature(root)?,
    };
    if !valid_feature(&feature) {
        return Err(Error::Input(format!(
            "{feature:?} cannot name a spec review session (letters, digits, '.', '-' and '_'; not starting with '.'): give the feature's name as FEATURE"
        )));
    }
    let folders = [
        (Layout::Shared, format!(".speed/shared/features/{feature}")),
        (Layout::Single, format!(".speed/features/{feature}")),
    ];
    let layout = folders
        .iter()
        .find(|(_, folder)| root.join(folder).is_dir())
        .map(|(layout, _)| *layout)
        .unwrap_or(if root.join(".speed/shared").is_dir() {
            Layout::Shared
        } else {
            Layout::Single
        });
    let spec_path = match &target.spec {
        Some(spec) => spec.clone(),
        None => feature_spec(&feature, &folders, place)?,
    };
    if !relative_inside(&spec_path) {
        return Err(Error::Input(format!(
            "the spec {spec_path} is not inside the repository: a spec review reads and revises a spec of the repository"
        )));
    }
    let prd_path = match &target.prd {
        Some(prd) if !relative_inside(prd) => {
            return Err(Error::Input(format!(
                "the PRD {prd} is not inside the repository"
            )));
        }
        Some(prd) => Some(prd.clone()),
        None => {
            let mut found = None;
            for (_, folder) in &folders {
                let path = format!("{folder}/prd.md");
                if place.exists(&path)? {
                    found = Some(path);
                    break;
                }
            }
            found
        }
    };
    Ok(Located {
        feature,
        spec_path,
        prd_path,
        layout,
    })
}

/// The feature's spec: its `spec_path` file, else the conventional path.
fn feature_spec(
    feature: &str,
    folders: &[(Layout, String)],
    place: &Place<'_>,
) -> Result<String, Error> {
    for (_, folder) in folders {
        let file = format!("{folder}/spec_path");
        if let Some(bytes) = place.read(&file)? {
            let text = String::from_utf8_lossy(&bytes);
            let path = text.lines().next().unwrap_or("").trim();
            let path = path.strip_prefix("./").unwrap_or(path);
            if path.is_empty() {
                return Err(Error::Input(format!("{} is empty", place.describe(&file))));
            }
            return Ok(path.to_string());
        }
    }
    let conventional = format!("specs/product/{feature}.md");
    if place.exists(&conventional)? {
        return Ok(conventional);
    }
    Err(Error::Input(format!(
        "no spec for feature {feature}: looked for {}, {} and {}; give it with --spec PATH",
        place.describe(&format!("{}/spec_path", folders[0].1)),
        place.describe(&format!("{}/spec_path", folders[1].1)),
        place.describe(&conventional)
    )))
}

/// The documents as a review uses them.
#[derive(Debug, Clone)]
pub struct Read {
    /// `sha256:…` of the spec as it is on disk (or at the commit).
    pub spec_hash: String,
    /// The spec, redacted, parsed into sections.
    pub spec: Document,
    pub prd: Option<Document>,
    /// What was redacted, in the spec and the PRD.
    pub redactions: Vec<Redaction>,
}

/// Reads and redacts the spec and the PRD.
pub fn read(located: &Located, place: &Place<'_>) -> Result<Read, Error> {
    let (spec_text, spec_hash) = text(place, &located.spec_path, "spec")?;
    let mut redactions = Vec::new();
    let spec = redact(&located.spec_path, &spec_text, &mut redactions);
    let prd = match &located.prd_path {
        Some(path) => {
            let (prd_text, _) = text(place, path, "PRD")?;
            Some(redact(path, &prd_text, &mut redactions))
        }
        None => None,
    };
    Ok(Read {
        spec_hash,
        spec: specs::parse(&located.spec_path, &spec),
        prd: prd.map(|text| specs::parse(located.prd_path.as_deref().unwrap_or(""), &text)),
        redactions,
    })
}

/// A document's text and hash; missing or not UTF-8 is an error naming it.
fn text(place: &Place<'_>, path: &str, what: &str) -> Result<(String, String), Error> {
    let bytes = place.read(path)?.ok_or_else(|| {
        Error::Input(format!(
            "the {what} {} does not exist",
            place.describe(path)
        ))
    })?;
    let hash = crate::digest::sha256(&bytes);
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::Input(format!(
            "the {what} {} is not UTF-8 text",
            place.describe(path)
        ))
    })?;
    Ok((text, hash))
}

fn redact(path: &str, text: &str, out: &mut Vec<Redaction>) -> String {
    let redacted = secrets::redact(text, Context::file(path, false));
    out.extend(redacted.found.iter().map(|(line, rule)| Redaction {
        rule: rule.to_string(),
        file: path.to_string(),
        line: *line,
    }));
    redacted.text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(feature: Option<&str>, spec: Option<&str>) -> Target {
        Target {
            feature: feature.map(str::to_string),
            spec: spec.map(str::to_string),
            prd: None,
            rev: None,
        }
    }

    fn write(root: &Path, path: &str, text: &str) {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }

    #[test]
    fn the_feature_names_its_spec_and_prd_in_either_layout() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            ".speed/shared/features/fines/spec_path",
            "./specs/tech/fines.md\n",
        );
        write(root, ".speed/shared/features/fines/prd.md", "- FR-1: x\n");
        let place = Place::WorkingTree(root);
        let got = locate(root, &target(Some("fines"), None), &place).unwrap();
        assert_eq!(got.spec_path, "specs/tech/fines.md");
        assert_eq!(
            got.prd_path.as_deref(),
            Some(".speed/shared/features/fines/prd.md")
        );
        assert_eq!(got.layout, Layout::Shared);

        write(root, "specs/product/loans.md", "# Loans\n");
        let got = locate(root, &target(Some("loans"), None), &place).unwrap();
        assert_eq!(got.spec_path, "specs/product/loans.md");
        assert_eq!(got.prd_path, None);
        // A multi-player repository keeps its events in the shared folder.
        assert_eq!(got.layout, Layout::Shared);

        let err = locate(root, &target(Some("nope"), None), &place).unwrap_err();
        assert!(
            err.to_string().contains("no spec for feature nope"),
            "{err}"
        );
    }

    #[test]
    fn a_spec_alone_names_the_feature_and_bad_names_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::WorkingTree(dir.path());
        let got = locate(
            dir.path(),
            &target(None, Some("docs/late-fines.md")),
            &place,
        )
        .unwrap();
        assert_eq!(got.feature, "late-fines");
        assert_eq!(got.layout, Layout::Single);
        for bad in ["../x", ".hidden", "a b"] {
            assert!(
                locate(dir.path(), &target(Some(bad), None), &place).is_err(),
                "{bad}"
            );
        }
        let err = locate(
            dir.path(),
            &target(Some("f"), Some("../outside.md")),
            &place,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("not inside the repository"),
            "{err}"
        );
    }

    #[test]
    fn documents_are_redacted_and_hashed_as_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let spec = "# S\n\nThe deploy key is AKIAIOSFODNN7EXAMPLQ today.\n";
        write(root, "s.md", spec);
        let located = Located {
            feature: "s".into(),
            spec_path: "s.md".into(),
            prd_path: None,
            layout: Layout::Single,
        };
        let read = read(&located, &Place::WorkingTree(root)).unwrap();
        assert_eq!(read.spec_hash, crate::digest::sha256_text(spec));
        assert!(!read.spec.text.contains("AKIA"), "{}", read.spec.text);
        assert_eq!(read.redactions[0].line, 3);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_repository_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "# S\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), dir.path().join("s.md"))
            .unwrap();
        let err = read_inside(dir.path(), "s.md").unwrap_err();
        assert!(
            err.to_string().contains("leads out of the repository"),
            "{err}"
        );
    }
}
