/// A picture as a screen shows it: its id (the page fetches `/pictures/<id>?room=<code>`, adding
/// `&size=phone` on a phone) and the words a screen reader says for it.
public struct PictureView: Sendable, Equatable, Codable {
    public var id: String
    public var alt: String

    public init(id: String, alt: String) {
        self.id = id
        self.alt = alt
    }

    /// The view of a stored picture; nil for one that is not stored (a room never has those).
    public init?(_ reference: PictureReference?) {
        guard let reference, let id = reference.storedID else { return nil }
        self.init(id: id, alt: reference.alt)
    }
}

/// The picture shown while sentence `sentence` is read.
public struct SentencePictureView: Sendable, Equatable, Codable {
    public var sentence: Int
    public var id: String
    public var alt: String

    public init(sentence: Int, picture: PictureView) {
        self.sentence = sentence
        self.id = picture.id
        self.alt = picture.alt
    }
}
