/// Which web pages may open a WebSocket here, by their `Origin`.
///
/// The pages this server serves are reached at the address it printed (or the configured public URL), and
/// on this machine at a loopback address and its own port. Anything else is another site: a page on
/// `evil.example` must not drive a classroom from a child's browser, and with DNS rebinding such a page can
/// even send `Host: evil.example` to this server, so comparing `Origin` with `Host` proves nothing. Clients
/// that send no `Origin` are not browsers and are let through: the check protects browsers, nothing else.
public struct OriginPolicy: Sendable, Equatable {
    /// One web origin: scheme, host and port, compared the way browsers do (host without case, default
    /// ports filled in).
    public struct Origin: Hashable, Sendable, CustomStringConvertible {
        public var scheme: String
        public var host: String
        public var port: Int

        /// Parses an `Origin` header or the start of a URL (`http://192.168.1.20:8080/anything`).
        public init?(_ text: String) {
            guard let separator = text.range(of: "://") else { return nil }
            let scheme = text[..<separator.lowerBound].lowercased()
            let defaultPort: Int
            switch scheme {
            case "http": defaultPort = 80
            case "https": defaultPort = 443
            default: return nil
            }
            var authority = text[separator.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
            let host: Substring
            var portText: Substring?
            if authority.hasPrefix("[") {
                guard let close = authority.firstIndex(of: "]") else { return nil }
                host = authority[...close]
                let rest = authority[authority.index(after: close)...]
                if !rest.isEmpty {
                    guard rest.hasPrefix(":") else { return nil }
                    portText = rest.dropFirst()
                }
            } else if let colon = authority.lastIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
            }
            guard !host.isEmpty else { return nil }
            var port = defaultPort
            if let portText {
                guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit), let value = Int(portText), (1...65_535).contains(value) else {
                    return nil
                }
                port = value
            }
            self.scheme = scheme
            self.host = host.lowercased()
            self.port = port
        }

        public var description: String { "\(scheme)://\(host):\(port)" }

        var isLoopback: Bool {
            if host == "localhost" || host == "[::1]" { return true }
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { part in
                !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCIIDigit) && Int(part)! <= 255
            }
        }
    }

    public private(set) var allowsAny = false
    public private(set) var origins: Set<Origin> = []
    /// This server's own port: pages on a loopback address and this port are its own.
    public private(set) var loopbackPort: Int?

    /// `allowed` holds the public URL, the printed address and the configured `allowedOrigins` (`"*"` allows
    /// every origin). Entries that are not http(s) URLs are ignored.
    public init(allowed: [String] = [], loopbackPort: Int? = nil) {
        allow(allowed)
        self.loopbackPort = loopbackPort
    }

    public mutating func allow(_ entries: [String]) {
        for entry in entries {
            let trimmed = entry.trimmingSpaces()
            if trimmed == "*" {
                allowsAny = true
            } else if let origin = Origin(trimmed) {
                origins.insert(origin)
            }
        }
    }

    public mutating func setLoopbackPort(_ port: Int) {
        loopbackPort = port
    }

    /// Whether a browser showing a page from `origin` may connect (`nil` or empty: not a browser).
    public func allows(_ origin: String?) -> Bool {
        guard let origin, !origin.isEmpty else { return true }
        if allowsAny { return true }
        guard let parsed = Origin(origin) else { return false }
        if origins.contains(parsed) { return true }
        return parsed.isLoopback && parsed.port == loopbackPort
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
