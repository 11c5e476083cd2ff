// docs/models.md against the code it documents: every model.yaml key and folder rule is named, every example it
// shows passes the schema (or the whole loader) it illustrates, its commands scaffold folders that load, and the
// messages it quotes are the ones the code prints.
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { CatalogSchema, DEFAULT_DNS_REFRESH_MS } from "../../gateway/src/config/catalog";
import { DEFAULT_HEALTH_INTERVAL_MS } from "../../gateway/src/config/settings";
import { CLUSTER_DNS_TTL_SECONDS, LEAVE_DELAY_SECONDS } from "./constants";
import { TERMINATION_MARGIN_SECONDS } from "./values";
import { adapterOptionsFromArgv, optionsFromArgv } from "../../scripts/model-add";
import { codeSpans, markedBlocks, readDoc } from "../platform/docs-testing";
import { AutoscalingSchema } from "./autoscaling";
import { parseServingConfig, SECRET_KEYS } from "./config";
import { InferencePoolValuesSchema, ModelMetadataSchema, ModelServerValuesSchema } from "./folder-schemas";
import { checkGpuCapacity } from "./gpu-preflight";
import { loadModelFolders, ModelFolderError, RULES } from "./model-folders";
import { planModels } from "./plan";
import { scaffoldModel } from "./scaffold";
import { addAdapter } from "./scaffold-adapter";
import { adaptersGiB } from "./lora";
import { DEFAULT_DOWNLOAD_TIMEOUT, startupTimeoutSeconds } from "./startup";
import { MODEL_FAMILIES, type ModelFamily } from "./families";
import { cacheSizeGiB } from "./weights";
import { editYaml, scratchModels } from "./testing";

const page = readDoc("models.md");
const spans = codeSpans(page);
const blocks = markedBlocks(page);

/** Runs `check` on a scratch models root holding the page's complete example folder (and the shipped ones, if asked). */
function withExampleFolder(withSamples: boolean, check: (root: string) => void): void {
  const { root, cleanup } = scratchModels(withSamples);
  try {
    for (const b of blocks.filter((x) => /^(generative|embedder)\/[^/]+\/.+\.yaml$/.test(x.marker))) {
      fs.mkdirSync(path.dirname(path.join(root, b.marker)), { recursive: true });
      fs.writeFileSync(path.join(root, b.marker), b.text);
    }
    check(root);
  } finally {
    cleanup();
  }
}

describe("docs/models.md", () => {
  test("names every model.yaml key, nested local keys included", () => {
    const local = ModelMetadataSchema.shape.local.unwrap();
    const keys = [...Object.keys(ModelMetadataSchema.shape), ...Object.keys(local.shape)];
    expect(keys.filter((k) => !spans.has(k))).toEqual([]);
  });

  test("names every autoscaling field, with its default", () => {
    const rows = page.split("\n").filter((l) => l.startsWith("| `"));
    const defaults = AutoscalingSchema.parse({ maxReplicas: 1 }) as Record<string, unknown>;
    for (const key of Object.keys(AutoscalingSchema.shape)) {
      const row = rows.find((r) => r.startsWith(`| \`${key}\` |`));
      const shown = key === "maxReplicas" ? "required" : key === "targets" ? "`waitingPerReplica: 4`" : key === "wake" ? "`timeoutSeconds: 600`, `maxHeld: 64`" : String(defaults[key]);
      expect({ key, row: row?.split("|")[2]?.trim() }).toEqual({ key, row: shown });
    }
    expect(defaults.targets).toEqual({ waitingPerReplica: 4 });
    expect(defaults.wake).toEqual({ timeoutSeconds: 600, maxHeld: 64 });
  });

  test("names every folder rule", () => {
    expect(Object.values(RULES).filter((r) => !spans.has(r))).toEqual([]);
  });

  test("every model.yaml, values and stack example passes its schema", () => {
    const checked = { meta: 0, pool: 0, server: 0, stack: 0, catalog: 0 };
    for (const b of blocks) {
      const doc = parse(b.text) as Record<string, unknown>;
      if (b.marker.endsWith("model.yaml")) {
        ModelMetadataSchema.parse(doc);
        checked.meta++;
      } else if (/\/gaie-[^/]+\/values\.yaml$/.test(b.marker)) {
        InferencePoolValuesSchema.parse(doc);
        checked.pool++;
      } else if (/\/ms-[^/]+\/values\.yaml$/.test(b.marker)) {
        ModelServerValuesSchema.parse(doc);
        checked.server++;
      } else if (b.marker === "stack") {
        const raw = Object.fromEntries(
          Object.entries(doc)
            .filter(([k]) => k.startsWith("serving:"))
            .map(([k, v]) => [k.slice("serving:".length), typeof v === "string" ? v : JSON.stringify(v)]),
        );
        // Secrets are set with `pulumi config set --secret`, never in the stack file the block shows.
        const secrets = Object.fromEntries(SECRET_KEYS.map((k) => [k, "set-as-a-secret"]));
        expect(() => parseServingConfig({ ...secrets, ...raw }, "ai-platform.io")).not.toThrow();
        checked.stack++;
      } else if (b.marker === "catalog") {
        CatalogSchema.parse(doc);
        checked.catalog++;
      } else throw new Error(`docs/models.md: unknown validate marker ${b.marker}`);
    }
    expect(checked).toEqual({ meta: 3, pool: 1, server: 1, stack: 4, catalog: 1 });
  });

  test("the complete folder loads with the loader pulumi preview uses", () => {
    withExampleFolder(false, (root) => {
      const [model, ...rest] = loadModelFolders(root);
      expect(rest).toEqual([]);
      expect(model).toMatchObject({ ref: "generative/llama-8b", id: "llama-8b", slug: "llama-8b", maxConcurrency: 32, toolCalling: true, weightsGiB: 15, weightsInfo: { gated: true } });
      expect(model?.gpus.perDecodeReplica).toBe(1);
    });
  });

  test("the folder error it quotes is what the loader prints for those two mistakes", () => {
    withExampleFolder(false, (root) => {
      const dir = path.join(root, "generative", "llama-8b");
      editYaml(path.join(dir, "gaie-llama-8b", "values.yaml"), (d) => (d.inferencePool.modelServers.matchLabels["llm-d.ai/model"] = "llama-8B"));
      editYaml(path.join(dir, "ms-llama-8b", "values.yaml"), (d) => d.decode.containers[0].args.push("--served-model-name=llama-8b"));
      let message = "";
      try {
        loadModelFolders(root);
      } catch (err) {
        expect(err).toBeInstanceOf(ModelFolderError);
        message = (err as Error).message.split(root).join("deployments/models");
      }
      expect(message).toMatch(/^Invalid model folders \(2 problems\)/);
      expect(page).toContain(message);
    });
  });

  test("the preflight failure it quotes is what the preflight prints for qwen3-8b and the example on one GPU", () => {
    withExampleFolder(true, (root) => {
      const folders = loadModelFolders(root);
      const planned = planModels(["generative/qwen3-8b", "generative/llama-8b"], {}, folders, root);
      const lines = checkGpuCapacity(planned, { default: 1 });
      expect(lines).toHaveLength(1);
      expect(page).toContain(`  - ${lines[0]}`);
      // Step 1 of the swap: the outgoing model at 0 replicas frees its GPU.
      const swapped = planModels(["generative/qwen3-8b", "generative/llama-8b"], { "generative/qwen3-8b": 0 }, folders, root);
      expect(checkGpuCapacity(swapped, { default: 1 })).toEqual([]);
    });
  });

  test("every npm run model:add command scaffolds a folder that loads, and every adapter command adds to one", () => {
    const commands = [...page.matchAll(/^npm run model:add -- (.+)$/gm)].map((m) => (m[1] as string).split(/\s+/));
    const [adapters, models] = [commands.filter((c) => c[0] === "adapter"), commands.filter((c) => c[0] !== "adapter")];
    expect([models.length >= 3, adapters.length]).toEqual([true, 1]);
    const { root, cleanup } = scratchModels(false);
    try {
      for (const argv of models) {
        const def = scaffoldModel({ ...optionsFromArgv(argv), root });
        expect(def.ref).toBe(`${argv[0]}/${argv[1]}`);
      }
      for (const argv of adapters) {
        const def = addAdapter({ ...adapterOptionsFromArgv(argv), root });
        expect(def.lora?.adapters.map((a) => a.name)).toContain(argv[2]);
      }
      expect(loadModelFolders(root)).toHaveLength(models.length);
    } finally {
      cleanup();
    }
  });

  test("the startup wait table is what startup.ts computes for the shipped folders", () => {
    const sizes = Object.fromEntries(loadModelFolders().map((m) => [m.slug, m.weightsGiB]));
    for (const [slug, minutes] of [["sim-chat", 20], ["qwen3-8b", 28], ["llama-3-3-70b", 85]] as const) {
      expect(Math.floor(startupTimeoutSeconds(sizes[slug]) / 60)).toBe(minutes);
      expect(page).toMatch(new RegExp(`\\| ${minutes} min \\|`));
    }
    // The probe figures quoted for the 8B and the 70B.
    expect(page).toContain(`Qwen3-8B: ${Math.ceil(startupTimeoutSeconds(16) / 10)} × 10 s; the 70B: ${Math.ceil(startupTimeoutSeconds(131.5) / 10)} × 10 s`);
    expect(page).toContain(`42 minutes for Qwen3-8B, 4 h 33 min for 131.5 GiB`);
    expect([startupTimeoutSeconds(16, DEFAULT_DOWNLOAD_TIMEOUT) / 60, Math.floor(startupTimeoutSeconds(131.5, DEFAULT_DOWNLOAD_TIMEOUT) / 60)]).toEqual([42, 4 * 60 + 33]);
  });

  test("the stopping figures are the program's: the leave delay, its parts, and the grace period", () => {
    expect(page).toContain(`| keep serving and accepting | ${LEAVE_DELAY_SECONDS} s (\`LEAVE_DELAY_SECONDS\``);
    expect(page).toContain(`the cluster DNS's TTL (${CLUSTER_DNS_TTL_SECONDS} s) + the gateway's DNS refresh (${DEFAULT_DNS_REFRESH_MS / 1000} s`);
    expect(page).toContain(`one health interval (${DEFAULT_HEALTH_INTERVAL_MS / 1000} s`);
    expect(page).toContain(`| \`terminationGracePeriodSeconds\` | ${LEAVE_DELAY_SECONDS} + \`drainSeconds\` + ${TERMINATION_MARGIN_SECONDS} |`);
    expect(page).toContain(`| SIGTERM, exit | at most ${TERMINATION_MARGIN_SECONDS} s |`);
    expect(readDoc("lifecycle.md")).toContain(`keeps serving for ${LEAVE_DELAY_SECONDS} s while every gateway pod`);
  });

  test("the families table is MODEL_FAMILIES", () => {
    const section = page.slice(page.indexOf("<!-- families -->"));
    const lines = section.split("\n").slice(3);
    const rows = lines.slice(0, lines.indexOf("")).filter((l) => l.startsWith("| `"));
    const table = Object.fromEntries(rows.map((r) => r.split("|").map((c) => c.trim().replace(/`/g, "")).slice(1, 5)).map(([f, tool, reasoning, kind]) => [f, { tool, reasoning, kind }]));
    expect(Object.keys(table).sort()).toEqual(Object.keys(MODEL_FAMILIES).sort());
    for (const [name, family] of Object.entries(MODEL_FAMILIES) as [string, ModelFamily][]) {
      if (name === "other") continue;
      expect([name, table[name]]).toEqual([name, { tool: family.toolParser ?? (family.embedding ? "none" : "none"), reasoning: family.reasoningParser ?? "none", kind: family.embedding ? "embedding" : "generative" }]);
    }
  });

  test("the cache sizes quoted are what weights.ts computes for the shipped folders", () => {
    const size = (slug: string) => {
      const m = loadModelFolders().find((f) => f.slug === slug)!;
      return cacheSizeGiB(m.weightsGiB!, m.weightsInfo?.cacheGiB, adaptersGiB(m.lora));
    };
    expect([size("qwen3-8b"), size("llama-3-3-70b"), size("bge-small-en")]).toEqual([23, 160, 3]);
    expect(page).toContain("23 GiB for Qwen3-8B and its adapter, 160 GiB for Llama 3.3 70B, 3 GiB for bge-small.");
  });
});
