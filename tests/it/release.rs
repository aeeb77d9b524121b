//! The release path, as far as it runs here: `scripts/package.sh` packs
//! the binary as the release workflow does, `scripts/install.sh` installs
//! it from such a release (a local copy, `file://`) only when its SHA-256
//! matches, and the workflow's targets, the archive names and Cargo.toml's
//! `cargo binstall` metadata agree.

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGETS: &[&str] = &[
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// This machine's release target, as install.sh names it.
fn host_target() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("x86_64-unknown-linux-gnu"),
        ("linux", "aarch64") => Some("aarch64-unknown-linux-gnu"),
        ("macos", "x86_64") => Some("x86_64-apple-darwin"),
        ("macos", "aarch64") => Some("aarch64-apple-darwin"),
        _ => None,
    }
}

/// A release folder holding this machine's archive of the speed under
/// test, made by `scripts/package.sh`.
fn release(dir: &Path, target: &str) -> PathBuf {
    let (code, stdout, stderr) = run(Command::new(root().join("scripts/package.sh")).args([
        target,
        env!("CARGO_BIN_EXE_speed"),
        dir.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let archive = dir.join(format!("speed-{target}.tar.gz"));
    assert_eq!(stdout.trim(), archive.display().to_string());
    archive
}

fn install(dist: &Path, into: &Path) -> (i32, String, String) {
    run(Command::new("sh")
        .arg(root().join("scripts/install.sh"))
        .env("SPEED_DOWNLOAD_URL", format!("file://{}", dist.display()))
        .env("SPEED_INSTALL_DIR", into)
        .env_remove("SPEED_REPO"))
}

#[test]
fn the_install_script_installs_a_packed_release_and_checks_it_first() {
    let Some(target) = host_target() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    let archive = release(&dist, target);
    let sum = std::fs::read_to_string(dist.join(format!("speed-{target}.tar.gz.sha256"))).unwrap();
    assert!(
        sum.ends_with(&format!("  speed-{target}.tar.gz\n")),
        "{sum}"
    );

    let bin = tmp.path().join("bin");
    let (code, _, stderr) = install(&dist, &bin);
    assert_eq!(code, 0, "{stderr}");
    let (code, version, _) = run(Command::new(bin.join("speed")).arg("--version"));
    assert_eq!(code, 0);
    assert!(version.starts_with("speed "), "{version}");
    assert!(
        stderr.contains(&format!("installed {}", version.trim())),
        "{stderr}"
    );

    // An archive that is not the one published: nothing is installed.
    let mut bytes = std::fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&archive, bytes).unwrap();
    let elsewhere = tmp.path().join("other-bin");
    let (code, _, stderr) = install(&dist, &elsewhere);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("does not match its published SHA-256"),
        "{stderr}"
    );
    assert!(!elsewhere.join("speed").exists());
}

#[test]
fn the_install_script_refuses_to_guess_a_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(Command::new("sh")
        .arg(root().join("scripts/install.sh"))
        .env("SPEED_INSTALL_DIR", tmp.path())
        .env_remove("SPEED_REPO")
        .env_remove("SPEED_DOWNLOAD_URL"));
    if host_target().is_some() {
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains("set SPEED_REPO=OWNER/NAME"), "{stderr}");
    }
}

#[test]
fn the_workflow_the_archives_and_the_binstall_metadata_agree() {
    let workflow = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let targets: Vec<&str> = workflow
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- target: "))
        .collect();
    assert_eq!(targets, TARGETS);
    assert!(workflow.contains("scripts/package.sh \"${{ matrix.target }}\""));
    assert!(workflow.contains("cargo build --release --locked --target"));

    // What cargo binstall would fetch, for each target, is what
    // package.sh names and lays out.
    let manifest: toml::Table = std::fs::read_to_string(root().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let binstall = &manifest["package"]["metadata"]["binstall"];
    let pkg_url = binstall["pkg-url"].as_str().unwrap();
    let bin_dir = binstall["bin-dir"].as_str().unwrap();
    assert_eq!(binstall["pkg-fmt"].as_str(), Some("tgz"));
    let windows = &binstall["overrides"]["x86_64-pc-windows-msvc"]["pkg-fmt"];
    assert_eq!(windows.as_str(), Some("zip"));
    let package = std::fs::read_to_string(root().join("scripts/package.sh")).unwrap();
    assert!(package.contains("name=\"speed-$target\""), "{package}");
    for target in TARGETS {
        let windows = target.contains("windows");
        let (suffix, ext) = if windows {
            (".zip", ".exe")
        } else {
            (".tar.gz", "")
        };
        let url = pkg_url
            .replace("{ repo }", "https://github.com/o/speed")
            .replace("{ version }", "1.2.3")
            .replace("{ name }", "speed")
            .replace("{ target }", target)
            .replace("{ archive-suffix }", suffix);
        assert_eq!(
            url,
            format!("https://github.com/o/speed/releases/download/v1.2.3/speed-{target}{suffix}")
        );
        let inside = bin_dir
            .replace("{ name }", "speed")
            .replace("{ target }", target)
            .replace("{ bin }", "speed")
            .replace("{ binary-ext }", ext);
        assert_eq!(inside, format!("speed-{target}/speed{ext}"));
    }
}

#[test]
fn a_windows_archive_is_a_zip_of_speed_exe() {
    if Command::new("zip").arg("-v").output().is_err() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("speed.exe");
    std::fs::copy(env!("CARGO_BIN_EXE_speed"), &exe).unwrap();
    let dist = tmp.path().join("dist");
    let (code, stdout, stderr) = run(Command::new(root().join("scripts/package.sh")).args([
        "x86_64-pc-windows-msvc",
        exe.to_str().unwrap(),
        dist.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let zip = dist.join("speed-x86_64-pc-windows-msvc.zip");
    let (code, listing, _) = run(Command::new("unzip").arg("-l").arg(&zip));
    if code == 0 {
        assert!(
            listing.contains("speed-x86_64-pc-windows-msvc/speed.exe"),
            "{listing}"
        );
    }
    assert!(
        dist.join("speed-x86_64-pc-windows-msvc.zip.sha256")
            .is_file()
    );
}
