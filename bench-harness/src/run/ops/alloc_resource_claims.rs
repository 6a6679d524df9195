//! `allocResourceClaims` (scheduler_perf's `dra.go`): allocates every unallocated
//! ResourceClaim of `namespace` (every namespace when empty) before pods need them, with the
//! structured allocator, on the first node that fits in a random order of the nodes, and
//! writes only `status.allocation` (no reservation): the devices stay taken by a claim that
//! no pod uses.
//!
//! Upstream shuffles the nodes with an unseeded generator; here the order comes from the
//! workload's name and the op's number, so runs repeat.

use super::{Op, Resolve, RunCx};
use crate::cluster::store::Subresource;
use crate::error::{HarnessError, InputError};
use k8s_openapi::api::resource::v1 as k;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use tidegate_engine::ClaimAllocator;

#[derive(Clone, Debug, PartialEq)]
pub struct AllocResourceClaims {
    pub namespace: Option<String>,
}

impl AllocResourceClaims {
    pub const OPCODE: &'static str = "allocResourceClaims";
    pub const FIELDS: &'static [&'static str] = &["opcode", "namespace"];

    pub(crate) fn resolve(r: &Resolve) -> Result<Op, InputError> {
        Ok(Op::AllocResourceClaims(AllocResourceClaims {
            namespace: r.string("namespace")?.filter(|n| !n.is_empty()),
        }))
    }

    pub(crate) fn run(&self, cx: &mut RunCx) -> Result<(), HarnessError> {
        let store = cx.store;
        let claims = store.list::<k::ResourceClaim>(self.namespace.as_deref());
        let allocated: Vec<_> = store
            .list::<k::ResourceClaim>(None)
            .into_iter()
            .filter(|c| c.status.as_ref().is_some_and(|s| s.allocation.is_some()))
            .collect();
        let mut alloc = ClaimAllocator::new(
            &store.list::<k::DeviceClass>(None),
            &store.list::<k::ResourceSlice>(None),
            &store.list::<k::DeviceTaintRule>(None),
            &allocated,
            cx.sched.features(),
        )
        .map_err(|e| HarnessError::Run(format!("{}: {e}", cx.field())))?;
        let mut nodes = store.nodes();
        let seed = crate::cluster::inject::stable_hash(&format!("{}/{}", cx.wl.name, cx.index));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        for (i, claim) in claims.iter().enumerate() {
            if claim
                .status
                .as_ref()
                .is_some_and(|s| s.allocation.is_some())
            {
                continue;
            }
            nodes.shuffle(&mut rng);
            let mut done = false;
            for n in &nodes {
                let result = alloc
                    .allocate(claim, n)
                    .map_err(|e| HarnessError::Run(format!("{}: {e}", cx.field())))?;
                if let Some(a) = result {
                    let mut c = (**claim).clone();
                    c.status.get_or_insert_with(Default::default).allocation = Some(a);
                    store
                        .put_resource_claim(c, Subresource::Status)
                        .map_err(|e| HarnessError::Run(format!("{}: {e}", cx.field())))?;
                    done = true;
                    break;
                }
            }
            if !done {
                return Err(HarnessError::Run(format!(
                    "{}: Could not allocate claim {} out of {}",
                    cx.field(),
                    i,
                    claims.len()
                )));
            }
        }
        Ok(())
    }
}
