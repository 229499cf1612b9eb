//! Secrets (GitHub tokens) wrapped so that they cannot be printed by accident:
//! `Debug` and `Display` show `****`. The only way to the value is [`Secret::expose`],
//! which is called where a request header is built and nowhere else.

use std::fmt;

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

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn secret_never_prints_its_value() {
        let secret = Secret::new("ghp_abcdef123456");
        assert_eq!(format!("{secret}"), "****");
        assert_eq!(format!("{secret:?}"), "Secret(****)");
        assert_eq!(format!("{:?}", vec![secret.clone()]), "[Secret(****)]");
        assert_eq!(secret.expose(), "ghp_abcdef123456");
    }
}
