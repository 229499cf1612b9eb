//! GitHub's public GraphQL schema in the simulator: every query is validated against
//! it (with apollo-compiler) before it runs, and refused as GitHub refuses it when it
//! names a field, argument, type or variable that GitHub does not have, or breaks a
//! rule of the language. So the tests exercise the crawler's real query text.
//!
//! The schema is data from outside the project: by default
//! `../shared/github/schema.graphql` seen from the project root (the `github-sim`
//! binary takes `--schema FILE`); when it is absent, queries are not validated.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use apollo_compiler::response::{JsonMap, JsonValue};
use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};

/// GitHub's schema, ready to validate queries.
pub struct GithubSchema {
    schema: Valid<Schema>,
    path: PathBuf,
}

impl std::fmt::Debug for GithubSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GithubSchema({})", self.path.display())
    }
}

impl GithubSchema {
    /// Where the shared copy of the schema lives, seen from the project root.
    pub fn shared_path() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/github/schema.graphql")
    }

    /// The shared schema, read once per process; `None` when the file is absent.
    pub fn shared() -> Option<Arc<GithubSchema>> {
        static SHARED: OnceLock<Option<Arc<GithubSchema>>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                let path = GithubSchema::shared_path();
                path.exists().then(|| Arc::new(GithubSchema::load(&path).unwrap_or_else(|problem| panic!("{problem}"))))
            })
            .clone()
    }

    /// Reads and checks a schema file. GitHub's published schema defines two fields of
    /// `EnterpriseOwnerInfo` twice; such repeated definitions are tolerated (the first
    /// one counts), any other fault of the schema is an error.
    pub fn load(path: &Path) -> Result<GithubSchema, String> {
        let text = fs_err::read_to_string(path).map_err(|error| error.to_string())?;
        let schema = match Schema::parse_and_validate(text, path) {
            Ok(schema) => schema,
            Err(invalid) => {
                let faults: Vec<String> = invalid
                    .errors
                    .iter()
                    .map(|diagnostic| diagnostic.error.to_string())
                    .filter(|message| !message.starts_with("duplicate definitions for the"))
                    .collect();
                if !faults.is_empty() {
                    return Err(format!(
                        "{} is not a usable GraphQL schema: {}",
                        path.display(),
                        faults.iter().take(5).cloned().collect::<Vec<_>>().join("; ")
                    ));
                }
                Valid::assume_valid(invalid.partial)
            }
        };
        Ok(GithubSchema { schema, path: path.to_path_buf() })
    }

    /// Why GitHub would refuse `query` run as `operation` with `variables` (one
    /// message per fault): the document against the schema, then the variables
    /// against the operation's declarations. Empty when GitHub would run it.
    pub fn refusals(&self, query: &str, operation: Option<&str>, variables: &serde_json::Value) -> Vec<String> {
        let document = match ExecutableDocument::parse_and_validate(&self.schema, query, "query.graphql") {
            Ok(document) => document,
            Err(invalid) => return invalid.errors.iter().map(|diagnostic| diagnostic.error.to_string()).collect(),
        };
        let operation = match document.operations.get(operation) {
            Ok(operation) => operation,
            Err(error) => return vec![error.message().to_string()],
        };
        let values: JsonMap = match serde_json::from_value::<JsonValue>(variables.clone()) {
            Ok(JsonValue::Object(values)) => values,
            Ok(JsonValue::Null) => JsonMap::new(),
            _ => return vec!["`variables` is not a JSON object".into()],
        };
        match apollo_compiler::request::coerce_variable_values(&self.schema, operation, &values) {
            Ok(_) => Vec::new(),
            Err(error) => vec![error.message().to_string()],
        }
    }
}
