import COpenSSL
import Foundation

/// Where the server's certificate and key are, and where plain HTTP is answered with a redirect to HTTPS.
public struct TLSSettings: Sendable, Equatable {
    /// A PEM file: the server's certificate, then any intermediate certificates.
    public var certificateFile: String
    /// A PEM file: the certificate's private key (unencrypted).
    public var keyFile: String
    /// A port answering every plain HTTP request with a redirect to the same path over HTTPS; nil: none.
    public var redirectPort: Int?

    public init(certificateFile: String, keyFile: String, redirectPort: Int? = nil) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.redirectPort = redirectPort
    }
}

/// Why a certificate and key cannot be served, in a sentence an operator can act on.
public struct CertificateProblem: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// A certificate (with its chain) and the private key that goes with it, read from PEM files and checked:
/// both readable, the key the certificate's, the certificate valid now. The server serves a pair only once it
/// has been checked, at start and at every reload.
///
/// `@unchecked Sendable`: the OpenSSL objects are never changed after `init`, only read (and reference-counted
/// by OpenSSL when a context takes them).
public final class CertificatePair: @unchecked Sendable {
    public let certificateFile: String
    public let keyFile: String
    /// `X509 *`, `EVP_PKEY *`, and the intermediate certificates after the first, each owned here.
    let certificate: OpaquePointer
    let key: OpaquePointer
    let chain: [OpaquePointer]

    /// Reads and checks the pair as of `now` (tests pass another time).
    public init(certificateFile: String, keyFile: String, now: Date = Date()) throws(CertificateProblem) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        var certificates = try Self.readCertificates(certificateFile)
        certificate = certificates.removeFirst()
        chain = certificates
        do {
            key = try Self.readKey(keyFile)
        } catch {
            Self.free(certificate, chain)
            throw error
        }
        // Every property is set: from here on a throw runs `deinit`, which frees them.
        try check(now: now)
    }

    deinit {
        EVP_PKEY_free(key)
        Self.free(certificate, chain)
    }

    /// The key's type as OpenSSL names it ("EC", "RSA", "ED25519"): a context serves one pair per type.
    public var keyType: String {
        EVP_PKEY_get0_type_name(key).map { String(cString: $0) } ?? "unknown"
    }

    /// The certificate's serial number in hexadecimal (as `openssl x509 -serial` prints it).
    public var serial: String {
        guard let number = ASN1_INTEGER_to_BN(X509_get_serialNumber(certificate), nil) else { return "" }
        defer { BN_free(number) }
        guard let hex = BN_bn2hex(number) else { return "" }
        defer { CRYPTO_free(hex, #fileID, #line) }
        return String(cString: hex)
    }

    /// When the certificate stops being valid.
    public var notAfter: Date? { Self.date(X509_get0_notAfter(certificate)) }

    /// Whether the certificate names `host` (a DNS name, wildcards as browsers read them, or an IP address).
    public func covers(host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.contains(":") || bare.allSatisfy({ $0.isNumber || $0 == "." }) {
            return X509_check_ip_asc(certificate, bare, 0) == 1
        }
        return X509_check_host(certificate, bare, bare.utf8.count, 0, nil) == 1
    }

    // MARK: - Reading and checking

    private func check(now: Date) throws(CertificateProblem) {
        guard X509_check_private_key(certificate, key) == 1 else {
            ERR_clear_error()
            throw CertificateProblem(description: "the TLS key \(keyFile) does not match the certificate \(certificateFile)")
        }
        var time = time_t(now.timeIntervalSince1970)
        if X509_cmp_time(X509_get0_notAfter(certificate), &time) <= 0 {
            let when = notAfter.map { " on \(Self.day($0))" } ?? ""
            throw CertificateProblem(description: "the TLS certificate \(certificateFile) expired\(when): renew it (or run 'storycircle tls init' again)")
        }
        if X509_cmp_time(X509_get0_notBefore(certificate), &time) >= 0 {
            throw CertificateProblem(description: "the TLS certificate \(certificateFile) is not valid yet (is this computer's clock right?)")
        }
    }

    private static func readCertificates(_ path: String) throws(CertificateProblem) -> [OpaquePointer] {
        let bio = try open(path, what: "certificate")
        defer { BIO_free(bio) }
        var certificates: [OpaquePointer] = []
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            certificates.append(certificate)
        }
        ERR_clear_error()
        guard !certificates.isEmpty else {
            throw CertificateProblem(description: "the TLS certificate \(path) holds no PEM certificate")
        }
        return certificates
    }

    private static func readKey(_ path: String) throws(CertificateProblem) -> OpaquePointer {
        let bio = try open(path, what: "key")
        defer { BIO_free(bio) }
        // No passphrase callback: an encrypted key fails here instead of asking on a terminal.
        guard let key = PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil) else {
            ERR_clear_error()
            throw CertificateProblem(description: "the TLS key \(path) holds no unencrypted PEM private key")
        }
        return key
    }

    private static func open(_ path: String, what: String) throws(CertificateProblem) -> OpaquePointer {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CertificateProblem(description: "the TLS \(what) \(path) does not exist")
        }
        guard access(path, R_OK) == 0, let bio = BIO_new_file(path, "r") else {
            ERR_clear_error()
            throw CertificateProblem(description: "cannot read the TLS \(what) \(path) (permission denied?)")
        }
        return bio
    }

    private static func free(_ certificate: OpaquePointer, _ chain: [OpaquePointer]) {
        X509_free(certificate)
        chain.forEach { X509_free($0) }
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }

    private static func day(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: date)
    }
}
