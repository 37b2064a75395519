//! The HTTPS checks' TLS: two client configurations built once per prober,
//! one verifying the server's certificate and one accepting any, and the
//! handshake's errors as check failures.

use std::io;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{ring, verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::check::{Failure, Outcome};
use crate::probe::failure::io_outcome;

/// The two client configurations of a prober.
#[derive(Debug)]
pub(crate) struct TlsConfigs {
    verifying: Arc<ClientConfig>,
    accepting_any: Arc<ClientConfig>,
}

impl TlsConfigs {
    /// Configurations whose verifying one trusts `roots`.
    pub(crate) fn new(roots: RootCertStore) -> Self {
        // rustls 0.23.48 deprecates ring's provider for its lack of
        // post-quantum key exchange: nothing a health check needs, and
        // aws-lc-rs (the other provider) costs a C and cmake build.
        #[allow(deprecated)]
        let provider = Arc::new(ring::default_provider());
        let verifying = builder(&provider)
            .with_root_certificates(roots)
            .with_no_client_auth();
        let accepting_any = builder(&provider)
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate {
                provider: provider.clone(),
            }))
            .with_no_client_auth();
        TlsConfigs {
            verifying: Arc::new(tuned(verifying)),
            accepting_any: Arc::new(tuned(accepting_any)),
        }
    }

    /// The configuration of a check: verifying the certificate or not.
    pub(crate) fn get(&self, verify: bool) -> &Arc<ClientConfig> {
        if verify {
            &self.verifying
        } else {
            &self.accepting_any
        }
    }
}

/// The system's trusted roots (rustls-native-certs). Certificates it
/// cannot read or parse are skipped: with none at all every verified check
/// fails with "unknown issuer", which names the problem.
pub(crate) fn native_roots() -> RootCertStore {
    let mut roots = RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    let _ = roots.add_parsable_certificates(found.certs);
    roots
}

fn builder(
    provider: &Arc<CryptoProvider>,
) -> rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier> {
    ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        // ring's provider has suites for both default versions, so this
        // cannot fail.
        .expect("ring supports TLS 1.2 and 1.3")
}

/// A check is one connection: no session tickets kept.
fn tuned(mut config: ClientConfig) -> ClientConfig {
    config.resumption = Resumption::disabled();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

/// The TLS handshake over `tcp`, naming the server `name` (sent as SNI
/// when it is a DNS name; an IP address is verified against the
/// certificate's IP SANs and not sent).
pub(crate) async fn handshake(
    config: &Arc<ClientConfig>,
    name: ServerName<'static>,
    tcp: TcpStream,
) -> Result<TlsStream<TcpStream>, Outcome> {
    TlsConnector::from(config.clone())
        .connect(name, tcp)
        .await
        .map_err(|e| handshake_failure(&e))
}

/// A handshake's error: rustls's own (a certificate rejected, an alert)
/// is [`Failure::Tls`] with its message; a reset is
/// [`Failure::Refused`]; a server that closed mid-handshake is `Tls` too;
/// the director's own shortage is inconclusive.
fn handshake_failure(e: &io::Error) -> Outcome {
    if let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return Failure::Tls(tls.to_string()).into();
    }
    match e.kind() {
        io::ErrorKind::UnexpectedEof => {
            Failure::Tls("the server closed the connection during the handshake".into()).into()
        }
        _ => io_outcome("TLS handshake", e),
    }
}

/// `tls_verify = false`: any certificate is accepted (expired, self-signed,
/// another name), but the handshake's signatures are still checked with
/// the provider's algorithms, so the server holds the certificate's key.
#[derive(Debug)]
struct AcceptAnyCertificate {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
