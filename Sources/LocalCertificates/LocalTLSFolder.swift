import COpenSSL
import Foundation
import Glibc

/// `<data>/tls`: the laptop's authority (`ca.crt`, `ca.key`) and its server certificate (`server.crt`, the
/// chain; `server.key`). The folder is 0700 and every file 0600: only the teacher's account reads the keys.
public struct LocalTLSFolder: Sendable {
    public let path: String

    public init(dataDirectory: String) {
        path = (dataDirectory.isEmpty ? "." : dataDirectory) + "/tls"
    }

    public var authorityCertificate: String { path + "/ca.crt" }
    public var authorityKey: String { path + "/ca.key" }
    public var serverCertificate: String { path + "/server.crt" }
    public var serverKey: String { path + "/server.key" }

    /// What one `tls init` did.
    public struct Outcome {
        public var authorityIsNew: Bool
        public var authority: Certificate
        public var server: Certificate
        public var request: ServerCertificateRequest
    }

    /// Keeps the authority (made the first time, or when `newAuthority`) and issues a new server
    /// certificate for `request`, then checks what it wrote as a TLS client would.
    public func initialise(
        request: ServerCertificateRequest, newAuthority: Bool, hostName: String = ThisMachine.hostName(), now: Date = Date()
    ) throws(CertificateError) -> Outcome {
        try makeFolder()
        let manager = FileManager.default
        let hasCertificate = manager.fileExists(atPath: authorityCertificate)
        let hasKey = manager.fileExists(atPath: authorityKey)
        let authority: LocalAuthority
        let authorityIsNew = newAuthority || (!hasCertificate && !hasKey)
        if authorityIsNew {
            authority = try LocalAuthority.create(hostName: hostName, vouchingFor: request, now: now)
            // The key first: a certificate without its key would be a CA nobody can use.
            try Self.write(authority.keyPEM(), to: authorityKey)
            try Self.write(authority.certificate.pem(), to: authorityCertificate)
        } else {
            guard hasCertificate, hasKey else {
                throw CertificateError("\(hasCertificate ? authorityKey : authorityCertificate) is missing; restore it, or make a new certificate authority with --force (every device must then trust the new one)")
            }
            do {
                authority = try LocalAuthority(certificatePEM: Self.read(authorityCertificate), keyPEM: Self.read(authorityKey), now: now)
            } catch {
                throw CertificateError("\(authorityCertificate): \(error.description); make a new certificate authority with --force (every device must then trust the new one)")
            }
        }
        if !authorityIsNew, let outside = authority.outsideItsConstraints(request) {
            throw CertificateError(
                "this laptop's certificate authority vouches only for the names it was made for (and any name under .local), not \(outside); make a new one with --force (every device must then trust the new one)")
        }
        let issued = try authority.issue(request, now: now)
        let chain = try issued.chainPEM()
        try Self.write(issued.keyPEM(), to: serverKey)
        try Self.write(chain, to: serverCertificate)
        try CertificateChain.verify(serverChainPEM: Self.read(serverCertificate), keyPEM: Self.read(serverKey), authorityPEM: Self.read(authorityCertificate))
        return Outcome(authorityIsNew: authorityIsNew, authority: authority.certificate, server: issued.certificate, request: request)
    }

    /// The data folder if it is new, and `tls` in it, both 0700; an existing `tls` is set to 0700.
    private func makeFolder() throws(CertificateError) {
        let data = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CertificateError("cannot make the folder \(data): \(error.localizedDescription)")
        }
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else { throw CertificateError("\(path) is not a folder") }
        } else if mkdir(path, 0o700) != 0 {
            throw CertificateError("cannot make the folder \(path): \(String(cString: strerror(errno)))")
        }
        guard chmod(path, 0o700) == 0 else { throw CertificateError("cannot set \(path) to 0700: \(String(cString: strerror(errno)))") }
    }

    static func read(_ path: String) throws(CertificateError) -> Data {
        guard let data = FileManager.default.contents(atPath: path) else { throw CertificateError("cannot read \(path)") }
        return data
    }

    /// Written whole or not at all: a new file, created 0600 (never readable by others, even for a
    /// moment), flushed, then renamed over the old one.
    static func write(_ data: Data, to path: String) throws(CertificateError) {
        let temporary = path + ".new"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CertificateError("cannot write \(path): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CertificateError("cannot write \(path): \(reason)")
        }
    }
}

/// A chain checked as a TLS client checks it, with OpenSSL's verifier.
public enum CertificateChain {
    /// Throws unless the chain's first certificate is signed by the authority, within its validity, a
    /// TLS server's (by its purpose), and the key is its own.
    public static func verify(serverChainPEM: Data, keyPEM: Data, authorityPEM: Data) throws(CertificateError) {
        let chain = try Certificate.readAll(pem: serverChainPEM)
        let authority = try Certificate.readAll(pem: authorityPEM)[0]
        guard try chain[0].matches(PrivateKey.read(pem: keyPEM)) else { throw CertificateError("the server key is not the server certificate's") }
        // OpenSSL's context holds the certificates' pointers without owning them: they must outlive it.
        try withExtendedLifetime((chain, authority)) { () throws(CertificateError) in
            guard let store = X509_STORE_new() else { throw .openSSL("cannot make a certificate store") }
            defer { X509_STORE_free(store) }
            guard X509_STORE_add_cert(store, authority.pointer) == 1, let context = X509_STORE_CTX_new() else {
                throw .openSSL("cannot make a certificate store")
            }
            defer { X509_STORE_CTX_free(context) }
            guard X509_STORE_CTX_init(context, store, chain[0].pointer, nil) == 1,
                  X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_SERVER) == 1 else {
                throw .openSSL("cannot check the certificate")
            }
            guard X509_verify_cert(context) == 1 else {
                let reason = String(cString: X509_verify_cert_error_string(Int(X509_STORE_CTX_get_error(context))))
                throw CertificateError("the server certificate does not verify against the authority: \(reason)")
            }
        }
    }
}
