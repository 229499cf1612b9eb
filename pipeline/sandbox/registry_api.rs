//! The few calls of a registry's HTTP API (the OCI distribution API, `/v2/`) that
//! removing job images needs: the tags of a repository, when an image was made, and
//! the removal of a tag's manifest. The Docker engine pushes and pulls, but cannot
//! remove anything from a registry.
//!
//! Decisions:
//! - The scheme is found as the engine finds it: `https` first, plain `http` when no
//!   TLS connection can be made (a loopback or `insecure-registries` registry).
//! - Credentials ([`Credentials`], from the environment only) go with a request only
//!   when the registry asks for them: `Basic` as they are, `Bearer` for a token from
//!   the realm the registry names (its `service` and `scope`).
//! - Removing a manifest frees no disk by itself: the registry's garbage collection
//!   (`registry garbage-collect`, the operator's) removes the layers no manifest names.
//!   A registry that does not allow deletes says so (405), and the error says which
//!   setting turns them on.

use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// The manifest types whose digest a tag's removal needs (what engines push).
const MANIFEST_TYPES: &str = "application/vnd.docker.distribution.manifest.v2+json, \
     application/vnd.oci.image.manifest.v1+json, \
     application/vnd.docker.distribution.manifest.list.v2+json, \
     application/vnd.oci.image.index.v1+json";
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// A registry login: a user name and a password or token.
#[derive(Clone)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("username", &self.username).finish_non_exhaustive()
    }
}

/// What became of a tag that was to be removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    Removed,
    /// The registry did not have it (removed before, or never pushed).
    Absent,
}

/// A registry reached at `validate.registry`'s address (`host:port[/path]`).
pub struct RegistryApi {
    /// `scheme://host:port`.
    origin: String,
    /// The address's path, which prefixes every repository (`path/swe-harvest/job`).
    prefix: String,
    credentials: Option<Credentials>,
    /// The `Authorization` value that the registry accepted last.
    authorization: tokio::sync::Mutex<Option<String>>,
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>,
}

impl RegistryApi {
    /// Finds how `registry` answers (`https`, else `http`) with its `/v2/` endpoint.
    pub async fn connect(registry: &str, credentials: Option<Credentials>) -> Result<RegistryApi, String> {
        let registry = registry.trim().trim_end_matches('/');
        let (host, prefix) = registry.split_once('/').unwrap_or((registry, ""));
        if host.is_empty() {
            return Err(format!("the registry address `{registry}` has no host: set validate.registry to host:port"));
        }
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_native_roots()
            .map_err(|error| format!("cannot read the system's certificates: {error}"))?
            .https_or_http()
            .enable_http1()
            .build();
        let client = Client::builder(TokioExecutor::new()).build(connector);
        let mut api = RegistryApi {
            origin: String::new(),
            prefix: prefix.to_string(),
            credentials,
            authorization: Default::default(),
            client,
        };
        let mut errors = Vec::new();
        for scheme in ["https", "http"] {
            api.origin = format!("{scheme}://{host}");
            match api.send(Method::GET, "/v2/", "").await {
                Ok(response) if response.status().is_success() => return Ok(api),
                Ok(response) => errors.push(format!("{scheme}: {}", status_error(&response))),
                Err(error) => errors.push(format!("{scheme}: {error}")),
            }
        }
        Err(format!("the registry `{registry}` does not answer its API (/v2/): {}", errors.join("; ")))
    }

    /// The repository's full name in the registry.
    pub fn repository(&self, name: &str) -> String {
        if self.prefix.is_empty() { name.to_string() } else { format!("{}/{name}", self.prefix) }
    }

    /// Every tag of `repository` (empty when the registry has no such repository).
    pub async fn tags(&self, repository: &str) -> Result<Vec<String>, String> {
        #[derive(serde::Deserialize)]
        struct Page {
            #[serde(default)]
            tags: Option<Vec<String>>,
        }
        let mut tags = Vec::new();
        let mut next = Some(format!("/v2/{}/tags/list?n=1000", self.repository(repository)));
        while let Some(path) = next.take() {
            let response = self.send(Method::GET, &path, "").await?;
            if response.status() == StatusCode::NOT_FOUND {
                break;
            }
            if !response.status().is_success() {
                return Err(format!("listing the tags of {repository}: {}", status_error(&response)));
            }
            // `Link: </v2/...?last=x&n=1000>; rel="next"` while more follow.
            next = response
                .headers()
                .get(header::LINK)
                .and_then(|link| link.to_str().ok())
                .and_then(|link| Some(link.split_once('<')?.1.split_once('>')?.0.to_string()));
            let page: Page = serde_json::from_slice(response.body())
                .map_err(|error| format!("the registry's tag list of {repository} is not JSON: {error}"))?;
            tags.extend(page.tags.unwrap_or_default());
        }
        Ok(tags)
    }

    /// When the image under `tag` was made (its config's `created`), if it says.
    pub async fn created(&self, repository: &str, tag: &str) -> Result<Option<chrono::DateTime<chrono::Utc>>, String> {
        let manifest = self.manifest_path(repository, tag);
        let response = self.send(Method::GET, &manifest, MANIFEST_TYPES).await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !response.status().is_success() {
            return Err(format!("reading {repository}:{tag}: {}", status_error(&response)));
        }
        let manifest: serde_json::Value = serde_json::from_slice(response.body())
            .map_err(|error| format!("the manifest of {repository}:{tag} is not JSON: {error}"))?;
        let Some(config) = manifest["config"]["digest"].as_str() else { return Ok(None) };
        let blob = format!("/v2/{}/blobs/{config}", self.repository(repository));
        let response = self.send(Method::GET, &blob, "").await?;
        if !response.status().is_success() {
            return Err(format!("reading the config of {repository}:{tag}: {}", status_error(&response)));
        }
        let config: serde_json::Value = serde_json::from_slice(response.body())
            .map_err(|error| format!("the config of {repository}:{tag} is not JSON: {error}"))?;
        Ok(config["created"]
            .as_str()
            .and_then(|created| chrono::DateTime::parse_from_rfc3339(created).ok())
            .map(|created| created.with_timezone(&chrono::Utc)))
    }

    /// Removes the manifest that `tag` names (and so the tag).
    pub async fn remove(&self, repository: &str, tag: &str) -> Result<Removal, String> {
        let manifest = self.manifest_path(repository, tag);
        let response = self.send(Method::HEAD, &manifest, MANIFEST_TYPES).await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(Removal::Absent);
        }
        let digest = response
            .headers()
            .get("docker-content-digest")
            .and_then(|digest| digest.to_str().ok())
            .filter(|_| response.status().is_success())
            .ok_or_else(|| format!("finding the digest of {repository}:{tag}: {}", status_error(&response)))?
            .to_string();
        let response = self.send(Method::DELETE, &self.manifest_path(repository, &digest), "").await?;
        match response.status() {
            status if status.is_success() => Ok(Removal::Removed),
            StatusCode::NOT_FOUND => Ok(Removal::Absent),
            StatusCode::METHOD_NOT_ALLOWED => Err(format!(
                "the registry does not allow deletes; turn them on in its configuration \
                 (distribution: `storage.delete.enabled: true`) to remove {repository}:{tag}"
            )),
            _ => Err(format!("removing {repository}:{tag}: {}", status_error(&response))),
        }
    }

    fn manifest_path(&self, repository: &str, reference: &str) -> String {
        format!("/v2/{}/manifests/{reference}", self.repository(repository))
    }

    /// One request; when the registry answers 401, again with the authorization its
    /// challenge asks for.
    async fn send(&self, method: Method, path: &str, accept: &str) -> Result<Response<Bytes>, String> {
        let authorization = self.authorization.lock().await.clone();
        let response = self.request(method.clone(), &format!("{}{path}", self.origin), accept, authorization).await?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        let Some(credentials) = &self.credentials else {
            return Err(format!(
                "{} answered 401: set {} and {} to the registry's login",
                self.origin,
                crate::env_vars::SWE_HARVEST_REGISTRY_USERNAME,
                crate::env_vars::SWE_HARVEST_REGISTRY_PASSWORD
            ));
        };
        let challenge = response
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let basic = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD
                .encode(format!("{}:{}", credentials.username, credentials.password))
        );
        let authorization = match challenge.split_once(' ') {
            Some((scheme, parameters)) if scheme.eq_ignore_ascii_case("bearer") => {
                format!("Bearer {}", self.token(parameters, &basic).await?)
            }
            _ => basic,
        };
        let response =
            self.request(method, &format!("{}{path}", self.origin), accept, Some(authorization.clone())).await?;
        if response.status() == StatusCode::UNAUTHORIZED {
            return Err(format!(
                "{} refused the login of {}",
                self.origin,
                crate::env_vars::SWE_HARVEST_REGISTRY_USERNAME
            ));
        }
        *self.authorization.lock().await = Some(authorization);
        Ok(response)
    }

    /// A token from the realm of a `Bearer` challenge, asked for with the login.
    async fn token(&self, parameters: &str, basic: &str) -> Result<String, String> {
        let parameters = challenge_parameters(parameters);
        let realm = parameters
            .iter()
            .find(|(key, _)| key == "realm")
            .map(|(_, value)| value.clone())
            .ok_or_else(|| format!("{}'s login challenge names no realm", self.origin))?;
        let query: Vec<String> = parameters
            .iter()
            .filter(|(key, _)| key == "service" || key == "scope")
            .map(|(key, value)| {
                format!("{key}={}", percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC))
            })
            .collect();
        let url = if query.is_empty() { realm } else { format!("{realm}?{}", query.join("&")) };
        let response = self.request(Method::GET, &url, "", Some(basic.to_string())).await?;
        if !response.status().is_success() {
            return Err(format!("the registry's token service refused the login: {}", status_error(&response)));
        }
        let body: serde_json::Value = serde_json::from_slice(response.body())
            .map_err(|error| format!("the registry's token service answered no JSON: {error}"))?;
        body["token"]
            .as_str()
            .or(body["access_token"].as_str())
            .map(str::to_string)
            .ok_or_else(|| "the registry's token service answered no token".to_string())
    }

    async fn request(
        &self,
        method: Method,
        url: &str,
        accept: &str,
        authorization: Option<String>,
    ) -> Result<Response<Bytes>, String> {
        let mut request = Request::builder().method(method).uri(url);
        if !accept.is_empty() {
            request = request.header(header::ACCEPT, accept);
        }
        if let Some(authorization) = authorization {
            request = request.header(header::AUTHORIZATION, authorization);
        }
        let request = request.body(Empty::new()).map_err(|error| format!("{}: {error}", redacted(url)))?;
        let exchange = async {
            // With its causes: a connection error says little on its own.
            let response = self.client.request(request).await.map_err(|error| crate::error_chain(&error))?;
            let (parts, body) = response.into_parts();
            let body = body.collect().await.map_err(|error| error.to_string())?.to_bytes();
            Ok::<_, String>(Response::from_parts(parts, body))
        };
        tokio::time::timeout(CALL_TIMEOUT, exchange)
            .await
            .map_err(|_| format!("{} did not answer in {}s", redacted(url), CALL_TIMEOUT.as_secs()))?
            .map_err(|error| format!("{}: {error}", redacted(url)))
    }
}

fn redacted(url: &str) -> String {
    crate::secret::redact_url(url)
}

/// The status and the registry's own error text.
fn status_error(response: &Response<Bytes>) -> String {
    let body = String::from_utf8_lossy(response.body());
    let body = body.trim();
    if body.is_empty() {
        response.status().to_string()
    } else {
        format!("{} {}", response.status(), body.chars().take(300).collect::<String>())
    }
}

/// `realm="https://auth",service="registry",scope="repository:x:pull"` as pairs.
fn challenge_parameters(text: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut rest = text.trim();
    while let Some((key, after)) = rest.split_once('=') {
        let key = key.trim().trim_start_matches(',').trim().to_ascii_lowercase();
        let (value, remainder) = match after.strip_prefix('"') {
            Some(quoted) => quoted.split_once('"').unwrap_or((quoted, "")),
            None => after.split_once(',').unwrap_or((after, "")),
        };
        pairs.push((key, value.to_string()));
        rest = remainder.trim_start_matches(',').trim();
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_challenge_is_read_into_its_parameters_with_commas_inside_quotes() {
        let pairs = challenge_parameters(
            r#"realm="https://auth.example/token",service="registry.example",scope="repository:swe-harvest/job:pull,delete""#,
        );
        assert_eq!(
            pairs,
            vec![
                ("realm".to_string(), "https://auth.example/token".to_string()),
                ("service".to_string(), "registry.example".to_string()),
                ("scope".to_string(), "repository:swe-harvest/job:pull,delete".to_string()),
            ]
        );
    }
}
