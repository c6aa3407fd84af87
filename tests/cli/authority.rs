//! Who decides (issue 34): under a signing policy the pusher never chooses the sprint that
//! judges its push. Real ed25519 keys made here, real git signing, a bare server with our
//! pre-receive; each test tries the cheapest way around one rule and sees it refused.

use serde_json::json;

use crate::harness::*;
use crate::hooks::remote_ref;

/// A clone with a bare server whose pre-receive enforces the policy of `p` from its own
/// configuration: alice plans, alice and bob decide; main is protected.
fn served(p: &People) -> (TestRepo, tempfile::TempDir, Vec<(&'static str, String)>) {
    let repo = TestRepo::new();
    let remote = tempfile::tempdir().unwrap();
    repo.git(&["init", "-q", "--bare", remote.path().to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", remote.path().to_str().unwrap()]);
    repo.git(&["push", "-q", "origin", "main"]);
    let server = TestRepo::at(remote.path());
    server.rails(&["hooks", "install"]).ok();
    for (k, v) in [
        ("rails.receiveGate", "true"),
        ("rails.requireSprint", "true"),
        ("rails.protect", "refs/heads/main"),
        ("rails.allowedSigners", p.allowed.to_str().unwrap()),
        ("rails.planner", "alice@example.com"),
    ] {
        server.git(&["config", k, v]);
    }
    server.git(&["config", "--add", "rails.person", "alice@example.com"]);
    server.git(&["config", "--add", "rails.person", "bob@example.com"]);
    let env = vec![("PATH", path_with_bins())];
    (repo, remote, env)
}

fn envs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// Freezes sprint `s` with one check (`file_exists <file>`), signed when `signer` is some.
fn freeze(repo: &TestRepo, s: &str, file: &str, signer: Option<&Key>) {
    repo.draft(
        s,
        json!([check("c1", "file_exists", json!({ "path": file }))]),
    );
    match signer {
        Some(k) => {
            sign_as(repo, k);
            repo.rails(&["contract", "freeze", s, "--sign"]).ok();
            repo.git(&["config", "--unset", "user.signingKey"]);
        }
        None => {
            repo.rails(&["contract", "freeze", s]).ok();
        }
    }
}

/// Proves sprint `s`'s one criterion by writing `file` and committing it.
fn prove(repo: &TestRepo, s: &str, file: &str) {
    repo.rails(&["evidence", "red", s, "c1"]).ok();
    repo.write(file, "done\n");
    repo.git(&["add", file]);
    repo.rails(&["evidence", "green", s, "c1"]).ok();
    repo.rails(&["evidence", "surface", s, "c1", "--note", "PR"])
        .ok();
    repo.rails(&[
        "evidence",
        "cleanup",
        s,
        "c1",
        "--note",
        "nothing was started",
    ])
    .ok();
    repo.git(&[
        "commit",
        "-q",
        "-m",
        &format!("{s} work\n\nRails-Sprint: {s}"),
    ]);
}

fn push(repo: &TestRepo, env: &[(&'static str, String)], refs: &[&str]) -> Run {
    let mut args = vec!["push", "--no-verify", "origin"];
    args.extend_from_slice(refs);
    repo.git_env(&args, &envs(env))
}

#[test]
fn freeze_sign_writes_the_signature_git_verifies() {
    let p = people();
    let repo = TestRepo::new();
    freeze(&repo, "S", "done.txt", Some(&p.alice));
    let verified = repo.git_run(&[
        "-c",
        &format!("gpg.ssh.allowedSignersFile={}", p.allowed.display()),
        "verify-commit",
        "refs/rails/contracts/S",
    ]);
    assert_eq!(verified.code, 0, "{verified}");
    assert!(
        verified
            .stderr
            .contains("Good \"git\" signature for alice@example.com"),
        "{verified}"
    );
    // An unchanged draft is frozen again, signed, only on purpose: a signed bump.
    repo.rails(&["contract", "freeze", "S", "--bump"])
        .code(65)
        .stderr_has("--bump --sign");
}

/// The attack of the issue: the server refuses unproven work naming B; the pusher freezes a
/// sprint Z of its own with a check it can satisfy, proves it, pushes it, and names Z instead.
#[test]
fn a_pusher_cannot_judge_its_push_by_a_sprint_of_its_own() {
    let p = people();
    let (repo, remote, env) = served(&p);
    freeze(&repo, "B", "b.txt", Some(&p.alice));
    push(&repo, &env, &["main", "refs/rails/contracts/B"]).ok();
    repo.write("work.txt", "unproven\n");
    repo.git(&["add", "work.txt"]);
    repo.git(&["commit", "-q", "-m", "work\n\nRails-Sprint: B"]);
    push(&repo, &env, &["main"])
        .code(1)
        .stderr_has("update of refs/heads/main refused: B v1 is not done");

    // Z, unsigned, proven, its records pushed first on their own, then named by the work.
    freeze(&repo, "Z", "z.txt", None);
    prove(&repo, "Z", "z.txt");
    push(
        &repo,
        &env,
        &["refs/rails/contracts/Z", "refs/rails/evidence/Z"],
    )
    .ok();
    let out = push(&repo, &env, &["main"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("Z v1 is unsigned"), "{out}");
    assert!(
        out.stderr
            .contains("only a version an allowed planner signed"),
        "{out}"
    );
    assert!(
        out.stderr
            .contains("git rails contract freeze Z --bump --sign"),
        "{out}"
    );
    assert!(out.stderr.contains("alice@example.com"), "{out}");

    // Signed by a key outside the policy, or by a person who is no planner: refused alike.
    for (who, says) in [
        (&p.mallory, "signed by a key outside the policy"),
        (&p.bob, "bob@example.com (person)"),
    ] {
        sign_as(&repo, who);
        repo.rails(&["contract", "freeze", "Z", "--bump", "--sign"])
            .ok();
        repo.git(&["config", "--unset", "user.signingKey"]);
        prove_again(&repo, "Z");
        push(
            &repo,
            &env,
            &["refs/rails/contracts/Z", "refs/rails/evidence/Z"],
        )
        .ok();
        let out = push(&repo, &env, &["main"]);
        assert_eq!(out.code, 1, "{out}");
        assert!(out.stderr.contains(says), "{says}: {out}");
    }
    assert_ne!(
        remote_ref(remote.path(), "refs/heads/main"),
        Some(repo.git(&["rev-parse", "main"]).trim().to_string())
    );
    // The same rule before the push leaves the machine (pre-push reads the same policy when
    // this clone names it).
    repo.rails(&["hooks", "install"]).ok();
    repo.git(&["config", "rails.protect", "refs/heads/main"]);
    repo.git(&[
        "config",
        "rails.allowedSigners",
        p.allowed.to_str().unwrap(),
    ]);
    repo.git(&["config", "rails.planner", "alice@example.com"]);
    let hook = repo.git_env(&["push", "origin", "main"], &envs(&env));
    assert_ne!(hook.code, 0, "{hook}");
    assert!(
        hook.stderr
            .contains("\ngit-rails: push of refs/heads/main refused: Z v1.2 is"),
        "{hook}"
    );
}

/// Re-proves a sprint's c1 after a bump (the new version's criterion starts pending).
fn prove_again(repo: &TestRepo, s: &str) {
    let status = repo.rails(&["status", s, "--json"]).json();
    if status["done"] == true {
        return;
    }
    // The file the check wants exists already: RED needs it gone first.
    let file = "z.txt";
    repo.git(&["rm", "-q", file]);
    repo.git(&[
        "commit",
        "-q",
        "-m",
        &format!("reset {s}\n\nRails-Sprint: {s}"),
    ]);
    prove(repo, s, file);
}

#[test]
fn a_sprint_done_before_the_push_never_covers_new_work() {
    let p = people();
    let (repo, _remote, env) = served(&p);
    freeze(&repo, "B", "b.txt", Some(&p.alice));
    prove(&repo, "B", "b.txt");
    push(
        &repo,
        &env,
        &["refs/rails/contracts/B", "refs/rails/evidence/B"],
    )
    .ok();
    push(&repo, &env, &["main"]).ok();
    // New, unrelated work names the finished sprint.
    repo.write("later.txt", "unreviewed\n");
    repo.git(&["add", "later.txt"]);
    repo.git(&["commit", "-q", "-m", "later\n\nRails-Sprint: B"]);
    let out = push(&repo, &env, &["main"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("B v1 was already done at"), "{out}");
    assert!(
        out.stderr
            .contains("a finished sprint never covers later work"),
        "{out}"
    );
}

#[test]
fn the_committed_policy_changes_only_by_a_persons_signed_commit() {
    let p = people();
    let repo = TestRepo::new();
    let remote = tempfile::tempdir().unwrap();
    repo.git(&["init", "-q", "--bare", remote.path().to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", remote.path().to_str().unwrap()]);
    repo.git(&["push", "-q", "origin", "main"]);
    let server = TestRepo::at(remote.path());
    server.rails(&["hooks", "install"]).ok();
    server.git(&["config", "rails.protect", "refs/heads/main"]);
    let env = vec![("PATH", path_with_bins())];
    // The policy lives in the repository: alice plans, alice decides.
    std::fs::create_dir_all(repo.path().join(".rails")).unwrap();
    repo.write(
        ".rails/allowed_signers",
        &format!("{}{}", p.alice.line, p.bob.line),
    );
    repo.write(
        ".rails/policy.toml",
        "allowedSigners = \".rails/allowed_signers\"\nplanner = [\"alice@example.com\"]\nperson = [\"alice@example.com\"]\n",
    );
    repo.git(&["add", ".rails"]);
    freeze(&repo, "B", "b.txt", Some(&p.alice));
    prove(&repo, "B", "b.txt");
    push(
        &repo,
        &env,
        &["refs/rails/contracts/B", "refs/rails/evidence/B"],
    )
    .ok();
    push(&repo, &env, &["main"]).ok();

    // mallory makes herself a planner in the same push as her sprint: refused, whoever signs
    // the sprint, because the commit that changes the policy is no person's.
    repo.write(
        ".rails/policy.toml",
        "allowedSigners = \".rails/allowed_signers\"\nplanner = [\"alice@example.com\", \"bob@example.com\"]\nperson = [\"alice@example.com\"]\n",
    );
    repo.git(&["add", ".rails/policy.toml"]);
    freeze(&repo, "C", "c.txt", Some(&p.bob));
    prove(&repo, "C", "c.txt");
    push(
        &repo,
        &env,
        &["refs/rails/contracts/C", "refs/rails/evidence/C"],
    )
    .ok();
    let out = push(&repo, &env, &["main"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("changes .rails/policy.toml"), "{out}");
    assert!(
        out.stderr
            .contains("changes only by a commit an allowed person signs"),
        "{out}"
    );
    // The policy before the push decides: bob is no planner there, so C does not count.
    assert!(
        out.stderr.contains("C v1 is bob@example.com (no role)"),
        "{out}"
    );

    // Signed by alice, a person under the old policy, the change is no longer refused; C,
    // signed by bob, still is: the policy that judges a push is the one before it.
    repo.git(&["reset", "-q", "--soft", "HEAD~1"]);
    sign_as(&repo, &p.alice);
    repo.git(&[
        "commit",
        "-q",
        "-S",
        "-m",
        "C work, bob plans\n\nRails-Sprint: C",
    ]);
    let out = push(&repo, &env, &["main"]);
    assert!(
        out.stderr.contains("C v1 is bob@example.com (no role)"),
        "{out}"
    );
    assert!(!out.stderr.contains("changes .rails/policy.toml"), "{out}");
}

/// `verify` checks the signature itself: with the policy read from a base commit
/// (`--policy-from`, what CI passes), a sprint whose version no planner signed is not done,
/// whoever proved it; `status` and `gate --json` show who signed.
#[test]
fn verify_checks_the_signer_against_the_policy_of_the_base() {
    let p = people();
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.path().join(".rails")).unwrap();
    repo.write(
        ".rails/allowed_signers",
        &format!("{}{}", p.alice.line, p.bob.line),
    );
    repo.write(
        ".rails/policy.toml",
        "allowedSigners = \".rails/allowed_signers\"\nplanner = [\"alice@example.com\"]\n",
    );
    repo.git(&["add", ".rails"]);
    repo.git(&["commit", "-q", "-m", "policy"]);
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    freeze(&repo, "Z", "z.txt", Some(&p.bob));
    prove(&repo, "Z", "z.txt");
    let out = repo.rails(&["verify", "Z", "--policy-from", &base]);
    assert_eq!(out.code, 2, "{out}");
    assert!(
        out.stdout
            .contains("frozen version v1: bob@example.com (no role)"),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("only a version an allowed planner (alice@example.com) signed"),
        "{out}"
    );
    let gate = repo.rails(&["gate", "Z", "--json"]);
    assert_eq!(gate.code, 2, "{gate}");
    assert_eq!(
        gate.json()["signedBy"],
        "bob@example.com (no role)",
        "{gate}"
    );
    // Signed again by the planner, the same proof is done.
    sign_as(&repo, &p.alice);
    repo.rails(&["contract", "freeze", "Z", "--bump", "--sign"])
        .ok();
    let out = repo.rails(&["verify", "Z", "--policy-from", &base, "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(
        out.json()["signedBy"],
        "alice@example.com (planner)",
        "{out}"
    );
    repo.rails(&["status", "Z"])
        .ok()
        .stdout_has("Frozen version v1.1: alice@example.com (planner)");
    // The HTML report says who signed too.
    let page = repo.path().join("report.html");
    repo.git(&["config", "core.excludesFile", "/dev/null"]);
    std::fs::write(repo.path().join(".git/info/exclude"), "report.html\n").unwrap();
    repo.rails(&["report", "Z", "--html", page.to_str().unwrap()])
        .ok();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("Frozen version v1.1: alice@example.com (planner)"),
        "{html}"
    );
}

/// Without a policy nothing changes, but doctor, status and a server's hook install say who
/// can define done (a notice: no exit code changes).
#[test]
fn without_a_policy_the_notice_says_anyone_can_define_done() {
    let repo = TestRepo::new();
    freeze(&repo, "S", "s.txt", None);
    prove(&repo, "S", "s.txt");
    let status = repo.rails(&["status", "S"]);
    status
        .ok()
        .stderr_has("anyone who can push can define done");
    status.stdout_has("Frozen version v1: unsigned");
    repo.rails(&["hooks", "install"]).ok();
    let doctor = repo.rails(&["doctor", "--json"]);
    assert_eq!(doctor.code, 0, "{doctor}");
    assert!(
        doctor.json()["notices"][0]
            .as_str()
            .unwrap()
            .contains("anyone who can push can define done"),
        "{doctor}"
    );
    repo.rails(&["gate", "S"]).ok();
    let remote = tempfile::tempdir().unwrap();
    repo.git(&["init", "-q", "--bare", remote.path().to_str().unwrap()]);
    TestRepo::at(remote.path())
        .rails(&["hooks", "install"])
        .ok()
        .stderr_has("notice: no signing policy is in force");
}
