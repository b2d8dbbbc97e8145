import COpenSSL
import Foundation
import Glibc

/// One blocking TCP connection, TLS-wrapped for https: every socket operation gives up after `timeout`
/// seconds of silence. Used from one thread only, then closed.
final class Connection {
    private let descriptor: Int32
    private var context: OpaquePointer?
    private var ssl: OpaquePointer?

    /// Connects to the first address of `host` that accepts.
    init(host: String, port: Int, timeout: TimeInterval) throws(HTTPClientError) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { throw .unknownHost(host) }
        defer { freeaddrinfo(list) }
        var problem = HTTPClientError.connectionRefused
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let address = candidate {
            candidate = address.pointee.ai_next
            let socketDescriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.ai_protocol)
            guard socketDescriptor >= 0 else { continue }
            // On Linux SO_SNDTIMEO also bounds connect().
            var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
            setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(socketDescriptor, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
            if Glibc.connect(socketDescriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                descriptor = socketDescriptor
                return
            }
            let error = errno
            Glibc.close(socketDescriptor)
            switch error {
            case ECONNREFUSED: problem = .connectionRefused
            case EINPROGRESS, EAGAIN, ETIMEDOUT: problem = .timedOut
            default: problem = .network(String(cString: strerror(error)))
            }
        }
        throw problem
    }

    deinit {
        if let ssl {
            SSL_shutdown(ssl)
            SSL_free(ssl)
        }
        if let context { SSL_CTX_free(context) }
        Glibc.close(descriptor)
    }

    /// TLS 1.2 or later, the peer's chain verified against the system's authorities and `authorityFile`,
    /// and its certificate required to name `host` (a DNS name, or an IP address for an address literal).
    func startTLS(host: String, authorityFile: String?) throws(HTTPClientError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw .tls(Self.openSSLReason()) }
        self.context = context
        guard sc_ssl_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1 else { throw .tls(Self.openSSLReason()) }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_default_verify_paths(context)
        if let authorityFile {
            guard SSL_CTX_load_verify_locations(context, authorityFile, nil) == 1 else {
                ERR_clear_error()
                throw .cannotReadAuthorities(authorityFile)
            }
        }
        guard let ssl = SSL_new(context) else { throw .tls(Self.openSSLReason()) }
        self.ssl = ssl
        let named: Bool
        if Self.isAddressLiteral(host) {
            // No SNI for an address (RFC 6066); the certificate must list the address itself.
            named = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1
        } else {
            named = SSL_set1_host(ssl, host) == 1 && sc_ssl_set_tlsext_host_name(ssl, host) == 1
        }
        guard named, SSL_set_fd(ssl, descriptor) == 1 else { throw .tls(Self.openSSLReason()) }
        let result = SSL_connect(ssl)
        guard result == 1 else {
            let verification = SSL_get_verify_result(ssl)
            let failure = SSL_get_error(ssl, result)
            let socketError = errno
            let reason = Self.openSSLReason()
            if verification == X509_V_ERR_HOSTNAME_MISMATCH || verification == X509_V_ERR_IP_ADDRESS_MISMATCH {
                throw .wrongName(host)
            }
            if verification != X509_V_OK {
                throw .untrustedCertificate(String(cString: X509_verify_cert_error_string(verification)))
            }
            throw Self.ioError(failure, errno: socketError, reason: reason)
        }
    }

    func write(_ bytes: [UInt8]) throws(HTTPClientError) {
        var offset = 0
        while offset < bytes.count {
            let count: Int = bytes.withUnsafeBytes { buffer in
                let start = buffer.baseAddress! + offset
                let length = buffer.count - offset
                if let ssl { return Int(SSL_write(ssl, start, Int32(min(length, Int(Int32.max))))) }
                return Glibc.send(descriptor, start, length, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                offset += count
                continue
            }
            if ssl == nil, count < 0, errno == EINTR { continue }
            throw failure(count)
        }
    }

    /// Up to `capacity` bytes; empty at a clean end of the connection.
    func read(capacity: Int = 64 * 1024) throws(HTTPClientError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: capacity)
        while true {
            let count: Int = buffer.withUnsafeMutableBytes { raw in
                if let ssl { return Int(SSL_read(ssl, raw.baseAddress!, Int32(raw.count))) }
                return Glibc.recv(descriptor, raw.baseAddress!, raw.count, 0)
            }
            if count > 0 { return Array(buffer[..<count]) }
            if let ssl {
                if SSL_get_error(ssl, Int32(count)) == SSL_ERROR_ZERO_RETURN { return [] }
            } else {
                if count == 0 { return [] }
                if errno == EINTR { continue }
            }
            throw failure(count)
        }
    }

    private func failure(_ result: Int) -> HTTPClientError {
        let socketError = errno
        guard let ssl else {
            return socketError == EAGAIN || socketError == EWOULDBLOCK ? .timedOut : .network(String(cString: strerror(socketError)))
        }
        return Self.ioError(SSL_get_error(ssl, Int32(result)), errno: socketError, reason: Self.openSSLReason())
    }

    private static func ioError(_ failure: Int32, errno socketError: Int32, reason: String) -> HTTPClientError {
        switch failure {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .timedOut
        case SSL_ERROR_SYSCALL where socketError == EAGAIN || socketError == EWOULDBLOCK:
            return .timedOut
        case SSL_ERROR_SYSCALL where socketError == ECONNRESET || socketError == EPIPE:
            return .network("the server closed the connection")
        default:
            return .tls(reason)
        }
    }

    /// OpenSSL's reasons for the last failure; its error queue is emptied so a later failure reports its own.
    private static func openSSLReason() -> String {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons.isEmpty ? "the connection ended during the handshake" : reasons.joined(separator: "; ")
    }

    static func isAddressLiteral(_ host: String) -> Bool {
        var address4 = in_addr()
        var address6 = in6_addr()
        return inet_pton(AF_INET, host, &address4) == 1 || inet_pton(AF_INET6, host, &address6) == 1
    }
}
