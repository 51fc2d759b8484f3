import ControlDefinitions
import Foundation
import MIDI
import Parameters
import Yams

/// A control's `targets:`: the parameters it drives.
extension MappingReader {
    func address(_ text: String, _ node: Node) -> ParameterAddress? {
        switch registry.resolve(text) {
        case .success(let a): return a
        case .failure(let unknown):
            var message = "unknown target '\(text)'"
            if let s = unknown.suggestion { message += "; did you mean '\(s)'?" }
            error(node, message)
            return nil
        }
    }

    /// The targets, and for each its `*` template (with `channel: each`) or nil.
    func targets(_ node: Node, each: Bool) -> ([TargetBinding], [String?]) {
        let items: [Node]
        switch node {
        case .sequence(let list): items = Array(list)
        case .scalar, .mapping: items = [node]
        default:
            expected("a list of targets", node)
            return ([], [])
        }
        if items.isEmpty { error(node, "a control needs at least one target") }
        var result: [TargetBinding] = []
        var templates: [String?] = []
        var seen: Set<ParameterAddress> = []
        for item in items {
            var binding: TargetBinding?
            var template: String?
            if case .mapping = item {
                guard let entries = fields(item, allowed: MappingKeys.target, "a target") else { continue }
                var addressValue: Node?
                var rangeValue: Node?
                for (key, _, value) in entries {
                    if key == "address" { addressValue = value } else { rangeValue = value }
                }
                guard let addressValue else {
                    error(item, "missing key 'address' in a target")
                    continue
                }
                guard let text = string(addressValue, "a parameter address"),
                    let a = templateAddress(text, addressValue, each: each, template: &template)
                else { continue }
                binding = TargetBinding(a)
                if let rangeValue, let r = range(rangeValue, "target range") {
                    let info = registry.info(for: a)
                    if r.lower < info.range.lowerBound - 1e-9 || r.upper > info.range.upperBound + 1e-9 {
                        error(rangeValue, "range \(Self.format(r.from))...\(Self.format(r.to)) is outside \(a)'s range \(Self.format(info.range.lowerBound))...\(Self.format(info.range.upperBound))")
                        continue
                    }
                    binding?.range = r
                }
            } else if let text = string(item, "a parameter address") {
                guard let a = templateAddress(text, item, each: each, template: &template) else { continue }
                binding = TargetBinding(a)
            }
            guard let binding else { continue }
            if !seen.insert(binding.address).inserted {
                error(item, "target '\(binding.address)' is listed twice")
                continue
            }
            result.append(binding)
            templates.append(template)
        }
        return (result, templates)
    }

    /// An address that may hold `*` for the channel when the source has `channel: each`.
    func templateAddress(_ text: String, _ node: Node, each: Bool, template: inout String?) -> ParameterAddress? {
        guard text.contains("*") else { return address(text, node) }
        guard each else {
            error(node, "'*' in '\(text)' stands for the source's channel; it needs 'channel: each' in the source")
            return nil
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.filter({ $0.contains("*") }) == ["*"], parts[1] == "*" else {
            error(node, "'*' may only stand for the channel, as in strip.*.gain or channel.*.cc.7")
            return nil
        }
        guard let a = address(text.replacingOccurrences(of: "*", with: "1"), node) else { return nil }
        template = text
        return a
    }
}
