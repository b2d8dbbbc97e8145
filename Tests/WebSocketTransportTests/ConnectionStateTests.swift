import Testing
import WebSocketTransport

/// Every rule of a WebSocket's life that depends on time (keepalive, the hello timeout, the flood limit), on
/// a clock the test moves in milliseconds: no socket, no thread, no waiting. The shell's half (that a ping
/// frame goes out, that a refusal closes) is in `KeepaliveTests` and `ConnectionLimitTests`.
@Suite("Connection state")
struct ConnectionStateTests {
    /// The defaults: ping after 20 s, hang up after 60 s, hello within 10 s, 10 messages a second, 40 at once.
    let policy = ConnectionPolicy()

    func opened(at time: Milliseconds = 0, _ policy: ConnectionPolicy? = nil) -> ConnectionState {
        ConnectionState.opened(at: time, policy: policy ?? self.policy).0
    }

    /// A whole one-frame text message of a few bytes.
    func message(_ state: inout ConnectionState, at time: Milliseconds, _ policy: ConnectionPolicy? = nil) -> ConnectionAction {
        state.frameReceived(at: time, isBinary: false, messageBytes: 16, completesMessage: true, policy: policy ?? self.policy)
    }

    // MARK: The policy

    @Test func thePolicyCountsTheConfigurationInMilliseconds() {
        var configuration = WebSocketServerConfiguration()
        configuration.pingAfterIdleSeconds = 20
        configuration.hangUpAfterIdleSeconds = 60
        configuration.helloTimeoutSeconds = 2.5
        configuration.messagesPerSecond = 3
        configuration.messageBurst = 7
        configuration.maxMessageBytes = 100
        let policy = ConnectionPolicy(configuration)
        #expect(policy.pingAfterIdle == 20_000)
        #expect(policy.hangUpAfterIdle == 60_000)
        #expect(policy.helloTimeout == 2_500)
        #expect(policy.helloTimeoutSeconds == 2.5)
        #expect(policy.messagesPerSecond == 3 && policy.messageBurst == 7 && policy.maxMessageBytes == 100)
        // Never a timeout before its time; 0 (or less) turns each off.
        #expect(ConnectionPolicy(helloTimeoutSeconds: 0.0001).helloTimeout == 1)
        #expect(ConnectionPolicy(helloTimeoutSeconds: 0).helloTimeout == 0)
        #expect(ConnectionPolicy(pingAfterIdleSeconds: -1, hangUpAfterIdleSeconds: -5).pingAfterIdle == 0)
    }

    @Test func theSweepRunsFourTimesPerShortestIntervalWithinATenthOfASecondAndASecond() {
        #expect(ConnectionPolicy(pingAfterIdleSeconds: 20, hangUpAfterIdleSeconds: 60).keepaliveSweepInterval == 1_000)
        #expect(ConnectionPolicy(pingAfterIdleSeconds: 1, hangUpAfterIdleSeconds: 2).keepaliveSweepInterval == 250)
        #expect(ConnectionPolicy(pingAfterIdleSeconds: 0, hangUpAfterIdleSeconds: 2).keepaliveSweepInterval == 500)
        #expect(ConnectionPolicy(pingAfterIdleSeconds: 3, hangUpAfterIdleSeconds: 0).keepaliveSweepInterval == 750)
        var policy = ConnectionPolicy()
        policy.pingAfterIdle = 200
        #expect(policy.keepaliveSweepInterval == 100)
        #expect(ConnectionPolicy(pingAfterIdleSeconds: 0, hangUpAfterIdleSeconds: 0).keepaliveSweepInterval == nil, "keepalive off: no sweep")
    }

    // MARK: Keepalive

    @Test func aSilentConnectionIsPingedOnceThenHungUpOn() {
        var state = opened(at: 5_000)
        #expect(state.tick(at: 24_999, policy: policy) == .none)
        #expect(state.tick(at: 25_000, policy: policy) == .ping, "after pingAfterIdle of silence, not later")
        #expect(state.tick(at: 26_000, policy: policy) == .none, "one ping per silence")
        #expect(state.tick(at: 64_999, policy: policy) == .none)
        #expect(state.tick(at: 65_000, policy: policy) == .hangUp, "hangUpAfterIdle after the last frame, not after the ping")
        #expect(state.closing)
        #expect(state.tick(at: 200_000, policy: policy) == .none, "hung up once")
    }

    @Test func aSweepThatComesLateHangsUpWithoutPingingFirst() {
        var state = opened()
        #expect(state.tick(at: 90_000, policy: policy) == .hangUp)
    }

    @Test func aPongResetsIdlenessAndAllowsTheNextPing() {
        var state = opened()
        #expect(state.tick(at: 20_000, policy: policy) == .ping)
        state.pongReceived(at: 20_050)
        #expect(state.tick(at: 40_049, policy: policy) == .none)
        #expect(state.tick(at: 40_050, policy: policy) == .ping, "the next silence is pinged too")
        #expect(state.tick(at: 80_049, policy: policy) == .none, "the hang-up counts from the pong")
        #expect(state.tick(at: 80_050, policy: policy) == .hangUp)
    }

    @Test func anyFrameCountsAsLifeEvenPartOfAMessage() {
        var state = opened()
        #expect(state.tick(at: 20_000, policy: policy) == .ping)
        #expect(message(&state, at: 30_000) == .deliver(endsHelloTimeout: true))
        #expect(state.tick(at: 49_999, policy: policy) == .none)
        #expect(state.tick(at: 50_000, policy: policy) == .ping)
        // The first fragment of a message whose end never comes.
        #expect(state.frameReceived(at: 55_000, isBinary: false, messageBytes: 100, completesMessage: false, policy: policy) == .none)
        #expect(state.tick(at: 74_999, policy: policy) == .none)
        #expect(state.tick(at: 75_000, policy: policy) == .ping)
        #expect(state.tick(at: 114_999, policy: policy) == .none)
        #expect(state.tick(at: 115_000, policy: policy) == .hangUp)
    }

    @Test func eachHalfOfKeepaliveCanBeOffAlone() {
        let pingOnly = ConnectionPolicy(pingAfterIdleSeconds: 20, hangUpAfterIdleSeconds: 0)
        var pinged = opened(pingOnly)
        #expect(pinged.tick(at: 20_000, policy: pingOnly) == .ping)
        #expect(pinged.tick(at: 10_000_000, policy: pingOnly) == .none, "never hung up on")

        let hangUpOnly = ConnectionPolicy(pingAfterIdleSeconds: 0, hangUpAfterIdleSeconds: 60)
        var silent = opened(hangUpOnly)
        #expect(silent.tick(at: 59_999, policy: hangUpOnly) == .none, "never pinged")
        #expect(silent.tick(at: 60_000, policy: hangUpOnly) == .hangUp)

        let off = ConnectionPolicy(pingAfterIdleSeconds: 0, hangUpAfterIdleSeconds: 0)
        var forever = opened(off)
        #expect(forever.tick(at: 10_000_000, policy: off) == .none)
    }

    @Test func aTimeBeforeTheLastFrameIsNoIdleness() {
        // The sweep reads its time once for every connection; a frame's time is never later than the next
        // sweep's on a monotonic clock, but nothing here may wrap if it were.
        var state = opened(at: 50_000)
        state.pongReceived(at: 60_000)
        #expect(state.tick(at: 0, policy: policy) == .none)
        #expect(state.lastSeen == 60_000)
    }

    // MARK: The hello timeout

    @Test func openingArmsTheHelloTimerAtTheTimeout() {
        #expect(ConnectionState.opened(at: 1_000, policy: policy).1 == .checkHello(at: 11_000))
        let off = ConnectionPolicy(helloTimeoutSeconds: 0)
        #expect(ConnectionState.opened(at: 1_000, policy: off).1 == .none)
    }

    @Test func aConnectionThatSaysNothingIsRefusedAtTheHelloTimeout() {
        var state = opened(at: 1_000)
        #expect(state.helloTimerFired(at: 11_000, policy: policy) == .refuse(.helloTimeout(seconds: 10)))
        #expect(state.closing)
        #expect(message(&state, at: 11_001) == .none, "nothing counts after the refusal")
        #expect(state.helloTimerFired(at: 12_000, policy: policy) == .none, "refused once")
    }

    @Test func aHelloTimerThatComesEarlyIsArmedAgainForTheDeadline() {
        var state = opened(at: 1_000)
        #expect(state.helloTimerFired(at: 10_999, policy: policy) == .checkHello(at: 11_000))
        #expect(!state.closing)
        #expect(state.helloTimerFired(at: 11_000, policy: policy) == .refuse(.helloTimeout(seconds: 10)))
    }

    @Test func aFirstMessageEndsTheHelloTimeoutOnce() {
        var state = opened()
        #expect(message(&state, at: 9_999) == .deliver(endsHelloTimeout: true), "the shell cancels the timer")
        #expect(state.greeted)
        #expect(message(&state, at: 10_000) == .deliver(endsHelloTimeout: false))
        #expect(state.helloTimerFired(at: 10_000, policy: policy) == .none, "a timer the cancel left does nothing")

        let off = ConnectionPolicy(helloTimeoutSeconds: 0)
        var untimed = opened(off)
        #expect(message(&untimed, at: 5, off) == .deliver(endsHelloTimeout: false), "no timer to cancel")
        #expect(untimed.helloTimerFired(at: 1_000_000, policy: off) == .none)
    }

    @Test func pongsAndPartsOfAMessageAreNoHello() {
        var state = opened()
        state.pongReceived(at: 1_000)
        #expect(state.frameReceived(at: 2_000, isBinary: false, messageBytes: 10, completesMessage: false, policy: policy) == .none)
        #expect(!state.greeted)
        #expect(state.helloTimerFired(at: 10_000, policy: policy) == .refuse(.helloTimeout(seconds: 10)))
    }

    @Test func aFirstMessageRefusedIsNoHello() {
        var state = opened()
        #expect(state.frameReceived(at: 10, isBinary: true, messageBytes: 10, completesMessage: true, policy: policy) == .refuse(.binaryNotSupported))
        #expect(!state.greeted)
        #expect(state.helloTimerFired(at: 10_000, policy: policy) == .none, "refused already: no second refusal")
    }

    // MARK: The flood limit

    @Test func aBurstIsAllowedAndTheMessageBeyondItIsRefused() {
        var state = opened()
        for index in 0..<40 {
            #expect(message(&state, at: 1_000) == .deliver(endsHelloTimeout: index == 0))
        }
        #expect(message(&state, at: 1_000) == .refuse(.tooManyMessages))
        #expect(state.closing)
        #expect(message(&state, at: 100_000) == .none, "refused for good, however long it waits")
    }

    @Test func theBucketRefillsAtTheRate() {
        func drained() -> ConnectionState {
            var state = opened()
            for _ in 0..<40 { _ = message(&state, at: 0) }
            return state
        }
        var early = drained()
        #expect(message(&early, at: 99) == .refuse(.tooManyMessages), "0.99 of a token after 99 ms at 10 a second")
        var onTime = drained()
        #expect(message(&onTime, at: 100) == .deliver(endsHelloTimeout: false), "one token after 100 ms")
        #expect(message(&onTime, at: 100) == .refuse(.tooManyMessages), "and only one")
        var later = drained()
        for _ in 0..<5 { #expect(message(&later, at: 500) == .deliver(endsHelloTimeout: false)) }
        #expect(message(&later, at: 500) == .refuse(.tooManyMessages))
    }

    @Test func theBucketNeverHoldsMoreThanTheBurst() {
        var state = opened()
        for _ in 0..<40 { #expect(message(&state, at: 3_600_000) != .refuse(.tooManyMessages)) }
        #expect(message(&state, at: 3_600_000) == .refuse(.tooManyMessages), "an hour's silence saves no more than the burst")
    }

    @Test func theSustainedRateIsAllowedForeverAndAnythingFasterRunsOut() {
        var steady = opened()
        for time in stride(from: Milliseconds(0), to: 600_000, by: 100) {
            guard message(&steady, at: time) != .refuse(.tooManyMessages) else {
                Issue.record("refused at \(time) ms at exactly the rate")
                return
            }
        }
        // 11 a second: a tenth of a token lost per message, so the 40 of the burst last about 390 messages.
        var fast = opened()
        var delivered = 0
        var time: Milliseconds = 0
        while message(&fast, at: time) != .refuse(.tooManyMessages) {
            delivered += 1
            time += 90
        }
        #expect((385...395).contains(delivered), "\(delivered)")
    }

    @Test func onlyCompleteMessagesTakeTokens() {
        var state = opened()
        for _ in 0..<1_000 {
            #expect(state.frameReceived(at: 0, isBinary: false, messageBytes: 100, completesMessage: false, policy: policy) == .none)
        }
        #expect(state.tokens == 40)
        state.pongReceived(at: 0)
        #expect(state.tokens == 40, "nor do pongs")
    }

    // MARK: What a frame may be

    @Test func aMessageLargerThanTheLimitIsRefusedAtItsFirstFrame() {
        let policy = ConnectionPolicy(maxMessageBytes: 100)
        var exact = opened(policy)
        #expect(exact.frameReceived(at: 0, isBinary: false, messageBytes: 100, completesMessage: true, policy: policy) == .deliver(endsHelloTimeout: true))
        var large = opened(policy)
        // What lws says is still to come counts: the refusal does not wait for the bytes.
        #expect(large.frameReceived(at: 0, isBinary: false, messageBytes: 101, completesMessage: false, policy: policy) == .refuse(.messageTooBig(limit: 100)))
        #expect(large.closing)
    }

    @Test func binaryFramesAreRefused() {
        var state = opened()
        #expect(state.frameReceived(at: 0, isBinary: true, messageBytes: 1, completesMessage: false, policy: policy) == .refuse(.binaryNotSupported))
    }

    // MARK: Closing

    @Test func aConnectionTheShellClosesHasNoMoreRulesToApply() {
        var state = opened()
        state.close()
        #expect(message(&state, at: 1) == .none)
        state.pongReceived(at: 2)
        #expect(state.lastSeen == 0, "nothing from the peer counts")
        #expect(state.tick(at: 1_000_000, policy: policy) == .none)
        #expect(state.helloTimerFired(at: 1_000_000, policy: policy) == .none)
    }

    @Test func aConnectionThatIsNoWebSocketIsInert() {
        var state = ConnectionState.inert
        #expect(state.tick(at: 1_000_000, policy: policy) == .none)
        #expect(state.helloTimerFired(at: 1_000_000, policy: policy) == .none)
        #expect(message(&state, at: 1_000_000) == .none)
    }
}
