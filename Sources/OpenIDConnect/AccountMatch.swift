import JOSE

/// Whose account a verified ID token signs into (docs/operations.md, "Signing in with the school's
/// identity provider"). The rule is an administrator's approval, never an account made by the provider:
///
/// - a subject this provider has signed in before goes to the account it was linked to then;
/// - otherwise the token's email must be verified by the provider and in one of the domains the school
///   allows for it; the account whose login is that email, in the provider's school, is linked to the
///   subject from then on. An administrator approves a teacher by making that account (its login the
///   teacher's school email): nobody gets an account just because the provider knows them.
public enum AccountMatch: Sendable, Equatable {
    /// The account the subject was linked to.
    case linked(accountID: String)
    /// Link the account whose login is `login` (a lower-cased email), if the school has one.
    case byEmail(login: String)
    case refused(reason: String)

    public static func decide(_ claims: IDTokenClaims, linkedAccountID: String?, allowedDomains: [String]) -> AccountMatch {
        if let linkedAccountID { return .linked(accountID: linkedAccountID) }
        guard let email = claims.email?.lowercased(), claims.emailVerified else { return .refused(reason: "email_not_verified") }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, email.utf8.count <= 254 else { return .refused(reason: "email_not_verified") }
        guard allowedDomains.contains(where: { $0.lowercased() == parts[1] }) else { return .refused(reason: "email_domain_not_allowed") }
        return .byEmail(login: email)
    }
}
