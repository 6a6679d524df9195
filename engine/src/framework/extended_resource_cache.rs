//! Which DeviceClass backs an extended resource (DRAExtendedResource; kube's
//! `ExtendedResourceCache`, `k8s.io/dynamic-resource-allocation/deviceclass/
//! extendedresourcecache`), kept from the DeviceClass events.
//!
//! # Protocol
//!
//! Every class backs its implicit name `deviceclass.resource.kubernetes.io/<class>`; a class
//! with `spec.extendedResourceName` backs that name too. When several classes name the same
//! extended resource, the newest (`creationTimestamp`) wins, and on a tie the smaller name.
//! kube's quirks are kept: a class that loses that contest leaves the cache as it was (its
//! implicit name is not added either), and deleting or renaming a class removes its names
//! even when another class had claimed them since.

use crate::api::Sym;
use crate::api::dra::DeviceClass;
use crate::api::resource_names::DEVICE_CLASS_RESOURCE_PREFIX;
use ahash::AHashMap;
use std::sync::Arc;

/// Extended resource name → the class that backs it.
#[derive(Default, Debug)]
pub(crate) struct ExtendedResourceCache {
    by_resource: AHashMap<Sym, Arc<DeviceClass>>,
}

fn implicit_name(class: &DeviceClass) -> Sym {
    Sym::new(&format!("{DEVICE_CLASS_RESOURCE_PREFIX}{}", class.name))
}

impl ExtendedResourceCache {
    /// kube's `GetDeviceClass`.
    pub(crate) fn class_for(&self, resource: Sym) -> Option<&Arc<DeviceClass>> {
        self.by_resource.get(&resource)
    }

    /// Whether no class backs any name (the common cluster: nothing to look up).
    pub(crate) fn is_empty(&self) -> bool {
        self.by_resource.is_empty()
    }

    /// kube's `updateResourceName2class`: `new` added, or `old` updated to `new`.
    pub(crate) fn upsert(&mut self, new: &Arc<DeviceClass>, old: Option<&DeviceClass>) {
        if let Some(existing) = new
            .extended_resource_name
            .and_then(|r| self.by_resource.get(&r))
        {
            match new.created.cmp(&existing.created) {
                std::cmp::Ordering::Less => return,
                std::cmp::Ordering::Equal if new.name >= existing.name => return,
                _ => {}
            }
        }
        if let Some(old) = old {
            self.by_resource.remove(&implicit_name(old));
            if let Some(r) = old.extended_resource_name {
                self.by_resource.remove(&r);
            }
        }
        if let Some(r) = new.extended_resource_name {
            self.by_resource.insert(r, new.clone());
        }
        self.by_resource.insert(implicit_name(new), new.clone());
    }

    /// kube's `removeResourceName2class`.
    pub(crate) fn remove(&mut self, class: &DeviceClass) {
        self.by_resource.remove(&implicit_name(class));
        if let Some(r) = class.extended_resource_name {
            self.by_resource.remove(&r);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Provenance: staging/src/k8s.io/dynamic-resource-allocation/deviceclass/
    //! extendedresourcecache/extendedresourcecache_test.go (the mapping rules).
    use super::*;

    fn class(name: &str, ext: Option<&str>, created: i64) -> Arc<DeviceClass> {
        Arc::new(DeviceClass {
            name: Arc::from(name),
            selectors: vec![],
            extended_resource_name: ext.map(Sym::new),
            created,
        })
    }

    fn backer(c: &ExtendedResourceCache, r: &str) -> Option<String> {
        c.class_for(Sym::new(r)).map(|c| c.name.to_string())
    }

    #[test]
    fn implicit_and_explicit_names() {
        let mut c = ExtendedResourceCache::default();
        c.upsert(&class("gpu", Some("example.com/gpu"), 1), None);
        assert_eq!(backer(&c, "example.com/gpu").as_deref(), Some("gpu"));
        assert_eq!(
            backer(&c, "deviceclass.resource.kubernetes.io/gpu").as_deref(),
            Some("gpu")
        );
        assert_eq!(backer(&c, "example.com/other"), None);
        c.remove(&class("gpu", Some("example.com/gpu"), 1));
        assert!(c.is_empty());
    }

    #[test]
    fn the_newest_class_wins_and_a_tie_goes_to_the_smaller_name() {
        let mut c = ExtendedResourceCache::default();
        c.upsert(&class("b", Some("example.com/gpu"), 10), None);
        // Older: ignored altogether, its implicit name too.
        c.upsert(&class("a", Some("example.com/gpu"), 5), None);
        assert_eq!(backer(&c, "example.com/gpu").as_deref(), Some("b"));
        assert_eq!(backer(&c, "deviceclass.resource.kubernetes.io/a"), None);
        // Same age, larger name: ignored.
        c.upsert(&class("c", Some("example.com/gpu"), 10), None);
        assert_eq!(backer(&c, "example.com/gpu").as_deref(), Some("b"));
        // Same age, smaller name: wins.
        c.upsert(&class("a", Some("example.com/gpu"), 10), None);
        assert_eq!(backer(&c, "example.com/gpu").as_deref(), Some("a"));
        // Newer: wins.
        c.upsert(&class("d", Some("example.com/gpu"), 11), None);
        assert_eq!(backer(&c, "example.com/gpu").as_deref(), Some("d"));
    }

    #[test]
    fn an_update_drops_the_old_names() {
        let mut c = ExtendedResourceCache::default();
        let old = class("gpu", Some("example.com/gpu"), 1);
        c.upsert(&old, None);
        c.upsert(&class("gpu", Some("example.com/tpu"), 1), Some(&old));
        assert_eq!(backer(&c, "example.com/gpu"), None);
        assert_eq!(backer(&c, "example.com/tpu").as_deref(), Some("gpu"));
    }
}
