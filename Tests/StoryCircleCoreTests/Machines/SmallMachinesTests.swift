import Testing
@testable import StoryCircleCore

/// The room's smaller machines alone: who each connection is, class picking, the narration's progress and
/// what the screens still need.
@Suite("Room machines")
struct SmallMachinesTests {
    private func sentence(_ index: Int) -> NarratedSentence {
        NarratedSentence(index: index, text: "Sentence \(index).", durationMs: 1_000 + index, words: [], audio: "/audio/\(index).mp3")
    }

    @Test func theAudienceListsRecipientsSortedByRole() {
        var audience = Audience()
        audience.admit(ConnectionID(3), as: .teacher)
        audience.admit(ConnectionID(1), as: .child(playerID: "p1"))
        audience.admit(ConnectionID(2), as: .dashboard)
        audience.admit(ConnectionID(4), as: .child(playerID: "p2"))
        #expect(audience.all == [1, 2, 3, 4].map(ConnectionID.init))
        #expect(audience.screens == [2, 3].map(ConnectionID.init))
        #expect(audience.teachers == [ConnectionID(3)])
        #expect(audience.byRole([.child, .teacher]).map(\.connections) == [[1, 4].map(ConnectionID.init), [ConnectionID(3)]])
        let removed = audience.remove(ConnectionID(1))
        #expect(removed == .child(playerID: "p1"))
        #expect(audience[ConnectionID(1)] == nil && audience.count == 3)
    }

    @Test func classPickingTakesOnlyANewerReadOfItsOwnClass() {
        let ana = ClassMember(id: "m1", name: "Ana", avatar: "owl"), ben = ClassMember(id: "m2", name: "Ben", avatar: "fox")
        var picking = ClassPicking(roster: ClassRoster(id: "c1", name: "Owls", members: [ana, ben], version: 2))
        let older = picking.follow(ClassRoster(id: "c1", name: "Owls", members: [], version: 1), joined: { _ in false })
        let another = picking.follow(ClassRoster(id: "c2", name: "Foxes", members: [], version: 9), joined: { _ in false })
        let newer = picking.follow(ClassRoster(id: "c1", name: "Owls!", members: [ben], version: 3), joined: { $0.id == "m1" })
        #expect(!older, "an older read")
        #expect(!another, "another class")
        #expect(newer)
        #expect(picking.roster?.members.map(\.id) == ["m2", "m1"], "a member who joined the room stays")
        #expect(picking.roster?.name == "Owls!")
    }

    @Test func pickersComeAndGo() {
        var picking = ClassPicking(roster: nil)
        picking.add(ConnectionID(2))
        picking.add(ConnectionID(1))
        #expect(picking.isPicking(ConnectionID(1)) && picking.connections == [1, 2].map(ConnectionID.init))
        picking.remove(ConnectionID(1))
        let refused = picking.removeAll()
        #expect(refused == [ConnectionID(2)])
        #expect(picking.isEmpty)
    }

    @Test func aPreparationIgnoresReportsOfAnother() {
        var narration = NarrationProgress()
        let first = narration.begin()
        let second = narration.begin()
        #expect(!narration.isCurrent(first) && narration.isCurrent(second))
        narration.stop()
        #expect(!narration.isCurrent(second), "once stopped, no report is wanted")
    }

    @Test func aStreamGrowsInOrderAndNeverPastTheStory() {
        var narration = NarrationProgress()
        _ = narration.begin()
        narration.startStreaming(sentence(0), notice: nil)
        #expect(narration.isStreaming && narration.sentenceCount == 1)
        let outOfOrder = narration.append(sentence(2), storyLength: 3)
        let second = narration.append(sentence(1), storyLength: 3)
        let third = narration.append(sentence(2), storyLength: 3)
        let pastTheStory = narration.append(sentence(3), storyLength: 3)
        #expect(!outOfOrder && second && third)
        #expect(!pastTheStory, "past the story")
        #expect(narration.duration(of: 2) == 1_002)
    }

    @Test func aWholePlanCompletesAStreamWithWhatItLacked() {
        var narration = NarrationProgress()
        _ = narration.begin()
        narration.startStreaming(sentence(0), notice: nil)
        let whole = NarrationPlan(sentences: [sentence(0), sentence(1), sentence(2)], questionAudio: ["/q0.mp3"], notice: .naturalVoiceQuestionsFallback)
        let (added, lateNotice) = narration.complete(with: whole)
        #expect(added.map(\.index) == [1, 2] && added.indices == 1..<3)
        #expect(lateNotice == .naturalVoiceQuestionsFallback)
        #expect(narration.plan == whole && !narration.isStreaming)
    }

    @Test func anEarlierNoticeIsKept() {
        var narration = NarrationProgress()
        _ = narration.begin()
        narration.startStreaming(sentence(0), notice: .naturalVoiceFallback)
        let (_, lateNotice) = narration.complete(with: NarrationPlan(sentences: [sentence(0)], notice: .naturalVoiceQuestionsFallback))
        #expect(lateNotice == nil && narration.plan?.notice == .naturalVoiceFallback)
    }

    @Test func screensGetOneFlushForManyChanges() {
        var screens = ScreenRefresh()
        let first = screens.markDirty(), later = screens.markDirty()
        #expect(first, "the first change schedules a flush")
        #expect(!later, "later ones join it")
        let due = screens.flush(), again = screens.flush()
        #expect(due)
        #expect(!again, "nothing new: nothing to send")
        let next = screens.markDirty()
        screens.sentEverything()
        let afterEverything = screens.flush()
        #expect(next)
        #expect(!afterEverything, "everything was sent meanwhile")
    }
}
