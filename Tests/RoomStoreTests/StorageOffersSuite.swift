import StoryCircleCore
import Testing

/// What each database says it offers (`RoomStore.offers`), the one place a server learns which parts a
/// store keeps: both keep classes, the library, pictures and accounts; only PostgreSQL, which several nodes may
/// share, offers leases, so only it is "shared".
@Suite("What a store offers, every backend")
struct StorageOffersSuite {
    @Test(arguments: Backend.all)
    func eachDatabaseOffersItsPartsAndOnlyPostgreSQLIsShared(_ backend: Backend) throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let offers = fixture.store.offers
        #expect(offers.rooms === fixture.store)
        #expect(offers.classes === fixture.store)
        #expect(offers.library === fixture.store)
        #expect(offers.pictures === fixture.store)
        #expect(offers.accounts === fixture.store)
        switch backend {
        case .sqlite:
            #expect(offers.leases == nil, "one server per data directory: nobody to hand a room to")
            #expect(!offers.isShared)
        case .postgres:
            #expect(offers.leases === fixture.store)
            #expect(offers.isShared)
        }
    }
}
