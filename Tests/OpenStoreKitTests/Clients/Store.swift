import Foundation

// StoreKit 2 client code written the way Apple's StoreKit 2 documentation and sample write a
// store (our own code). Only the import differs from the Apple-platform build.
#if canImport(StoreKit)
import StoreKit
#else
import OpenStoreKit
#endif

enum StoreError: Error {
    case failedVerification
}

/// A promotional offer as the app's server returns it once it has signed it.
struct SignedOffer: Sendable {
    let offerID: String
    let keyID: String
    let nonce: UUID
    let timestamp: Int
    /// Base64 of the signature.
    let signature: String
}

/// The app's store: products, purchases, and what the user is entitled to.
@MainActor
final class Store {
    private(set) var products: [Product] = []
    private(set) var purchasedIdentifiers: Set<String> = []
    private(set) var subscriptionState: Product.SubscriptionInfo.RenewalState?
    /// Transactions received from `Transaction.updates`, by id, in arrival order.
    private(set) var updates: [UInt64] = []
    private(set) var revokedUpdates: [UInt64] = []
    private var updateListenerTask: Task<Void, Error>?

    init() {
        updateListenerTask = listenForTransactions()
    }

    deinit {
        updateListenerTask?.cancel()
    }

    func listenForTransactions() -> Task<Void, Error> {
        Task.detached { [weak self] in
            for await result in Transaction.updates {
                guard let self else { return }
                do {
                    let transaction = try self.checkVerified(result)
                    await self.record(transaction)
                    await self.updateCustomerProductStatus()
                    await transaction.finish()
                } catch {
                    print("Transaction failed verification")
                }
            }
        }
    }

    private func record(_ transaction: Transaction) {
        updates.append(transaction.id)
        if transaction.revocationDate != nil { revokedUpdates.append(transaction.id) }
    }

    func requestProducts(_ identifiers: [String]) async throws {
        products = try await Product.products(for: identifiers)
    }

    func product(_ identifier: String) -> Product? {
        products.first { $0.id == identifier }
    }

    func purchase(_ product: Product, quantity: Int = 1, account: UUID? = nil) async throws -> Transaction? {
        var options: Set<Product.PurchaseOption> = [.quantity(quantity)]
        if let account { options.insert(.appAccountToken(account)) }
        return try await complete(try await product.purchase(options: options))
    }

    /// Buys `product` with a promotional offer the app's server signed.
    func purchase(_ product: Product, offer: SignedOffer) async throws -> Transaction? {
        guard let signature = Data(base64Encoded: offer.signature) else { throw StoreError.failedVerification }
        let option = Product.PurchaseOption.promotionalOffer(
            offerID: offer.offerID, keyID: offer.keyID, nonce: offer.nonce, signature: signature,
            timestamp: offer.timestamp)
        return try await complete(try await product.purchase(options: [option]))
    }

    private func complete(_ result: Product.PurchaseResult) async throws -> Transaction? {
        switch result {
        case .success(let verification):
            let transaction = try checkVerified(verification)
            await updateCustomerProductStatus()
            await transaction.finish()
            return transaction
        case .userCancelled, .pending:
            return nil
        @unknown default:
            return nil
        }
    }

    nonisolated func checkVerified<T>(_ result: VerificationResult<T>) throws -> T {
        switch result {
        case .unverified:
            throw StoreError.failedVerification
        case .verified(let safe):
            return safe
        }
    }

    func isPurchased(_ identifier: String) -> Bool {
        purchasedIdentifiers.contains(identifier)
    }

    func updateCustomerProductStatus() async {
        var purchased: Set<String> = []
        for await result in Transaction.currentEntitlements {
            do {
                let transaction = try checkVerified(result)
                switch transaction.productType {
                case .nonConsumable, .autoRenewable, .nonRenewable:
                    purchased.insert(transaction.productID)
                default:
                    break
                }
            } catch {
                print("Transaction failed verification")
            }
        }
        purchasedIdentifiers = purchased
        if let groupID = products.compactMap(\.subscription).first?.subscriptionGroupID {
            subscriptionState = try? await Product.SubscriptionInfo.status(for: groupID).first?.state
        }
    }
}
