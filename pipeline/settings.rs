//! What every module's settings type stands on: the error that names the file (or
//! environment variable) and the key's full path, and reading TOML into a settings
//! type with that path in every error.
//!
//! Each module owns its settings type and its checks (`github::GithubConfig`,
//! `validate::ValidateConfig`, `sandbox::Registries`, `ecosystem::repo_config`, ...);
//! `config` composes them into `configs/pipeline.toml` and applies the environment.
//! This module knows none of them, so every one of them may use it.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("failed to read the config file `{path}`")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the config file `{path}` is not valid TOML: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("invalid config `{origin}`: key `{key}`: {message}")]
    Invalid { origin: String, key: String, message: String },
}

impl ConfigError {
    /// A line of advice for the person at the terminal.
    pub fn hint(&self) -> String {
        match self {
            ConfigError::Read { .. } => {
                "pass an existing file with `--config FILE`, or omit it to use the defaults".into()
            }
            ConfigError::Syntax { .. } => "fix the TOML syntax at the position shown".into(),
            ConfigError::Invalid { .. } => {
                "every key and its allowed values are documented in `configs/pipeline.toml`".into()
            }
        }
    }
}

/// The error of a value that serde accepted and a check refuses: `key` is its full
/// path (`validate.registries.allow`), `origin` the file or variable it came from.
pub fn invalid(origin: &str, key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { origin: origin.to_string(), key: key.to_string(), message: message.into() }
}

/// Parses TOML read from `path` into `T`, naming the file and the key in every error.
/// Checks beyond serde's are `T`'s own, for the caller to run.
pub fn parse<T: serde::de::DeserializeOwned>(text: &str, path: &Path) -> Result<T, ConfigError> {
    let table: toml::Table = text.parse().map_err(|error: toml::de::Error| ConfigError::Syntax {
        path: path.to_path_buf(),
        message: error.to_string(),
    })?;
    from_table(table, &path.display().to_string())
}

/// `table` as a `T`; an error names `origin` and the path of the key serde refused.
pub fn from_table<T: serde::de::DeserializeOwned>(table: toml::Table, origin: &str) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|error| {
        let key = error.path().to_string();
        let key = if key == "." { "(top level)".to_string() } else { key };
        invalid(origin, &key, error.into_inner().to_string())
    })
}

/// The file at `path` as a `T` (see [`parse`]), or `None` when there is no such file.
pub fn read_optional<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, ConfigError> {
    match fs_err::read_to_string(path) {
        Ok(text) => parse(&text, path).map(Some),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read { path: path.to_path_buf(), source }),
    }
}
