//! `http_status` (a check) and `http_reachable` (a prerequisite): plain-HTTP requests with a
//! timeout and a retry while the server is not up yet; https is refused (no TLS client).

use super::*;

/// What one HTTP request came to.
pub(super) enum HttpAttempt {
    Status(u16),
    /// Nothing answered (refused, timed out, host not found, broken response): worth a retry.
    Unreachable(String),
    /// The request cannot be made at all (bad URL or method): no retry helps.
    Unusable(String),
}

pub(super) fn http_agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        // The status of the URL itself, not of wherever it redirects to.
        .max_redirects(0)
        .timeout_global(Some(timeout))
        .build()
        .new_agent()
}

/// An https URL cannot be requested: this binary has no TLS.
pub(super) fn tls_refusal(url: &str) -> Option<String> {
    url.get(..8)
        .filter(|s| s.eq_ignore_ascii_case("https://"))
        .map(|_| {
            format!("{url} is https, and TLS is not built into this binary; use an http:// URL")
        })
}

pub(super) fn http_once(agent: &ureq::Agent, method: &str, url: &str) -> HttpAttempt {
    let method = match ureq::http::Method::from_bytes(method.as_bytes()) {
        Ok(m) => m,
        Err(e) => return HttpAttempt::Unusable(format!("invalid method {method:?}: {e}")),
    };
    let request = match ureq::http::Request::builder()
        .method(method)
        .uri(url)
        .body(())
    {
        Ok(r) => r,
        Err(e) => return HttpAttempt::Unusable(format!("invalid URL {url:?}: {e}")),
    };
    match agent.run(request) {
        Ok(response) => HttpAttempt::Status(response.status().as_u16()),
        Err(e @ (ureq::Error::BadUri(_) | ureq::Error::Http(_) | ureq::Error::TlsRequired)) => {
            HttpAttempt::Unusable(format!("cannot request {url}: {e}"))
        }
        Err(ureq::Error::StatusCode(code)) => HttpAttempt::Status(code),
        Err(e) => HttpAttempt::Unreachable(e.to_string()),
    }
}

pub(super) fn http_status(spec: &HttpSpec) -> Outcome {
    let url = spec.url.as_str();
    let method = spec.method.as_deref().unwrap_or("GET");
    let expect = spec.expect_status.unwrap_or(200);
    let timeout = Duration::from_millis(spec.timeout_ms.unwrap_or(DEFAULT_HTTP_TIMEOUT_MS));
    let retry_for = Duration::from_millis(spec.retry_for_ms.unwrap_or(0));
    let start = Instant::now();
    let evidence = |status: Option<u16>, attempts: u32| {
        json!({
            "url": url,
            "method": method,
            "expectStatus": expect,
            "status": status,
            "durationMs": millis(start.elapsed()),
            "attempts": attempts,
        })
    };
    if let Some(why) = tls_refusal(url) {
        return Outcome::error(why, evidence(None, 0));
    }
    let agent = http_agent(timeout);
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let attempt = http_once(&agent, method, url);
        match &attempt {
            HttpAttempt::Status(status) if *status == expect => {
                return Outcome::pass(
                    format!(
                        "{method} {url}: status {status} in {}{}",
                        seconds(start.elapsed()),
                        attempts_note(attempts)
                    ),
                    evidence(Some(*status), attempts),
                );
            }
            HttpAttempt::Unusable(why) => {
                return Outcome::error(why.clone(), evidence(None, attempts))
            }
            HttpAttempt::Status(_) | HttpAttempt::Unreachable(_) => {}
        }
        let left = retry_for.saturating_sub(start.elapsed());
        if left.is_zero() {
            let after = plural(attempts as usize, "attempt", "attempts");
            return match attempt {
                HttpAttempt::Status(status) => Outcome::fail(
                    format!("{method} {url}: expected status {expect}, got {status} after {after}"),
                    evidence(Some(status), attempts),
                ),
                HttpAttempt::Unreachable(why) | HttpAttempt::Unusable(why) => Outcome::fail(
                    format!("{method} {url}: no response after {after}: {why}"),
                    evidence(None, attempts),
                ),
            };
        }
        std::thread::sleep(left.min(HTTP_RETRY_PAUSE));
    }
}

pub(super) fn attempts_note(attempts: u32) -> String {
    if attempts > 1 {
        format!(" ({attempts} attempts)")
    } else {
        String::new()
    }
}

pub(super) fn http_reachable(spec: &HttpReachableSpec) -> Outcome {
    let url = spec.url.as_str();
    let start = Instant::now();
    let evidence = |status: Option<u16>| json!({"url": url, "status": status, "durationMs": millis(start.elapsed())});
    if let Some(why) = tls_refusal(url) {
        return Outcome::error(why, evidence(None));
    }
    let timeout = Duration::from_millis(spec.timeout_ms.unwrap_or(DEFAULT_REACHABLE_TIMEOUT_MS));
    match http_once(&http_agent(timeout), "GET", url) {
        HttpAttempt::Status(status) => Outcome::pass(
            format!(
                "{url} answered with status {status} in {}",
                seconds(start.elapsed())
            ),
            evidence(Some(status)),
        ),
        HttpAttempt::Unreachable(why) => {
            Outcome::fail(format!("{url} did not answer: {why}"), evidence(None))
        }
        HttpAttempt::Unusable(why) => Outcome::error(why, evidence(None)),
    }
}
