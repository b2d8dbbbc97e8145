import Testing
import TransportCore

/// The frame's headroom is what the transport reserved, never a number the rooms know.
@Suite("Outbound frames")
struct OutboundFrameTests {
    @Test func aFrameCarriesTheHeadroomReservedWhenItWasMadeAndItsPayloadWhole() {
        let before = OutboundFrame(Array("before".utf8))
        OutboundFrame.reserveHeadroom(before.headroom + 24)
        let after = OutboundFrame(text: "after", priority: .reply)
        #expect(before.bytes == Array("before".utf8))
        #expect(after.headroom >= before.headroom + 24, "every frame made from now on has what was reserved")
        #expect(after.bytes == Array("after".utf8) && after.count == 5 && after.priority == .reply)
        // Frames from other collections than arrays are copied the slow way, to the same bytes.
        #expect(OutboundFrame("abc".utf8).bytes == Array("abc".utf8))
        #expect(OutboundFrame([UInt8]()).bytes.isEmpty)
    }

    @Test func aSmallerReservationNeverLowersALargerOne() {
        OutboundFrame.reserveHeadroom(40)
        OutboundFrame.reserveHeadroom(8)
        #expect(OutboundFrame.reservedHeadroom >= 40)
        #expect(OutboundFrame(text: "x").headroom == OutboundFrame.reservedHeadroom)
    }
}
