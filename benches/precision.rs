//! Precision of speed's secret rules and checks on real code, run on demand:
//!
//! ```sh
//! cargo bench --bench precision -- secrets DIR...
//! ```
//!
//! Every text file under each DIR is scanned as if it were added whole,
//! and every finding is printed with its file and line so a person can
//! judge it: a finding in ordinary code is a false positive.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            files(&path, out);
        } else if kind.is_file() {
            out.push(path);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let Some((mode, dirs)) = args.split_first() else {
        eprintln!("usage: precision secrets DIR...");
        std::process::exit(2);
    };
    let mut all = Vec::new();
    for dir in dirs {
        files(Path::new(dir), &mut all);
    }
    all.sort();
    let started = std::time::Instant::now();
    let mut bytes = 0usize;
    let mut found = 0usize;
    match mode.as_str() {
        "secrets" => {
            for path in &all {
                let Ok(data) = std::fs::read(path) else { continue };
                if data.len() > 1 << 20 || data.contains(&0) {
                    continue;
                }
                bytes += data.len();
                let text = String::from_utf8_lossy(&data);
                let name = path.to_string_lossy();
                let lines: Vec<&str> = text.split('\n').collect();
                let scan = speed::secrets::scan(&lines, speed::secrets::Context::of_path(&name));
                for f in &scan.found {
                    found += 1;
                    let line = lines[f.line];
                    let shown: String = line.trim().chars().take(160).collect();
                    println!("{}\t{}:{}\t{}", f.rule, name, f.line + 1, shown);
                }
            }
        }
        other => {
            eprintln!("unknown mode {other}");
            std::process::exit(2);
        }
    }
    eprintln!(
        "{} files, {:.1} MB, {found} findings, {:.2} s",
        all.len(),
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
}
