// The disruption budgets of a model: one per model-server role that has pods (decode, and prefill when the folder
// creates it) and one for its endpoint picker. Pure builders; served-model.ts declares them.
//
// Every budget is `maxUnavailable: 1`, whatever the replica count:
//   - two or more replicas: a drain (or a node-pool upgrade draining several GPU nodes) evicts one server, then waits
//     until its replacement is Ready (has loaded the model) before it may evict the next;
//   - one replica: `minAvailable: 1` would refuse every eviction, so no drain of its node could ever finish (kubectl
//     drain retries forever, managed node upgrades stall or force). With `maxUnavailable: 1` the drain proceeds and
//     the model is away until the replacement has loaded: the cost of running one replica, said in docs/lifecycle.md;
//   - scaled to zero by KEDA: no pod, nothing to evict; the budget neither blocks KEDA (a scale-down deletes, it does
//     not evict) nor needs changing when the model wakes.
// `unhealthyPodEvictionPolicy: AlwaysAllow`: a server that is not Ready (loading, crash-looping) serves nobody, so it
// never holds a drain back; with the default, two unready replicas of one model would block every drain.
import { DECODE_ROLE_LABEL, SERVER_PREFIX } from "./constants";
import type { ModelDefinition } from "./model-folders";
import { EPP_POD_LABEL } from "./network";
import { modelObjectLabels, pickerName, poolReleaseName, replicaSelector } from "./values";

type Labels = Record<string, string>;

export interface DisruptionBudget {
  readonly name: string;
  readonly labels: Labels;
  readonly spec: { maxUnavailable: number; unhealthyPodEvictionPolicy: "AlwaysAllow"; selector: { matchLabels: Labels } };
}

function budget(name: string, labels: Labels, matchLabels: Labels): DisruptionBudget {
  return { name, labels, spec: { maxUnavailable: 1, unhealthyPodEvictionPolicy: "AlwaysAllow", selector: { matchLabels } } };
}

/** The roles of the model that run pods: decode always (even at zero replicas), prefill when the folder creates it. */
function serverRoles(def: ModelDefinition): ("decode" | "prefill")[] {
  const prefill = def.serverValues.prefill;
  return prefill && prefill.create !== false ? ["decode", "prefill"] : ["decode"];
}

/**
 * The model servers' budgets, `ms-<slug>-<role>`: each selects its role's pods by the platform labels and the chart's
 * role label, which the weights-download Job's pods (platform-labelled too) lack. A Job's pod under a
 * `maxUnavailable` budget would leave the budget unable to count and block every eviction.
 */
export function modelServerBudgets(def: ModelDefinition, labelDomain: string): DisruptionBudget[] {
  const decode = replicaSelector(def, labelDomain);
  return serverRoles(def).map((role) =>
    budget(`${SERVER_PREFIX}${def.slug}-${role}`, modelObjectLabels(def, labelDomain, "disruption-budget"), role === "decode" ? decode : { ...decode, [DECODE_ROLE_LABEL.key]: role }),
  );
}

/**
 * The endpoint picker's budget, named as its Deployment. It selects by the one label the picker chart sets on its pods
 * (`inferencepool: <release>-epp`). The chart runs one picker (Recreate): the budget lets a drain take it, and keeps
 * one at a time once an operator runs more.
 */
export function pickerBudget(def: ModelDefinition, labelDomain: string): DisruptionBudget {
  const name = pickerName(poolReleaseName(def.slug));
  return budget(name, modelObjectLabels(def, labelDomain, "disruption-budget"), { [EPP_POD_LABEL]: name });
}
