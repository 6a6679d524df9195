//! API-server validation of scheduling gates and of the scheduling directives a
//! gated pod may still change, as done by Kubernetes'
//! `pkg/apis/core/validation/validation.go`, on `k8s-openapi` types.
//!
//! Errors are [`FieldError`]s whose `Display` is exactly apimachinery's
//! `field.Error.Error()` (for example
//! `spec.schedulingGates[1]: Duplicate value: "foo"`).
//!
//! # Rules
//!
//! On create ([`validate_pod_create`]) and on the new pod of an update:
//!
//! 1. every `spec.schedulingGates[i].name` is a qualified name (`is_qualified_name`);
//!    each message is an `Invalid` error at `spec.schedulingGates[i]`;
//! 2. gate names are unique: a repeat is `Duplicate` at `spec.schedulingGates[i]`.
//!
//! On create only:
//!
//! 3. `spec.nodeName` may not be set while there are gates (`Forbidden` at
//!    `spec.nodeName`).
//!
//! On update ([`validate_pod_update`]), in Kubernetes' order:
//!
//! 4. `metadata.name` and `metadata.namespace` are immutable (`Invalid`, "field is
//!    immutable");
//! 5. containers and init containers may not be added or removed (`Forbidden`, and
//!    validation stops), and their images must be non-empty without surrounding
//!    whitespace;
//! 6. `spec.activeDeadlineSeconds` may only be set from nil, or lowered, within
//!    `0..=2^31-1`, and may not be unset;
//! 7. existing tolerations may not change, except their `tolerationSeconds`;
//! 8. gates may only be deleted: a name absent from the old list is `Forbidden` at
//!    `spec.schedulingGates[i].name`;
//! 9. while the *old* pod has at least one gate:
//!    - `spec.nodeSelector` may only gain entries (`Invalid` at `spec.nodeSelector`);
//!    - `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`
//!      may be set freely if it was nil; otherwise its non-empty term list keeps its
//!      length, an empty term stays empty, and each term's `matchExpressions` and
//!      `matchFields` keep the old entries as an unchanged prefix (`Invalid` errors);
//!      the rest of `nodeAffinity` (preferred terms) may change freely;
//! 10. any other change to `spec` is `Forbidden` at `spec` ("pod updates may not
//!     change fields other than ..."). Images, `activeDeadlineSeconds`, tolerations,
//!     gates, a `terminationGracePeriodSeconds` going from negative to 1 and, while
//!     the old pod is gated, `nodeSelector` and `nodeAffinity` are masked first.
//!     The comparison is semantic as in Kubernetes: an empty list or map equals an
//!     absent one, and resource quantities compare by value (`1` equals `1000m`).
//!
//! Bad values are rendered the way apimachinery renders them: strings Go-quoted
//! (`"foo"`), numbers plainly, maps and API structs as JSON (internal Go types have
//! no JSON tags, so node selector terms print as
//! `{"MatchExpressions":[{"Key":"k","Operator":"In","Values":["v"]}],"MatchFields":null}`).
//!
//! # Differences from Kubernetes
//!
//! - Only the rules above are checked; the rest of Kubernetes' pod validation
//!   (object metadata, container specs, toleration contents, ...) is not.
//! - Kubernetes appends a diff to the "pod updates may not change fields" message;
//!   it is left out here.
//! - Kubernetes reports new scheduling gates in random (map) order; here they come
//!   in index order.
//! - `k8s-openapi` cannot tell Go value fields from pointer fields, so an optional
//!   scalar that goes from absent to its zero value (`""`, `false`, `0`) counts as
//!   a change.
//! - Messages use the Kubernetes 1.34 wording (`must be no more than 63
//!   characters`, `a qualified name ...`); later releases say `bytes` and
//!   `a valid label key`.
//! - Go's `%q` is approximated: unassigned code points are printed, not escaped.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::ops::ControlFlow;

use k8s_openapi::api::core::v1::{
    Affinity, Container, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
    Pod, PodSchedulingGate, PodSpec, Toleration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::serde;
use k8s_openapi::serde_json::{self, Value};

use super::quantity::Quantity;
use super::quote::go_quote;

const GATES_PATH: &str = "spec.schedulingGates";
const NODE_SELECTOR_TERMS_PATH: &str =
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";

/// The fields Kubernetes names in its "pod updates may not change fields" error.
const UPDATABLE_POD_SPEC_FIELDS: &[&str] = &[
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
     and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower \
     case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// Kubernetes' `field.ErrorType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    NotFound,
    Required,
    Duplicate,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    TooMany,
    Internal,
}

impl ErrorType {
    /// The text Kubernetes prints for this type (`ErrorType.String()`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
        }
    }

    /// Whether Kubernetes prints the bad value for this type.
    fn shows_value(self) -> bool {
        !matches!(
            self,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal
        )
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A field-level validation error, like apimachinery's `field.Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub kind: ErrorType,
    /// The field path, e.g. `spec.schedulingGates[1].name`.
    pub field: String,
    /// The bad value as Kubernetes renders it in the message (`"foo"` with Go
    /// quotes, `30`, `null`, or JSON for maps and structs); `None` when not shown.
    pub bad_value: Option<String>,
    pub detail: String,
}

impl FieldError {
    fn new(
        kind: ErrorType,
        field: impl Into<String>,
        bad_value: Option<String>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            kind,
            field: field.into(),
            bad_value,
            detail: detail.into(),
        }
    }

    fn invalid(field: impl Into<String>, bad_value: String, detail: impl Into<String>) -> Self {
        FieldError::new(ErrorType::Invalid, field, Some(bad_value), detail)
    }

    fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError::new(ErrorType::Forbidden, field, None, detail)
    }

    fn required(field: impl Into<String>) -> Self {
        FieldError::new(ErrorType::Required, field, None, "")
    }

    fn duplicate(field: impl Into<String>, bad_value: String) -> Self {
        FieldError::new(ErrorType::Duplicate, field, Some(bad_value), "")
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.kind)?;
        if let Some(value) = self.bad_value.as_ref().filter(|_| self.kind.shows_value()) {
            write!(f, ": {value}")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for FieldError {}

/// Kubernetes' `IsQualifiedName`: an optional DNS-1123 subdomain prefix and `/`,
/// then a name of at most 63 characters matching
/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`. Returns one message per problem.
pub(crate) fn is_qualified_name(value: &str) -> Vec<String> {
    let parts: Vec<&str> = value.split('/').collect();
    let (prefix, name) = match parts[..] {
        [name] => (None, name),
        [prefix, name] => (Some(prefix), name),
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                qualified_name_regex_error()
            )];
        }
    };
    let mut errs = Vec::new();
    match prefix {
        Some("") => errs.push("prefix part must be non-empty".to_string()),
        Some(prefix) => errs.extend(
            is_dns1123_subdomain(prefix)
                .into_iter()
                .map(|msg| format!("prefix part {msg}")),
        ),
        None => {}
    }
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!("name part {}", qualified_name_regex_error()));
    }
    errs
}

/// Validates a list of scheduling gates found at `path` (e.g.
/// `spec.schedulingGates`): qualified names, no duplicates.
pub(crate) fn validate_scheduling_gates(
    gates: &[PodSchedulingGate],
    path: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, gate) in gates.iter().enumerate() {
        let gate_path = format!("{path}[{i}]");
        for msg in is_qualified_name(&gate.name) {
            errs.push(FieldError::invalid(
                gate_path.as_str(),
                go_quote(&gate.name),
                msg,
            ));
        }
        if !seen.insert(gate.name.as_str()) {
            errs.push(FieldError::duplicate(gate_path, go_quote(&gate.name)));
        }
    }
    errs
}

/// Validates a pod being created: its scheduling gates, and that it is not bound
/// to a node while gated.
pub fn validate_pod_create(pod: &Pod) -> Vec<FieldError> {
    let spec = spec_of(pod);
    let mut errs = validate_scheduling_gates(gates_of(&spec), GATES_PATH);
    if spec.node_name.as_deref().is_some_and(|n| !n.is_empty()) && !gates_of(&spec).is_empty() {
        errs.push(FieldError::forbidden(
            "spec.nodeName",
            "cannot be set until all schedulingGates have been cleared",
        ));
    }
    errs.extend(validate_host_users(&spec));
    errs
}

/// kube's `validateHostUsers` with its default options (UserNamespacesHostNetworkSupport
/// off): a pod in its own user namespace (`hostUsers: false`) may not share the host's
/// network, PID or IPC namespace. Source: pkg/apis/core/validation/validation.go.
fn validate_host_users(spec: &PodSpec) -> Vec<FieldError> {
    let mut errs = vec![];
    if spec.host_users != Some(false) {
        return errs;
    }
    for (on, field) in [
        (spec.host_network, "spec.hostNetwork"),
        (spec.host_pid, "spec.HostPID"),
        (spec.host_ipc, "spec.HostIPC"),
    ] {
        if on == Some(true) {
            errs.push(FieldError::forbidden(field, "when `hostUsers` is false"));
        }
    }
    errs
}

/// Validates an update from `old` to `new` (see the module documentation for the
/// rules and their order).
pub fn validate_pod_update(new: &Pod, old: &Pod) -> Vec<FieldError> {
    let (new_spec, old_spec) = (spec_of(new), spec_of(old));
    let mut errs = validate_metadata_update(&new.metadata, &old.metadata);
    errs.extend(validate_scheduling_gates(gates_of(&new_spec), GATES_PATH));
    if validate_updatable_fields(&new_spec, &old_spec, &mut errs).is_break() {
        return errs;
    }
    if !semantically_equal(&*new_spec, &*old_spec) {
        errs.extend(validate_spec_immutability(&new_spec, &old_spec));
    }
    errs
}

fn spec_of(pod: &Pod) -> Cow<'_, PodSpec> {
    pod.spec
        .as_ref()
        .map_or_else(|| Cow::Owned(PodSpec::default()), Cow::Borrowed)
}

/// Rules 5 to 8: containers, `activeDeadlineSeconds`, tolerations and gates.
/// Breaks where Kubernetes stops validating.
fn validate_updatable_fields(
    new: &PodSpec,
    old: &PodSpec,
    errs: &mut Vec<FieldError>,
) -> ControlFlow<()> {
    let container_lists = [
        ("spec.containers", &new.containers[..], &old.containers[..]),
        (
            "spec.initContainers",
            init_containers_of(new),
            init_containers_of(old),
        ),
    ];
    for (path, new_containers, old_containers) in container_lists {
        match validate_container_updates(new_containers, old_containers, path) {
            Ok(image_errs) => errs.extend(image_errs),
            Err(stop) => {
                errs.push(stop);
                return ControlFlow::Break(());
            }
        }
    }
    if let Some((err, stop)) =
        validate_active_deadline_update(new.active_deadline_seconds, old.active_deadline_seconds)
    {
        errs.push(err);
        if stop {
            return ControlFlow::Break(());
        }
    }
    errs.extend(validate_only_added_tolerations(
        tolerations_of(new),
        tolerations_of(old),
    ));
    errs.extend(validate_only_deleted_scheduling_gates(
        gates_of(new),
        gates_of(old),
    ));
    ControlFlow::Continue(())
}

/// Rules 9 and 10: masks what may change, checks the gated-pod directives, and
/// forbids any remaining difference.
fn validate_spec_immutability(new: &PodSpec, old: &PodSpec) -> Vec<FieldError> {
    let mut munged = mask_updatable_fields(new, old);
    let mut errs = Vec::new();
    if !gates_of(old).is_empty() {
        errs = validate_and_mask_gated_directives(&mut munged, old);
    }
    if !semantically_equal(&munged, old) {
        errs.push(FieldError::forbidden(
            "spec",
            format!(
                "pod updates may not change fields other than {}",
                UPDATABLE_POD_SPEC_FIELDS.join(",")
            ),
        ));
    }
    errs
}

fn gates_of(spec: &PodSpec) -> &[PodSchedulingGate] {
    spec.scheduling_gates.as_deref().unwrap_or_default()
}

fn init_containers_of(spec: &PodSpec) -> &[Container] {
    spec.init_containers.as_deref().unwrap_or_default()
}

fn tolerations_of(spec: &PodSpec) -> &[Toleration] {
    spec.tolerations.as_deref().unwrap_or_default()
}

/// `metadata.name` and `metadata.namespace` may not change.
fn validate_metadata_update(new: &ObjectMeta, old: &ObjectMeta) -> Vec<FieldError> {
    [
        ("metadata.name", &new.name, &old.name),
        ("metadata.namespace", &new.namespace, &old.namespace),
    ]
    .into_iter()
    .filter(|(_, new, old)| new.as_deref().unwrap_or("") != old.as_deref().unwrap_or(""))
    .map(|(path, new, _)| {
        FieldError::invalid(
            path,
            go_quote(new.as_deref().unwrap_or("")),
            "field is immutable",
        )
    })
    .collect()
}

/// Containers may not be added or removed (`Err`: Kubernetes stops there);
/// otherwise reports bad images.
fn validate_container_updates(
    new: &[Container],
    old: &[Container],
    path: &str,
) -> Result<Vec<FieldError>, FieldError> {
    if new.len() != old.len() {
        return Err(FieldError::forbidden(
            path,
            "pod updates may not add or remove containers",
        ));
    }
    let mut errs = Vec::new();
    for (i, container) in new.iter().enumerate() {
        let image = container.image.as_deref().unwrap_or("");
        let image_path = format!("{path}[{i}].image");
        if image.is_empty() {
            errs.push(FieldError::required(image_path.as_str()));
        }
        if image.trim().len() != image.len() {
            errs.push(FieldError::invalid(
                image_path,
                go_quote(image),
                "must not have leading or trailing whitespace",
            ));
        }
    }
    Ok(errs)
}

/// The `activeDeadlineSeconds` update rule; the flag says whether Kubernetes stops
/// validating after this error.
fn validate_active_deadline_update(
    new: Option<i64>,
    old: Option<i64>,
) -> Option<(FieldError, bool)> {
    const PATH: &str = "spec.activeDeadlineSeconds";
    match (new, old) {
        (Some(n), _) if !(0..=i64::from(i32::MAX)).contains(&n) => Some((
            FieldError::invalid(
                PATH,
                n.to_string(),
                "must be between 0 and 2147483647, inclusive",
            ),
            true,
        )),
        (Some(n), Some(o)) if o < n => Some((
            FieldError::invalid(
                PATH,
                n.to_string(),
                "must be less than or equal to previous value",
            ),
            true,
        )),
        (None, Some(_)) => Some((
            FieldError::invalid(
                PATH,
                "null".to_string(),
                "must not update from a positive integer to nil value",
            ),
            false,
        )),
        _ => None,
    }
}

/// Every old toleration must still be present, up to its `tolerationSeconds`.
fn validate_only_added_tolerations(new: &[Toleration], old: &[Toleration]) -> Option<FieldError> {
    let text = |s: &Option<String>| s.as_deref().unwrap_or("").to_owned();
    let identity = |t: &Toleration| {
        [
            text(&t.key),
            text(&t.operator),
            text(&t.value),
            text(&t.effect),
        ]
    };
    let kept = |o: &Toleration| new.iter().any(|n| identity(n) == identity(o));
    (!old.iter().all(kept)).then(|| {
        FieldError::forbidden(
            "spec.tolerations",
            "existing toleration can not be modified except its tolerationSeconds",
        )
    })
}

/// Gates may only be removed. Like Kubernetes, each new name is reported once, at
/// the last index it appears at.
fn validate_only_deleted_scheduling_gates(
    new: &[PodSchedulingGate],
    old: &[PodSchedulingGate],
) -> Vec<FieldError> {
    let mut last_index: BTreeMap<&str, usize> = new
        .iter()
        .enumerate()
        .map(|(i, gate)| (gate.name.as_str(), i))
        .collect();
    for gate in old {
        last_index.remove(gate.name.as_str());
    }
    let mut added: Vec<(usize, &str)> = last_index.into_iter().map(|(name, i)| (i, name)).collect();
    added.sort_unstable();
    added
        .into_iter()
        .map(|(i, name)| {
            FieldError::forbidden(
                format!("{GATES_PATH}[{i}].name"),
                format!("only deletion is allowed, but found new scheduling gate '{name}'"),
            )
        })
        .collect()
}

/// A copy of `new` with the always-updatable fields taken from `old`.
fn mask_updatable_fields(new: &PodSpec, old: &PodSpec) -> PodSpec {
    let mut munged = new.clone();
    for (container, old_container) in munged.containers.iter_mut().zip(&old.containers) {
        container.image.clone_from(&old_container.image);
    }
    if let Some(init) = munged.init_containers.as_mut() {
        for (container, old_container) in init.iter_mut().zip(init_containers_of(old)) {
            container.image.clone_from(&old_container.image);
        }
    }
    munged.active_deadline_seconds = old.active_deadline_seconds;
    munged.scheduling_gates.clone_from(&old.scheduling_gates);
    munged.tolerations.clone_from(&old.tolerations);
    let was_negative = old.termination_grace_period_seconds.is_some_and(|s| s < 0);
    if was_negative && munged.termination_grace_period_seconds == Some(1) {
        munged.termination_grace_period_seconds = old.termination_grace_period_seconds;
    }
    munged
}

/// While the old pod is gated: checks the `nodeSelector` and required node
/// affinity changes, then masks both (taking the old values into `munged`).
fn validate_and_mask_gated_directives(munged: &mut PodSpec, old: &PodSpec) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if string_map_of(&munged.node_selector) != string_map_of(&old.node_selector) {
        errs.extend(validate_node_selector_mutation(
            munged.node_selector.as_ref(),
            old.node_selector.as_ref(),
        ));
        munged.node_selector.clone_from(&old.node_selector);
    }
    let old_affinity = node_affinity_of(old);
    if !semantically_equal(&old_affinity, &node_affinity_of(munged)) {
        errs.extend(validate_node_affinity_mutation(
            node_affinity_of(munged),
            old_affinity,
        ));
        let old_affinity = old_affinity.cloned();
        munged.affinity = match munged.affinity.take() {
            None => old_affinity.map(|na| Affinity {
                node_affinity: Some(na),
                ..Affinity::default()
            }),
            Some(a)
                if old.affinity.is_none()
                    && a.pod_affinity.is_none()
                    && a.pod_anti_affinity.is_none() =>
            {
                None
            }
            Some(a) => Some(Affinity {
                node_affinity: old_affinity,
                ..a
            }),
        };
    }
    errs
}

fn string_map_of(map: &Option<BTreeMap<String, String>>) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    map.as_ref().unwrap_or(&EMPTY)
}

fn node_affinity_of(spec: &PodSpec) -> Option<&NodeAffinity> {
    spec.affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
}

/// Every old `nodeSelector` entry must still be there with the same value.
fn validate_node_selector_mutation(
    new: Option<&BTreeMap<String, String>>,
    old: Option<&BTreeMap<String, String>>,
) -> Option<FieldError> {
    let kept = |(k, v): (&String, &String)| new.and_then(|n| n.get(k)) == Some(v);
    (!old.into_iter().flatten().all(kept)).then(|| {
        FieldError::invalid(
            "spec.nodeSelector",
            json_string_map(new),
            "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
        )
    })
}

fn required_of(na: Option<&NodeAffinity>) -> Option<&NodeSelector> {
    na.and_then(|na| {
        na.required_during_scheduling_ignored_during_execution
            .as_ref()
    })
}

fn requirements_of(r: &Option<Vec<NodeSelectorRequirement>>) -> &[NodeSelectorRequirement] {
    r.as_deref().unwrap_or_default()
}

/// The required node affinity of a gated pod may only gain requirements.
fn validate_node_affinity_mutation(
    new: Option<&NodeAffinity>,
    old: Option<&NodeAffinity>,
) -> Vec<FieldError> {
    let Some(old_required) = required_of(old) else {
        return Vec::new();
    };
    let old_terms = &old_required.node_selector_terms;
    let new_terms = required_of(new).map(|ns| ns.node_selector_terms.as_slice());
    if !old_terms.is_empty() && old_terms.len() != new_terms.map_or(0, <[_]>::len) {
        return vec![FieldError::invalid(
            NODE_SELECTOR_TERMS_PATH,
            json_terms(new_terms),
            "no additions/deletions to non-empty NodeSelectorTerms list are allowed",
        )];
    }
    old_terms
        .iter()
        .zip(new_terms.unwrap_or_default())
        .enumerate()
        .filter(|(_, (old_term, new_term))| !term_has_only_additions(new_term, old_term))
        .map(|(i, (_, new_term))| {
            FieldError::invalid(
                format!("{NODE_SELECTOR_TERMS_PATH}[{i}]"),
                json_term(new_term),
                "only additions are allowed (no mutations or deletions)",
            )
        })
        .collect()
}

/// An empty old term stays empty; otherwise the old requirements are an unchanged
/// prefix of the new ones, for both `matchExpressions` and `matchFields`.
fn term_has_only_additions(new: &NodeSelectorTerm, old: &NodeSelectorTerm) -> bool {
    let (old_exprs, old_fields) = (
        requirements_of(&old.match_expressions),
        requirements_of(&old.match_fields),
    );
    let (new_exprs, new_fields) = (
        requirements_of(&new.match_expressions),
        requirements_of(&new.match_fields),
    );
    if old_exprs.is_empty() && old_fields.is_empty() {
        return new_exprs.is_empty() && new_fields.is_empty();
    }
    is_unchanged_prefix(old_exprs, new_exprs) && is_unchanged_prefix(old_fields, new_fields)
}

fn is_unchanged_prefix(old: &[NodeSelectorRequirement], new: &[NodeSelectorRequirement]) -> bool {
    let values = |r: &NodeSelectorRequirement| r.values.as_deref().unwrap_or_default().to_vec();
    new.len() >= old.len()
        && old
            .iter()
            .zip(new)
            .all(|(o, n)| o.key == n.key && o.operator == n.operator && values(o) == values(n))
}

// ---------------------------------------------------------------------------
// Semantic equality (apimachinery's `apiequality.Semantic.DeepEqual`)
// ---------------------------------------------------------------------------

/// How a JSON value is compared, from the field it sits in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A struct, list or scalar: compared structurally.
    Plain,
    /// A `map[string]string`: empty equals absent.
    StringMap,
    /// A `map[string]Quantity`: empty equals absent, values compare as quantities.
    QuantityMap,
    /// A single `resource.Quantity`.
    Quantity,
}

/// The map- and quantity-valued fields reachable from a `PodSpec`.
fn kind_of_field(name: &str) -> Kind {
    match name {
        "limits" | "requests" | "overhead" => Kind::QuantityMap,
        "nodeSelector" | "matchLabels" | "labels" | "annotations" | "volumeAttributes"
        | "options" => Kind::StringMap,
        "sizeLimit" => Kind::Quantity,
        _ => Kind::Plain,
    }
}

/// Like Kubernetes' semantic deep equality: nil and empty lists and maps are equal,
/// and quantities compare by value. Values that differ structurally are compared through
/// their JSON form; structurally equal ones (an update that changes nothing immutable, the
/// common case) are semantically equal without it.
fn semantically_equal<T: serde::Serialize + PartialEq>(a: &T, b: &T) -> bool {
    if a == b {
        return true;
    }
    match (serde_json::to_value(a), serde_json::to_value(b)) {
        (Ok(a), Ok(b)) => values_equal(Some(&a), Some(&b), Kind::Plain),
        _ => false,
    }
}

fn is_unset(value: Option<&Value>, kind: Kind) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::Array(items)) => items.is_empty(),
        Some(Value::Object(map)) => {
            map.is_empty() && matches!(kind, Kind::StringMap | Kind::QuantityMap)
        }
        Some(_) => false,
    }
}

fn values_equal(a: Option<&Value>, b: Option<&Value>, kind: Kind) -> bool {
    if is_unset(a, kind) || is_unset(b, kind) {
        return is_unset(a, kind) && is_unset(b, kind);
    }
    match (a, b) {
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| values_equal(Some(p), Some(q), Kind::Plain))
        }
        (Some(Value::Object(x)), Some(Value::Object(y))) => x.keys().chain(y.keys()).all(|key| {
            let child = match kind {
                Kind::Plain => kind_of_field(key),
                Kind::QuantityMap => Kind::Quantity,
                Kind::StringMap | Kind::Quantity => Kind::Plain,
            };
            values_equal(x.get(key), y.get(key), child)
        }),
        (Some(Value::String(x)), Some(Value::String(y))) if kind == Kind::Quantity => {
            match (x.parse::<Quantity>(), y.parse::<Quantity>()) {
                (Ok(p), Ok(q)) => p == q,
                _ => x == y,
            }
        }
        (a, b) => a == b,
    }
}

// ---------------------------------------------------------------------------
// Rendering of bad values and messages
// ---------------------------------------------------------------------------

fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// apimachinery's `RegexError`, with its examples.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let examples: String = examples
        .iter()
        .map(|e| format!("'{e}', "))
        .collect::<Vec<_>>()
        .join(" or ");
    format!("{msg} (e.g. {examples}regex used for validation is '{fmt}')")
}

fn qualified_name_regex_error() -> String {
    regex_error(
        QUALIFIED_NAME_ERR_MSG,
        QUALIFIED_NAME_FMT,
        &["MyName", "my.name", "123-abc"],
    )
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, anchored.
fn is_qualified_name_part(name: &str) -> bool {
    let bytes = name.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(b))
        }
        _ => false,
    }
}

/// Kubernetes' `IsDNS1123Subdomain` messages.
fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    let is_label = |label: &str| {
        let bytes = label.as_bytes();
        let edge_ok =
            |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        edge_ok(bytes.first())
            && edge_ok(bytes.last())
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
    };
    if !value.split('.').all(is_label) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// A JSON string as Go's `encoding/json` writes it (HTML-safe escaping).
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_list<T>(items: Option<&[T]>, item: impl Fn(&T) -> String) -> String {
    match items {
        None => "null".to_string(),
        Some(items) => format!("[{}]", items.iter().map(item).collect::<Vec<_>>().join(",")),
    }
}

/// A `map[string]string` as JSON (keys sorted, like Go); `null` when absent.
fn json_string_map(map: Option<&BTreeMap<String, String>>) -> String {
    map.map_or_else(
        || "null".to_string(),
        |map| {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}:{}", json_string(k), json_string(v)))
                .collect();
            format!("{{{}}}", entries.join(","))
        },
    )
}

/// An internal `core.NodeSelectorRequirement` as JSON.
fn json_requirement(r: &NodeSelectorRequirement) -> String {
    format!(
        "{{\"Key\":{},\"Operator\":{},\"Values\":{}}}",
        json_string(&r.key),
        json_string(&r.operator),
        json_list(r.values.as_deref(), |v| json_string(v))
    )
}

/// An internal `core.NodeSelectorTerm` as JSON.
fn json_term(term: &NodeSelectorTerm) -> String {
    format!(
        "{{\"MatchExpressions\":{},\"MatchFields\":{}}}",
        json_list(term.match_expressions.as_deref(), json_requirement),
        json_list(term.match_fields.as_deref(), json_requirement)
    )
}

fn json_terms(terms: Option<&[NodeSelectorTerm]>) -> String {
    json_list(terms, json_term)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        PodAffinity, PodAffinityTerm, PodAntiAffinity, PreferredSchedulingTerm,
        ResourceRequirements,
    };
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

    const SPEC_FORBIDDEN: &str = "spec: Forbidden: pod updates may not change fields other than \
        `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,\
        `spec.tolerations` (only additions to existing tolerations),\
        `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";
    const QUALIFIED_NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' \
        or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  \
        or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const TERMS: &str = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
    const SELECTOR_MSG: &str =
        "only additions to spec.nodeSelector are allowed (no mutations or deletions)";

    fn container(name: &str, image: &str) -> Container {
        Container {
            name: name.to_string(),
            image: Some(image.to_string()),
            ..Container::default()
        }
    }

    /// A valid pod named `foo`, with one container, changed by `edit`.
    fn pod_with(edit: impl FnOnce(&mut PodSpec)) -> Pod {
        let mut spec = PodSpec {
            containers: vec![container("con", "pause")],
            ..PodSpec::default()
        };
        edit(&mut spec);
        Pod {
            metadata: ObjectMeta {
                name: Some("foo".to_string()),
                namespace: Some("ns".to_string()),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
            status: None,
        }
    }

    fn plain_pod() -> Pod {
        pod_with(|_| {})
    }

    fn gates(names: &[&str]) -> Option<Vec<PodSchedulingGate>> {
        Some(
            names
                .iter()
                .map(|n| PodSchedulingGate {
                    name: n.to_string(),
                })
                .collect(),
        )
    }

    fn gated(edit: impl FnOnce(&mut PodSpec)) -> Pod {
        pod_with(|s| {
            s.scheduling_gates = gates(&["baz"]);
            edit(s);
        })
    }

    fn selector(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn req(key: &str, value: &str) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.to_string(),
            operator: "In".to_string(),
            values: Some(vec![value.to_string()]),
        }
    }

    fn term(
        exprs: &[NodeSelectorRequirement],
        fields: &[NodeSelectorRequirement],
    ) -> NodeSelectorTerm {
        NodeSelectorTerm {
            match_expressions: (!exprs.is_empty()).then(|| exprs.to_vec()),
            match_fields: (!fields.is_empty()).then(|| fields.to_vec()),
        }
    }

    fn required(terms: Vec<NodeSelectorTerm>) -> Option<Affinity> {
        Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: terms,
                }),
                ..NodeAffinity::default()
            }),
            ..Affinity::default()
        })
    }

    fn preferred(preference: NodeSelectorTerm) -> Option<Affinity> {
        Some(Affinity {
            node_affinity: Some(NodeAffinity {
                preferred_during_scheduling_ignored_during_execution: Some(vec![
                    PreferredSchedulingTerm {
                        weight: 1,
                        preference,
                    },
                ]),
                ..NodeAffinity::default()
            }),
            ..Affinity::default()
        })
    }

    fn pod_affinity_term() -> PodAffinityTerm {
        PodAffinityTerm {
            topology_key: "foo".to_string(),
            label_selector: Some(LabelSelector {
                match_labels: selector(&[("foo", "bar")]),
                ..LabelSelector::default()
            }),
            ..PodAffinityTerm::default()
        }
    }

    fn toleration(key: &str, value: &str, seconds: Option<i64>) -> Toleration {
        Toleration {
            key: Some(key.to_string()),
            value: Some(value.to_string()),
            operator: Some("Equal".to_string()),
            effect: Some("NoExecute".to_string()),
            toleration_seconds: seconds,
        }
    }

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn update(new: &Pod, old: &Pod) -> Vec<String> {
        messages(validate_pod_update(new, old))
    }

    // --- FieldError display -------------------------------------------------

    #[test]
    fn display_matches_apimachinery() {
        let cases = [
            (
                FieldError::forbidden(
                    "spec.schedulingGates[1].name",
                    "only deletion is allowed, but found new scheduling gate 'x'",
                ),
                "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'x'",
            ),
            (
                FieldError::duplicate("spec.schedulingGates[1]", go_quote("foo")),
                "spec.schedulingGates[1]: Duplicate value: \"foo\"",
            ),
            (
                FieldError::required("spec.containers[0].image"),
                "spec.containers[0].image: Required value",
            ),
            (
                FieldError::invalid(
                    "spec.activeDeadlineSeconds",
                    "null".into(),
                    "must not be nil",
                ),
                "spec.activeDeadlineSeconds: Invalid value: null: must not be nil",
            ),
            (
                FieldError::new(
                    ErrorType::TooLong,
                    "f",
                    Some("\"x\"".into()),
                    "may not be more than 1 byte",
                ),
                "f: Too long: may not be more than 1 byte",
            ),
            (
                FieldError::new(ErrorType::TooMany, "f", None, "must have at most 2 items"),
                "f: Too many: must have at most 2 items",
            ),
            (
                FieldError::new(ErrorType::NotFound, "f", Some("\"x\"".into()), ""),
                "f: Not found: \"x\"",
            ),
        ];
        for (err, want) in cases {
            assert_eq!(err.to_string(), want);
        }
    }

    #[test]
    fn json_string_escapes_like_encoding_json() {
        assert_eq!(
            json_string("a<b>&\"\\\n\u{1}\u{2028}é"),
            "\"a\\u003cb\\u003e\\u0026\\\"\\\\\\n\\u0001\\u2028é\""
        );
        assert_eq!(
            json_string_map(selector(&[("b", "2"), ("a", "1")]).as_ref()),
            "{\"a\":\"1\",\"b\":\"2\"}"
        );
        assert_eq!(json_string_map(None), "null");
    }

    // --- is_qualified_name --------------------------------------------------

    // Ported from kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/validate/content/kube_test.go (TestIsLabelKey)
    #[test]
    fn qualified_names_accepted() {
        let long = format!("{}/{}", "a".repeat(253), "b".repeat(63));
        let good = [
            "simple",
            "now-with-dashes",
            "1-starts-with-num",
            "1234",
            "simple/simple",
            "now-with-dashes/simple",
            "now-with-dashes/now-with-dashes",
            "now.with.dots/simple",
            "now-with.dashes-and.dots/simple",
            "1-num.2-num/3-num",
            "1234/5678",
            "1.2.3.4/5678",
            "Uppercase_Is_OK_123",
            "example.com/Uppercase_Is_OK_123",
            "requests.storage-foo",
            &"a".repeat(63),
            &long,
        ];
        for value in good {
            assert_eq!(is_qualified_name(value), Vec::<String>::new(), "{value}");
        }
    }

    // Ported from kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/validate/content/kube_test.go (TestIsLabelKey)
    #[test]
    fn qualified_names_rejected() {
        let long = format!("{}/abc", "a".repeat(254));
        let bad = [
            "nospecialchars%^=@",
            "cantendwithadash-",
            "-cantstartwithadash-",
            "only/one/slash",
            "Example.com/abc",
            "example_com/abc",
            "example.com/",
            "/simple",
            &"a".repeat(64),
            &long,
        ];
        for value in bad {
            assert!(!is_qualified_name(value).is_empty(), "{value}");
        }
    }

    #[test]
    fn qualified_name_messages() {
        let subdomain = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
            characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', \
            regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
        let three_parts = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must \
            start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used \
            for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix \
            and '/' (e.g. 'example.com/MyName')";
        let long_prefix = format!("{}/abc", "a".repeat(254));
        let cases: [(&str, Vec<String>); 7] = [
            ("bad name", vec![QUALIFIED_NAME_PART_MSG.into()]),
            (
                "",
                vec![
                    "name part must be non-empty".into(),
                    QUALIFIED_NAME_PART_MSG.into(),
                ],
            ),
            ("/simple", vec!["prefix part must be non-empty".into()]),
            ("Example.com/abc", vec![subdomain.into()]),
            ("only/one/slash", vec![three_parts.into()]),
            (
                &long_prefix,
                vec!["prefix part must be no more than 253 characters".into()],
            ),
            ("example.com/-x", vec![QUALIFIED_NAME_PART_MSG.into()]),
        ];
        for (value, want) in cases {
            assert_eq!(is_qualified_name(value), want, "{value}");
        }
        assert_eq!(
            is_qualified_name(&"a".repeat(64)),
            vec!["name part must be no more than 63 characters"]
        );
    }

    // --- validate_scheduling_gates ------------------------------------------

    #[test]
    fn scheduling_gates_accepted() {
        let gates = gates(&["example.com/foo", "bar"]).unwrap();
        assert!(validate_scheduling_gates(&gates, "spec.schedulingGates").is_empty());
    }

    #[test]
    fn scheduling_gate_with_invalid_name() {
        let gates = gates(&["bad name"]).unwrap();
        assert_eq!(
            messages(validate_scheduling_gates(&gates, "spec.schedulingGates")),
            [format!(
                "spec.schedulingGates[0]: Invalid value: \"bad name\": {QUALIFIED_NAME_PART_MSG}"
            )]
        );
    }

    #[test]
    fn scheduling_gates_duplicated() {
        let gates = gates(&["foo", "bar", "foo"]).unwrap();
        assert_eq!(
            messages(validate_scheduling_gates(&gates, "spec.schedulingGates")),
            ["spec.schedulingGates[2]: Duplicate value: \"foo\""]
        );
    }

    // --- validate_pod_create ------------------------------------------------

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodCreateWithSchedulingGates)
    #[test]
    fn create_with_node_name_and_gates_is_forbidden() {
        let pod = pod_with(|s| {
            s.node_name = Some("node".into());
            s.scheduling_gates = gates(&["foo"]);
        });
        assert_eq!(
            messages(validate_pod_create(&pod)),
            ["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"]
        );
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodCreateWithSchedulingGates)
    #[test]
    fn create_with_gates_is_allowed() {
        assert!(
            validate_pod_create(&pod_with(|s| s.scheduling_gates = gates(&["foo"]))).is_empty()
        );
        assert!(validate_pod_create(&pod_with(|s| s.node_name = Some("node".into()))).is_empty());
    }

    #[test]
    fn create_validates_gate_names() {
        let pod = pod_with(|s| s.scheduling_gates = gates(&["foo", "foo", "a/b/c"]));
        let errs = messages(validate_pod_create(&pod));
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0], "spec.schedulingGates[1]: Duplicate value: \"foo\"");
        assert!(
            errs[1]
                .starts_with("spec.schedulingGates[2]: Invalid value: \"a/b/c\": a qualified name")
        );
    }

    // --- update: metadata ---------------------------------------------------

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_may_change_labels_but_not_name_or_namespace() {
        let mut labelled = plain_pod();
        labelled.metadata.labels = selector(&[("foo", "bar")]);
        assert!(update(&labelled, &plain_pod()).is_empty(), "labels");

        let mut renamed = plain_pod();
        renamed.metadata.name = Some("bar".into());
        renamed.metadata.namespace = Some("other".into());
        assert_eq!(
            update(&renamed, &plain_pod()),
            [
                "metadata.name: Invalid value: \"bar\": field is immutable",
                "metadata.namespace: Invalid value: \"other\": field is immutable",
            ]
        );
    }

    // --- update: containers, activeDeadlineSeconds, tolerations, grace period --

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_container_rules() {
        let image = |img: &str| pod_with(|s| s.containers = vec![container("container", img)]);
        assert!(
            update(&image("foo:V1"), &image("foo:V2")).is_empty(),
            "image change"
        );
        assert_eq!(
            update(&image(""), &image("foo:V2")),
            ["spec.containers[0].image: Required value"]
        );
        assert_eq!(
            update(&image(" foo:V1"), &image("foo:V2")),
            [
                "spec.containers[0].image: Invalid value: \" foo:V1\": must not have leading or trailing whitespace"
            ]
        );
        let two = pod_with(|s| {
            s.containers = vec![container("foo", "foo:V1"), container("bar", "bar:V1")]
        });
        assert_eq!(
            update(&image("foo:V2"), &two),
            ["spec.containers: Forbidden: pod updates may not add or remove containers"]
        );
        let init =
            |n: usize| pod_with(|s| s.init_containers = Some(vec![container("i", "img"); n]));
        assert_eq!(
            update(&init(1), &init(2)),
            ["spec.initContainers: Forbidden: pod updates may not add or remove containers"]
        );
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_active_deadline_seconds() {
        let ads = |v: Option<i64>| pod_with(|s| s.active_deadline_seconds = v);
        assert!(
            update(&ads(Some(30)), &ads(None)).is_empty(),
            "to positive from nil"
        );
        assert!(
            update(&ads(Some(30)), &ads(Some(31))).is_empty(),
            "to smaller positive"
        );
        assert!(
            update(&ads(Some(30)), &ads(Some(30))).is_empty(),
            "no change"
        );
        assert_eq!(
            update(&ads(Some(31)), &ads(Some(30))),
            [
                "spec.activeDeadlineSeconds: Invalid value: 31: must be less than or equal to previous value"
            ]
        );
        assert_eq!(
            update(&ads(Some(-30)), &ads(None)),
            [
                "spec.activeDeadlineSeconds: Invalid value: -30: must be between 0 and 2147483647, inclusive"
            ]
        );
        assert_eq!(
            update(&ads(None), &ads(Some(30))),
            [
                "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"
            ]
        );
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_tolerations_only_additions() {
        let tolerating = |ts: Vec<Toleration>| pod_with(|s| s.tolerations = Some(ts));
        let old = tolerating(vec![toleration("key1", "value1", Some(20))]);
        let seconds_changed = tolerating(vec![toleration("key1", "value1", Some(10))]);
        assert!(
            update(&seconds_changed, &old).is_empty(),
            "tolerationSeconds may change"
        );
        let added = tolerating(vec![
            toleration("key1", "value1", Some(20)),
            toleration("key2", "value2", Some(30)),
        ]);
        assert!(update(&added, &old).is_empty(), "additions allowed");
        let modified = tolerating(vec![toleration("key1", "value2", None)]);
        assert_eq!(
            update(&modified, &old),
            [
                "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"
            ]
        );
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_termination_grace_period() {
        let grace = |v: i64| pod_with(|s| s.termination_grace_period_seconds = Some(v));
        assert!(update(&grace(1), &grace(-1)).is_empty());
        assert_eq!(update(&grace(0), &grace(-1)), [SPEC_FORBIDDEN]);
    }

    // --- update: scheduling gates -------------------------------------------

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_gates_only_deletion() {
        let with_gates = |names: &[&str]| pod_with(|s| s.scheduling_gates = gates(names));
        let forbidden = |i: usize, name: &str| {
            format!(
                "spec.schedulingGates[{i}].name: Forbidden: only deletion is allowed, but found new scheduling gate '{name}'"
            )
        };
        assert_eq!(
            update(&with_gates(&["foo"]), &plain_pod()),
            [forbidden(0, "foo")],
            "add new gate"
        );
        assert_eq!(
            update(&with_gates(&["bar"]), &with_gates(&["foo"])),
            [forbidden(0, "bar")],
            "mutate gate"
        );
        assert_eq!(
            update(&with_gates(&["baz"]), &with_gates(&["foo", "bar"])),
            [forbidden(0, "baz")],
            "mutate along with deletion"
        );
        assert!(
            update(&plain_pod(), &with_gates(&["foo"])).is_empty(),
            "legal deletion"
        );
    }

    #[test]
    fn update_gates_reorder_and_validation() {
        let with_gates = |names: &[&str]| pod_with(|s| s.scheduling_gates = gates(names));
        assert!(update(&with_gates(&["b", "a"]), &with_gates(&["a", "b", "c"])).is_empty());
        assert_eq!(
            update(&with_gates(&["a", "x", "y", "x"]), &with_gates(&["a"])),
            [
                "spec.schedulingGates[3]: Duplicate value: \"x\"",
                "spec.schedulingGates[2].name: Forbidden: only deletion is allowed, but found new scheduling gate 'y'",
                "spec.schedulingGates[3].name: Forbidden: only deletion is allowed, but found new scheduling gate 'x'",
            ]
        );
    }

    // --- update: nodeSelector -----------------------------------------------

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_node_selector_additions_while_gated() {
        let old = gated(|_| {});
        let added = gated(|s| s.node_selector = selector(&[("foo", "bar")]));
        assert!(
            update(&added, &old).is_empty(),
            "adding node selector is allowed for gated pods"
        );

        let old = gated(|s| s.node_selector = selector(&[("foo", "bar")]));
        let ungated_and_added =
            pod_with(|s| s.node_selector = selector(&[("foo", "bar"), ("foo2", "bar2")]));
        assert!(
            update(&ungated_and_added, &old).is_empty(),
            "old pod spec has scheduling gate, new pod spec does not, and node selector is added"
        );
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_node_selector_mutations_rejected() {
        let old = gated(|s| s.node_selector = selector(&[("foo", "bar")]));
        assert_eq!(
            update(&gated(|_| {}), &old),
            [format!(
                "spec.nodeSelector: Invalid value: null: {SELECTOR_MSG}"
            )],
            "removing node selector is not allowed for gated pods"
        );
        let changed = gated(|s| s.node_selector = selector(&[("foo", "new value")]));
        assert_eq!(
            update(&changed, &old),
            [format!(
                "spec.nodeSelector: Invalid value: {{\"foo\":\"new value\"}}: {SELECTOR_MSG}"
            )],
            "modifying value of existing node selector is not allowed"
        );
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_node_selector_immutable_when_not_gated() {
        let old = pod_with(|s| s.node_selector = selector(&[("foo", "bar")]));
        let added = pod_with(|s| s.node_selector = selector(&[("foo", "bar"), ("foo2", "bar2")]));
        assert_eq!(update(&added, &old), [SPEC_FORBIDDEN], "adding");
        assert_eq!(update(&plain_pod(), &old), [SPEC_FORBIDDEN], "removing");
    }

    // --- update: node affinity ----------------------------------------------

    fn expr_then_added() -> Vec<NodeSelectorTerm> {
        vec![term(
            &[req("expr", "foo"), req("expr2", "foo2")],
            &[req("metadata.name", "foo")],
        )]
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_node_affinity_additions_while_gated() {
        let old = gated(|s| s.affinity = required(vec![term(&[req("expr", "foo")], &[])]));
        let added = gated(|s| s.affinity = required(expr_then_added()));
        assert!(
            update(&added, &old).is_empty(),
            "addition to nodeAffinity is allowed for gated pods"
        );
        let ungated = pod_with(|s| s.affinity = required(expr_then_added()));
        assert!(
            update(&ungated, &old).is_empty(),
            "old pod spec has scheduling gate, new pod spec does not, and node affinity addition occurs"
        );
        let was_nil = gated(|_| {});
        let set = gated(|s| s.affinity = required(vec![term(&[req("expr", "foo")], &[])]));
        assert!(
            update(&set, &was_nil).is_empty(),
            "nil affinity can be mutated for gated pods"
        );
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_node_affinity_immutable_when_not_gated() {
        let old = pod_with(|s| s.affinity = required(vec![term(&[req("expr", "foo")], &[])]));
        let added = pod_with(|s| s.affinity = required(expr_then_added()));
        assert_eq!(update(&added, &old), [SPEC_FORBIDDEN]);
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_node_affinity_term_count_is_fixed() {
        let one_term = vec![term(&[req("expr", "foo")], &[req("metadata.name", "foo")])];
        let old = gated(|s| s.affinity = required(one_term));
        let dropped = gated(|s| {
            s.affinity = Some(Affinity {
                node_affinity: Some(NodeAffinity::default()),
                ..Affinity::default()
            })
        });
        let msg = "no additions/deletions to non-empty NodeSelectorTerms list are allowed";
        assert_eq!(
            update(&dropped, &old),
            [format!("{TERMS}: Invalid value: null: {msg}")]
        );
        let no_node_affinity = gated(|s| s.affinity = Some(Affinity::default()));
        assert_eq!(
            update(&no_node_affinity, &old),
            [format!("{TERMS}: Invalid value: null: {msg}")],
            "new node affinity is nil"
        );
        let two_terms = gated(|s| {
            s.affinity = required(vec![
                term(&[req("expr", "foo")], &[req("metadata.name", "bar")]),
                term(&[req("expr", "foo2")], &[]),
            ])
        });
        assert_eq!(
            update(&two_terms, &old),
            [format!(
                "{TERMS}: Invalid value: [{{\"MatchExpressions\":[{{\"Key\":\"expr\",\"Operator\":\"In\",\"Values\":[\"foo\"]}}],\
                 \"MatchFields\":[{{\"Key\":\"metadata.name\",\"Operator\":\"In\",\"Values\":[\"bar\"]}}]}},\
                 {{\"MatchExpressions\":[{{\"Key\":\"expr\",\"Operator\":\"In\",\"Values\":[\"foo2\"]}}],\"MatchFields\":null}}]: {msg}"
            )],
            "nodeSelectorTerms addition on gated pod should fail"
        );
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_node_affinity_term_mutations_rejected() {
        let msg = "only additions are allowed (no mutations or deletions)";
        let term_error = |json: &str| format!("{TERMS}[0]: Invalid value: {json}: {msg}");
        let both = |e: &str, f: &str| vec![term(&[req("expr", e)], &[req("metadata.name", f)])];

        let old = gated(|s| s.affinity = required(vec![term(&[req("expr", "foo")], &[])]));
        let fields_only =
            gated(|s| s.affinity = required(vec![term(&[], &[req("metadata.name", "foo")])]));
        assert_eq!(
            update(&fields_only, &old),
            [term_error(
                "{\"MatchExpressions\":null,\"MatchFields\":[{\"Key\":\"metadata.name\",\"Operator\":\"In\",\"Values\":[\"foo\"]}]}"
            )],
            "nodeAffinity deletion from MatchExpressions not allowed"
        );

        let old = gated(|s| s.affinity = required(both("foo", "foo")));
        let exprs_only = gated(|s| s.affinity = required(vec![term(&[req("expr", "foo")], &[])]));
        assert_eq!(
            update(&exprs_only, &old),
            [term_error(
                "{\"MatchExpressions\":[{\"Key\":\"expr\",\"Operator\":\"In\",\"Values\":[\"foo\"]}],\"MatchFields\":null}"
            )],
            "nodeAffinity deletion from MatchFields not allowed"
        );
        let expr_changed = gated(|s| s.affinity = required(both("bar", "foo")));
        assert_eq!(
            update(&expr_changed, &old),
            [term_error(
                "{\"MatchExpressions\":[{\"Key\":\"expr\",\"Operator\":\"In\",\"Values\":[\"bar\"]}],\
                 \"MatchFields\":[{\"Key\":\"metadata.name\",\"Operator\":\"In\",\"Values\":[\"foo\"]}]}"
            )],
            "nodeAffinity modification of item in MatchExpressions not allowed"
        );
        let field_changed = gated(|s| s.affinity = required(both("foo", "bar")));
        assert_eq!(
            update(&field_changed, &old),
            [term_error(
                "{\"MatchExpressions\":[{\"Key\":\"expr\",\"Operator\":\"In\",\"Values\":[\"foo\"]}],\
                 \"MatchFields\":[{\"Key\":\"metadata.name\",\"Operator\":\"In\",\"Values\":[\"bar\"]}]}"
            )],
            "nodeAffinity modification of item in MatchFields not allowed"
        );
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_empty_node_selector_term_stays_empty() {
        let old = gated(|s| s.affinity = required(vec![NodeSelectorTerm::default()]));
        let populated = gated(|s| s.affinity = required(vec![term(&[req("expr", "foo")], &[])]));
        assert_eq!(
            update(&populated, &old),
            [format!(
                "{TERMS}[0]: Invalid value: {{\"MatchExpressions\":[{{\"Key\":\"expr\",\"Operator\":\"In\",\"Values\":[\"foo\"]}}],\
                 \"MatchFields\":null}}: only additions are allowed (no mutations or deletions)"
            )],
            "empty NodeSelectorTerm (selects nothing) cannot become populated (selects something)"
        );
        let still_empty = gated(|s| {
            s.affinity = required(vec![NodeSelectorTerm {
                match_expressions: Some(vec![]),
                match_fields: None,
            }])
        });
        assert!(update(&still_empty, &old).is_empty());
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_preferred_node_affinity_is_free_while_gated() {
        let old = gated(|s| s.affinity = preferred(term(&[req("expr", "foo")], &[])));
        let modified = gated(|s| s.affinity = preferred(term(&[req("expr", "foo2")], &[])));
        assert!(
            update(&modified, &old).is_empty(),
            "can be modified for gated pods"
        );
        let added = gated(|s| {
            s.affinity = preferred(term(
                &[req("expr", "foo"), req("expr2", "foo2")],
                &[req("metadata.name", "bar")],
            ))
        });
        assert!(
            update(&added, &old).is_empty(),
            "can have additions for gated pods"
        );
        assert!(
            update(&gated(|_| {}), &old).is_empty(),
            "can have removals for gated pods"
        );
    }

    // Ported from kubernetes/kubernetes pkg/apis/core/validation/validation_test.go (TestValidatePodUpdate)
    #[test]
    fn update_pod_affinity_is_immutable_even_while_gated() {
        let mut new_affinity = required(vec![term(&[req("expr", "foo")], &[])]).unwrap();
        new_affinity.pod_affinity = Some(PodAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![pod_affinity_term()]),
            ..PodAffinity::default()
        });
        let new = gated(|s| s.affinity = Some(new_affinity.clone()));
        assert_eq!(
            update(&new, &gated(|_| {})),
            [SPEC_FORBIDDEN],
            "the podAffinity cannot be updated on gated pods"
        );

        new_affinity.pod_affinity = None;
        new_affinity.pod_anti_affinity = Some(PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![pod_affinity_term()]),
            ..PodAntiAffinity::default()
        });
        let new = gated(|s| s.affinity = Some(new_affinity));
        assert_eq!(
            update(&new, &gated(|_| {})),
            [SPEC_FORBIDDEN],
            "the podAntiAffinity cannot be updated on gated pods"
        );
    }

    // --- update: semantic equality ------------------------------------------

    fn with_cpu_request(cpu: &str) -> Pod {
        pod_with(|s| {
            s.containers[0].resources = Some(ResourceRequirements {
                requests: Some([("cpu".to_string(), ApiQuantity(cpu.to_string()))].into()),
                ..ResourceRequirements::default()
            })
        })
    }

    #[test]
    fn update_compares_specs_semantically() {
        assert!(
            update(&with_cpu_request("1"), &with_cpu_request("1000m")).is_empty(),
            "equal quantities"
        );
        assert_eq!(
            update(&with_cpu_request("2"), &with_cpu_request("1000m")),
            [SPEC_FORBIDDEN],
            "cpu request change"
        );
        let empty = pod_with(|s| {
            s.tolerations = Some(vec![]);
            s.node_selector = Some(BTreeMap::new());
            s.init_containers = Some(vec![]);
        });
        assert!(
            update(&empty, &plain_pod()).is_empty(),
            "empty lists and maps equal absent ones"
        );
        let empty_affinity = pod_with(|s| s.affinity = Some(Affinity::default()));
        assert_eq!(
            update(&empty_affinity, &plain_pod()),
            [SPEC_FORBIDDEN],
            "a set pointer is not nil"
        );
        let moved = pod_with(|s| s.node_name = Some("node1".into()));
        assert_eq!(update(&moved, &plain_pod()), [SPEC_FORBIDDEN], "nodeName");
    }

    #[test]
    fn host_namespaces_are_forbidden_in_a_user_namespace() {
        // provenance: pkg/apis/core/validation/validation_test.go (TestValidateHostUsers),
        // kubernetes v1.37.2, with UserNamespacesHostNetworkSupport off (its default).
        let pod = |extra: serde_json::Value| -> Pod {
            let mut spec = serde_json::json!({"containers": [{"name": "c", "image": "i"}]});
            spec.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            serde_json::from_value(serde_json::json!({"metadata": {"name": "p"}, "spec": spec}))
                .unwrap()
        };
        let errs = validate_pod_create(&pod(
            serde_json::json!({"hostUsers": false, "hostNetwork": true}),
        ));
        assert_eq!(
            errs.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
            vec!["spec.hostNetwork: Forbidden: when `hostUsers` is false"]
        );
        assert_eq!(
            validate_pod_create(&pod(
                serde_json::json!({"hostUsers": false, "hostPID": true, "hostIPC": true})
            ))
            .len(),
            2
        );
        assert!(
            validate_pod_create(&pod(
                serde_json::json!({"hostUsers": true, "hostNetwork": true})
            ))
            .is_empty()
        );
        assert!(validate_pod_create(&pod(serde_json::json!({"hostUsers": false}))).is_empty());
    }
}
