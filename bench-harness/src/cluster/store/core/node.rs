//! Nodes (kube's `pkg/registry/core/node`): created as createNodes and createAny make them,
//! updated (updateAny's PUT, the injected label updates, a kubelet's declared features), and
//! deleted; each change goes to the scheduler's node handlers. Nodes are kept converted (the
//! scheduler's `Node`) beside the object.

use crate::cluster::store::*;

impl Store {
    /// The names of the stored nodes, sorted.
    pub fn node_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.state.lock().nodes.keys().cloned().collect();
        v.sort_unstable();
        v
    }

    /// The stored nodes as the scheduler reads them, sorted by name.
    pub fn nodes(&self) -> Vec<Arc<tidegate_engine::api::Node>> {
        let st = self.state.lock();
        let mut v: Vec<_> = st.nodes.values().map(|(_, n)| n.clone()).collect();
        drop(st);
        v.sort_by_key(|n| n.name.to_string_lossy());
        v
    }

    /// A label update of node `name` (`--inject node-updates`): label `key` set to `value`,
    /// and the scheduler gets the update event. False when the node is gone.
    pub fn touch_node(&self, name: &str, key: &str, value: &str) -> bool {
        let Some((obj, _)) = self.state.lock().nodes.get(name).cloned() else {
            return false;
        };
        let mut obj = (*obj).clone();
        obj.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(key.to_string(), value.to_string());
        match convert::node(&obj) {
            Ok(node) => self.update_node(obj, node).is_ok(),
            Err(_) => false,
        }
    }

    /// A status update of node `name` setting `status.declaredFeatures` (a kubelet's report;
    /// scheduler_perf's `nodedeclaredfeatures` tests do it by hand); the scheduler gets the
    /// update event. False when the node is gone.
    pub fn set_node_declared_features(&self, name: &str, features: &[String]) -> bool {
        let Some((obj, _)) = self.state.lock().nodes.get(name).cloned() else {
            return false;
        };
        let mut obj = (*obj).clone();
        obj.status
            .get_or_insert_with(Default::default)
            .declared_features = Some(features.to_vec());
        match convert::node(&obj) {
            Ok(node) => self.update_node(obj, node).is_ok(),
            Err(_) => false,
        }
    }

    pub fn create_node(
        &self,
        mut node: corev1::Node,
        converted: tidegate_engine::api::Node,
    ) -> Result<String, StoreError> {
        let mut st = self.state.lock();
        let name = Self::name_for(&mut st, &node.metadata, |s, n| s.nodes.contains_key(n))?;
        if st.nodes.contains_key(&name) {
            return Err(StoreError::AlreadyExists { kind: "node", name });
        }
        st.rv += 1;
        node.metadata.name = Some(name.clone());
        node.metadata.resource_version = Some(st.rv.to_string());
        let mut internal = converted;
        internal.name = Sym::new(&name);
        internal.resource_version = st.rv;
        let internal = Arc::new(internal);
        st.nodes
            .insert(name.clone(), (Arc::new(node), internal.clone()));
        if let Some(s) = self.sched() {
            s.on_node_add(internal);
        }
        Ok(name)
    }

    /// `createNodes` as kube's `IntegrationTestNodePreparer` does it: the node is named first
    /// (its name, or `generateName` plus a suffix) and labelled `kubernetes.io/hostname=<name>`,
    /// then created. Spreading and affinity on hostname rely on that label.
    pub fn create_prepared_node(
        &self,
        mut node: corev1::Node,
        converted: tidegate_engine::api::Node,
    ) -> Result<String, StoreError> {
        const HOSTNAME: &str = "kubernetes.io/hostname";
        let name = {
            let mut st = self.state.lock();
            Self::name_for(&mut st, &node.metadata, |s, n| s.nodes.contains_key(n))?
        };
        node.metadata.name = Some(name.clone());
        node.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(HOSTNAME.to_string(), name.clone());
        let host = Sym::new(HOSTNAME);
        let pairs: Vec<(String, String)> = converted
            .labels
            .iter()
            .filter(|(k, _)| *k != host)
            .map(|(k, v)| (k.to_string_lossy(), v.to_string_lossy()))
            .chain(std::iter::once((HOSTNAME.to_string(), name.clone())))
            .collect();
        let mut converted = converted;
        converted.labels = Arc::new(tidegate_engine::api::Labels::from_pairs(
            pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        ));
        self.create_node(node, converted)
    }

    /// PUT of a node object and of its status (the `updateAny` op): the stored node becomes
    /// the rendered object as it is (labels included: a hostname label that createNodes added
    /// and the template leaves out is gone, as on an API server). The scheduler gets the
    /// update event.
    pub fn update_node(
        &self,
        mut node: corev1::Node,
        converted: tidegate_engine::api::Node,
    ) -> Result<(), StoreError> {
        let name = node
            .metadata
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| StoreError::Invalid("metadata.name: Required value".into()))?;
        let mut st = self.state.lock();
        let Some((_, old)) = st.nodes.get(&name).cloned() else {
            return Err(StoreError::NotFound { kind: "node", name });
        };
        st.rv += 1;
        node.metadata.resource_version = Some(st.rv.to_string());
        let mut internal = converted;
        internal.name = Sym::new(&name);
        internal.resource_version = st.rv;
        let internal = Arc::new(internal);
        st.nodes
            .insert(name.clone(), (Arc::new(node), internal.clone()));
        if let Some(s) = self.sched() {
            s.on_node_update(&old, internal);
        }
        self.changed.notify_all();
        Ok(())
    }

    /// Deletes a node; the scheduler gets the delete event. Pods bound to it stay bound, as
    /// nothing here runs the pod garbage collector.
    pub fn delete_node(&self, name: &str) -> bool {
        let mut st = self.state.lock();
        if st.nodes.remove(name).is_none() {
            return false;
        }
        st.rv += 1;
        if let Some(s) = self.sched() {
            s.on_node_delete(Sym::new(name));
        }
        self.changed.notify_all();
        true
    }
}
