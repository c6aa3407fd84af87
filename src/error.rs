//! One error type for both tools, mapped to the exit codes of the spec in one place.
//!
//! | code | meaning |
//! |---|---|
//! | 64 | usage error |
//! | 65 | refused: input out of form, configuration error, illegal transition; nothing written |
//! | 70 | internal error: a bug or a broken repository |
//! | 75 | temporary: a lock another process may hold (a running git) is in the way; try again |
//!
//! Verdict codes (1 FAIL, 2 blocked, 3 ABORT_PRECHECK, 4 no reviewer could run) are not errors: commands return them
//! as [`crate::error::Outcome`].

use std::fmt;

/// What kind of failure, which decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 64: the command line is malformed.
    Usage,
    /// 65: the input is out of form or the transition is illegal; nothing was written.
    Refused,
    /// 70: something broke that is not the user's input.
    Internal,
    /// 75 (`EX_TEMPFAIL`): a lock that may belong to a running process is in the way; the same
    /// command can succeed later, or once the named file is gone.
    Temporary,
}

impl Kind {
    pub fn exit_code(self) -> u8 {
        match self {
            Kind::Usage => 64,
            Kind::Refused => 65,
            Kind::Internal => 70,
            Kind::Temporary => 75,
        }
    }
}

/// An error with its kind, a message, and (for refusals) the next command to run.
#[derive(Debug)]
pub struct Error {
    pub kind: Kind,
    pub message: String,
    pub hint: Option<String>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn usage(message: impl Into<String>) -> Self {
        Error {
            kind: Kind::Usage,
            message: message.into(),
            hint: None,
        }
    }
    pub fn refused(message: impl Into<String>) -> Self {
        Error {
            kind: Kind::Refused,
            message: message.into(),
            hint: None,
        }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Error {
            kind: Kind::Internal,
            message: message.into(),
            hint: None,
        }
    }
    pub fn temporary(message: impl Into<String>) -> Self {
        Error {
            kind: Kind::Temporary,
            message: message.into(),
            hint: None,
        }
    }
    /// Adds the next command (or step) the user should take.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
    /// Prefixes the message with what was being done.
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\nhint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Adds context to any displayable error and makes it an internal error.
pub trait Context<T> {
    fn ctx(self, what: impl fmt::Display) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn ctx(self, what: impl fmt::Display) -> Result<T> {
        self.map_err(|e| Error::internal(format!("{what}: {e:#}")))
    }
}

/// The exit status of a command that ran to its end: success or a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// 0: success, PASS, gate passed.
    Ok,
    /// 1: validate verdict FAIL.
    Fail,
    /// 2: gate blocked.
    Blocked,
    /// 3: validate ABORT_PRECHECK.
    AbortPrecheck,
    /// 4: `git spar run` recorded a round in which no reviewer could run (not counted).
    NoReviewer,
    /// Another code a hook passes on (a chained hook's own exit code).
    Code(u8),
}

impl Outcome {
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Ok => 0,
            Outcome::Fail => 1,
            Outcome::Blocked => 2,
            Outcome::AbortPrecheck => 3,
            Outcome::NoReviewer => 4,
            Outcome::Code(c) => c,
        }
    }
}
