//! Pure helpers for GitHub's HTTP conventions: the `Link` header of paginated
//! answers, the rate-limit headers, and the texts that mark a secondary rate limit.

/// The `rel="next"` URL of a `Link` header, if any.
///
/// `<https://api.github.com/repos/a/b/pulls?page=2>; rel="next", <...>; rel="last"`
pub fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let url = url.trim().strip_prefix('<')?.strip_suffix('>')?;
        let is_next = params
            .split(';')
            .any(|param| matches!(param.trim().replace(' ', "").as_str(), "rel=\"next\"" | "rel=next"));
        is_next.then(|| url.to_string())
    })
}

/// Whether a 403/429 body is GitHub's secondary ("abuse") rate-limit answer.
pub fn is_secondary_limit_message(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    lower.contains("secondary rate limit") || lower.contains("abuse detection")
}

/// Whether a 403/429 body says the primary rate limit is exhausted.
pub fn is_primary_limit_message(body: &str) -> bool {
    body.to_ascii_lowercase().contains("api rate limit exceeded")
}

/// GitHub's `message` field of an error body, or the body itself, shortened.
pub fn error_message(body: &str) -> String {
    let message = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|value| value.get("message").and_then(|m| m.as_str()).map(str::to_string))
        .unwrap_or_else(|| body.trim().to_string());
    let mut message: String = message.chars().take(200).collect();
    if message.is_empty() {
        message = "(empty body)".to_string();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_link_is_found_among_other_relations() {
        let header = r#"<https://api.github.com/repositories/1/pulls?page=1>; rel="prev", <https://api.github.com/repositories/1/pulls?page=3>; rel="next", <https://api.github.com/repositories/1/pulls?page=9>; rel="last""#;
        assert_eq!(next_link(header).as_deref(), Some("https://api.github.com/repositories/1/pulls?page=3"));
    }

    #[test]
    fn last_page_has_no_next_link() {
        let header = r#"<https://api.github.com/x?page=1>; rel="first", <https://api.github.com/x?page=8>; rel="prev""#;
        assert_eq!(next_link(header), None);
        assert_eq!(next_link(""), None);
        assert_eq!(next_link("garbage"), None);
    }

    #[test]
    fn secondary_and_primary_limit_messages_are_told_apart() {
        let secondary = r#"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}"#;
        let primary = r#"{"message":"API rate limit exceeded for user ID 1."}"#;
        assert!(is_secondary_limit_message(secondary) && !is_primary_limit_message(secondary));
        assert!(is_primary_limit_message(primary) && !is_secondary_limit_message(primary));
        assert!(!is_secondary_limit_message(r#"{"message":"Resource not accessible by integration"}"#));
    }

    #[test]
    fn error_message_prefers_the_json_message() {
        assert_eq!(error_message(r#"{"message":"Not Found","documentation_url":"x"}"#), "Not Found");
        assert_eq!(error_message("<html>bad gateway</html>"), "<html>bad gateway</html>");
        assert_eq!(error_message(""), "(empty body)");
    }
}
