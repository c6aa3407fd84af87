//! The one fixture the spar tests start from: a repository with a base commit and a change on
//! top of it, and a scratch folder beside it (outside the repository) for user files, reviewer
//! scripts and `XDG_CONFIG_HOME`. Each test module's `Fixture` wraps it (through `Deref`) and
//! adds the helpers of its own subject.

use std::path::PathBuf;

use crate::harness::TestRepo;

pub struct SparChange {
    pub repo: TestRepo,
    pub dir: tempfile::TempDir,
    /// The base commit (the first one).
    pub base: String,
    /// The change on top of it.
    pub head: String,
}

impl SparChange {
    /// Commits `base` (path, content), then (on `branch` when given) `change`; makes `dirs` in
    /// the scratch folder.
    pub fn new(
        base: &[(&str, &str)],
        change: &[(&str, &str)],
        branch: Option<&str>,
        dirs: &[&str],
    ) -> SparChange {
        let repo = TestRepo::new();
        for (path, text) in base {
            repo.write(path, text);
        }
        repo.commit_all("base");
        if let Some(b) = branch {
            repo.git(&["checkout", "-q", "-b", b]);
        }
        for (path, text) in change {
            repo.write(path, text);
        }
        repo.commit_all("change");
        let base = repo.git(&["rev-parse", "HEAD~1"]).trim().to_string();
        let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
        let dir = tempfile::tempdir().unwrap();
        for d in dirs {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        SparChange {
            repo,
            dir,
            base,
            head,
        }
    }

    /// A path in the scratch folder (outside the repository).
    pub fn tmp(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
}

/// `impl Deref for $fixture` to the [`SparChange`] in its field `s`.
macro_rules! spar_fixture {
    ($fixture:ident) => {
        impl std::ops::Deref for $fixture {
            type Target = crate::spar_fixture::SparChange;
            fn deref(&self) -> &Self::Target {
                &self.s
            }
        }
    };
}
pub(crate) use spar_fixture;
