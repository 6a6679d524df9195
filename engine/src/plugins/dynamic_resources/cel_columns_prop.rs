//! The column form of a selector answers as the CEL interpreter does (`cel_columns.rs`,
//! module invariant): for random expressions, inside the column grammar and outside it, and
//! random devices (attributes of every type, missing ones, versions that do not parse,
//! capacities, shared devices), a column answer is the interpreter's answer, and the
//! selectors' answer through a slice equals the interpreter's, errors included.

use super::allocator::SelectorEval;
use super::cel::CelSelectors;
use super::cel_columns::ColumnProgram;
use super::test_devices::{device, slice_of};
use crate::api::Sym;
use crate::api::dra::{AttributeValue, Device};
use proptest::prelude::*;
use std::sync::Arc;

const DRIVERS: [&str; 2] = ["d", "o"];

fn attribute_value() -> impl Strategy<Value = AttributeValue> {
    use AttributeValue as A;
    prop_oneof![
        prop::sample::select(vec![-2i64, 0, 1, 3, i64::MAX, i64::MIN]).prop_map(A::Int),
        any::<bool>().prop_map(A::Bool),
        prop::sample::select(vec!["x", "y", "", "X"]).prop_map(|s| A::String(s.into())),
        prop::sample::select(vec!["1.0.0", "2.1.0", "bad"]).prop_map(|s| A::Version(s.into())),
        Just(A::Strings(vec![Arc::from("x"), Arc::from("y")].into())),
        Just(A::Ints(vec![1, 2].into())),
    ]
}

/// An attribute of a device: mostly of the type its name suggests (`a` int, `b` string,
/// `c` bool), so that comparisons meet; any type otherwise.
fn named_attribute() -> impl Strategy<Value = (String, AttributeValue)> {
    use AttributeValue as A;
    let name = prop::sample::select(vec!["d/a", "d/b", "d/c", "o/a", "o/b", "o/c", "a"]);
    (name, any::<u8>(), attribute_value()).prop_map(|(n, k, any_type)| {
        let natural = match n.rsplit('/').next() {
            Some("a") => A::Int(i64::from(k % 5) - 2),
            Some("b") => A::String(["x", "y", "", "d", "xy", "GPU"][usize::from(k % 6)].into()),
            _ => A::Bool(k % 2 == 0),
        };
        (n.to_string(), if k % 5 == 0 { any_type } else { natural })
    })
}

/// A device: qualified attribute names and values, capacity names and quantities, and
/// whether it allows several allocations.
type DeviceSpec = (Vec<(String, AttributeValue)>, Vec<(String, String)>, bool);

/// A device's attributes and capacities, qualified names over two domains.
fn device_spec() -> impl Strategy<Value = DeviceSpec> {
    let cap = prop::sample::select(vec!["d/m", "d/n", "o/m"]);
    let qty = prop::sample::select(vec!["1", "1Ki", "1024", "2Gi", "500m", "0"]);
    (
        prop::collection::vec(named_attribute(), 0..16),
        prop::collection::vec(
            (cap.prop_map(String::from), qty.prop_map(String::from)),
            0..4,
        ),
        any::<bool>(),
    )
}

fn make_device(driver: &str, i: usize, (attrs, caps, multi): &DeviceSpec) -> Device {
    let attrs: Vec<(&str, AttributeValue)> =
        attrs.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
    let caps: Vec<(&str, &str)> = caps.iter().map(|(n, q)| (n.as_str(), q.as_str())).collect();
    let mut d = device(driver, &attrs, &caps);
    d.name = format!("dev-{i}").into();
    d.name_sym = Sym::new(&d.name);
    d.allow_multiple_allocations = *multi;
    d
}

/// A value: inside the grammar mostly, and a few outside it.
fn value() -> impl Strategy<Value = String> {
    let domain = prop::sample::select(vec!["d", "o", "z"]);
    let id = prop::sample::select(vec!["a", "b", "c", "m", "n"]);
    prop_oneof![
        2 => Just("device.driver".to_string()),
        1 => Just("device.allowMultipleAllocations".to_string()),
        4 => (domain.clone(), id.clone()).prop_map(|(d, i)| format!("device.attributes[\"{d}\"].{i}")),
        2 => (domain.clone(), id.clone()).prop_map(|(d, i)| format!("device.attributes['{d}']['{i}']")),
        3 => (domain, id).prop_map(|(d, i)| format!("device.capacity[\"{d}\"].{i}")),
        6 => prop::sample::select(vec![
            "0",
            "1",
            "-2",
            "9223372036854775807",
            "-9223372036854775808",
            "\"x\"",
            "'y'",
            "\"\"",
            "\"d\"",
            "true",
            "false",
            "quantity(\"1Ki\")",
            "quantity('1')",
        ])
        .prop_map(String::from),
        // Outside the grammar.
        1 => prop::sample::select(vec![
            "1u",
            "1.5",
            "\"a\\\"b\"",
            "semver(\"1.0.0\")",
            "device.attributes[\"d\"].a.size()",
            "quantity(\"bad\")",
        ])
        .prop_map(String::from),
    ]
}

/// An attribute reference, mostly to `id` (of the type the caller compares it as).
fn attribute(id: &'static str) -> impl Strategy<Value = String> + Clone {
    let domain = prop::sample::select(vec!["d", "o", "d", "o", "z"]);
    let id = prop::sample::select(vec![id, id, id, "a", "b", "c"]);
    prop_oneof![
        (domain.clone(), id.clone()).prop_map(|(d, i)| format!("device.attributes[\"{d}\"].{i}")),
        (domain, id).prop_map(|(d, i)| format!("device.attributes['{d}']['{i}']")),
    ]
}

fn pick(v: Vec<&'static str>) -> impl Strategy<Value = String> + Clone {
    prop::sample::select(v).prop_map(String::from)
}

/// A boolean leaf whose operands' types can meet, mostly; some untyped mixtures too.
fn leaf() -> impl Strategy<Value = String> {
    let rel = pick(vec!["==", "!=", "<", "<=", ">", ">="]);
    let eq = pick(vec!["==", "!="]);
    let int = prop_oneof![
        pick(vec![
            "0",
            "1",
            "-2",
            "3",
            "9223372036854775807",
            "-9223372036854775807"
        ]),
        attribute("a"),
    ];
    let string = prop_oneof![
        pick(vec![
            "device.driver",
            "\"x\"",
            "'y'",
            "\"\"",
            "\"d\"",
            "\"X\"",
            "'xy'",
            "\"GPU\""
        ]),
        attribute("b"),
    ];
    let boolean = prop_oneof![
        pick(vec!["true", "false", "device.allowMultipleAllocations"]),
        attribute("c"),
    ];
    let capacity = (pick(vec!["d", "o", "z"]), pick(vec!["m", "n"]))
        .prop_map(|(d, i)| format!("device.capacity[\"{d}\"].{i}"));
    let qty = prop_oneof![
        capacity,
        pick(vec![
            "quantity(\"1Ki\")",
            "quantity('1')",
            "quantity(\"500m\")"
        ]),
    ];
    let method = pick(vec!["isGreaterThan", "isLessThan"]);
    prop_oneof![
        3 => (int.clone(), rel.clone(), int.clone()).prop_map(|(l, r, v)| format!("{l} {r} {v}")),
        3 => (string.clone(), rel.clone(), string).prop_map(|(l, r, v)| format!("{l} {r} {v}")),
        2 => (boolean.clone(), eq, boolean.clone()).prop_map(|(l, r, v)| format!("{l} {r} {v}")),
        2 => (qty.clone(), qty.clone(), rel.clone(), pick(vec!["0", "1", "-1"]))
            .prop_map(|(l, v, r, i)| format!("{l}.compareTo({v}) {r} {i}")),
        2 => (qty.clone(), method, qty).prop_map(|(l, m, v)| format!("{l}.{m}({v})")),
        2 => (
            pick(vec!["a", "m", "d", "o"]),
            pick(vec![
                "device.attributes[\"d\"]",
                "device.capacity[\"d\"]",
                "device.attributes",
                "device.capacity",
            ])
        )
            .prop_map(|(k, m)| format!("\"{k}\" in {m}")),
        2 => boolean,
        1 => (int.clone(), rel.clone()).prop_map(|(v, r)| format!("-{v} {r} 0")),
        1 => prop_oneof![
            (value(), rel, value()).prop_map(|(l, r, v)| format!("{l} {r} {v}")),
            value(),
        ],
    ]
}

fn expression() -> impl Strategy<Value = String> {
    leaf().prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            2 => inner.clone().prop_map(|x| format!("!({x})")),
            1 => inner.clone().prop_map(|x| format!("!{x}")),
            3 => (inner.clone(), inner.clone()).prop_map(|(l, r)| format!("{l} && {r}")),
            2 => (inner.clone(), inner.clone()).prop_map(|(l, r)| format!("({l}) || {r}")),
            2 => (inner.clone(), inner).prop_map(|(l, r)| format!("{l} || ({r})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn columns_answer_as_the_interpreter_does(
        exprs in prop::collection::vec(expression(), 1..4),
        specs in prop::collection::vec(device_spec(), 1..5),
        driver in prop::sample::select(DRIVERS.to_vec()),
    ) {
        let sel = CelSelectors::new();
        let devices: Vec<Device> =
            specs.iter().enumerate().map(|(i, s)| make_device(driver, i, s)).collect();
        let slice = slice_of(driver, devices);
        for expr in &exprs {
            // Only an expression that compiles has a column form (`CelSelectors::selector`).
            let program = sel.selector(expr).columns;
            let whole = program.as_ref().map(|p| p.eval_slice(&slice));
            for (i, d) in slice.devices.iter().enumerate() {
                let interpreted = sel.interpret(expr, Sym::new(driver), d);
                if let Some(p) = &program {
                    let row = p.eval_row(&slice, i);
                    prop_assert_eq!(row, whole.as_ref().unwrap()[i], "{} row {}", expr, i);
                    if let Some(b) = row {
                        prop_assert_eq!(&interpreted, &Ok(b), "{} on {:?}", expr, d);
                    }
                }
                prop_assert_eq!(&sel.matches(expr, &slice, i), &interpreted, "{}", expr);
            }
        }
    }
}

/// The generator reaches the column path: most of its expressions have a column form, and
/// a good share answer over columns (so the property above is not checked on the fallback
/// only).
#[test]
fn the_generator_reaches_the_column_path() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let sel = CelSelectors::new();
    let (mut compiled, mut answered, mut total) = (0, 0, 0);
    for _ in 0..300 {
        let expr = expression().new_tree(&mut runner).unwrap().current();
        let specs = device_spec().new_tree(&mut runner).unwrap().current();
        let slice = slice_of("d", vec![make_device("d", 0, &specs)]);
        total += 1;
        if sel.compile(&expr).is_ok()
            && let Some(p) = ColumnProgram::compile(&expr)
        {
            compiled += 1;
            answered += p.eval_row(&slice, 0).is_some() as usize;
        }
    }
    // Most random expressions meet a missing attribute or a value of another type somewhere
    // (the interpreter's errors): about a quarter answer over columns.
    assert!(
        compiled * 3 > total * 2,
        "{compiled} of {total} have a column form"
    );
    assert!(
        answered * 5 > total,
        "{answered} of {total} answered over columns"
    );
}
