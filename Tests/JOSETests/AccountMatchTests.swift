import JOSE
import OpenIDConnect
import Testing

@Suite struct AccountMatchTests {
    func claims(email: String?, verified: Bool = true) -> IDTokenClaims {
        IDTokenClaims(issuer: "https://id.school.example", subject: "s", audience: ["c"], expires: 2, issuedAt: 1, email: email, emailVerified: verified)
    }

    @Test func aLinkedSubjectGoesToItsAccountWhateverItsEmailNow() {
        #expect(AccountMatch.decide(claims(email: "new@elsewhere.example", verified: false), linkedAccountID: "acc_1", allowedDomains: [])
            == .linked(accountID: "acc_1"))
    }

    @Test func aVerifiedEmailInAnAllowedDomainNamesTheLogin() {
        #expect(AccountMatch.decide(claims(email: "Ada@School.Example"), linkedAccountID: nil, allowedDomains: ["school.example"])
            == .byEmail(login: "ada@school.example"))
    }

    @Test func anUnverifiedMissingOrForeignEmailIsRefused() {
        let domains = ["school.example"]
        #expect(AccountMatch.decide(claims(email: "ada@school.example", verified: false), linkedAccountID: nil, allowedDomains: domains)
            == .refused(reason: "email_not_verified"))
        #expect(AccountMatch.decide(claims(email: nil), linkedAccountID: nil, allowedDomains: domains) == .refused(reason: "email_not_verified"))
        #expect(AccountMatch.decide(claims(email: "ada@evil.example"), linkedAccountID: nil, allowedDomains: domains)
            == .refused(reason: "email_domain_not_allowed"))
        #expect(AccountMatch.decide(claims(email: "ada@sub.school.example"), linkedAccountID: nil, allowedDomains: domains)
            == .refused(reason: "email_domain_not_allowed"))
        #expect(AccountMatch.decide(claims(email: "a@b@school.example"), linkedAccountID: nil, allowedDomains: domains)
            == .refused(reason: "email_not_verified"))
        #expect(AccountMatch.decide(claims(email: "ada@school.example"), linkedAccountID: nil, allowedDomains: []) == .refused(reason: "email_domain_not_allowed"))
    }
}
