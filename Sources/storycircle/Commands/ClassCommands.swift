import Foundation
import StoryCircleCore

/// A class as the API answers it (`docs/protocol.md`, "Classes").
struct APIClass: Codable {
    struct Child: Codable {
        var id: String?
        var name: String
        var avatar: String?
    }

    var id: String
    var name: String
    var version: Int
    var changedAt: String
    var children: [Child]
}

/// The API calls the class commands share: finding a class by name or id, and saving a changed one.
struct ClassClient {
    var client: ClientOptions

    func find(_ nameOrID: String) async throws -> APIClass {
        let token = try client.adminToken()
        struct Listed: Decodable {
            struct Entry: Decodable { var id: String; var name: String }
            var classes: [Entry]
        }
        let listed = try JSONDecoder().decode(Listed.self, from: try await client.api.send("GET", "/api/classes", token: token).body)
        let wanted = nameOrID.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
        guard let entry = listed.classes.first(where: { $0.id == nameOrID }) ?? listed.classes.first(where: { $0.name.lowercased() == wanted }) else {
            throw CommandFailure("there is no class called \(nameOrID) ('storycircle class list' lists them).")
        }
        return try JSONDecoder().decode(APIClass.self, from: try await client.api.send("GET", "/api/classes/\(entry.id)", token: token).body)
    }

    /// Saves `changed` as based on its version; a refusal is the server's words, each problem on a line.
    func save(_ changed: APIClass) async throws {
        let body: [String: JSONValue] = [
            "version": .number(Double(changed.version)), "name": .string(changed.name),
            "children": .array(changed.children.map { child in
                var object: [String: JSONValue] = ["name": .string(child.name)]
                if let id = child.id { object["id"] = .string(id) }
                if let avatar = child.avatar { object["avatar"] = .string(avatar) }
                return .object(object)
            }),
        ]
        let response = try await client.api.exchange("PUT", "/api/classes/\(changed.id)", token: try client.adminToken(), json: try JSONEncoder().encode(JSONValue.object(body)))
        try Self.check(response)
    }

    static func check(_ response: APIClient.Response) throws {
        guard !(200..<300).contains(response.status) else { return }
        struct Refusal: Decodable {
            struct Problem: Decodable { var path: String; var message: String }
            struct Body: Decodable { var problems: [Problem]? }
            var error: Body
        }
        if let problems = (try? JSONDecoder().decode(Refusal.self, from: response.body))?.error.problems {
            for problem in problems { FileHandle.standardError.write(Data("\(problem.path): \(problem.message)\n".utf8)) }
        }
        throw CommandFailure(APIClient.refusal(response))
    }
}

/// `class create NAME [--child NAME[:PICTURE]]… [--from FILE]`.
struct ClassCreateCommand: ParsableCommand {
    static let child = CommandSpec.Option(long: "child", valueName: "name[:picture]", help: "A child of the class (repeat for each).")
    static let from = CommandSpec.Option(long: "from", valueName: "file", help: "The children from a file: JSON {\"children\": […]} or one name per line.")

    var name: String
    var children: [APIClass.Child]
    var file: String?
    var client: ClientOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        name = arguments.positional[0]
        children = arguments.values(of: Self.child).map(Self.child(_:))
        file = arguments.value(of: Self.from)
        client = ClientOptions(arguments)
    }

    /// `Ada` or `Ada:owl` (a name may itself hold a colon when the part after the last one is no picture).
    static func child(_ text: String) -> APIClass.Child {
        if let emoji = text.range(of: ":emoji:") {
            return APIClass.Child(name: String(text[..<emoji.lowerBound]), avatar: String(text[text.index(after: emoji.lowerBound)...]))
        }
        if let colon = text.lastIndex(of: ":"), ClassRules.avatars.contains(String(text[text.index(after: colon)...])) {
            return APIClass.Child(name: String(text[..<colon]), avatar: String(text[text.index(after: colon)...]))
        }
        return APIClass.Child(name: text)
    }

    func run() async throws -> Int32 {
        var all = children
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CommandFailure("cannot open \(file): \(FileManager.default.fileExists(atPath: file) ? "it cannot be read" : "there is no such file")")
            }
            struct Listed: Decodable { var children: [APIClass.Child] }
            if let listed = try? JSONDecoder().decode(Listed.self, from: data) {
                all += listed.children
            } else {
                all += String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                    .map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map(Self.child(_:))
            }
        }
        let body: JSONValue = .object([
            "name": .string(name),
            "children": .array(all.map { child in
                var object: [String: JSONValue] = ["name": .string(child.name)]
                if let avatar = child.avatar { object["avatar"] = .string(avatar) }
                return .object(object)
            }),
        ])
        let response = try await client.api.exchange("POST", "/api/classes", token: try client.adminToken(), json: try JSONEncoder().encode(body))
        try ClassClient.check(response)
        struct Created: Decodable { var id: String }
        let created = try JSONDecoder().decode(Created.self, from: response.body)
        Output.line("Class \(name) created (\(all.count) \(all.count == 1 ? "child" : "children")): \(created.id)")
        return ExitCode.success
    }
}

/// `class list`.
struct ClassListCommand: ParsableCommand {
    var client: ClientOptions
    var json: Bool

    init(_ arguments: ParsedArguments) {
        client = ClientOptions(arguments)
        json = arguments.isSet(OutputOptions.json)
    }

    func run() async throws -> Int32 {
        let response = try await client.api.send("GET", "/api/classes", token: try client.adminToken())
        if json {
            Output.write(String(decoding: response.body, as: UTF8.self))
            return ExitCode.success
        }
        struct Listed: Decodable {
            struct Entry: Decodable { var id: String; var name: String; var children: Int; var version: Int; var changedAt: String }
            var classes: [Entry]
        }
        let listed = try JSONDecoder().decode(Listed.self, from: response.body)
        if listed.classes.isEmpty {
            Output.line("There are no classes yet. Add one with 'storycircle class create NAME --child Ada --child Bo'.")
            return ExitCode.success
        }
        Output.line(Table.render(header: ["ID", "CHILDREN", "VERSION", "CHANGED", "NAME"], rows: listed.classes.map { [$0.id, String($0.children), String($0.version), $0.changedAt, $0.name] }))
        return ExitCode.success
    }
}

/// `class show CLASS`.
struct ClassShowCommand: ParsableCommand {
    var nameOrID: String
    var client: ClientOptions
    var json: Bool

    init(_ arguments: ParsedArguments) {
        nameOrID = arguments.positional[0]
        client = ClientOptions(arguments)
        json = arguments.isSet(OutputOptions.json)
    }

    func run() async throws -> Int32 {
        let found = try await ClassClient(client: client).find(nameOrID)
        if json {
            Output.line(String(decoding: try JSONEncoder().encode(found), as: UTF8.self))
            return ExitCode.success
        }
        Output.line("\(found.name) (\(found.id), version \(found.version)): \(found.children.count) \(found.children.count == 1 ? "child" : "children")")
        if !found.children.isEmpty {
            Output.line(Table.render(header: ["MEMBER", "PICTURE", "NAME"], rows: found.children.map { [$0.id ?? "", $0.avatar ?? "", $0.name] }))
        }
        return ExitCode.success
    }
}

/// `class add CLASS NAME [--avatar PICTURE]`.
struct ClassAddCommand: ParsableCommand {
    static let avatar = CommandSpec.Option(long: "avatar", valueName: "picture", help: "The child's picture (\(ClassRules.avatars.prefix(4).joined(separator: ", ")), … or emoji:🦊).")

    var nameOrID: String
    var child: String
    var avatar: String?
    var client: ClientOptions

    init(_ arguments: ParsedArguments) {
        nameOrID = arguments.positional[0]
        child = arguments.positional[1]
        avatar = arguments.value(of: Self.avatar)
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        let classes = ClassClient(client: client)
        var found = try await classes.find(nameOrID)
        // A child without a picture gets the next one of the built-in set.
        found.children.append(APIClass.Child(name: child, avatar: avatar ?? ClassRules.avatars[found.children.count % ClassRules.avatars.count]))
        try await classes.save(found)
        Output.line("\(child) added to \(found.name).")
        return ExitCode.success
    }
}

/// `class remove CLASS NAME`.
struct ClassRemoveCommand: ParsableCommand {
    var nameOrID: String
    var child: String
    var client: ClientOptions

    init(_ arguments: ParsedArguments) {
        nameOrID = arguments.positional[0]
        child = arguments.positional[1]
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        let classes = ClassClient(client: client)
        var found = try await classes.find(nameOrID)
        let member = try Self.member(child, of: found)
        found.children.removeAll { $0.id == member.id }
        try await classes.save(found)
        Output.line("\(member.name) is no longer in \(found.name); their results stay in the rooms they played.")
        return ExitCode.success
    }

    /// The child called `name` (ignoring case and spacing), or the member with that id.
    static func member(_ name: String, of found: APIClass) throws -> APIClass.Child {
        let wanted = name.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
        guard let member = found.children.first(where: { $0.id == name || $0.name.lowercased() == wanted }) else {
            throw CommandFailure("\(found.name) has no child called \(name) ('storycircle class show \(found.name)' lists them).")
        }
        return member
    }
}

/// `class erase CLASS NAME --yes`: a child's data deleted everywhere.
struct ClassEraseCommand: ParsableCommand {
    static let yes = CommandSpec.Option(long: "yes", valueName: nil, help: "Delete it: without this, only say what would be deleted.")

    var nameOrID: String
    var child: String
    var confirmed: Bool
    var client: ClientOptions

    init(_ arguments: ParsedArguments) {
        nameOrID = arguments.positional[0]
        child = arguments.positional[1]
        confirmed = arguments.isSet(Self.yes)
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        let found = try await ClassClient(client: client).find(nameOrID)
        let member = try ClassRemoveCommand.member(child, of: found)
        guard confirmed else {
            Output.error("this would delete everything of \(member.name) (\(member.id ?? "")) in \(found.name): their answers and points in every room, their rows in the results and exports, and their place in the class. It cannot be undone. Run again with --yes to delete it.")
            return ExitCode.usage
        }
        let response = try await client.api.exchange("DELETE", "/api/classes/\(found.id)/members/\(member.id ?? "")/data", token: try client.adminToken())
        try ClassClient.check(response)
        Output.line("Everything of \(member.name) was deleted.")
        return ExitCode.success
    }
}
