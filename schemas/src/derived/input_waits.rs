//! A tool call that paused to wait for a person, recognised by the exception its framework
//! raises to pause it.
//!
//! LlamaIndex workflows pause a step that waits for a human's answer (`ctx.wait_for_event(
//! HumanResponseEvent, waiter_event=InputRequiredEvent(...))`, the documented human-in-the-loop
//! for a tool that needs a confirmation) by raising `WaitingForEvent`; the run resumes when the
//! answer arrives and calls the tool again. Any instrumentation of the tool's span records that
//! exception as an `exception` span event, the span ending in ERROR with no output. Such a span
//! is the question, not an execution: it is stored as `result_type` `input_required`, the result
//! type of an MCP round that asks for input, and the analyzer counts the next call of the same
//! tool in the same scope as the answered one (TL002), as it does for Pydantic AI's and Google
//! ADK's approval rounds.

use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::span::Event;

/// Exception types raised to pause a step until a person answers.
const WAITS: &[&str] = &["workflows.runtime.types.results.WaitingForEvent"];

/// True when one of `events` is an exception that pauses for a person's input.
pub fn waits_for_input(events: &[Event]) -> bool {
    events.iter().any(|e| {
        e.name == "exception"
            && e.attributes.iter().any(|kv| {
                kv.key == "exception.type"
                    && matches!(
                        kv.value.as_ref().and_then(|v| v.value.as_ref()),
                        Some(Value::StringValue(t)) if WAITS.contains(&t.as_str())
                    )
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};

    fn exception(kind: &str) -> Event {
        Event {
            name: "exception".into(),
            attributes: vec![KeyValue {
                key: "exception.type".into(),
                value: Some(AnyValue {
                    value: Some(Value::StringValue(kind.into())),
                }),
                ..KeyValue::default()
            }],
            ..Event::default()
        }
    }

    #[test]
    fn a_paused_step_is_recognised_by_its_exception() {
        assert!(waits_for_input(&[exception(
            "workflows.runtime.types.results.WaitingForEvent"
        )]));
        assert!(!waits_for_input(&[exception("ValueError")]));
        assert!(!waits_for_input(&[]));
        let other_event = Event {
            name: "log".into(),
            ..exception("workflows.runtime.types.results.WaitingForEvent")
        };
        assert!(!waits_for_input(&[other_event]));
    }
}
