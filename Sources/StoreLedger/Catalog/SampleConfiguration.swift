extension ProductCatalog {
    /// A small catalog with one product of each kind, as the JSON of a StoreKit configuration
    /// (`.storekit`) file, storefront USA and locale en_US: the catalog of the guides' examples
    /// and of `LedgerTesting`'s `SampleCatalog`. `ledger products sample` prints it.
    ///
    /// Non-consumables `com.example.level1` (0.99, English and French) and `com.example.level2`
    /// (1.99, family-shareable), the consumable `com.example.rocket_car` (2.99), the
    /// non-renewing `com.example.season_pass` (9.99), and the subscription group `pro`:
    /// `com.example.pro.monthly` (4.99, with offer codes `FREEMONTH` and `LOYALTY`) and
    /// `com.example.pro.yearly` (49.99) at level 1, `com.example.basic.monthly` (1.99) at level 2.
    public static let sampleConfiguration = """
        {
          "products": [
            {"productID": "com.example.level1", "type": "NonConsumable", "displayPrice": "0.99",
             "localizations": [{"locale": "en_US", "displayName": "Level 1", "description": "Unlock level 1"},
                               {"locale": "fr_FR", "displayName": "Niveau 1", "description": "Débloque le niveau 1"}]},
            {"productID": "com.example.level2", "type": "NonConsumable", "displayPrice": "1.99", "familyShareable": true},
            {"productID": "com.example.rocket_car", "type": "Consumable", "displayPrice": "2.99"}
          ],
          "nonRenewingSubscriptions": [
            {"productID": "com.example.season_pass", "type": "NonRenewingSubscription", "displayPrice": "9.99"}
          ],
          "subscriptionGroups": [
            {"id": "pro", "name": "Pro", "subscriptions": [
              {"productID": "com.example.pro.monthly", "type": "RecurringSubscription", "displayPrice": "4.99",
               "groupNumber": 1, "recurringSubscriptionPeriod": "P1M",
               "codeOffers": [
                 {"referenceName": "FREEMONTH", "paymentMode": "free", "subscriptionPeriod": "P1M",
                  "numberOfPeriods": 1, "eligibility": ["new", "expired"]},
                 {"referenceName": "LOYALTY", "paymentMode": "payAsYouGo", "subscriptionPeriod": "P1M",
                  "numberOfPeriods": 3, "displayPrice": "2.99", "eligibility": ["existing"]}
               ]},
              {"productID": "com.example.pro.yearly", "type": "RecurringSubscription", "displayPrice": "49.99",
               "groupNumber": 1, "recurringSubscriptionPeriod": "P1Y", "familyShareable": true},
              {"productID": "com.example.basic.monthly", "type": "RecurringSubscription", "displayPrice": "1.99",
               "groupNumber": 2, "recurringSubscriptionPeriod": "P1M",
               "winbackOffers": [
                 {"offerID": "COMEBACK_FREE", "referenceName": "Come back free", "paymentMode": "free",
                  "subscriptionPeriod": "P1M", "numberOfPeriods": 1,
                  "customerEligibilityPaidSubscriptionDurationInMonths": 1,
                  "customerEligibilityTimeSinceLastSubscribedInMonths": {"minimum": 0, "maximum": 6}},
                 {"offerID": "COMEBACK_HALF", "referenceName": "Come back half price", "paymentMode": "payAsYouGo",
                  "subscriptionPeriod": "P1M", "numberOfPeriods": 3, "displayPrice": "0.99", "priority": "HIGH",
                  "customerEligibilityPaidSubscriptionDurationInMonths": 2,
                  "customerEligibilityTimeSinceLastSubscribedInMonths": {"minimum": 1, "maximum": 24},
                  "customerEligibilityWaitBetweenOffersInMonths": 6}
               ]}
            ]}
          ],
          "settings": {"_storefront": "USA", "_locale": "en_US"},
          "version": {"major": 4, "minor": 0}
        }
        """
}
