//! `rails-spar-extras`: the MCP server and the `db_query` drivers, kept out of `git-rails` (the
//! hooks' binary) so it stays small; `git-rails` execs or starts this one from its own folder
//! (`rails_spar::extras` says why). Started like the other two: `rails_spar::cli::start`.
#![no_main]

#[no_mangle]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    rails_spar::cli::start::start(rails_spar::cli::extras::main)
}
