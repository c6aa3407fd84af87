//! The commit-msg hook adds `Rails-Sprint:` in-process when it is sure of git's answer
//! (`src/hooks/trailer.rs`) and asks `git interpret-trailers` otherwise. These tests hold the
//! in-process answer to git's own, over generated messages, and drive the hook through real
//! commits both ways.

use crate::harness::*;
use rails_spar::hooks::trailer::add_to_message;

/// A small deterministic generator (xorshift), so a failure names a message that reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
}

/// Lines a commit message is made of: text, blank and white-space lines, comments, git's cut
/// line, things that look like trailers or nearly, continuation lines, dividers, CRLF.
const LINES: &[&str] = &[
    "subject line",
    "feat: a conventional title",
    "body text that says why",
    "",
    "",
    "   ",
    "\t",
    "# a comment",
    "#",
    "# ------------------------ >8 ------------------------",
    "diff --git a/x b/x",
    "--- a/x",
    "Key: value",
    "Key:value",
    "Bug #42: broken",
    "Signed-off-by: A <a@example.invalid>",
    "(cherry picked from commit 0123456789abcdef)",
    "Rails: prefix of the key",
    "rails-sprint: OTHER",
    "  continued value",
    "not: a trailer because of spaces before",
    "x y: two words then a colon",
    ":starts with a colon",
    "---",
    "Conflicts:",
    "\tpath/in/conflict",
    "crlf line\r",
    "ünïcödé: text",
];

fn message(rng: &mut Rng) -> String {
    let n = 1 + rng.next() % 9;
    let mut m = String::new();
    for _ in 0..n {
        m.push_str(rng.pick(LINES));
        m.push('\n');
    }
    if rng.next().is_multiple_of(5) {
        m.pop();
    }
    m
}

#[test]
fn the_in_process_trailer_is_what_git_writes() {
    let repo = TestRepo::new();
    let file = repo.path().join("msg.txt");
    let file_arg = file.to_string_lossy().into_owned();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut handled, mut asked) = (0, 0);
    for _ in 0..400 {
        let m = message(&mut rng);
        let Some(ours) = add_to_message(&m, "Rails-Sprint", "S-1") else {
            asked += 1;
            continue;
        };
        handled += 1;
        std::fs::write(&file, &m).unwrap();
        repo.git(&[
            "interpret-trailers",
            "--in-place",
            "--if-exists",
            "doNothing",
            "--trailer",
            "Rails-Sprint: S-1",
            &file_arg,
        ]);
        let git = std::fs::read_to_string(&file).unwrap();
        assert_eq!(ours, git, "message {m:?}");
    }
    // Both sides are exercised: a generator that made only one kind would prove nothing.
    assert!(handled >= 80, "only {handled} messages handled in-process");
    assert!(asked >= 80, "only {asked} messages left to git");
}

/// A repository whose branch is bound to the frozen sprint S-1.
fn bound_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("first");
    repo.draft(
        "S-1",
        serde_json::json!([check(
            "c1",
            "file_exists",
            serde_json::json!({"path": "a.txt"})
        )]),
    );
    repo.rails(&["contract", "freeze", "S-1"]).ok();
    repo.rails(&["contract", "bind", "S-1"]).ok();
    repo
}

/// A bound branch's commit gets the trailer either way: in-process for a plain message, from
/// git when `trailer.*` configuration could change git's answer (here: another separator).
#[test]
fn the_commit_msg_hook_adds_the_trailer_in_process_or_through_git() {
    let repo = bound_repo();
    repo.rails(&["hooks", "install"]).ok();

    repo.git(&["commit", "--allow-empty", "-q", "-m", "plain\n\nbody"]);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%B"]),
        "plain\n\nbody\n\nRails-Sprint: S-1\n\n"
    );

    repo.git(&["config", "trailer.separators", "=:"]);
    repo.git(&["commit", "--allow-empty", "-q", "-m", "second"]);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%B"]),
        "second\n\nRails-Sprint= S-1\n\n",
        "with trailer.separators set, git wrote the trailer"
    );
}

/// The configuration that changes git's answer is read from every place git reads it: with
/// `core.commentChar=;` a `#` line is text (the in-process writer alone would take it for a
/// comment and put the trailer above it), and `GIT_CONFIG_COUNT` and `git -c`
/// (`GIT_CONFIG_PARAMETERS`) carry configuration in the environment. Either way the hook's result is git's.
#[test]
fn configuration_git_reads_sends_the_message_to_git() {
    let repo = bound_repo();
    let file = repo.path().join("msg.txt");
    let file_arg = file.to_string_lossy().into_owned();

    let m = "msg\n\n# not a comment\n";
    let alone = add_to_message(m, "Rails-Sprint", "S-1").unwrap();
    repo.git(&["config", "core.commentChar", ";"]);
    std::fs::write(&file, m).unwrap();
    repo.git(&[
        "interpret-trailers",
        "--in-place",
        "--if-exists",
        "doNothing",
        "--trailer",
        "Rails-Sprint: S-1",
        &file_arg,
    ]);
    let git = std::fs::read_to_string(&file).unwrap();
    assert_ne!(git, alone, "the case must tell the two apart");
    std::fs::write(&file, m).unwrap();
    repo.rails(&["hook", "commit-msg", &file_arg]).ok();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), git);
    repo.git(&["config", "--unset", "core.commentChar"]);

    std::fs::write(&file, "plain\n").unwrap();
    repo.rails_env(
        &["hook", "commit-msg", &file_arg],
        &[
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "trailer.separators"),
            ("GIT_CONFIG_VALUE_0", "=:"),
        ],
    )
    .ok();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "plain\n\nRails-Sprint= S-1\n"
    );

    // `git -c trailer.separators='=:' commit`: what git hands its hooks.
    std::fs::write(&file, "plain\n").unwrap();
    repo.rails_env(
        &["hook", "commit-msg", &file_arg],
        &[("GIT_CONFIG_PARAMETERS", "'trailer.separators'='=:'")],
    )
    .ok();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "plain\n\nRails-Sprint= S-1\n"
    );
}

/// The in-process trailer is written into the message file where it stands: the same file (no
/// temporary file renamed over it, which cost the hook half a millisecond on ext4), nothing
/// left beside it, the message's own bytes as they were; a message under the cut line of
/// `git commit -v` keeps the diff below the trailer.
#[test]
fn the_message_file_is_extended_where_it_stands() {
    use std::os::unix::fs::MetadataExt;
    let repo = bound_repo();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("COMMIT_EDITMSG");
    let file_arg = file.to_string_lossy().into_owned();
    let m = "subject\n\nbody\n# Please enter the commit message.\n# ------------------------ >8 ------------------------\ndiff --git a/x b/x\n";
    std::fs::write(&file, m).unwrap();
    let inode = std::fs::metadata(&file).unwrap().ino();
    repo.rails(&["hook", "commit-msg", &file_arg]).ok();
    let after = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        after,
        add_to_message(m, "Rails-Sprint", "S-1").unwrap(),
        "the in-process answer"
    );
    assert!(
        after.starts_with("subject\n\nbody\n\nRails-Sprint: S-1\n# Please"),
        "{after}"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().ino(),
        inode,
        "the same file"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["COMMIT_EDITMSG"], "nothing left beside it");
}
