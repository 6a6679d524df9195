//! Provenance: pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources_test.go
//! (`Test_createRequestsAndMappings_requests`, `Test_createRequestsAndMappings_mappings`).

use super::*;
use crate::api::extended_requests::extended_resource_containers;
use serde_json::{Value, json};

const EXT: &str = "example.com/gpu";

fn containers(inits: Value, containers: Value) -> Vec<ExtendedResourceContainer> {
    let spec: core::PodSpec =
        serde_json::from_value(json!({"initContainers": inits, "containers": containers})).unwrap();
    extended_resource_containers(&spec)
}

fn c(name: &str, requests: Value) -> Value {
    json!({"name": name, "resources": {"requests": requests}})
}

fn sidecar(name: &str, requests: Value) -> Value {
    json!({"name": name, "restartPolicy": "Always", "resources": {"requests": requests}})
}

fn req(name: &str, class: &str, count: i64) -> ExactRequest {
    ExactRequest {
        name: Arc::from(name),
        class: Arc::from(class),
        count,
    }
}

/// The requests for `resources` with `classes` (resource → class).
fn requests(
    cs: &[ExtendedResourceContainer],
    resources: &[&str],
    classes: &[(&str, &str)],
) -> Vec<ExactRequest> {
    let mut rs: Vec<Sym> = resources.iter().map(|r| Sym::new(r)).collect();
    rs.sort_by_key(|a| a.as_arc());
    let class_of = |r: Sym| {
        classes
            .iter()
            .find(|(n, _)| Sym::new(n) == r)
            .map(|(_, c)| Arc::<str>::from(*c))
    };
    requests_and_mappings(cs, &rs, class_of).0
}

#[test]
fn create_requests_table() {
    let ext1 = format!("{EXT}1");
    let init = format!("{EXT}init");
    let pod1 = containers(json!([]), json!([c("c0", json!({EXT: "1", &ext1: "2"}))]));
    let pod2 = containers(
        json!([]),
        json!([c("c0", json!({EXT: "1"})), c("c1", json!({&ext1: "2"}))]),
    );
    let pod_init = containers(
        json!([c("i0", json!({&init: "2"}))]),
        json!([c("c0", json!({EXT: "1"}))]),
    );
    let pod_init2 = containers(
        json!([c("i0", json!({&init: "1"})), c("i1", json!({&init: "2"}))]),
        json!([c("c0", json!({EXT: "1"}))]),
    );
    let pod_init3 = containers(
        json!([
            c("i0", json!({&init: "1"})),
            sidecar("s1", json!({&init: "1"})),
            c("i2", json!({&init: "2"}))
        ]),
        json!([c("c0", json!({EXT: "1"}))]),
    );
    let dev_map = [(EXT, "class")];
    let dev_map2 = [(EXT, "class"), (ext1.as_str(), "class1")];
    let dev_map_init = [(EXT, "class"), (init.as_str(), "classInit")];
    let res = [EXT];
    let res2 = [EXT, ext1.as_str()];
    let res_init = [EXT, init.as_str()];
    // "nil"
    assert_eq!(requests(&pod1, &[], &[]), []);
    // "one resource match"
    assert_eq!(
        requests(&pod1, &res, &dev_map),
        [req("container-0-request-0", "class", 1)]
    );
    // "one resource match, one resource not match"
    assert_eq!(
        requests(&pod1, &res2, &dev_map),
        [req("container-0-request-0", "class", 1)]
    );
    // "two resources match"
    assert_eq!(
        requests(&pod1, &res2, &dev_map2),
        [
            req("container-0-request-0", "class", 1),
            req("container-0-request-1", "class1", 2)
        ]
    );
    // "two containers match"
    assert_eq!(
        requests(&pod2, &res2, &dev_map2),
        [
            req("container-0-request-0", "class", 1),
            req("container-1-request-0", "class1", 2)
        ]
    );
    // "one init container, one regular container"
    assert_eq!(
        requests(&pod_init, &res_init, &dev_map_init),
        [
            req("container-0-request-0", "classInit", 2),
            req("container-1-request-0", "class", 1)
        ]
    );
    // "two init containers, one regular container"
    assert_eq!(
        requests(&pod_init2, &res_init, &dev_map_init),
        [
            req("container-1-request-0", "classInit", 2),
            req("container-2-request-0", "class", 1)
        ]
    );
    // "three init containers, one sidecar, one regular container"
    assert_eq!(
        requests(&pod_init3, &res_init, &dev_map_init),
        [
            req("container-1-request-0", "classInit", 1),
            req("container-2-request-0", "classInit", 2),
            req("container-3-request-0", "class", 1)
        ]
    );
}

#[test]
fn mappings_share_the_largest_init_request() {
    let init = format!("{EXT}init");
    let cs = containers(
        json!([c("i0", json!({&init: "1"})), c("i1", json!({&init: "2"}))]),
        json!([c("c0", json!({EXT: "1"}))]),
    );
    let rs = [Sym::new(EXT), Sym::new(&init)];
    let class_of = |r: Sym| {
        Some(Arc::<str>::from(if r == Sym::new(EXT) {
            "class"
        } else {
            "ci"
        }))
    };
    let (_, m) = requests_and_mappings(&cs, &rs, class_of);
    let got: Vec<(&str, &str)> = m.iter().map(|m| (&*m.container, &*m.request)).collect();
    assert_eq!(
        got,
        [
            ("c0", "container-2-request-0"),
            // Both init containers are served by the larger request.
            ("i0", "container-1-request-0"),
            ("i1", "container-1-request-0")
        ]
    );
}

#[test]
fn a_node_offering_the_resource_keeps_it_and_an_unbacked_missing_one_fails() {
    let gpu = Sym::new(EXT);
    let other = Sym::new("example.com/other");
    let want = Resource {
        scalar: vec![(gpu, 1), (other, 1)],
        ..Default::default()
    };
    let offered = Resource {
        scalar: vec![(other, 4)],
        ..Default::default()
    };
    assert_eq!(
        node_resources(&want, &offered, |r| r == gpu),
        Ok(vec![(gpu, 1)])
    );
    // `other` is neither offered nor backed.
    assert_eq!(
        node_resources(&want, &Resource::default(), |r| r == gpu),
        Err(())
    );
    // Offered with 0 allocatable and backed: left to DRA.
    let zero = Resource {
        scalar: vec![(gpu, 0), (other, 1)],
        ..Default::default()
    };
    assert_eq!(node_resources(&want, &zero, |_| true), Ok(vec![(gpu, 1)]));
}
