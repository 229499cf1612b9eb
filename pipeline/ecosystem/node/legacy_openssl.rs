//! The rung `legacy-openssl`: OpenSSL 3's legacy provider for every run, when a run's
//! tool had a digest refused (decision, 2026-11-29, from held-out preact-2896: Karma's
//! webpack 4 hashes with md4, Node 18 refused it with `ERR_OSSL_EVP_UNSUPPORTED`, no
//! test ran, and the task was dropped `environment_unusable`). Like `build-first`
//! ([`super::build_first`]), it changes what runs before the tests.

use crate::model::{EnvironmentSpec, Rung};

/// What the test command gets before it on the rung `legacy-openssl`: an `export` the
/// helper runs in its own shell, so that every step after it (a build, the runner)
/// has it. Node 17 and later link OpenSSL 3, which refuses md4 unless told otherwise;
/// the Node images here are all 18 or later.
pub const LEGACY_OPENSSL: &str = "export NODE_OPTIONS=--openssl-legacy-provider";

/// The next environment after `last` failed with `log`: the same with OpenSSL's
/// legacy provider, when the log says OpenSSL refused a digest
/// (`ERR_OSSL_EVP_UNSUPPORTED`: webpack 4 under Karma, preact-2896) and no environment
/// tried has it already.
pub fn next_spec(tried: &[EnvironmentSpec], log: &str) -> Option<EnvironmentSpec> {
    let last = tried.last()?;
    let refused = log.contains("ERR_OSSL_EVP_UNSUPPORTED") || log.contains("digital envelope routines::unsupported");
    if !refused || tried.iter().any(|spec| spec.test_command.contains(LEGACY_OPENSSL)) {
        return None;
    }
    tracing::info!("OpenSSL refused a digest a test's tool uses; its legacy provider for every run");
    Some(EnvironmentSpec {
        test_command: format!("{LEGACY_OPENSSL} && {}", last.test_command),
        rung: Rung::LegacyOpenssl,
        ..last.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openssl_refusing_a_digest_gets_the_legacy_provider_once() {
        let dated = EnvironmentSpec { test_command: "karma start test/karma.conf.js".into(), ..Default::default() };
        let log = "ERROR [karma-server]: UnhandledRejection: error:0308010C:digital envelope routines::unsupported\n\
                   code: 'ERR_OSSL_EVP_UNSUPPORTED'\n";
        let next = next_spec(std::slice::from_ref(&dated), log).expect("a rung");
        assert_eq!(next.rung, Rung::LegacyOpenssl);
        assert_eq!(
            next.test_command,
            "export NODE_OPTIONS=--openssl-legacy-provider && karma start test/karma.conf.js"
        );
        assert_eq!(next_spec(&[dated.clone(), next], log), None, "once");
        assert_eq!(next_spec(&[dated], "Cannot find module 'x'\n"), None);
    }
}
