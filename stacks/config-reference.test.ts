// docs/configuration.md is generated from the schemas: it must be up to date, describe every key, and every
// example it shows must be accepted by the key's own schema.
import * as fs from "fs";
import * as path from "path";
import { z } from "zod";
import { LIMIT_SETTINGS, SETTINGS_ENV } from "../gateway/src/config/settings";
import { STACK_SET_ENV } from "../infra/gateway/config";
import { keyRows } from "../infra/platform/config-reference";
import { CONFIGURATION_PAGE } from "../scripts/docs-config";
import { CONFIG_NAMESPACES, configurationReference } from "./config-reference";

describe("configuration reference", () => {
  test("docs/configuration.md is the page the schemas generate (run `npm run docs:config` after changing a schema)", () => {
    expect(fs.readFileSync(CONFIGURATION_PAGE, "utf8")).toBe(configurationReference());
  });

  test.each(CONFIG_NAMESPACES.map((n) => [n.namespace, n] as const))("every %s: key has a description", (_ns, ref) => {
    const missing = keyRows(ref).filter((r) => r.description.trim() === "").map((r) => r.key);
    expect(missing).toEqual([]);
  });

  test.each(CONFIG_NAMESPACES.map((n) => [n.namespace, n] as const))("every %s: example is valid for its key", (_ns, ref) => {
    const shape = ref.schema.shape as Record<string, z.ZodType>;
    let checked = 0;
    for (const row of keyRows(ref)) {
      const [top, sub] = row.key.split(".");
      const field = sub === undefined ? shape[top as string] : (unwrapObject(shape[top as string])?.shape as Record<string, z.ZodType> | undefined)?.[sub];
      expect([row.key, field !== undefined]).toEqual([row.key, true]);
      for (const example of row.examples) {
        const result = (field as z.ZodType).safeParse(example);
        expect([row.key, example, result.success ? "valid" : result.error.issues.map((i) => i.message).join("; ")]).toEqual([row.key, example, "valid"]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  test("secret keys are marked secret and show no example value", () => {
    const rows = CONFIG_NAMESPACES.flatMap((n) => keyRows(n).map((r) => ({ ns: n.namespace, ...r })));
    const secrets = rows.filter((r) => r.secret).map((r) => `${r.ns}:${r.key}`);
    expect(secrets.sort()).toEqual(["cluster:kubeconfig", "gateway:redisUrl", "gateway:upstreamApiKey", "gateway:usageLedgerAccessKeyId", "gateway:usageLedgerAdminAccessKeyId", "gateway:usageLedgerAdminSecretAccessKey", "gateway:usageLedgerSecretAccessKey", "monitoring:alertmanagerCredentials", "monitoring:s3Password", "monitoring:viewerAdminPassword", "serving:hfToken", "serving:weightsS3SecretKey"]);
    for (const r of rows.filter((x) => x.secret)) expect(r.examples).toEqual([]);
  });
});

describe("the gateway's environment variables on docs/configuration.md", () => {
  const page = fs.readFileSync(CONFIGURATION_PAGE, "utf8");
  const section = page.slice(page.indexOf("\n## Gateway environment variables\n"));
  const rows = section.split("\n").filter((l) => l.startsWith("| `"));
  const documented = rows.map((r) => /^\| `([A-Z0-9_]+)` \|/.exec(r)?.[1]);

  test("every variable the gateway reads has one row, with a default and a description, but the client limits (gateway-api.md's)", () => {
    expect(section.length).toBeLessThan(page.length);
    const limits = new Set<string>(LIMIT_SETTINGS.map((k) => SETTINGS_ENV[k]));
    expect(limits.size).toBeGreaterThan(20);
    expect([...documented].sort()).toEqual(Object.values(SETTINGS_ENV).filter((n) => !limits.has(n)).sort());
    expect(section).toContain(`The ${limits.size} limits a client can meet`);
    for (const r of rows) {
      const [, , dflt, description] = r.split(/(?<!\\)\|/).map((c) => c.trim());
      expect([r.slice(0, 40), dflt !== "", (description ?? "").length > 10]).toEqual([r.slice(0, 40), true, true]);
    }
  });

  test("what the stack sets itself names real variables, and the others' cell is empty (set through `gateway:env`)", () => {
    const names = new Set(Object.values(SETTINGS_ENV));
    expect(Object.keys(STACK_SET_ENV).filter((n) => !names.has(n))).toEqual([]);
    for (const r of rows) {
      const name = /^\| `([A-Z0-9_]+)`/.exec(r)?.[1] as string;
      expect([name, r.endsWith(STACK_SET_ENV[name] === undefined ? " |  |" : `| ${STACK_SET_ENV[name]} |`)]).toEqual([name, true]);
    }
  });
});

/** The object schema under optional/default/prefault wrappers (what `crds` or `startupTimeout` hold). */
function unwrapObject(s: z.ZodType | undefined): z.ZodObject | undefined {
  let cur: unknown = s;
  for (let i = 0; i < 5 && cur; i++) {
    if (cur instanceof z.ZodObject) return cur;
    cur = (cur as { def?: { innerType?: unknown } }).def?.innerType;
  }
  return undefined;
}

describe("every `pulumi config set` in the book names a real key, with a value it accepts", () => {
  const ROOT = path.resolve(__dirname, "..");
  const files = [path.join(ROOT, "README.md"), ...fs.readdirSync(path.join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => path.join(ROOT, "docs", f))];
  const commands = files.flatMap((file) =>
    [...fs.readFileSync(file, "utf8").matchAll(/pulumi config set (--secret |--path )?'?([a-z-]+):([A-Za-z][A-Za-z0-9-]*)([^'\s`]*)'?(?: ([^\s`|]+))?/g)].map((m) => ({
      file: path.relative(ROOT, file),
      flag: m[1]?.trim(),
      namespace: m[2] as string,
      key: m[3] as string,
      path: m[4] as string,
      value: m[5],
    })),
  );

  test("the book has such commands", () => {
    expect(commands.length).toBeGreaterThan(10);
  });

  test.each(commands.map((c) => [`${c.file}: ${c.namespace}:${c.key}${c.path} ${c.value ?? ""}`, c] as const))("%s", (_label, c) => {
    if (c.namespace === "pulumi") {
      expect(c.key).toBe("disable-default-providers");
      return;
    }
    const ref = CONFIG_NAMESPACES.find((n) => n.namespace === c.namespace);
    expect([c.namespace, ref !== undefined]).toEqual([c.namespace, true]);
    const field = (ref?.schema.shape as Record<string, z.ZodType>)[c.key];
    expect([c.key, field !== undefined]).toEqual([c.key, true]);
    if (c.flag === "--secret") expect(ref?.secretKeys).toContain(c.key);
    // A plain value given literally is parsed as the program would (JSON for structured keys) and must validate.
    if (c.flag === undefined && c.value !== undefined && !c.value.includes("$") && c.path === "") {
      // The shell's single quotes around a JSON value are not part of it.
      const unquoted = /^'.*'$/.test(c.value) ? c.value.slice(1, -1) : c.value;
      let decoded: unknown = unquoted;
      try {
        decoded = JSON.parse(unquoted);
      } catch {
        /* a plain string */
      }
      const result = (field as z.ZodType).safeParse(typeof decoded === "number" || typeof decoded === "boolean" || typeof decoded === "object" ? decoded : unquoted);
      expect([c.key, c.value, result.success]).toEqual([c.key, c.value, true]);
    }
  });
});
