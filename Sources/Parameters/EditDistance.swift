/// Levenshtein distance, for "did you mean" suggestions.
public enum EditDistance {
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = Array(repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// The closest candidate within a distance that still looks like a typo
    /// (a third of the word, at least 2), or nil.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        guard word.count <= 64 else { return nil }
        let limit = max(2, word.count / 3)
        var best: (String, Int)?
        for candidate in candidates {
            let d = distance(word, candidate)
            if d <= limit, d < (best?.1 ?? .max) { best = (candidate, d) }
        }
        return best?.0
    }
}
