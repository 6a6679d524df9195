//! The scheduler's side of the store ([`ClusterClient`]): binds (and injected bind
//! failures), PodScheduled=False status updates, deletes of preemption victims, and the
//! listers the plugins read (namespace labels, default spreading selectors, PDBs).

use super::*;

impl ClusterClient for Store {
    fn bind(&self, pod: &Pod, node: Sym) -> Result<(), String> {
        let node_name = node.to_string_lossy();
        let mut st = self.state.lock();
        if !st.nodes.contains_key(&node_name) {
            return Err(format!("nodes {node_name:?} not found"));
        }
        st.bind_calls += 1;
        if let Some((rate, seed)) = st.bind_failure
            && crate::cluster::inject::draw(&[
                seed,
                0xb1d,
                crate::cluster::inject::stable_hash(&pod.key.to_string()),
                st.bind_calls,
            ]) < rate
        {
            return Err(format!(
                "Internal error occurred: binding pod {:?} to node {node_name:?} refused (injected bind failure)",
                pod.key.to_string()
            ));
        }
        let rv = st.rv + 1;
        // The pod's labels are needed only by collection windows with a label selector.
        let need_labels = st
            .collectors
            .iter()
            .flatten()
            .any(|c| !c.selector.is_empty());
        let Some((rec, n)) = st.pod_mut(&pod.key) else {
            return Err(format!("pods {:?} not found", pod.key.to_string()));
        };
        if rec.node.is_some() {
            return Err(format!(
                "Operation cannot be fulfilled on pods/binding {:?}: pod {} is already assigned to node {:?}",
                pod.name,
                pod.name,
                rec.node.map(|n| n.to_string_lossy()).unwrap_or_default()
            ));
        }
        if rec.terminating {
            return Err(format!("pods {:?} is being deleted", pod.key.to_string()));
        }
        if rec.pod.is_gated() {
            return Err(format!(
                "Operation cannot be fulfilled on pods/binding {:?}: pod {} has non-empty .spec.schedulingGates",
                pod.name, pod.name
            ));
        }
        rec.node = Some(node);
        let obj = need_labels.then(|| rec.obj.clone());
        let had_condition = rec.condition.take().is_some();
        let old = rec.pod.clone();
        let mut new = (*old).clone();
        new.node_name = Some(node);
        let new = Arc::new(new);
        rec.pod = new.clone();
        n.bound += 1;
        if had_condition {
            n.attempted_unbound -= 1;
        }
        st.rv = rv;
        st.binds += 1;
        st.pods_by_node
            .entry(node)
            .or_default()
            .insert(pod.key.clone());
        let ns = pod.key.split().0;
        let now = self.clock.now();
        for c in st.collectors.iter_mut().flatten() {
            if c.namespaces.contains(ns)
                && (c.selector.is_empty()
                    || obj.as_deref().is_some_and(|o| labels_match(o, &c.selector)))
                && let Some(start) = c.start
            {
                c.binds.push(now.saturating_sub(start));
            }
        }
        if let Some(s) = self.sched() {
            s.on_pod_update(&old, new);
        }
        self.notify_scheduled(&pod.key);
        self.changed.notify_all();
        Ok(())
    }

    fn set_unschedulable(&self, pod: &Pod, reason: &str, message: &str) {
        let mut st = self.state.lock();
        let Some((rec, n)) = st.pod_mut(&pod.key) else {
            return;
        };
        if rec.node.is_some() {
            return;
        }
        let first = rec.condition.is_none();
        rec.condition = Some(Arc::new((reason.to_string(), message.to_string())));
        if first {
            n.attempted_unbound += 1;
        }
        self.changed.notify_all();
    }

    /// kube patches `status.nominatedNodeName` (PostFilter's nomination, or preemption
    /// clearing a lower-priority pod's): the object carries it, and the informer's update
    /// reaches the scheduler, whose nominator follows it (kube's `UpdateNominatedPod`). A later
    /// status write without it (updateAny's status PUT) then drops the nomination, as in kube.
    fn set_nominated_node_name(&self, pod: &Pod, node: Option<Sym>) {
        let mut st = self.state.lock();
        let Some(rec) = st.pod(&pod.key) else {
            return;
        };
        if rec.node.is_some() || rec.terminating || rec.pod.nominated_node_name == node {
            return;
        }
        let mut obj = (*rec.obj).clone();
        st.rv += 1;
        let rv = st.rv;
        obj.metadata.resource_version = Some(rv.to_string());
        obj.status
            .get_or_insert_with(Default::default)
            .nominated_node_name = node.map(|n| n.to_string());
        let (rec, _) = st.pod_mut(&pod.key).expect("found above");
        let old = rec.pod.clone();
        let mut new = (*old).clone();
        new.nominated_node_name = node;
        new.resource_version = rv;
        let new = Arc::new(new);
        rec.obj = Arc::new(obj);
        rec.pod = new.clone();
        if let Some(s) = self.sched() {
            s.on_pod_update(&old, new);
        }
    }

    /// Preemption's victims: deleted as the API server would (finalizers honoured), with the
    /// informer's delete event to the scheduler; they count as deleted in the summary.
    fn delete_pod(&self, pod: &Pod) -> Result<(), String> {
        if Store::delete_pod(self, &pod.key) {
            Ok(())
        } else {
            Err(format!("pods {:?} not found", pod.key.to_string()))
        }
    }

    fn pod_exists_unassigned(&self, pod: &Pod) -> bool {
        self.state
            .lock()
            .pod(&pod.key)
            .is_some_and(|r| r.node.is_none() && !r.terminating)
    }

    fn namespace_labels(&self, namespace: Sym) -> Option<Arc<Labels>> {
        self.ns_labels.read().get(&namespace).cloned()
    }

    /// kube's `helper.DefaultSelector` over the Services of the pod's namespace: the
    /// selectors of those that select the pod, merged (a Service without a selector selects
    /// nothing). ReplicaSets, StatefulSets and ReplicationControllers are not stored here.
    fn default_spread_selector(&self, pod: &Pod) -> Option<tidegate_engine::api::LabelSelector> {
        let svcs = self.services.read();
        let mut merged: BTreeMap<String, String> = BTreeMap::new();
        for r in svcs.get(&pod.namespace)? {
            if let Some((set, sel)) = &r.selector
                && sel.matches(&pod.labels)
            {
                merged.extend(set.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        if merged.is_empty() {
            return None;
        }
        selector_of(merged).ok()
    }

    fn pod_disruption_budgets(&self) -> Vec<Arc<tidegate_engine::api::PodDisruptionBudget>> {
        self.pdbs.read().clone()
    }
}
