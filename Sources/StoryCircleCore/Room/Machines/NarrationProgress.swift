/// The story's narration as far as it is synthesised: one of the machines `RoomState` is composed of. Its
/// rules: each preparation has a new id, and the narrator's reports about any other are not this one's
/// (`isCurrent`); a plan that streams in grows one sentence at a time, in order, never past the story; a
/// whole plan that ends a stream adds only what the stream had not brought, and keeps the first notice.
struct NarrationProgress: Sendable {
    /// The id of the preparation under way (or the last one).
    private(set) var preparation = 0
    private(set) var plan: NarrationPlan?
    /// The plan still grows: sentences arrive one by one as they are synthesised, while the first play.
    private(set) var isStreaming = false

    /// Whether a report of preparation `id` is about this one.
    func isCurrent(_ id: Int) -> Bool { id == preparation }

    var sentenceCount: Int { plan?.sentences.count ?? 0 }

    /// How long sentence `index` plays (0 when there is no plan).
    func duration(of index: Int) -> Int { plan?.sentences[index].durationMs ?? 0 }

    /// A new preparation starts: returns its id.
    mutating func begin() -> Int {
        preparation += 1
        discard()
        return preparation
    }

    /// What was synthesised is no longer wanted (the narrator starts over, or failed).
    mutating func discard() {
        plan = nil
        isStreaming = false
    }

    /// The narration is over (the story ended, or the room did): reports still coming are not wanted.
    mutating func stop() {
        preparation += 1
        isStreaming = false
    }

    /// The whole plan arrived at once.
    mutating func adopt(_ whole: NarrationPlan) {
        plan = whole
        isStreaming = false
    }

    /// The first sentence arrived: the story can start while the rest is synthesised.
    mutating func startStreaming(_ first: NarratedSentence, notice: NarrationNotice?) {
        plan = NarrationPlan(sentences: [first], notice: notice)
        isStreaming = true
    }

    /// The next sentence of a streamed plan arrived; false (and nothing changes) unless it is the next one
    /// of a story of `storyLength` sentences.
    mutating func append(_ sentence: NarratedSentence, storyLength: Int) -> Bool {
        guard isStreaming, var grown = plan, sentence.index == grown.sentences.count, sentence.index < storyLength else { return false }
        plan = nil
        grown.sentences.append(sentence)
        plan = grown
        return true
    }

    /// The streamed plan is whole: returns the sentences the stream had not brought (a narrator may report
    /// only some; each is sentence number its index + 1 of the whole) and a notice known only now.
    mutating func complete(with whole: NarrationPlan) -> (added: ArraySlice<NarratedSentence>, lateNotice: NarrationNotice?) {
        var merged = plan ?? whole
        let added = whole.sentences.dropFirst(merged.sentences.count)
        merged.sentences += added
        merged.questionAudio = whole.questionAudio
        var lateNotice: NarrationNotice?
        if merged.notice == nil, let notice = whole.notice {
            merged.notice = notice
            lateNotice = notice
        }
        plan = merged
        isStreaming = false
        return (added, lateNotice)
    }
}
