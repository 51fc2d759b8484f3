import Parameters

/// Something that wants parameter changes (the engine's parameter store, a view).
public protocol ParameterChangeSubscriber: AnyObject {
    func parameterDidChange(_ change: ParameterChange)
}
