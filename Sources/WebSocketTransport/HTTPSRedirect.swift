/// Where a plain HTTP request is sent on the redirect port: the same host, path and query over HTTPS. The
/// host is the request's `Host` only when it is a host name or address and nothing more (no path, user or
/// odd character) and the served certificate names it: the redirect never sends a browser anywhere the
/// server itself would not answer for.
public enum HTTPSRedirect {
    /// The longest `Host` header considered.
    static let maxHostBytes = 255

    /// The `Location` for a request, or nil (refuse it) when its host is not one to send a browser to.
    /// `path` and `query` are as lws gives them: decoded, the query's `name=value` pieces apart.
    public static func location(host: String?, path: String, query: [String], httpsPort: Int, covers: (String) -> Bool) -> String? {
        guard let host, let name = hostName(host), covers(name) else { return nil }
        var location = "https://" + name + (httpsPort == 443 ? "" : ":\(httpsPort)")
        location += path.hasPrefix("/") ? encode(path, keeping: pathCharacters) : "/"
        if !query.isEmpty {
            location += "?" + query.map { encode($0, keeping: queryCharacters) }.joined(separator: "&")
        }
        return location
    }

    /// The host part of a `Host` header (its port dropped; an IPv6 address keeps its brackets), lowercased,
    /// or nil when the header is anything but `host[:port]`.
    public static func hostName(_ header: String) -> String? {
        let text = header.lowercased()
        guard !text.isEmpty, text.utf8.count <= maxHostBytes else { return nil }
        var name = Substring(text)
        var port: Substring?
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return nil }
            let address = name[name.index(after: name.startIndex)..<close]
            guard !address.isEmpty, address.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
            let rest = name[name.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                port = rest.dropFirst()
            }
            name = name[...close]
        } else {
            if let colon = name.firstIndex(of: ":") {
                port = name[name.index(after: colon)...]
                name = name[..<colon]
            }
            let labels = name.split(separator: ".", omittingEmptySubsequences: false)
            let validLabel: (Substring) -> Bool = { label in
                !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
                    && label.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
            }
            guard !name.isEmpty, labels.allSatisfy(validLabel) else { return nil }
        }
        if let port {
            guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(port), number <= 65_535 else { return nil }
        }
        return String(name)
    }

    private static let unreserved = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~".utf8)
    private static let pathCharacters = unreserved.union("/!$&'()*+,;=:@".utf8)
    private static let queryCharacters = unreserved.union("/?!$'()*+,;=:@".utf8)

    private static func encode(_ text: String, keeping allowed: Set<UInt8>) -> String {
        var result = ""
        for byte in text.utf8 {
            if allowed.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
