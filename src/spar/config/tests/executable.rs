//! G14: finding the executable.

use super::*;

#[test]
fn g14_path_that_does_not_exist_is_unavailable() {
    let fx = Fx::new();
    let missing = fx.root().join("nope/claude");
    let (status, why) = find_executable(missing.to_str().unwrap(), None).unwrap_err();
    assert_eq!(status, Status::Unavailable);
    assert!(why.contains("does not exist"), "{why}");
    let broken = fx.root().join("broken");
    symlink(fx.root().join("gone"), &broken).unwrap();
    let (status, _) = find_executable(broken.to_str().unwrap(), None).unwrap_err();
    assert_eq!(status, Status::Unavailable);
}

#[test]
fn g14_path_that_is_not_a_regular_file_is_failed() {
    let fx = Fx::new();
    let (status, why) = find_executable(fx.work().to_str().unwrap(), None).unwrap_err();
    assert_eq!(status, Status::Failed);
    assert!(why.contains("not a regular file"), "{why}");
    let fifo = fx.root().join("fifo");
    mkfifo(&fifo);
    let (status, _) = find_executable(fifo.to_str().unwrap(), None).unwrap_err();
    assert_eq!(status, Status::Failed);
}

#[test]
fn g14_path_without_execute_permission_is_failed() {
    let fx = Fx::new();
    let file = fx.write("bin/tool", "#!/bin/sh\n");
    set_mode(&file, 0o644);
    let (status, why) = find_executable(file.to_str().unwrap(), None).unwrap_err();
    assert_eq!(status, Status::Failed);
    assert!(why.contains("not executable"), "{why}");
}

#[test]
fn g14_path_to_an_executable_is_used_as_is() {
    let fx = Fx::new();
    let file = fx.write("bin/tool", "#!/bin/sh\n");
    set_mode(&file, 0o755);
    assert_eq!(find_executable(file.to_str().unwrap(), None), Ok(file));
}

#[test]
fn g14_bare_name_finds_the_first_executable_on_path() {
    let fx = Fx::new();
    let plain = fx.write("a/claude", "");
    set_mode(&plain, 0o644);
    fs::create_dir_all(fx.root().join("b/claude")).unwrap();
    let exe = fx.write("c/claude", "");
    set_mode(&exe, 0o755);
    let later = fx.write("d/claude", "");
    set_mode(&later, 0o755);
    let path = std::env::join_paths(["a", "b", "c", "d"].map(|d| fx.root().join(d))).unwrap();
    assert_eq!(find_executable("claude", Some(&path)), Ok(exe));
}

#[test]
fn g14_bare_name_with_only_non_executable_files_is_unavailable() {
    let fx = Fx::new();
    let plain = fx.write("a/codex", "");
    set_mode(&plain, 0o644);
    let path = fx.root().join("a").into_os_string();
    let (status, why) = find_executable("codex", Some(&path)).unwrap_err();
    assert_eq!(status, Status::Unavailable);
    assert!(why.contains("not executable"), "{why}");
}

#[test]
fn g14_bare_name_not_on_path_is_unavailable() {
    let fx = Fx::new();
    let path = fx.root().join("a").into_os_string();
    assert_eq!(
        find_executable("agy", Some(&path)).unwrap_err().0,
        Status::Unavailable
    );
    assert_eq!(
        find_executable("agy", None).unwrap_err().0,
        Status::Unavailable
    );
    assert_eq!(
        find_executable("", Some(&path)).unwrap_err().0,
        Status::Unavailable
    );
}

#[test]
fn g14_relative_path_entries_are_not_searched() {
    let fx = Fx::new();
    let exe = fx.write("rel/tool", "");
    set_mode(&exe, 0o755);
    // "rel" and "" are relative: they would depend on the current directory.
    let path = OsString::from("rel::");
    assert_eq!(
        find_executable("tool", Some(&path)).unwrap_err().0,
        Status::Unavailable
    );
}

#[test]
fn g14_what_each_preset_looks_for() {
    let fx = Fx::new();
    let (env, _) = fx.user(
        r#"
[[reviewers]]
preset = "claude"
binary = ""
[[reviewers]]
preset = "codex"
binary = "/opt/codex"
[[reviewers]]
preset = "agy"
[[reviewers]]
preset = "native"
[[reviewers]]
preset = "command"
argv = ["./tools/review", "{prompt}"]
"#,
    );
    let cfg = load(&env);
    let exes: Vec<Option<&str>> = cfg
        .reviewers
        .value
        .iter()
        .map(Reviewer::executable)
        .collect();
    assert_eq!(
        exes,
        [
            Some("claude"),
            Some("/opt/codex"),
            Some("agy"),
            None,
            Some("./tools/review")
        ]
    );
}
