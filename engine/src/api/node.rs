//! The compact internal form of a Node.

use super::intern::Sym;
use super::labels::Labels;
use super::pod::TaintEffect;
use super::resource::Resource;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint {
    pub key: Sym,
    pub value: Sym,
    pub effect: TaintEffect,
}

#[derive(Clone, Debug, Default)]
pub struct Node {
    pub name: Sym,
    pub labels: Arc<Labels>,
    pub taints: Arc<[Taint]>,
    pub unschedulable: bool,
    /// `status.allocatable`, defaulted to `status.capacity` where absent (as the API server does).
    pub allocatable: Resource,
    /// `status.images`: every name of every image as reported (kube does not normalize node
    /// image names), each once, with the image's size in bytes.
    pub images: Vec<(Sym, i64)>,
    /// `status.declaredFeatures` as published (compared as kube compares them, for the
    /// node update event).
    pub declared_features: Arc<[Arc<str>]>,
    /// The same mapped onto kube's feature registry (`super::node_features::try_map`).
    pub declared_feature_set: super::node_features::FeatureSet,
    pub resource_version: u64,
}

impl Node {
    /// A schedulable node with no labels, taints or resources (tests, tools).
    pub fn named(name: &str) -> Node {
        Node {
            name: Sym::new(name),
            ..Default::default()
        }
    }
}
