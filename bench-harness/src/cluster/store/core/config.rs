//! Core-group kinds nothing in the scheduler reads, stored and counted (kube's
//! `pkg/registry/core/{configmap,secret,serviceaccount,limitrange,resourcequota}`).

use crate::cluster::store::kind::{Kind, Version, check, decode};
use k8s_openapi::api::core::v1 as core;

/// A namespaced core kind without a scheduler event, index or validation beyond decoding.
const fn plain(
    kind: &'static str,
    resource: &'static str,
    versions: &'static [Version],
    status: bool,
) -> Kind {
    Kind {
        kind,
        group: "",
        resource,
        versions,
        namespaced: true,
        status,
        immutable: &[],
        unconditional_update: true,
        validate: check::nothing,
        needs_plugin: check::no_plugin,
        gated: check::ungated,
        scheduler_handler: None,
        event: None,
        indexes: &[],
    }
}

pub static CONFIG_MAP: Kind = plain(
    "ConfigMap",
    "configmaps",
    &[Version {
        version: "v1",
        decode: decode::<core::ConfigMap>,
    }],
    false,
);

pub static SECRET: Kind = plain(
    "Secret",
    "secrets",
    &[Version {
        version: "v1",
        decode: decode::<core::Secret>,
    }],
    false,
);

pub static SERVICE_ACCOUNT: Kind = plain(
    "ServiceAccount",
    "serviceaccounts",
    &[Version {
        version: "v1",
        decode: decode::<core::ServiceAccount>,
    }],
    false,
);

pub static LIMIT_RANGE: Kind = plain(
    "LimitRange",
    "limitranges",
    &[Version {
        version: "v1",
        decode: decode::<core::LimitRange>,
    }],
    false,
);

pub static RESOURCE_QUOTA: Kind = plain(
    "ResourceQuota",
    "resourcequotas",
    &[Version {
        version: "v1",
        decode: decode::<core::ResourceQuota>,
    }],
    true,
);
