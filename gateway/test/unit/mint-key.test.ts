import { parse } from "yaml";
import { ApiKeyStore, ApiKeysFileSchema } from "../../src/auth/api-keys";
import { mintKey } from "../../src/cli/mint-key";

describe("key:mint", () => {
  it("prints a key and a keys-file entry holding only its hash, which authenticates the key", () => {
    const { key, entryYaml } = mintKey(["--name", "team-a", "--models", "a, b", "--rpm", "60", "--expires", "2099-01-01T00:00:00Z"]);
    expect(entryYaml).not.toContain(key);
    const file = ApiKeysFileSchema.parse(parse(entryYaml));
    expect(file.keys[0]).toMatchObject({ name: "team-a", models: ["a", "b"], rpm: 60 });
    expect(new ApiKeyStore(file.keys).authenticate(key)?.name).toBe("team-a");
  });

  it("carries a key's priority and weight into the entry, and the record the gateway schedules by", () => {
    const { key, entryYaml } = mintKey(["--name", "nightly", "--priority", "batch", "--weight", "0.5"]);
    const file = ApiKeysFileSchema.parse(parse(entryYaml));
    expect(file.keys[0]).toMatchObject({ name: "nightly", priority: "batch", weight: 0.5 });
    expect(new ApiKeyStore(file.keys).authenticate(key)).toMatchObject({ priority: "batch", weight: 0.5 });
    // An entry without them is interactive with weight 1.
    const plain = mintKey(["--name", "team-b"]);
    expect(new ApiKeyStore(ApiKeysFileSchema.parse(parse(plain.entryYaml)).keys).authenticate(plain.key)).toMatchObject({ priority: "interactive", weight: 1 });
  });

  it.each([
    [["--rpm", "10"], /--name/],
    [["--name", "x", "--rpm", "-1"], /--rpm/],
    [["--name", "x", "--expires", "tomorrow"], /--expires/],
    [["--name", "x", "--bogus", "1"], /bogus/],
    [["--name", "x", "--priority", "urgent"], /--priority/],
    [["--name", "x", "--weight", "0"], /--weight/],
  ])("rejects %j with a message naming the flag", (argv, msg) => {
    expect(() => mintKey(argv)).toThrow(msg);
  });
});
