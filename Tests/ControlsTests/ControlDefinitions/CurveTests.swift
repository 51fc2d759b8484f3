import ControlDefinitions
import Foundation
import Controls
import Testing

@Suite struct CurveTests {
    static let curves: [Curve] = [
        .linear, .exponential(shape: 4), .exponential(shape: -3), .logarithmic(shape: 9), .sCurve(shape: 2),
        .sCurve(shape: 5), .table([.init(0, 0), .init(0.5, 0.8), .init(1, 1)]),
    ]

    @Test(arguments: curves)
    func curve_mapsEndsAndRisesMonotonically(_ curve: Curve) {
        #expect(approx(curve.apply(0), 0))
        #expect(approx(curve.apply(1), 1))
        var previous = -1.0
        for i in 0...100 {
            let y = curve.apply(Double(i) / 100)
            #expect(y >= previous - 1e-12)
            previous = y
        }
    }

    @Test(arguments: curves)
    func curve_inverseUndoesApply(_ curve: Curve) {
        for i in 0...20 {
            let x = Double(i) / 20
            #expect(approx(curve.apply(curve.inverse(curve.apply(x))), curve.apply(x), 1e-6))
        }
    }

    @Test func exponential_isSlowAtTheStart() {
        let y = Curve.exponential(shape: 4).apply(0.5)
        #expect(approx(y, (exp(2.0) - 1) / (exp(4.0) - 1)))
        #expect(y < 0.5)
    }

    @Test func logarithmic_isFastAtTheStart() {
        #expect(approx(Curve.logarithmic(shape: 9).apply(0.5), log(5.5) / log(10)))
    }

    @Test func sCurve_isSymmetricAroundTheMiddle() {
        let c = Curve.sCurve(shape: 2)
        #expect(approx(c.apply(0.5), 0.5))
        #expect(approx(c.apply(0.25), 0.1))
        #expect(approx(c.apply(0.25) + c.apply(0.75), 1))
    }

    @Test func table_interpolatesAndHoldsEnds() {
        let c = Curve.table([.init(0.2, 0.1), .init(0.6, 0.9), .init(0.8, 1)])
        #expect(approx(c.apply(0), 0.1))
        #expect(approx(c.apply(0.4), 0.5))
        #expect(approx(c.apply(0.7), 0.95))
        #expect(approx(c.apply(1), 1))
    }

    @Test func shaping_invertsAndSteps() {
        let s = Shaping(curve: .linear, inverted: true, steps: 5)
        #expect(approx(s.apply(0), 1))
        #expect(approx(s.apply(1), 0))
        #expect(approx(s.apply(0.3), 0.75))  // 1 - 0.3 = 0.7 → nearest of 0, .25, .5, .75, 1
        #expect(approx(Shaping(inverted: true).inverse(0.25), 0.75))
    }
}
