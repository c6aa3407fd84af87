//! spar's vocabulary: every closed set of words a reviewer, a record or a command line uses
//! (stages, angles, classes, verdicts, dispositions, reviewer states, …), declared once through
//! [`string_enum!`] so the reviewer's strings, the records, the messages and the JSON share one
//! spelling. Parsing is exact and case-sensitive; a value outside its set is a
//! [`ParseValueError`] that names the field and the accepted values.
//!
//! It sits below every other spar module and imports none of them, so a type here never pulls
//! a module into a cycle.

use std::fmt;

/// A value outside its enumeration (G5: the caller turns it into `invalid_output`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseValueError {
    /// The key, e.g. `check_impact`.
    pub field: &'static str,
    /// The value as given.
    pub value: String,
    /// The accepted values, in the documented order.
    pub expected: &'static [&'static str],
}

impl ParseValueError {
    pub fn new(field: &'static str, value: &str, expected: &'static [&'static str]) -> Self {
        ParseValueError {
            field,
            value: value.to_string(),
            expected,
        }
    }
}

impl fmt::Display for ParseValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {:?} is not one of {}",
            self.field,
            self.value,
            self.expected.join(", ")
        )
    }
}

impl std::error::Error for ParseValueError {}

/// Declares a string enumeration: `ALL` and `NAMES` in the documented order, `as_str`, `parse`
/// (exact, `None` otherwise), `Display`, `FromStr` (a [`ParseValueError`] naming `$field`),
/// serde as the same strings, and comparison with a recorded string (`record.status ==
/// Status::Completed`).
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident, $field:literal, { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every value, in the documented order.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// Every value as it is spelled, in the documented order.
            pub const NAMES: [&'static str; [$($text),+].len()] = [$($text),+];

            /// The value as reviewers, records and options spell it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The value spelled exactly `name`.
            pub fn parse(name: &str) -> Option<$name> {
                match name {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::spar::vocab::ParseValueError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::parse(s).ok_or_else(|| {
                    $crate::spar::vocab::ParseValueError::new($field, s, &$name::NAMES)
                })
            }
        }

        impl $crate::spar::vocab::Vocabulary for $name {
            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }

            fn parse(name: &str) -> Option<Self> {
                $name::parse(name)
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.as_str()
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.as_str()
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                self == other.as_str()
            }
        }
    };
}
pub(crate) use string_enum;

/// A closed set declared by [`string_enum!`], seen generically (for [`Word`]).
pub trait Vocabulary: Copy + Eq + 'static {
    /// The value as it is spelled.
    fn as_str(self) -> &'static str;
    /// The value spelled exactly `name`.
    fn parse(name: &str) -> Option<Self>;
}

/// A recorded word of a closed set: the value when it is one of the set, the word as written
/// when it is not. Records keep what they say, so a hand-made record holding a word outside
/// the set is still read (and, say, an unknown class never blocks); the typed value is there
/// for the code that decides. Serialized as the plain string, so a record's bytes do not
/// depend on whether its words were known.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Word<T: Vocabulary> {
    /// One of the set.
    Known(T),
    /// A word outside the set, exactly as recorded (empty for an absent optional key).
    Unknown(String),
}

impl<T: Vocabulary> Word<T> {
    /// Reads a recorded word: the value when it is one of the set (spelled exactly).
    pub fn new(word: &str) -> Self {
        match T::parse(word) {
            Some(v) => Word::Known(v),
            None => Word::Unknown(word.to_string()),
        }
    }

    /// The word as recorded.
    pub fn as_str(&self) -> &str {
        match self {
            Word::Known(v) => v.as_str(),
            Word::Unknown(s) => s,
        }
    }

    /// The value, when the word is one of the set.
    pub fn known(&self) -> Option<T> {
        match self {
            Word::Known(v) => Some(*v),
            Word::Unknown(_) => None,
        }
    }
}

impl<T: Vocabulary> Default for Word<T> {
    /// The empty word (an absent optional key of an older record).
    fn default() -> Self {
        Word::Unknown(String::new())
    }
}

impl<T: Vocabulary> From<T> for Word<T> {
    fn from(v: T) -> Self {
        Word::Known(v)
    }
}

impl<T: Vocabulary> PartialEq<T> for Word<T> {
    fn eq(&self, other: &T) -> bool {
        self.known() == Some(*other)
    }
}

impl<T: Vocabulary> fmt::Display for Word<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<T: Vocabulary> serde::Serialize for Word<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de, T: Vocabulary> serde::Deserialize<'de> for Word<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| Word::new(&s))
    }
}

string_enum!(
    /// The stage a round reviews (`--stage`), each with its own cap.
    Stage, "stage", {
        Plan = "plan",
        PlanDelta = "plan-delta",
        Code = "code",
    }
);

impl Stage {
    /// Reads `--stage` (a usage error when it is not a stage).
    pub fn from_option(stage: &str) -> crate::error::Result<Stage> {
        Stage::parse(stage).ok_or_else(|| {
            crate::error::Error::usage(format!(
                "--stage {stage:?} is not one of {}",
                Stage::NAMES.join(", ")
            ))
        })
    }
}

string_enum!(
    /// One of the five review angles, in their fixed order.
    #[derive(PartialOrd, Ord)]
    Angle, "angle", {
        /// Does the change do what it claims.
        Correctness = "correctness",
        /// Does it break what worked.
        Regression = "regression",
        /// Do its checks prove anything.
        Checks = "checks",
        /// Does it keep the contract and rules.
        Contract = "contract",
        /// Does it open a hole.
        Security = "security",
    }
);

string_enum!(
    /// `proposed_class` of a finding, and the class the rules decide (the same four values).
    Class, "proposed_class", {
        Defect = "defect",
        Hardening = "hardening",
        Note = "note",
        RequirementQuestion = "requirement-question",
    }
);

impl Class {
    /// Whether a finding of this class blocks the gate until it is triaged.
    pub const fn blocks(self) -> bool {
        matches!(self, Class::Defect | Class::RequirementQuestion)
    }

    /// Whether a recorded class blocks: a class outside the four never does.
    pub fn name_blocks(recorded: &str) -> bool {
        Class::parse(recorded).is_some_and(Class::blocks)
    }
}

impl Word<Class> {
    /// Whether a recorded class blocks: a class outside the four never does.
    pub fn blocks(&self) -> bool {
        self.known().is_some_and(Class::blocks)
    }
}

/// The reviewer's proposal uses the same values as the decided class.
pub type ProposedClass = Class;

string_enum!(
    /// `check_impact`: what the finding does to the change's checks.
    CheckImpact, "check_impact", {
        None = "none",
        FalsePass = "false_pass",
        MeaningInverted = "meaning_inverted",
        ContractViolation = "contract_violation",
    }
);

string_enum!(
    /// `introduced_by_change` and `regression`.
    Answer, "yes/no/unknown", {
        Yes = "yes",
        No = "no",
        Unknown = "unknown",
    }
);

string_enum!(
    /// `verdict` (G3).
    Verdict, "verdict", {
        /// Nothing the reviewer found blocks.
        NoBlockingFindings = "no_blocking_findings",
        /// Something the reviewer found blocks.
        BlockingFindings = "blocking_findings",
        /// Valid output, but the reviewer is recorded as `failed`.
        CouldNotReview = "could_not_review",
    }
);

string_enum!(
    /// `confidence` of a finding.
    Confidence, "confidence", {
        High = "high",
        Medium = "medium",
        Low = "low",
    }
);

string_enum!(
    /// `link_kind` of a finding (the "review round §3" values).
    LinkKind, "link_kind", {
        Rule = "rule",
        Contract = "contract",
        Criterion = "criterion",
        None = "none",
    }
);

string_enum!(
    /// How a reviewer of a round came out, as `round.json` records it.
    Status, "status", {
        /// The result was read and checked.
        Completed = "completed",
        /// The reviewer ran and failed, or said `could_not_review` (G3), or its executable is
        /// unusable (G14).
        Failed = "failed",
        /// The result broke the input contract (G1–G6).
        InvalidOutput = "invalid_output",
        /// The reviewer used a tool outside its preset's list (G10, G11).
        ToolViolation = "tool_violation",
        /// The reviewer could not be started or was refused (G13, G14).
        Unavailable = "unavailable",
        /// A native reviewer whose result is not recorded yet.
        Pending = "pending",
    }
);

string_enum!(
    /// What triage decided about a finding (a line of `ledger.jsonl`); `auto_deferred` is
    /// written by the round itself for hardening.
    Disposition, "disposition", {
        Fixed = "fixed",
        Duplicate = "duplicate",
        Rejected = "rejected",
        Deferred = "deferred",
        Answered = "answered",
        Accepted = "accepted",
        AutoDeferred = "auto_deferred",
    }
);

impl Disposition {
    /// The dispositions `git spar triage` records, in the order its messages list them.
    pub const TRIAGE: [Disposition; 6] = [
        Disposition::Fixed,
        Disposition::Duplicate,
        Disposition::Rejected,
        Disposition::Deferred,
        Disposition::Answered,
        Disposition::Accepted,
    ];

    /// The disposition table of spec.md: the classes a disposition is allowed for, and the
    /// options it needs (`--commit` is optional for `fixed` only). `None` for `auto_deferred`,
    /// which triage never records.
    pub fn rule(self) -> Option<(&'static [Class], &'static [&'static str])> {
        use Class::*;
        Some(match self {
            Disposition::Fixed => (&[Defect, Hardening], &["--failed-before", "--passed-after"]),
            Disposition::Duplicate => (&[Defect, Hardening, RequirementQuestion], &["--of"]),
            Disposition::Rejected => (&[Defect, Hardening, RequirementQuestion], &["--evidence"]),
            Disposition::Deferred => (
                &[Defect, Hardening, RequirementQuestion],
                &["--to", "--user-quote"],
            ),
            Disposition::Answered => (&[RequirementQuestion], &["--user-quote"]),
            Disposition::Accepted => (&[Defect], &["--user-quote"]),
            Disposition::AutoDeferred => return None,
        })
    }

    /// Whether it rests on the user's word (it takes `--user-quote`): a decision only a person
    /// can make, counted at a gate under a signing policy only when a person signed it.
    pub fn rests_on_users_word(self) -> bool {
        self.rule()
            .is_some_and(|(_, needs)| needs.contains(&"--user-quote"))
    }
}

string_enum!(
    /// The causes a `code` extension may name (G31), case-sensitive.
    CodeCause, "cause", {
        Churn = "churn",
        Recurring = "recurring",
        Unrelated = "unrelated",
        Hardening = "hardening",
        Other = "other",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_parse_exactly() {
        for s in Stage::ALL {
            assert_eq!(Stage::parse(s.as_str()), Some(s));
        }
        assert_eq!(Stage::NAMES, ["plan", "plan-delta", "code"]);
        assert_eq!(Stage::parse("Code"), None);
        assert_eq!(
            "x".parse::<Disposition>().unwrap_err().to_string(),
            "disposition: \"x\" is not one of fixed, duplicate, rejected, deferred, answered, accepted, auto_deferred"
        );
        let (pending, failed) = (String::from("pending"), String::from("failed"));
        assert!("completed" == Status::Completed && pending == Status::Pending);
        assert!(failed != Status::Completed && *"failed" != Status::Completed);
    }

    #[test]
    fn words_keep_their_bytes_known_or_not() {
        let known: Word<Class> = serde_json::from_str("\"defect\"").unwrap();
        assert_eq!(known, Word::Known(Class::Defect));
        assert!(known == Class::Defect && known != Class::Note);
        assert_eq!(serde_json::to_string(&known).unwrap(), "\"defect\"");
        let unknown: Word<Class> = serde_json::from_str("\"Defect\"").unwrap();
        assert_eq!(unknown, Word::Unknown("Defect".to_string()));
        assert!(unknown != Class::Defect && unknown.known().is_none());
        assert_eq!(unknown.as_str(), "Defect");
        assert_eq!(serde_json::to_string(&unknown).unwrap(), "\"Defect\"");
        let empty = Word::<LinkKind>::default();
        assert_eq!(serde_json::to_string(&empty).unwrap(), "\"\"");
        assert_eq!(Word::from(Status::Pending).to_string(), "pending");
        let opt: Option<Word<Verdict>> = serde_json::from_str("null").unwrap();
        assert_eq!(serde_json::to_string(&opt).unwrap(), "null");
    }

    #[test]
    fn blocking_classes() {
        assert!(Class::Defect.blocks() && Class::RequirementQuestion.blocks());
        assert!(!Class::Hardening.blocks() && !Class::Note.blocks());
        assert!(Class::name_blocks("defect") && !Class::name_blocks("Defect"));
        assert!(!Class::name_blocks("bogus"));
    }

    #[test]
    fn disposition_table() {
        use Class::*;
        assert!(Disposition::Fixed.rule().unwrap().0.contains(&Hardening));
        assert!(!Disposition::Duplicate.rule().unwrap().0.contains(&Note));
        assert_eq!(
            Disposition::Answered.rule().unwrap().0,
            &[RequirementQuestion]
        );
        assert_eq!(Disposition::Accepted.rule().unwrap().0, &[Defect]);
        assert!(Disposition::parse("Fixed").is_none());
        assert!(Disposition::AutoDeferred.rule().is_none());
        let personal: Vec<Disposition> = Disposition::TRIAGE
            .into_iter()
            .filter(|d| d.rests_on_users_word())
            .collect();
        assert_eq!(
            personal,
            [
                Disposition::Deferred,
                Disposition::Answered,
                Disposition::Accepted
            ]
        );
    }

    #[test]
    fn every_triage_disposition_has_a_rule() {
        for d in Disposition::TRIAGE {
            assert!(d.rule().is_some(), "{d}");
        }
    }
}
