// Pure builders: key form and keys file, catalog rendering and checksum, termination timing, the provided certificate's mount.
import { randomBytes } from "crypto";
import { parse } from "yaml";
import { ApiKeyStore, generateApiKey, hashApiKey } from "../../gateway/src/auth/api-keys";
import { parseKeysFile } from "../../gateway/src/auth/keys-file";
import { catalogChecksum, renderCatalog } from "./catalog";
import { apiKeyFromBase64, buildKeysFile, KEY_BYTES, keyKeepers } from "./keys";
import { DEFAULT_RESOURCES } from "./config";
import { TEST_CATALOG } from "./testing";
import { buildDeploymentSpec, terminationGraceSeconds, type WorkloadArgs } from "./workload";
import { parseSettingsEnv } from "../../gateway/src/config/settings";

describe("API keys", () => {
  test("a key from random bytes has exactly the form generateApiKey() gives", () => {
    const key = apiKeyFromBase64(randomBytes(KEY_BYTES).toString("base64"));
    expect(key).toMatch(/^sk-[A-Za-z0-9_-]{43}$/);
    expect(key.length).toBe(generateApiKey().length);
  });

  test("the keys file parses with the gateway's own loader and authenticates exactly the issued keys", () => {
    const keys = [generateApiKey(), generateApiKey()];
    const text = buildKeysFile([{ name: "a", models: ["m"], rpm: 5, rotation: 3 }, { name: "b", expiresAt: "2030-01-01T00:00:00Z", priority: "batch", weight: 2 }], keys);
    expect(text).not.toContain(keys[0]);
    expect(text).not.toContain("rotation");
    const store = new ApiKeyStore(parseKeysFile(text, "keys.yaml"));
    expect(store.authenticate(keys[0] as string)).toMatchObject({ name: "a", rpm: 5 });
    expect(store.authenticate(keys[1] as string)).toMatchObject({ name: "b", priority: "batch", weight: 2 });
    expect(store.authenticate(generateApiKey())).toBeUndefined();
    expect((parse(text) as { keys: { sha256: string }[] }).keys[0]?.sha256).toBe(hashApiKey(keys[0] as string));
  });

  test("an empty key list is a valid file; specs and keys must pair up", () => {
    expect(parse(buildKeysFile([], []))).toEqual({ keys: [] });
    expect(() => buildKeysFile([{ name: "a" }], [])).toThrow(/1 key specs but 0 keys/);
  });

  test("keepers: the name and the rotation (0 when unset)", () => {
    expect(keyKeepers({ name: "a" })).toEqual({ name: "a", rotation: "0" });
    expect(keyKeepers({ name: "a", rotation: "2026-q3" })).toEqual({ name: "a", rotation: "2026-q3" });
  });
});

describe("catalog", () => {
  test("renders YAML the gateway reads back; the checksum follows the text", () => {
    const text = renderCatalog(TEST_CATALOG);
    expect(parse(text)).toEqual(TEST_CATALOG);
    expect(catalogChecksum(text)).toMatch(/^[0-9a-f]{64}$/);
    expect(catalogChecksum(text)).not.toBe(catalogChecksum(renderCatalog({ models: [] })));
  });

  test("a catalog the gateway would refuse fails the deployment, naming the fields", () => {
    expect(() => renderCatalog({ models: [{ id: "x", category: "generative", upstream: { mode: "dns", host: "Bad_Host", port: 0 } }] } as never)).toThrow(
      /Invalid model catalog for the gateway:\n {2}models\.0\.upstream\.host: .*\n {2}models\.0\.upstream\.port: /,
    );
  });
});

test("SIGKILL comes after the drain delay and the whole shutdown grace", () => {
  expect(terminationGraceSeconds(30)).toBeGreaterThan(35);
});

describe("the provided TLS certificate's expiry", () => {
  const args: WorkloadArgs = {
    labelDomain: "ai-platform.io",
    image: "gateway:0.1.0",
    imagePullSecrets: [],
    resources: DEFAULT_RESOURCES,
    shutdownGraceSeconds: 30,
    logLevel: "info",
    corsOrigins: [],
    env: {},
    catalogChecksum: "abc",
    redis: false,
    fixedUserIds: true,
  };
  const pod = (a: WorkloadArgs) => buildDeploymentSpec(a).template.spec;

  test("a provided Secret: its tls.crt alone is mounted read-only, and the gateway is told where", () => {
    const spec = pod({ ...args, tlsCertSecret: "llm-tls" });
    const volume = spec.volumes.find((v) => v.name === "tls-cert");
    expect(volume).toEqual({ name: "tls-cert", secret: { secretName: "llm-tls", items: [{ key: "tls.crt", path: "tls.crt" }], defaultMode: 0o440, optional: true } });
    const c = spec.containers[0]!;
    const mount = c.volumeMounts.find((m) => m.name === "tls-cert");
    expect(mount).toEqual({ name: "tls-cert", mountPath: "/etc/gateway/tls", readOnly: true });
    const env = Object.fromEntries(c.env.map((e) => [e.name, "value" in e ? e.value : undefined]));
    expect(env.GATEWAY_TLS_CERT_FILE).toBe(`${mount!.mountPath}/tls.crt`);
    // The value is one the gateway accepts.
    expect(parseSettingsEnv(env).settings?.tlsCertFile).toBe("/etc/gateway/tls/tls.crt");
  });

  test("none: no volume, no mount, no variable", () => {
    const spec = pod(args);
    expect(spec.volumes.map((v) => v.name)).not.toContain("tls-cert");
    expect(spec.containers[0]!.volumeMounts.map((m) => m.name)).not.toContain("tls-cert");
    expect(spec.containers[0]!.env.map((e) => e.name)).not.toContain("GATEWAY_TLS_CERT_FILE");
  });
});
