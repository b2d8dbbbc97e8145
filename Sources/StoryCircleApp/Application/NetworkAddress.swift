import Glibc
import StoryCircleServer

/// The address children's devices can most likely reach this computer at, for the URLs the server prints.
enum NetworkAddress {
    /// The bind address if one is set; otherwise the first private IPv4 address of an interface that is up
    /// (the classroom Wi-Fi), then any other non-loopback one, then 127.0.0.1.
    static func bestGuess(bindAddress: String?) -> String {
        if let bindAddress, !bindAddress.isEmpty, bindAddress != "0.0.0.0" { return bindAddress }
        let addresses = ipv4Addresses()
        return addresses.first(where: isPrivate) ?? addresses.first ?? "127.0.0.1"
    }

    static func ipv4Addresses() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var addresses: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            let flags = Int32(entry.pointee.ifa_flags)
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0 else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 {
                addresses.append(String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        return addresses
    }

    static func isPrivate(_ address: String) -> Bool {
        let parts = address.split(separator: ".").compactMap { Int($0) }
        guard parts.count == 4 else { return false }
        return parts[0] == 10 || (parts[0] == 172 && (16...31).contains(parts[1])) || (parts[0] == 192 && parts[1] == 168)
    }
}
