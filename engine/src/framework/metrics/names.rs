//! Every metric name in one place (kube-scheduler's, plus tidegate's extras).

pub const PENDING_PODS: &str = "scheduler_pending_pods";
pub const EXTENSION_POINT_DURATION: &str = "scheduler_framework_extension_point_duration_seconds";
pub const PLUGIN_EXECUTION_DURATION: &str = "scheduler_plugin_execution_duration_seconds";
pub const SCHEDULING_ATTEMPT_DURATION: &str = "scheduler_scheduling_attempt_duration_seconds";
pub const SCHEDULING_ALGORITHM_DURATION: &str = "scheduler_scheduling_algorithm_duration_seconds";
pub const POD_SCHEDULING_SLI_DURATION: &str = "scheduler_pod_scheduling_sli_duration_seconds";
pub const POD_SCHEDULING_ATTEMPTS: &str = "scheduler_pod_scheduling_attempts";
pub const QUEUE_INCOMING_PODS: &str = "scheduler_queue_incoming_pods_total";
pub const SCHEDULE_ATTEMPTS: &str = "scheduler_schedule_attempts_total";
pub const UNSCHEDULABLE_PODS: &str = "scheduler_unschedulable_pods";
pub const BATCH_ATTEMPTS: &str = "scheduler_batch_attempts_total";
pub const BATCH_CACHE_FLUSHED: &str = "scheduler_batch_cache_flushed_total";
pub const BATCH_RESCORE_ATTEMPTS: &str = "scheduler_batch_rescore_attempts_total";
pub const BATCH_RESCORE_DURATION: &str = "scheduler_batch_rescore_duration_seconds";
pub const GET_NODE_HINT_DURATION: &str = "scheduler_get_node_hint_duration_seconds";
pub const STORE_SCHEDULE_RESULTS_DURATION: &str =
    "scheduler_store_schedule_results_duration_seconds";
pub const PODGROUP_SCHEDULE_ATTEMPTS: &str = "scheduler_podgroup_schedule_attempts_total";
pub const PODGROUP_SCHEDULING_ATTEMPT_DURATION: &str =
    "scheduler_podgroup_scheduling_attempt_duration_seconds";
pub const PODGROUP_SCHEDULING_ALGORITHM_DURATION: &str =
    "scheduler_podgroup_scheduling_algorithm_duration_seconds";
pub const GENERATED_PLACEMENTS: &str = "scheduler_generated_placements_total";
pub const PLACEMENT_EVALUATIONS: &str = "scheduler_placement_evaluations_total";
pub const PLACEMENT_EVALUATION_DURATION: &str = "scheduler_placement_evaluation_duration_seconds";
pub const QUEUEING_HINT_DURATION: &str = "scheduler_queueing_hint_execution_duration_seconds";
/// tidegate: gated pods per gate name.
pub const TIDEGATE_GATED_PODS: &str = "tidegate_gated_pods";
/// tidegate: seconds from a pod's creation to the removal of its last scheduling gate.
pub const TIDEGATE_GATE_WAIT: &str = "tidegate_gate_wait_seconds";
