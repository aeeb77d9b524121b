//! The crates a tree declares: package names and off-convention crate
//! roots from every `Cargo.toml`, on the head side and, for the files a
//! diff deletes or renames, on the base side.

use std::collections::HashSet;

use super::index::{self, Layout, Manifest};
use super::{Blobs, FileEntry, Impact, Skipped};

/// Rust package names from every `Cargo.toml` with a `[package]` table.
pub(super) fn manifests(
    head_files: &[FileEntry],
    blobs: &dyn Blobs,
    impact: &mut Impact,
) -> Vec<Manifest> {
    let mut out = Vec::new();
    for f in head_files {
        let Some(dir) = manifest_dir(&f.path) else {
            continue;
        };
        match read_manifest(blobs, &f.blob, dir) {
            Ok(Some(m)) => out.push(m),
            Ok(None) => {}
            Err(e) => impact.skipped.push(Skipped {
                path: f.path.clone(),
                reason: format!("manifest unreadable, crate boundaries guessed: {e}"),
            }),
        }
    }
    out
}

/// The layout of the base side of `diff`, where deleted and renamed files
/// had their module paths: the head tree's paths with the diff undone, and
/// the manifests the diff touched read from their base blobs.
pub(super) fn base_layout(
    head_files: &[FileEntry],
    diff: &crate::git::Diff,
    manifests: &[Manifest],
    blobs: &dyn Blobs,
    impact: &mut Impact,
) -> Layout {
    use crate::git::FileStatus;
    let mut paths: HashSet<&str> = head_files.iter().map(|f| f.path.as_str()).collect();
    let mut touched_dirs: HashSet<&str> = HashSet::new();
    let mut base_manifests = Vec::new();
    for fd in &diff.files {
        let old_path = fd.old_path.as_deref().unwrap_or(&fd.path);
        match fd.status {
            FileStatus::Added | FileStatus::Copied => {
                paths.remove(fd.path.as_str());
            }
            FileStatus::Renamed => {
                paths.remove(fd.path.as_str());
                paths.insert(old_path);
            }
            FileStatus::Deleted => {
                paths.insert(fd.path.as_str());
            }
            FileStatus::Modified | FileStatus::TypeChange => {}
        }
        touched_dirs.extend(manifest_dir(&fd.path));
        let (Some(dir), Some(blob)) = (manifest_dir(old_path), &fd.old_blob) else {
            continue;
        };
        touched_dirs.insert(dir);
        match read_manifest(blobs, blob, dir) {
            Ok(Some(m)) => base_manifests.push(m),
            Ok(None) => {}
            Err(e) => impact.skipped.push(Skipped {
                path: format!("{old_path} (base side)"),
                reason: format!("manifest unreadable, crate boundaries guessed: {e}"),
            }),
        }
    }
    base_manifests.extend(
        manifests
            .iter()
            .filter(|m| !touched_dirs.contains(m.dir.as_str()))
            .cloned(),
    );
    Layout::new(paths, &base_manifests)
}

/// The directory of a `Cargo.toml` ("" at the root), or None for any other path.
fn manifest_dir(path: &str) -> Option<&str> {
    match path.strip_suffix("Cargo.toml") {
        Some("") => Some(""),
        Some(d) if d.ends_with('/') => Some(d.trim_end_matches('/')),
        _ => None,
    }
}

/// The package a manifest blob in `dir` declares: its name and the crate
/// roots it places outside Cargo's conventions; None for a workspace
/// manifest.
pub(super) fn read_manifest(
    blobs: &dyn Blobs,
    blob: &str,
    dir: &str,
) -> Result<Option<Manifest>, String> {
    let text = blobs
        .read(blob)
        .and_then(|b| String::from_utf8(b).map_err(|e| e.to_string()))?;
    let table = toml::from_str::<toml::Table>(&text).map_err(|e| e.to_string())?;
    let Some(name) = table
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
    else {
        return Ok(None);
    };
    let path_of = |target: &toml::Value| -> Option<String> {
        let path = target.get("path")?.as_str()?.trim_start_matches("./");
        (!index::Root::conventional(path)).then(|| path.to_string())
    };
    let mut roots = Vec::new();
    if let Some(path) = table.get("lib").and_then(path_of) {
        roots.push(index::Root {
            path,
            kind: index::RootKind::Lib,
        });
    }
    let bins = table.get("bin").and_then(|b| b.as_array());
    for bin in bins.into_iter().flatten() {
        if let Some(path) = path_of(bin) {
            let stem = path
                .rsplit('/')
                .next()
                .unwrap_or(&path)
                .trim_end_matches(".rs");
            let bin_name = bin.get("name").and_then(|n| n.as_str()).unwrap_or(stem);
            roots.push(index::Root {
                kind: index::RootKind::Bin(bin_name.to_string()),
                path,
            });
        }
    }
    Ok(Some(Manifest {
        dir: dir.to_string(),
        name: name.to_string(),
        roots,
    }))
}
