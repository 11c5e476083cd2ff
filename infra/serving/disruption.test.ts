// The disruption budgets' shape for each kind of model: one replica, several, a prefill role, an endpoint picker.
import { modelServerBudgets, pickerBudget } from "./disruption";
import { loadModelFolders } from "./model-folders";

const D = "ai-platform.io";
const qwen = () => loadModelFolders().find((f) => f.ref === "generative/qwen3-8b")!;

describe("disruption budgets", () => {
  test("a model server: one at a time whatever the replica count (never minAvailable, which would block every drain of a one-replica model), unready pods always evictable", () => {
    const [decode, ...rest] = modelServerBudgets(qwen(), D);
    expect(rest).toEqual([]);
    expect(decode).toEqual({
      name: "ms-qwen3-8b-decode",
      labels: expect.objectContaining({ "app.kubernetes.io/component": "disruption-budget", [`${D}/model-slug`]: "qwen3-8b" }),
      spec: {
        maxUnavailable: 1,
        unhealthyPodEvictionPolicy: "AlwaysAllow",
        selector: { matchLabels: { [`${D}/platform`]: "ai-platform", [`${D}/model-slug`]: "qwen3-8b", "llm-d.ai/role": "decode" } },
      },
    });
  });

  test("a folder that creates prefill pods gets a budget for them too, selecting that role only", () => {
    const def = qwen();
    const split = { ...def, serverValues: { ...def.serverValues, prefill: { ...def.serverValues.prefill, create: true } } } as typeof def;
    const budgets = modelServerBudgets(split, D);
    expect(budgets.map((b) => [b.name, b.spec.selector.matchLabels["llm-d.ai/role"]])).toEqual([
      ["ms-qwen3-8b-decode", "decode"],
      ["ms-qwen3-8b-prefill", "prefill"],
    ]);
  });

  test("the endpoint picker: named and selected as the picker chart names its Deployment and labels its pods", () => {
    expect(pickerBudget(qwen(), D)).toMatchObject({ name: "gaie-qwen3-8b-epp", spec: { maxUnavailable: 1, unhealthyPodEvictionPolicy: "AlwaysAllow", selector: { matchLabels: { inferencepool: "gaie-qwen3-8b-epp" } } } });
  });
});
