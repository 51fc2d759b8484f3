import ControlDefinitions
import Parameters
import Yams

/// Selectors on `scene.select`: step N is scene N, and every step and value
/// must name a scene the file has, every scene be reachable.
extension ControlDefinition {
    /// Whether step k of this selector is scene k: it targets `scene.select`
    /// alone (a scene sets anything else), with no range of its own, so its
    /// values are scene places.
    var selectsScenesByPlace: Bool {
        kind == .selector && range == nil && !targets.isEmpty
            && targets.allSatisfy { $0.address == .sceneSelect && $0.range == nil }
    }

    /// A selector on `scene.select` without `values:` gets values 0, 1, …:
    /// with `steps: N`, N of them (else a program change or CC's position N
    /// would land on scene.select's range, 0…127, and miss: `steps: 2` put
    /// program 1 on 127); from a note (a pad stepping on), one per scene of
    /// the file's `sceneCount`. Without steps, a program change or CC's value
    /// N is scene N already.
    mutating func stepThroughScenes(_ sceneCount: Int) {
        guard selectsScenesByPlace, selectorValues == nil else { return }
        if let steps = shaping.steps {
            selectorValues = (0..<steps).map(Double.init)
        } else if case .note? = source?.message, sceneCount >= 2 {
            selectorValues = (0..<sceneCount).map(Double.init)
        }
    }
}

extension MappingReader {
    /// Says at its `steps:` or `values:` where a selector on `scene.select`
    /// points at a scene the file lacks, or cannot reach one it has.
    func checkSceneReach(_ entry: Checked, scenes: [String]) {
        let def = entry.definition
        guard def.selectsScenesByPlace, !scenes.isEmpty, case .mapping(let item) = entry.item else { return }
        let n = scenes.count
        let places = "scene.select takes a scene's place in scenes:, 0...\(n - 1) here"
        func unreached(_ reached: Set<Int>) -> String? {
            // A scene without a name is a mistake of its own, said already.
            let missing = (0..<n).filter { !reached.contains($0) && !scenes[$0].isEmpty }
            guard !missing.isEmpty else { return nil }
            return missing.map { "'\(scenes[$0])' (\($0))" }.joined(separator: ", ")
        }
        if let valuesNode = item["values"], case .sequence(let nodes) = valuesNode, let values = def.selectorValues {
            for (node, value) in zip(nodes, values) where value != value.rounded() || value < 0 || Int(value) >= n {
                error(node, "value \(MappingReader.format(value)) points at no scene: \(places)")
            }
            if let missing = unreached(Set(values.filter { $0 >= 0 && $0 == $0.rounded() && $0 < Double(n) }.map { Int($0) })) {
                error(valuesNode, "control '\(def.name)' cannot reach scene \(missing); add \(missing.contains(",") ? "their places" : "its place") to values")
            }
        } else if let stepsNode = item["steps"], let steps = def.shaping.steps {
            if steps > n {
                error(stepsNode, "steps: \(steps) points steps \(n)...\(steps - 1) at no scene (the file has \(n)); give steps: \(n)")
            } else if let missing = unreached(Set(0..<steps)) {
                error(stepsNode, "steps: \(steps) cannot reach scene \(missing); give steps: \(n)")
            }
        }
    }
}
