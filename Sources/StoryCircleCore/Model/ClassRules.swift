/// The rules for a class as a teacher sends it (docs/protocol.md, "Classes"): a name of 1 to 60
/// characters, at most 60 children, each with a nickname-rules name and a known picture, and no two
/// children whose names look the same (the nickname keys). Every problem is reported at its path, so a
/// page can put each beside its field; nothing is stored while there is one.
public enum ClassRules {
    public static let maximumChildren = 60
    public static let maximumNameLength = 60

    /// The built-in pictures (`web-static/avatars/<name>.svg`).
    public static let avatars: [String] = [
        "owl", "fox", "bear", "rabbit", "cat", "dog", "frog", "turtle", "lion", "panda", "penguin", "hedgehog", "koala", "elephant", "whale", "bee",
    ]

    /// A problem with a class, at its path (`name`, `children`, `children[3].name`).
    public typealias Problem = FieldProblem

    /// Every problem of a class that cannot be stored as sent (`invalid_class`).
    public struct Refusal: Error, Sendable, Equatable {
        public var problems: [Problem]

        public init(problems: [Problem]) { self.problems = problems }
    }

    /// A child as sent: the raw strings, before any check.
    public struct RawChild: Sendable, Equatable {
        public var id: String?
        public var name: String
        public var avatar: String?

        public init(id: String? = nil, name: String, avatar: String? = nil) {
            self.id = id
            self.name = name
            self.avatar = avatar
        }
    }

    /// The class checked and normalised, or every problem found. A child sent without a picture gets one
    /// of the built-in ones, in turn.
    public static func check(name rawName: String, children: [RawChild], speedPoints: Bool? = nil, using unicode: any ConfusableSkeleton) -> Result<ClassDraft, Refusal> {
        var problems: [Problem] = []
        let name = SentenceSplitter.collapsingWhitespace(rawName)
        if Nickname.hasUnshowableCharacters(rawName) {
            problems.append(Problem(path: "name", code: "name_invalid"))
        } else if name.isEmpty {
            problems.append(Problem(path: "name", code: "name_empty"))
        } else if name.count > maximumNameLength {
            problems.append(Problem(path: "name", code: "name_too_long", params: ["max": String(maximumNameLength), "length": String(name.count)]))
        }
        // A class of 500 is a pasted list gone wrong: one problem, not 500.
        guard children.count <= maximumChildren else {
            problems.append(Problem(path: "children", code: "class_too_large", params: ["max": String(maximumChildren), "count": String(children.count)]))
            return .failure(Refusal(problems: problems))
        }
        var drafted: [ClassDraft.Child] = []
        var owners: [String: Int] = [:]
        var seenIDs: Set<String> = []
        for (index, child) in children.enumerated() {
            let path = "children[\(index)]"
            var childName = ""
            switch Nickname.normalize(child.name) {
            case .success(let normalized):
                childName = normalized
                let keys = Nickname.matchingKeys(normalized, using: unicode)
                if let other = keys.lazy.compactMap({ owners[$0] }).first {
                    problems.append(Problem(path: path + ".name", code: "duplicate_name", params: ["other": "children[\(other)].name", "name": normalized]))
                } else {
                    for key in keys { owners[key] = index }
                }
            case .failure(.empty):
                problems.append(Problem(path: path + ".name", code: "name_empty"))
            case .failure(.invalidCharacters):
                problems.append(Problem(path: path + ".name", code: "name_invalid"))
            case .failure(.tooLong(let length)):
                problems.append(Problem(path: path + ".name", code: "name_too_long", params: ["max": String(Nickname.maximumLength), "length": String(length)]))
            }
            let avatar = child.avatar ?? avatars[index % avatars.count]
            if !isAvatar(avatar) {
                problems.append(Problem(path: path + ".avatar", code: "avatar_unknown", params: ["avatar": String(avatar.prefix(40))]))
            }
            if let id = child.id, !seenIDs.insert(id).inserted || !ClassIDs.isWellFormed(id) {
                problems.append(Problem(path: path + ".id", code: "member_not_found", params: ["id": String(id.prefix(64))]))
            }
            drafted.append(ClassDraft.Child(id: child.id, name: childName, avatar: avatar))
        }
        guard problems.isEmpty else { return .failure(Refusal(problems: problems)) }
        return .success(ClassDraft(name: name, nameKeys: Nickname.matchingKeys(name, using: unicode), children: drafted, speedPoints: speedPoints))
    }

    /// A built-in picture's name, or `emoji:` and one emoji (shown as a picture, not as a letter or digit).
    public static func isAvatar(_ avatar: String) -> Bool {
        if avatars.contains(avatar) { return true }
        guard avatar.hasPrefix("emoji:") else { return false }
        let emoji = avatar.dropFirst("emoji:".count)
        guard emoji.count == 1, let character = emoji.first else { return false }
        let scalars = character.unicodeScalars
        if scalars.contains(where: { $0.properties.isEmojiPresentation }) { return true }
        // Text-default emoji count when asked for as emoji (U+FE0F), or as a flag of two regional indicators.
        if scalars.contains("\u{FE0F}"), scalars.first?.properties.isEmoji == true, !(scalars.first.map { $0.isASCII } ?? true) { return true }
        return scalars.allSatisfy { (0x1F1E6...0x1F1FF).contains($0.value) } && scalars.count == 2
    }
}
