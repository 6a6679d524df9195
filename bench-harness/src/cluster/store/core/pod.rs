//! Pods (kube's `pkg/registry/core/pod`): created from shared templates (the store keeps
//! each pod's identity, binding and condition beside the shared template object and converted
//! spec, and builds the full object only when an update needs it), updated (PUT, the resize
//! subresource, a gate removed), and deleted as kube's pod strategy does (finalizers, grace
//! periods). Each change goes to the scheduler's pod handlers under the store lock and, after
//! it is released, to the pod watchers (controllers). The pods of each node are indexed.

use crate::cluster::store::*;

impl Store {
    /// Creates a pod from `template` (its metadata's name or generateName, its spec). The
    /// template object and `spec` (its converted spec) are shared, not copied: the store keeps
    /// only the pod's identity besides them and builds the full object when an update needs it.
    pub fn create_pod(
        &self,
        template: &Arc<corev1::Pod>,
        namespace: &str,
        spec: Arc<PodSpecInfo>,
    ) -> Result<PodKey, StoreError> {
        let dropped;
        let (template, spec) = match self.drop_scheduling_group(template, &spec) {
            Some((t, s)) => {
                dropped = t;
                (&dropped, s)
            }
            None => (template, spec),
        };
        let errs = validate_pod_create(template);
        let mut st = self.state.lock();
        let name = Self::name_for(&mut st, &template.metadata, |s, n| {
            s.has_pod(&PodKey::new(namespace, n))
        })?;
        if !errs.is_empty() {
            return Err(invalid_pod(&name, &errs));
        }
        let key = PodKey::new(namespace, &name);
        if st.has_pod(&key) {
            return Err(StoreError::AlreadyExists { kind: "pod", name });
        }
        self.ensure_namespace(&mut st, namespace);
        st.rv += 1;
        st.uid += 1;
        let node = template
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .filter(|n| !n.is_empty());
        let labels = match &st.last_labels {
            Some((t, l)) if Arc::ptr_eq(t, template) => l.clone(),
            _ => {
                let l = Arc::new(convert::labels_of(&template.metadata.labels));
                st.last_labels = Some((template.clone(), l.clone()));
                l
            }
        };
        let uid = format!("uid-{:08}", st.uid);
        let node = node.as_deref().map(Sym::new);
        let internal = Arc::new(convert::pod_from_parts(
            convert::PodParts {
                namespace,
                name: &name,
                uid: &uid,
                resource_version: st.rv,
                node_name: node,
                nominated_node_name: template
                    .status
                    .as_ref()
                    .and_then(|s| s.nominated_node_name.as_deref())
                    .filter(|n| !n.is_empty())
                    .map(Sym::new),
            },
            labels,
            spec,
        ));
        let gated = internal.is_gated();
        let condition = gated.then(|| GATED_CONDITION.clone());
        st.created += 1;
        let ns = st.ns.get_mut(namespace).expect("ensure_namespace made it");
        ns.stats.pods += 1;
        if node.is_some() {
            ns.stats.bound += 1;
        } else if condition.is_some() {
            ns.stats.attempted_unbound += 1;
        }
        ns.pods.insert(
            key.clone(),
            PodRec {
                obj: template.clone(),
                pod: internal.clone(),
                node,
                condition,
                terminating: false,
            },
        );
        if let Some(n) = node {
            st.pods_by_node.entry(n).or_default().insert(key.clone());
        }
        if node.is_some() {
            // Upstream's throughput collector counts a pod whose add event already carries a
            // nodeName as scheduled, as it counts a bind.
            let now = self.clock.now();
            for c in st.collectors.iter_mut().flatten() {
                if c.namespaces.contains(namespace)
                    && labels_match(template, &c.selector)
                    && let Some(start) = c.start
                {
                    c.binds.push(now.saturating_sub(start));
                }
            }
        }
        if let Some(s) = self.sched() {
            s.on_pod_add(internal.clone());
        }
        if node.is_some() {
            self.notify_scheduled(&key);
        }
        self.changed.notify_all();
        drop(st);
        for w in self.watchers() {
            w.pod_added(self, &internal);
        }
        Ok(key)
    }

    /// kube's `dropDisabledPodFields` for `spec.schedulingGroup`: with the GenericWorkload gate
    /// off the API server drops the field (no stored pod has it then, so an update drops it
    /// too). The pod and its converted spec without it, or None when there is nothing to drop.
    fn drop_scheduling_group(
        &self,
        template: &Arc<corev1::Pod>,
        spec: &Arc<PodSpecInfo>,
    ) -> Option<(Arc<corev1::Pod>, Arc<PodSpecInfo>)> {
        let has = template
            .spec
            .as_ref()
            .is_some_and(|s| s.scheduling_group.is_some());
        if self.api_gates().generic_workload || (!has && spec.scheduling_group.is_none()) {
            return None;
        }
        let mut t = (**template).clone();
        if let Some(s) = t.spec.as_mut() {
            s.scheduling_group = None;
        }
        let mut info = (**spec).clone();
        info.scheduling_group = None;
        Some((Arc::new(t), Arc::new(info)))
    }

    /// Removes one scheduling gate from a pod (a controller's API update: kube allows
    /// removing gates, never adding them).
    pub fn remove_scheduling_gate(&self, key: &PodKey, gate: &str) -> Result<(), StoreError> {
        let mut st = self.state.lock();
        let Some(rec) = st.pod(key) else {
            return Err(StoreError::NotFound {
                kind: "pod",
                name: key.to_string(),
            });
        };
        let mut obj = Self::materialize(key, rec);
        if let Some(spec) = obj.spec.as_mut()
            && let Some(gates) = spec.scheduling_gates.as_mut()
        {
            gates.retain(|g| g.name != gate);
        }
        self.replace_pod(&mut st, key, obj)
    }

    /// Delivers the key of every pod of `namespace` that becomes scheduled (bound, or created
    /// with a nodeName) from now on, until the receiver is dropped.
    pub fn watch_scheduled(&self, namespace: &str) -> crossbeam::channel::Receiver<PodKey> {
        let (tx, rx) = crossbeam::channel::unbounded();
        self.scheduled_watchers
            .lock()
            .push((namespace.to_string(), tx));
        rx
    }

    pub(in crate::cluster::store) fn notify_scheduled(&self, key: &PodKey) {
        let mut w = self.scheduled_watchers.lock();
        if w.is_empty() {
            return;
        }
        let ns = key.split().0;
        // A dropped receiver ends its watch.
        w.retain(|(n, tx)| n != ns || tx.send(key.clone()).is_ok());
    }

    /// The full object of a stored pod (template or last PUT, with its identity and binding).
    pub(in crate::cluster::store) fn materialize(key: &PodKey, rec: &PodRec) -> corev1::Pod {
        let mut o = (*rec.obj).clone();
        let (ns, name) = key.split();
        o.metadata.name = Some(name.to_string());
        o.metadata.namespace = Some(ns.to_string());
        o.metadata.uid = Some(rec.pod.uid.to_string());
        o.metadata.resource_version = Some(rec.pod.resource_version.to_string());
        if let (Some(n), Some(spec)) = (rec.node, o.spec.as_mut()) {
            spec.node_name = Some(n.to_string_lossy());
        }
        o
    }

    /// The key of the stored pod `new` names in `namespace`, and the stored object as it is.
    pub(in crate::cluster::store) fn stored_pod(
        st: &State,
        new: &corev1::Pod,
        namespace: &str,
    ) -> Result<(PodKey, corev1::Pod), StoreError> {
        let name = new
            .metadata
            .name
            .as_deref()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| StoreError::Invalid("metadata.name: Required value".into()))?;
        let key = PodKey::new(namespace, name);
        let rec = st.pod(&key).ok_or(StoreError::NotFound {
            kind: "pod",
            name: key.to_string(),
        })?;
        let obj = Self::materialize(&key, rec);
        Ok((key, obj))
    }

    /// Stores `obj` as the new version of the pod at `key` (converted, binding kept, a new
    /// resourceVersion) and sends the update event. Removing the last gate of an unbound pod
    /// clears its SchedulingGated condition (the scheduler sets its own later).
    pub(in crate::cluster::store) fn replace_pod(
        &self,
        st: &mut State,
        key: &PodKey,
        mut obj: corev1::Pod,
    ) -> Result<(), StoreError> {
        let name = key.split().1;
        let spec = obj.spec.clone().unwrap_or_default();
        let info = convert::pod_spec_info(&spec)
            .map_err(|e| StoreError::Invalid(format!("Pod {name:?} is invalid: {e}")))?;
        st.rv += 1;
        obj.metadata.resource_version = Some(st.rv.to_string());
        let obj = Arc::new(obj);
        let (rec, ns) = st.pod_mut(key).expect("the caller found it");
        let old_internal = rec.pod.clone();
        let mut internal = convert::pod_with_spec(&obj, Arc::new(info));
        internal.node_name = old_internal.node_name;
        let internal = Arc::new(internal);
        rec.obj = obj;
        rec.pod = internal.clone();
        if old_internal.is_gated() && !internal.is_gated() && rec.node.is_none() {
            rec.condition = None;
            ns.attempted_unbound -= 1;
        }
        if let Some(s) = self.sched() {
            s.on_pod_update(&old_internal, internal);
        }
        self.changed.notify_all();
        Ok(())
    }

    /// PUT of a pod object (the `updateAny` op). Status and binding are kept.
    pub fn update_pod(&self, new: &corev1::Pod, namespace: &str) -> Result<(), StoreError> {
        let mut st = self.state.lock();
        let (key, old_obj) = Self::stored_pod(&st, new, namespace)?;
        let mut obj = new.clone();
        obj.metadata.namespace = Some(namespace.to_string());
        obj.metadata.uid = old_obj.metadata.uid.clone();
        if !self.api_gates().generic_workload
            && let Some(spec) = obj.spec.as_mut()
        {
            // kube's dropDisabledPodFields (see `drop_scheduling_group`).
            spec.scheduling_group = None;
        }
        let bound = old_obj.spec.as_ref().and_then(|s| s.node_name.clone());
        if let (Some(n), Some(spec)) = (bound, obj.spec.as_mut())
            && spec.node_name.as_deref().is_none_or(str::is_empty)
        {
            spec.node_name = Some(n);
        }
        let errs = validate_pod_update(&obj, &old_obj);
        if !errs.is_empty() {
            return Err(invalid_pod(key.split().1, &errs));
        }
        self.replace_pod(&mut st, &key, obj)
    }

    /// `updateAny` with `subresources: [resize]`, as upstream's executor does it: a PUT on
    /// `pods/resize`, then a PUT on `pods/status` with the same object.
    ///
    /// The resize subresource (kube's `podResizeStrategy`) keeps everything of the stored pod
    /// but the containers' `resources` and `resizePolicy`, taken from `new` by container name
    /// (a container `new` names that the pod lacks is refused). The status PUT then replaces
    /// the status with `new`'s (`qosClass` backfilled, spec and binding kept).
    ///
    /// Without a kubelet nothing else writes the status: a template without one (upstream's
    /// `pod-preemptor-resize.yaml`) leaves no `allocatedResources` and no `PodResizePending`
    /// condition, so the scheduler counts the new requests at once (kube's `PodRequests` falls
    /// back to the spec) and nothing is deferred. A template that carries the kubelet's answer
    /// (container statuses with `allocatedResources`, a `PodResizePending` condition) gets it
    /// stored and seen by the scheduler (`api::convert::pod_resize_status`).
    pub fn resize_pod(&self, new: &corev1::Pod, namespace: &str) -> Result<(), StoreError> {
        let mut st = self.state.lock();
        let (key, mut obj) = Self::stored_pod(&st, new, namespace)?;
        let new_containers = new
            .spec
            .as_ref()
            .map(|s| s.containers.as_slice())
            .unwrap_or_default();
        let spec = obj.spec.get_or_insert_with(Default::default);
        for nc in new_containers {
            let Some(c) = spec.containers.iter_mut().find(|c| c.name == nc.name) else {
                return Err(StoreError::Invalid(format!(
                    "Pod {:?} is invalid: spec.containers: Not found: {:?}",
                    key.split().1,
                    nc.name
                )));
            };
            c.resources = nc.resources.clone();
            c.resize_policy = nc.resize_policy.clone();
        }
        let qos = obj.status.as_ref().and_then(|s| s.qos_class.clone());
        let mut status = new.status.clone().unwrap_or_default();
        if status.qos_class.is_none() {
            status.qos_class = qos;
        }
        obj.status = Some(status);
        self.replace_pod(&mut st, &key, obj)
    }

    /// Deletes a pod as the API server does. A pod with finalizers only gets a
    /// deletionTimestamp (it is "terminating" until its finalizers are removed, which nothing
    /// here does). So does a bound pod with a grace period (its `terminationGracePeriodSeconds`,
    /// which the API defaults to 30): the API server waits for its kubelet to confirm, and a
    /// scheduler_perf cluster has none, so it stays terminating on its node (kube's pod
    /// strategy, `CheckGracefulDelete`: an unbound pod, or a grace period of 0, goes at once).
    pub fn delete_pod(&self, key: &PodKey) -> bool {
        self.delete_pod_with_grace(key, None)
    }

    /// [`Store::delete_pod`] with `DeleteOptions.gracePeriodSeconds`: `Some(g)` overrides the
    /// pod's own period (scheduler_perf's steady state deletes with 0).
    pub fn delete_pod_with_grace(&self, key: &PodKey, grace_seconds: Option<i64>) -> bool {
        let mut st = self.state.lock();
        let Some((rec, _)) = st.pod_mut(key) else {
            return false;
        };
        if rec.terminating {
            return true;
        }
        let graceful = rec.node.is_some()
            && grace_seconds
                .or_else(|| {
                    let spec = rec.obj.spec.as_ref()?;
                    spec.termination_grace_period_seconds
                })
                .unwrap_or(30)
                > 0;
        if graceful
            || rec
                .obj
                .metadata
                .finalizers
                .as_ref()
                .is_some_and(|f| !f.is_empty())
        {
            rec.terminating = true;
            let old = rec.pod.clone();
            let mut new = (*old).clone();
            new.deletion_timestamp = true;
            let new = Arc::new(new);
            rec.pod = new.clone();
            st.rv += 1;
            if let Some(s) = self.sched() {
                s.on_pod_update(&old, new);
            }
            self.changed.notify_all();
            return true;
        }
        let Some(ns) = st.ns.get_mut(key.split().0) else {
            return false;
        };
        let Some(rec) = ns.pods.remove(key) else {
            return false;
        };
        let n = &mut ns.stats;
        n.pods -= 1;
        if rec.node.is_some() {
            n.bound -= 1;
        } else if rec.condition.is_some() {
            n.attempted_unbound -= 1;
        }
        st.deleted += 1;
        if let Some(n) = rec.node
            && let Some(on_node) = st.pods_by_node.get_mut(&n)
        {
            on_node.remove(key);
            if on_node.is_empty() {
                st.pods_by_node.remove(&n);
            }
        }
        let mut gone = (*rec.pod).clone();
        gone.node_name = rec.node;
        if let Some(s) = self.sched() {
            s.on_pod_delete(&gone);
        }
        self.changed.notify_all();
        drop(st);
        for w in self.watchers() {
            w.pod_deleted(self, &gone);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::store::{ApiGates, PodWatcher, Store};
    use parking_lot::Mutex;
    use std::sync::Arc;
    use tidegate_engine::api::{Pod, convert};

    /// Records the group of each pod created, as the scheduler's informer sees it.
    #[derive(Default)]
    struct Groups(Mutex<Vec<Option<String>>>);

    impl PodWatcher for Groups {
        fn pod_added(&self, _: &Store, pod: &Arc<Pod>) {
            let g = pod.spec.scheduling_group.as_deref().map(str::to_string);
            self.0.lock().push(g);
        }
        fn pod_deleted(&self, _: &Store, _: &Pod) {}
    }

    /// kube's `dropDisabledPodFields`: with GenericWorkload off the API server drops
    /// `spec.schedulingGroup`, so the pod joins no group; with it on the pod keeps it.
    #[test]
    fn scheduling_group_is_dropped_while_generic_workload_is_off() {
        let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"generateName": "p-"},
            "spec": {"schedulingGroup": {"podGroupName": "gang-0"},
                     "containers": [{"name": "c", "image": "pause"}]},
        }))
        .unwrap();
        let spec = Arc::new(convert::pod_spec_info(pod.spec.as_ref().unwrap()).unwrap());
        assert_eq!(spec.scheduling_group.as_deref(), Some("gang-0"));
        let pod = Arc::new(pod);
        let store = Store::new(1);
        let seen = Arc::new(Groups::default());
        store.add_watcher(seen.clone());
        store.create_pod(&pod, "ns", spec.clone()).unwrap();
        store.set_api_gates(ApiGates {
            generic_workload: true,
            ..ApiGates::default()
        });
        store.create_pod(&pod, "ns", spec).unwrap();
        assert_eq!(*seen.0.lock(), vec![None, Some("gang-0".to_string())]);
    }
}
