import Testing
@testable import StoryCircleCore

/// The test support's own guarantee: waiting for a message that never comes fails, it does not hang.
struct MessageLogTests {
    @Test func aMessageThatNeverComesFailsTheWaitInsteadOfHangingIt() async {
        let log = MessageLog()
        log.record(.storage(StoreHealthStatus(ok: true)), to: [7])
        await withKnownIssue("the watchdog records the missing message") {
            let standIn = await log.next("welcome", to: 7, timeout: .milliseconds(50))
            #expect(standIn.type == "storage")
        }
    }

    @Test func aMessageThatComesIsReturnedWhetherItCameBeforeOrDuringTheWait() async {
        let log = MessageLog()
        let before = ServerMessage.storage(StoreHealthStatus(ok: true))
        log.record(before, to: [7])
        #expect(await log.next("storage", to: 7, timeout: .seconds(20)) == before)
        let waiting = Task { await log.next("storage", to: 7, timeout: .seconds(20)) }
        let during = ServerMessage.storage(StoreHealthStatus(ok: false, message: "disk full"))
        log.record(during, to: [7])
        #expect(await waiting.value == during)
    }
}
