import Foundation
import Glibc

/// The names and addresses a server certificate is for, each checked and written one way only, so what
/// reaches OpenSSL's extension parser is always a plain DNS name or an address inet_ntop wrote.
public struct ServerCertificateRequest: Equatable, Sendable {
    public private(set) var hostNames: [String] = []
    public private(set) var addresses: [String] = []

    /// More than a laptop ever has; a bound on what one command line can ask for.
    public static let maximumEntries = 64

    /// Refused when a name or address is not one; duplicates are kept once, in the order given.
    public init(hostNames: [String], addresses: [String]) throws(CertificateError) {
        for name in hostNames {
            guard let normalised = Self.hostName(name) else {
                throw CertificateError("'\(name.prefix(80))' is not a host name: use letters, digits, '-' and '.' (for example storycircle.school.example)")
            }
            if !self.hostNames.contains(normalised) { self.hostNames.append(normalised) }
        }
        for address in addresses {
            guard let normalised = Self.address(address) else {
                throw CertificateError("'\(address.prefix(80))' is not an IP address: use IPv4 (192.168.1.20) or IPv6 (fd00::20)")
            }
            if !self.addresses.contains(normalised) { self.addresses.append(normalised) }
        }
        guard !(self.hostNames.isEmpty && self.addresses.isEmpty) else { throw CertificateError("a certificate needs at least one name or address") }
        guard self.hostNames.count + self.addresses.count <= Self.maximumEntries else {
            throw CertificateError("at most \(Self.maximumEntries) names and addresses fit in one certificate")
        }
    }

    /// This laptop's: its host name and `<name>.local` (its mDNS name), localhost, 127.0.0.1 and ::1, and
    /// every address of its interfaces that is not loopback; then `names` and `addresses`.
    public static func thisMachine(names: [String] = [], addresses: [String] = []) throws(CertificateError) -> ServerCertificateRequest {
        var machineNames: [String] = []
        if let host = Self.hostName(ThisMachine.hostName()) {
            machineNames.append(host)
            let firstLabel = host.split(separator: ".").first.map(String.init) ?? host
            if firstLabel != "localhost" { machineNames.append(firstLabel + ".local") }
        }
        machineNames.append("localhost")
        let machineAddresses = ["127.0.0.1", "::1"] + ThisMachine.interfaceAddresses()
        return try ServerCertificateRequest(hostNames: machineNames + names, addresses: machineAddresses + addresses)
    }

    /// What a teacher reads: every name, then every address.
    public var entries: [String] { hostNames + addresses }

    /// The certificate's subject: its first name (browsers read only the SANs).
    var commonName: String { hostNames.first ?? addresses.first ?? "localhost" }

    /// OpenSSL's text for the extension: `DNS:a,DNS:b,IP:1.2.3.4`.
    var subjectAlternativeNameValue: String {
        (hostNames.map { "DNS:" + $0 } + addresses.map { "IP:" + $0 }).joined(separator: ",")
    }

    /// OpenSSL's text for the authority's name constraints: the DNS names a certificate it signs may carry.
    /// This request's names, every name under `.local`, and `localhost`: a stolen authority key then mints
    /// nothing a school's devices would accept for anyone else's site. Addresses are left unconstrained: a
    /// laptop's change with every network (some districts' are public), and a site is not reached by one.
    var nameConstraintsValue: String {
        var names = ["local", "localhost"]
        for name in hostNames where !names.contains(name) && !name.hasSuffix(".local") { names.append(name) }
        return names.map { "permitted;DNS:" + $0 }.joined(separator: ",")
    }

    /// A DNS name in lower case without a final dot, or nil: labels of 1 to 63 letters, digits and '-'
    /// (not at either end), 253 characters at most. No wildcards: a laptop has no use for one.
    public static func hostName(_ text: String) -> String? {
        var name = text.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty, name.utf8.count <= 253 else { return nil }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard (1...63).contains(label.utf8.count), label.first != "-", label.last != "-",
                  label.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }) else {
                return nil
            }
        }
        // All digits and dots is an IPv4 address written as a name, which no browser looks up as one.
        guard !labels.allSatisfy({ $0.allSatisfy(\.isNumber) }) else { return nil }
        return name
    }

    /// An IPv4 or IPv6 address as inet_ntop writes it (`fd00::20`), or nil.
    public static func address(_ text: String) -> String? {
        guard text.utf8.count <= 45 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return ThisMachine.text(family: AF_INET, &v4) }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return ThisMachine.text(family: AF_INET6, &v6) }
        return nil
    }
}

/// What the operating system says about this laptop.
public enum ThisMachine {
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }

    /// Every IPv4 and IPv6 address of an interface that is up and not loopback (getifaddrs), in the
    /// system's order, each once.
    public static func interfaceAddresses() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var addresses: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            let flags = Int32(entry.pointee.ifa_flags)
            guard let socketAddress = entry.pointee.ifa_addr, flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0 else { continue }
            var text: String?
            switch Int32(socketAddress.pointee.sa_family) {
            case AF_INET:
                text = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                    var address = inet.pointee.sin_addr
                    return Self.text(family: AF_INET, &address)
                }
            case AF_INET6:
                // The address alone: a link-local one's zone (%wlan0) has no place in a certificate.
                text = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet6 in
                    var address = inet6.pointee.sin6_addr
                    return Self.text(family: AF_INET6, &address)
                }
            default:
                break
            }
            if let text, !addresses.contains(text) { addresses.append(text) }
        }
        return addresses
    }

    static func text(family: Int32, _ address: UnsafeRawPointer) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family, address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
