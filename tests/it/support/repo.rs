//! Real temporary git repositories for the tests: the example product from
//! `specs-example/`, and small hand-built ones through `RepoBuilder`.

use std::path::{Path, PathBuf};

#[path = "../../../specs-example/materialize.rs"]
pub mod materialize;

pub use materialize::RepoBuilder;

/// A repository that lives as long as the value.
pub struct TempRepo {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
}

impl TempRepo {
    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).unwrap_or_else(|e| panic!("read {path}: {e}"))
    }

    pub fn write(&self, path: &str, content: &str) {
        let full = self.root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }

    pub fn task_path(&self, id: &str) -> String {
        format!(".speed/features/library-catalog/tasks/{id}.json")
    }

    pub fn task(&self, id: &str) -> serde_json::Value {
        serde_json::from_str(&self.read(&self.task_path(id))).unwrap()
    }

    /// Every file under `.speed/reviews/`, sorted.
    pub fn reviews(&self) -> Vec<String> {
        let dir = self.root.join(".speed/reviews");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .map(|e| e.unwrap())
                    // Files only: `locks/` holds who reviews what now.
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// The lines of `.speed/reviews/log.jsonl`, parsed.
    pub fn log(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.root.join(".speed/reviews/log.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The report files (not the log or nits), parsed, oldest first.
    pub fn report_files(&self) -> Vec<serde_json::Value> {
        self.reviews()
            .iter()
            .filter(|n| n.ends_with(".json") && n.as_str() != "nits.json")
            .map(|n| serde_json::from_str(&self.read(&format!(".speed/reviews/{n}"))).unwrap())
            .collect()
    }

    pub fn config(&self, toml: &str) {
        self.write(".speed/config.toml", toml);
    }
}

/// The example product as a git repository: main plus speed/task-1..3.
pub fn example() -> TempRepo {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs-example");
    materialize::materialize(&example, &root).unwrap();
    TempRepo { _tmp: tmp, root }
}

/// A shop whose task 1 raises the cart cap from 10 to 50 and, on the same
/// branch, rewrites the spec it is reviewed against to say 50. `scope` is
/// the task's `files_to_modify`.
pub fn shop_editing_its_spec(scope: &[&str]) -> TempRepo {
    let (tmp, root) = empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[
            (
                "specs/product/shop.md",
                "# Shop\n\n## Cart\n\nThe cart holds at most 10 items.\n",
            ),
            ("src/cart.rs", "pub fn cap() -> u32 {\n    10\n}\n"),
        ],
        &[],
        "main",
    )
    .unwrap();
    b.commit(
        "speed/task-1",
        Some("main"),
        &[
            (
                "specs/product/shop.md",
                "# Shop\n\n## Cart\n\nThe cart holds at most 50 items.\n",
            ),
            ("src/cart.rs", "pub fn cap() -> u32 {\n    50\n}\n"),
        ],
        &[],
        "raise the cap",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let repo = adopt(tmp, root);
    repo.write(
        ".speed/tasks/1.json",
        &serde_json::json!({"id": 1, "title": "Raise the cart cap", "status": "done",
                "files_to_modify": scope,
                "spec_references": [{"spec": "specs/product/shop.md", "section": "Cart"}]})
        .to_string(),
    );
    repo
}

/// An empty directory for a hand-built repository.
pub fn empty() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    (tmp, root)
}

/// Wraps a directory built by hand.
pub fn adopt(tmp: tempfile::TempDir, root: PathBuf) -> TempRepo {
    TempRepo { _tmp: tmp, root }
}
