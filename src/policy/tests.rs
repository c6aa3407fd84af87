use super::*;
use crate::store::test_git;

/// A key made with ssh-keygen in `dir`: (private key path, allowed-signers line for `who`).
fn key(dir: &std::path::Path, name: &str, who: &str) -> (std::path::PathBuf, String) {
    let path = dir.join(name);
    let ok = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", who, "-f"])
        .arg(&path)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let public = std::fs::read_to_string(path.with_extension("pub")).unwrap();
    let mut parts = public.split_whitespace();
    let line = format!(
        "{who} {} {}\n",
        parts.next().unwrap(),
        parts.next().unwrap()
    );
    (path, line)
}

/// A commit signed with `key` (None: unsigned) in the repository at `dir`.
fn commit(dir: &std::path::Path, key: Option<&std::path::Path>, msg: &str) -> ObjectId {
    let mut args: Vec<String> = vec!["-c".into(), "gpg.format=ssh".into()];
    if let Some(k) = key {
        args.push("-c".into());
        args.push(format!("user.signingKey={}", k.display()));
    }
    args.extend([
        "commit".into(),
        "-q".into(),
        "--allow-empty".into(),
        "-m".into(),
        msg.into(),
    ]);
    if key.is_some() {
        args.push("-S".into());
    }
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    test_git(dir, &a, &[]);
    let head = test_git(dir, &["rev-parse", "HEAD"], &[]);
    ObjectId::from_hex(head.trim().as_bytes()).unwrap()
}

#[test]
fn a_signer_is_named_only_by_a_key_the_policy_lists() {
    let (dir, _) = crate::store::temp_repo();
    let keys = tempfile::tempdir().unwrap();
    let (alice, alice_line) = key(keys.path(), "alice", "alice@example.com");
    let (mallory, _) = key(keys.path(), "mallory", "mallory@example.com");
    let allowed = keys.path().join("allowed");
    std::fs::write(&allowed, &alice_line).unwrap();
    test_git(
        dir.path(),
        &["config", "rails.allowedSigners", allowed.to_str().unwrap()],
        &[],
    );
    test_git(
        dir.path(),
        &["config", "--add", "rails.planner", "alice@example.com"],
        &[],
    );
    let signed = commit(dir.path(), Some(&alice), "by alice");
    let foreign = commit(dir.path(), Some(&mallory), "by mallory");
    let unsigned = commit(dir.path(), None, "by nobody");
    let store = Store::open(dir.path()).unwrap();
    let policy = Policy::load(&store, Source::Clone)
        .unwrap()
        .expect("a policy");

    let s = policy.signer(&store, signed).unwrap();
    assert_eq!(
        s,
        Signer::Allowed {
            principals: vec!["alice@example.com".into()]
        }
    );
    assert!(policy.allows(&s, Role::Planner));
    assert!(!policy.allows(&s, Role::Person));
    assert_eq!(policy.describe(&s), "alice@example.com (planner)");

    let f = policy.signer(&store, foreign).unwrap();
    assert!(matches!(f, Signer::Outside { .. }), "{f:?}");
    assert!(!policy.allows(&f, Role::Planner));
    assert_eq!(policy.signer(&store, unsigned).unwrap(), Signer::Unsigned);
}

#[test]
fn no_allowed_signers_is_no_policy() {
    let (dir, store) = crate::store::temp_repo();
    test_git(
        dir.path(),
        &["config", "--add", "rails.planner", "alice@example.com"],
        &[],
    );
    assert!(Policy::load(&store, Source::Clone).unwrap().is_none());
}

#[test]
fn a_clone_may_only_tighten_the_committed_policy() {
    let (dir, _) = crate::store::temp_repo();
    std::fs::create_dir_all(dir.path().join(".rails")).unwrap();
    std::fs::write(
        dir.path().join(".rails/allowed_signers"),
        "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx1\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join(POLICY_FILE),
        "allowedSigners = \".rails/allowed_signers\"\nplanner = [\"alice@example.com\", \"bob@example.com\"]\n\n[owes]\nmain = [\"S\"]\n",
    )
    .unwrap();
    test_git(dir.path(), &["add", "-A"], &[]);
    test_git(dir.path(), &["commit", "-q", "-m", "policy"], &[]);
    // The clone's configuration narrows planners to bob, and tries to add mallory and a
    // wider allowed-signers file: neither widens the committed policy.
    test_git(
        dir.path(),
        &["config", "--add", "rails.planner", "bob@example.com"],
        &[],
    );
    test_git(
        dir.path(),
        &["config", "--add", "rails.planner", "mallory@example.com"],
        &[],
    );
    test_git(
        dir.path(),
        &["config", "--add", "rails.person", "mallory@example.com"],
        &[],
    );
    let wide = dir.path().join("wide");
    std::fs::write(&wide, "mallory@example.com ssh-ed25519 AAAA\n").unwrap();
    test_git(
        dir.path(),
        &["config", "rails.allowedSigners", wide.to_str().unwrap()],
        &[],
    );
    let store = Store::open(dir.path()).unwrap();
    let p = Policy::load(&store, Source::Clone).unwrap().unwrap();
    assert_eq!(p.principals(Role::Planner), vec!["bob@example.com"]);
    assert!(p.principals(Role::Person).is_empty());
    assert!(
        p.allowed_signers.starts_with("alice@example.com"),
        "{}",
        p.allowed_signers
    );
    assert!(
        p.source.starts_with(".rails/policy.toml at "),
        "{}",
        p.source
    );
    assert_eq!(p.owed_by("refs/heads/main"), ["S".to_string()]);
}
