//! The class of a finding: the seven fixed rules of the spec ("review round §6") for a readable
//! location, and the seed's §4 variant for an unreadable one.
//!
//! The reviewer only proposes; these rules decide. They are ordered so that what a check-path
//! finding says about the checks themselves (a false pass, an inverted meaning, a confirmed
//! contract violation) is always a defect, while everything else in the check paths is hardening
//! that is auto-deferred and never blocks. An unreadable location can not be placed in or out of
//! the check paths, so §4 drops the two check-path rules (3 and 6) and applies 1 and 2 without the
//! check-path condition: a misread location may leave more defects for a person, but never hides
//! a defect as hardening or a note.

use super::location::{LinkResult, Location};
// The classes and the reviewer's values the rules read, from the vocabulary.
pub use super::vocab::{Answer, CheckImpact, Class, ProposedClass};

/// What the rules look at, as the reviewer gave it and as the location and link were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingFacts {
    pub proposed_class: Class,
    pub check_impact: CheckImpact,
    pub introduced_by_change: Answer,
    pub regression: Answer,
    /// Whether the link was confirmed (G8 rule/contract or G9 criterion).
    pub link_confirmed: bool,
    /// Whether the location's path is in the check paths (ignored when unreadable).
    pub in_check_paths: bool,
    /// `Some(reason)` when the location is unreadable (G7): then §4 applies.
    pub unreadable: Option<String>,
}

impl FindingFacts {
    /// The reviewer's values, with an unconfirmed link and a readable location outside the check
    /// paths until [`FindingFacts::location`] and [`FindingFacts::link`] say otherwise.
    pub fn new(
        proposed_class: Class,
        check_impact: CheckImpact,
        introduced_by_change: Answer,
        regression: Answer,
    ) -> FindingFacts {
        FindingFacts {
            proposed_class,
            check_impact,
            introduced_by_change,
            regression,
            link_confirmed: false,
            in_check_paths: false,
            unreadable: None,
        }
    }

    /// Takes `in_check_paths` and unreadability from a resolved location.
    pub fn location(mut self, location: &Location) -> FindingFacts {
        self.in_check_paths = location.in_check_paths;
        self.unreadable = location.unreadable.clone();
        self
    }

    /// Takes the link confirmation from a resolved link.
    pub fn link(mut self, link: &LinkResult) -> FindingFacts {
        self.link_confirmed = link.confirmed;
        self
    }
}

/// The decided class, why, and whether the round records an `auto_deferred` ledger entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    pub class: Class,
    /// Which rule decided, in words; for an unreadable location it starts with
    /// `unreadable location (<reason>)`.
    pub class_reason: String,
    /// Hardening with a readable location is auto-deferred; an unreadable location never is (§4).
    pub auto_deferred: bool,
}

/// Classifies one finding: the first rule that matches decides.
pub fn classify(facts: &FindingFacts) -> Classification {
    let (class, class_reason) = match &facts.unreadable {
        None => readable_rules(facts),
        Some(reason) => {
            let (class, why) = unreadable_rules(facts);
            (class, format!("unreadable location ({reason}); {why}"))
        }
    };
    Classification {
        class,
        auto_deferred: facts.unreadable.is_none() && class == Class::Hardening,
        class_reason,
    }
}

fn both_yes(facts: &FindingFacts) -> bool {
    facts.introduced_by_change == Answer::Yes && facts.regression == Answer::Yes
}

/// The seven rules (spec "Classification").
fn readable_rules(facts: &FindingFacts) -> (Class, String) {
    let impact = facts.check_impact;
    let proposed = facts.proposed_class;
    if facts.in_check_paths {
        return match impact {
            CheckImpact::FalsePass | CheckImpact::MeaningInverted => (
                Class::Defect,
                format!("rule 1: in the check paths with check_impact {impact}"),
            ),
            CheckImpact::ContractViolation if facts.link_confirmed => (
                Class::Defect,
                "rule 2: in the check paths with check_impact contract_violation and a \
                 confirmed link"
                    .to_string(),
            ),
            _ => (
                Class::Hardening,
                format!(
                    "rule 3: in the check paths with check_impact {impact}{}: hardening, \
                     auto-deferred (proposed {proposed})",
                    if impact == CheckImpact::ContractViolation {
                        " but no confirmed link"
                    } else {
                        ""
                    }
                ),
            ),
        };
    }
    if proposed == Class::RequirementQuestion {
        return (
            Class::RequirementQuestion,
            "rule 4: proposed requirement-question".to_string(),
        );
    }
    if both_yes(facts) {
        return (
            Class::Defect,
            "rule 5: introduced by the change and a regression".to_string(),
        );
    }
    if proposed == Class::Defect && !facts.link_confirmed {
        return (
            Class::Note,
            "rule 6: proposed defect without a confirmed link".to_string(),
        );
    }
    (proposed, format!("rule 7: the proposed class {proposed}"))
}

/// The §4 variant: rules 1 and 2 without the check-path condition, no rule 3 or 6.
fn unreadable_rules(facts: &FindingFacts) -> (Class, String) {
    let impact = facts.check_impact;
    let proposed = facts.proposed_class;
    match impact {
        CheckImpact::FalsePass | CheckImpact::MeaningInverted => {
            return (
                Class::Defect,
                format!("check_impact {impact}, wherever the location is"),
            );
        }
        CheckImpact::ContractViolation if facts.link_confirmed => {
            return (
                Class::Defect,
                "check_impact contract_violation with a confirmed link, wherever the location is"
                    .to_string(),
            );
        }
        _ => {}
    }
    if proposed == Class::RequirementQuestion {
        return (
            Class::RequirementQuestion,
            "proposed requirement-question".to_string(),
        );
    }
    if both_yes(facts) {
        return (
            Class::Defect,
            "introduced by the change and a regression".to_string(),
        );
    }
    let why = if proposed == Class::Defect && !facts.link_confirmed {
        "the proposed class defect (kept even without a confirmed link)".to_string()
    } else {
        format!("the proposed class {proposed} (not auto-deferred)")
    };
    (proposed, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(proposed: &str, impact: &str) -> FindingFacts {
        FindingFacts::new(
            proposed.parse().unwrap(),
            impact.parse().unwrap(),
            Answer::No,
            Answer::No,
        )
    }

    fn in_checks(mut f: FindingFacts) -> FindingFacts {
        f.in_check_paths = true;
        f
    }

    fn unreadable(mut f: FindingFacts) -> FindingFacts {
        f.in_check_paths = true; // ignored once unreadable
        f.unreadable = Some("x".to_string());
        f
    }

    fn confirmed(mut f: FindingFacts) -> FindingFacts {
        f.link_confirmed = true;
        f
    }

    fn yes_yes(mut f: FindingFacts) -> FindingFacts {
        f.introduced_by_change = Answer::Yes;
        f.regression = Answer::Yes;
        f
    }

    fn class(f: FindingFacts) -> (Class, bool) {
        let c = classify(&f);
        (c.class, c.auto_deferred)
    }

    #[test]
    fn enumerations_are_exact() {
        assert_eq!(
            "requirement-question".parse(),
            Ok(Class::RequirementQuestion)
        );
        assert!("Defect".parse::<Class>().is_err());
        assert!("requirement_question".parse::<Class>().is_err());
        assert!(" none".parse::<CheckImpact>().is_err());
        let err = "maybe".parse::<Answer>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "yes/no/unknown: \"maybe\" is not one of yes, no, unknown"
        );
        for c in Class::ALL {
            assert_eq!(c.as_str().parse::<Class>(), Ok(c));
        }
        assert_eq!(
            serde_json::to_string(&CheckImpact::FalsePass).unwrap(),
            "\"false_pass\""
        );
    }

    #[test]
    fn readable_rules_in_order() {
        use Class::*;
        assert_eq!(
            class(in_checks(facts("note", "false_pass"))),
            (Defect, false)
        );
        assert_eq!(
            class(in_checks(facts("note", "meaning_inverted"))),
            (Defect, false)
        );
        assert_eq!(
            class(in_checks(confirmed(facts("note", "contract_violation")))),
            (Defect, false)
        );
        assert_eq!(
            class(in_checks(facts("defect", "contract_violation"))),
            (Hardening, true)
        );
        assert_eq!(
            class(in_checks(yes_yes(facts("defect", "none")))),
            (Hardening, true)
        );
        assert_eq!(
            class(facts("requirement-question", "none")),
            (RequirementQuestion, false)
        );
        assert_eq!(class(yes_yes(facts("note", "none"))), (Defect, false));
        assert_eq!(
            class(facts("defect", "false_pass")),
            (Note, false),
            "outside: rule 6"
        );
        assert_eq!(class(confirmed(facts("defect", "none"))), (Defect, false));
        assert_eq!(class(facts("note", "none")), (Note, false));
        assert_eq!(class(facts("hardening", "none")), (Hardening, true));
        let c = classify(&in_checks(facts("defect", "none")));
        assert!(c.class_reason.starts_with("rule 3:"), "{}", c.class_reason);
    }

    #[test]
    fn unreadable_rules_in_order() {
        use Class::*;
        assert_eq!(
            class(unreadable(facts("note", "false_pass"))),
            (Defect, false)
        );
        assert_eq!(
            class(unreadable(confirmed(facts("note", "contract_violation")))),
            (Defect, false)
        );
        assert_eq!(
            class(unreadable(facts("note", "contract_violation"))),
            (Note, false)
        );
        assert_eq!(
            class(unreadable(yes_yes(facts("requirement-question", "none")))),
            (RequirementQuestion, false)
        );
        assert_eq!(
            class(unreadable(yes_yes(facts("hardening", "none")))),
            (Defect, false)
        );
        assert_eq!(class(unreadable(facts("defect", "none"))), (Defect, false));
        assert_eq!(
            class(unreadable(facts("hardening", "none"))),
            (Hardening, false)
        );
        let c = classify(&unreadable(facts("note", "none")));
        assert!(
            c.class_reason.starts_with("unreadable location (x)"),
            "{}",
            c.class_reason
        );
    }
}
