//! Namespaces (kube's `pkg/registry/core/namespace`): created by createNamespaces and
//! createAny, or on first use by an op that creates into one; each carries the
//! `kubernetes.io/metadata.name` label, and its labels are kept for the scheduler's namespace
//! lister.

use crate::cluster::store::*;

impl Store {
    pub fn create_namespace(&self, mut ns: corev1::Namespace) -> Result<String, StoreError> {
        let mut st = self.state.lock();
        let name = Self::name_for(&mut st, &ns.metadata, |s, n| s.namespaces.contains_key(n))?;
        if st.namespaces.contains_key(&name) {
            return Err(StoreError::AlreadyExists {
                kind: "namespace",
                name,
            });
        }
        ns.metadata.name = Some(name.clone());
        ns.metadata
            .labels
            .get_or_insert_default()
            .insert(NAMESPACE_NAME_LABEL.to_string(), name.clone());
        self.ns_labels.write().insert(
            Sym::new(&name),
            Arc::new(convert::labels_of(&ns.metadata.labels)),
        );
        st.namespaces.insert(name.clone(), Arc::new(ns));
        st.ns.entry(name.clone()).or_default();
        Ok(name)
    }

    /// Creates the namespace if it does not exist (ops that create into a namespace).
    pub fn ensure_namespace_exists(&self, name: &str) {
        let mut st = self.state.lock();
        self.ensure_namespace(&mut st, name);
    }

    pub(in crate::cluster::store) fn ensure_namespace(&self, st: &mut State, name: &str) {
        if !st.namespaces.contains_key(name) {
            let labels = BTreeMap::from([(NAMESPACE_NAME_LABEL.to_string(), name.to_string())]);
            self.ns_labels.write().insert(
                Sym::new(name),
                Arc::new(convert::labels_of(&Some(labels.clone()))),
            );
            let ns = corev1::Namespace {
                metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                    name: Some(name.to_string()),
                    labels: Some(labels),
                    ..Default::default()
                },
                ..Default::default()
            };
            st.namespaces.insert(name.to_string(), Arc::new(ns));
        }
        if !st.ns.contains_key(name) {
            st.ns.insert(name.to_string(), NsPods::default());
        }
    }
}
