import { ApiKeyStore, bearerToken, generateApiKey, hashApiKey } from "../../src/auth/api-keys";

describe("API keys", () => {
  const key = generateApiKey();
  const other = generateApiKey();

  it("generates distinct, prefixed, high-entropy keys", () => {
    expect(key).toMatch(/^sk-[A-Za-z0-9_-]{43}$/);
    expect(key).not.toBe(other);
  });

  it("authenticates by hash and returns the key's name, never the key", () => {
    const store = new ApiKeyStore([{ name: "team-a", sha256: hashApiKey(key) }]);
    const rec = store.authenticate(key);
    expect(rec?.name).toBe("team-a");
    expect(JSON.stringify(rec)).not.toContain(key);
    expect(store.authenticate(other)).toBeUndefined();
    expect(store.authenticate("")).toBeUndefined();
  });

  it("refuses an expired key", () => {
    const store = new ApiKeyStore([{ name: "old", sha256: hashApiKey(key), expiresAt: "2020-01-01T00:00:00Z" }]);
    expect(store.authenticate(key)).toBeUndefined();
    const future = new ApiKeyStore([{ name: "new", sha256: hashApiKey(key), expiresAt: "2999-01-01T00:00:00Z" }]);
    expect(future.authenticate(key)?.name).toBe("new");
  });

  it("replaces the key set atomically (revocation)", () => {
    const store = new ApiKeyStore([{ name: "a", sha256: hashApiKey(key) }]);
    store.replace([{ name: "b", sha256: hashApiKey(other) }]);
    expect(store.authenticate(key)).toBeUndefined();
    expect(store.authenticate(other)?.name).toBe("b");
  });

  it("rejects malformed entries with the field named", () => {
    expect(() => new ApiKeyStore([{ name: "A B", sha256: "zz" }])).toThrow(/name|sha256/);
  });

  it.each([
    ["Bearer abc", "abc"],
    ["bearer abc", "abc"],
    ["Bearer   abc  ", "abc"],
    ["Basic abc", undefined],
    ["Bearer", undefined],
    ["Bearer a b", undefined],
    [undefined, undefined],
  ])("parses Authorization %j", (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});
