import MappingFiles
import Sampling

extension PresetCatalog {
    /// Makes mapping loads look up presets named by name (`program: "Warm
    /// Pad"`) in the font of the channel (`font(_:sessionFont:)`), read at the
    /// first name. Here, where both sides are seen: the mapping reader reads no
    /// font, and the sampler stage knows no mapping file.
    static func lookUpMappingPresets(sessionFont: String?) {
        ControlMapping.lookUpPresets { name in font(name, sessionFont: sessionFont) }
    }
}
