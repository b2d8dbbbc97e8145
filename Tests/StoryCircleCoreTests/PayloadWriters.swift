import Foundation

/// The fast writer (`JSONObjectWritable.writeMembers`) of every payload the server sends, made from the
/// payloads' declarations so that a field is named once, where it is declared: each payload writes its
/// public stored properties in declaration order under their coding keys (a `CodingKeys` case's raw value,
/// or the property's name), leaving out `nil`s, as the synthesised `Codable` does. Payloads that `Codable`
/// does not write that way (a hand-written `encode(to:)`, or a `PersonalisedPayload` written in two halves)
/// keep their writers by hand in `ServerMessage+Encoding.swift`. `ServerMessageEncodingTests` holds every
/// writer, made or not, to `Codable`, byte for byte.
enum PayloadWriters {
    static let path = "Sources/StoryCircleCore/Protocol/ServerMessagePayloads+Writing.swift"

    struct Missing: Error {}

    struct Payload {
        var name: String
        var file: String
        var line: Int
        /// Each stored property and the key it is written under.
        var fields: [(property: String, key: String, type: String)]
        var encodesItself: Bool
    }

    /// The generated file, from the core's sources.
    static func text(root: URL) throws -> String {
        let folder = root.appendingPathComponent("Sources/StoryCircleCore")
        var sources: [(file: String, text: String)] = []
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        for file in files.filter({ $0.pathExtension == "swift" }).sorted(by: { $0.path < $1.path }) {
            let relative = String(file.path.dropFirst(root.path.count + 1))
            guard relative != path else { continue }
            sources.append((relative, try String(contentsOf: file, encoding: .utf8)))
        }
        var payloads: [String: Payload] = [:]
        for source in sources { for payload in declarations(in: source.text, file: source.file) { payloads[payload.name] = payload } }
        let all = sources.map(\.text).joined(separator: "\n")
        let byHand = Set(all.matches(of: /\nextension (\w+): PersonalisedPayload/).map { String($0.1) })
        guard let message = sources.first(where: { $0.file.hasSuffix("Protocol/ServerMessage.swift") })?.text else { throw Missing() }
        let roots = message.matches(of: /\n    (?:indirect )?case \w+\((\w+)\)/).map { String($0.1) }
        var reached: Set<String> = []
        var queue = roots
        while let name = queue.popLast() {
            guard let payload = payloads[name], reached.insert(name).inserted else { continue }
            for field in payload.fields {
                queue += field.type.matches(of: /[A-Za-z_]\w*(?![\w.])/).map { String($0.0) }.filter { payloads[$0] != nil }
            }
        }
        let made = reached.compactMap { payloads[$0] }.filter { !$0.encodesItself && !byHand.contains($0.name) }
            .sorted { ($0.file, $0.line) < ($1.file, $1.line) }
        var text = "// <generated from the payloads' declarations by GeneratedTablesTests: edit those, then "
            + "`\(GeneratedTablesTests.command)`>\n"
            + "// Each payload's members as `Codable` writes them: stored properties in declaration order, `nil`s left out.\n"
        for payload in made {
            text += "\nextension \(payload.name): JSONObjectWritable {\n    func writeMembers(to writer: inout JSONWriter) {\n"
            for field in payload.fields { text += "        writer.field(\"\(field.key)\", \(field.property))\n" }
            text += "    }\n}\n"
        }
        return text + "// </generated>\n"
    }

    /// The top-level `public struct`s of a file, with their public stored properties (one per line, four
    /// spaces in: computed ones, with a body, are left out).
    static func declarations(in text: String, file: String) -> [Payload] {
        var found: [Payload] = []
        var current: Payload?
        var keys: [String: String]?
        var inKeys = false
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if current == nil {
                if let start = line.wholeMatch(of: /public struct (\w+)\b[^{]*\{/) {
                    current = Payload(name: String(start.1), file: file, line: number, fields: [], encodesItself: false)
                    keys = nil
                    inKeys = false
                }
                continue
            }
            if line == "}" {
                if var payload = current {
                    if let keys { payload.fields = payload.fields.map { (property: $0.property, key: keys[$0.property] ?? $0.property, type: $0.type) } }
                    found.append(payload)
                }
                current = nil
                continue
            }
            if let property = line.wholeMatch(of: /\ {4}public (?:var|let) (\w+): ([^={]+?)(?: = [^{]*)?/) {
                current?.fields.append((property: String(property.1), key: String(property.1), type: String(property.2)))
            } else if line.contains("enum CodingKeys") {
                keys = [:]
                inKeys = true
            } else if inKeys, line == "    }" {
                inKeys = false
            } else if inKeys, let renamed = line.wholeMatch(of: /\ {8}case (\w+) = "([^"]+)"/) {
                keys?[String(renamed.1)] = String(renamed.2)
            } else if line.contains("func encode(to encoder") {
                current?.encodesItself = true
            }
        }
        return found
    }
}
