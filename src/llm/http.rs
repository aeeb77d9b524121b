//! The HTTP exchange shared by the `openai` and `anthropic` providers: one
//! JSON POST with connect and whole-request timeouts (the body included),
//! retried with exponential backoff and full jitter on transient failures,
//! honouring `Retry-After`. Answers are read up to `max_answer_bytes` and
//! error bodies up to `ERROR_BODY_BYTES`, never unbounded. Redirects are
//! followed only within the configured origin, so the key and the prompt
//! never go anywhere else. It knows nothing of either API's body shape; it
//! keeps keys out of every error and `Debug` output, and masks a key a
//! server echoes back in any body it returns.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::blocking::{Client, Response};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, LOCATION, RETRY_AFTER};
use reqwest::redirect;
use serde_json::Value;

use super::Config;
use super::error::{Error, is_transient};

/// No server-requested or backoff wait is longer than this: a review should
/// fail visibly rather than stall for an hour on a misbehaving proxy.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// How much of an error body goes into an error message.
const BODY_START_CHARS: usize = 500;

/// How much of an error body is read at all: it is only shown in part.
const ERROR_BODY_BYTES: usize = 64 * 1024;

/// Same-origin redirects followed before giving up.
const MAX_REDIRECTS: usize = 5;

/// What a key echoed by a server becomes in every text speed keeps.
pub(crate) const MASK: &str = "[REDACTED:api-key]";

/// Keys shorter than this are placeholders for local servers ("ollama",
/// "none"): masking them would garble answers that happen to contain the
/// word, and they protect nothing.
const MIN_MASKED_KEY: usize = 8;

/// An API key. Its `Debug` never shows the value, and it has no `Display`.
#[derive(Clone)]
pub(crate) struct Secret(String);

impl Secret {
    pub(crate) fn new(value: String) -> Secret {
        Secret(value)
    }

    /// A header value marked sensitive, so that reqwest's own `Debug` output
    /// hides it too.
    pub(crate) fn header(&self, var_hint: &str, prefix: &str) -> Result<HeaderValue, Error> {
        let mut value =
            HeaderValue::from_str(&format!("{prefix}{}", self.0)).map_err(|_| Error::Client {
                reason: format!(
                    "the API key ({var_hint}) contains characters not allowed in an HTTP header"
                ),
            })?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// `text` with every occurrence of the key, as sent or as a JSON string
    /// escapes it, replaced by `MASK`.
    pub(crate) fn mask<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.0.len() < MIN_MASKED_KEY {
            return Cow::Borrowed(text);
        }
        let mut masked = Cow::Borrowed(text);
        let escaped = serde_json::to_string(&self.0).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        for form in [self.0.as_str(), escaped, &escaped.replace('/', "\\/")] {
            if !form.is_empty() && masked.contains(form) {
                masked = Cow::Owned(masked.replace(form, MASK));
            }
        }
        masked
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// The HTTP methods speed uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// What a request carries.
pub(crate) enum Payload<'a> {
    Empty,
    Json(&'a Value),
    /// A body built by the caller (a multipart upload).
    Bytes {
        content_type: String,
        bytes: Vec<u8>,
    },
}

/// One request: where, what, the most of an answer read, and whether it may
/// be sent twice (a batch's creation must not: it would be paid twice).
pub(crate) struct Outgoing<'a> {
    pub method: Method,
    pub url: &'a str,
    pub headers: &'a HeaderMap,
    pub payload: Payload<'a>,
    pub limit: usize,
    pub idempotent: bool,
}

/// A successful exchange: the parsed body and the requests it took.
pub(crate) struct Answer {
    pub json: Value,
    pub attempts: u32,
}

#[derive(Debug)]
pub(crate) struct Transport {
    client: Client,
    timeout: Duration,
    max_retries: u32,
    retry_base: Duration,
    max_answer_bytes: usize,
    /// The key, to mask wherever a server echoes it.
    key: Option<Secret>,
}

/// What one attempt produced, before the retry decision.
enum Attempt {
    Answered {
        status: u16,
        retry_after: Option<Duration>,
        body: String,
    },
    /// A redirect the policy did not follow: it leaves the origin.
    Redirected {
        status: u16,
        location: String,
    },
    /// A success whose body is longer than `max_answer_bytes`.
    TooLarge,
    Failed(Failure),
}

/// Why an attempt got no complete answer.
struct Failure {
    timeout: bool,
    /// The request could not even be built (a bad URL).
    builder: bool,
    reason: String,
}

impl Failure {
    fn of(err: &reqwest::Error) -> Failure {
        Failure {
            timeout: err.is_timeout(),
            builder: err.is_builder(),
            reason: error_chain(err),
        }
    }

    /// A failure while reading the body: reqwest wraps its own error in the
    /// `io::Error` its reader returns.
    fn of_read(err: &std::io::Error) -> Failure {
        match err
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<reqwest::Error>())
        {
            Some(inner) => Failure::of(inner),
            None => Failure {
                timeout: err.kind() == std::io::ErrorKind::TimedOut,
                builder: false,
                reason: error_chain(err),
            },
        }
    }
}

impl Transport {
    /// `base` is the configured base URL: redirects are followed only while
    /// they stay on its origin (scheme, host and port).
    pub(crate) fn new(
        config: &Config,
        base: &str,
        key: Option<&Secret>,
    ) -> Result<Transport, Error> {
        let origin = reqwest::Url::parse(base)
            .map_err(|err| Error::BadUrl {
                url: base.to_string(),
                reason: err.to_string(),
            })?
            .origin();
        let policy = redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if attempt.url().origin() == origin {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let client = Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            .redirect(policy)
            .user_agent(concat!("speed/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| Error::Client {
                reason: error_chain(&err),
            })?;
        Ok(Transport {
            client,
            timeout: config.timeout,
            max_retries: config.max_retries,
            retry_base: config.retry_base,
            max_answer_bytes: config.max_answer_bytes,
            key: key.cloned(),
        })
    }

    /// POSTs `body` as JSON and returns the parsed JSON of a 2xx answer.
    pub(crate) fn post(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<Answer, Error> {
        let request = Outgoing {
            method: Method::Post,
            url,
            headers,
            payload: Payload::Json(body),
            limit: self.max_answer_bytes,
            idempotent: true,
        };
        self.json(&request)
    }

    /// GETs `url` and returns the parsed JSON of a 2xx answer.
    pub(crate) fn get(&self, url: &str, headers: &HeaderMap) -> Result<Answer, Error> {
        let request = Outgoing {
            method: Method::Get,
            url,
            headers,
            payload: Payload::Empty,
            limit: self.max_answer_bytes,
            idempotent: true,
        };
        self.json(&request)
    }

    /// Sends `request` and returns the body of a 2xx answer as text (up to
    /// its limit) with the attempts it took.
    pub(crate) fn text(&self, request: &Outgoing<'_>) -> Result<(String, u32), Error> {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let may_retry = attempts <= self.max_retries;
            let wait = match self.attempt(request) {
                Attempt::Answered { status, body, .. } if (200..300).contains(&status) => {
                    return Ok((body, attempts));
                }
                Attempt::Answered {
                    status,
                    retry_after,
                    body,
                } => {
                    // A request that must not run twice is retried only when
                    // the server said it did not run it (rate limited).
                    let again = is_transient(status) && (request.idempotent || status == 429);
                    if !(may_retry && again) {
                        return Err(Error::Status {
                            method: request.method.as_str(),
                            url: request.url.to_string(),
                            status,
                            body: body_start(&body),
                            attempts,
                        });
                    }
                    retry_after.unwrap_or_else(|| backoff(self.retry_base, attempts))
                }
                Attempt::Redirected { status, location } => {
                    return Err(Error::Redirect {
                        url: request.url.to_string(),
                        status,
                        location,
                    });
                }
                Attempt::TooLarge => {
                    return Err(Error::TooLarge {
                        origin: request.url.to_string(),
                        limit: request.limit,
                        attempts,
                    });
                }
                Attempt::Failed(failure) if failure.builder => {
                    return Err(Error::BadUrl {
                        url: request.url.to_string(),
                        reason: failure.reason,
                    });
                }
                Attempt::Failed(failure) => {
                    // A timeout may have reached the server: a request that
                    // must not run twice is not sent again.
                    let again = request.idempotent || !failure.timeout;
                    if !(may_retry && again) {
                        return Err(if failure.timeout {
                            Error::Timeout {
                                target: request.url.to_string(),
                                after: self.timeout,
                                attempts,
                            }
                        } else {
                            Error::Connect {
                                url: request.url.to_string(),
                                reason: failure.reason,
                                attempts,
                            }
                        });
                    }
                    backoff(self.retry_base, attempts)
                }
            };
            std::thread::sleep(wait);
        }
    }

    /// Sends `request` and parses the body of a 2xx answer as JSON.
    pub(crate) fn json(&self, request: &Outgoing<'_>) -> Result<Answer, Error> {
        let (body, attempts) = self.text(request)?;
        match serde_json::from_str(&body) {
            Ok(json) => Ok(Answer { json, attempts }),
            Err(err) => Err(Error::BadResponse {
                url: request.url.to_string(),
                reason: format!("the body is not JSON ({err})"),
                body: body_start(&body),
                attempts,
            }),
        }
    }

    fn attempt(&self, request: &Outgoing<'_>) -> Attempt {
        // A per-request timeout, unlike the client's, bounds the reading of
        // the body too: a server trickling bytes cannot stretch it.
        let builder = match request.method {
            Method::Get => self.client.get(request.url),
            Method::Post => self.client.post(request.url),
        };
        let builder = builder
            .headers(request.headers.clone())
            .timeout(self.timeout);
        let builder = match &request.payload {
            Payload::Empty => builder,
            Payload::Json(body) => builder.json(body),
            Payload::Bytes {
                content_type,
                bytes,
            } => builder
                .header(reqwest::header::CONTENT_TYPE, content_type.as_str())
                .body(bytes.clone()),
        };
        let response = match builder.send() {
            Ok(response) => response,
            Err(err) => return Attempt::Failed(Failure::of(&err)),
        };
        let status = response.status().as_u16();
        if response.status().is_redirection() {
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|value| value.to_str().ok())
                .map(|value| self.mask(value).into_owned())
                .unwrap_or_else(|| "(no Location header)".to_string());
            return Attempt::Redirected { status, location };
        }
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| retry_after(value, SystemTime::now()));
        let success = response.status().is_success();
        let limit = if success {
            request.limit
        } else {
            ERROR_BODY_BYTES
        };
        if success && response.content_length().is_some_and(|n| n > limit as u64) {
            return Attempt::TooLarge;
        }
        match read_at_most(response, limit) {
            Ok((_, true)) if success => Attempt::TooLarge,
            Ok((bytes, _)) => Attempt::Answered {
                status,
                retry_after,
                body: self.mask(&String::from_utf8_lossy(&bytes)).into_owned(),
            },
            Err(err) => Attempt::Failed(Failure::of_read(&err)),
        }
    }

    fn mask<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match &self.key {
            Some(key) => key.mask(text),
            None => Cow::Borrowed(text),
        }
    }
}

/// Whether `url` is on the same origin (scheme, host, port) as `base`:
/// a URL a server hands back is fetched with the key only then.
pub(crate) fn same_origin(base: &str, url: &str) -> bool {
    match (reqwest::Url::parse(base), reqwest::Url::parse(url)) {
        (Ok(base), Ok(url)) => base.origin() == url.origin(),
        _ => false,
    }
}

/// Up to `limit` bytes of the body, and whether there was more.
fn read_at_most(response: Response, limit: usize) -> std::io::Result<(Vec<u8>, bool)> {
    let mut bytes = Vec::new();
    response.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    let more = bytes.len() > limit;
    bytes.truncate(limit);
    Ok((bytes, more))
}

/// Builds a header map from static names; values come from the providers.
pub(crate) fn headers(pairs: Vec<(&'static str, HeaderValue)>) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(HeaderName::from_static(name), value);
    }
    map
}

/// Checks a configured base URL and drops a trailing slash, so that
/// `{base}/chat/completions` never has a double slash.
pub(crate) fn base_url(url: &str) -> Result<String, Error> {
    let trimmed = url.trim().trim_end_matches('/');
    let parsed = reqwest::Url::parse(trimmed).map_err(|err| Error::BadUrl {
        url: url.to_string(),
        reason: err.to_string(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::BadUrl {
            url: url.to_string(),
            reason: format!("scheme \"{}\" is not http or https", parsed.scheme()),
        });
    }
    Ok(trimmed.to_string())
}

/// The first `BODY_START_CHARS` characters of a body, trimmed, marked when cut.
pub(crate) fn body_start(body: &str) -> String {
    let body = body.trim();
    match body.char_indices().nth(BODY_START_CHARS) {
        Some((cut, _)) => format!("{}…", &body[..cut]),
        None => body.to_string(),
    }
}

/// reqwest's top-level message is generic ("error sending request"); the
/// cause (refused, DNS, TLS) is in the source chain.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Full jitter: a uniform wait in [0, base·2^(retry-1)], capped. Spreads
/// concurrent reviews that failed together instead of retrying in lockstep.
fn backoff(base: Duration, retry: u32) -> Duration {
    let ceiling = base
        .checked_mul(
            1u32.checked_shl(retry.saturating_sub(1))
                .unwrap_or(u32::MAX),
        )
        .unwrap_or(MAX_WAIT)
        .min(MAX_WAIT);
    ceiling.mul_f64(fastrand::f64())
}

/// `Retry-After` as delay-seconds or an HTTP date (IMF-fixdate), capped at
/// `MAX_WAIT`. A date in the past means "now"; an unreadable value is ignored
/// and the caller backs off instead.
fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let wait = if let Ok(seconds) = value.parse::<u64>() {
        Duration::from_secs(seconds)
    } else {
        let at = UNIX_EPOCH + Duration::from_secs(http_date(value)?);
        at.duration_since(now).unwrap_or(Duration::ZERO)
    };
    Some(wait.min(MAX_WAIT))
}

/// Seconds since the epoch of an IMF-fixdate such as
/// `Sun, 06 Nov 1994 08:49:37 GMT` (the only form RFC 9110 lets servers send).
fn http_date(value: &str) -> Option<u64> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_weekday, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: i64 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|name| name == month)? as i64
        + 1;
    let year: i64 = year.parse().ok()?;
    let clock: Vec<i64> = time
        .split(':')
        .map(|part| part.parse().ok())
        .collect::<Option<_>>()?;
    let [hour, minute, second] = clock.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || *hour > 23 || *minute > 59 || *second > 60 {
        return None;
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    u64::try_from(seconds).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm), to avoid a date crate for one header.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_caps_them() {
        let now = SystemTime::now();
        assert_eq!(retry_after("1", now), Some(Duration::from_secs(1)));
        assert_eq!(retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(retry_after("3600", now), Some(MAX_WAIT));
        assert_eq!(retry_after("soon", now), None);
    }

    #[test]
    fn retry_after_reads_http_dates_relative_to_now() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_767); // Sun, 06 Nov 1994 08:49:27 GMT
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:40:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after("Mon, 07 Nov 1994 08:49:37 GMT", now),
            Some(MAX_WAIT)
        );
        assert_eq!(retry_after("Sunday, 06-Nov-94 08:49:37 GMT", now), None);
    }

    #[test]
    fn http_dates_convert_to_epoch_seconds() {
        assert_eq!(http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            http_date("Tue, 29 Feb 2028 12:00:00 GMT"),
            Some(1_835_438_400)
        );
        assert_eq!(http_date("Tue, 29 Foo 2028 12:00:00 GMT"), None);
        assert_eq!(http_date("Tue, 29 Feb 2028 25:00:00 GMT"), None);
    }

    #[test]
    fn backoff_grows_exponentially_within_full_jitter_and_is_capped() {
        let base = Duration::from_millis(100);
        for _ in 0..200 {
            assert!(backoff(base, 1) <= Duration::from_millis(100));
            assert!(backoff(base, 3) <= Duration::from_millis(400));
            assert!(backoff(base, 40) <= MAX_WAIT);
        }
        let waits: Vec<Duration> = (0..50).map(|_| backoff(base, 4)).collect();
        assert!(
            waits.iter().any(|wait| *wait > Duration::from_millis(100)),
            "{waits:?}"
        );
    }

    #[test]
    fn body_start_keeps_the_first_500_characters() {
        assert_eq!(body_start("  short\n"), "short");
        let long = "é".repeat(600);
        let start = body_start(&long);
        assert_eq!(start.chars().count(), 501);
        assert!(start.ends_with('…'));
    }

    #[test]
    fn base_urls_lose_a_trailing_slash_and_must_be_http() {
        assert_eq!(
            base_url("http://localhost:11434/v1/").unwrap(),
            "http://localhost:11434/v1"
        );
        assert!(matches!(
            base_url("localhost:11434"),
            Err(Error::BadUrl { .. })
        ));
        assert!(matches!(
            base_url("ftp://host/v1"),
            Err(Error::BadUrl { .. })
        ));
    }

    #[test]
    fn an_echoed_key_is_masked_as_sent_and_as_json_escapes_it() {
        let key = Secret::new("sk-live/abc\"123456".into());
        let body = r#"{"error": "bad key sk-live\/abc\"123456 and sk-live/abc\"123456"}"#;
        let masked = key.mask(body);
        assert!(!masked.contains("abc"), "{masked}");
        assert_eq!(masked.matches(MASK).count(), 2, "{masked}");
        // Placeholder keys of local servers are left alone.
        assert_eq!(
            Secret::new("ollama".into()).mask("ollama says hi"),
            "ollama says hi"
        );
    }

    #[test]
    fn secrets_never_show_in_debug_output() {
        let secret = Secret::new("sk-very-secret".into());
        assert!(!format!("{secret:?}").contains("sk-very-secret"));
        let map = headers(vec![(
            "authorization",
            secret.header("KEY", "Bearer ").unwrap(),
        )]);
        assert!(!format!("{map:?}").contains("sk-very-secret"));
    }
}
