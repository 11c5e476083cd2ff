// Pod Security admission and disruption budgets over what each stack variant sends (stacks/stack-variants.ts): the
// charts rendered by a real helm with the program's values and transforms. Every namespace the program creates
// enforces a level; every pod of the render passes the level of its namespace, and that level is the strictest its
// pods pass; every model server and endpoint picker has exactly one budget, and no budget counts another pod.
// The real API server suite (apiserver.test.ts) runs the same pods through the admission plugin itself.
import { KEDA_CHART } from "../infra/autoscaling/constants";
import { gatewayPodSecurityLevel } from "../infra/gateway/labels";
import { describeWithCharts, type Manifest } from "../infra/platform/helm";
import { podOwners } from "../infra/platform/manifests";
import { enforcedLevel, POD_SECURITY_LABEL_KEYS, POD_SECURITY_LEVELS, type PodSecurityLevel, type PodSpecUnderCheck, podSecurityViolations, strictestLevel } from "../infra/platform/pod-security";
import { PINNED_CHARTS as SERVING_CHARTS } from "../infra/serving/constants";
import type { ExposureSettings } from "../infra/gateway/exposure-config";
import { MONITORING_CHARTS } from "./monitoring-charts";
import { renderStackObjects } from "./stack-objects";
import { stackVariants } from "./stack-variants";

type Labels = Record<string, string>;
interface Pod {
  readonly owner: Manifest;
  readonly namespace: string;
  readonly labels: Labels;
  readonly annotations: Labels;
  readonly spec: PodSpecUnderCheck;
}

const CHARTS = [
  ...MONITORING_CHARTS,
  ...Object.entries(SERVING_CHARTS).map(([component, c]) => ({ component, version: c.version })),
  { component: KEDA_CHART.component, version: KEDA_CHART.version },
];
const id = (o: Manifest) => `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`;
const rank = (l: PodSecurityLevel) => POD_SECURITY_LEVELS.indexOf(l);
const selects = (matchLabels: Labels, labels: Labels) => Object.entries(matchLabels).every(([k, v]) => labels[k] === v);

describeWithCharts("Pod Security levels and disruption budgets of each stack variant's render", CHARTS, ({ helm }) => {
  describe.each(stackVariants().map((v) => [v.name, v] as const))("%s", (_name, variant) => {
    let namespaces: Manifest[];
    let pods: Pod[];
    let objects: Manifest[];
    beforeAll(async () => {
      const stack = await renderStackObjects(helm, variant.config, variant.secretKeys);
      objects = [...stack.direct, ...stack.releases.flatMap((r) => r.objects.map((o) => ({ ...o, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? r.namespace } })))];
      namespaces = stack.direct.filter((o) => o.kind === "Namespace");
      pods = objects.flatMap((o) =>
        podOwners([o]).map((p) => ({ owner: o, namespace: o.metadata.namespace ?? "default", labels: p.metadata.labels ?? {}, annotations: p.metadata.annotations ?? {}, spec: p.spec as PodSpecUnderCheck })),
      );
    }, 120_000);
    const levelOf = (ns: string) => enforcedLevel(namespaces.find((n) => n.metadata.name === ns)?.metadata.labels as Labels | undefined);

    test("every namespace the program creates carries Pod Security labels (enforce, warn, audit, with versions)", () => {
      expect(namespaces.length).toBeGreaterThanOrEqual(3);
      for (const ns of namespaces) expect([ns.metadata.name, Object.keys((ns.metadata.labels ?? {}) as Labels).filter((k) => POD_SECURITY_LABEL_KEYS.includes(k)).sort()]).toEqual([ns.metadata.name, [...POD_SECURITY_LABEL_KEYS].sort()]);
    });

    test("every pod passes the Pod Security Standard its namespace enforces", () => {
      const refused = pods.flatMap((p) => podSecurityViolations(levelOf(p.namespace), p.spec, p.annotations).map((v) => `${id(p.owner)} at ${levelOf(p.namespace)}: ${v.control} (${v.detail})`));
      expect(refused).toEqual([]);
      expect(pods.length).toBeGreaterThan(5);
    });

    test("each namespace enforces the strictest level all its pods pass", () => {
      const gatewayNamespace = variant.config["gateway:namespace"] ?? "ai-gateway";
      const exposure = variant.config["gateway:exposure"] ? (JSON.parse(variant.config["gateway:exposure"]) as ExposureSettings) : undefined;
      const gatewayLevel = gatewayPodSecurityLevel(exposure);
      const found = namespaces.map((ns) => {
        const own = pods.filter((p) => p.namespace === ns.metadata.name).map((p) => strictestLevel(p.spec, p.annotations));
        let strictest = own.reduce<PodSecurityLevel>((a, b) => (rank(b) < rank(a) ? b : a), "restricted");
        // A Gateway of the stack's own: its implementation may run proxy pods there that pass baseline only (Istio's).
        if (ns.metadata.name === gatewayNamespace && rank(gatewayLevel) < rank(strictest)) strictest = gatewayLevel;
        return [ns.metadata.name, levelOf(ns.metadata.name), strictest];
      });
      expect(found.map(([ns, level]) => [ns, level])).toEqual(found.map(([ns, , strictest]) => [ns, strictest]));
    });

    test("every model server and endpoint picker Deployment has exactly one disruption budget, maxUnavailable 1, unhealthy pods always evictable", () => {
      const budgets = objects.filter((o) => o.kind === "PodDisruptionBudget");
      const models = pods.filter((p) => p.owner.kind === "Deployment" && (p.labels["llm-d.ai/role"] !== undefined || p.labels.inferencepool !== undefined));
      expect(models.length).toBeGreaterThan(1);
      const uncovered = models.flatMap((p) => {
        const mine = budgets.filter((b) => b.metadata.namespace === p.namespace && selects((b.spec as { selector: { matchLabels: Labels } }).selector.matchLabels, p.labels));
        return mine.length === 1 && (mine[0]!.spec as Record<string, unknown>).maxUnavailable === 1 && (mine[0]!.spec as Record<string, unknown>).unhealthyPodEvictionPolicy === "AlwaysAllow" ? [] : [`${id(p.owner)}: ${mine.length} budgets`];
      });
      expect(uncovered).toEqual([]);
    });

    test("no budget selects pods of more than one workload, or of a Job (the budget could not count them and would block every eviction)", () => {
      const problems = objects
        .filter((o) => o.kind === "PodDisruptionBudget")
        .flatMap((b) => {
          const matchLabels = (b.spec as { selector: { matchLabels: Labels } }).selector.matchLabels;
          const owners = pods.filter((p) => p.namespace === b.metadata.namespace && selects(matchLabels, p.labels)).map((p) => p.owner);
          return owners.length === 1 && owners[0]!.kind !== "Job" ? [] : [`${id(b)} selects ${owners.map(id).join(", ") || "nothing"}`];
        });
      expect(problems).toEqual([]);
    });
  });
});
