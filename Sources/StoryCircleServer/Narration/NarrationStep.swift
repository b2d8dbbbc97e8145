import StoryCircleCore

/// What a narrator reports while it prepares a story, before the whole plan.
public enum NarrationStep: Sendable, Equatable {
    /// `ready` of `total` clips are done.
    case progress(ready: Int, total: Int)
    /// A sentence is ready (in order, from the first): the story can start before the rest are.
    /// `notice` is the teacher's, the same on every sentence of one reading.
    case sentence(NarratedSentence, notice: NarrationNotice?)
    /// Everything reported so far is dropped: the story is read again from its first sentence by another
    /// voice.
    case restarted
}
