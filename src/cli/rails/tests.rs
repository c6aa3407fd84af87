//! Unit tests of the command line: parsing and the hot parser.

use super::*;
use crate::cli::help_of;
use clap::CommandFactory;

#[test]
fn hot_commands_parse_and_help_as_the_full_one() {
    for path in [
        &["gate"][..],
        &["hook"],
        &["hook", "pre-push"],
        &["hook", "commit-msg"],
        &["hook", "pre-receive"],
        &["hook", "agent-stop"],
    ] {
        assert_eq!(
            help_of(HotCli::command(), path),
            help_of(RailsCli::command(), path),
            "help of {path:?}"
        );
    }
    let argv = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
    for line in [
        &["git-rails", "gate", "S", "--commit", "HEAD~1", "--json"][..],
        &["git-rails", "hook", "pre-push", "origin", "url"],
        &["git-rails", "hook", "commit-msg", "msg.txt"],
        &["git-rails", "hook", "agent-stop"],
    ] {
        let fast = format!("{:?}", parse_args(argv(line)).unwrap());
        let full = format!("{:?}", RailsCli::try_parse_from(argv(line)).unwrap());
        assert_eq!(fast, full, "{line:?}");
    }
    let err = HotCli::try_parse_from(argv(&["git-rails", "gate", "--bogus"])).unwrap_err();
    assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
}
