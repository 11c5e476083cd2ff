import { settingsFromEnv } from "../../src/config/settings";
import { chatBody, startHarness, type Harness } from "../support/harness";

const APP = "https://app.example.com";
const preflight = (h: Harness, origin: string) =>
  fetch(`${h.gateway.url}/v1/chat/completions`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type,x-stainless-os" },
  });

describe("CORS for browser clients", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness([{ id: "chat" }], { settings: { corsOrigins: `${APP}, http://localhost:5173` } });
  });
  afterAll(() => h.close());

  it("answers an allowed origin's preflight without a key: methods, the headers asked for, max age, no credentials", async () => {
    const res = await preflight(h, APP);
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP);
    expect(res.headers.get("access-control-allow-methods")).toBe("GET,POST,DELETE,OPTIONS");
    expect(res.headers.get("access-control-allow-headers")).toBe("authorization,content-type,x-stainless-os");
    expect(res.headers.get("access-control-max-age")).toBe("600");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    expect(res.headers.get("vary")).toMatch(/Origin/);
  });

  it("lets the page read answers and errors, with the retry and rate-limit headers exposed", async () => {
    const ok = await h.fetch("/v1/chat/completions", { json: chatBody("chat"), headers: { origin: "http://localhost:5173" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(ok.headers.get("access-control-expose-headers")).toContain("x-request-id");
    expect(ok.headers.get("access-control-expose-headers")).toContain("retry-after");
    const refused = await h.fetch("/v1/models", { headers: { origin: APP, authorization: "Bearer wrong" } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe(APP);
  });

  it("gives another origin no CORS headers (the browser hides the answer); the key still decides access", async () => {
    const pre = await preflight(h, "https://evil.example");
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const res = await h.fetch("/v1/models", { headers: { origin: "https://evil.example" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(h.sims.chat![0]!.stats().completedTotal).toBe(1);
  });
});

describe("CORS settings", () => {
  it("is off by default: no CORS headers, and a preflight is an unauthenticated request", async () => {
    const h = await startHarness([{ id: "chat" }]);
    try {
      const res = await preflight(h, APP);
      expect(res.status).toBe(401);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await h.close();
    }
  });

  it("* allows any origin", async () => {
    const h = await startHarness([{ id: "chat" }], { settings: { corsOrigins: "*" } });
    try {
      expect((await preflight(h, "https://anywhere.example")).headers.get("access-control-allow-origin")).toBe("*");
    } finally {
      await h.close();
    }
  });

  it("refuses what is not an origin, naming the variable", () => {
    expect(() => settingsFromEnv({ GATEWAY_CORS_ORIGINS: "https://app.example.com/chat" })).toThrow(/GATEWAY_CORS_ORIGINS: "https:\/\/app.example.com\/chat" is not an origin/);
    expect(() => settingsFromEnv({ GATEWAY_CORS_ORIGINS: "app.example.com" })).toThrow(/GATEWAY_CORS_ORIGINS/);
    expect(settingsFromEnv({ GATEWAY_CORS_ORIGINS: " https://a.example , http://localhost:3000 " }).corsOrigins).toEqual(["https://a.example", "http://localhost:3000"]);
  });
});
