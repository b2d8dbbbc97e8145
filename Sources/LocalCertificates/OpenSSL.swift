import COpenSSL
import Foundation

/// What went wrong making, reading or checking a certificate; `description` is one line for the teacher.
public struct CertificateError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }

    /// `what` failed, with OpenSSL's own reason when it left one (its error queue is emptied either way,
    /// so a later call never reports this one's reason).
    static func openSSL(_ what: String) -> CertificateError {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return CertificateError(reasons.isEmpty ? what : "\(what) (\(reasons.joined(separator: "; ")))")
    }
}

/// An ECDSA P-256 key pair owned by Swift: freed with the value.
final class PrivateKey {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }

    /// A new P-256 key from OpenSSL's generator (its DRBG seeded by the operating system).
    static func generateP256() throws(CertificateError) -> PrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .openSSL("cannot make a key generator") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &key) == 1, let key else {
            throw .openSSL("cannot generate a P-256 key")
        }
        return PrivateKey(taking: key)
    }

    static func read(pem: Data) throws(CertificateError) -> PrivateKey {
        let key = try MemoryBIO.reading(pem) { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) }
        guard let key else { throw .openSSL("not a PEM private key") }
        return PrivateKey(taking: key)
    }

    /// PKCS#8, unencrypted: the file's 0600 mode is what protects it, as for any server key.
    func pem() throws(CertificateError) -> Data {
        try MemoryBIO.writing { bio in PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 }
    }
}

/// An X.509 certificate owned by Swift.
public final class Certificate: @unchecked Sendable {
    // Immutable once made: OpenSSL only reads it after signing.
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { X509_free(pointer) }

    /// Every certificate in a PEM file, in order (a chain file: the server's first).
    public static func readAll(pem: Data) throws(CertificateError) -> [Certificate] {
        var certificates: [Certificate] = []
        try MemoryBIO.withReader(pem) { bio throws(CertificateError) in
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                certificates.append(Certificate(taking: certificate))
            }
            ERR_clear_error()  // the end of the file reads as "no start line"
        }
        guard !certificates.isEmpty else { throw CertificateError("not a PEM certificate") }
        return certificates
    }

    public func pem() throws(CertificateError) -> Data {
        try MemoryBIO.writing { bio in PEM_write_bio_X509(bio, pointer) == 1 }
    }

    /// The SHA-256 of the DER certificate as browsers and admin consoles show it: `AB:CD:…`.
    public var sha256Fingerprint: String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(pointer, EVP_sha256(), &digest, &length) == 1 else { return "" }
        return digest.prefix(Int(length)).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    /// When it stops being valid.
    public var notAfter: Date {
        var days: Int32 = 0
        var seconds: Int32 = 0
        // From "now" (nil) to notAfter: the difference is signed, so an expired certificate reads in the past.
        guard ASN1_TIME_diff(&days, &seconds, nil, X509_get0_notAfter(pointer)) == 1 else { return .distantPast }
        return Date().addingTimeInterval(TimeInterval(days) * 86_400 + TimeInterval(seconds))
    }

    public var notBefore: Date {
        var days: Int32 = 0
        var seconds: Int32 = 0
        guard ASN1_TIME_diff(&days, &seconds, nil, X509_get0_notBefore(pointer)) == 1 else { return .distantFuture }
        return Date().addingTimeInterval(TimeInterval(days) * 86_400 + TimeInterval(seconds))
    }

    /// Whether `name` (a DNS name) is one the certificate is for, as a TLS client checks it.
    public func covers(hostName name: String) -> Bool {
        X509_check_host(pointer, name, name.utf8.count, 0, nil) == 1
    }

    /// Whether `address` (IPv4 or IPv6 text) is one of the certificate's IP addresses.
    public func covers(address: String) -> Bool {
        X509_check_ip_asc(pointer, address, 0) == 1
    }

    func matches(_ key: PrivateKey) -> Bool {
        X509_check_private_key(pointer, key.pointer) == 1
    }
}

/// OpenSSL's memory BIO, for PEM in and out of `Data` without temporary files.
enum MemoryBIO {
    static func withReader<Value>(_ data: Data, _ body: (OpaquePointer) throws(CertificateError) -> Value) throws(CertificateError) -> Value {
        guard data.count < Int(Int32.max) else { throw CertificateError("the PEM file is too large") }
        let bytes = [UInt8](data)
        // withUnsafeBytes rethrows untyped errors: the outcome is carried out as a Result instead.
        let outcome = bytes.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> Result<Value, CertificateError> in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return .failure(.openSSL("cannot read PEM")) }
            defer { BIO_free(bio) }
            do throws(CertificateError) {
                return .success(try body(bio))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    static func reading<Value>(_ data: Data, _ body: (OpaquePointer) -> Value) throws(CertificateError) -> Value {
        try withReader(data) { bio throws(CertificateError) in body(bio) }
    }

    static func writing(_ body: (OpaquePointer) -> Bool) throws(CertificateError) -> Data {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("cannot write PEM") }
        defer { BIO_free(bio) }
        guard body(bio) else { throw .openSSL("cannot write PEM") }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while case let count = BIO_read(bio, &chunk, Int32(chunk.count)), count > 0 {
            data.append(contentsOf: chunk.prefix(Int(count)))
        }
        return data
    }
}
