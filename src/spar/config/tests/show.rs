//! the effective configuration, and %q.

use super::*;

#[test]
fn effective_json_shows_values_origins_sources_and_digest() {
    let fx = Fx::new();
    let (env, user) =
        fx.user("timeout_seconds = 60\n[[reviewers]]\npreset = \"claude\"\nmodel = \"opus\"\n");
    fx.write("work/AGENTS.md", "x\n");
    let project = fx.write(
        "work/.jaekit/spar.toml",
        "rules = [\"AGENTS.md\"]\n[caps]\ncode = 5\n",
    );
    let cfg = load(&env);
    let j = cfg.effective_json();
    assert_eq!(j["schema"], "spar-config/v1");
    assert_eq!(j["digest"], json!(cfg.digest()));
    assert_eq!(j["sources"]["user"]["source"], "SPAR_CONFIG");
    assert_eq!(j["sources"]["project"]["present"], true);
    assert_eq!(j["files"][1]["path"], json!(project.display().to_string()));
    assert_eq!(j["timeout_seconds"]["value"], 60);
    assert_eq!(
        j["timeout_seconds"]["from"],
        json!(format!("{}:1", user.display()))
    );
    let r = &j["reviewers"]["list"][0];
    assert_eq!(r["name"], json!({"value": "claude", "from": "default"}));
    assert_eq!(r["model"]["from"], json!(format!("{}:4", user.display())));
    assert_eq!(r["timeout_seconds"]["value"], 60);
    assert_eq!(j["caps"]["code"]["value"], 5);
    assert_eq!(j["caps"]["plan"], json!({"value": 2, "from": "default"}));
    assert_eq!(j["rules"][0]["value"], "AGENTS.md");
    assert_eq!(j["angles"]["from"], "default");

    // The digest is the sha256 of the applied values alone.
    assert_eq!(
        cfg.digest(),
        sha256_hex(cfg.applied_values().to_string().as_bytes())
    );
    let applied = cfg.applied_values().to_string();
    assert!(!applied.contains(&fx.root().display().to_string()));

    let text = cfg.render_text();
    assert!(text.contains("timeout_seconds = 60 ("), "{text}");
    assert!(text.contains("caps.plan = 2 (default)"), "{text}");
    assert!(text.contains(&cfg.digest()), "{text}");
    assert!(text.contains("model = \"opus\""), "{text}");
}

#[test]
fn effective_json_lists_skipped_sources() {
    let fx = Fx::new();
    let cfg = load(&fx.env());
    let j = cfg.effective_json();
    assert_eq!(j["sources"]["user"], Value::Null);
    assert_eq!(j["sources"]["skipped"].as_array().unwrap().len(), 5);
    assert_eq!(j["sources"]["skipped"][0]["path"], Value::Null);
    assert_eq!(j["sources"]["skipped"][1]["reason"], "does not exist");
    assert_eq!(j["reviewers"]["from"], "default");
    assert!(cfg.render_text().contains("user file: none (defaults)"));
}

#[test]
fn quote_is_like_go() {
    assert_eq!(quote("codex"), "\"codex\"");
    assert_eq!(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
    assert_eq!(
        quote("\u{7}\u{8}\u{c}\n\r\t\u{b}"),
        "\"\\a\\b\\f\\n\\r\\t\\v\""
    );
    assert_eq!(quote("\u{0}\u{1b}\u{7f}"), "\"\\x00\\x1b\\x7f\"");
    assert_eq!(
        quote("\u{85}\u{a0}\u{200b}\u{feff}"),
        "\"\\u0085\\u00a0\\u200b\\ufeff\""
    );
    assert_eq!(quote("\u{e0001}"), "\"\\U000e0001\"");
    assert_eq!(quote("한글 é 🎉 a b"), "\"한글 é 🎉 a b\"");
    assert_eq!(quote_bytes(b"a\xffb\xe2\x82"), "\"a\\xffb\\xe2\\x82\"");
}
