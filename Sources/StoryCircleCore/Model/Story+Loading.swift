import FoundationEssentials

extension Story {
    static let knownFields: Set<String> = ["title", "text", "narration", "quiz"]
    static let knownNarrationFields: Set<String> = ["voice", "rate", "pitch"]

    /// Parses and validates a story file, reporting every problem at once.
    public static func load(json data: Data) -> Validated<Story> {
        let document: JSONValue
        do {
            document = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            return Validated(value: nil, issues: [ValidationIssue(.error, at: "", .invalidJSON, "not valid JSON: \(describe(error))")])
        }
        return load(json: document)
    }

    /// Validates a story already parsed as JSON.
    public static func load(json document: JSONValue) -> Validated<Story> {
        var checker = DocumentChecker()
        guard let root = checker.object(document, at: "", what: "a story") else {
            return Validated(value: nil, issues: checker.issues)
        }
        checker.warnAboutUnknownFields(in: root, at: "", known: knownFields)

        let title = checker.string(root["title"], at: "title", limit: StoryLimits.titleLength, what: "a title")
        let loadedText = loadSentences(root["text"], checker: &checker)
        let sentences = loadedText?.sentences
        let narration = loadNarration(root["narration"], checker: &checker)
        let quiz: Quiz?
        if let quizValue = root["quiz"] {
            quiz = Quiz.load(json: quizValue, at: "quiz", checker: &checker)
        } else {
            checker.error("quiz", .quizRequired, "a quiz is required: {\"questions\": [{\"question\": ..., \"options\": [...], \"answer\": ...}]}")
            quiz = nil
        }

        guard !checker.hasErrors, let title, let sentences, let quiz else {
            return Validated(value: nil, issues: checker.issues)
        }
        let pictures = loadedText?.pictures ?? []
        let story = Story(title: title, sentences: sentences, narration: narration, quiz: quiz, sentencePictures: pictures.contains { $0 != nil } ? pictures : [])
        let distinct = story.pictureReferences.count
        if distinct > StoryLimits.pictureCount.upperBound {
            checker.error("", .tooManyPictures, ["count": String(distinct), "limit": String(StoryLimits.pictureCount.upperBound)], "the story has \(distinct) pictures; the limit is \(StoryLimits.pictureCount.upperBound)")
            return Validated(value: nil, issues: checker.issues)
        }
        return Validated(value: story, issues: checker.issues)
    }

    /// The sentences, and for each the picture of the piece of text it came from (a piece may be
    /// `{"text": "...", "picture": {...}}`: a page of a picture book).
    private static func loadSentences(_ value: JSONValue?, checker: inout DocumentChecker) -> (sentences: [String], pictures: [PictureReference?])? {
        let pieces: [(String, JSONValue)]
        switch value {
        case nil:
            checker.error("text", .textRequired, "the story text is required (a string, or a list of paragraphs or sentences)")
            return nil
        case .string?:
            pieces = [("text", value!)]
        case .array(let items)?:
            if items.isEmpty {
                checker.error("text", .textEmpty, "the story text is empty")
                return nil
            }
            pieces = items.enumerated().map { (DocumentChecker.path("text", $0.offset), $0.element) }
        case let other?:
            checker.error("text", .textWrongType, "expected the story text as a string or a list of strings, found \(other.typeName)")
            return nil
        }

        var sentences: [String] = []
        var pictures: [PictureReference?] = []
        var valid = true
        for (path, rawPiece) in pieces {
            var piece = rawPiece
            var picture: PictureReference?
            if case .object(let page) = rawPiece, path != "text" {
                checker.warnAboutUnknownFields(in: page, at: path, known: ["text", "picture"])
                guard let text = page["text"] else {
                    checker.error(DocumentChecker.path(path, "text"), .pageTextRequired, "a page needs its text: {\"text\": \"…\", \"picture\": {\"file\": \"…\", \"alt\": \"…\"}}")
                    valid = false
                    continue
                }
                piece = text
                if let pictureValue = page["picture"], pictureValue != .null {
                    picture = checker.picture(pictureValue, at: DocumentChecker.path(path, "picture"))
                    if picture == nil { valid = false }
                }
            }
            guard case .string(let text) = piece else {
                checker.error(path, .notText, ["found": piece.typeName], "expected text, found \(piece.typeName)")
                valid = false
                continue
            }
            let split = SentenceSplitter.sentences(in: text)
            if split.isEmpty {
                checker.error(path, .textEmpty, "the story text is empty")
                valid = false
            }
            for sentence in split where sentence.count > StoryLimits.sentenceLength.upperBound {
                checker.error(path, .sentenceTooLong, ["length": String(sentence.count), "limit": String(StoryLimits.sentenceLength.upperBound), "start": String(sentence.prefix(40))], "a sentence is \(sentence.count) characters long (limit \(StoryLimits.sentenceLength.upperBound)): \"\(sentence.prefix(40))…\"")
                valid = false
            }
            sentences.append(contentsOf: split)
            pictures.append(contentsOf: Array(repeating: picture, count: split.count))
        }
        guard valid else { return nil }
        if sentences.count > StoryLimits.sentenceCount.upperBound {
            checker.error("text", .tooManySentences, ["count": String(sentences.count), "limit": String(StoryLimits.sentenceCount.upperBound)], "the story has \(sentences.count) sentences; the limit is \(StoryLimits.sentenceCount.upperBound)")
            return nil
        }
        let words = sentences.reduce(0) { $0 + $1.split(whereSeparator: \.isWhitespace).count }
        if words > StoryLimits.wordCount.upperBound {
            checker.error("text", .tooManyWords, ["count": String(words), "limit": String(StoryLimits.wordCount.upperBound)], "the story has \(words) words; the limit is \(StoryLimits.wordCount.upperBound)")
            return nil
        }
        return (sentences, pictures)
    }

    private static func loadNarration(_ value: JSONValue?, checker: inout DocumentChecker) -> NarrationSettings {
        var settings = NarrationSettings()
        guard let value, value != .null else { return settings }
        guard let object = checker.object(value, at: "narration", what: "narration settings") else { return settings }
        checker.warnAboutUnknownFields(in: object, at: "narration", known: knownNarrationFields)
        if let voice = object["voice"] {
            if let name = checker.string(voice, at: "narration.voice", limit: StoryLimits.voiceLength, what: "a voice name") {
                if NarrationSettings.isWellFormedVoice(name) {
                    settings.voice = name
                } else {
                    checker.error("narration.voice", .voiceMalformed, ["voice": name], "\"\(name)\" is not a voice name (such as \"en\", \"en-gb\" or \"es\" for espeak-ng, or \"piper:en_US-joe-medium\" for a natural voice)")
                }
            }
        }
        if let rate = object["rate"] {
            settings.rate = checker.integer(rate, at: "narration.rate", range: StoryLimits.rate, unit: "words per minute") ?? settings.rate
        }
        if let pitch = object["pitch"] {
            settings.pitch = checker.integer(pitch, at: "narration.pitch", range: StoryLimits.pitch, unit: "pitch steps") ?? settings.pitch
        }
        return settings
    }

    static func describe(_ error: any Error) -> String {
        // swift-foundation's JSONDecoder puts no underlying error under `dataCorrupted` (the NSError
        // user-info lookup this replaced always found nothing), so its own description is all there is.
        if case DecodingError.dataCorrupted(let context) = error {
            return context.debugDescription
        }
        return String(describing: error)
    }
}

extension Quiz {
    static let knownFields: Set<String> = ["title", "questions"]

    /// Validates a quiz in the seed apps' format, `{"title": ..., "questions": [...]}`, or a bare single
    /// question `{"question": ..., "options": [...], "answer": ...}` as a one-question quiz.
    public static func load(json value: JSONValue) -> Validated<Quiz> {
        var checker = DocumentChecker()
        let quiz = load(json: value, at: "", checker: &checker)
        return Validated(value: checker.hasErrors ? nil : quiz, issues: checker.issues)
    }

    static func load(json value: JSONValue, at path: String, checker: inout DocumentChecker) -> Quiz? {
        guard let object = checker.object(value, at: path, what: "a quiz") else { return nil }
        if object["questions"] == nil, object["question"] != nil {
            return Question.load(object: object, at: path, checker: &checker).map { Quiz(questions: [$0]) }
        }
        checker.warnAboutUnknownFields(in: object, at: path, known: knownFields)
        let title = checker.optionalString(object["title"], at: DocumentChecker.path(path, "title"), limit: StoryLimits.titleLength, what: "a quiz title")
        let questionsPath = DocumentChecker.path(path, "questions")
        guard let questionsValue = object["questions"] else {
            checker.error(questionsPath, .questionsRequired, "the quiz needs a list of questions")
            return nil
        }
        guard case .array(let items) = questionsValue else {
            checker.error(questionsPath, .questionsWrongType, "expected a list of questions, found \(questionsValue.typeName)")
            return nil
        }
        guard StoryLimits.questionCount.contains(items.count) else {
            if items.isEmpty {
                checker.error(questionsPath, .noQuestions, "the quiz has no questions; add at least one")
            } else {
                checker.error(questionsPath, .tooManyQuestions, ["count": String(items.count), "limit": String(StoryLimits.questionCount.upperBound)], "the quiz has \(items.count) questions; the limit is \(StoryLimits.questionCount.upperBound)")
            }
            return nil
        }
        var questions: [Question] = []
        for (index, item) in items.enumerated() {
            let itemPath = DocumentChecker.path(questionsPath, index)
            guard let object = checker.object(item, at: itemPath, what: "a question") else { continue }
            if let question = Question.load(object: object, at: itemPath, checker: &checker) {
                questions.append(question)
            }
        }
        return questions.count == items.count ? Quiz(title: title, questions: questions) : nil
    }
}

extension Question {
    static let knownFields: Set<String> = ["question", "options", "answer", "time", "explanation", "picture"]

    static func load(object: [String: JSONValue], at path: String, checker: inout DocumentChecker) -> Question? {
        checker.warnAboutUnknownFields(in: object, at: path, known: knownFields)
        let text = checker.string(object["question"], at: DocumentChecker.path(path, "question"), limit: StoryLimits.questionLength, what: "the question text")
        let loadedOptions = loadOptions(object["options"], at: DocumentChecker.path(path, "options"), checker: &checker)
        let options = loadedOptions?.labels
        var picture: PictureReference?
        if let pictureValue = object["picture"], pictureValue != .null {
            picture = checker.picture(pictureValue, at: DocumentChecker.path(path, "picture"))
            if picture == nil { return nil }
        }
        var answer: Int?
        let answerPath = DocumentChecker.path(path, "answer")
        // No right answer chosen (absent, null or blank) is one problem with one code, wherever the options
        // stand: a quiz saved without its key would mark every child wrong.
        switch object["answer"] {
        case nil, .null?:
            checker.error(answerPath, .answerRequired, "the answer is required: the text of the right option")
        case .string(let raw)? where SentenceSplitter.collapsingWhitespace(raw).isEmpty:
            checker.error(answerPath, .answerRequired, "the answer is empty: it must be the text of the right option")
        case .string(let raw)?:
            let wanted = SentenceSplitter.collapsingWhitespace(raw)
            if let options {
                answer = options.firstIndex(of: wanted)
                if answer == nil {
                    let near = options.first { $0.lowercased() == wanted.lowercased() }
                    let hint = near.map { " (did you mean \"\($0)\"?)" } ?? ""
                    let code: ValidationCode = near == nil ? .answerNotAnOption : .answerNotAnOptionCase
                    var params = ["answer": raw]
                    if let near { params["suggestion"] = near }
                    checker.error(answerPath, code, params, "\"\(raw)\" is not one of the options \(DocumentChecker.quotedList(options))\(hint)")
                }
            }
        case let other?:
            checker.error(answerPath, .answerWrongType, "expected the text of the right option, found \(other.typeName)")
        }
        var timeLimit: Int?
        if let time = object["time"], time != .null {
            timeLimit = checker.integer(time, at: DocumentChecker.path(path, "time"), range: StoryLimits.timeLimit, unit: "seconds")
            if timeLimit == nil { return nil }
        }
        let explanation = checker.optionalString(object["explanation"], at: DocumentChecker.path(path, "explanation"), limit: StoryLimits.explanationLength, what: "the explanation")
        guard let text, let options, let answer else { return nil }
        return Question(text: text, options: options, answer: answer, timeLimit: timeLimit, explanation: explanation, picture: picture, optionPictures: loadedOptions?.pictures ?? [])
    }

    /// Options are text, or all pictures with labels: `{"label": "Owl", "picture": {"file": "owl.png"}}`.
    private static func loadOptions(_ value: JSONValue?, at path: String, checker: inout DocumentChecker) -> (labels: [String], pictures: [PictureReference?])? {
        guard let value else {
            checker.error(path, .optionsRequired, ["min": String(StoryLimits.optionCount.lowerBound), "max": String(StoryLimits.optionCount.upperBound)], "the options are required: a list of \(StoryLimits.optionCount.lowerBound) to \(StoryLimits.optionCount.upperBound) answers to choose from")
            return nil
        }
        guard case .array(let items) = value else {
            checker.error(path, .optionsWrongType, "expected a list of options, found \(value.typeName)")
            return nil
        }
        guard StoryLimits.optionCount.contains(items.count) else {
            if items.count < StoryLimits.optionCount.lowerBound {
                checker.error(path, .tooFewOptions, ["count": String(items.count), "min": String(StoryLimits.optionCount.lowerBound)], "needs at least \(StoryLimits.optionCount.lowerBound) options, found \(items.count)")
            } else {
                checker.error(path, .tooManyOptions, ["count": String(items.count), "max": String(StoryLimits.optionCount.upperBound)], "has \(items.count) options; the limit is \(StoryLimits.optionCount.upperBound)")
            }
            return nil
        }
        var options: [String] = []
        var pictures: [PictureReference?] = []
        var seen: [String: Int] = [:]
        var valid = true
        let pictureOptions = items.filter { if case .object = $0 { true } else { false } }.count
        if pictureOptions > 0, pictureOptions < items.count {
            checker.error(path, .optionsMixedPictures, ["pictures": String(pictureOptions), "count": String(items.count)], "either every option is a picture with a label, or none is (\(pictureOptions) of \(items.count) are pictures)")
            return nil
        }
        for (index, item) in items.enumerated() {
            let itemPath = DocumentChecker.path(path, index)
            var labelValue: JSONValue? = item
            var labelPath = itemPath
            if case .object(let object) = item {
                checker.warnAboutUnknownFields(in: object, at: itemPath, known: ["label", "picture"])
                labelValue = object["label"]
                labelPath = DocumentChecker.path(itemPath, "label")
                if labelValue == nil {
                    checker.error(labelPath, .optionLabelRequired, "a picture option needs a label: the words a screen reader says for it, shown in the results and the CSV")
                    valid = false
                    continue
                }
            }
            guard let option = checker.string(labelValue, at: labelPath, limit: StoryLimits.optionLength, what: "the option") else {
                valid = false
                continue
            }
            if case .object(let object) = item {
                guard let pictureValue = object["picture"] else {
                    checker.error(DocumentChecker.path(itemPath, "picture"), .optionPictureRequired, ["option": option], "the option \"\(option)\" has a label but no picture")
                    valid = false
                    continue
                }
                guard let picture = checker.picture(pictureValue, at: DocumentChecker.path(itemPath, "picture"), defaultAlt: option) else {
                    valid = false
                    continue
                }
                pictures.append(picture)
            }
            let key = option.lowercased()
            if let first = seen[key] {
                checker.error(itemPath, .optionDuplicate, ["option": option, "first": String(first + 1)], "\"\(option)\" is the same as option \(first + 1); options must be different")
                valid = false
            } else {
                seen[key] = index
            }
            options.append(option)
        }
        return valid ? (options, pictures) : nil
    }
}

extension Story {
    /// The story in the file format, as stored with a room so it can be restored exactly.
    public func jsonValue() -> JSONValue {
        var root: [String: JSONValue] = [
            "title": .string(title),
            "text": .array(sentences.enumerated().map { index, sentence in
                guard let picture = picture(forSentence: index) else { return .string(sentence) }
                return .object(["text": .string(sentence), "picture": picture.jsonValue()])
            }),
            "narration": .object([
                "voice": .string(narration.voice),
                "rate": .number(Double(narration.rate)),
                "pitch": .number(Double(narration.pitch)),
            ]),
        ]
        var quizObject: [String: JSONValue] = [
            "questions": .array(quiz.questions.map { question in
                var object: [String: JSONValue] = [
                    "question": .string(question.text),
                    "options": .array(question.options.enumerated().map { index, option in
                        guard question.optionPictures.indices.contains(index), let picture = question.optionPictures[index] else { return .string(option) }
                        return .object(["label": .string(option), "picture": picture.jsonValue(includeAlt: picture.alt != option)])
                    }),
                    "answer": .string(question.options[question.answer]),
                ]
                if let picture = question.picture { object["picture"] = picture.jsonValue() }
                if let time = question.timeLimit { object["time"] = .number(Double(time)) }
                if let explanation = question.explanation { object["explanation"] = .string(explanation) }
                return .object(object)
            }),
        ]
        if let title = quiz.title { quizObject["title"] = .string(title) }
        root["quiz"] = .object(quizObject)
        return .object(root)
    }
}
