//! The scheduler's side of the store ([`ClusterClient`]): binds (and injected bind
//! failures), PodScheduled=False status updates, deletes of preemption victims, and the
//! listers the plugins read (namespace labels, default spreading selectors, PDBs).

use super::*;

impl Store {
    /// A write to a pod's `/status` (kube's status patches): unless `skip` says the pod
    /// takes no such write, `edit` changes the object's status and the converted pod alike,
    /// the resourceVersion moves on, and the informer's update reaches the scheduler. False
    /// when the pod is gone or skipped.
    pub(super) fn patch_pod_status(
        &self,
        key: &PodKey,
        skip: impl FnOnce(&PodRec) -> bool,
        edit: impl FnOnce(&mut corev1::PodStatus, &mut Pod),
    ) -> bool {
        let mut st = self.state.lock();
        let Some(rec) = st.pod(key) else {
            return false;
        };
        if skip(rec) {
            return false;
        }
        st.rv += 1;
        let rv = st.rv;
        let (rec, _) = st.pod_mut(key).expect("found above");
        let mut obj = (*rec.obj).clone();
        obj.metadata.resource_version = Some(rv.to_string());
        let old = rec.pod.clone();
        let mut new = (*old).clone();
        edit(obj.status.get_or_insert_with(Default::default), &mut new);
        new.resource_version = rv;
        let new = Arc::new(new);
        rec.obj = Arc::new(obj);
        rec.pod = new.clone();
        if let Some(s) = self.sched() {
            s.on_pod_update(&old, new);
        }
        true
    }
}

impl ClusterClient for Store {
    fn bind(&self, pod: &Pod, node: Sym) -> Result<(), String> {
        let node_name = node.to_string_lossy();
        let keep_nomination = self.api_gates().nominated_node_name_kept_at_binding;
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
        if !keep_nomination && new.nominated_node_name.take().is_some() {
            // kube's binding (ClearingNominatedNodeNameAfterBinding) clears the status field.
            let mut o = (*rec.obj).clone();
            if let Some(s) = o.status.as_mut() {
                s.nominated_node_name = None;
            }
            rec.obj = Arc::new(o);
        }
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

    /// kube's `updatePodGroupCondition`: the PodGroup's `PodGroupInitiallyScheduled`
    /// condition through its `/status` (observedGeneration the group's generation; the
    /// transition time kept when the status does not change, as `SetStatusCondition` does;
    /// nothing written when nothing changes). The informer's update reaches the scheduler.
    fn set_pod_group_scheduled(
        &self,
        group: &tidegate_engine::api::PodGroup,
        scheduled: bool,
        reason: &str,
        message: &str,
    ) {
        // kube v1.38 sets `CompositePodGroupInitiallyScheduled` on a composite group.
        let (kind, cond_type) = if group.composite {
            (
                &scheduling::COMPOSITE_POD_GROUP,
                "CompositePodGroupInitiallyScheduled",
            )
        } else {
            (&scheduling::POD_GROUP, "PodGroupInitiallyScheduled")
        };
        let ns = group.key.namespace.to_string_lossy();
        let Some(obj) = self
            .kind_store(kind)
            .get(&generic::key_of(kind, &ns, &group.key.name))
        else {
            return;
        };
        let mut json = obj.to_json();
        let generation = obj.meta().generation.unwrap_or(group.generation);
        let status = if scheduled { "True" } else { "False" };
        let conds = json
            .as_object_mut()
            .map(|o| o.entry("status").or_insert_with(|| serde_json::json!({})))
            .and_then(|s| s.as_object_mut())
            .map(|s| {
                s.entry("conditions")
                    .or_insert_with(|| serde_json::json!([]))
            });
        let Some(serde_json::Value::Array(conds)) = conds else {
            return;
        };
        let now = self.timestamp();
        let mut cond = serde_json::json!({
            "type": cond_type,
            "status": status,
            "reason": reason,
            "message": message,
            "observedGeneration": generation,
            "lastTransitionTime": serde_json::to_value(&now).unwrap_or_default(),
        });
        match conds.iter_mut().find(|c| c["type"] == cond_type) {
            Some(c) => {
                if c["status"] == "True" && !scheduled {
                    return;
                }
                if c["status"] == status {
                    cond["lastTransitionTime"] = c["lastTransitionTime"].clone();
                }
                if *c == cond {
                    return;
                }
                *c = cond;
            }
            None => conds.push(cond),
        }
        let api_version = json["apiVersion"].as_str().unwrap_or("").to_string();
        let Some(v) = kind.version(&api_version) else {
            return;
        };
        let Ok(decoded) = (v.decode)(&json) else {
            return;
        };
        let o = generic::StoredObject {
            kind,
            obj: Arc::from(decoded),
        };
        // A conflict or a deleted group: kube logs the failed patch and goes on.
        let _ = self.update_object(&o, &ns, generic::Subresource::Status);
    }

    /// kube patches `status.nominatedNodeName` (PostFilter's nomination, or preemption
    /// clearing a lower-priority pod's): the object carries it, and the informer's update
    /// reaches the scheduler, whose nominator follows it (kube's `UpdateNominatedPod`). A later
    /// status write without it (updateAny's status PUT) then drops the nomination, as in kube.
    fn set_nominated_node_name(&self, pod: &Pod, node: Option<Sym>) {
        self.patch_pod_status(
            &pod.key,
            |rec| rec.node.is_some() || rec.terminating || rec.pod.nominated_node_name == node,
            |status, p| {
                status.nominated_node_name = node.map(|n| n.to_string());
                p.nominated_node_name = node;
            },
        );
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

    fn bind_volume_to_claim(
        &self,
        pv: &tidegate_engine::api::volume::PersistentVolume,
        claim: &tidegate_engine::api::volume::PersistentVolumeClaim,
    ) -> Result<(), String> {
        self.bind_volume(pv, claim)
    }

    fn set_claim_selected_node(
        &self,
        claim: &tidegate_engine::api::volume::PersistentVolumeClaim,
        node: Sym,
    ) -> Result<(), String> {
        self.select_node_for_claim(claim, node)
    }

    fn reserve_resource_claim(
        &self,
        claim: &tidegate_engine::api::dra::ResourceClaim,
        allocation: Option<&tidegate_engine::api::dra::Allocation>,
        consumer: &tidegate_engine::api::dra::ClaimConsumer,
    ) -> Result<(), String> {
        self.reserve_claim(claim, allocation, consumer)
    }

    fn unreserve_resource_claim_for(
        &self,
        claim: &tidegate_engine::api::dra::ResourceClaim,
        uid: &str,
    ) -> Result<(), String> {
        let ns = claim.namespace.to_string_lossy();
        self.unreserve_claim(&ns, &claim.name, uid, false)
    }

    /// kube logs a failed unreserve patch and goes on.
    fn unreserve_resource_claim(
        &self,
        claim: &tidegate_engine::api::dra::ResourceClaim,
        pod: &Pod,
    ) {
        let ns = claim.namespace.to_string_lossy();
        let _ = self.unreserve_claim(&ns, &claim.name, &pod.uid, false);
    }

    fn create_resource_claim(
        &self,
        claim: k8s_openapi::api::resource::v1::ResourceClaim,
    ) -> Result<Arc<tidegate_engine::api::dra::ResourceClaim>, String> {
        self.create_claim(claim)
    }

    fn set_extended_resource_claim_status(
        &self,
        pod: &Pod,
        status: corev1::PodExtendedResourceClaimStatus,
    ) -> Result<(), String> {
        if self.set_extended_resource_claim_status(&pod.key, status) {
            Ok(())
        } else {
            Err(format!("pods {:?} not found", pod.key.to_string()))
        }
    }

    fn delete_resource_claim(
        &self,
        claim: &tidegate_engine::api::dra::ResourceClaim,
    ) -> Result<(), String> {
        self.delete_claim(claim)
    }

    fn deallocate_resource_claim(
        &self,
        claim: &tidegate_engine::api::dra::ResourceClaim,
    ) -> Result<(), String> {
        self.deallocate_claim(claim)
    }
}
