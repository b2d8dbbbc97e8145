import Foundation
import WebSocketTransport

extension ServerConfiguration {
    /// The checks on `tls` that need no file: both files or neither, a redirect port that is a port.
    func validateTLS() throws(Problem) {
        if (tls.certificate?.isEmpty ?? true) != (tls.key?.isEmpty ?? true) {
            throw Problem(description: "tls: set both tls.certificate and tls.key (or neither: then \(defaultTLSFiles.certificate) and its key are used if they exist)")
        }
        if let redirect = tls.redirectPort {
            guard (1...65_535).contains(redirect) else { throw Problem(description: "tls.redirectPort \(redirect) is not a TCP port (1 to 65535)") }
            guard redirect != network.port else { throw Problem(description: "tls.redirectPort must differ from port (\(redirect))") }
        }
    }

    /// Where `storycircle tls init` puts the server's certificate and key.
    var defaultTLSFiles: (certificate: String, key: String) {
        (files.dataDirectory + "/tls/server.crt", files.dataDirectory + "/tls/server.key")
    }

    /// The certificate and key to serve: the configured ones, else those `storycircle tls init` made when both
    /// exist, else none (plain HTTP).
    public var resolvedTLS: TLSSettings? {
        if let certificate = tls.certificate, let key = tls.key, !certificate.isEmpty, !key.isEmpty {
            return TLSSettings(certificateFile: certificate, keyFile: key, redirectPort: tls.redirectPort)
        }
        let made = defaultTLSFiles
        guard FileManager.default.fileExists(atPath: made.certificate), FileManager.default.fileExists(atPath: made.key) else { return nil }
        return TLSSettings(certificateFile: made.certificate, keyFile: made.key, redirectPort: tls.redirectPort)
    }
}
