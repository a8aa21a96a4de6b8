//! TLS for the remote backends, on rustls with the ring provider: the certificate files a URL
//! names ([`crate::backend::tls`]), the checks each `sslmode` makes, and the words for a failed
//! handshake, shared by Redis, PostgreSQL and MySQL.

use crate::backend::tls::{Roots, SslMode, Tls};
use crate::error::{Error, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::error::Error as StdError;
use std::path::Path;

/// Certificate files larger than this are refused (a system's whole CA bundle is a few
/// hundred KB).
const MAX_PEM: usize = 4 << 20;

/// The bytes of the file `path` that the parameter `param` names. Each file is read once, and
/// what is checked is what is used. Links are followed (mounted secrets are links), but the
/// file must be a regular one of bounded size: a FIFO or a device there fails at once instead
/// of blocking or reading without end.
pub(crate) fn read_file(path: &Path, param: &str) -> Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let fail = |why: String| Error::config(format!("backend: {param}={}: {why}", path.display()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| fail(format!("cannot read it: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| fail(format!("cannot read it: {e}")))?;
    if !meta.is_file() {
        return Err(fail("not a regular file".to_string()));
    }
    if meta.len() > MAX_PEM as u64 {
        return Err(fail(format!("larger than {MAX_PEM} bytes: not a PEM file")));
    }
    crate::state::disk::read_capped(&file, MAX_PEM)
        .map_err(|e| fail(format!("cannot read it: {e}")))
}

/// The PEM certificates in `pem`, read from the file `path` of the parameter `param`.
pub(crate) fn certs(pem: &[u8], path: &Path, param: &str) -> Result<Vec<CertificateDer<'static>>> {
    let shown = path.display();
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::config(format!("backend: {param}={shown}: not PEM: {e}")))?;
    if certs.is_empty() {
        return Err(Error::config(format!(
            "backend: {param}={shown} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        )));
    }
    Ok(certs)
}

/// The private key in `pem` (PKCS#8, PKCS#1 or SEC1), read from the file `path` of the
/// parameter `param` (`sslkey`).
pub(crate) fn key(pem: &[u8], path: &Path, param: &str) -> Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| {
        Error::config(format!(
            "backend: {param}={}: cannot read a PEM private key from it: {e}",
            path.display()
        ))
    })
}

/// The CA certificates `tls` trusts: its `sslrootcert` (`ssl-ca`) file, or the system's store.
#[cfg(any(feature = "postgres", feature = "mysql"))]
fn root_store(tls: &Tls) -> Result<rustls::RootCertStore> {
    let mut store = rustls::RootCertStore::empty();
    match &tls.roots {
        Some(Roots::File(path)) => {
            let param = tls.names.rootcert;
            let pem = read_file(path, param)?;
            for cert in certs(&pem, path, param)? {
                store.add(cert).map_err(|e| {
                    Error::config(format!(
                        "backend: {param}={}: not a usable CA certificate: {e}",
                        path.display()
                    ))
                })?;
            }
        }
        Some(Roots::System) | None => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                return Err(Error::config(format!(
                    "backend: the system's store of CA certificates is empty or unreadable \
                     (install ca-certificates), and the URL gives no {}=PATH",
                    tls.names.rootcert
                )));
            }
        }
    }
    Ok(store)
}

/// Makes sure rustls has a process-wide crypto provider, for the drivers that ask it for one
/// (the redis crate does): ring, unless the program installed another first. Without this, a
/// program whose dependencies enable two providers would have rustls panic at the first
/// connection.
#[cfg(feature = "redis")]
pub(crate) fn ensure_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may win the race: either way one provider is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// A rustls configuration for `tls` (not `Disable`), as libpq checks: no check of the server's
/// certificate for `prefer` and `require` without `sslrootcert`; the chain only for
/// `verify-ca` (and `prefer`/`require` with `sslrootcert`); the chain and the host name for
/// `verify-full`.
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub(crate) fn client_config(tls: &Tls) -> Result<rustls::ClientConfig> {
    use std::sync::Arc;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::config(format!("backend: TLS: {e}")))?;
    let builder = if tls.mode == SslMode::VerifyFull {
        builder.with_root_certificates(root_store(tls)?)
    } else {
        let chain = if tls.verifies_chain() {
            let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(root_store(tls)?),
                provider.clone(),
            )
            .build()
            .map_err(|e| Error::config(format!("backend: TLS: {e}")))?;
            Some(verifier)
        } else {
            None
        };
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verify::NoName { chain, provider }))
    };
    match &tls.client {
        Some((cert_path, key_path)) => {
            let n = tls.names;
            let chain = certs(&read_file(cert_path, n.cert)?, cert_path, n.cert)?;
            let private = key(&read_file(key_path, n.key)?, key_path, n.key)?;
            builder.with_client_auth_cert(chain, private).map_err(|e| {
                Error::config(format!(
                    "backend: {}={} and {}={} do not make a client certificate: {e}",
                    n.cert,
                    cert_path.display(),
                    n.key,
                    key_path.display()
                ))
            })
        }
        None => Ok(builder.with_no_client_auth()),
    }
}

#[cfg(any(feature = "postgres", feature = "mysql"))]
mod verify {
    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::client::WebPkiServerVerifier;
    use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
    use rustls::{CertificateError, DigitallySignedStruct, Error, SignatureScheme};
    use std::sync::Arc;

    /// The check of `verify-ca` (with `chain`) or of no certificate at all (without): the
    /// server's proof that it holds the certificate's key is checked either way.
    #[derive(Debug)]
    pub(super) struct NoName {
        pub(super) chain: Option<Arc<WebPkiServerVerifier>>,
        pub(super) provider: Arc<CryptoProvider>,
    }

    impl ServerCertVerifier for NoName {
        fn verify_server_cert(
            &self,
            end_entity: &CertificateDer<'_>,
            intermediates: &[CertificateDer<'_>],
            server_name: &ServerName<'_>,
            ocsp: &[u8],
            now: UnixTime,
        ) -> Result<ServerCertVerified, Error> {
            let Some(chain) = &self.chain else {
                return Ok(ServerCertVerified::assertion());
            };
            // webpki checks the chain first and the name last: a wrong name means the chain
            // was good.
            match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
                Err(Error::InvalidCertificate(
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. },
                )) => Ok(ServerCertVerified::assertion()),
                other => other,
            }
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            let algorithms = &self.provider.signature_verification_algorithms;
            verify_tls12_signature(message, cert, dss, algorithms)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            let algorithms = &self.provider.signature_verification_algorithms;
            verify_tls13_signature(message, cert, dss, algorithms)
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.provider
                .signature_verification_algorithms
                .supported_schemes()
        }
    }
}

/// The TLS failure behind `error`, in words, as a config error: a certificate not trusted or
/// not for this host, a server that does not speak TLS there, or one that wants a client
/// certificate. `server` names it ("PostgreSQL at postgres://h/db"). `None` when `error` is no
/// TLS failure (a refused connection, a timeout).
pub(crate) fn explain(error: &(dyn StdError + 'static), server: &str, tls: &Tls) -> Option<Error> {
    use rustls::{AlertDescription as Alert, CertificateError as Cert};
    let e = find_rustls(error)?;
    let n = tls.names;
    let fix_ca = match &tls.roots {
        Some(Roots::File(path)) => {
            format!(
                "it is not signed by a CA in {}={}",
                n.rootcert,
                path.display()
            )
        }
        _ => format!(
            "it is not signed by a CA in the system's store: give the CA's certificate with \
             {}=PATH",
            n.rootcert
        ),
    };
    let why = match e {
        rustls::Error::InvalidCertificate(Cert::UnknownIssuer | Cert::BadSignature) => {
            format!("the server's certificate is not trusted: {fix_ca}")
        }
        rustls::Error::InvalidCertificate(
            Cert::NotValidForName | Cert::NotValidForNameContext { .. },
        ) => format!(
            "the server's certificate is not for the host name the URL gives ({e}): connect by \
             a name the certificate names{}",
            // Only PostgreSQL and MySQL have a weaker mode that still checks the chain.
            if tls.mode == SslMode::VerifyFull && !server.starts_with("Redis") {
                format!(", or use {}", n.verify_ca)
            } else {
                String::new()
            }
        ),
        rustls::Error::InvalidCertificate(
            Cert::Expired | Cert::ExpiredContext { .. } | Cert::NotValidYet,
        )
        | rustls::Error::InvalidCertificate(Cert::NotValidYetContext { .. }) => format!(
            "the server's certificate is out of its validity period ({e}), or this host's \
             clock is wrong"
        ),
        rustls::Error::InvalidMessage(_) => {
            "the server did not answer in TLS: is this its TLS port?".to_string()
        }
        rustls::Error::AlertReceived(
            Alert::CertificateRequired | Alert::HandshakeFailure | Alert::BadCertificate,
        ) if tls.client.is_none() => format!(
            "the server refused the connection ({e}): it may want a client certificate \
             ({}=PATH&{}=PATH)",
            n.cert, n.key
        ),
        rustls::Error::AlertReceived(
            Alert::UnknownCA
            | Alert::BadCertificate
            | Alert::CertificateUnknown
            | Alert::CertificateExpired
            | Alert::CertificateRevoked,
        ) => format!("the server refused our client certificate ({e})"),
        other => format!("the TLS handshake failed: {other}"),
    };
    Some(Error::config(format!("{server}: {why}")))
}

/// The rustls error in `error`'s chain, also inside an `io::Error` (where TLS streams put it).
fn find_rustls<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a rustls::Error> {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<rustls::Error>() {
            return Some(found);
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if let Some(found) = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                return Some(found);
            }
        }
        next = e.source();
    }
    None
}
