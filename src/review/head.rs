//! The files at the head commit, as the verdict's location checks need
//! them: every path, and a file's number of lines, read from git objects on
//! first use (only the files a verdict cites are read).

use std::cell::RefCell;
use std::collections::HashMap;

use crate::git::Repository;

use super::Error;

pub struct HeadFiles {
    repo: Repository,
    paths: Vec<String>,
    blobs: HashMap<String, String>,
    lines: RefCell<HashMap<String, usize>>,
}

impl HeadFiles {
    pub fn open(root: &std::path::Path, head: &str) -> Result<HeadFiles, Error> {
        let repo = Repository::open(root)?;
        let files = repo.list_files(head)?;
        let paths = files.iter().map(|f| f.path.clone()).collect();
        let blobs = files.into_iter().map(|f| (f.path, f.blob)).collect();
        Ok(HeadFiles {
            repo,
            paths,
            blobs,
            lines: RefCell::new(HashMap::new()),
        })
    }

    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// The number of lines of the file at `path`; None when there is none.
    pub fn lines(&self, path: &str) -> Result<Option<usize>, String> {
        let Some(blob) = self.blobs.get(path) else {
            return Ok(None);
        };
        if let Some(&n) = self.lines.borrow().get(path) {
            return Ok(Some(n));
        }
        let bytes = self.repo.read_blob(blob).map_err(|e| e.to_string())?;
        let newlines = memchr::memchr_iter(b'\n', &bytes).count();
        let n = newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'));
        self.lines.borrow_mut().insert(path.to_string(), n);
        Ok(Some(n))
    }
}
