//! `git rails`. Started without std's start-up routine: `rails_spar::cli::start` says why.
#![no_main]

#[no_mangle]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    rails_spar::cli::start::start(rails_spar::cli::rails::main)
}
