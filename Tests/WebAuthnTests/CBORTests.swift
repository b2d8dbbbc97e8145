import Testing
import WebAuthn

/// CBOR through libcbor: RFC 8949's examples, round trips, every refusal, and mutated inputs that must be
/// refused or read, never crash.
struct CBORTests {
    private func decoded(_ bytes: [UInt8]) -> Result<CBOR, CBORError> {
        Result { () throws(CBORError) in try CBOR.decode(bytes) }
    }

    @Test func rfc8949ExamplesDecode() throws {
        #expect(try CBOR.decode([0x00]) == CBOR(0))
        #expect(try CBOR.decode([0x19, 0x03, 0xE8]) == CBOR(1000))
        #expect(try CBOR.decode([0x39, 0x03, 0xE7]) == CBOR(-1000))
        #expect(try CBOR.decode([0x1B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .unsigned(.max))
        #expect(try CBOR.decode([0x83, 0x01, 0x02, 0x03]) == .array([CBOR(1), CBOR(2), CBOR(3)]))
        #expect(try CBOR.decode([0xA2, 0x01, 0x02, 0x03, 0x04]) == .map([CBORPair(CBOR(1), CBOR(2)), CBORPair(CBOR(3), CBOR(4))]))
        #expect(try CBOR.decode([0x64, 0x49, 0x45, 0x54, 0x46]) == .text("IETF"))
        #expect(try CBOR.decode([0x44, 0x01, 0x02, 0x03, 0x04]) == .bytes([1, 2, 3, 4]))
        #expect(try CBOR.decode([0xF5]) == .bool(true))
        #expect(try CBOR.decode([0xF6]) == .null)
        #expect(try CBOR.decode([0xF7]) == .undefined)
    }

    @Test func valuesRoundTripInTheirShortestForm() throws {
        let value = CBOR.map([
            CBORPair(.text("fmt"), .text("packed")), CBORPair(CBOR(-257), .bytes([])), CBORPair(CBOR(24), .array([.null, .bool(false), CBOR(-25)])),
            CBORPair(.text(""), .array([.undefined, .bytes([0xA0])])), CBORPair(CBOR(70_000), CBOR(5_000_000_000)),
        ])
        let bytes = try #require(value.encoded())
        #expect(try CBOR.decode(bytes) == value)
        #expect(CBOR(1000).encoded() == [0x19, 0x03, 0xE8])
        #expect(CBOR(-7).encoded() == [0x26])
        #expect(CBOR(-257).encoded() == [0x39, 0x01, 0x00])
    }

    @Test func whatIsNotAcceptableCBORIsRefused() {
        #expect(decoded([]) == .failure(.truncated))
        #expect(decoded([0x83, 0x01]) == .failure(.truncated))
        #expect(decoded([0x45, 0x01]) == .failure(.truncated))
        #expect(decoded([0x01, 0x02]) == .failure(.trailingBytes))
        #expect(decoded([0x9F, 0x01, 0xFF]) == .failure(.indefiniteLength))
        #expect(decoded([0x5F, 0x41, 0x01, 0xFF]) == .failure(.indefiniteLength))
        #expect(decoded([0xBF, 0xFF]) == .failure(.indefiniteLength))
        #expect(decoded([0xA2, 0x01, 0x02, 0x01, 0x03]) == .failure(.duplicateKey))
        // libcbor checks UTF-8 itself.
        #expect(decoded([0x62, 0xFF, 0xFE]) == .failure(.malformed))
        #expect(decoded([0x1C]) == .failure(.malformed))
        #expect(decoded([0x81] + [UInt8](repeating: 0x81, count: 20) + [0x00]) == .failure(.tooDeep))
        #expect(decoded([UInt8](repeating: 0xA1, count: 40) + [0x00]) == .failure(.tooDeep))
        #expect(Result { () throws(CBORError) in try CBOR.decode([0x00, 0x00], maxBytes: 1) } == .failure(.tooLarge))
    }

    /// Tags (forbidden in CTAP2's canonical CBOR) and floats (never in WebAuthn) are refused wherever they
    /// are. A tag of 15 written in five bytes is what the fuzzer found: read as a map key, libcbor wrote it
    /// back in one byte (0xCF), which libcbor itself then refuses to read.
    @Test func tagsAndFloatsAreRefused() {
        #expect(decoded([0xC1, 0x1A, 0x51, 0x4B, 0x67, 0xB0]) == .failure(.unsupportedItem))
        #expect(decoded([0xD8, 0x18, 0x41, 0xA0]) == .failure(.unsupportedItem))
        #expect(decoded([0xA4, 0x01, 0xF7, 0xDA, 0x00, 0x00, 0x00, 0x0F, 0x00, 0x2B, 0x00, 0x00, 0x03, 0x81, 0xF7]) == .failure(.unsupportedItem))
        #expect(decoded([0xFB, 0x3F, 0xF1, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9A]) == .failure(.unsupportedItem))
        #expect(decoded([0xF9, 0x7E, 0x00]) == .failure(.unsupportedItem))
        #expect(decoded([0xA1, 0x03, 0xFA, 0x7F, 0xC0, 0x00, 0x00]) == .failure(.unsupportedItem))
        // libcbor's own decoder refuses tags 6…20 in the head byte before any callback sees them.
        #expect(decoded([0x82, 0x01, 0xC6, 0x00]) == .failure(.malformed))
    }

    /// Every value that decodes encodes to bytes that decode to it and encode the same again (what the
    /// fuzz target asserts), on a seeded run of short inputs made of heads and arguments that matter.
    @Test func whateverDecodesRoundTrips() throws {
        let alphabet: [UInt8] = [0x00, 0x01, 0x03, 0x0F, 0x18, 0x20, 0x2B, 0x41, 0x61, 0x81, 0x82, 0xA1, 0xC1, 0xD8, 0xF4, 0xF6, 0xF7, 0xF9, 0xFB]
        var random = SplitMix(seed: 0xCB0A)
        var read = 0
        for _ in 0..<200_000 {
            let bytes = (0..<Int(random.next() % 8 + 1)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            guard let value = try? CBOR.decode(bytes) else { continue }
            read += 1
            let once = try #require(value.encoded())
            #expect(try CBOR.decode(once) == value)
            #expect(try CBOR.decode(once).encoded() == once)
        }
        #expect(read > 1_000)
    }

    /// Declared lengths far beyond the input (2^32 items, 2^63 bytes) are refused before libcbor
    /// reserves anything for them.
    @Test func hugeDeclaredLengthsAreRefusedWithoutAllocating() {
        #expect(decoded([0x9B, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00]) == .failure(.truncated))
        // Counts of 2^63 and more (negative as a C size_t seen from Swift), found by the mutation test.
        #expect(decoded([0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .failure(.truncated))
        #expect(decoded([0xBB, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]) == .failure(.truncated))
        #expect(decoded([0x9A, 0x10, 0x00, 0x00, 0x00, 0x00]) == .failure(.truncated))
        #expect(decoded([0xBB, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .failure(.truncated))
        #expect(decoded([0x5B, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]) == .failure(.truncated))
        #expect(decoded([0x7B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]) == .failure(.truncated))
    }

    /// libFuzzer's mutations in miniature, on a seeded generator: every prefix and thousands of mutations
    /// of real registrations and assertions go through the parsers and the verifier; each is refused with
    /// a reason or read, and nothing crashes (a crash fails the whole test run).
    @Test(arguments: COSEAlgorithm.allCases)
    func truncatedAndMutatedResponsesNeverCrash(algorithm: COSEAlgorithm) {
        let authenticator = TestAuthenticator(algorithm)
        let challenge = ChallengeBook.randomChallenge()
        let registration = authenticator.register(challenge: challenge, format: "packed")
        let assertion = authenticator.assert(challenge: challenge, signCount: 1)
        let rp = TestAuthenticator.relyingParty
        var random = SplitMix(seed: UInt64(bitPattern: Int64(algorithm.rawValue)))
        var accepted = 0
        var refused: [String: Int] = [:]
        func attempt(_ object: [UInt8]) {
            _ = try? CBOR.decode(object)
            do {
                _ = try rp.verifyRegistration(clientDataJSON: registration.clientDataJSON, attestationObject: object, challenge: challenge)
                accepted += 1
            } catch {
                refused[error.code, default: 0] += 1
            }
        }
        for length in 0..<registration.attestationObject.count {
            attempt(Array(registration.attestationObject.prefix(length)))
        }
        for _ in 0..<3_000 {
            attempt(random.mutate(registration.attestationObject))
            var data = random.mutate(assertion.authenticatorData)
            if random.next() % 4 == 0 { data = Array(data.prefix(Int(random.next() % UInt64(data.count + 1)))) }
            _ = try? rp.verifyAssertion(
                clientDataJSON: assertion.clientDataJSON, authenticatorData: data, signature: assertion.signature, challenge: challenge,
                publicKey: random.mutate(authenticator.key.coseBytes), storedSignCount: 0)
            _ = try? PublicKey(cose: random.mutate(authenticator.key.coseBytes))
        }
        for _ in 0..<2_000 {
            attempt((0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
        #expect(accepted < 3_000)
        #expect(refused["malformed_attestation_object", default: 0] > 0)
        #expect(refused["malformed_authenticator_data", default: 0] > 0)
    }
}

/// A small seeded generator (SplitMix64) and libFuzzer-like mutations: flip, set, insert, erase, or
/// copy a run of bytes.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        for _ in 0...(next() % 3) {
            guard !bytes.isEmpty else { return [UInt8(truncatingIfNeeded: next())] }
            let at = Int(next() % UInt64(bytes.count))
            switch next() % 5 {
            case 0: bytes[at] ^= UInt8(1 << (next() % 8))
            case 1: bytes[at] = [0x00, 0x17, 0x18, 0x1B, 0x5B, 0x7F, 0x9B, 0x9F, 0xBB, 0xBF, 0xFF, 0xF7][Int(next() % 12)]
            case 2: bytes.insert(UInt8(truncatingIfNeeded: next()), at: at)
            case 3: bytes.remove(at: at)
            default:
                let length = min(Int(next() % 16) + 1, bytes.count - at)
                bytes.insert(contentsOf: bytes[at..<at + length], at: Int(next() % UInt64(bytes.count)))
            }
        }
        return bytes
    }
}
