/// A picture in a story: where it comes from and the words that say what it shows.
///
/// In a story file a picture is a file, relative to the story file (`{"file": "pictures/owl.png", "alt":
/// "…"}`); the CLI sends it to the server, which checks and cleans it and stores it by content hash,
/// and the story then names it by that hash (`{"id": "<64 hex digits>", "alt": "…"}`). A room is only
/// created from a story whose pictures are all stored.
public struct PictureReference: Sendable, Equatable, Hashable {
    public enum Source: Sendable, Equatable, Hashable {
        /// A path as written in the story file (relative to it, or absolute).
        case file(String)
        /// A picture in the room store: the SHA-256 of its stored bytes, lowercase hex.
        case stored(id: String)
    }

    public var source: Source
    /// What the picture shows, for screen readers (and for an option, its label).
    public var alt: String

    public init(source: Source, alt: String) {
        self.source = source
        self.alt = alt
    }

    public var storedID: String? {
        if case .stored(let id) = source { return id }
        return nil
    }

    /// Whether `id` is a picture id: 64 lowercase hexadecimal digits.
    public static func isPictureID(_ id: some StringProtocol) -> Bool {
        id.utf8.count == 64 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    func jsonValue(includeAlt: Bool = true) -> JSONValue {
        var object: [String: JSONValue] = [:]
        switch source {
        case .file(let path): object["file"] = .string(path)
        case .stored(let id): object["id"] = .string(id)
        }
        if includeAlt { object["alt"] = .string(alt) }
        return .object(object)
    }
}

extension StoryLimits {
    /// Words of a picture's alt text.
    public static let altLength = 1...250
    public static let picturePathLength = 1...300
    /// Distinct pictures in one story (sentence, question and option pictures); see `PictureLimits` for bytes.
    public static let pictureCount = 0...64
}

extension Story {
    /// Every picture the story uses, each once, in order of first use.
    public var pictureReferences: [PictureReference] {
        var seen: Set<PictureReference.Source> = []
        var all: [PictureReference] = []
        func add(_ reference: PictureReference?) {
            guard let reference, seen.insert(reference.source).inserted else { return }
            all.append(reference)
        }
        sentencePictures.forEach(add)
        for question in quiz.questions {
            add(question.picture)
            question.optionPictures.forEach(add)
        }
        return all
    }

    /// The story with each picture's source replaced (file paths by stored ids, after an upload).
    public func replacingPictureSources(_ replace: (PictureReference.Source) -> PictureReference.Source) -> Story {
        var story = self
        func swap(_ reference: PictureReference?) -> PictureReference? {
            reference.map { PictureReference(source: replace($0.source), alt: $0.alt) }
        }
        story.sentencePictures = sentencePictures.map(swap)
        story.quiz.questions = quiz.questions.map { question in
            var question = question
            question.picture = swap(question.picture)
            question.optionPictures = question.optionPictures.map(swap)
            return question
        }
        return story
    }

    /// The picture shown while sentence `index` is read, if any.
    public func picture(forSentence index: Int) -> PictureReference? {
        sentencePictures.indices.contains(index) ? sentencePictures[index] : nil
    }
}

extension DocumentChecker {
    /// `{"file": ..., "alt": ...}` or `{"id": ..., "alt": ...}`; `defaultAlt` (an option's label) stands in
    /// for a missing alt.
    mutating func picture(_ value: JSONValue, at path: String, defaultAlt: String? = nil) -> PictureReference? {
        guard let object = object(value, at: path, what: "a picture ({\"file\": \"pictures/owl.png\", \"alt\": \"An owl asleep on a branch\"})") else { return nil }
        warnAboutUnknownFields(in: object, at: path, known: ["file", "id", "alt"])
        var source: PictureReference.Source?
        switch (object["file"], object["id"]) {
        case (let file?, nil):
            if let path = string(file, at: DocumentChecker.path(path, "file"), limit: StoryLimits.picturePathLength, what: "the picture's file") {
                source = .file(path)
            }
        case (nil, let id?):
            if let id = string(id, at: DocumentChecker.path(path, "id"), limit: 64...64, what: "a picture id") {
                if PictureReference.isPictureID(id) { source = .stored(id: id) } else {
                    error(DocumentChecker.path(path, "id"), .pictureIDMalformed, "\"\(id.prefix(70))\" is not a picture id (64 lowercase hexadecimal digits)")
                }
            }
        case (nil, nil):
            error(path, .pictureFileRequired, "the picture needs a file: {\"file\": \"pictures/owl.png\", \"alt\": \"…\"}")
        case (_?, _?):
            error(path, .pictureFileAndID, "a picture has either a file or an id, not both")
        }
        var alt: String?
        if let altValue = object["alt"] {
            alt = string(altValue, at: DocumentChecker.path(path, "alt"), limit: StoryLimits.altLength, what: "the picture's alt text")
        } else if let defaultAlt {
            alt = defaultAlt
        } else {
            error(DocumentChecker.path(path, "alt"), .pictureAltRequired, "the picture needs alt text: a few words saying what it shows, read to children who use a screen reader")
        }
        guard let source, let alt else { return nil }
        return PictureReference(source: source, alt: alt)
    }
}

extension Story {
    /// Where each picture file is named in a story document (`text[0].picture`,
    /// `quiz.questions[1].options[2].picture`), for messages about the file with the path a teacher finds
    /// it at. Reads the document as written; anything malformed is for `load` to report.
    public static func pictureFileLocations(in document: JSONValue) -> [(path: String, file: String)] {
        guard case .object(let root) = document else { return [] }
        var found: [(path: String, file: String)] = []
        func note(_ value: JSONValue?, at path: String) {
            guard case .object(let picture)? = value, case .string(let file)? = picture["file"] else { return }
            found.append((path, file))
        }
        if case .array(let pieces)? = root["text"] {
            for (index, piece) in pieces.enumerated() {
                if case .object(let page) = piece { note(page["picture"], at: DocumentChecker.path(DocumentChecker.path("text", index), "picture")) }
            }
        }
        var questions: [(String, [String: JSONValue])] = []
        if case .object(let quiz)? = root["quiz"] {
            if case .array(let items)? = quiz["questions"] {
                for (index, item) in items.enumerated() {
                    if case .object(let question) = item { questions.append((DocumentChecker.path("quiz.questions", index), question)) }
                }
            } else if quiz["question"] != nil {
                questions.append(("quiz", quiz))
            }
        }
        for (path, question) in questions {
            note(question["picture"], at: DocumentChecker.path(path, "picture"))
            if case .array(let options)? = question["options"] {
                for (index, option) in options.enumerated() {
                    if case .object(let object) = option {
                        note(object["picture"], at: DocumentChecker.path(DocumentChecker.path(DocumentChecker.path(path, "options"), index), "picture"))
                    }
                }
            }
        }
        return found
    }
}
