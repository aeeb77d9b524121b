//! Provider errors: each says what to act on (the URL, the HTTP status and the
//! start of the body, the variable to set, the command and its stderr) and how
//! many attempts were made. `ErrorKind` maps them onto the exit codes.

use std::time::Duration;

/// How the caller should treat a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The model could not be reached or did not answer in time (exit 52).
    Unreachable,
    /// Bad configuration, a missing key, or a request the server refused
    /// (401, 404, ...): retrying will not help (exit 1).
    Config,
    /// The model answered, but the answer is unusable (cut off or empty): the
    /// caller treats it as invalid output.
    Output,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    #[error("no language model configured: {hint}")]
    NotConfigured { hint: String },

    #[error("unknown provider \"{name}\": expected openai, anthropic or command")]
    UnknownProvider { name: String },

    #[error(
        "the API key variable {var} is not set (or is empty): export {var}, or change api_key_env in the [llm] block of .speed/config.toml"
    )]
    MissingApiKey { var: String },

    #[error("invalid model base_url \"{url}\": {reason}")]
    BadUrl { url: String, reason: String },

    #[error("could not set up the HTTP client: {reason}")]
    Client { reason: String },

    #[error("{method} {url} answered HTTP {status} ({}): {body}", attempts_text(*attempts))]
    Status {
        /// "POST" or "GET".
        method: &'static str,
        url: String,
        status: u16,
        /// The start of the response body, which usually says why.
        body: String,
        attempts: u32,
    },

    #[error("could not reach the model at {url} ({}): {reason}", attempts_text(*attempts))]
    Connect {
        url: String,
        reason: String,
        attempts: u32,
    },

    #[error("the model at {target} did not answer within {} ({})", humantime::format_duration(*after), attempts_text(*attempts))]
    Timeout {
        /// The URL or the command.
        target: String,
        after: Duration,
        attempts: u32,
    },

    #[error("{url} did not answer like the configured provider's API ({}): {reason}; body starts: {body}", attempts_text(*attempts))]
    BadResponse {
        url: String,
        reason: String,
        body: String,
        attempts: u32,
    },

    #[error("the answer from {origin} was cut off at the output limit of {max_output_tokens} tokens ({})", attempts_text(*attempts))]
    Truncated {
        origin: String,
        max_output_tokens: u32,
        attempts: u32,
    },

    #[error("{origin} returned an empty answer ({})", attempts_text(*attempts))]
    EmptyAnswer { origin: String, attempts: u32 },

    #[error("the answer from {origin} is longer than {limit} bytes, the limit set by llm.max_answer_bytes ({})", attempts_text(*attempts))]
    TooLarge {
        origin: String,
        limit: usize,
        attempts: u32,
    },

    #[error(
        "POST {url} answered HTTP {status} with a redirect to {location}, which speed does not follow: the key and the prompt go only to the configured origin (set base_url to the address the server redirects to, if it is yours)"
    )]
    Redirect {
        url: String,
        status: u16,
        location: String,
    },

    #[error("could not run the model command `{command}`: {reason}")]
    Spawn { command: String, reason: String },

    #[error("the model command `{command}` failed ({status}); stderr ends: {stderr_tail}")]
    Command {
        command: String,
        status: String,
        /// The last ~2 KB of stderr.
        stderr_tail: String,
    },

    #[error("talking to the model command `{command}` failed: {reason}")]
    CommandIo { command: String, reason: String },

    /// A provider's batch API answered something speed cannot use, or was
    /// asked for something it does not do.
    #[error("{what}")]
    Batch { what: String },
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::NotConfigured { .. }
            | Error::UnknownProvider { .. }
            | Error::MissingApiKey { .. }
            | Error::BadUrl { .. }
            | Error::Client { .. }
            | Error::BadResponse { .. }
            | Error::Redirect { .. }
            | Error::Spawn { .. }
            | Error::Batch { .. } => ErrorKind::Config,
            Error::Status { status, .. } if !is_transient(*status) => ErrorKind::Config,
            Error::Status { .. }
            | Error::Connect { .. }
            | Error::Timeout { .. }
            | Error::Command { .. }
            | Error::CommandIo { .. } => ErrorKind::Unreachable,
            Error::Truncated { .. } | Error::EmptyAnswer { .. } | Error::TooLarge { .. } => {
                ErrorKind::Output
            }
        }
    }

    /// Requests made before this error, when any were made (the command
    /// provider runs its command once).
    pub fn attempts(&self) -> Option<u32> {
        match self {
            Error::Status { attempts, .. }
            | Error::Connect { attempts, .. }
            | Error::Timeout { attempts, .. }
            | Error::BadResponse { attempts, .. }
            | Error::Truncated { attempts, .. }
            | Error::EmptyAnswer { attempts, .. }
            | Error::TooLarge { attempts, .. } => Some(*attempts),
            Error::Command { .. } | Error::CommandIo { .. } => Some(1),
            Error::NotConfigured { .. }
            | Error::UnknownProvider { .. }
            | Error::MissingApiKey { .. }
            | Error::BadUrl { .. }
            | Error::Client { .. }
            | Error::Redirect { .. }
            | Error::Spawn { .. }
            | Error::Batch { .. } => None,
        }
    }
}

/// Statuses worth retrying: the server may answer differently later.
pub(crate) fn is_transient(status: u16) -> bool {
    status == 408 || status == 429 || (500..=599).contains(&status)
}

fn attempts_text(attempts: u32) -> String {
    if attempts == 1 {
        "1 attempt".to_string()
    } else {
        format!("{attempts} attempts")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_requests_are_configuration_errors_and_overload_is_unreachable() {
        let status = |status| Error::Status {
            method: "POST",
            url: "u".into(),
            status,
            body: String::new(),
            attempts: 1,
        };
        assert_eq!(status(401).kind(), ErrorKind::Config);
        assert_eq!(status(404).kind(), ErrorKind::Config);
        assert_eq!(status(400).kind(), ErrorKind::Config);
        assert_eq!(status(408).kind(), ErrorKind::Unreachable);
        assert_eq!(status(429).kind(), ErrorKind::Unreachable);
        assert_eq!(status(503).kind(), ErrorKind::Unreachable);
    }

    #[test]
    fn messages_say_the_attempts_made() {
        let err = Error::Status {
            method: "POST",
            url: "http://h/v1/chat/completions".into(),
            status: 503,
            body: "overloaded".into(),
            attempts: 4,
        };
        assert_eq!(
            err.to_string(),
            "POST http://h/v1/chat/completions answered HTTP 503 (4 attempts): overloaded"
        );
        let err = Error::Timeout {
            target: "http://h".into(),
            after: Duration::from_secs(2),
            attempts: 1,
        };
        assert_eq!(
            err.to_string(),
            "the model at http://h did not answer within 2s (1 attempt)"
        );
    }
}
