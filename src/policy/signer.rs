//! Who signed a commit, checked as `git verify-commit` checks an SSH signature: the principals
//! of the allowed-signers file whose key made it (`ssh-keygen -Y find-principals`), each
//! confirmed by `ssh-keygen -Y verify -n git` over the commit's signed bytes.

use std::process::{Command, Stdio};

use crate::error::{Context, Error, Result};
use crate::store::{Memo, ObjectId, Store};

/// Who signed a commit, as the policy sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signer {
    /// No signature.
    Unsigned,
    /// Signed by a key the allowed-signers file lists, for these principals (verified).
    Allowed { principals: Vec<String> },
    /// Signed, but the signature does not count: why.
    Outside { why: String },
}

impl Signer {
    /// `signed by alice@example.com`, `unsigned`, `signed by a key outside the policy (…)`.
    pub fn describe(&self) -> String {
        match self {
            Signer::Unsigned => "unsigned".into(),
            Signer::Allowed { principals } => format!("signed by {}", principals.join(", ")),
            Signer::Outside { why } => format!("signed by a key outside the policy ({why})"),
        }
    }
}

/// Who signed a commit, by the commit and the allowed-signers file it was checked against
/// (two `ssh-keygen` runs per signed commit otherwise, on every push a policy judges).
const SIGNERS: Memo = Memo::new("commit-signer");

/// Who signed `id`, against the allowed-signers file `allowed`; memoised by both.
pub(super) fn of_commit(store: &Store, allowed: &str, id: ObjectId) -> Result<Signer> {
    use sha2::{Digest, Sha256};
    let key = format!("{id}\n{:x}", Sha256::digest(allowed.as_bytes())).into_bytes();
    if let Some(s) = SIGNERS.get(store, &key).as_deref().and_then(decode) {
        return Ok(s);
    }
    let s = check(store, allowed, id)?;
    SIGNERS.put(store, &key, &encode(&s));
    Ok(s)
}

fn encode(s: &Signer) -> Vec<u8> {
    match s {
        Signer::Unsigned => b"unsigned".to_vec(),
        Signer::Allowed { principals } => format!("allowed\t{}", principals.join("\t")).into(),
        Signer::Outside { why } => format!("outside\t{why}").into(),
    }
}

fn decode(b: &[u8]) -> Option<Signer> {
    let t = std::str::from_utf8(b).ok()?;
    let (tag, rest) = t.split_once('\t').unwrap_or((t, ""));
    match tag {
        "unsigned" => Some(Signer::Unsigned),
        "allowed" if !rest.is_empty() => Some(Signer::Allowed {
            principals: rest.split('\t').map(str::to_string).collect(),
        }),
        "outside" => Some(Signer::Outside {
            why: rest.to_string(),
        }),
        _ => None,
    }
}

/// Who signed `id`, checked with ssh-keygen.
fn check(store: &Store, allowed: &str, id: ObjectId) -> Result<Signer> {
    let Some(sig) = store.commit_signature(id)? else {
        return Ok(Signer::Unsigned);
    };
    if !sig.is_ssh() {
        return Ok(Signer::Outside {
            why: "an OpenPGP or X.509 signature: only SSH signatures are checked".into(),
        });
    }
    let dir = tempfile::Builder::new()
        .prefix("rails-signer-")
        .tempdir()
        .ctx("creating a folder to check a signature in")?;
    let allowed_path = dir.path().join("allowed_signers");
    let sig_path = dir.path().join("commit.sig");
    let payload_path = dir.path().join("commit");
    std::fs::write(&allowed_path, allowed).ctx("writing the allowed signers")?;
    std::fs::write(&sig_path, sig.armored.as_bytes()).ctx("writing the signature")?;
    std::fs::write(&payload_path, &sig.payload).ctx("writing the signed bytes")?;

    let found = ssh_keygen(&["-Y", "find-principals", "-s"], &sig_path, &allowed_path)?;
    if !found.0 {
        return Ok(Signer::Outside {
            why: "its key is not in the allowed signers".into(),
        });
    }
    let mut principals = Vec::new();
    for principal in found.1.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut cmd = Command::new("ssh-keygen");
        cmd.args(["-Y", "verify", "-n", "git", "-f"])
            .arg(&allowed_path)
            .args(["-I", principal, "-s"])
            .arg(&sig_path)
            .stdin(std::fs::File::open(&payload_path).ctx("reading the signed bytes")?)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let ok = cmd.status().map_err(|e| missing_ssh_keygen(&e))?.success();
        if ok {
            principals.push(principal.to_string());
        }
    }
    if principals.is_empty() {
        return Ok(Signer::Outside {
            why: "the signature does not verify".into(),
        });
    }
    Ok(Signer::Allowed { principals })
}

/// Runs `ssh-keygen <args> <sig> -f <allowed>`: (success, stdout).
fn ssh_keygen(
    args: &[&str],
    sig: &std::path::Path,
    allowed: &std::path::Path,
) -> Result<(bool, String)> {
    let mut cmd = Command::new("ssh-keygen");
    cmd.args(args)
        .arg(sig)
        .arg("-f")
        .arg(allowed)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let out = cmd.output().map_err(|e| missing_ssh_keygen(&e))?;
    Ok((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

fn missing_ssh_keygen(e: &std::io::Error) -> Error {
    Error::refused(format!(
        "signatures cannot be checked: ssh-keygen could not run ({e})"
    ))
    .hint("install OpenSSH's ssh-keygen (8.2 or newer), which checks SSH signatures as git does")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_signer_reads_back_as_written() {
        for s in [
            Signer::Unsigned,
            Signer::Allowed {
                principals: vec!["a@x".into(), "b@x".into()],
            },
            Signer::Outside { why: "why".into() },
        ] {
            assert_eq!(decode(&encode(&s)), Some(s));
        }
        assert_eq!(decode(b"allowed"), None);
        assert_eq!(decode(b"other\tx"), None);
    }
}
