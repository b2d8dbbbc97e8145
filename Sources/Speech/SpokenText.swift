/// How a text is to be spoken: an espeak-ng voice (which picks the language), words per minute, pitch.
public struct Voice: Sendable, Hashable {
    public var name: String
    public var rate: Int
    public var pitch: Int

    public init(name: String, rate: Int = 150, pitch: Int = 50) {
        self.name = name
        self.rate = rate
        self.pitch = pitch
    }
}

/// Synthesised speech: 16-bit mono PCM and when each word starts.
public struct SpokenText: Sendable, Equatable {
    /// A word: when it starts (ms from the beginning) and where it is in the text, in UTF-16 code units
    /// (how JavaScript counts, so a page can highlight it directly).
    public struct Word: Sendable, Equatable {
        public var startMs: Int
        public var offset: Int
        public var length: Int
    }

    public var samples: [Int16]
    public var sampleRate: Int
    public var words: [Word]

    public var durationMs: Int {
        sampleRate == 0 ? 0 : samples.count * 1_000 / sampleRate
    }
}

/// An espeak-ng voice as a story names it: its language code ("en-us"), and espeak-ng's name for it.
public struct EspeakVoice: Sendable, Equatable {
    public var language: String
    public var name: String

    public init(language: String, name: String) {
        self.language = language
        self.name = name
    }
}
