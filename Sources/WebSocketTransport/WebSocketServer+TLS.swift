import CLibWebSockets
import COpenSSL
import Foundation

/// What TLS keeps on the service thread: the vhost's OpenSSL context and the pair it serves.
/// `@unchecked Sendable`: both are read and written on the service thread only.
final class TLSState: @unchecked Sendable {
    /// The vhost's `SSL_CTX *`, handed to us by lws while the vhost is made; new handshakes copy its
    /// certificate and key, so changing them there changes what the next connection gets and nothing else.
    var context: OpaquePointer?
    var served: CertificatePair?
    /// Why the pair could not be served when the vhost was made.
    var startProblem: CertificateProblem?
}

// HTTPS and WSS: lws makes the vhost's OpenSSL context, and we set it up (protocols, ciphers, the pair) in
// the callback lws gives for it; a reload swaps the pair in that context on the service thread.
extension WebSocketServer {
    /// TLS 1.2 with forward secrecy and authenticated encryption only (Mozilla's "intermediate" list without
    /// its finite-field Diffie-Hellman), and TLS 1.3's suites.
    static let tls12Ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
    static let tls13Ciphers = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
    static let tlsGroups = "X25519:P-256:P-384"

    /// `LWS_CALLBACK_OPENSSL_LOAD_EXTRA_SERVER_VERIFY_CERTS`, while the vhost is made on the service thread.
    func configureTLS(_ sslContext: OpaquePointer) -> Int32 {
        guard let settings = configuration.tls else { return 0 }
        let pair: CertificatePair
        do {
            pair = try CertificatePair(certificateFile: settings.certificateFile, keyFile: settings.keyFile)
        } catch {
            tls.startProblem = error
            return -1
        }
        guard sc_ssl_ctx_set_min_proto_version(sslContext, TLS1_2_VERSION) == 1,
            sc_ssl_ctx_set_max_proto_version(sslContext, TLS1_3_VERSION) == 1,
            SSL_CTX_set_cipher_list(sslContext, Self.tls12Ciphers) == 1,
            SSL_CTX_set_ciphersuites(sslContext, Self.tls13Ciphers) == 1,
            sc_ssl_ctx_set1_groups_list(sslContext, Self.tlsGroups) == 1
        else {
            ERR_clear_error()
            return -1
        }
        // No compression (CRIME), no renegotiation (a client-started one costs the server a handshake each),
        // the server's order of ciphers.
        SSL_CTX_set_options(sslContext, sc_ssl_op_server_hardening())
        guard install(pair, in: sslContext) else { return -1 }
        tls.context = sslContext
        return 0
    }

    /// Reads and checks the configured certificate and key again, and serves them to every new connection
    /// from now on; connections already open keep theirs. A pair that fails its checks is refused, and the
    /// one served stays. Any thread but the service thread.
    ///
    /// The new key must be of the served one's type: OpenSSL keeps one certificate per key type in a
    /// context and has no call to empty a slot, so an RSA pair loaded over an ECDSA one would leave the old
    /// ECDSA certificate served to every client that prefers it. Changing the type takes a restart.
    public func reloadCertificate() async throws(CertificateProblem) -> CertificatePair {
        guard let settings = configuration.tls else { throw CertificateProblem(description: "this server serves no TLS certificate") }
        let pair = try CertificatePair(certificateFile: settings.certificateFile, keyFile: settings.keyFile)
        let refusal = await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            loopExecutor.execute { [self] in
                guard isServiceThread, let context = tls.context else { return continuation.resume(returning: "the server is not serving TLS now") }
                if let served = tls.served, served.keyType != pair.keyType {
                    return continuation.resume(
                        returning: "the new key is \(pair.keyType) and the one served \(served.keyType): restart the server to change the key's type")
                }
                continuation.resume(returning: install(pair, in: context) ? nil : "the server is not serving TLS now")
            }
        }
        if let refusal { throw CertificateProblem(description: refusal) }
        return pair
    }

    /// The pair being served (service thread).
    var servedCertificate: CertificatePair? { tls.served }

    /// Puts `pair` in `sslContext`: checked already, so OpenSSL refuses nothing here but memory.
    private func install(_ pair: CertificatePair, in sslContext: OpaquePointer) -> Bool {
        defer { ERR_clear_error() }
        guard SSL_CTX_use_certificate(sslContext, pair.certificate) == 1, sc_ssl_ctx_clear_chain_certs(sslContext) == 1 else { return false }
        for intermediate in pair.chain where sc_ssl_ctx_add1_chain_cert(sslContext, intermediate) != 1 {
            return false
        }
        guard SSL_CTX_use_PrivateKey(sslContext, pair.key) == 1, SSL_CTX_check_private_key(sslContext) == 1 else { return false }
        tls.served = pair
        return true
    }
}
