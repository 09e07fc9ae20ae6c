import SkillHost
import SkillSDK

/// `skillhost version`: what a bug report needs.
enum VersionInfo {
    /// The Swift compiler the binary was built with.
    static var swift: String {
        #if compiler(>=6.5)
            return "6.5 or newer"
        #elseif compiler(>=6.4)
            return "6.4"
        #elseif compiler(>=6.3)
            return "6.3"
        #elseif compiler(>=6.2)
            return "6.2"
        #elseif compiler(>=6.1)
            return "6.1"
        #else
            return "6.0"
        #endif
    }

    static var text: String {
        """
        skillhost \(SkillRegistry.hostVersion)
        plugin ABI \(SKILL_ABI_MAJOR).\(SKILL_ABI_MINOR) (skill_sdk.h; plugins built against 1.0, 1.1, 1.2, 1.3 or 1.4 load)
        built with Swift \(swift)

        """
    }
}
