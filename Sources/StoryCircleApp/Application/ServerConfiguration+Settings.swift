import Foundation
import StoryCircleCore

/// Every setting of `ServerConfiguration`, declared once: its key in the file, the environment variable a
/// container sets it with (for the ones it may), and the property it fills. Reading the file, reading the
/// environment and refusing an unknown key all go through this table, and each kind of value is parsed
/// one way (`SettingValue`): a boolean is the same boolean in the file and in the environment.
extension ServerConfiguration {
    static let settings: [Setting] = [
        // Network: where it listens, and who may connect.
        Setting("port", \.network.port, environment: "STORYCIRCLE_PORT"),
        Setting("bindAddress", \.network.bindAddress, environment: "STORYCIRCLE_BIND"),
        Setting("publicURL", \.network.publicURL, environment: "STORYCIRCLE_PUBLIC_URL"),
        Setting("allowedOrigins", \.network.allowedOrigins, environment: "STORYCIRCLE_ALLOWED_ORIGINS"),
        Setting("trustForwardedFor", \.network.trustForwardedFor, environment: "STORYCIRCLE_TRUST_FORWARDED_FOR"),
        Setting("adminToken", \.network.adminToken, environment: "STORYCIRCLE_ADMIN_TOKEN"),
        Setting("tokenKeyFile", \.network.tokenKeyFile, environment: "STORYCIRCLE_TOKEN_KEY_FILE"),
        Setting("tokenKey", \.network.tokenKey, environment: "STORYCIRCLE_TOKEN_KEY"),
        // HTTPS: a key with a dot is a key of the object named before it (`"tls": {"certificate": …}`).
        Setting("tls.certificate", \.tls.certificate, environment: "STORYCIRCLE_TLS_CERTIFICATE"),
        Setting("tls.key", \.tls.key, environment: "STORYCIRCLE_TLS_KEY"),
        Setting("tls.redirectPort", \.tls.redirectPort, environment: "STORYCIRCLE_TLS_REDIRECT_PORT"),
        // Files.
        Setting("webRoot", \.files.webRoot, environment: "STORYCIRCLE_WEB_ROOT"),
        Setting("dataDirectory", \.files.dataDirectory, environment: "STORYCIRCLE_DATA_DIR"),
        Setting("sampleStoriesDirectory", \.files.sampleStoriesDirectory, environment: "STORYCIRCLE_SAMPLE_STORIES"),
        Setting("audioCacheDirectory", \.files.audioCacheDirectory, environment: "STORYCIRCLE_AUDIO_CACHE"),
        Setting("audioCacheMegabytes", \.files.audioCacheMegabytes),
        // Connections: the limits that protect the server from one client.
        Setting("maxMessageBytes", \.connections.maxMessageBytes),
        Setting("maxConnections", \.connections.maxConnections),
        Setting("maxConnectionsPerAddress", \.connections.maxConnectionsPerAddress),
        Setting("maxHTTPConnectionsPerAddress", \.connections.maxHTTPConnectionsPerAddress),
        Setting("helloTimeoutSeconds", \.connections.helloTimeoutSeconds),
        Setting("maxQueuedKilobytesPerConnection", \.connections.maxQueuedKilobytesPerConnection),
        Setting("maxQueuedMessagesPerConnection", \.connections.maxQueuedMessagesPerConnection),
        Setting("socketSendBufferKilobytes", \.connections.socketSendBufferKilobytes),
        Setting("coalesceWrites", \.connections.coalesceWrites),
        Setting("messagesPerSecondPerConnection", \.connections.messagesPerSecondPerConnection),
        Setting("messageBurstPerConnection", \.connections.messageBurstPerConnection),
        Setting("pingAfterIdleSeconds", \.connections.pingAfterIdleSeconds, environment: "STORYCIRCLE_PING_AFTER_IDLE_SECONDS"),
        Setting("hangUpAfterIdleSeconds", \.connections.hangUpAfterIdleSeconds),
        // Storage and the cluster.
        Setting("database", \.storage.database, environment: "STORYCIRCLE_DATABASE"),
        Setting("allowUnverifiedDatabase", \.storage.allowUnverifiedDatabase, environment: "STORYCIRCLE_ALLOW_UNVERIFIED_DATABASE"),
        Setting("retentionDays", \.storage.retentionDays, environment: "STORYCIRCLE_RETENTION_DAYS"),
        Setting("removedMemberRetentionDays", \.storage.removedMemberRetentionDays, environment: "STORYCIRCLE_REMOVED_MEMBER_RETENTION_DAYS"),
        Setting("classRetentionDays", \.storage.classRetentionDays, environment: "STORYCIRCLE_CLASS_RETENTION_DAYS"),
        Setting("storyRetentionDays", \.storage.storyRetentionDays, environment: "STORYCIRCLE_STORY_RETENTION_DAYS"),
        Setting("pictureRetentionDays", \.storage.pictureRetentionDays, environment: "STORYCIRCLE_PICTURE_RETENTION_DAYS"),
        Setting("auditRetentionDays", \.storage.auditRetentionDays, environment: "STORYCIRCLE_AUDIT_RETENTION_DAYS"),
        Setting("finishedRoomMinutes", \.storage.finishedRoomMinutes),
        Setting("storageRetrySeconds", \.storage.storageRetrySeconds),
        Setting("nodeId", \.storage.nodeId, environment: "STORYCIRCLE_NODE_ID"),
        Setting("leaseSeconds", \.storage.leaseSeconds, environment: "STORYCIRCLE_LEASE_SECONDS"),
        // Rooms: joining, and the settings a new room starts with.
        Setting("joinBurst", \.rooms.joinBurst),
        Setting("joinsPerSecond", \.rooms.joinsPerSecond),
        Setting("failedJoinBurst", \.rooms.failedJoinBurst),
        Setting("failedJoinsPerMinute", \.rooms.failedJoinsPerMinute),
        Setting("failedJoinMaxDelaySeconds", \.rooms.failedJoinMaxDelaySeconds),
        Setting("roomCodeDigits", \.rooms.roomCodeDigits, environment: "STORYCIRCLE_ROOM_CODE_DIGITS"),
        Setting(roomDefaults: "roomDefaults"),
        // Password sign-ins.
        Setting("signInAccountBurst", \.signIn.signInAccountBurst),
        Setting("signInAccountRefillSeconds", \.signIn.signInAccountRefillSeconds),
        Setting("signInAddressBurst", \.signIn.signInAddressBurst),
        Setting("signInAddressRefillSeconds", \.signIn.signInAddressRefillSeconds),
        // Voices.
        Setting("voicesDirectory", \.voices.voicesDirectory, environment: "STORYCIRCLE_VOICES_DIR"),
        Setting("naturalVoice", \.voices.naturalVoice, environment: "STORYCIRCLE_NATURAL_VOICE"),
        Setting("piperPython", \.voices.piperPython, environment: "STORYCIRCLE_PIPER_PYTHON"),
        Setting("piperWorker", \.voices.piperWorker, environment: "STORYCIRCLE_PIPER_WORKER"),
        Setting("piperThreads", \.voices.piperThreads),
        // The log.
        Setting("logLevel", \.logging.logLevel, environment: "STORYCIRCLE_LOG_LEVEL"),
        Setting("logFormat", \.logging.logFormat, environment: "STORYCIRCLE_LOG_FORMAT"),
    ]

    /// One row of the table.
    struct Setting: Sendable {
        let key: String
        let environment: String?
        /// Sets the property from the file's value (never `null`: that leaves the setting as it was).
        let read: @Sendable (inout ServerConfiguration, JSONValue, _ path: String) throws(Problem) -> Void
        /// Sets the property from the environment's text (never empty: that leaves it as it was).
        let parse: @Sendable (inout ServerConfiguration, String, _ name: String) throws(Problem) -> Void

        init<Value: SettingValue>(_ key: String, _ property: WritableKeyPath<ServerConfiguration, Value> & Sendable, environment: String? = nil) {
            self.init(key, environment: environment) { (configuration, value: Value) in configuration[keyPath: property] = value }
        }

        /// An optional setting: set, it holds a value of its type.
        init<Value: SettingValue>(_ key: String, _ property: WritableKeyPath<ServerConfiguration, Value?> & Sendable, environment: String? = nil) {
            self.init(key, environment: environment) { (configuration, value: Value) in configuration[keyPath: property] = value }
        }

        private init<Value: SettingValue>(_ key: String, environment: String?, set: @escaping @Sendable (inout ServerConfiguration, Value) -> Void) {
            self.key = key
            self.environment = environment
            read = { configuration, json, path throws(Problem) in
                guard let value = Value(json: json) else { throw Problem(description: "\(path) has the wrong type (\(Value.expected))") }
                set(&configuration, value)
            }
            parse = { configuration, text, name throws(Problem) in
                guard let value = Value(text: text) else { throw Problem(description: "\(name)=\(text) is not \(Value.expected)") }
                set(&configuration, value)
            }
        }

        /// The room settings a new room starts with: the rooms' own settings, each key checked by its rules.
        init(roomDefaults key: String) {
            self.key = key
            environment = nil
            read = { configuration, json, path throws(Problem) in
                guard case .object(let object) = json else { throw Problem(description: "\(path) has the wrong type (an object of room settings)") }
                let known = Set(Mirror(reflecting: RoomSettingsPatch()).children.compactMap(\.label))
                if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
                    throw Problem(description: "\(path): unknown setting \"\(key).\(unknown)\"; room settings are \(known.sorted().joined(separator: ", "))")
                }
                let patch: RoomSettingsPatch
                do {
                    patch = try JSONDecoder().decode(RoomSettingsPatch.self, from: JSONEncoder().encode(json))
                } catch {
                    throw Problem(description: "\(path) has the wrong type (an object of room settings)")
                }
                do {
                    configuration.rooms.roomDefaults = try configuration.rooms.roomDefaults.applying(patch)
                } catch {
                    throw Problem(description: "\(path): \((error as? RoomError)?.message ?? String(describing: error))")
                }
            }
            parse = { _, _, _ in }
        }
    }

    /// The file's top-level keys: a setting's own, or the object its dotted key is in.
    static var keys: [String] {
        settings.map { String($0.key.split(separator: ".")[0]) }.reduce(into: []) { keys, key in if !keys.contains(key) { keys.append(key) } }
    }

    /// The keys of the object `group` (the part after the dot of each dotted key in it).
    static func keys(in group: String) -> [String] {
        settings.compactMap { $0.key.hasPrefix(group + ".") ? String($0.key.dropFirst(group.count + 1)) : nil }
    }

    mutating func apply(json data: Data, from file: String) throws(Problem) {
        let object: [String: JSONValue]
        do {
            guard case .object(let value) = try JSONDecoder().decode(JSONValue.self, from: data) else {
                throw Problem(description: "\(file): the configuration must be a JSON object")
            }
            object = value
        } catch let problem as Problem {
            throw problem
        } catch {
            throw Problem(description: "\(file): not valid JSON (\(error))")
        }
        let unknown = Set(object.keys).subtracting(Self.keys)
        if !unknown.isEmpty {
            throw Problem(description: "\(file): unknown setting \(unknown.sorted().map { "\"\($0)\"" }.joined(separator: ", ")); known settings are \(Self.keys.sorted().joined(separator: ", "))")
        }
        for group in Set(Self.settings.compactMap { $0.key.contains(".") ? String($0.key.split(separator: ".")[0]) : nil }).sorted() {
            guard let value = object[group], value != .null else { continue }
            guard case .object(let members) = value else { throw Problem(description: "\(file): \"\(group)\" has the wrong type (an object)") }
            let known = Self.keys(in: group)
            if let unknown = members.keys.sorted().first(where: { !known.contains($0) }) {
                throw Problem(description: "\(file): unknown setting \"\(group).\(unknown)\"; its settings are \(known.sorted().joined(separator: ", "))")
            }
        }
        for setting in Self.settings {
            let path = setting.key.split(separator: ".").map(String.init)
            var found: JSONValue? = object[path[0]]
            for member in path.dropFirst() {
                guard case .object(let members) = found else { found = nil; break }
                found = members[member]
            }
            guard let value = found, value != .null else { continue }
            try setting.read(&self, value, "\(file): \"\(setting.key)\"")
        }
    }

    mutating func apply(environment: [String: String]) throws(Problem) {
        for setting in Self.settings {
            guard let name = setting.environment, let text = environment[name], !text.isEmpty else { continue }
            try setting.parse(&self, text, name)
        }
    }
}

/// A kind of setting's value, read from JSON or from an environment variable's text.
protocol SettingValue: Sendable {
    init?(json: JSONValue)
    init?(text: String)
    /// What a value must be, for the sentence that refuses another.
    static var expected: String { get }
}

extension Int: SettingValue {
    init?(json: JSONValue) {
        guard case .number(let number) = json, let value = Int(exactly: number) else { return nil }
        self = value
    }
    init?(text: String) { self.init(text, radix: 10) }
    static var expected: String { "a whole number" }
}

extension Double: SettingValue {
    init?(json: JSONValue) {
        guard case .number(let number) = json else { return nil }
        self = number
    }
    init?(text: String) {
        guard let value = Double(text), value.isFinite else { return nil }
        self = value
    }
    static var expected: String { "a number" }
}

extension String: SettingValue {
    init?(json: JSONValue) {
        guard case .string(let text) = json else { return nil }
        self = text
    }
    init?(text: String) { self = text }
    static var expected: String { "text" }
}

extension Bool: SettingValue {
    init?(json: JSONValue) {
        guard case .bool(let value) = json else { return nil }
        self = value
    }
    /// The words an operator may write for on and off.
    init?(text: String) {
        switch text.lowercased() {
        case "1", "true", "yes", "on": self = true
        case "0", "false", "no", "off": self = false
        default: return nil
        }
    }
    static var expected: String { "true or false (1, yes, on or 0, no, off)" }
}

/// A list: a JSON array of text, or comma-separated in the environment.
extension Array: SettingValue where Element == String {
    init?(json: JSONValue) {
        guard case .array(let items) = json else { return nil }
        var texts: [String] = []
        for item in items {
            guard case .string(let text) = item else { return nil }
            texts.append(text)
        }
        self = texts
    }
    init?(text: String) { self = text.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
    static var expected: String { "a list of text" }
}
