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

  it.each([
    [["--rpm", "10"], /--name/],
    [["--name", "x", "--rpm", "-1"], /--rpm/],
    [["--name", "x", "--expires", "tomorrow"], /--expires/],
    [["--name", "x", "--bogus", "1"], /bogus/],
  ])("rejects %j with a message naming the flag", (argv, msg) => {
    expect(() => mintKey(argv)).toThrow(msg);
  });
});
