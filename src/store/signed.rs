//! Signed commits: the signature git writes in a commit's `gpgsig` header and the bytes it
//! signs, read in process; and a record commit written signed by git itself
//! (`git commit-tree -S`), so every signing setup git knows (`gpg.format ssh` with a key file or
//! ssh-agent, a FIDO2 key that needs a touch, OpenPGP, X.509) signs as `git commit -S` does and
//! `git verify-commit` accepts the result. Whether a signature counts is the policy's question
//! (`crate::policy`), not the store's.

use std::io::Write;
use std::process::Stdio;

use super::{ObjectId, Store};
use crate::error::{Context, Error, Result};

/// How a record commit is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Signing {
    Unsigned,
    /// Signed by `git commit-tree -S` with the repository's signing configuration.
    AsGitSigns,
}

/// A commit's signature (ASCII-armoured, as in the header) and the bytes it was made over
/// (the commit without its signature header).
#[derive(Debug, Clone)]
pub struct CommitSignature {
    pub armored: String,
    pub payload: Vec<u8>,
}

impl CommitSignature {
    /// An SSH signature (`-----BEGIN SSH SIGNATURE-----`); OpenPGP and X.509 ones are not.
    pub fn is_ssh(&self) -> bool {
        self.armored
            .trim_start()
            .starts_with("-----BEGIN SSH SIGNATURE-----")
    }
}

impl Store {
    /// The signature of commit `id` and what it signs; None for an unsigned commit.
    pub fn commit_signature(&self, id: ObjectId) -> Result<Option<CommitSignature>> {
        let commit = self
            .repo
            .find_commit(id)
            .ctx(format!("reading commit {id}"))?;
        let found = commit
            .signature()
            .ctx(format!("reading the signature of {id}"))?;
        Ok(found.map(|(sig, data)| CommitSignature {
            armored: String::from_utf8_lossy(sig.as_ref()).into_owned(),
            payload: data.to_bstring().to_vec(),
        }))
    }

    /// Writes a commit of `tree` on `parent` with `message`, signed by git (`commit-tree -S`)
    /// as this repository's configuration signs (`gpg.format`, `user.signingKey`, …). The
    /// author and committer are the store's own signature, as for an unsigned record.
    pub(super) fn signed_commit(
        &self,
        tree: ObjectId,
        parent: Option<ObjectId>,
        message: &str,
    ) -> Result<ObjectId> {
        let sig = self.signature();
        let when = sig.time.format_or_unix(gix::date::time::format::RAW);
        let tree_hex = tree.to_string();
        let parent_hex = parent.map(|p| p.to_string());
        let mut args = vec!["commit-tree", "-S", tree_hex.as_str()];
        if let Some(p) = &parent_hex {
            args.extend(["-p", p.as_str()]);
        }
        args.extend(["-F", "-"]);
        let mut cmd = self.git_command();
        let name = sig.name.to_string();
        let email = sig.email.to_string();
        cmd.args(&args)
            .env("GIT_AUTHOR_NAME", &name)
            .env("GIT_AUTHOR_EMAIL", &email)
            .env("GIT_AUTHOR_DATE", &when)
            .env("GIT_COMMITTER_NAME", &name)
            .env("GIT_COMMITTER_EMAIL", &email)
            .env("GIT_COMMITTER_DATE", &when)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().ctx("running git commit-tree -S")?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(message.as_bytes())
                .ctx("writing the commit message to git commit-tree")?;
        }
        let out = child.wait_with_output().ctx("running git commit-tree -S")?;
        if !out.status.success() {
            return Err(Error::refused(format!(
                "git could not sign the commit: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
            .hint("check the signing setup with `git config gpg.format ssh` and `git config user.signingKey <key>` (a commit made with `git commit -S` must work)"));
        }
        let hex = String::from_utf8_lossy(&out.stdout).trim().to_string();
        ObjectId::from_hex(hex.as_bytes())
            .map_err(|e| Error::internal(format!("git commit-tree printed {hex:?}: {e}")))
    }
}
