//! ImageLocality: favours nodes that already have the pod's container images. Each image on
//! the node scores its size scaled by its spread (the fraction of all nodes that have it);
//! the sum is clamped to [23 MiB, 1000 MiB × number of containers] and mapped onto
//! [0, MAX_NODE_SCORE]. Init containers count.
//! Source of behaviour: `pkg/scheduler/framework/plugins/imagelocality/image_locality.go`.

use crate::api::{Pod, Sym};
use crate::framework::Snapshot;
use crate::framework::cycle_state::CycleState;
use crate::framework::interface::{MAX_NODE_SCORE, Plugin, PreScorePlugin, ScorePlugin};
use crate::framework::node_info::NodeInfo;
use crate::framework::signature::{self, SignFragments, signer};
use crate::framework::status::Status;
use std::sync::Arc;

pub(crate) const NAME: &str = "ImageLocality";
const PRE_SCORE_KEY: &str = "PreScoreImageLocality";

const MB: i64 = 1024 * 1024;
/// The sum below which a node scores 0.
const MIN_THRESHOLD: i64 = 23 * MB;
/// Per container: the sum at and above which a node scores MAX_NODE_SCORE.
const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

#[derive(Debug, Default)]
pub(crate) struct ImageLocality;

impl Plugin for ImageLocality {
    fn signs_pods(&self) -> bool {
        true
    }
    fn node_local(&self, _pod: &crate::api::Pod) -> bool {
        true
    }
    fn sign_pod(&self, pod: &crate::api::Pod, sig: &mut SignFragments) -> Result<(), &'static str> {
        sig.put(signer::IMAGE_NAMES, || signature::image_names(pod));
        Ok(())
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_pre_score(self: Arc<Self>) -> Option<Arc<dyn PreScorePlugin>> {
        Some(self)
    }
    fn into_score(self: Arc<Self>) -> Option<Arc<dyn ScorePlugin>> {
        Some(self)
    }
}

/// kube's `calculatePriority`.
fn calculate_priority(sum_scores: i64, num_containers: usize) -> i64 {
    let max_threshold = MAX_CONTAINER_THRESHOLD * num_containers as i64;
    let sum = sum_scores.clamp(MIN_THRESHOLD, max_threshold.max(MIN_THRESHOLD));
    if max_threshold <= MIN_THRESHOLD {
        // No containers (kube divides by a negative range and gets 0 for a clamped sum).
        return 0;
    }
    MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD)
}

/// kube's `scaledImageScore`: the size scaled by the fraction of nodes having the image.
fn scaled_image_score(size: i64, num_nodes: u32, total_nodes: usize) -> i64 {
    let spread = f64::from(num_nodes) / total_nodes as f64;
    (size as f64 * spread) as i64
}

/// Per container of the pod (init containers first): its image and the image's scaled score,
/// for the images some node has. The scaled score does not depend on the node, so it is
/// computed once per cycle.
#[derive(Clone)]
struct PreScoreState {
    scaled: Vec<(Sym, i64)>,
    num_containers: usize,
}

impl PreScorePlugin for ImageLocality {
    /// Reads the pod and the snapshot, never the feasible nodes.
    fn pre_score_reads_nodes(&self, _: &Pod, _: &Snapshot) -> bool {
        false
    }
    fn pre_score(
        &self,
        state: &mut CycleState,
        pod: &Pod,
        _: &[&NodeInfo],
        snapshot: &Snapshot,
    ) -> Status {
        let total = snapshot.nodes.len();
        let scaled: Vec<(Sym, i64)> = pod
            .spec
            .images
            .iter()
            .filter_map(|&img| {
                let st = snapshot.image_states.get(&img)?;
                Some((img, scaled_image_score(st.size, st.num_nodes, total)))
            })
            .collect();
        if scaled.is_empty() {
            // No node has any of the images: every node scores 0.
            return Status::skip();
        }
        state.write(
            PRE_SCORE_KEY,
            PreScoreState {
                scaled,
                num_containers: pod.spec.images.len(),
            },
        );
        Status::success()
    }
}

impl ScorePlugin for ImageLocality {
    fn score(&self, state: &CycleState, _: &Pod, node: &NodeInfo) -> Result<i64, Status> {
        let s = state
            .read::<PreScoreState>(PRE_SCORE_KEY)
            .ok_or_else(|| Status::error(format!("reading {PRE_SCORE_KEY:?} from cycleState")))?;
        let images = &node.node.images;
        let sum: i64 = s
            .scaled
            .iter()
            .filter(|&&(img, _)| images.iter().any(|&(n, _)| n == img))
            .map(|&(_, v)| v)
            .sum();
        Ok(calculate_priority(sum, s.num_containers))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::convert;
    use crate::cache::Cache;

    fn node(name: &str, images: &[(&[&str], i64)]) -> Arc<crate::api::Node> {
        let imgs: Vec<serde_json::Value> = images
            .iter()
            .map(|(names, size)| serde_json::json!({"names": names, "sizeBytes": size}))
            .collect();
        let n: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name},
            "status": {"images": imgs},
        }))
        .unwrap();
        Arc::new(convert::node(&n).unwrap())
    }

    fn pod(init: &[&str], containers: &[&str]) -> Pod {
        let c = |v: &[&str]| -> Vec<serde_json::Value> {
            v.iter()
                .enumerate()
                .map(|(i, img)| serde_json::json!({"name": format!("c{i}"), "image": img}))
                .collect()
        };
        let p: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"initContainers": c(init), "containers": c(containers)},
        }))
        .unwrap();
        convert::pod(&p).unwrap()
    }

    fn scores(p: &Pod, nodes: &[Arc<crate::api::Node>]) -> Vec<i64> {
        let cache = Cache::new();
        for n in nodes {
            cache.add_node(n.clone());
        }
        let mut snap = Snapshot::default();
        cache.update_snapshot(&mut snap);
        let infos: Vec<&NodeInfo> = nodes.iter().map(|n| &**snap.get(n.name).unwrap()).collect();
        let mut state = CycleState::new();
        let pl = ImageLocality;
        if pl.pre_score(&mut state, p, &infos, &snap).is_skip() {
            return vec![0; nodes.len()];
        }
        infos
            .iter()
            .map(|ni| pl.score(&state, p, ni).unwrap())
            .collect()
    }

    const MB_: i64 = MB;

    fn node_40_300_2000(name: &str) -> Arc<crate::api::Node> {
        node(
            name,
            &[
                (
                    &["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"],
                    40 * MB_,
                ),
                (&["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB_),
                (&["gcr.io/2000:latest"], 2000 * MB_),
            ],
        )
    }
    fn node_250_10(name: &str) -> Arc<crate::api::Node> {
        node(
            name,
            &[
                (&["gcr.io/250:latest"], 250 * MB_),
                (&["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB_),
            ],
        )
    }

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go
    // (TestImageLocalityPriority), with kube's per-container maxThreshold.
    #[test]
    fn image_locality_table() {
        let two = [node_40_300_2000("machine1"), node_250_10("machine2")];
        // Pod gcr.io/40, gcr.io/250. machine1: 40M × 1/2 < 23M -> 0; machine2:
        // 100 × (250M/2 − 23M) / (2000M − 23M) = 5.
        assert_eq!(
            scores(&pod(&[], &["gcr.io/40", "gcr.io/250"]), &two),
            [0, 5]
        );
        // Pod gcr.io/40, gcr.io/300: 100 × ((40M + 300M)/2 − 23M) / (2000M − 23M) = 7.
        assert_eq!(
            scores(&pod(&[], &["gcr.io/40", "gcr.io/300"]), &two),
            [7, 0]
        );
        // Pod gcr.io/300, gcr.io/2000 (both on machine1, alone): 100 × (2300M/2 − 23M) /
        // (2000M − 23M) = 57.
        assert_eq!(
            scores(&pod(&[], &["gcr.io/300", "gcr.io/2000"]), &two),
            [57, 0]
        );
        // Pod gcr.io/10, gcr.io/2000: 2000M/2 -> 100 × (1000M − 23M) / (1977M) = 49; 10M/2
        // is under the minimum.
        assert_eq!(
            scores(&pod(&[], &["gcr.io/10", "gcr.io/2000"]), &two),
            [49, 0]
        );
        // The same with a third node without images: 2000M/3.
        let three = [
            node_40_300_2000("machine1"),
            node_250_10("machine2"),
            node("machine3", &[]),
        ];
        assert_eq!(
            scores(&pod(&[], &["gcr.io/10", "gcr.io/2000"]), &three),
            [32, 0, 0]
        );
        // Init containers count, both their images and the container total:
        // (2000M/2 + 300M/2) over a 3 × 1000M threshold.
        assert_eq!(
            scores(&pod(&["gcr.io/300"], &["gcr.io/10", "gcr.io/2000"]), &two),
            [37, 0]
        );
        // Images spread on every node score by their full size.
        let both = [node_40_300_2000("machine1"), node_40_300_2000("machine2")];
        assert_eq!(scores(&pod(&[], &["gcr.io/300:v1"]), &both), [28, 28]);
        // A pod whose images no node has: nothing to score.
        assert_eq!(scores(&pod(&[], &["nginx"]), &two), [0, 0]);
    }

    // Provenance: kubernetes/kubernetes
    // pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go
    // (TestNormalizedImageName).
    #[test]
    fn normalized_image_names() {
        assert_eq!(convert::normalized_image_name("root"), "root:latest");
        assert_eq!(
            convert::normalized_image_name("gcr.io:5000/root"),
            "gcr.io:5000/root:latest"
        );
        assert_eq!(convert::normalized_image_name("root:tag"), "root:tag");
        let digest = "root@sha256:4355a46b19d348dc2f57c046f8ef63d4538ebb936000f3c9ee954a27460dd865";
        assert_eq!(convert::normalized_image_name(digest), digest);
    }

    #[test]
    fn node_image_names_are_not_normalized() {
        // kube keys a node's images as reported: a node listing only `gcr.io/250` does not
        // have the pod's `gcr.io/250` (normalized to `gcr.io/250:latest`).
        let raw = [node("machine1", &[(&["gcr.io/250"], 250 * MB_)])];
        assert_eq!(scores(&pod(&[], &["gcr.io/250"]), &raw), [0]);
        let tagged = [node("machine1", &[(&["gcr.io/250:latest"], 250 * MB_)])];
        assert_eq!(scores(&pod(&[], &["gcr.io/250"]), &tagged), [23]);
    }

    #[test]
    fn priority_thresholds() {
        assert_eq!(calculate_priority(0, 1), 0);
        assert_eq!(calculate_priority(23 * MB_, 1), 0);
        assert_eq!(calculate_priority(1000 * MB_, 1), 100);
        assert_eq!(calculate_priority(5000 * MB_, 2), 100);
        assert_eq!(calculate_priority(0, 0), 0);
    }
}
