//! How the two binaries start: without std's start-up routine.
//!
//! The hooks start `git rails` on every commit and push, so its start-up is part of every
//! figure the hook path is held to. std's `lang_start` spends about a tenth of a passing
//! gate's instructions finding the main thread's stack (glibc's `pthread_getattr_np` reads
//! and parses `/proc/self/maps`) to tell a stack overflow apart from other faults. The
//! binaries are therefore `#![no_main]` and enter here from C's `main`, doing themselves what
//! else `lang_start` did that the program relies on:
//!
//! - file descriptors 0, 1 and 2 are open (a closed one is opened on `/dev/null`, so a file the
//!   program opens never becomes its stdout);
//! - `SIGPIPE` is ignored, so a write to a reader that went away is an error the code handles
//!   (`write_out`, a chained hook that does not read its stdin), not a silent death;
//! - stdout is flushed before the process exits (`std::process::exit` does it).
//!
//! Arguments need nothing: on Linux std reads them from glibc's `.init_array` call, and
//! elsewhere from `std::env::args_os` as usual. What is given up: a stack overflow ends the
//! process by `SIGSEGV` without std's one-line message (the code does not recurse deeply).

use std::process::ExitCode;

/// Runs `main` and exits with its code; never returns.
pub fn start(main: fn() -> ExitCode) -> ! {
    prepare();
    let code = main();
    std::process::exit(status(code))
}

fn prepare() {
    #[cfg(unix)]
    // SAFETY: plain libc calls on the process's own descriptors and signal disposition, made
    // before any other thread exists.
    unsafe {
        for fd in 0..3 {
            if libc::fcntl(fd, libc::F_GETFD) == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
            {
                let flags = if fd == 0 {
                    libc::O_RDONLY
                } else {
                    libc::O_WRONLY
                };
                let null = libc::open(c"/dev/null".as_ptr(), flags);
                if null == -1 {
                    // As std does: a process that cannot be given its standard descriptors
                    // does not run.
                    libc::abort();
                }
            }
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// The number an `ExitCode` stands for. std offers no stable way to read one back, but every
/// code the program makes is `ExitCode::from(u8)`, and codes compare equal.
fn status(code: ExitCode) -> i32 {
    (0..=u8::MAX)
        .find(|n| ExitCode::from(*n) == code)
        .map_or(1, i32::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back() {
        for n in 0..=u8::MAX {
            assert_eq!(status(ExitCode::from(n)), i32::from(n));
        }
        assert_eq!(status(ExitCode::SUCCESS), 0);
        assert_eq!(status(ExitCode::FAILURE), 1);
    }
}
