//! Dynamic Resource Allocation objects (`resource.k8s.io/v1`, kube v1.37.2) in the scheduler's
//! form: what the DynamicResources plugin and its structured allocator read of DeviceClasses,
//! ResourceSlices and ResourceClaims, converted once at the API boundary
//! ([`device_class`], [`resource_slice`], [`resource_claim`]).
//!
//! Conventions, as kube's allocator has them
//! (`k8s.io/dynamic-resource-allocation/structured/internal`):
//! - a device's attribute and capacity names are **qualified** here: a name without a domain
//!   (`model`) belongs to the slice's driver (`gpu.example.com/model`), so a selector's
//!   `device.attributes["gpu.example.com"].model` and a constraint's
//!   `matchAttribute: gpu.example.com/model` read the same entry;
//! - a device is named by its [`DeviceId`] (driver, pool, device);
//! - CEL selector expressions are kept as text; compiling them is the plugin's (once per
//!   expression, never per node per cycle).

use super::Sym;
use super::convert::{ConvertError, invalid, node_selector, parse_quantity};
use super::labels::NodeSelector;
use super::quantity::Quantity;
use k8s_openapi::api::resource::v1 as k;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A device in the cluster: `driver/pool/device` (kube's `DeviceID`). Interned: the
/// allocator hashes and compares ids in its inner loops, as integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeviceId {
    pub driver: Sym,
    pub pool: Sym,
    pub device: Sym,
}

impl std::fmt::Display for DeviceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.driver, self.pool, self.device)
    }
}

pub use super::attribute_set::AttributeValue;

/// A device taint (`DeviceTaint`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceTaint {
    pub key: Arc<str>,
    pub value: Arc<str>,
    /// `NoSchedule`, `NoExecute` or `None`.
    pub effect: Arc<str>,
}

impl DeviceTaint {
    pub(crate) fn from_api(t: &k::DeviceTaint) -> DeviceTaint {
        DeviceTaint {
            key: Arc::from(t.key.as_str()),
            value: Arc::from(t.value.as_deref().unwrap_or("")),
            effect: Arc::from(t.effect.as_str()),
        }
    }
}

/// A toleration of device taints (`DeviceToleration`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceToleration {
    pub key: Arc<str>,
    /// `Exists` or `Equal` (the default).
    pub exists: bool,
    pub value: Arc<str>,
    /// Empty: every effect.
    pub effect: Arc<str>,
}

impl DeviceToleration {
    /// kube's `resourceclaim.ToleratesTaint`.
    pub fn tolerates(&self, t: &DeviceTaint) -> bool {
        if !self.effect.is_empty() && self.effect != t.effect {
            return false;
        }
        if !self.key.is_empty() && self.key != t.key {
            return false;
        }
        self.exists || self.value == t.value
    }
}

/// Counters a device draws from one of its slice's (or pool's) counter sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterConsumption {
    pub counter_set: Arc<str>,
    pub counters: BTreeMap<Arc<str>, Quantity>,
    /// DRADeviceCompatibilityGroups: the device goes with others drawing from the counter
    /// set only where their groups meet (none: only with others declaring none).
    pub compatibility_groups: Vec<Arc<str>>,
}

/// Where a slice's devices are (`spec`'s node selection: exactly one of these).
#[derive(Clone, Debug, PartialEq)]
pub enum NodeSelection {
    Node(Sym),
    Selector(NodeSelector),
    AllNodes,
    /// `perDeviceNodeSelection`: each device names its own.
    PerDevice,
}

/// A value derived from a device once, on first use: empty on a clone (the clone may be
/// changed), equal to any other slot (it adds nothing to what the device is).
#[derive(Default)]
pub struct DerivedSlot(std::sync::OnceLock<Arc<dyn std::any::Any + Send + Sync>>);

impl Clone for DerivedSlot {
    fn clone(&self) -> DerivedSlot {
        DerivedSlot::default()
    }
}

impl PartialEq for DerivedSlot {
    fn eq(&self, _: &DerivedSlot) -> bool {
        true
    }
}

impl std::fmt::Debug for DerivedSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "DerivedSlot(set)"
        } else {
            "DerivedSlot"
        })
    }
}

impl DerivedSlot {
    /// Whether the value was made (tests).
    #[cfg(test)]
    pub(crate) fn is_set(&self) -> bool {
        self.0.get().is_some()
    }

    /// The value, made by `make` on first use. `None` if the slot holds another type.
    pub(crate) fn get_or_init<T: std::any::Any + Send + Sync>(
        &self,
        make: impl FnOnce() -> T,
    ) -> Option<&T> {
        self.0.get_or_init(|| Arc::new(make())).downcast_ref::<T>()
    }
}

/// A device of a ResourceSlice (`Device`).
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    pub name: Arc<str>,
    /// `name`, interned (its [`DeviceId`]'s part).
    pub name_sym: Sym,
    /// Qualified attribute name → value (module doc).
    pub attributes: BTreeMap<Arc<str>, AttributeValue>,
    /// The list-valued attributes' element indexes, for matchAttribute's set semantics
    /// (DRAListTypeAttributes; [`super::attribute_set`]). Built by [`Device::index_lists`].
    pub list_index: BTreeMap<Arc<str>, super::attribute_set::ListIndex>,
    /// Qualified capacity name → value.
    pub capacity: BTreeMap<Arc<str>, Quantity>,
    /// The capacities under the names the slice gives them (unqualified where it wrote
    /// them so), with their request policies: what DRAConsumableCapacity's arithmetic reads,
    /// matching claims' capacity requests by these names as kube does.
    pub capacities: BTreeMap<Arc<str>, super::capacity_policy::DeviceCapacity>,
    pub consumes_counters: Vec<CounterConsumption>,
    pub taints: Vec<DeviceTaint>,
    /// DRAConsumableCapacity: several claims may share the device.
    pub allow_multiple_allocations: bool,
    /// With [`NodeSelection::PerDevice`]: the device's own.
    pub nodes: Option<NodeSelection>,
    /// The device's value in the DRA CEL environment, built on first use and shared by
    /// every selector evaluated on the device (`plugins::dynamic_resources::cel`).
    pub(crate) cel_value: DerivedSlot,
}

/// A ResourceSlice (`resource.k8s.io/v1`).
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceSlice {
    pub name: Arc<str>,
    pub driver: Sym,
    pub pool: Arc<str>,
    /// `pool`, interned (its devices' [`DeviceId`] part).
    pub pool_sym: Sym,
    pub pool_generation: i64,
    pub pool_slice_count: i64,
    pub nodes: NodeSelection,
    pub devices: Vec<Device>,
    /// DRAListTypeAttributes: which of `devices` share an attribute's element, per attribute
    /// a constraint named (a cache, built by the allocator).
    pub overlaps: super::attribute_set::OverlapCache,
    /// The devices' attributes and capacities as columns, built on first use
    /// (`plugins::dynamic_resources::cel_columns`).
    pub(crate) columns: DerivedSlot,
    /// Counter set name → counter name → value.
    pub shared_counters: BTreeMap<Arc<str>, BTreeMap<Arc<str>, Quantity>>,
    /// Some device of the slice consumes counters (the allocator's pool check then reads
    /// them; most slices have none).
    pub draws_counters: bool,
    /// Some device declares compatibility groups (kube's `sliceUsesCompatibilityGroups`:
    /// without DRADeviceCompatibilityGroups such a slice is ignored, its pool incomplete).
    pub uses_compatibility_groups: bool,
}

/// A DeviceClass (`resource.k8s.io/v1`).
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceClass {
    pub name: Arc<str>,
    /// CEL expressions every device of the class must meet.
    pub selectors: Vec<Arc<str>>,
    /// DRAExtendedResource: the extended resource this class provides.
    pub extended_resource_name: Option<Sym>,
    /// `metadata.creationTimestamp` in Unix seconds (the newest class naming an extended
    /// resource wins).
    pub created: i64,
}

/// How many devices a request wants (`allocationMode`, `count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocationMode {
    ExactCount(i64),
    All,
}

/// One way of meeting a request: `exactly`, or one entry of `firstAvailable`
/// (DRAPrioritizedList).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestAlternative {
    /// The request's name, or `request/subrequest` for an entry of `firstAvailable`.
    pub name: Arc<str>,
    pub device_class_name: Arc<str>,
    pub selectors: Vec<Arc<str>>,
    pub mode: AllocationMode,
    pub admin_access: bool,
    pub tolerations: Vec<DeviceToleration>,
    /// DRAConsumableCapacity: capacity name (as the claim writes it; kube matches it with
    /// the device's as written) → amount wanted.
    pub capacity: BTreeMap<Arc<str>, Quantity>,
}

/// A claim's request (`DeviceRequest`): one alternative, or several in order of preference.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceRequest {
    pub name: Arc<str>,
    pub alternatives: Vec<RequestAlternative>,
    /// True for `firstAvailable` (the alternatives' names carry the subrequest).
    pub prioritized: bool,
}

/// A constraint over the devices of some requests (`DeviceConstraint`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceConstraint {
    /// The requests it binds (empty: every request of the claim).
    pub requests: Vec<Arc<str>>,
    /// Qualified attribute every device must have, with one value.
    pub match_attribute: Option<Arc<str>>,
    /// Qualified attribute whose values must all differ.
    pub distinct_attribute: Option<Arc<str>>,
}

/// One allocated device (`DeviceRequestAllocationResult`).
#[derive(Clone, Debug, PartialEq)]
pub struct AllocatedDevice {
    pub request: Arc<str>,
    pub device: DeviceId,
    pub admin_access: bool,
    /// DRAConsumableCapacity: the share's ID on a device allocated several times.
    pub share_id: Option<Arc<str>>,
    /// DRAConsumableCapacity: what the share consumes of each of the device's capacities
    /// (named as the slice names them).
    pub consumed_capacity: BTreeMap<Arc<str>, Quantity>,
}

/// A claim's allocation (`AllocationResult`).
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    pub devices: Vec<AllocatedDevice>,
    /// The nodes the devices can be used from (`None`: every node).
    pub node_selector: Option<NodeSelector>,
}

/// A ResourceClaim (`resource.k8s.io/v1`).
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceClaim {
    pub namespace: Sym,
    pub name: Arc<str>,
    pub uid: Arc<str>,
    pub requests: Vec<DeviceRequest>,
    pub constraints: Vec<DeviceConstraint>,
    pub allocation: Option<Allocation>,
    /// `status.reservedFor`: the consumers' UIDs.
    pub reserved_for: Vec<Arc<str>>,
    /// The names of the PodGroups among `reservedFor` (entries of `scheduling.k8s.io`
    /// `podgroups`, DRAWorkloadResourceClaims): a member pod knows its group's name, not its
    /// UID.
    pub reserved_for_groups: Vec<Arc<str>>,
    pub deleting: bool,
    /// The UID of the owner reference with `controller: true` (the pod a claim was generated
    /// for, kube's `metav1.IsControlledBy`).
    pub controller_uid: Option<Arc<str>>,
    /// The controlling owner's name when it is a `scheduling.k8s.io` PodGroup (a claim the
    /// ResourceClaim controller made for a group's template entry).
    pub controller_pod_group: Option<Arc<str>>,
    /// Made by the scheduler for a pod's extended resources backed by DRA (kube's annotation
    /// `resource.kubernetes.io/extended-resource-claim: "true"`).
    pub extended: bool,
}

/// The API group of PodGroups (kube's `schedulingapi.GroupName`).
pub const SCHEDULING_GROUP: &str = "scheduling.k8s.io";

impl ResourceClaim {
    /// kube's `resourceclaim.IsReservedForPod`: `reservedFor` names the pod, or (with
    /// `accept_group`, DRAWorkloadResourceClaims) the pod's PodGroup by name.
    pub fn is_reserved_for(&self, pod: &crate::api::Pod, accept_group: bool) -> bool {
        self.reserved_for.contains(&pod.uid)
            || (accept_group
                && pod
                    .spec
                    .scheduling_group
                    .as_ref()
                    .is_some_and(|g| self.reserved_for_groups.contains(g)))
    }
}

/// What a claim is reserved for (an entry of `status.reservedFor`, kube's
/// `ResourceClaimConsumerReference` as `resourceclaim.BindTo` makes it): the pod, or its
/// PodGroup when the pod's entry is one of the group's (DRAWorkloadResourceClaims).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimConsumer {
    Pod { name: Arc<str>, uid: Arc<str> },
    PodGroup { name: Arc<str>, uid: Arc<str> },
}

impl ClaimConsumer {
    pub fn uid(&self) -> &Arc<str> {
        match self {
            ClaimConsumer::Pod { uid, .. } | ClaimConsumer::PodGroup { uid, .. } => uid,
        }
    }

    /// The API's form: pods in the core group (no `apiGroup`), PodGroups in
    /// `scheduling.k8s.io`.
    pub fn to_api(&self) -> k::ResourceClaimConsumerReference {
        let (api_group, resource, name, uid) = match self {
            ClaimConsumer::Pod { name, uid } => (None, "pods", name, uid),
            ClaimConsumer::PodGroup { name, uid } => {
                (Some(SCHEDULING_GROUP.to_string()), "podgroups", name, uid)
            }
        };
        k::ResourceClaimConsumerReference {
            api_group,
            resource: resource.into(),
            name: name.to_string(),
            uid: uid.to_string(),
        }
    }
}

/// kube's `resourceapi.ExtendedResourceClaimAnnotation`.
pub const EXTENDED_RESOURCE_CLAIM_ANNOTATION: &str =
    "resource.kubernetes.io/extended-resource-claim";

/// `name` qualified by `driver` when it has no domain of its own (module doc).
fn qualified(driver: &str, name: &str) -> Arc<str> {
    if name.contains('/') {
        Arc::from(name)
    } else {
        Arc::from(format!("{driver}/{name}"))
    }
}

fn attribute(a: &k::DeviceAttribute, path: &str) -> Result<AttributeValue, ConvertError> {
    fn strs(v: &[String]) -> Arc<[Arc<str>]> {
        v.iter().map(|s| Arc::from(s.as_str())).collect()
    }
    let set = [
        a.bool.is_some(),
        a.int.is_some(),
        a.string.is_some(),
        a.version.is_some(),
        a.bools.is_some(),
        a.ints.is_some(),
        a.strings.is_some(),
        a.versions.is_some(),
    ];
    if set.iter().filter(|x| **x).count() != 1 {
        return Err(invalid(
            path.to_string(),
            "",
            "exactly one value must be specified",
        ));
    }
    for (field, len) in [
        ("bools", a.bools.as_ref().map(Vec::len)),
        ("ints", a.ints.as_ref().map(Vec::len)),
        ("strings", a.strings.as_ref().map(Vec::len)),
        ("versions", a.versions.as_ref().map(Vec::len)),
    ] {
        if len == Some(0) {
            return Err(invalid(
                format!("{path}.{field}"),
                "[]",
                "must not be empty if specified",
            ));
        }
    }
    Ok(match a {
        k::DeviceAttribute { bool: Some(b), .. } => AttributeValue::Bool(*b),
        k::DeviceAttribute { int: Some(i), .. } => AttributeValue::Int(*i),
        k::DeviceAttribute {
            string: Some(s), ..
        } => AttributeValue::String(Arc::from(s.as_str())),
        k::DeviceAttribute {
            version: Some(v), ..
        } => AttributeValue::Version(Arc::from(v.as_str())),
        k::DeviceAttribute { bools: Some(v), .. } => AttributeValue::Bools(v.as_slice().into()),
        k::DeviceAttribute { ints: Some(v), .. } => AttributeValue::Ints(v.as_slice().into()),
        k::DeviceAttribute {
            strings: Some(v), ..
        } => AttributeValue::Strings(strs(v)),
        k::DeviceAttribute {
            versions: Some(v), ..
        } => AttributeValue::Versions(strs(v)),
        _ => unreachable!("one value is set"),
    })
}

fn selectors(
    sel: Option<&Vec<k::DeviceSelector>>,
    path: &str,
) -> Result<Vec<Arc<str>>, ConvertError> {
    sel.into_iter()
        .flatten()
        .enumerate()
        .map(|(i, s)| {
            s.cel
                .as_ref()
                .map(|c| Arc::from(c.expression.as_str()))
                .ok_or_else(|| invalid(format!("{path}[{i}].cel"), "", "Required value"))
        })
        .collect()
}

fn tolerations(t: Option<&Vec<k::DeviceToleration>>) -> Vec<DeviceToleration> {
    t.into_iter()
        .flatten()
        .map(|t| DeviceToleration {
            key: Arc::from(t.key.as_deref().unwrap_or("")),
            exists: t.operator.as_deref() == Some("Exists"),
            value: Arc::from(t.value.as_deref().unwrap_or("")),
            effect: Arc::from(t.effect.as_deref().unwrap_or("")),
        })
        .collect()
}

fn counters(
    c: &BTreeMap<String, k::Counter>,
    path: &str,
) -> Result<BTreeMap<Arc<str>, Quantity>, ConvertError> {
    c.iter()
        .map(|(n, v)| {
            Ok((
                Arc::from(n.as_str()),
                parse_quantity(|| format!("{path}[{n}].value"), &v.value)?,
            ))
        })
        .collect()
}

fn nodes_of(
    node_name: Option<&String>,
    selector: Option<&k8s_openapi::api::core::v1::NodeSelector>,
    all: Option<bool>,
    per_device: Option<bool>,
    path: &str,
) -> Result<Option<NodeSelection>, ConvertError> {
    let mut out = Vec::new();
    if let Some(n) = node_name {
        out.push(NodeSelection::Node(Sym::new(n)));
    }
    if let Some(s) = selector {
        out.push(NodeSelection::Selector(node_selector(
            s,
            &format!("{path}.nodeSelector"),
        )?));
    }
    if all == Some(true) {
        out.push(NodeSelection::AllNodes);
    }
    if per_device == Some(true) {
        out.push(NodeSelection::PerDevice);
    }
    if out.len() > 1 {
        return Err(invalid(
            path.to_string(),
            "",
            "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
        ));
    }
    Ok(out.pop())
}

/// kube's declarative rules for `compatibilityGroups`: at most 2
/// (`DeviceCompatibilityGroupsMaxSize`), each an RFC 1123 label, no two alike.
fn compatibility_groups(
    groups: Option<&[String]>,
    path: &str,
) -> Result<Vec<Arc<str>>, ConvertError> {
    let groups = groups.unwrap_or_default();
    if groups.len() > 2 {
        return Err(invalid(
            path.to_string(),
            "",
            format!("Too many: {}: must have at most 2 items", groups.len()),
        ));
    }
    for (i, g) in groups.iter().enumerate() {
        let label = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        let b = g.as_bytes();
        let ok = !b.is_empty()
            && b.len() <= 63
            && label(b[0])
            && label(b[b.len() - 1])
            && b.iter().all(|&c| label(c) || c == b'-');
        if !ok {
            return Err(invalid(
                format!("{path}[{i}]"),
                g,
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ));
        }
        if groups[..i].contains(g) {
            return Err(invalid(format!("{path}[{i}]"), g, "Duplicate value"));
        }
    }
    Ok(groups.iter().map(|g| Arc::from(g.as_str())).collect())
}

/// kube's `ResourceSliceMaxAttributeValuesPerDevice`: a device's attribute values, each
/// list element counted (DRAListTypeAttributes).
const MAX_ATTRIBUTE_VALUES_PER_DEVICE: usize = 48;

fn device(d: &k::Device, driver: &str, path: &str) -> Result<Device, ConvertError> {
    let mut attributes = BTreeMap::new();
    let mut values = 0;
    for (n, a) in d.attributes.iter().flatten() {
        let v = attribute(a, &format!("{path}.attributes[{n}]"))?;
        values += super::attribute_set::len(&v);
        attributes.insert(qualified(driver, n), v);
    }
    if values > MAX_ATTRIBUTE_VALUES_PER_DEVICE {
        return Err(invalid(
            path.to_string(),
            &values.to_string(),
            format!(
                "the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES_PER_DEVICE}"
            ),
        ));
    }
    let shared = d.allow_multiple_allocations == Some(true);
    let mut capacity = BTreeMap::new();
    let mut capacities = BTreeMap::new();
    for (n, c) in d.capacity.iter().flatten() {
        let q = parse_quantity(|| format!("{path}.capacity[{n}].value"), &c.value)?;
        let policy = (c.request_policy.as_ref())
            .map(|p| {
                let at = format!("{path}.capacity[{n}].requestPolicy");
                super::capacity_policy::request_policy(p, &q, &c.value.0, shared, &at)
            })
            .transpose()?;
        capacity.insert(qualified(driver, n), q);
        let c = super::capacity_policy::DeviceCapacity { value: q, policy };
        capacities.insert(Arc::from(n.as_str()), c);
    }
    let consumes_counters = d
        .consumes_counters
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| {
            Ok(CounterConsumption {
                counter_set: Arc::from(c.counter_set.as_str()),
                counters: counters(
                    &c.counters,
                    &format!("{path}.consumesCounters[{i}].counters"),
                )?,
                compatibility_groups: compatibility_groups(
                    c.compatibility_groups.as_deref(),
                    &format!("{path}.consumesCounters[{i}].compatibilityGroups"),
                )?,
            })
        })
        .collect::<Result<_, ConvertError>>()?;
    let taints = d
        .taints
        .iter()
        .flatten()
        .map(DeviceTaint::from_api)
        .collect();
    let mut device = Device {
        name: Arc::from(d.name.as_str()),
        name_sym: Sym::new(&d.name),
        attributes,
        list_index: BTreeMap::new(),
        capacity,
        capacities,
        consumes_counters,
        taints,
        allow_multiple_allocations: shared,
        cel_value: DerivedSlot::default(),
        nodes: nodes_of(
            d.node_name.as_ref(),
            d.node_selector.as_ref(),
            d.all_nodes,
            None,
            path,
        )?,
    };
    device.index_lists();
    Ok(device)
}

impl Device {
    /// Attribute `name` as a set (none when the device lacks it).
    pub(crate) fn attribute_set(&self, name: &str) -> Option<super::attribute_set::SetView<'_>> {
        let value = self.attributes.get(name)?;
        let index = self.list_index.get(name).map(|b| &**b);
        Some(super::attribute_set::SetView::new(value, index))
    }

    /// Builds [`Device::list_index`] from `attributes` (after the attributes change).
    pub fn index_lists(&mut self) {
        self.list_index = self
            .attributes
            .iter()
            .filter_map(|(n, v)| Some((n.clone(), super::attribute_set::index(v)?)))
            .collect();
    }
}

/// A ResourceSlice in the scheduler's form; one error line for what kube's validation
/// refuses of what the scheduler reads.
pub fn resource_slice(s: &k::ResourceSlice) -> Result<ResourceSlice, ConvertError> {
    let spec = &s.spec;
    let driver = spec.driver.as_str();
    let nodes = nodes_of(
        spec.node_name.as_ref(),
        spec.node_selector.as_ref(),
        spec.all_nodes,
        spec.per_device_node_selection,
        "spec",
    )?
    .ok_or_else(|| {
        invalid(
            "spec".into(),
            "",
            "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
        )
    })?;
    let mut devices = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for (i, d) in spec.devices.iter().flatten().enumerate() {
        let path = format!("spec.devices[{i}]");
        if !names.insert(d.name.as_str()) {
            return Err(invalid(format!("{path}.name"), &d.name, "Duplicate value"));
        }
        devices.push(device(d, driver, &path)?);
    }
    let mut shared_counters = BTreeMap::new();
    for (i, c) in spec.shared_counters.iter().flatten().enumerate() {
        shared_counters.insert(
            Arc::from(c.name.as_str()),
            counters(&c.counters, &format!("spec.sharedCounters[{i}].counters"))?,
        );
    }
    Ok(ResourceSlice {
        name: Arc::from(s.metadata.name.as_deref().unwrap_or("")),
        driver: Sym::new(driver),
        pool: Arc::from(spec.pool.name.as_str()),
        pool_sym: Sym::new(&spec.pool.name),
        pool_generation: spec.pool.generation,
        pool_slice_count: spec.pool.resource_slice_count,
        nodes,
        draws_counters: devices.iter().any(|d| !d.consumes_counters.is_empty()),
        uses_compatibility_groups: (devices.iter().flat_map(|d| &d.consumes_counters))
            .any(|c| !c.compatibility_groups.is_empty()),
        devices,
        overlaps: Default::default(),
        columns: Default::default(),
        shared_counters,
    })
}

/// A DeviceClass in the scheduler's form.
pub fn device_class(c: &k::DeviceClass) -> Result<DeviceClass, ConvertError> {
    let spec = c.spec.as_ref();
    Ok(DeviceClass {
        name: Arc::from(c.metadata.name.as_deref().unwrap_or("")),
        selectors: selectors(spec.and_then(|s| s.selectors.as_ref()), "spec.selectors")?,
        extended_resource_name: spec
            .and_then(|s| s.extended_resource_name.as_deref())
            .map(Sym::new),
        created: c
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(0, |t| t.0.as_second()),
    })
}

fn mode(m: Option<&str>, count: Option<i64>, path: &str) -> Result<AllocationMode, ConvertError> {
    match m.unwrap_or("ExactCount") {
        "ExactCount" => {
            let n = count.unwrap_or(1);
            if n <= 0 {
                return Err(invalid(
                    format!("{path}.count"),
                    &n.to_string(),
                    "must be greater than zero",
                ));
            }
            Ok(AllocationMode::ExactCount(n))
        }
        "All" => Ok(AllocationMode::All),
        other => Err(invalid(
            format!("{path}.allocationMode"),
            other,
            "supported values: \"All\", \"ExactCount\"",
        )),
    }
}

fn capacity_requests(
    c: Option<&k::CapacityRequirements>,
    path: &str,
) -> Result<BTreeMap<Arc<str>, Quantity>, ConvertError> {
    c.and_then(|c| c.requests.as_ref())
        .into_iter()
        .flatten()
        .map(|(n, q)| {
            Ok((
                Arc::from(n.as_str()),
                parse_quantity(|| format!("{path}.capacity.requests[{n}]"), q)?,
            ))
        })
        .collect()
}

fn request(r: &k::DeviceRequest, path: &str) -> Result<DeviceRequest, ConvertError> {
    let name: Arc<str> = Arc::from(r.name.as_str());
    match (&r.exactly, &r.first_available) {
        (Some(e), None) => {
            let p = format!("{path}.exactly");
            Ok(DeviceRequest {
                name: name.clone(),
                alternatives: vec![RequestAlternative {
                    name,
                    device_class_name: Arc::from(e.device_class_name.as_str()),
                    selectors: selectors(e.selectors.as_ref(), &format!("{p}.selectors"))?,
                    mode: mode(e.allocation_mode.as_deref(), e.count, &p)?,
                    admin_access: e.admin_access == Some(true),
                    tolerations: tolerations(e.tolerations.as_ref()),
                    capacity: capacity_requests(e.capacity.as_ref(), &p)?,
                }],
                prioritized: false,
            })
        }
        (None, Some(subs)) if !subs.is_empty() => {
            let alternatives = subs
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let p = format!("{path}.firstAvailable[{i}]");
                    Ok(RequestAlternative {
                        name: Arc::from(format!("{}/{}", r.name, s.name)),
                        device_class_name: Arc::from(s.device_class_name.as_str()),
                        selectors: selectors(s.selectors.as_ref(), &format!("{p}.selectors"))?,
                        mode: mode(s.allocation_mode.as_deref(), s.count, &p)?,
                        admin_access: false,
                        tolerations: tolerations(s.tolerations.as_ref()),
                        capacity: capacity_requests(s.capacity.as_ref(), &p)?,
                    })
                })
                .collect::<Result<_, ConvertError>>()?;
            Ok(DeviceRequest {
                name,
                alternatives,
                prioritized: true,
            })
        }
        _ => Err(invalid(
            path.to_string(),
            &r.name,
            "exactly one of `exactly` or `firstAvailable` is required",
        )),
    }
}

/// A claim's `status.allocation` in the scheduler's form.
pub fn allocation(a: &k::AllocationResult) -> Result<Allocation, ConvertError> {
    let devices = a
        .devices
        .as_ref()
        .and_then(|d| d.results.as_ref())
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, r)| {
            let consumed = r
                .consumed_capacity
                .iter()
                .flatten()
                .map(|(n, q)| {
                    Ok((
                        Arc::from(n.as_str()),
                        parse_quantity(
                            || {
                                format!(
                                    "status.allocation.devices.results[{i}].consumedCapacity[{n}]"
                                )
                            },
                            q,
                        )?,
                    ))
                })
                .collect::<Result<_, ConvertError>>()?;
            Ok(AllocatedDevice {
                request: Arc::from(r.request.as_str()),
                device: DeviceId {
                    driver: Sym::new(&r.driver),
                    pool: Sym::new(&r.pool),
                    device: Sym::new(&r.device),
                },
                admin_access: r.admin_access == Some(true),
                share_id: r.share_id.as_deref().map(Arc::from),
                consumed_capacity: consumed,
            })
        })
        .collect::<Result<_, ConvertError>>()?;
    let node_selector = a
        .node_selector
        .as_ref()
        .map(|s| node_selector(s, "status.allocation.nodeSelector"))
        .transpose()?;
    Ok(Allocation {
        devices,
        node_selector,
    })
}

/// A ResourceClaim in the scheduler's form.
pub fn resource_claim(c: &k::ResourceClaim) -> Result<ResourceClaim, ConvertError> {
    let devices = c.spec.as_ref().and_then(|s| s.devices.as_ref());
    let requests = devices
        .and_then(|d| d.requests.as_ref())
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, r)| request(r, &format!("spec.devices.requests[{i}]")))
        .collect::<Result<_, ConvertError>>()?;
    let constraints = devices
        .and_then(|d| d.constraints.as_ref())
        .into_iter()
        .flatten()
        .map(|c| DeviceConstraint {
            requests: c
                .requests
                .iter()
                .flatten()
                .map(|r| Arc::from(r.as_str()))
                .collect(),
            match_attribute: c.match_attribute.as_deref().map(Arc::from),
            distinct_attribute: c.distinct_attribute.as_deref().map(Arc::from),
        })
        .collect();
    let status = c.status.as_ref();
    let controller = c
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true));
    Ok(ResourceClaim {
        namespace: Sym::new(c.metadata.namespace.as_deref().unwrap_or("")),
        name: Arc::from(c.metadata.name.as_deref().unwrap_or("")),
        uid: Arc::from(c.metadata.uid.as_deref().unwrap_or("")),
        requests,
        constraints,
        allocation: status
            .and_then(|s| s.allocation.as_ref())
            .map(allocation)
            .transpose()?,
        reserved_for: status
            .and_then(|s| s.reserved_for.as_ref())
            .into_iter()
            .flatten()
            .map(|r| Arc::from(r.uid.as_str()))
            .collect(),
        reserved_for_groups: status
            .and_then(|s| s.reserved_for.as_ref())
            .into_iter()
            .flatten()
            .filter(|r| {
                r.api_group.as_deref() == Some(SCHEDULING_GROUP) && r.resource == "podgroups"
            })
            .map(|r| Arc::from(r.name.as_str()))
            .collect(),
        deleting: c.metadata.deletion_timestamp.is_some(),
        controller_uid: controller.map(|o| Arc::from(o.uid.as_str())),
        controller_pod_group: controller
            .filter(|o| {
                o.kind == "PodGroup" && o.api_version.starts_with(&format!("{SCHEDULING_GROUP}/"))
            })
            .map(|o| Arc::from(o.name.as_str())),
        extended: c
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION))
            .is_some_and(|v| v == "true"),
    })
}

/// An allocation in the API's form (`status.allocation`), as the scheduler writes it in
/// PreBind: the inverse of the conversion [`resource_claim`] applies.
pub fn allocation_to_api(a: &Allocation) -> k::AllocationResult {
    use k8s_openapi::api::core::v1 as core;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as KQuantity;
    let requirement = |r: &super::Requirement| core::NodeSelectorRequirement {
        key: r.key.to_string(),
        operator: r.op.as_str().to_string(),
        values: match r.op {
            super::Operator::Exists | super::Operator::DoesNotExist => None,
            super::Operator::Gt | super::Operator::Lt => Some(vec![r.int_value.to_string()]),
            _ => Some(r.values.iter().map(|v| v.to_string()).collect()),
        },
    };
    let terms = |reqs: &[super::Requirement]| {
        (!reqs.is_empty()).then(|| reqs.iter().map(requirement).collect())
    };
    k::AllocationResult {
        devices: Some(k::DeviceAllocationResult {
            results: Some(
                a.devices
                    .iter()
                    .map(|d| k::DeviceRequestAllocationResult {
                        request: d.request.to_string(),
                        driver: d.device.driver.to_string(),
                        pool: d.device.pool.to_string(),
                        device: d.device.device.to_string(),
                        admin_access: d.admin_access.then_some(true),
                        share_id: d.share_id.as_deref().map(str::to_string),
                        consumed_capacity: (!d.consumed_capacity.is_empty()).then(|| {
                            d.consumed_capacity
                                .iter()
                                .map(|(k, q)| {
                                    (k.to_string(), KQuantity(format!("{}m", q.milli_value())))
                                })
                                .collect()
                        }),
                        ..Default::default()
                    })
                    .collect(),
            ),
            config: None,
        }),
        node_selector: a.node_selector.as_ref().map(|s| core::NodeSelector {
            node_selector_terms: s
                .terms
                .iter()
                .map(|t| core::NodeSelectorTerm {
                    match_expressions: terms(&t.match_expressions),
                    match_fields: terms(&t.match_fields),
                })
                .collect(),
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn slice(spec: serde_json::Value) -> Result<ResourceSlice, ConvertError> {
        let s: k::ResourceSlice =
            serde_json::from_value(json!({"metadata": {"name": "s"}, "spec": spec})).unwrap();
        resource_slice(&s)
    }

    #[test]
    fn a_slices_attributes_and_capacity_are_qualified_by_its_driver() {
        let s = slice(json!({
            "driver": "gpu.example.com",
            "pool": {"name": "node-0", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "node-0",
            "devices": [{
                "name": "gpu-0",
                "attributes": {
                    "model": {"string": "a100"},
                    "other.example.com/numa": {"int": 1},
                    "driverVersion": {"version": "1.2.3"}
                },
                "capacity": {"memory": {"value": "80Gi"}}
            }]
        }))
        .unwrap();
        assert_eq!(s.nodes, NodeSelection::Node(Sym::new("node-0")));
        let d = &s.devices[0];
        assert_eq!(
            d.attributes.get("gpu.example.com/model"),
            Some(&AttributeValue::String("a100".into()))
        );
        assert_eq!(
            d.attributes.get("other.example.com/numa"),
            Some(&AttributeValue::Int(1))
        );
        assert_eq!(
            d.attributes.get("gpu.example.com/driverVersion"),
            Some(&AttributeValue::Version("1.2.3".into()))
        );
        assert_eq!(
            d.capacity.get("gpu.example.com/memory"),
            Some(&Quantity::parse("80Gi").unwrap())
        );
    }

    #[test]
    fn a_slice_names_its_nodes_one_way_and_its_devices_once() {
        let pool = json!({"name": "p", "generation": 1, "resourceSliceCount": 1});
        let none = slice(json!({"driver": "d", "pool": pool})).unwrap_err();
        assert!(none.detail.contains("exactly one of"), "{none}");
        let two = slice(json!({"driver": "d", "pool": pool, "nodeName": "n", "allNodes": true}))
            .unwrap_err();
        assert!(two.detail.contains("exactly one of"), "{two}");
        let dup = slice(json!({
            "driver": "d", "pool": pool, "allNodes": true,
            "devices": [{"name": "x"}, {"name": "x"}]
        }))
        .unwrap_err();
        assert_eq!(dup.field, "spec.devices[1].name");
        assert_eq!(dup.detail, "Duplicate value");
        let two_values = slice(json!({
            "driver": "d", "pool": pool, "allNodes": true,
            "devices": [{"name": "x", "attributes": {"a": {"int": 1, "bool": true}}}]
        }))
        .unwrap_err();
        assert_eq!(two_values.field, "spec.devices[0].attributes[a]");
        let all = slice(json!({"driver": "d", "pool": pool, "allNodes": true})).unwrap();
        assert_eq!(all.nodes, NodeSelection::AllNodes);
    }

    fn claim(v: serde_json::Value) -> Result<ResourceClaim, ConvertError> {
        let c: k::ResourceClaim = serde_json::from_value(v).unwrap();
        resource_claim(&c)
    }

    #[test]
    fn a_claims_requests_constraints_and_allocation_are_read() {
        let c = claim(json!({
            "metadata": {"name": "c", "namespace": "ns", "uid": "u1"},
            "spec": {"devices": {
                "requests": [
                    {"name": "one", "exactly": {"deviceClassName": "gpu",
                        "selectors": [{"cel": {"expression": "device.driver == \"d\""}}]}},
                    {"name": "pick", "firstAvailable": [
                        {"name": "big", "deviceClassName": "gpu", "count": 2},
                        {"name": "all", "deviceClassName": "gpu", "allocationMode": "All"}
                    ]}
                ],
                "constraints": [{"requests": ["one", "pick"], "matchAttribute": "d/numa"}]
            }},
            "status": {
                "allocation": {"devices": {"results": [
                    {"request": "one", "driver": "d", "pool": "p", "device": "x",
                     "consumedCapacity": {"memory": "1Gi"}}
                ]}},
                "reservedFor": [{"resource": "pods", "name": "pod", "uid": "pod-uid"}]
            }
        }))
        .unwrap();
        assert_eq!((c.namespace, &*c.name), (Sym::new("ns"), "c"));
        let one = &c.requests[0];
        assert!(!one.prioritized);
        assert_eq!(one.alternatives[0].mode, AllocationMode::ExactCount(1));
        assert_eq!(&*one.alternatives[0].selectors[0], "device.driver == \"d\"");
        let pick = &c.requests[1];
        assert!(pick.prioritized);
        let names: Vec<&str> = pick.alternatives.iter().map(|a| &*a.name).collect();
        assert_eq!(names, ["pick/big", "pick/all"]);
        assert_eq!(pick.alternatives[0].mode, AllocationMode::ExactCount(2));
        assert_eq!(pick.alternatives[1].mode, AllocationMode::All);
        assert_eq!(c.constraints[0].match_attribute.as_deref(), Some("d/numa"));
        let a = c.allocation.unwrap();
        assert_eq!(a.devices[0].device.to_string(), "d/p/x");
        assert_eq!(
            a.devices[0].consumed_capacity.get("memory"),
            Some(&Quantity::parse("1Gi").unwrap())
        );
        assert_eq!(c.reserved_for, vec![Arc::<str>::from("pod-uid")]);
    }

    #[test]
    fn a_request_with_both_forms_or_a_zero_count_is_refused() {
        let both = claim(json!({
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"devices": {"requests": [{"name": "r",
                "exactly": {"deviceClassName": "gpu"},
                "firstAvailable": [{"name": "s", "deviceClassName": "gpu"}]}]}}
        }))
        .unwrap_err();
        assert_eq!(both.field, "spec.devices.requests[0]");
        let zero = claim(json!({
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"devices": {"requests": [{"name": "r",
                "exactly": {"deviceClassName": "gpu", "count": 0}}]}}
        }))
        .unwrap_err();
        assert_eq!(zero.field, "spec.devices.requests[0].exactly.count");
    }

    /// kube's `ToleratesTaint` (kubernetes/kubernetes
    /// staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/devicetoleration.go).
    #[test]
    fn tolerations_match_taints_as_kubes_do() {
        let taint = DeviceTaint {
            key: "k".into(),
            value: "v".into(),
            effect: "NoSchedule".into(),
        };
        let tol = |key: &str, exists: bool, value: &str, effect: &str| DeviceToleration {
            key: key.into(),
            exists,
            value: value.into(),
            effect: effect.into(),
        };
        assert!(tol("k", false, "v", "NoSchedule").tolerates(&taint));
        assert!(tol("k", true, "", "").tolerates(&taint));
        assert!(
            tol("", true, "", "").tolerates(&taint),
            "empty key with Exists: every taint"
        );
        assert!(!tol("k", false, "w", "").tolerates(&taint));
        assert!(!tol("k", true, "", "NoExecute").tolerates(&taint));
        assert!(!tol("j", true, "", "").tolerates(&taint));
    }
}
