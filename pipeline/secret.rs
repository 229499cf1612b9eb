//! Secrets (GitHub tokens) wrapped so that they cannot be printed by accident:
//! `Debug` and `Display` show `****`. The only way to the value is [`Secret::expose`],
//! which is called where a request header is built and nowhere else.
//!
//! Credentials that users put inside URLs (`https://user:token@host/...` as
//! `--clone-url` or `--api-url`) are removed by [`redact_url`] before a URL, or a
//! message that holds one, is printed, logged or stored.

use std::fmt;
use std::sync::LazyLock;

#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret value. Call only where it leaves the process as intended.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(****)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("****")
    }
}

/// A scheme, `://`, then user information up to the last `@` before the host: no
/// `/`, `?`, `#` or white space in between (a password with an `@` keeps whole).
static URL_CREDENTIALS: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@").expect("the pattern is valid")
});

/// `text` with the user information of every URL in it replaced by `****`:
/// `https://user:token@github.com/a/b` becomes `https://****@github.com/a/b`. Takes a URL
/// or any message holding URLs (an error chain from libgit2 or an HTTP client); text
/// without credentials comes back unchanged. Use it wherever a URL that a user gave is
/// printed, logged or stored.
pub fn redact_url(text: &str) -> String {
    URL_CREDENTIALS.replace_all(text, "${scheme}****@").into_owned()
}

#[cfg(test)]
mod tests {
    use super::{Secret, redact_url};

    #[test]
    fn credentials_in_urls_are_redacted_and_the_rest_is_kept() {
        for (input, expected) in [
            ("https://user:ghp_token@github.com/a/b.git", "https://****@github.com/a/b.git"),
            ("https://ghp_token@github.com/a/b", "https://****@github.com/a/b"),
            ("http://user:p%40ss@127.0.0.1:8080/api/v3?page=2", "http://****@127.0.0.1:8080/api/v3?page=2"),
            ("https://user:p@ss@host/x", "https://****@host/x"),
            ("HTTPS://u:t@Host", "HTTPS://****@Host"),
            (
                "failed to fetch https://u:secret@h/a into /m: could not connect to https://u:secret@h/a/info/refs",
                "failed to fetch https://****@h/a into /m: could not connect to https://****@h/a/info/refs",
            ),
            ("https://github.com/a/b", "https://github.com/a/b"),
            ("https://github.com/a/b?mail=x@y.z", "https://github.com/a/b?mail=x@y.z"),
            ("https://github.com/a/b#x@y", "https://github.com/a/b#x@y"),
            ("/srv/mirrors/a@b.git", "/srv/mirrors/a@b.git"),
            ("git@github.com:a/b.git", "git@github.com:a/b.git"),
            ("mail me at someone@example.com", "mail me at someone@example.com"),
            ("", ""),
        ] {
            assert_eq!(redact_url(input), expected, "{input}");
        }
    }

    #[test]
    fn secret_never_prints_its_value() {
        let secret = Secret::new("ghp_abcdef123456");
        assert_eq!(format!("{secret}"), "****");
        assert_eq!(format!("{secret:?}"), "Secret(****)");
        assert_eq!(format!("{:?}", vec![secret.clone()]), "[Secret(****)]");
        assert_eq!(secret.expose(), "ghp_abcdef123456");
    }
}
