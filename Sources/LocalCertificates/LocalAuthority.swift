import COpenSSL
import Foundation

/// A certificate authority that lives on one laptop: made once, trusted once by the school's devices, and
/// then used to issue the laptop's server certificate again whenever its addresses change. Its key never
/// leaves the laptop.
public struct LocalAuthority {
    public let certificate: Certificate
    let key: PrivateKey

    /// Ten years: a school trusts it once, on every device, and should not have to again soon.
    public static let validityDays = 3_650
    /// At most 397 days, the longest lifetime Apple's and Chromium's rules accept for a server certificate.
    public static let serverValidityDays = 397

    public static func commonName(hostName: String) -> String { "StoryCircle local CA (\(hostName))" }

    /// A new authority: a fresh P-256 key and a self-signed certificate, CA:TRUE with a path length of 0
    /// (critical: it signs server certificates, never another authority), allowed only to sign certificates
    /// and revocation lists, and constrained (critical) to the DNS names `request` names, `.local` and
    /// `localhost` (`ServerCertificateRequest.nameConstraintsValue`).
    public static func create(hostName: String, vouchingFor request: ServerCertificateRequest, now: Date = Date()) throws(CertificateError) -> LocalAuthority {
        let key = try PrivateKey.generateP256()
        let start = time_t(now.timeIntervalSince1970) - 3_600
        let certificate = try CertificateBuilder.sign(
            subject: commonName(hostName: hostName), publicKey: key, issuer: nil, signingKey: key,
            notBefore: start, notAfter: start + time_t(validityDays) * 86_400,
            extensions: [
                (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
                (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
                (NID_name_constraints, "critical," + request.nameConstraintsValue),
            ]
        )
        return LocalAuthority(certificate: certificate, key: key)
    }

    /// The authority kept in `ca.crt` and `ca.key`: refused unless the key is the certificate's, the
    /// certificate is a CA, and it is still valid.
    public init(certificatePEM: Data, keyPEM: Data, now: Date = Date()) throws(CertificateError) {
        guard let certificate = try Certificate.readAll(pem: certificatePEM).first else { throw CertificateError("not a PEM certificate") }
        let key = try PrivateKey.read(pem: keyPEM)
        guard certificate.matches(key) else { throw CertificateError("the key is not the certificate's") }
        guard X509_check_ca(certificate.pointer) == 1 else { throw CertificateError("the certificate is not a certificate authority") }
        guard certificate.notAfter > now.addingTimeInterval(86_400) else { throw CertificateError("the certificate authority has expired") }
        self.init(certificate: certificate, key: key)
    }

    init(certificate: Certificate, key: PrivateKey) {
        self.certificate = certificate
        self.key = key
    }

    public func keyPEM() throws(CertificateError) -> Data { try key.pem() }

    /// The first of `request`'s names this authority's name constraints do not permit, as
    /// OpenSSL's verifier judges it (each checked in a certificate of its own); nil when every one is, or
    /// when the authority has no constraints (one made by an earlier version).
    func outsideItsConstraints(_ request: ServerCertificateRequest) -> String? {
        guard let raw = X509_get_ext_d2i(certificate.pointer, NID_name_constraints, nil, nil) else { return nil }
        let constraints = raw.assumingMemoryBound(to: NAME_CONSTRAINTS.self)
        defer { NAME_CONSTRAINTS_free(constraints) }
        for entry in request.hostNames {
            guard let single = try? ServerCertificateRequest(hostNames: [entry], addresses: []),
                  let issued = try? issue(single) else { return entry }
            let verdict = withExtendedLifetime(issued) {
                // The check reads the subject alternative names OpenSSL caches when it first looks at a
                // certificate's extensions; a certificate just made has none cached until asked.
                _ = X509_check_purpose(issued.certificate.pointer, -1, 0)
                return NAME_CONSTRAINTS_check(issued.certificate.pointer, constraints)
            }
            if verdict != X509_V_OK { return entry }
        }
        return nil
    }

    /// A server certificate for `request`'s names and addresses, with a new key: valid for
    /// `serverValidityDays` (never beyond the authority itself), for TLS servers only.
    public func issue(_ request: ServerCertificateRequest, now: Date = Date()) throws(CertificateError) -> IssuedCertificate {
        let key = try PrivateKey.generateP256()
        // An hour back, for devices whose clocks run a little behind the laptop's.
        let start = time_t(now.timeIntervalSince1970) - 3_600
        let end = min(start + time_t(Self.serverValidityDays) * 86_400, time_t(certificate.notAfter.timeIntervalSince1970))
        let certificate = try CertificateBuilder.sign(
            subject: request.commonName, publicKey: key, issuer: self.certificate, signingKey: self.key,
            notBefore: start, notAfter: end,
            extensions: [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "serverAuth"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
                (NID_subject_alt_name, request.subjectAlternativeNameValue),
            ]
        )
        return IssuedCertificate(certificate: certificate, key: key, authority: self.certificate)
    }
}

/// A server certificate and its key, with the authority that signed it.
public struct IssuedCertificate {
    public let certificate: Certificate
    let key: PrivateKey
    public let authority: Certificate

    /// What a TLS server sends: the server's certificate, then the authority's.
    public func chainPEM() throws(CertificateError) -> Data {
        try certificate.pem() + authority.pem()
    }

    public func keyPEM() throws(CertificateError) -> Data { try key.pem() }
}

/// Fills in and signs one X.509 v3 certificate with OpenSSL's own extension parser.
enum CertificateBuilder {
    static func sign(
        subject: String, publicKey: PrivateKey, issuer: Certificate?, signingKey: PrivateKey,
        notBefore: time_t, notAfter: time_t, extensions: [(Int32, String)]
    ) throws(CertificateError) -> Certificate {
        guard let pointer = X509_new() else { throw .openSSL("cannot make a certificate") }
        let certificate = Certificate(taking: pointer)
        guard X509_set_version(pointer, 2) == 1 else { throw .openSSL("cannot set the certificate's version") }
        try setSerial(pointer)
        guard ASN1_TIME_set(X509_getm_notBefore(pointer), notBefore) != nil,
              ASN1_TIME_set(X509_getm_notAfter(pointer), notAfter) != nil else {
            throw .openSSL("cannot set the certificate's validity")
        }
        guard let name = X509_NAME_new() else { throw .openSSL("cannot make a name") }
        defer { X509_NAME_free(name) }
        guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, subject, -1, -1, 0) == 1,
              X509_set_subject_name(pointer, name) == 1,
              X509_set_issuer_name(pointer, issuer.map { X509_get_subject_name($0.pointer) } ?? name) == 1,
              X509_set_pubkey(pointer, publicKey.pointer) == 1 else {
            throw .openSSL("cannot set the certificate's names")
        }
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.pointer ?? pointer, pointer, nil, nil, 0)
        for (nid, value) in extensions {
            guard let extensionPointer = X509V3_EXT_nconf_nid(nil, &context, nid, value) else {
                throw .openSSL("cannot make the extension \(value)")
            }
            defer { X509_EXTENSION_free(extensionPointer) }
            guard X509_add_ext(pointer, extensionPointer, -1) == 1 else { throw .openSSL("cannot add the extension \(value)") }
        }
        guard X509_sign(pointer, signingKey.pointer, EVP_sha256()) > 0 else { throw .openSSL("cannot sign the certificate") }
        return certificate
    }

    /// 159 random bits: positive, unpredictable, and within the 20 bytes RFC 5280 allows.
    private static func setSerial(_ certificate: OpaquePointer) throws(CertificateError) {
        guard let number = BN_new() else { throw .openSSL("cannot make a serial number") }
        defer { BN_free(number) }
        guard BN_rand(number, 159, -1, 0) == 1, let serial = BN_to_ASN1_INTEGER(number, nil) else {
            throw .openSSL("cannot make a serial number")
        }
        defer { ASN1_INTEGER_free(serial) }
        guard X509_set_serialNumber(certificate, serial) == 1 else { throw .openSSL("cannot set the serial number") }
    }
}
