//! Fault injection in a run (`--inject`): the FaultInjection plugin put into every profile,
//! and the node update storm.

use crate::cluster::store::Store;
use crate::error::HarnessError;
use std::sync::Arc;
use std::time::Duration;
use tidegate_engine::Registry;
use tidegate_engine::SchedulerConfig;
use tidegate_engine::clock::Time;

/// Puts the `FaultInjection` plugin into every profile, at the extension points its faults
/// need: appended (it runs after the profile's own plugins), except at Bind, where it runs
/// first so that it can fail a binding before DefaultBinder makes it.
pub(crate) fn add_fault_plugin(
    cfg: &mut SchedulerConfig,
    registry: &mut Registry,
    inj: &Arc<crate::cluster::inject::Injection>,
    seed: u64,
) -> Result<(), HarnessError> {
    use crate::cluster::inject::{FaultInjection, NAME, Point};
    let for_plugin = inj.clone();
    registry.register(NAME, move |_| {
        Arc::new(FaultInjection::new(for_plugin.clone(), seed))
    });
    for (i, prof) in cfg.profiles.iter_mut().enumerate() {
        // The bind plugins the profile runs now, to run after ours.
        let binders: Vec<&'static str> = {
            let trial = tidegate_engine::Framework::new(
                i,
                prof,
                registry,
                &crate::workload::scheduler_config::trial_context(),
                Arc::new(tidegate_engine::metrics::Metrics::new()),
            )
            .map_err(|e| HarnessError::Run(e.to_string()))?;
            trial
                .plugin_names()
                .into_iter()
                .find(|(p, _)| *p == "bind")
                .map(|(_, v)| v)
                .unwrap_or_default()
        };
        for point in inj.plugin_points() {
            let pl = &mut prof.plugins;
            match point {
                Point::PreFilter => pl.pre_filter.enabled.push((NAME.into(), 0)),
                Point::Filter => pl.filter.enabled.push((NAME.into(), 0)),
                Point::Score => pl.score.enabled.push((NAME.into(), 1)),
                Point::Reserve => pl.reserve.enabled.push((NAME.into(), 0)),
                Point::Permit => pl.permit.enabled.push((NAME.into(), 0)),
                Point::Bind => {
                    pl.bind.disabled = vec!["*".into()];
                    pl.bind.enabled = std::iter::once(NAME)
                        .chain(binders.iter().copied())
                        .map(|n| (n.to_string(), 0))
                        .collect();
                }
            }
        }
    }
    Ok(())
}

/// `--inject node-updates`: every 10 ms, the share of the rate's node label updates, round
/// robin over the nodes (their names refreshed every second), until the workload ends.
pub(crate) fn node_storm(store: Arc<Store>, per_second: f64) -> crate::run::pace::Step {
    const TICK: Duration = Duration::from_millis(10);
    let per_tick = per_second * TICK.as_secs_f64();
    let mut owed = 0.0f64;
    let mut names: Vec<String> = Vec::new();
    let mut next = 0usize;
    let mut tick = 0u64;
    let mut updates = 0u64;
    Box::new(move |now: Time| {
        if tick.is_multiple_of(100) {
            names = store.node_names();
        }
        tick += 1;
        owed += per_tick;
        while owed >= 1.0 && !names.is_empty() {
            owed -= 1.0;
            let name = &names[next % names.len()];
            next += 1;
            updates += 1;
            store.touch_node(name, "tidegate.io/event-storm", &updates.to_string());
        }
        if names.is_empty() {
            owed = owed.min(1.0);
        }
        Some(now + TICK)
    })
}
