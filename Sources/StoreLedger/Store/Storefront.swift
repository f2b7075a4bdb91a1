import Foundation

/// An App Store storefront: a country, named by its ISO 3166-1 alpha-3 code (USA, FRA, JPN).
public struct Storefront: Sendable, Hashable, CustomStringConvertible {
    /// ISO 3166-1 alpha-3, as StoreKit's `Storefront.countryCode`.
    public let countryCode: String
    /// ISO 3166-1 alpha-2, the region of locale identifiers.
    public let region: String
    /// The locale a shopper of this storefront sees by default, such as `fr_FR`.
    public let defaultLocale: String

    /// The storefront with this alpha-3 code (any letter case), or `nil` for an unknown code.
    public init?(countryCode: String) {
        guard let entry = Self.table[countryCode.uppercased()] else { return nil }
        self.countryCode = countryCode.uppercased()
        self.region = entry.region
        self.defaultLocale = entry.locale
    }

    /// ISO 4217 code of the storefront's currency, from the locale data of its region.
    public var currencyCode: String {
        Locale(identifier: "und_\(region)").currency?.identifier ?? "USD"
    }

    public var description: String { countryCode }

    public static let unitedStates = Storefront(countryCode: "USA")!

    private static let table: [String: (region: String, locale: String)] = {
        // alpha-3 alpha-2 default-locale
        let rows = """
            ARE AE ar_AE; ARG AR es_AR; AUS AU en_AU; AUT AT de_AT; BEL BE nl_BE; BGR BG bg_BG;
            BRA BR pt_BR; CAN CA en_CA; CHE CH de_CH; CHL CL es_CL; CHN CN zh_CN; COL CO es_CO;
            CZE CZ cs_CZ; DEU DE de_DE; DNK DK da_DK; EGY EG ar_EG; ESP ES es_ES; FIN FI fi_FI;
            FRA FR fr_FR; GBR GB en_GB; GRC GR el_GR; HKG HK zh_HK; HRV HR hr_HR; HUN HU hu_HU;
            IDN ID id_ID; IND IN en_IN; IRL IE en_IE; ISL IS is_IS; ISR IL he_IL; ITA IT it_IT;
            JPN JP ja_JP; KAZ KZ kk_KZ; KOR KR ko_KR; LUX LU fr_LU; MEX MX es_MX; MYS MY ms_MY;
            NGA NG en_NG; NLD NL nl_NL; NOR NO nb_NO; NZL NZ en_NZ; PAK PK en_PK; PER PE es_PE;
            PHL PH en_PH; POL PL pl_PL; PRT PT pt_PT; QAT QA ar_QA; ROU RO ro_RO; RUS RU ru_RU;
            SAU SA ar_SA; SGP SG en_SG; SVK SK sk_SK; SVN SI sl_SI; SWE SE sv_SE; THA TH th_TH;
            TUR TR tr_TR; TWN TW zh_TW; UKR UA uk_UA; USA US en_US; VNM VN vi_VN; ZAF ZA en_ZA
            """
        var table: [String: (String, String)] = [:]
        for row in rows.split(separator: ";") {
            let fields = row.split(whereSeparator: \.isWhitespace).map(String.init)
            table[fields[0]] = (fields[1], fields[2])
        }
        return table
    }()
}
